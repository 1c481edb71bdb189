"""Tuning tables: winners, merging, hysteresis, coverage, and lanecoll's own parser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hpcscope.analysis import tune
from hpcscope.analysis.verdicts import coll_table

RNG = np.random.default_rng(11)
ROOT = Path(__file__).resolve().parents[1]


def timed(center, n=40, rel=0.01):
    return list(center * (1 + rel * RNG.standard_normal(n)))


def sweep(
    speedups: dict[int, dict[str, float]],
    coll="allreduce",
    nodes=2,
    ppn=2,
    mpi="openmpi",
    native_us=10.0,
):
    """Samples for counts -> {alg: speed-up over native}; native takes native_us."""
    out = []
    for count, algs in speedups.items():
        for alg, s in dict({"native": 1.0}, **algs).items():
            out.append(
                {
                    "benchmark": "coll",
                    "metric": "time",
                    "unit": "us",
                    "tags": {"mpi": mpi},
                    "warmups": 2,
                    "values": timed(native_us / s),
                    "params": {
                        "collective": coll,
                        "algorithm": alg,
                        "count": count,
                        "bytes": 4 * count,
                        "nodes": nodes,
                        "ppn": ppn,
                        "p": nodes * ppn,
                        "regular": True,
                    },
                }
            )
    return out


def rules_of(table, coll="allreduce"):
    return [
        (r["min_bytes"], r["max_bytes"], r["algorithm"])
        for r in table["rules"]
        if r["collective"] == coll
    ]


def test_merging_and_log_midpoints():
    # counts 1, 10, 100, 1000 (bytes 4, 40, 400, 4000): lane wins the two large ones
    table = tune.make_tuning(
        sweep({1: {"lane": 0.8}, 10: {"lane": 1.0}, 100: {"lane": 1.3}, 1000: {"lane": 1.4}})
    )
    tune.check_table(table)
    assert rules_of(table) == [(0, 126, "native"), (127, tune.TOP_BYTES, "lane")]
    assert 126 == int(np.sqrt(40 * 400))  # halfway between 40 and 400 in log scale
    r = table["rules"][0]
    assert (r["nodes"], r["ppn"]) == (2, 2)


def test_fastest_significant_mockup_wins():
    table = tune.make_tuning(sweep({1: {"lane": 1.3, "hier": 1.6}, 10: {"lane": 1.3, "hier": 1.6}}))
    assert rules_of(table) == [(0, tune.TOP_BYTES, "hier")]


def test_hysteresis_drops_isolated_small_win():
    table = tune.make_tuning(sweep({1: {"lane": 1.0}, 10: {"lane": 1.2}, 100: {"lane": 1.0}}))
    assert rules_of(table) == [(0, tune.TOP_BYTES, "native")]


def test_hysteresis_keeps_isolated_large_win():
    table = tune.make_tuning(sweep({1: {"lane": 1.0}, 10: {"lane": 2.0}, 100: {"lane": 1.0}}))
    assert [a for _, _, a in rules_of(table)] == ["native", "lane", "native"]
    tune.check_table(table)


def test_hysteresis_keeps_isolated_win_every_launch_agrees():
    # 1.2x at count 10 only: dropped from one launch, kept when two launches each show it
    def launch(i, win):
        out = sweep({1: {"lane": 1.0}, 10: {"lane": win}, 100: {"lane": 1.0}})
        return [dict(s, launch_id=i) for s in out]

    agreeing = launch(1, 1.2) + launch(2, 1.2)
    assert [a for _, _, a in rules_of(tune.make_tuning(agreeing))] == ["native", "lane", "native"]
    disagreeing = launch(1, 1.4) + launch(2, 1.02)  # pooled it still wins, 1.2x
    assert rules_of(tune.make_tuning(disagreeing)) == [(0, tune.TOP_BYTES, "native")]


def test_hysteresis_fills_native_gap_unless_slower():
    tie = tune.make_tuning(sweep({1: {"hier": 1.4}, 10: {"hier": 1.0}, 100: {"hier": 1.4}}))
    assert rules_of(tie) == [(0, tune.TOP_BYTES, "hier")]
    # hier significantly slower in the middle: no fill; the two isolated small wins at
    # the edges are then dropped too, large ones are kept
    worse = tune.make_tuning(sweep({1: {"hier": 1.4}, 10: {"hier": 0.7}, 100: {"hier": 1.4}}))
    assert [a for _, _, a in rules_of(worse)] == ["native"]
    large = tune.make_tuning(sweep({1: {"hier": 1.6}, 10: {"hier": 0.7}, 100: {"hier": 1.6}}))
    assert [a for _, _, a in rules_of(large)] == ["hier", "native", "hier"]


def test_rooted_vector_gets_one_rule_when_losing_less_than_the_broadcast():
    # lane 5 % slower than native (10 us) at small sizes, 1.5x faster at large ones
    points = {1: {"lane": 0.95}, 10: {"lane": 0.95}, 1000: {"lane": 1.5}, 10000: {"lane": 1.5}}
    # the 8-byte bcast that a size-dependent table would cost on every call: 1 us here
    bcast = sweep({2: {}}, coll="bcast", native_us=1.0)
    for coll in tune.ROOTED_VECTOR:
        samples = sweep(points, coll=coll) + bcast
        assert rules_of(tune.make_tuning(samples), coll) == [(0, tune.TOP_BYTES, "lane")]
        # without a measured bcast the 5 % loss is beyond the threshold: size-dependent
        alone = rules_of(tune.make_tuning(sweep(points, coll=coll)), coll)
        assert [a for _, _, a in alone] == ["native", "lane"]
    # other collectives need no broadcast to choose by size: unchanged
    other = tune.make_tuning(sweep(points, coll="allgatherv") + bcast)
    assert [a for _, _, a in rules_of(other, "allgatherv")] == ["native", "lane"]


def test_broadcast_cost_is_the_smallest_small_native_bcast_of_the_decomposition():
    rows = coll_table(
        sweep({2: {}, 1000: {}}, coll="bcast", native_us=1.5)
        + sweep({2: {}}, coll="bcast", nodes=4, native_us=9.0)
        + sweep({100: {}}, coll="bcast", ppn=4, native_us=2.0)
    )
    assert tune.broadcast_cost(rows, "openmpi", 2, 2) == pytest.approx(1.5, rel=0.05)
    assert tune.broadcast_cost(rows, "openmpi", 4, 2) == pytest.approx(9.0, rel=0.05)
    assert tune.broadcast_cost(rows, "openmpi", 2, 4) == 0.0  # 400 bytes: not latency-bound
    assert tune.broadcast_cost(rows, "mpich", 2, 2) == 0.0


def test_rooted_vector_keeps_sizes_when_one_rule_costs_more_than_the_broadcast():
    # lane 25 % slower at small sizes (2.5 us > 0.5 us + 1 us), native 33 % at large ones
    points = {1: {"lane": 0.8}, 10: {"lane": 0.8}, 1000: {"lane": 1.5}, 10000: {"lane": 1.5}}
    bcast = sweep({2: {}}, coll="bcast", native_us=1.0)
    table = tune.make_tuning(sweep(points, coll="gatherv") + bcast)
    tune.check_table(table)
    assert [a for _, _, a in rules_of(table, "gatherv")] == ["native", "lane"]
    # a broadcast of 5 us makes one rule worth it: lane, which loses less (log mean
    # 0.11: 1.25x at two sizes) than native (0.2: 1.5x at two sizes)
    rows = coll_table(sweep(points, coll="gatherv"))
    sized = [(4, "native"), (40, "native"), (4000, "lane"), (40000, "lane")]
    assert tune.one_algorithm(rows, sized, 0.05, 5.0) == "lane"
    assert tune.one_algorithm(rows, sized, 0.05, 1.0) is None


def test_coverage_per_decomposition_and_several_collectives():
    samples = (
        sweep({1: {"lane": 1.5}, 100: {"lane": 1.0}, 10000: {"lane": 1.5}, 100000: {"lane": 1.5}})
        + sweep({1: {"hier": 1.0}}, coll="bcast")
        + sweep({1: {"lane": 1.5}, 10: {"lane": 1.5}}, nodes=4, ppn=1)
    )
    table = tune.make_tuning([samples[:10], samples[10:]])  # list of lists accepted
    tune.check_table(table)
    keys = {(r["collective"], r["nodes"], r["ppn"]) for r in table["rules"]}
    assert keys == {("allreduce", 2, 2), ("bcast", 2, 2), ("allreduce", 4, 1)}
    for key in keys:
        mine = [r for r in table["rules"] if (r["collective"], r["nodes"], r["ppn"]) == key]
        assert mine[0]["min_bytes"] == 0 and mine[-1]["max_bytes"] == tune.TOP_BYTES


def test_check_table_finds_gaps_and_overlaps():
    base = {"collective": "bcast", "algorithm": "native"}
    with pytest.raises(ValueError, match="gap or overlap"):
        tune.check_table(
            {
                "schema": tune.SCHEMA,
                "rules": [
                    dict(base, min_bytes=0, max_bytes=10),
                    dict(base, min_bytes=10, max_bytes=tune.TOP_BYTES),
                ],
            }
        )
    with pytest.raises(ValueError, match="not"):
        tune.check_table({"schema": tune.SCHEMA, "rules": [dict(base, min_bytes=0, max_bytes=5)]})


def test_several_mpis_need_a_choice():
    samples = sweep({1: {"lane": 1.5}}) + sweep({1: {"lane": 1.5}}, mpi="mpich")
    with pytest.raises(ValueError, match="mpi="):
        tune.make_tuning(samples)
    assert tune.make_tuning(samples, mpi="mpich")["rules"]


def test_write_tuning_round_trip(tmp_path):
    table = tune.make_tuning(sweep({1: {"lane": 1.5}, 10: {"lane": 1.0}}))
    path = tune.write_tuning(tmp_path / "t.json", table)
    assert json.loads(path.read_text()) == table


# ---- lanecoll's own parser ------------------------------------------------------------


def _build(tmp_path_factory) -> Path:
    if not shutil.which("mpicc.openmpi"):
        pytest.skip("mpicc.openmpi not installed")
    build = tmp_path_factory.mktemp("bench-openmpi")
    subprocess.run(
        ["cmake", "-S", str(ROOT / "bench"), "-B", str(build), "-DCMAKE_C_COMPILER=mpicc.openmpi"],
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        ["cmake", "--build", str(build), "-j2", "--target", "coll", "lanecoll_pmpi"],
        capture_output=True,
        text=True,
    )
    # This test builds lanecoll itself: a failed build fails the test (issue 16 part 6).
    assert done.returncode == 0, (
        "lanecoll did not build: " + done.stdout[-500:] + done.stderr[-500:]
    )
    return build


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return _build(tmp_path_factory)


def lanecoll_accepts(build: Path, path: Path) -> tuple[bool, str]:
    """Loads the file through liblanecoll_pmpi.so's MPI_Init (which validates the table
    and aborts with a message naming the problem) around a one-call coll run."""
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        LANECOLL_TUNING=str(path),
        LANECOLL_NODE_SIZE="1",
        LD_PRELOAD=str(build / "lanecoll" / "liblanecoll_pmpi.so"),
    )
    done = subprocess.run(
        [
            "timeout",
            "60",
            "mpirun.openmpi",
            "-np",
            "2",
            "--bind-to",
            "none",
            "-x",
            "LD_PRELOAD",
            "-x",
            "LANECOLL_TUNING",
            "-x",
            "LANECOLL_NODE_SIZE",
            str(build / "mpi" / "coll"),
            "--collectives",
            "allreduce",
            "--counts",
            "1",
            "--repetitions",
            "1",
            "--warmup",
            "0",
            "--validate=0",
            "--algorithms",
            "native",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode == 0, done.stdout + done.stderr


@pytest.mark.mpi
def test_file_accepted_by_lanecoll(build, tmp_path):
    samples = (
        sweep(
            {1: {"lane": 1.5}, 100: {"lane": 1.0}, 10000: {"lane": 1.5}, 100000: {"lane": 1.5}},
            nodes=2,
            ppn=1,
        )
        + sweep({1: {"hier": 1.6}, 10: {"hier": 1.6}}, coll="bcast", nodes=2, ppn=1)
        + sweep({1: {"lane": 1.2, "lane_v": 1.5}}, coll="reduce", nodes=2, ppn=1)
    )
    table = tune.make_tuning(samples)  # ranges up to 2^63-1, the contract's top
    tune.check_table(table)
    assert rules_of(table, "reduce") == [(0, tune.TOP_BYTES, "lane_v")]
    ok, out = lanecoll_accepts(build, tune.write_tuning(tmp_path / "t.json", table))
    assert ok, out
    # and lanecoll refuses a broken table (so the check above means something)
    bad = dict(table, rules=table["rules"] + [dict(table["rules"][0])])
    ok, out = lanecoll_accepts(build, tune.write_tuning(tmp_path / "bad.json", bad))
    assert not ok and "overlaps" in out


@pytest.mark.mpi
def test_full_range_top_accepted_by_lanecoll(build, tmp_path):
    table = tune.make_tuning(sweep({1: {"lane": 1.5}}, nodes=2, ppn=1))
    ok, out = lanecoll_accepts(build, tune.write_tuning(tmp_path / "t.json", table))
    assert ok, out
