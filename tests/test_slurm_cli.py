"""`hpcscope run p2p --on slurm` from the command line against the local SLURM."""

from __future__ import annotations

import json
import sqlite3

import pytest
from test_slurm_live import cluster  # noqa: F401  (the fixture that starts scripts/slurm-local)

pytestmark = [pytest.mark.slurm, pytest.mark.mpi]


def test_run_p2p_on_slurm_gives_the_three_placement_shape(cluster, cli):  # noqa: F811
    cluster(4)
    done = cli(
        "run",
        "p2p",
        "--on",
        "slurm",
        "--nodes",
        "2",
        "--mpi",
        "openmpi,mpich",
        "--quick",
        "--precision",
        "0",
        "--repeat",
        "1",
        "--sizes",
        "0:1K",
        "--tests",
        "latency,bw",
        "--wait",
        "--time",
        "5",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(cli.db)
    hosts = {}
    for name, meta, status in db.execute("SELECT name, meta, status FROM launches"):
        assert status == "COMPLETED", name
        hosts[name] = [r["host"] for r in json.loads(meta)["ranks"]]
    for mpi in ("openmpi", "mpich"):
        node_hosts = hosts[f"{mpi}/node/r1"]
        assert len(set(node_hosts)) == 2 and all(h.startswith("n") for h in node_hosts)
        assert len(set(hosts[f"{mpi}/core/r1"])) == 1
    table = next(cli.folder.glob("hpcscope-out/run-*/p2p_table.md")).read_text()
    assert "latency node" in table and "latency core" in table
    # collecting again adds nothing
    again = cli("slurm", "collect", "last")
    assert again.returncode == 0 and "0 record(s) new" in again.stderr


def test_slurm_script_prints_directives_and_submits_nothing(cli):
    done = cli(
        "slurm",
        "script",
        "p2p",
        "--nodes",
        "2",
        "--mpi",
        "openmpi",
        "--partition",
        "short",
        "--time",
        "10",
        "--module",
        "openmpi/4.1.6",
    )
    assert done.returncode == 0, done.stderr
    for line in (
        "#SBATCH --nodes=2",
        "#SBATCH --exclusive",
        "#SBATCH --partition=short",
        "module load openmpi/4.1.6",
    ):
        assert line in done.stdout
    assert not cli.db.exists() or json.loads(cli("list", "--format", "json").stdout) == []


def test_slurm_commands_on_a_local_run_say_so(cli):
    cli.db.parent.mkdir(exist_ok=True)
    from hpcscope.results.store import Store

    Store(cli.db).create_run("p2p")
    done = cli("slurm", "status", "last")
    assert done.returncode == 2 and "not submitted to SLURM" in done.stderr
