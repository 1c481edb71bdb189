"""The nbc suite without MPI: the plan, the names and OSU titles, the OSU text export and
the guideline checks on made-up samples (docs/nbc.md)."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from hpcscope.analysis import nbc_analysis
from hpcscope.machine.mpi import MpiSpec
from hpcscope.results import nbc_osu, stats
from hpcscope.results.nbc_names import NAMES, blocking_of, osu_program, osu_title
from hpcscope.suites import nbc
from hpcscope.suites.base import PlanContext


def ctx(cores: int = 2, mpis: tuple[str, ...] = ("openmpi",)) -> PlanContext:
    topo = SimpleNamespace(
        packages=[SimpleNamespace(index=0)],
        cores=[SimpleNamespace(pus=[c], package=0) for c in range(cores)],
        pus=list(range(cores)),
    )
    specs = [MpiSpec(f, f"mpicc.{f}", f"mpirun.{f}", "1") for f in mpis]
    return PlanContext(topology=topo, mpis=specs, binary=lambda n, m: Path(f"/b/{m.flavor}/{n}"))


def arg(job, name: str) -> str:
    return job.program[job.program.index(name) + 1]


def test_plan_groups_variants_with_their_blocking_collectives() -> None:
    plan = nbc.plan(ctx(), {"collectives": ["ibcast", "reduce_persistent"], "quick": True})
    lists = [arg(j, "--collectives").split(",") for j in plan.jobs]
    assert lists == [["bcast", "ibcast"], ["reduce", "reduce_persistent"]]
    job = plan.jobs[0]
    assert job.ranks == 2 and job.cpus == [0, 1] and job.tags["rank_layout"] == "alternate"
    assert arg(job, "--order") == "random" and arg(job, "--seed") == "0"  # new order per launch
    assert arg(job, "--max-size") == "4096" and arg(job, "--iterations") == "100"
    assert arg(job, "--probes") == "0"  # OSU's default: no MPI_Test in the compute


def test_plan_osu_protocol_and_the_neighbourhood_needs_three_ranks() -> None:
    plan = nbc.plan(ctx(), {"collectives": ["neighborhood", "ibarrier"], "protocol": "osu"})
    assert [arg(j, "--collectives") for j in plan.jobs] == ["barrier,ibarrier"]
    assert arg(plan.jobs[0], "--protocol") == "osu" and "--order" not in plan.jobs[0].program
    assert plan.jobs[0].tags["protocol"] == "osu"
    skipped = [n for n in plan.notes if n.kind == "skipped"]
    assert len(skipped) == 1 and "at least 3 ranks" in skipped[0].text
    plan = nbc.plan(ctx(cores=4), {"collectives": ["alltoallv_neighbors"]})
    assert arg(plan.jobs[0], "--collectives") == "neighbor_alltoall,alltoallv_neighbors"


@pytest.mark.parametrize(
    "opts, words",
    [
        ({"collectives": ["ibcst"]}, "unknown collective 'ibcst'"),
        ({"sizes": "1:128M"}, "at most 64M"),
        ({"iterations": 0}, "iterations must be a positive integer"),
        ({"protocol": "imb"}, "--protocol 'imb'"),
        ({"ranks": 1}, "at least 2 ranks"),
    ],
)
def test_plan_refuses_bad_options(opts: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        nbc.plan(ctx(), opts)


def test_names_and_osu_titles() -> None:
    assert len(NAMES) == 56 and blocking_of("ineighbor_alltoallw") == "neighbor_alltoallw"
    assert blocking_of("alltoallv_neighbors") == "neighbor_alltoall"
    # OSU 7.4's own words (c/mpi/collective/*/osu_*.c BENCHMARK), including its quirks
    assert osu_title("ibcast") == "# OSU MPI Non-Blocking Broadcast Latency Test v7.4"
    assert osu_title("ialltoall") == "# OSU MPI Non-blocking All-to-All Latency Test v7.4"
    assert osu_title("ialltoallv") == (
        "# OSU MPI Non-blocking All-to-Allv Personalized Exchange Latency Test v7.4"
    )
    assert osu_title("alltoall_persistent") == (
        "# OSU MPI All-to-All Personalized Exchange Persistent Latency Test v7.4"
    )
    assert osu_title("neighbor_alltoallv") == (
        "# OSU MPI Neighborhood All-to-Allv Latency Test v7.4"
    )
    assert osu_title("reduce_scatter_block") == "# OSU MPI Reduce_scatter_block Latency Test v7.4"
    assert osu_title("alltoallv_neighbors") is None
    assert osu_program("reduce_scatter_block_persistent") is None  # not in OSU 7.4


def sample(collective, metric, values, size=8, launch=1, family="nonblocking", unit="us"):
    return {
        "benchmark": "nbc",
        "launch_id": launch,
        "metric": metric,
        "unit": unit,
        "params": {"collective": collective, "family": family, "bytes": size, "p": 2},
        "tags": {"mpi": "openmpi", "ranks": 2, "repeat": launch},
        "values": list(values),
        "warmups": 1,
    }


def test_osu_text_has_osus_title_and_columns() -> None:
    samples = [
        sample("ibcast", "overall_time", [3.0, 3.0, 5.0]),
        sample("ibcast", "compute_time", [2.0]),
        sample("ibcast", "pure_time", [1.5]),
        sample("ibcast", "overlap", [33.3]),
        sample("ibarrier", "overall_time", [4.0], size=0),
        sample("ibarrier", "compute_time", [2.0], size=0),
        sample("ibarrier", "pure_time", [2.0], size=0),
        sample("ibarrier", "overlap", [0.0], size=0, unit="%"),
        sample("bcast", "time", [1.25], family="blocking"),
        sample("alltoallv_neighbors", "time", [1.0], family="neighborhood"),
    ]
    text = "\n".join(nbc_osu.blocks(samples))
    assert "# OSU MPI Non-Blocking Broadcast Latency Test v7.4\n" in text
    assert (
        "# Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)\n"
        in text
    )
    assert (
        "8                       3.00              2.00              1.50             33.30\n"
        in text
    )
    assert "# Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)\n" in text
    assert "\n         4.00              2.00              2.00              0.00\n" in text
    assert "# Size       Avg Latency(us)\n8                       1.25\n" in text
    assert "# not exported: nbc alltoallv_neighbors have no OSU 7.4 program" in text


def test_guidelines_with_coll_statistics() -> None:
    rng = random.Random(1)
    samples = []
    for launch in (1, 2):
        samples += [
            # ibcast + MPI_Wait 30 % slower than bcast in both launches: violated
            sample(
                "ibcast", "pure_time", [1.3 + rng.random() * 0.01 for _ in range(40)], launch=launch
            ),
            sample(
                "bcast",
                "time",
                [1.0 + rng.random() * 0.01 for _ in range(40)],
                launch=launch,
                family="blocking",
            ),
            # the same time: holds
            sample(
                "iallreduce",
                "pure_time",
                [2.0 + rng.random() * 0.01 for _ in range(40)],
                launch=launch,
            ),
            sample(
                "allreduce",
                "time",
                [2.0 + rng.random() * 0.01 for _ in range(40)],
                launch=launch,
                family="blocking",
            ),
            # MPI_Alltoallv on the neighbours faster than neighbor_alltoall: violated
            sample(
                "neighbor_alltoall",
                "time",
                [5.0 + rng.random() * 0.01 for _ in range(40)],
                launch=launch,
                family="neighborhood",
            ),
            sample(
                "alltoallv_neighbors",
                "time",
                [4.0 + rng.random() * 0.01 for _ in range(40)],
                launch=launch,
                family="neighborhood",
            ),
        ]
    rows = {r["guideline"]: r for r in nbc_analysis.guidelines(samples)}
    assert set(rows) == {
        "ibcast + MPI_Wait not slower than bcast",
        "iallreduce + MPI_Wait not slower than allreduce",
        "neighbor_alltoall not slower than MPI_Alltoallv on the same neighbours",
    }
    bcast = rows["ibcast + MPI_Wait not slower than bcast"]
    assert bcast["verdict"] == "violation" and bcast["launches"] == 2
    assert bcast["factor"] == pytest.approx(1.3, rel=0.02) and bcast["p_adjusted"] < 1e-10
    assert rows["iallreduce + MPI_Wait not slower than allreduce"]["verdict"] == "same"
    nbr = rows["neighbor_alltoall not slower than MPI_Alltoallv on the same neighbours"]
    assert nbr["verdict"] == "violation" and nbr["factor"] == pytest.approx(1.25, rel=0.02)
    # one launch only: suggested, not violated (the coll suite's launch rule)
    one = nbc_analysis.guidelines([s for s in samples if s["launch_id"] == 1])
    assert {r["candidate"]: r["verdict"] for r in one}["ibcast"] == "suggested"
    table = {(r["collective"], r["bytes"]): r for r in nbc_analysis.table(samples)}
    assert table[("ibcast", 8)]["blocking_us"] == pytest.approx(1.005, abs=0.01)


def test_an_osu_builds_samples_are_never_pooled_or_judged() -> None:
    """--osu-dir's samples (tag tool=osu) have their own table: the nbc table and the
    guideline verdicts are those of hpcscope's own samples alone."""
    ours = [sample("ibcast", "pure_time", [1.0, 1.0, 1.0]), sample("bcast", "time", [1.0])]
    theirs = sample("ibcast", "pure_time", [9.0, 9.0, 9.0])
    theirs["tags"] = {**theirs["tags"], "tool": "osu"}
    assert nbc_analysis.table([*ours, theirs]) == nbc_analysis.table(ours)
    assert nbc_analysis.guidelines([*ours, theirs]) == nbc_analysis.guidelines(ours)


