"""The rma suite (MPI one-sided, OSU 7.4's one-sided programs; docs/rma.md): the suite end
to end with real Open MPI and MPICH (run, store, show, exports, report), OSU's own loop
and text, the refusals, and the names the Python side and bench/mpi/rma.c share.
Correctness and plausibility, never speed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import requires_mpich, requires_openmpi

from hpcscope.results.rma_tests import RMA_TESTS, SYNC_TEXT
from hpcscope.suites import rma

REPO = Path(__file__).resolve().parent.parent
TESTS = "put_latency,get_bw,put_bibw,fop_latency,get_multi_lat"


@pytest.mark.mpi
@pytest.mark.parametrize(
    "mpi",
    [pytest.param("openmpi", marks=requires_openmpi), pytest.param("mpich", marks=requires_mpich)],
)
def test_suite_runs_shows_exports_and_reports(cli, mpi):
    done = cli(
        "run", "rma", "--tests", TESTS, "--mpi", mpi, "--placements", "core", "--sizes", "1:16",
        "--repeat", "2", "--quick", "--out", str(cli.folder / "out"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    seen = {(s["params"]["test"], s["params"]["sync"], s["params"]["bytes"]) for s in samples}
    sizes = [1, 2, 4, 8, 16]
    expected = {(t, RMA_TESTS[t].default_sync, n) for t in TESTS.split(",") for n in sizes}
    expected = {e for e in expected if e[0] != "fop_latency"} | {("fop_latency", "flush", 1)}
    assert seen == expected  # each test its own cell, at OSU's default sync; fop one element
    for s in samples:
        assert s["params"]["window_kind"] == "allocate" and s["tags"]["placement"] == "core"
        assert len(s["values"]) >= 10 and all(v > 0 for v in s["values"]), s["params"]
        if s["metric"] == "latency":  # a put, an atomic or a get ping-pong: 10 ns .. 10 ms
            assert all(0.01 < v < 10_000 for v in s["values"]), s["params"]
    text = " ".join(cli("show", "last").stdout.split())
    assert "rma put_latency (flush, allocate)" in text and "as osu_put_latency" in text
    assert "rma get_multi_lat (pscw, allocate)" in text
    osu = cli("export", "last", "--format", "osu").stdout
    for title in ("OSU MPI_Put Latency Test", "OSU MPI_Get Bandwidth Test",
                  "OSU MPI_Put Bi-directional Bandwidth Test", "OSU MPI_Get Multi Latency Test"):  # fmt: skip
        assert f"# {title} (hpcscope: rma" in osu
    assert f"# Synchronization: {SYNC_TEXT['pscw']}" in osu
    rows = [l for l in osu.splitlines() if re.match(r"^\d+\s+[\d.]+$", l)]
    assert len(rows) == 4 * len(sizes) + 1
    assert cli("report", "last", "--out", str(cli.folder / "rep")).returncode == 0
    page = (cli.folder / "rep" / "index.html").read_text()
    assert "One-sided (RMA) by placement" in page and "put_bibw (pscw, allocate)" in page


@pytest.mark.mpi
@requires_openmpi
def test_osu_protocol_and_other_syncs_and_windows(cli):
    done = cli(
        "run", "rma", "--tests", "get_latency,get_acc_latency,cas_latency",
        "--sync", "fence", "--window", "dynamic", "--protocol", "osu", "--mpi", "openmpi",
        "--placements", "core", "--sizes", "1:2", "--repeat", "1", "--quick",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    assert {s["params"]["test"] for s in samples} == {
        "get_latency", "get_acc_latency", "cas_latency"
    }  # fmt: skip
    for s in samples:
        assert (s["params"]["sync"], s["params"]["window_kind"]) == ("fence", "dynamic")
        assert s["params"]["protocol"] == "osu" and s["tags"]["protocol"] == "osu"


@pytest.mark.parametrize(
    "check, args, words",
    [
        (rma.check_sync, ("lock", ["put_bibw"]), ["put_bibw", "fence, pscw"]),
        (rma.check_sync, ("flush", ["get_multi_lat"]), ["get_multi_lat", "pscw"]),
        (rma.check_window, ("shared",), ["--window 'shared'", "dynamic"]),
        (rma.check_tests, (["put_lat"],), ["put_lat", "put_latency"]),
    ],
)
def test_bad_options_say_what(check, args, words):
    with pytest.raises(ValueError) as refused:
        check(*args)
    assert all(w in str(refused.value) for w in words), refused.value


def test_a_bad_option_is_one_line_and_exit_2(cli):
    done = cli("run", "rma", "--dry-run", "--sync", "lock", "--tests", "put_bibw")
    assert done.returncode == 2, done.stdout
    assert "put_bibw" in done.stderr and "Traceback" not in done.stderr


def test_dry_run_plans_pairs_in_a_launch_of_their_own(cli):
    done = cli("run", "rma", "--dry-run", "--mpi", "openmpi", "--placements", "core",
               "--pairs", "2", "--repeat", "1", "--tests", "put_latency,get_mbw")  # fmt: skip
    assert done.returncode == 0, done.stderr
    jobs = [l for l in done.stdout.splitlines() if l.startswith("openmpi/")]
    assert len(jobs) == 2
    assert "ranks=2" in jobs[0] and "--tests put_latency " in jobs[0]
    assert "ranks=4" in jobs[1] and "--tests get_mbw " in jobs[1]


def test_titles_and_syncs_agree_with_the_program():
    """rma.c and results/rma_tests.py name each test's OSU title and syncs once each."""
    source = (REPO / "bench" / "mpi" / "rma.c").read_text()
    for test in RMA_TESTS.values():
        assert f'"{test.name}", "# {test.title}"' in " ".join(source.split()), test.name
    assert set(rma.SYNCS) - {"auto"} == set(SYNC_TEXT)
    for text in SYNC_TEXT.values():
        assert f'"{text}"' in source
