"""coll, lane_pattern and multi_coll under real Open MPI and MPICH, plus the coll and
lanes suite plans.

The MPI tests build bench/ (with lanecoll when it is there) for each library into a tmp
dir, run 4 ranks as 2 emulated nodes of 2 (LANECOLL_NODE_SIZE=2, oversubscribed on this
2-core machine: correctness only, the timings mean nothing) with few repetitions, and
check every record against the contract and the validation pass. ~1 minute in total.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from hpcscope.machine.mpi import MpiSpec
from hpcscope.results.records import parse_line
from hpcscope.suites import coll as coll_suite
from hpcscope.suites import lanes as lanes_suite
from hpcscope.suites.base import PlanContext

ROOT = Path(__file__).resolve().parents[1]
FLAVORS = ("openmpi", "mpich")
PROGRAMS = ["coll", "lane_pattern", "multi_coll"]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = {}
    for flavor in FLAVORS:
        if not shutil.which(f"mpicc.{flavor}"):
            continue
        build = tmp_path_factory.mktemp(f"bench-{flavor}")
        subprocess.run(
            [
                "cmake",
                "-S",
                str(ROOT / "bench"),
                "-B",
                str(build),
                f"-DCMAKE_C_COMPILER=mpicc.{flavor}",
            ],
            check=True,
            capture_output=True,
        )
        done = subprocess.run(
            ["cmake", "--build", str(build), "-j2", "--target", *PROGRAMS],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        out[flavor] = build / "mpi"
    if not out:
        pytest.skip("no MPI compiler wrapper installed")
    return out


def run(
    flavor: str,
    binary: Path,
    args: list[str],
    ranks: int = 4,
    node_size: int | None = 2,
    timeout: int = 90,
) -> tuple[int, list[dict], str]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("LANECOLL_NODE_SIZE", None)
    if node_size:
        env["LANECOLL_NODE_SIZE"] = str(node_size)
    if flavor == "openmpi":
        launch = ["mpirun.openmpi", "-np", str(ranks), "--oversubscribe", "--bind-to", "none"]
    else:
        launch = ["mpirun.mpich", "-n", str(ranks), "-bind-to", "none"]
    done = subprocess.run(
        ["timeout", str(timeout), *launch, str(binary), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    records = [
        parse_line(line, f"{binary.name} line {i}")
        for i, line in enumerate(done.stdout.splitlines(), 1)
        if line.startswith("{")
    ]
    return done.returncode, records, done.stderr


def by_type(records, kind):
    return [r for r in records if r["type"] == kind]


@pytest.mark.mpi
@pytest.mark.parametrize("flavor", FLAVORS)
def test_coll_validates_and_records_every_algorithm(builds, flavor):
    if flavor not in builds:
        pytest.skip(f"{flavor} not installed")
    rc, records, err = run(
        flavor,
        builds[flavor] / "coll",
        ["--repetitions", "3", "--warmup", "1", "--counts", "1p,100p"],
    )
    assert rc == 0, err[-2000:]
    assert not by_type(records, "error"), by_type(records, "error")
    assert records[0]["type"] == "meta" and records[0]["benchmark"] == "coll"
    decomp = [r for r in by_type(records, "summary") if r["metric"] == "decomposition"][0]
    assert (decomp["nodes"], decomp["ppn"], decomp["regular"]) == (2, 2, True)
    assert decomp["node_override"] == "LANECOLL_NODE_SIZE=2"
    samples = by_type(records, "sample")
    seen = {
        (s["params"]["collective"], s["params"]["algorithm"], s["params"]["count"]) for s in samples
    }
    for s in samples:
        prm = s["params"]
        assert s["metric"] == "time" and s["unit"] == "us" and len(s["values"]) == 3
        assert (prm["nodes"], prm["ppn"], prm["p"], prm["regular"]) == (2, 2, 4, True)
        assert prm["bytes"] == 4 * prm["count"]
        assert all(v > 0 for v in s["values"])
    counts = {4, 400}  # 1p and 100p with p = 4
    every = [c["name"] for c in CATALOG["collectives"]]
    assert {(c, "native", n) for c in every if c != "barrier" for n in counts} <= seen
    assert ("barrier", "native", 0) in seen  # no data: one measurement, count 0
    colls = [c["name"] for c in CATALOG["collectives"] if not c["native_only"]]
    assert {("reduce_scatter", "reduce_scatterv", n) for n in counts} <= seen
    assert {("alltoall", "alltoallv", n) for n in counts} <= seen
    # The fixture built lanecoll itself: its absence is a build defect, never a skip.
    assert decomp["lanecoll"], "coll was built without lanecoll: only native was measured"
    assert {(c, "lane", n) for c in colls for n in counts} <= seen
    assert {(c, "hier", n) for c in colls if c != "alltoall" for n in counts} <= seen
    assert ("alltoall", "hier", 4) not in seen
    # lane_v (vector node collectives) where lane has the regular/vector choice; 4 and 400
    # are divisible by ppn 2, so lane took the regular path and lane_v the vector one
    with_v = {"bcast", "reduce", "allreduce", "scan", "exscan"}
    assert {(c, "lane_v", n) for c in with_v for n in counts} <= seen
    assert {c for c, a, _ in seen if a == "lane_v"} == with_v


@pytest.mark.mpi
def test_coll_irregular_nodes_fall_back_without_error(builds):
    flavor = "openmpi" if "openmpi" in builds else next(iter(builds))
    rc, records, err = run(
        flavor,
        builds[flavor] / "coll",
        [
            "--repetitions",
            "2",
            "--warmup",
            "0",
            "--counts",
            "1p",
            "--collectives",
            "bcast,allreduce,scan",
        ],
        ranks=3,
        node_size=2,
    )
    assert rc == 0, err[-2000:]
    assert not by_type(records, "error")
    decomp = [r for r in by_type(records, "summary") if r["metric"] == "decomposition"][0]
    assert (decomp["nodes"], decomp["regular"]) == (2, False)
    if decomp["lanecoll"]:
        fallbacks = {
            (r["params"]["collective"], r["params"]["algorithm"])
            for r in by_type(records, "summary")
            if r["metric"] == "fallback"
        }
        assert ("bcast", "lane") in fallbacks  # lane algorithms need regular nodes
        assert all(
            s["params"]["algorithm"] != "lane"
            for s in by_type(records, "sample")
            if s["params"]["collective"] == "bcast"
        )


@pytest.mark.mpi
def test_coll_refuses_counts_above_memory_limit(builds):
    flavor = next(iter(builds))
    rc, records, _ = run(
        flavor,
        builds[flavor] / "coll",
        ["--collectives", "alltoall", "--counts", "100000p", "--max-bytes", "1M"],
        ranks=2,
        node_size=1,
    )
    assert rc == 2
    errors = by_type(records, "error")
    assert len(errors) == 1 and "--max-bytes" in errors[0]["message"]
    assert not by_type(records, "sample")


@pytest.mark.mpi
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("program", ["lane_pattern", "multi_coll"])
def test_lane_benchmarks(builds, flavor, program):
    if flavor not in builds:
        pytest.skip(f"{flavor} not installed")
    rc, records, err = run(
        flavor,
        builds[flavor] / program,
        ["--repetitions", "3", "--warmup", "1", "--counts", "1p,100p"],
    )
    assert rc == 0, err[-2000:]
    assert not by_type(records, "error")
    samples = by_type(records, "sample")
    assert {(s["params"]["lanes"], s["params"]["count"]) for s in samples} == {
        (1, 4),
        (2, 4),
        (1, 400),
        (2, 400),
    }
    for s in samples:
        assert (s["params"]["nodes"], s["params"]["ppn"]) == (2, 2)
        assert len(s["values"]) == 3 and all(v > 0 for v in s["values"])


@pytest.mark.mpi
def test_lane_benchmarks_need_two_nodes(builds):
    flavor = next(iter(builds))
    rc, records, _ = run(
        flavor, builds[flavor] / "lane_pattern", ["--counts", "1p"], ranks=2, node_size=None
    )
    assert rc == 1
    assert "LANECOLL_NODE_SIZE" in by_type(records, "error")[0]["message"]


# ---- to a precision (bench/mpi/coll_repeat.h) -----------------------------------------


def _precision_run(builds, program: str, extra: list[str]) -> list[tuple[dict, dict | None]]:
    """(sample, its precision summary or None) of one 2-rank run of `program`."""
    flavor = next(iter(builds))
    args = ["--counts", "1p,10p", "--warmup", "1", "--repetitions", "40", *extra]
    if program == "coll":
        args += ["--collectives", "bcast,allreduce", "--algorithms", "native,lane"]
    rc, records, err = run(flavor, builds[flavor] / program, args, ranks=2, node_size=1)
    assert rc == 0, err[-2000:]
    found = {
        (s["metric"], json.dumps(s["params"], sort_keys=True)): s["precision"]
        for s in by_type(records, "summary")
        if "precision" in s
    }
    samples = by_type(records, "sample")
    assert samples
    return [(s, found.get((s["metric"], json.dumps(s["params"], sort_keys=True)))) for s in samples]


@pytest.mark.mpi
@pytest.mark.parametrize("program", PROGRAMS)
def test_repetitions_stop_at_the_precision_the_budget_or_the_cap(builds, program):
    from hpcscope.results.precision import half_width

    # A budget spent before the first look: every measurement stops there, at 10.
    for sample, p in _precision_run(
        builds, program, ["--precision", "1e-9", "--time-budget", "1e-9"]
    ):
        assert p is not None and p["stop"] == "budget"
        assert len(sample["values"]) == p["repetitions"] == 10
    # A target no measurement meets and no budget: the cap (--repetitions).
    for sample, p in _precision_run(builds, program, ["--precision", "1e-9"]):
        assert p is not None and p["stop"] == "cap" and len(sample["values"]) == 40
    # A loose target: met, at the first look that has it. The program's half-width is
    # the Python side's (one definition), and it is what the stop says.
    stops = []
    for sample, p in _precision_run(builds, program, ["--precision", "0.5"]):
        assert p is not None and p["target"] == 0.5 and p["repetitions"] == len(sample["values"])
        # abs: the printed values' rounding, as in test_bench_p2p's precision test
        assert p["half_width"] == pytest.approx(half_width(sample["values"]), rel=1e-6, abs=2e-8)
        if p["stop"] == "met":
            assert p["half_width"] <= 0.5 and len(sample["values"]) >= 10
        else:
            assert p["stop"] == "cap" and len(sample["values"]) == 40
        stops.append(p["stop"])
    assert "met" in stops
    # --precision 0 (the default): exactly --repetitions, no precision record.
    for sample, p in _precision_run(builds, program, []):
        assert p is None and len(sample["values"]) == 40


@pytest.mark.mpi
def test_precision_options_are_checked(builds):
    flavor = next(iter(builds))
    for bad, says in (("--precision=1.5", "--precision"), ("--time-budget=-1", "--time-budget")):
        rc, _, err = run(flavor, builds[flavor] / "coll", [bad], ranks=2, node_size=1)
        assert rc == 2 and says in err


# ---- suite plans (no MPI run) ---------------------------------------------------------


def ctx(cores=2, mpis=("openmpi",)):
    # One package of `cores` single-thread cores: what the planner reads (counts, and the
    # package and first PU of each core for --rank-layout).
    topo = SimpleNamespace(
        packages=[SimpleNamespace(index=0)],
        cores=[SimpleNamespace(pus=[c], package=0) for c in range(cores)],
        pus=list(range(cores)),
    )
    specs = [MpiSpec(f, f"mpicc.{f}", f"mpirun.{f}", "1") for f in mpis]
    return PlanContext(
        topology=topo,
        mpis=specs,
        binary=lambda n, m: Path(f"/b/{m.flavor}/{n}"),
        catalog=lambda m: CATALOG,
    )


# What a lanecoll build's `coll --list-algorithms` printed (tests/fixtures/coll/).
CATALOG = json.loads(
    (Path(__file__).parent / "fixtures" / "coll" / "list_algorithms.json").read_text()
)


def test_coll_plan_defaults_and_node_size():
    plan = coll_suite.plan(ctx(mpis=("openmpi", "mpich")), {"node_size": 1, "quick": True})
    assert [j.mpi.flavor for j in plan.jobs] == ["openmpi", "mpich"]
    job = plan.jobs[0]
    assert job.ranks == 2 and not job.oversubscribe
    assert job.env == {"LANECOLL_NODE_SIZE": "1"}
    assert job.tags["emulated_nodes"] is True and job.tags["node_size"] == 1
    assert job.program[0] == "/b/openmpi/coll"
    assert job.program[job.program.index("--counts") + 1] == coll_suite.QUICK_COUNTS
    # --quick measures to 2 %, at most 50x the fixed 20 repetitions, the timed
    # repetitions of each of the 2 launches within half of their share of 10 s
    assert job.program[job.program.index("--repetitions") + 1] == "1000"
    assert job.program[job.program.index("--precision") + 1] == "0.02"
    assert job.program[job.program.index("--time-budget") + 1] == "2.500"
    said = [n for n in plan.notes if n.kind == "precision"]
    assert len(said) == 1 and said[0].data["target"] == 0.02 and said[0].data["cap"] == 1000


@pytest.mark.parametrize(
    "opts, reps, target",
    [
        ({"precision": 0}, "20", None),  # the fixed count
        ({"repetitions": 7}, "7", None),  # an explicit count is kept exactly
        ({"repetitions": 7, "precision": 0.05}, "7", "0.05"),  # then it is the cap
        ({"precision": 0.05, "budget_s": 60.0}, "1000", "0.05"),
    ],
)
def test_coll_and_lanes_plans_fixed_or_to_a_precision(opts, reps, target):
    for suite in (coll_suite, lanes_suite):
        plan = suite.plan(ctx(), {"node_size": 1, "quick": True, **opts})
        for job in plan.jobs:
            assert job.program[job.program.index("--repetitions") + 1] == reps
            assert ("--precision" in job.program) == (target is not None)
            if target:
                assert job.program[job.program.index("--precision") + 1] == target
        assert any(n.kind == "precision" for n in plan.notes) == (target is not None)
    # --budget 60s over coll's one launch: half of it for the timed repetitions
    if opts.get("budget_s"):
        job = coll_suite.plan(ctx(), {"node_size": 1, **opts}).jobs[0]
        assert job.program[job.program.index("--time-budget") + 1] == "30.000"


def test_coll_plan_rejects_unknown_collectives():
    with pytest.raises(ValueError, match="allreduce"):
        coll_suite.plan(ctx(), {"collectives": ["allreduce", "bcst"]})


def test_coll_plan_irregular_node_size():
    plan = coll_suite.plan(ctx(cores=4), {"node_size": 3})
    assert any("irregular" in n.text for n in plan.notes)
    with pytest.raises(ValueError, match="irregular"):
        coll_suite.plan(ctx(cores=4), {"node_size": 3, "regular_only": True})


def test_coll_plan_oversubscription_is_flagged():
    plan = coll_suite.plan(
        ctx(cores=2), {"ranks": 4, "node_size": 2, "counts": ["1p", 64], "repetitions": 5}
    )
    job = plan.jobs[0]
    assert job.oversubscribe and job.tags["oversubscribed"]
    assert any("not meaningful" in n.text for n in plan.notes)
    assert job.program[job.program.index("--counts") + 1] == "1p,64"
    with pytest.raises(ValueError, match="counts"):
        coll_suite.plan(ctx(), {"counts": ["ten"]})


def test_lanes_plan_emulates_two_nodes_by_default():
    plan = lanes_suite.plan(ctx(cores=4), {"quick": True, "repeat": 2})
    assert [j.name.split("/")[1] for j in plan.jobs] == ["lane_pattern", "multi_coll"] * 2
    assert all(j.env == {"LANECOLL_NODE_SIZE": "2"} for j in plan.jobs)
    assert any("emulated" in n.text for n in plan.notes)
