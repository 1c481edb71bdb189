"""The memory NUMA near/far matrix on machines with several NUMA nodes (issue 18, part 5),
from hwloc XML fixtures: this test machine has one NUMA node, so the multi-NUMA path of
the planner and of the node table is exercised here with fake two-NUMA topologies only
(the mem program's matrix itself has run for real only in its one-node path: it binds
memory with mbind, which needs the NUMA nodes to exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcscope.analysis.node_table import node_table, numa_cell
from hpcscope.machine.topology import Topology
from hpcscope.suites.base import PlanContext
from hpcscope.suites.node import numa_matrix_notes, plan

TOPO = Path(__file__).parent / "fixtures" / "topo"


def _topo(name: str) -> Topology:
    return Topology.from_file(str(TOPO / name))


def _texts(notes, kind: str) -> list[str]:
    return [n.text for n in notes if n.kind == kind]


def test_two_socket_node_plans_the_matrix_and_skips_counts_above_a_node_s_cpus() -> None:
    topo = _topo("lcc3_2x6x2.xml")  # 2 sockets, one NUMA node each, 12 CPUs per node
    assert len(topo.numa_nodes) == 2 and [len(n.cpus) for n in topo.numa_nodes] == [12, 12]
    notes = numa_matrix_notes(topo, [1, 12, 24])
    (info,) = _texts(notes, "info")
    assert "threads on each of 2 NUMA node(s) with CPUs x memory on each of 2" in info
    (skipped,) = _texts(notes, "skipped")
    assert skipped == (
        "memory NUMA matrix: 24 threads on NUMA node(s) 0 (12 CPUs), 1 (12 CPUs): more "
        "threads than the node has CPUs"
    )


def test_sub_numa_clustering_is_two_nodes_in_one_package() -> None:
    topo = _topo("snc2_1x16x2.xml")
    assert len(topo.packages) == 1 and len(topo.numa_nodes) == 2
    notes = numa_matrix_notes(topo, [1, 16])
    assert _texts(notes, "skipped") == [] and len(_texts(notes, "info")) == 1


def test_one_numa_node_has_nothing_remote() -> None:
    (note,) = numa_matrix_notes(_topo("this_vm.xml"), [1])
    assert (note.kind, note.text) == (
        "skipped",
        "memory NUMA matrix: 1 NUMA node, nothing is remote",
    )


def test_plan_passes_the_thread_counts_and_tells_the_fake_node_s_limits(tmp_path: Path) -> None:
    topo = _topo("2x1_fake_node.xml")  # two NUMA nodes of one CPU each
    ctx = PlanContext(topology=topo, mpis=[], binary=lambda name, mpi: tmp_path / name)
    out = plan(ctx, {"mem": True, "quick": True, "numa_threads": [1, 2]})
    (mem,) = [j for j in out.jobs if j.name == "node/mem"]
    assert "--numa-threads=1,2" in mem.program
    skipped = _texts(out.notes, "skipped")
    assert "memory NUMA matrix: 2 threads on NUMA node(s) 0 (1 CPUs), 1 (1 CPUs): more " \
        "threads than the node has CPUs" in skipped  # fmt: skip
    assert not any("nothing is remote" in t for t in skipped)


def _cell(metric: str, cpu: int, mem: int, value: float, threads: int = 1) -> dict:
    workload = "numa_bandwidth" if metric == "bandwidth" else "numa_latency"
    params = {"workload": workload, "threads": threads, "cpu_node": cpu, "mem_node": mem}
    if metric == "bandwidth":
        params.update(op="triad", array_bytes=1 << 26)
    else:
        params.update(op="pointer_chase", bytes=1 << 27)
    unit = "MB/s" if metric == "bandwidth" else "ns"
    return {"benchmark": "mem", "metric": metric, "unit": unit, "params": params,
            "values": [value, value * 0.98], "tags": {}, "launch_id": 1}  # fmt: skip


def test_node_table_keeps_every_cell_of_a_two_numa_matrix_apart() -> None:
    """Near (same node) and far cells of one thread count used to share a row: the matrix
    collapsed into its best cell. Each (cpu node, memory node) is its own row now."""
    near, far = 20000.0, 12000.0
    samples = [_cell("bandwidth", c, m, near if c == m else far) for c in (0, 1) for m in (0, 1)]
    samples += [_cell("latency", c, m, 90.0 if c == m else 140.0) for c in (0, 1) for m in (0, 1)]
    rows = node_table(samples, [])
    bandwidth = {r["variant"]: r["measured_best"] for r in rows if r["metric"] == "bandwidth"}
    assert bandwidth == {
        "cpu node 0 -> memory node 0 (near)": near,
        "cpu node 0 -> memory node 1 (far)": far,
        "cpu node 1 -> memory node 0 (far)": far,
        "cpu node 1 -> memory node 1 (near)": near,
    }
    latency = {r["variant"]: r["measured_best"] for r in rows if r["metric"] == "latency"}
    assert latency["cpu node 1 -> memory node 0 (far)"] == pytest.approx(140.0 * 0.98)
    assert len(latency) == 4
    assert numa_cell({"threads": 1}) is None  # other mem rows keep their variant empty
