"""The node suite over every node of an allocation (issue 45 part 3): the outlier rule of
analysis/node_outliers.py on fixtures (fast), and the every-node plan."""

from __future__ import annotations

from pathlib import Path

from hpcscope.analysis import node_outliers
from hpcscope.suites import node_alloc
from hpcscope.suites.base import PlanContext


def _sample(node: str, values: list[float], metric="bandwidth", unit="MB/s", **params):
    params = {"workload": "stream", "op": "triad", "threads": 1, **params}
    return {
        "benchmark": "mem",
        "metric": metric,
        "unit": unit,
        "params": params,
        "values": values,
        "tags": {"node": node, "every_node": True},
    }


def _nodes(values_by_node: dict[str, list[float]], **kw) -> list[dict]:
    return [_sample(n, v, **kw) for n, v in values_by_node.items()]


HEALTHY = {f"n{i}": [1000 + 13 * i, 1010 + 7 * i, 990 + 11 * i] for i in range(1, 7)}


def test_healthy_nodes_flag_nothing():
    found = node_outliers.analyse(_nodes(HEALTHY))
    assert found is not None and found.flags == []
    assert found.nodes == [f"n{i}" for i in range(1, 7)]
    assert node_outliers.summary_lines(found)[0] == "node outliers: none among 6 nodes"


def test_a_slow_node_is_named_with_its_numbers():
    slow = {**HEALTHY, "n4": [600, 650, 620]}
    found = node_outliers.analyse(_nodes(slow))
    assert found is not None
    (flag,) = found.flags
    assert (flag.node, flag.rate) == ("n4", "STREAM triad (1 thread)")
    assert flag.value == 620 and 0.55 < flag.ratio < 0.65
    assert (
        "n4: STREAM triad (1 thread) 620 MB/s, 40 % under the other nodes' median 1030 (MAD 20.8)"
        == flag.text
    )
    rows = node_outliers.table_rows(found)
    assert rows[0]["n4"] == "620 !" and not rows[0]["n1"].endswith("!")


def test_one_slow_slice_does_not_flag_a_node():
    """Its median is low, but its best repetition reaches the others: a shared machine's
    scheduler, not the node (rule 3)."""
    found = node_outliers.analyse(_nodes({**HEALTHY, "n2": [400, 420, 1100]}))
    assert found is not None and found.flags == []


def test_a_rate_that_varies_between_healthy_nodes_flags_nobody():
    """25 % under the median but within 3 x the MAD of nodes that spread this much."""
    spread = {"n1": [1000], "n2": [600], "n3": [1400], "n4": [800], "n5": [1200], "n6": [750]}
    found = node_outliers.analyse(_nodes(spread))
    assert found is not None and found.flags == []


def test_latency_is_worse_when_higher_and_two_nodes_cannot_be_told_apart():
    lat = {"n1": [10.0], "n2": [10.5], "n3": [9.8], "n4": [25.0]}
    found = node_outliers.analyse(
        _nodes(lat, metric="latency", unit="ns", workload="chase", op="load")
    )
    assert found is not None and [f.node for f in found.flags] == ["n4"]
    two = node_outliers.analyse(_nodes({"n1": [10.0], "n2": [30.0]}))
    assert two is not None and two.flags == []
    assert "at least 3 are needed" in two.rates[0].note


def test_a_clock_that_drops_under_load_on_one_node_only():
    clock = {n: [3.0, 3.0] for n in ("n1", "n2", "n3", "n4")}
    loaded = {**{n: [2.9, 2.95] for n in ("n1", "n2", "n3")}, "n4": [1.6, 1.7]}
    samples = _nodes(clock, metric="frequency", unit="GHz", workload="cpu_clock")
    samples += _nodes(loaded, metric="frequency", unit="GHz", workload="cpu_clock", load="fp64")
    found = node_outliers.analyse(samples)
    assert found is not None
    assert [(f.node, f.rate) for f in found.flags] == [("n4", "clock under fp64 (1 thread)")]


def test_untagged_samples_are_not_an_allocation():
    sample = _sample("n1", [1.0])
    sample["tags"] = {}
    assert node_outliers.analyse([sample]) is None


def test_every_node_plan_is_cheap_and_tagged():
    ctx = PlanContext(
        topology=None, mpis=[], binary=lambda name, mpi: Path(f"/bin/{name}"), nodes_available=6
    )
    parts = {"cpu": True, "mem": True, "disk": True, "net": True}  # none named: all on
    plan = node_alloc.plan(ctx, {"threads": [1]}, parts, quick=True)
    assert [j.name for j in plan.jobs] == ["node/cpu/every-node", "node/mem/every-node"]
    assert all(j.tags["every_node"] and j.mpi is None for j in plan.jobs)
    assert "--kernels=clock,fp64" in plan.jobs[0].program
    assert f"--array-bytes={64 << 20}" in plan.jobs[1].program
    assert plan.notes[0].text.startswith("every node at once: cpu, mem on each of 6 nodes")
    named = node_alloc.plan(ctx, {}, {"cpu": False, "mem": False, "disk": True, "net": True}, True)
    assert [j.name for j in named.jobs] == ["node/net/two-nodes"]
    assert any(n.kind == "skipped" and n.text.startswith("disk:") for n in named.notes)


def test_a_clock_under_load_on_shared_cpus_is_shown_not_judged():
    """The lab: one node's loaded clock read in short windows between another node's
    slices is the scheduler's, not the node's (node_outliers.SHARED_CLOCK)."""
    loaded = {**{n: [3.7, 3.6] for n in ("n1", "n2", "n3")}, "n4": [0.35, 0.36]}
    samples = _nodes(loaded, metric="frequency", unit="GHz", workload="cpu_clock", load="fp64")
    for s in samples:
        s["tags"]["shared_cpus"] = True
    found = node_outliers.analyse(samples)
    assert found is not None and found.flags == []
    assert found.rates[0].note == node_outliers.SHARED_CLOCK
    assert found.rates[0].medians["n4"] == 0.355
