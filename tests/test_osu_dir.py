"""`hpcscope run p2p --osu-dir DIR` and `--protocol` end to end, with real mpirun.

OSU itself is not on this machine, so DIR is a fake OSU folder: tests/fixtures/osu/
fake_osu.c (an MPI program printing OSU's documented text format with real ping-pong
timings) built with each library's mpicc and copied under the four OSU program names.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import requires_mpich, requires_openmpi

from hpcscope.figures.p2p import curves

pytestmark = pytest.mark.mpi
FAKE = Path(__file__).parent / "fixtures" / "osu" / "fake_osu.c"
CC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
NAMES = ("osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr")


def fake_osu_dir(folder: Path, flavor: str, *defines: str, names=NAMES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    built = folder / "fake_osu.bin"
    done = subprocess.run(
        [CC[flavor], "-O1", *defines, "-o", str(built), str(FAKE)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    for name in names:
        shutil.copy(built, folder / name)
    built.unlink()
    return folder


def _runs(cli) -> list:
    return json.loads(cli("list", "--format", "json").stdout or "[]")


@pytest.mark.parametrize(
    "flavor",
    [pytest.param("openmpi", marks=requires_openmpi), pytest.param("mpich", marks=requires_mpich)],
)
def test_osu_dir_programs_run_beside_hpcscope_and_are_tagged(cli, tmp_path, flavor):
    osu = fake_osu_dir(tmp_path / "osu", flavor)
    done = cli(
        "run", "p2p", "--mpi", flavor, "--osu-dir", str(osu), "--placements", "core",
        "--repeat", "1", "--quick", "--sizes", "0:1K", "--tests", "latency,bw",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    theirs = [s for s in samples if s["tags"].get("tool") == "osu"]
    ours = [s for s in samples if "tool" not in s["tags"]]
    assert theirs and ours
    for metric in ("latency", "bandwidth"):
        sizes = sorted(s["params"]["bytes"] for s in theirs if s["metric"] == metric)
        assert sizes == [1 << k for k in range(11)]  # OSU starts at 1 B, -m 1:1024
        assert all(len(s["values"]) == 1 and s["values"][0] >= 0 for s in theirs)
    # OSU prints 2 decimals: a 1 B bandwidth on a busy machine can print as 0.00 MB/s
    assert all(s["values"][0] > 0 for s in theirs if s["metric"] == "latency")
    assert {s["tags"]["placement"] for s in theirs} == {"core"}
    # the report's curves put them side by side, told apart by their label
    labels = set(curves(samples, "latency"))
    assert labels == {f"{flavor} core", f"{flavor} core [OSU build]"}


@requires_openmpi
def test_protocol_osu_is_tagged_and_kept_apart(cli):
    done = cli(
        "run", "p2p", "--mpi", "openmpi", "--protocol", "osu", "--placements", "core",
        "--repeat", "1", "--quick", "--sizes", "0:64", "--tests", "latency",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    assert samples and all(s["tags"]["protocol"] == "osu" for s in samples)
    assert all(s["params"]["protocol"] == "osu" for s in samples)
    assert sorted(s["params"]["bytes"] for s in samples) == [1, 2, 4, 8, 16, 32, 64]


@requires_openmpi
@pytest.mark.parametrize(
    "case, words",
    [
        ("empty", ["--osu-dir", "no executable osu_latency", "pt2pt"]),
        ("missing", ["--osu-dir", "not a folder"]),
        ("wrong", ["osu_latency", "not output of an OSU program", "hello from"]),
        ("protocol", ["--protocol 'mpptest'", "hpcscope", "osu"]),
    ],
)
def test_bad_osu_input_is_refused_in_one_line_and_nothing_stored(cli, tmp_path, case, words):
    folder = tmp_path / "osu"
    if case == "empty":
        folder.mkdir()
    elif case == "wrong":
        fake_osu_dir(folder, "openmpi", "-DFAKE_OSU_WRONG", names=("osu_latency",))
    args = ["--protocol", "mpptest"] if case == "protocol" else ["--osu-dir", str(folder)]
    done = cli("run", "p2p", "--mpi", "openmpi", "--tests", "latency", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("error:") == 1, done.stderr  # one message (rich may wrap it)
    message = " ".join(done.stderr.split())
    for word in words:
        assert word in message
    assert "Traceback" not in done.stderr
    assert _runs(cli) == []  # nothing was recorded
