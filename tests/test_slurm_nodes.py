"""SLURM runs planned from the compute nodes and proven there (issue 18, parts 1-3).

The live tests start scripts/slurm-local with `--node-topology`: its fake nodes declare and
serve (TaskProlog -> HWLOC_XMLFILE) a two-socket node of one core per socket, numbered like
this 2-CPU machine, so ranks can really be bound there while hwloc inside the job, and the
topology probe, see two sockets. This machine itself has one socket. `--node-cpuinfo`
gives the fake nodes a Haswell-EP's /proc/cpuinfo (AVX2, 2.5 GHz nominal) for the probe,
where this machine reports AVX-512 and no nominal clock: the node suite's peaks must be
the Haswell's.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_slurm_live import OMPI_ENV, SLURM_LOCAL, _free_ports, _need

from hpcscope import build as build_mod
from hpcscope.launch.slurm import SlurmBackend
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.machine import mpi as mpi_mod
from hpcscope.machine import node_facts
from hpcscope.machine.peaks import parse_cpuinfo
from hpcscope.machine.topology import Topology
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "topo"
FAKE_NODE = FIXTURES / "2x1_fake_node.xml"
FAKE_CPUINFO = Path(__file__).parent / "fixtures" / "node" / "cpuinfo_haswell_e5_2680v3.txt"


@pytest.fixture(scope="module")
def two_socket_cluster(tmp_path_factory: pytest.TempPathFactory):
    """Two fake nodes with the two-socket topology; SLURM_CONF set while the module runs."""
    _need("slurmctld", "slurmd", "sbatch", "mpicc.openmpi", "mpicc.mpich")
    if os.geteuid() != 0:
        pytest.skip("scripts/slurm-local needs root (fake nodes run slurmd as root)")
    state = tmp_path_factory.mktemp("slurm-nodes")
    env = dict(os.environ, HPCSCOPE_SLURM_DIR=str(state), HPCSCOPE_SLURM_PORT=str(_free_ports(3)))
    proc = subprocess.run(
        [str(SLURM_LOCAL), "start", "--nodes", "2", "--node-topology", str(FAKE_NODE)]
        + ["--node-cpuinfo", str(FAKE_CPUINFO)],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = proc.stdout.strip().split("=", 1)[1]
    yield os.environ["SLURM_CONF"]
    subprocess.run([str(SLURM_LOCAL), "stop"], env=env, capture_output=True, timeout=60)
    if saved is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = saved


pytestmark = [pytest.mark.slurm]


def test_plan_uses_the_compute_nodes_topology(two_socket_cluster, cli) -> None:
    assert len(Topology.local().packages) == 1  # what makes the test mean something
    topo = cli("topo", "--on", "slurm")
    assert topo.returncode == 0, topo.stderr
    assert topo.stdout.startswith("2 packages x 1 core x 1 hardware thread")
    assert "probed with srun" in " ".join(topo.stderr.split())
    dry = cli("run", "p2p", "--on", "slurm", "--nodes", "2", "--mpi", "openmpi", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "# ---- job array openmpi_socket" in dry.stdout
    assert "--ntasks-per-socket=1" in dry.stdout and "map_cpu:0,1" in dry.stdout
    assert "skipped: placement core: 1 core per package" in dry.stderr
    assert "(cached probe" in " ".join(dry.stderr.split())  # the topo command cached it


@pytest.mark.mpi
def test_slurm_run_proves_placements_and_default_reports_its_binding(
    two_socket_cluster, cli
) -> None:
    done = cli(
        "run",
        "p2p",
        "--on",
        "slurm",
        "--nodes",
        "2",
        "--mpi",
        "openmpi,mpich",
        "--placements",
        "default,socket,node",
        "--quick",
        "--precision",
        "0",
        "--repeat",
        "1",
        "--sizes",
        "0:64",
        "--tests",
        "latency",
        "--wait",
        "--time",
        "5",
        timeout=400,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(cli("export", "last", "--format", "json").stdout)
    verdicts = {l["name"]: l["placement"] for l in doc["launches"]}
    for mpi in ("openmpi", "mpich"):
        assert verdicts[f"{mpi}/socket/r1"]["verdict"] == "verified"
        assert verdicts[f"{mpi}/node/r1"]["verdict"] == "verified"
        default = verdicts[f"{mpi}/default/r1"]
        assert default["verdict"] == "reported" and default["cpus"] == []
        ranks = next(l for l in doc["launches"] if l["name"] == f"{mpi}/default/r1")["ranks"]
        # the class reported is the one the ranks' own binding amounts to
        sockets = {r["socket"] for r in ranks}
        expected = "socket" if len(sockets) == 2 else default["observed"]
        assert default["observed"] == expected and default["observed"] != "unknown"
    socket_ranks = next(l for l in doc["launches"] if l["name"] == "openmpi/socket/r1")["ranks"]
    assert [(r["cpus"], r["socket"]) for r in socket_ranks] == [([0], 0), ([1], 1)]
    show = cli("show", "last").stdout
    assert "placement (read from inside every rank" in show
    assert "openmpi socket: verified 1/1" in show and "mpich default: reported 1/1" in show


@pytest.mark.mpi
def test_misplaced_rank_is_caught_at_collection(two_socket_cluster, tmp_path: Path) -> None:
    """Ranks asked on CPUs 0 and 1 (one per socket) swap CPUs from inside (taskset after
    srun bound them): collection reads that from the ranks and fails the launch."""
    mpi = mpi_mod.discover("openmpi")[0]
    p2p = build_mod.find_program(build_mod.build(mpi), "p2p")
    store = Store(tmp_path / "hpcscope.db")
    run_id = store.create_run(
        "p2p", backend="slurm", topology_xml=FAKE_NODE.read_text(encoding="utf-8")
    )
    swap = 'exec taskset -c $((1 - SLURM_PROCID)) "$@"'
    job = Job(
        "p2p",
        "openmpi/socket/r1",
        ["bash", "-c", swap, "swap", str(p2p), "--tests", "latency", "--max-size", "8"],
        mpi,
        2,
        [0, 1],
        1,
        env=dict(OMPI_ENV),
        tags={"mpi": "openmpi", "placement": "socket", "repeat": 1},
        timeout_s=120,
    )
    backend = SlurmBackend(store, SlurmOptions(time="5"), rundir=tmp_path / "rundir")
    backend.submit(run_id, [job])
    backend.wait(run_id, progress=False)
    report = backend.collect(run_id)
    (launch,) = store.launches(run_id)
    assert launch["status"] == "FAILED", launch["stderr_tail"]
    assert (
        "asked rank 0 on CPU 0 but it ran on CPUs [1] (bound elsewhere)" in (launch["stderr_tail"])
    )
    assert "FAILED placement 'socket' asked rank 0" in report.text()
    (note,) = [n for n in store.run(run_id)["notes"] if n["kind"] == "placement"]
    assert note["data"]["verdict"] == "wrong" and note["data"]["cpus"] == [0, 1]
    assert store.run(run_id)["status"] == "failed"


@pytest.mark.mpi
def test_coll_ranks_alternate_over_the_sockets_and_are_verified(two_socket_cluster, cli) -> None:
    done = cli(
        "run",
        "coll",
        "--on",
        "slurm",
        "--nodes",
        "2",
        "--ntasks-per-node",
        "2",
        "--mpi",
        "openmpi",
        "--collectives",
        "bcast",
        "--algorithms",
        "native",
        "--counts",
        "1p",
        "--repetitions",
        "5",
        "--quick",
        "--wait",
        "--time",
        "5",
        # fake nodes share one host: Open MPI's shared-memory segments of two fake nodes
        # collide (PLATFORM.md), so ranks talk over TCP on loopback
        "--prelude",
        "export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo",
        timeout=400,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(cli("export", "last", "--format", "json").stdout)
    (launch,) = doc["launches"]
    assert launch["tags"]["rank_layout"] == "alternate"
    assert launch["placement"]["verdict"] == "verified", launch["placement"]
    assert [(r["host"], r["cpus"], r["socket"]) for r in launch["ranks"]] == [
        ("n1", [0], 0),
        ("n1", [1], 1),
        ("n2", [0], 0),
        ("n2", [1], 1),
    ]
    show = cli("show", "last").stdout
    assert "openmpi, rank layout alternate, ranks 4: verified 1/1" in show


def test_node_peaks_come_from_the_compute_node_not_this_one(two_socket_cluster, cli) -> None:
    """The probe job reads the node's cpuinfo (the Haswell served by the TaskProlog): the
    stored peaks use its AVX2 FMA units and 2.5 GHz on the node's 2 cores, name the compute
    node as their source, and fp16 is skipped because the node, not this machine, lacks it."""
    here = parse_cpuinfo(node_facts.local().cpuinfo_text)
    # this machine is not the node: what makes the test mean something
    assert "E5-2680 v3" not in here.model_name
    submitted = cli("run", "node", "--on", "slurm", "--cpu", "--quick", "--time", "5")
    assert submitted.returncode == 0, submitted.stderr
    try:
        with Store(cli.db) as store:
            notes = store.run(1)["notes"]
    finally:
        cli("slurm", "cancel", "last")
    peaks = {n["data"]["name"]: n["data"] for n in notes if n["kind"] == "peak"}
    fp64 = peaks["fp64"]
    assert fp64["value"] == pytest.approx(2 * 2.5 * 16), fp64  # 2 cores x 2.5 GHz x 16
    assert "Haswell-EP" in fp64["source"] and "AVX2, 2 FMA units" in fp64["formula"]
    assert "facts from compute node n" in fp64["source"], fp64["source"]
    assert "/proc/cpuinfo, topology probe job" in fp64["source"]
    assert peaks["int8"]["formula"].startswith("2 cores x 2.5 GHz x 96 INT8 ops/cycle")
    assert "fp16" not in peaks and "bf16" not in peaks  # the node has neither
    skipped = [n["text"] for n in notes if n["kind"] == "skipped"]
    assert "cpu fp16: the CPU has no avx512_fp16 instructions" in skipped
    (topology,) = [n["data"] for n in notes if n["kind"] == "topology"]
    assert topology["cpu_facts"].startswith("compute node n")
