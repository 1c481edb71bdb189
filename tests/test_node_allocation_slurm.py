"""The node suite over every node of a SLURM allocation (issue 45 part 3): one allocation,
one job step per node at once, each node's records a launch tagged with the node, on
scripts/slurm-local's fake nodes (they share this machine, so the rates are compared
only for their shape here, not for an outlier)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_node_kernels import bindir  # noqa: F401  (fixture: bench/node built alone)
from test_slurm_live import cluster  # noqa: F401  (fixture: the local SLURM)

from hpcscope.analysis import node_outliers
from hpcscope.launch.slurm import SlurmBackend
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

pytestmark = pytest.mark.slurm


def test_every_node_of_an_allocation_at_once(cluster, bindir, tmp_path: Path) -> None:  # noqa: F811
    cluster(3)
    store = Store(tmp_path / "hpcscope.db")
    run_id = store.create_run("node", backend="slurm")
    backend = SlurmBackend(store, SlurmOptions(), rundir=tmp_path / "rundir", poll_interval_s=0.3)
    args = ["--kernels=clock", "--threads=1", "--seconds=0.05", "--reps=3"]
    job = Job(
        suite="node",
        name="node/cpu/every-node",
        program=[str(bindir / "cpu"), *args],
        nodes=3,
        ranks=3,
        tags={"suite": "node", "every_node": True, "part": "cpu"},
        timeout_s=120,
    )
    backend.submit(run_id, [job])
    script = next((tmp_path / "rundir").rglob("*.sbatch")).read_text()
    assert 'srun --nodes=1 --ntasks=1 --nodelist="$h"' in script and "} &" in script
    states = backend.wait(run_id, progress=False)
    assert [s.state for s in states] == ["COMPLETED"], [s.detail for s in states]
    backend.collect(run_id)
    launches = {x["name"]: x for x in store.launches(run_id)}
    names = [f"node/cpu/every-node/n{i}" for i in (1, 2, 3)]
    assert set(names) <= set(launches), list(launches)
    for name in names:
        assert launches[name]["status"] == "COMPLETED", launches[name]["stderr_tail"]
    notes = [n["data"] for n in store.run(run_id)["notes"] if n["kind"] == "placement"]
    assert sorted(n["launch"] for n in notes) == names
    assert all(n["checked"] == "host, the step's SLURMD_NODENAME" for n in notes), notes
    found = node_outliers.analyse(store.samples(run_id))
    assert found is not None and found.nodes == ["n1", "n2", "n3"]
    assert [r.label for r in found.rates][0] == "clock (1 thread)"  # and under FP64 load
