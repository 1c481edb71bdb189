"""`run links` (issue 45): the 1-factorization, the flag rule and its fault attribution on
fixtures, and the suite end to end with real Open MPI and MPICH (emulated nodes on this
machine) and on a small simulated platform."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from conftest import Cli, have, requires_mpich, requires_openmpi

from hpcscope.analysis import links, links_schedule

# ---- the schedule


@pytest.mark.parametrize("n", range(2, 34))
def test_every_pair_once_every_node_once_per_round(n: int) -> None:
    seen: list[tuple[int, int]] = []
    rounds = list(links_schedule.schedule(n))
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    for pairs in rounds:
        nodes = [x for pair in pairs for x in pair]
        assert len(nodes) == len(set(nodes))  # nobody twice in a round
        assert len(nodes) == n - (n % 2)  # everybody busy (odd: exactly one idle)
        seen += pairs
    assert sorted(seen) == list(combinations(range(n), 2))  # every pair exactly once


def test_partner_is_symmetric_and_idle_only_for_odd() -> None:
    for n in (6, 7):
        for r in range(links_schedule.rounds(n)):
            idle = [a for a in range(n) if links_schedule.partner(a, r, n) < 0]
            assert len(idle) == n % 2
            for a in range(n):
                b = links_schedule.partner(a, r, n)
                assert b < 0 or links_schedule.partner(b, r, n) == a


# ---- the rule and the attribution, on fixtures


def fixture(
    n: int,
    bw=lambda a, b, lane: 1000.0,
    serial: dict | None = None,
    lanes: int = 1,
    noise: float = 0.02,
) -> list[dict]:
    """Samples as links.c records them: per pair a latency and a bandwidth sample per
    round, and `serial` {(a, b): bandwidth alone} re-tests (lane 0)."""
    rng = random.Random(n)
    out = []

    def pair_samples(a, b, lane, phase, value, r=None):
        prm = {
            "test": "pingpong",
            "phase": phase,
            "rank_a": a * lanes + lane,
            "rank_b": b * lanes + lane,
            "node_a": a,
            "node_b": b,
            "host_a": f"n{a}",
            "host_b": f"n{b}",
            "lane": lane,
            "lanes": lanes,
        }
        if r is not None:
            prm["round"] = r
        vals = [value * (1 + rng.uniform(-noise, noise)) for _ in range(5)]
        lat = [2.0 * (1 + rng.uniform(-noise, noise)) for _ in range(5)]
        for metric, unit, v in (("bandwidth", "MB/s", vals), ("latency", "us", lat)):
            out.append(
                {
                    "benchmark": "links",
                    "metric": metric,
                    "unit": unit,
                    "params": dict(prm),
                    "values": v,
                    "launch": "x",
                }  # fmt: skip
            )

    for r, pairs in enumerate(links_schedule.schedule(n)):
        for a, b in pairs:
            for lane in range(lanes):
                pair_samples(a, b, lane, "parallel", bw(a, b, lane), r)
    for (a, b), value in (serial or {}).items():
        pair_samples(a, b, 0, "serial", value)
    return out


def test_healthy_nothing_flagged() -> None:
    result = links.analyse(fixture(12))
    assert result is not None and result.flags == [] and result.at_fault == []
    assert result.schedule_ok and len(result.pairs) == 66


def test_one_slow_link_is_the_link() -> None:
    slow = {(2, 7)}
    result = links.analyse(
        fixture(10, bw=lambda a, b, l: 250.0 if (a, b) in slow else 1000.0, serial={(2, 7): 260.0})
    )
    assert result is not None
    (flag,) = result.flags
    assert (flag.metric, flag.cause, flag.culprit) == ("bandwidth", "link", "n2-n7")
    assert result.at_fault == []
    assert "4 x 1.4826" not in flag.why and "alone" in flag.why


def test_one_slow_node_is_the_node() -> None:
    result = links.analyse(fixture(10, bw=lambda a, b, l: 500.0 if 4 in (a, b) else 1000.0))
    assert result is not None
    assert len(result.flags) == 9 and {f.cause for f in result.flags} == {"node"}
    assert {f.culprit for f in result.flags} == {"n4"} and result.at_fault == ["n4"]


def test_fast_alone_is_the_round_and_unretested_is_not_explained() -> None:
    slow = {(1, 5), (3, 8)}
    result = links.analyse(
        fixture(10, bw=lambda a, b, l: 400.0 if (a, b) in slow else 1000.0, serial={(1, 5): 990.0})
    )
    assert result is not None
    causes = {(f.node_a, f.node_b): f.cause for f in result.flags}
    assert causes == {("n1", "n5"): "round", ("n3", "n8"): "not explained"}


def test_one_slow_lane_of_a_node_names_the_lane() -> None:
    result = links.analyse(
        fixture(8, lanes=2, bw=lambda a, b, l: 300.0 if l == 1 and 3 in (a, b) else 1000.0)
    )
    assert result is not None and result.at_fault == ["n3 lane 1"]
    assert {f.lane for f in result.flags} == {1}


def test_floor_keeps_a_tight_machine_quiet_and_is_stated() -> None:
    # 10 % slower on a noise-free machine (MAD ~ 0): beyond k MADs, within the 20 % floor
    result = links.analyse(
        fixture(8, bw=lambda a, b, l: 900.0 if (a, b) == (0, 1) else 1000.0, noise=0.0)
    )
    assert result is not None and result.flags == []
    assert "20 %" in result.rule.text() and "3 x 1.4826 x MAD" in result.rule.text()


# ---- end to end


@requires_openmpi
@requires_mpich
def test_run_links_local_both_mpis(cli: Cli) -> None:
    """Emulated nodes on this machine under real mpirun: every pair of 5 nodes recorded in
    the circle method's rounds, re-tests, bisection, all-to-all; show, export, files."""
    done = cli("run", "links", "--ranks", "5", "--quick", "--bw-bytes", "64K", "-o", "out")
    assert done.returncode == 0, done.stderr
    assert "5 emulated nodes" in done.stderr
    shown = cli("show", "last")
    assert "links openmpi/links" in shown.stdout and "links mpich/links" in shown.stdout
    assert "rule: flagged when worse than the median" in shown.stdout
    doc = json.loads(cli("export", "last", "--format", "json").stdout)
    assert len(doc["links"]) == 2
    for found in doc["links"]:
        assert found["schedule_ok"] and found["nodes"] == [f"node {i}" for i in range(5)]
        bw = found["matrices"]["bandwidth"][0]
        assert all(bw[i][j] > 0 for i in range(5) for j in range(5) if i != j)
        assert {b["pairing"] for b in found["bisection"]} == {"halves", "random"}
        assert found["alltoall"]["p"] == 5 and found["retested"] >= 1
    rounds = {s["params"]["round"] for s in doc["samples"] if s["params"].get("test") == "round"}
    assert rounds == set(range(5))
    files = {p.name for p in (cli.folder / "out").iterdir()}
    assert {
        "links_openmpi_links_n5x1_r1_bandwidth.csv",
        "links_mpich_links_n5x1_r1_bandwidth.svg",
    } <= files


