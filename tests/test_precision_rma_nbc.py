"""rma and nbc measured to a precision (issue 44; docs/rma.md and docs/nbc.md, "Measuring to
a precision"): the programs under real Open MPI and MPICH stop at the target, the budget
or the cap and say so in the summary's `precision` object; the suites plan it from
--precision/--budget (p2p's and coll's settings) and refuse it with --protocol osu; one
end-to-end run per suite reaches `show`. Correctness, never speed.

Costs (2-core machine): the program cases ~2 s a library each, the two CLI runs ~10 s each.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import requires_mpich, requires_openmpi
from test_nbc_units import arg
from test_nbc_units import ctx as nbc_ctx
from test_rma import plan_of as rma_plan_of

from hpcscope.results.precision import half_width
from hpcscope.suites import nbc

FLAVORS = [
    pytest.param("openmpi", marks=requires_openmpi),
    pytest.param("mpich", marks=requires_mpich),
]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def program(flavor: str, name: str) -> Path:
    """The built program (hpcscope's build cache, as the CLI uses it)."""
    from hpcscope import build
    from hpcscope.machine import mpi

    return build.find_program(build.build(mpi.discover(flavor)[0]), name)


def launch(flavor: str, name: str, *args: str) -> tuple[subprocess.CompletedProcess, list]:
    """`name` on 2 unbound ranks; its JSONL records."""
    if flavor == "openmpi":
        launcher = ["mpirun.openmpi", "-np", "2", "--oversubscribe", "--bind-to", "none"]
    else:
        launcher = ["mpirun.mpich", "-n", "2", "-bind-to", "none"]
    done = subprocess.run(
        [*launcher, str(program(flavor, name)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    return done, [json.loads(l) for l in done.stdout.splitlines() if l.startswith("{")]


def judged(records: list) -> list[tuple[dict, dict]]:
    """(sample, its summary's precision) for every summary that carries one."""
    key = lambda r: (r["metric"], json.dumps(r["params"], sort_keys=True))  # noqa: E731
    samples = {key(r): r for r in records if r["type"] == "sample"}
    return [
        (samples[key(r)], r["precision"])
        for r in records
        if r["type"] == "summary" and "precision" in r
    ]


def same_half_width(got: dict, values: list) -> bool:
    # the program's doubles against the 9 significant digits it printed (test_bench_p2p)
    return got["half_width"] == pytest.approx(half_width(values), rel=1e-6, abs=2e-8)


@pytest.mark.mpi
@pytest.mark.parametrize("flavor", FLAVORS)
def test_rma_adds_blocks_until_met_budget_or_cap(flavor):
    # put_latency: flush, a passive target that takes part only in the looks' Bcasts;
    # put_bibw: pscw, both ranks in every block
    done, records = launch(
        flavor, "rma", "--tests", "put_latency,put_bibw", "--max-size", "4",
        "--precision", "0.2", "--size-budget-ms", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = judged(records)
    assert len(found) == 2 * 3  # every (test, size) of 1, 2, 4 B
    for sample, got in found:
        values = sample["values"]
        assert got["target"] == 0.2 and got["stop"] in ("met", "budget", "cap")
        assert got["blocks"] == len(values) >= 6 and same_half_width(got, values)
        assert sample["params"]["iterations"] == len(values) * sample["params"]["block"]
        if got["stop"] == "met":
            assert len(values) >= 10 and got["half_width"] <= 0.2
    assert any(got["stop"] == "met" for _, got in found)  # 20 % is easy here
    done, records = launch(
        flavor, "rma", "--tests", "put_latency", "--max-size", "1",
        "--precision", "0.00001", "--size-budget-ms", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [(_, got)] = judged(records)
    assert got["stop"] in ("budget", "cap")
    done, _ = launch(flavor, "rma", "--precision", "0.01", "--protocol", "osu")
    assert done.returncode == 2 and "--protocol osu keeps OSU's fixed counts" in done.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("flavor", FLAVORS)
def test_nbc_loops_stop_on_their_main_times(flavor):
    common = ["--collectives", "ibcast,bcast", "--max-size", "2", "--iterations", "300"]
    done, records = launch(
        flavor, "nbc", *common, "--warmup", "5", "--precision", "0.25", "--time-budget", "5"
    )
    assert done.returncode == 0, done.stderr
    found = judged(records)
    # loop 1's time (bcast) and pure_time (ibcast), loop 2's overall_time; sizes 1 and 2
    assert sorted(s["metric"] for s, _ in found) == sorted(
        ["time", "pure_time", "overall_time"] * 2
    )
    for sample, got in found:
        values = sample["values"]
        assert got["repetitions"] == len(values) == sample["params"]["iterations"]
        assert 10 <= len(values) <= 300 and same_half_width(got, values)
        assert got["stop"] in ("met", "budget", "cap")
        if got["stop"] == "met":
            assert got["half_width"] <= 0.25
    # compute_time and overlap follow overall_time's calls and are not judged
    samples = [r for r in records if r["type"] == "sample"]
    for size in (1, 2):
        n = {s["metric"]: len(s["values"]) for s in samples if s["params"]["bytes"] == size}
        assert n["compute_time"] == n["overlap"] == n["overall_time"]
    done, records = launch(flavor, "nbc", *common, "--precision", "1e-9", "--time-budget", "1e-9")
    assert done.returncode == 0, done.stderr
    assert {(got["stop"], got["repetitions"]) for _, got in judged(records)} == {("budget", 10)}
    done, _ = launch(flavor, "nbc", "--precision", "0.01", "--protocol", "osu")
    assert done.returncode == 2 and "--protocol osu keeps OSU's fixed counts" in done.stderr


def test_rma_plan_to_a_precision_uses_p2ps_settings():
    plan = rma_plan_of(tests=["put_latency"], sizes="1:8", precision=0.05, budget_s=20, quick=True)
    for job in plan.jobs:
        program = job.program
        assert program[program.index("--precision") + 1] == "0.05"
        assert float(program[program.index("--size-budget-ms") + 1]) > 0
        assert "--scale-iterations" not in program  # the blocks adapt instead
    [note] = [n for n in plan.notes if n.kind == "precision"]
    assert note.data["target"] == 0.05 and note.data["min_launches"] == 2  # --repeat 2
    assert note.text.startswith("rma: target 5.0%")
    fixed = rma_plan_of(tests=["put_latency"], quick=True)  # the default: OSU's counts
    assert all("--precision" not in j.program for j in fixed.jobs)
    assert not [n for n in fixed.notes if n.kind == "precision"]
    with pytest.raises(ValueError, match="--protocol osu keeps OSU's fixed counts"):
        rma_plan_of(protocol="osu", precision=0.01)


def test_nbc_plan_to_a_precision_uses_colls_settings():
    plan = nbc.plan(nbc_ctx(), {"collectives": ["ibcast"], "budget_s": 60.0})
    job = plan.jobs[0]
    assert arg(job, "--precision") == "0.01"  # --budget alone: the default target
    assert arg(job, "--iterations") == "50000"  # coll's cap: 50x OSU's 1000
    assert float(arg(job, "--time-budget")) == pytest.approx(30.0)  # half, one launch
    assert "--warmup" not in job.program  # OSU's warm-ups, not a tenth of the cap
    [note] = [n for n in plan.notes if n.kind == "precision"]
    assert note.data == {"target": 0.01, "budget_s": 60.0, "cap": 50000}
    quick = nbc.plan(nbc_ctx(), {"collectives": ["ibcast"], "precision": 0.05, "quick": True})
    job = quick.jobs[0]
    assert arg(job, "--iterations") == "5000" and arg(job, "--warmup") == "10"
    fixed = nbc.plan(nbc_ctx(), {"collectives": ["ibcast"]})  # the default: OSU's counts
    assert "--precision" not in fixed.jobs[0].program
    with pytest.raises(ValueError, match="--protocol osu keeps OSU's fixed counts"):
        nbc.plan(nbc_ctx(), {"protocol": "osu", "budget_s": 10.0})


@pytest.mark.mpi
@pytest.mark.parametrize(
    "suite, args",
    [
        pytest.param(
            "rma",
            (
                "--tests",
                "put_latency",
                "--sizes",
                "1:4",
                "--placements",
                "core",
                "--mpi",
                "openmpi",
            ),
            marks=requires_openmpi,
        ),
        pytest.param(
            "nbc",
            ("--collectives", "ibcast", "--sizes", "1:2", "--ranks", "2", "--mpi", "mpich"),
            marks=requires_mpich,
        ),
    ],
)
def test_run_to_a_precision_end_to_end_and_show_says_it(cli, suite, args):
    done = cli("run", suite, *args, "--precision", "5%", "--budget", "20s", "--quick")
    assert done.returncode == 0, done.stderr
    assert "target 5.0%" in done.stdout + done.stderr  # the plan's note, before the run
    shown = " ".join(cli("show", "last").stdout.split())
    assert "precision target 5.0% (95% CI half-width of each median):" in shown
    exported = json.loads(cli("export", "last", "--format", "json").stdout)
    judged_cells = [p for p in exported["pooled"] if p.get("precision")]
    assert judged_cells and all(
        p["precision"]["stop"] in ("met", "budget", "cap", "launch spread", "CPU pair moved")
        for p in judged_cells
    )


@pytest.mark.parametrize("suite", ["rma", "nbc"])
def test_osu_protocol_with_precision_is_one_line_exit_2(cli, suite):
    done = cli("run", suite, "--protocol", "osu", "--precision", "1%", "--dry-run")
    assert done.returncode == 2, done.stdout
    assert "--protocol osu keeps OSU's fixed counts" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_missed_cells_name_the_rma_test_and_the_nbc_loop():
    from hpcscope.results.precision import _what

    rma_params = {"test": "put_latency", "sync": "flush", "window_kind": "allocate", "bytes": 8}
    assert _what("latency", rma_params) == "put_latency (flush, allocate)"
    nbc_params = {"collective": "ibcast", "family": "nonblocking", "bytes": 8}
    assert _what("pure_time", nbc_params) == "ibcast pure_time"
    assert _what("time", {"collective": "bcast", "algorithm": "lane"}) == "bcast lane"  # coll
