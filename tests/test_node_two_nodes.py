"""The node suite on SLURM (scripts/slurm-local's fake nodes n1, n2 on 127.0.0.1): the
network test between two nodes (server in task 0 on one node, client in task 1 on the
other, one srun step; the records name both nodes and the NIC, loopback: no stated
speed), and HPL through hpcc in a plain step that holds the node's CPUs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_node_kernels import bindir  # noqa: F401  (fixture: bench/node built alone)
from test_slurm_live import cluster  # noqa: F401  (fixture: the local SLURM)

from hpcscope.analysis.node_table import node_table
from hpcscope.launch.slurm import SlurmBackend
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.results.store import Store
from hpcscope.suites import node_hpl, node_net2, node_parts

pytestmark = pytest.mark.slurm


def test_net_between_two_slurm_nodes(cluster, bindir, tmp_path: Path) -> None:  # noqa: F811
    cluster(2)
    store = Store(tmp_path / "hpcscope.db")
    run_id = store.create_run("node", backend="slurm")
    backend = SlurmBackend(store, SlurmOptions(), rundir=tmp_path / "rundir", poll_interval_s=0.3)
    net = node_parts.net_plan({"net_streams": [1, 2], "net_blocks": [32 << 10]}, True, 2)
    net.update(seconds=0.2, reps=1, rr="1")
    job = node_net2.slurm_job(str(bindir / "net"), node_parts.net_args(net), {"suite": "node"})
    backend.submit(run_id, [job])
    states = backend.wait(run_id, progress=False)
    assert [s.state for s in states] == ["COMPLETED"], [s.detail for s in states]
    backend.collect(run_id)
    samples = store.samples(run_id)
    tcp = [s for s in samples if s["params"].get("protocol") == "tcp" and "streams" in s["params"]]
    assert {s["params"]["streams"] for s in tcp if s["params"]["op"] == "stream"} == {1, 2}
    for s in samples:
        p = s["params"]
        # Server and client really ran on different (fake) nodes of the allocation.
        assert (p["server_node"], p["client_node"], p["nodes"]) == ("n1", "n2", 2), p
        assert p["link_dev"] == "lo" and p["link_mbit"] == -1
        assert min(s["values"]) > 0
    rows = [r for r in node_table(samples, []) if r["metric"] == "throughput"]
    assert rows and all(r["nodes"] == 2 and r["eff_vs_peak"] is None for r in rows)
    assert all("no stated speed" in r["peak_formula"] for r in rows)


@pytest.mark.skipif(
    shutil.which("hpcc") is None, reason="hpcc not installed (apt-get install hpcc)"
)
def test_hpl_through_hpcc_in_a_slurm_step(cluster, tmp_path: Path) -> None:  # noqa: F811
    """A plain one-task step gets the node's CPUs (not srun's default of one), and hpcc's own
    mpirun stays inside it instead of waiting for a nested srun."""
    cluster(2)
    store = Store(tmp_path / "hpcscope.db")
    run_id = store.create_run("node", backend="slurm")
    backend = SlurmBackend(store, SlurmOptions(), rundir=tmp_path / "rundir", poll_interval_s=0.3)
    procs = min(2, os.cpu_count() or 1)
    backend.submit(run_id, [node_hpl.hpl_job(256, procs, {"suite": "node"})])
    states = backend.wait(run_id, progress=False)
    assert [s.state for s in states] == ["COMPLETED"], [s.detail for s in states]
    backend.collect(run_id)
    (hpl,) = [s for s in store.samples(run_id) if s["params"]["workload"] == "hpl"]
    assert hpl["params"]["threads"] == procs and hpl["params"]["validated"]
