"""Property-based fuzzing of lanecoll's tuning-file parser through the real interposition
library: whatever the file holds, MPI_Init either accepts it or stops the program with a
message naming the file; it never crashes, hangs or silently takes half a file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcscope import build as build_mod
from hpcscope.machine import mpi as mpi_mod

pytestmark = pytest.mark.mpi

keys = st.sampled_from(
    ["collective", "algorithm", "nodes", "ppn", "min_bytes", "max_bytes", "x", "schema", "rules"]
)
values = st.one_of(
    st.sampled_from(
        ["bcast", "allreduce", "lane", "hier", "native", "kported", "lanecoll.tuning/1", ""]
    ),
    st.integers(min_value=-3, max_value=2**64),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
rules = st.lists(st.dictionaries(keys, values, max_size=7), max_size=4)
documents = st.one_of(
    st.builds(lambda r: {"schema": "lanecoll.tuning/1", "rules": r}, rules),
    st.recursive(
        values,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=12,
    ),
)
damage = st.sampled_from(
    [
        "",
        "\x00",
        "{",
        "}}",
        ",",
        '"a":1',
        "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
    ]
)


@pytest.fixture(scope="module")
def program():
    if shutil.which("mpicc.openmpi") is None:
        pytest.skip("Open MPI not installed")
    (spec,) = mpi_mod.discover("openmpi")
    tree = build_mod.build(spec)
    return build_mod.find_program(tree, "coll"), next(tree.rglob("liblanecoll_pmpi.so"))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(documents, damage, st.integers(min_value=0, max_value=200))
def test_any_tuning_file_is_taken_or_refused_by_name(program, tmp_path, document, extra, where):
    coll, pmpi = program
    text = json.dumps(document)
    text = text[:where] + extra + text[where:]
    path = tmp_path / "tuning.json"
    path.write_bytes(text.encode("latin-1", "replace"))
    env = dict(
        os.environ,
        LD_PRELOAD=str(pmpi),
        LANECOLL_TUNING=str(path),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    )
    done = subprocess.run(
        [
            str(coll),
            "--collectives",
            "bcast",
            "--algorithms",
            "native",
            "--counts",
            "1",
            "--repetitions",
            "1",
            "--warmup",
            "0",
        ],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr[-500:]}"
    if done.returncode != 0:
        assert f"tuning file '{path}'" in done.stderr, done.stderr[-800:]
