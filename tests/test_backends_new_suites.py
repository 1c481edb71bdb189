"""The suites added for issues 44/45 on the other backends (--on sim and --on slurm; the
lab's are in tests/test_lab.py): each runs its smallest plan and stores records, or is
refused with one line naming why. What each backend runs is written down in the suites'
docs ("Backends" lines); these keep it true.

Costs (a quiet 2-core machine): the sim cases a few seconds each; the SLURM test one run
of rma across two fake nodes (it reuses tests/test_slurm_live.py's controller).
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import REPO, have
from test_slurm_live import cluster  # noqa: F401  (scripts/slurm-local's controller)

from hpcscope.results.store import Store

requires_smpi = pytest.mark.skipif(
    not (have("smpirun") and have("smpicc")),
    reason="SimGrid's smpirun/smpicc not installed (apt-get install libsimgrid-dev)",
)
TINY = "hydra:nodes=2,cores_per_socket=1"
SIM = ("--on", "sim", "--platform", TINY, "--quick", "--repeat", "1")

# suite: (arguments, the benchmark its records carry)
SIM_RUNS = {
    "rma": (("--tests", "put_latency", "--placements", "node", "--sizes", "1:8"), "rma"),
    "nbc": (("--collectives", "iallreduce", "--sizes", "4:4", "--iterations", "5"), "nbc"),
    # measuring to a precision (issue 44): the programs' adaptive loops under SMPI
    "rma_precision": (
        ("--tests", "put_latency", "--placements", "node", "--sizes", "1:2", "--precision", "5%"),
        "rma",
    ),
    "nbc_precision": (
        (
            "--collectives",
            "iallreduce",
            "--sizes",
            "4:4",
            "--iterations",
            "20",
            "--precision",
            "5%",
        ),
        "nbc",
    ),
    "coll": (
        ("--collectives", "barrier,alltoallv,alltoallw,reduce_scatter", "--counts", "1"),
        "coll",
    ),
    "coll_osu": (("--collectives", "barrier", "--protocol", "osu"), "coll"),
    "startup": (("--ranks", "2"), "startup"),
}


@pytest.mark.sim
@requires_smpi
@pytest.mark.parametrize("case", sorted(SIM_RUNS))
def test_new_suite_runs_on_sim_and_stores(cli, case):
    args, benchmark = SIM_RUNS[case]
    suite = case.split("_")[0]
    done = cli("run", suite, *SIM, *args, timeout=300)
    assert done.returncode == 0, done.stderr
    with Store(cli.db) as store:
        run_id = store.resolve("last")
        assert store.run(run_id)["backend"] == "sim"
        assert all(launch["status"] == "COMPLETED" for launch in store.launches(run_id))
        assert store.samples(run_id, benchmark=benchmark)
    assert cli("show", "last").returncode == 0


# suite arguments: the one line that says why --on sim does not run it
SIM_REFUSED = {
    "io": ((), "SimGrid's SMPI has no file system model for MPI-IO"),
    "node": ((), "the node suite measures this machine; not simulated"),
    "coll": (("--collectives", "allreduce", "--npmin", "1"), "--npmin on --on sim: SimGrid"),
}


@pytest.mark.sim
@requires_smpi
@pytest.mark.parametrize("suite", sorted(SIM_REFUSED))
def test_new_suite_refused_on_sim_names_why(cli, suite):
    args, why = SIM_REFUSED[suite]
    done = cli("run", suite, *SIM, *args, "--dry-run")
    assert done.returncode == 2, done.stderr
    assert why in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 3, done.stderr  # one line, wrapped


def test_rma_across_nodes_leaves_out_open_mpis_osc_rdma(cli):
    """Open MPI 4.1's osc/rdma over TCP fails MPI_Win_allocate (MPI_ERR_WIN, found --on
    slurm): node launches run without it, one-node launches as the library chooses."""
    done = cli(
        "run", "rma", "--on", "slurm", "--nodes", "2", "--mpi", "openmpi", "--dry-run",
        "--topology", str(REPO / "tests/fixtures/topo/2x1_fake_node.xml"),
        "--placements", "socket,node", "--tests", "put_latency", "--sizes", "1:8",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scripts = done.stdout.split("# ---- job array ")
    node = next(s for s in scripts if s.startswith("openmpi_node"))
    socket = next(s for s in scripts if s.startswith("openmpi_socket"))
    assert "export OMPI_MCA_osc='^rdma'" in node
    assert "OMPI_MCA_osc" not in socket
    assert "OMPI_MCA_osc=^rdma" in " ".join(done.stderr.split())


@pytest.mark.slurm
@pytest.mark.mpi
def test_rma_runs_across_two_slurm_nodes_with_open_mpi(cluster, cli):  # noqa: F811
    cluster(2)
    done = cli(
        "run", "rma", "--on", "slurm", "--nodes", "2", "--mpi", "openmpi", "--wait",
        "--time", "5", "--repeat", "1", "--quick", "--placements", "node",
        "--tests", "put_latency", "--sizes", "1:8",
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(cli.db)
    assert db.execute("SELECT status FROM launches").fetchall() == [("COMPLETED",)]
    assert db.execute("SELECT count(*) FROM samples WHERE benchmark='rma'").fetchone()[0] > 0


# The lab's own module fixture (2 nodes, 2 lanes), one lab for these cases.
from test_lab import _why_not as _lab_why_not  # noqa: E402
from test_lab import lab  # noqa: E402, F401

LAB_RUNS = {
    "rma": ("--tests", "put_latency", "--placements", "node", "--sizes", "1:8"),
    "coll": ("--collectives", "barrier,alltoallv,alltoallw,reduce_scatter", "--counts", "1"),
    "coll_npmin": ("--collectives", "allreduce", "--counts", "1", "--npmin", "1"),
    "startup": ("--ranks", "2"),
    "io": ("--ranks", "2", "--block-size", "64K", "--transfer-sizes", "64K"),
}


@pytest.mark.lab
@pytest.mark.mpi
@pytest.mark.skipif(_lab_why_not() is not None, reason=str(_lab_why_not()))
@pytest.mark.parametrize("suite", sorted(LAB_RUNS))
def test_new_suite_runs_on_the_lab_and_stores(lab, cli, suite):  # noqa: F811
    done = cli(
        "run", suite.split("_")[0], "--on", "lab", "--mpi", "openmpi", "--quick", "--repeat", "1",
        *LAB_RUNS[suite], timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Store(cli.db) as store:
        run_id = store.resolve("last")
        assert store.run(run_id)["backend"] == "lab"
        assert all(launch["status"] == "COMPLETED" for launch in store.launches(run_id))
        assert store.samples(run_id)


def test_a_launchs_decomposition_is_all_its_ranks_not_npmins_last_level(tmp_path):
    """coll --npmin writes the world's decomposition, then one per smaller level: the
    placement check compares the launch's (all ranks) with the plan, not the last level's
    (the lab refused a correct 2-node launch: 'lanecoll saw 1 node(s) x 1')."""
    from hpcscope.launch.ingest import ingest_lines

    store = Store(tmp_path / "s.db")
    run_id = store.create_run("coll")
    launch_id = store.add_launch(run_id, "openmpi/coll/np2/r1", {})

    def decomposition(nodes: int, p: int) -> str:
        fields = {"nodes": nodes, "ppn": 1, "p": p, "regular": True, "node_override": ""}
        return json.dumps({"type": "summary", "metric": "decomposition", **fields})

    meta = '{"type":"meta","schema":"hpcscope.bench/1","benchmark":"coll","version":"0.1.0"}'
    lines = [meta, decomposition(2, 2), decomposition(1, 1)]
    result = ingest_lines(store, launch_id, lines, "test")
    assert result.decomposition is not None, result.problems
    assert (result.decomposition["nodes"], result.decomposition["p"]) == (2, 2)