def test_dry_run_prints_the_schedule_and_local_needs_two(cli: Cli) -> None:
    done = cli("run", "links", "--ranks", "6", "--dry-run", "--mpi", "openmpi")
    assert done.returncode == 0, done.stderr
    assert "schedule: 6 nodes, 5 rounds, 15 node pairs" in done.stdout
    assert "round 0: 0-5 1-4 2-3" in done.stdout
    bad = cli("run", "links", "--ranks", "1", "--dry-run", "--mpi", "openmpi")
    assert bad.returncode == 2 and "links needs 2 or more nodes" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.sim
@pytest.mark.skipif(not (have("smpirun") and have("smpicc")), reason="SimGrid not installed")
def test_run_links_names_the_slow_link_and_node_of_a_simulated_platform(cli: Cli) -> None:
    """Hydra shrunk to 6 nodes, 2 lanes (a host per socket: one rank per node and lane),
    with link n1-n4 at a quarter and host n3 at half: exactly those two are named; the
    model has no noise, so nothing else is flagged."""
    platform = "hydra:nodes=6,cores_per_socket=1,slow_link=n1-n4:0.25,slow_host=n3:0.5"
    done = cli("run", "links", "--on", "sim", "--platform", platform, "--quick")
    assert done.returncode == 0, done.stderr
    doc = json.loads(cli("export", "last", "--format", "json").stdout)
    (found,) = doc["links"]
    assert found["nodes"] == [f"n{i}" for i in range(6)] and found["lanes"] == 2
    assert found["schedule_ok"] and found["phase"] == "parallel"
    named = {(f["cause"], f["culprit"]) for f in found["flags"]}
    assert named == {("node", "n3"), ("link", "n1-n4")}, named
    assert found["at_fault"] == ["n3"]
    assert len([f for f in found["flags"] if f["cause"] == "node"]) == 2 * 5  # lanes x peers
    for b in found["bisection"]:
        assert 0.95 <= b["ratio"] <= 1.05, b  # a non-blocking switch loses nothing
    shown = cli("show", "last").stdout
    assert "10 pairs of node n3" in shown and "link n1-n4" in shown


def test_plan_passes_the_options_and_one_rank_per_node_and_lane() -> None:
    from hpcscope.machine.mpi import MpiSpec
    from hpcscope.suites import links as suite
    from hpcscope.suites.base import PlanContext

    mpi = MpiSpec("openmpi", "mpicc", "mpirun", "4.1.4")
    ctx = PlanContext(None, [mpi], lambda name, m: f"/b/{name}", nodes_available=8)
    opts = {"lanes_per_node": 2, "sequential": True, "bisection": False, "k": 4.0}
    (job,) = suite.plan(ctx, opts).jobs
    assert (job.ranks, job.nodes, job.env) == (16, 8, {})
    assert job.program[1:] == ["--k", "4.0", "--bisection=0", "--sequential"]
    lines = suite.describe(suite.plan(ctx, opts))
    assert lines[0].startswith("schedule: 8 nodes, 7 rounds, 28 node pairs (each on 2 lanes")