def test_overlap_is_higher_is_better() -> None:
    assert stats.lower_is_better("%") is False and stats.lower_is_better("us") is True


def test_plan_for_smpi_leaves_out_what_simgrid_lacks() -> None:
    plan = nbc.plan(ctx(cores=4, mpis=("smpi",)), {"collectives": ["all"], "quick": True})
    assert [j.name.split("/")[1] for j in plan.jobs] == ["nbc-nonblocking"]
    said = {n.text for n in plan.notes if n.kind == "skipped"}
    assert any("MPI_Dist_graph_create_adjacent" in t for t in said)
    assert any("no persistent collectives" in t for t in said)


def test_osu_text_of_a_protocol_osu_run_is_osus_own_aggregate() -> None:
    samples = [
        sample(c, m, [9.0], launch=7)
        for c, m in (
            ("ibcast", "overall_time"),
            ("ibcast", "compute_time"),
            ("ibcast", "pure_time"),
            ("ibcast", "overlap"),
        )
    ]
    for s in samples:
        s["params"]["protocol"] = "osu"
    summary = {
        "metric": "osu",
        "launch_id": 7,
        "params": dict(samples[0]["params"]),
        "overall_us": 3.0,
        "compute_us": 2.0,
        "pure_us": 1.5,
        "overlap": 33.33,
    }
    text = "\n".join(nbc_osu.blocks(samples, [summary]))
    assert "OSU's numbers (each rank's mean, averaged over ranks), mean of 1 launch(es)" in text
    assert (
        "8                       3.00              2.00              1.50             33.33\n"
        in text
    )
    # without the summaries (a JSON export's samples): the medians, and said so
    assert "9.00" in "\n".join(nbc_osu.blocks(samples))
