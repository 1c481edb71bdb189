"""The rma suite (MPI one-sided, OSU 7.4's one-sided programs; docs/rma.md): the suite end
to end with real Open MPI and MPICH (run, store, show, exports, report), OSU's own loop
and text, the refusals, and the names the Python side and bench/mpi/rma.c share.
Correctness and plausibility, never speed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import requires_mpich, requires_openmpi

from hpcscope.machine.mpi import MpiSpec
from hpcscope.results.rma_tests import RMA_TESTS, SYNC_TEXT
from hpcscope.suites import rma
from hpcscope.suites.base import PlanContext

REPO = Path(__file__).resolve().parent.parent
TESTS = "put_latency,get_bw,put_bibw,get_acc_latency,fop_latency,get_multi_lat"


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
        # OSU's default window: allocate, create for get_acc_latency (as its sync, lock)
        assert s["params"]["window_kind"] == RMA_TESTS[s["params"]["test"]].default_window
        assert s["tags"]["placement"] == "core"
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
    assert len(rows) == 5 * len(sizes) + 1
    assert "# Window creation: MPI_Win_create" in osu  # get_acc_latency's
    if mpi == "mpich":
        return  # the report's section is the same code for both libraries: one is enough
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
    osu = cli("export", "last", "--format", "osu").stdout  # OSU's own numbers, as it prints
    assert osu.count("# value: OSU's own number (its mean") == 3, osu


def test_osu_numbers_of_a_protocol_osu_run_replace_the_median():
    from hpcscope.results import osu_own

    params = {"bytes": 8, "test": "put_latency", "protocol": "osu", "repeat": 0}
    sums = [
        {"launch_id": 1, "params": params, "value": 2.0},
        {"launch_id": 2, "params": params, "value": 4.0},
        {"launch_id": 2, "params": {**params, "protocol": None}, "value": 9.0},  # not osu
    ]
    found = osu_own.numbers(sums)
    assert len(found) == 2
    both = [{"launch_id": 1, "params": params}, {"launch_id": 2, "params": params}]
    assert osu_own.value(both, found) == 3.0  # the mean over launches of OSU's numbers
    assert osu_own.value([{"launch_id": 3, "params": params}], found) is None  # median then


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


def plan_of(**opts):
    specs = [MpiSpec(f, f"mpicc.{f}", f"mpirun.{f}", "1") for f in ("openmpi", "mpich")]
    topo = SimpleNamespace(pus=[0, 1])  # two hardware threads: what max_ranks_check reads
    ctx = PlanContext(topology=topo, mpis=specs, binary=lambda n, m: Path(f"/b/{m.flavor}/{n}"))
    return rma.plan(ctx, {"placements": ["default"], "repeat": 2, **opts})


def test_plan_pairs_get_a_launch_of_their_own_round_robin():
    plan = plan_of(tests=["put_latency", "get_mbw"], pairs=2, sync="flush")
    jobs = plan.jobs
    # 4 ranks on 2 hardware threads: oversubscribed, tagged, and the plan warns
    assert [j.oversubscribe for j in jobs[:2]] == [False, True]
    assert jobs[1].tags["oversubscribed"] is True
    assert any(n.kind == "warning" and "timings mean nothing" in n.text for n in plan.notes)
    # per repeat, per MPI: the 2-rank launch, then the 2P-rank one; MPIs alternate
    assert [(j.mpi.flavor, j.ranks, j.tags["repeat"]) for j in jobs] == [
        (m, r, rep) for rep in (1, 2) for m in ("openmpi", "mpich") for r in (2, 4)
    ]
    two, four = jobs[0].program, jobs[1].program
    assert two[0] == "/b/openmpi/rma" and two[two.index("--tests") + 1] == "put_latency"
    assert four[four.index("--tests") + 1] == "get_mbw"
    assert two[two.index("--sync") + 1] == "flush" and "random" in two  # p2p's protocol args


def test_plan_one_pair_runs_in_the_two_rank_launch_and_osu_keeps_sizes_up():
    jobs = plan_of(tests=["get_multi_lat", "put_bw"], protocol="osu", sizes="1:64K").jobs
    assert len(jobs) == 4 and all(j.ranks == 2 and j.tags["protocol"] == "osu" for j in jobs)
    program = jobs[0].program
    assert program[program.index("--tests") + 1] == "get_multi_lat,put_bw"
    assert program[-2:] == ["--protocol", "osu"] and "--order" not in program
    assert program[program.index("--max-size") + 1] == str(64 * 1024)


def test_titles_and_syncs_agree_with_the_program():
    """rma.c and results/rma_tests.py name each test's OSU title and syncs once each."""
    source = (REPO / "bench" / "mpi" / "rma.c").read_text()
    for test in RMA_TESTS.values():
        assert f'"{test.name}", "# {test.title}"' in " ".join(source.split()), test.name
    assert set(rma.SYNCS) - {"auto"} == set(SYNC_TEXT)
    for text in SYNC_TEXT.values():
        assert f'"{text}"' in source


def test_sim_plans_rma_as_p2p_two_ranks_at_core_and_node():
    from hpcscope.launch import sim_options

    kw, opts, ppn = sim_options.plan_options("rma", {"mpi": "auto"}, {"tests": ["put_latency"]})
    assert kw["mpi"] == "smpi" and opts["placements"] == ["core", "node"]
    assert "ranks" not in opts  # two ranks per launch, as p2p; not the platform's cores
