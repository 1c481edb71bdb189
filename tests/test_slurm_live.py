"""The SLURM backend against a real slurmctld and fake nodes (scripts/slurm-local).

A tiny MPI program (built here for both libraries) writes a meta record naming the SLURM
node of every rank, then sample records; it can fail or sleep on request.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hpcscope.launch.slurm import SlurmBackend, SlurmError
from hpcscope.launch.slurm_script import ScriptError, SlurmOptions
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[1]
SLURM_LOCAL = ROOT / "scripts" / "slurm-local"
OMPI = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")
MPICH = MpiSpec("mpich", "mpicc.mpich", "mpirun.mpich", "4.0.2")
# Fake nodes share one host: Open MPI must not use shared memory between them, must stay on
# loopback, and mpirun must not bind (PLATFORM.md, SLURM on 127.0.0.1).
OMPI_ENV = {
    "OMPI_MCA_btl": "self,tcp",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
}

HELLO_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int samples = 1, fail = 0, sleep_s = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--samples")) samples = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--fail")) fail = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sleep")) sleep_s = atoi(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[64] = {0};
  const char *node = getenv("SLURMD_NODENAME");   /* the fake node, not the real host */
  snprintf(host, sizeof host, "%s", node ? node : "unknown");
  char *all = malloc(64 * (size_t)size);
  MPI_Gather(host, 64, MPI_CHAR, all, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("{\"type\":\"meta\",\"schema\":\"hpcscope.bench/1\",\"benchmark\":\"hello\","
           "\"version\":\"1\",\"mpi\":{\"library\":\"x\",\"version\":\"x\"},\"ranks\":[");
    for (int r = 0; r < size; r++)
      printf("%s{\"rank\":%d,\"host\":\"%s\",\"cpus\":[],\"core\":null,\"socket\":null,"
             "\"numa\":null}", r ? "," : "", r, all + 64 * r);
    printf("],\"timer\":{\"resolution_ns\":1,\"overhead_ns\":1},\"options\":{}}\n");
    fflush(stdout);
    for (int s = 0; s < samples; s++) {
      printf("{\"type\":\"sample\",\"metric\":\"latency\",\"unit\":\"us\","
             "\"params\":{\"bytes\":%d},\"values\":[1.5,2.5],\"warmups\":0}\n", 8 << s);
      fflush(stdout);
    }
  }
  if (sleep_s) sleep(sleep_s);
  if (fail) {
    /* Only rank 0 aborts, after its message is out; an abort from another rank could
       kill rank 0 before it prints. The others wait for the abort to end the job. */
    if (rank == 0) {
      fprintf(stderr, "hello: failing on purpose with status %d\n", fail);
      fflush(stderr);
      usleep(300000); /* let slurmstepd forward the line before the abort tears down I/O */
      MPI_Abort(MPI_COMM_WORLD, fail);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
"""


def _need(*commands: str) -> None:
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        pytest.skip("not installed: " + ", ".join(missing))


def _free_ports(count: int) -> int:
    """A base port with `count` consecutive free ports on 127.0.0.1."""
    for _ in range(50):
        base = random.randrange(20000, 30000)
        try:
            for port in range(base, base + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    pytest.skip("no free port range on 127.0.0.1 for the local SLURM")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """Start(nodes) brings the local SLURM up with that many fake nodes; stopped at the end."""
    _need("slurmctld", "slurmd", "sbatch", "mpicc.openmpi", "mpicc.mpich")
    if os.geteuid() != 0:
        pytest.skip("scripts/slurm-local needs root (fake nodes run slurmd as root)")
    state = tmp_path_factory.mktemp("slurm")
    port = _free_ports(5)  # controller + 4 nodes; other test runs may hold the defaults
    env = dict(os.environ, HPCSCOPE_SLURM_DIR=str(state), HPCSCOPE_SLURM_PORT=str(port))

    def start(nodes: int) -> str:
        proc = subprocess.run(
            [str(SLURM_LOCAL), "start", "--nodes", str(nodes)],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert proc.returncode == 0, proc.stderr
        conf = proc.stdout.strip().split("=", 1)[1]
        os.environ["SLURM_CONF"] = conf
        return conf

    saved = os.environ.get("SLURM_CONF")
    start.port = port  # type: ignore[attr-defined]
    yield start
    subprocess.run([str(SLURM_LOCAL), "stop"], env=env, capture_output=True, timeout=60)
    if saved is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = saved


@pytest.fixture(scope="module")
def hello(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("hello")
    src = d / "hello.c"
    src.write_text(HELLO_C)
    out = {}
    for flavor in ("openmpi", "mpich"):
        exe = d / f"hello_{flavor}"
        subprocess.run(
            [f"mpicc.{flavor}", "-O1", "-o", str(exe), str(src)], check=True, timeout=120
        )
        out[flavor] = str(exe)
    return out


def _job(
    hello: dict[str, str],
    mpi: MpiSpec,
    name: str,
    args: list[str] = (),
    nodes: int = 2,
    cpus: list[int] | None = None,
) -> Job:
    return Job(
        "p2p",
        name,
        [hello[mpi.flavor], *args],
        mpi,
        2,
        cpus or [0, 0],
        nodes,
        env=dict(OMPI_ENV) if mpi.flavor == "openmpi" else {},
        tags={"mpi": mpi.flavor, "placement": "node" if nodes > 1 else "core"},
        timeout_s=60,
    )


def _backend(tmp_path: Path, **options) -> tuple[Store, SlurmBackend, int]:
    store = Store(tmp_path / "hpcscope.db")
    run_id = store.create_run("p2p", backend="slurm")
    backend = SlurmBackend(
        store, SlurmOptions(**options), rundir=tmp_path / "rundir", poll_interval_s=0.3
    )
    return store, backend, run_id


def _wait_for(backend: SlurmBackend, run_id: int, state: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(s.state == state for s in backend.poll(run_id)):
            return
        time.sleep(0.3)
    raise AssertionError(f"tasks not {state} after {timeout} s: {backend.poll(run_id)}")


@pytest.mark.parametrize("launcher", ["srun", "mpirun"])
def test_node_placement_spans_two_slurm_nodes_for_both_mpis(
    cluster, hello, tmp_path: Path, launcher: str
) -> None:
    cluster(4)
    store, backend, run_id = _backend(tmp_path, launcher=launcher)
    jobs = [
        _job(hello, OMPI, "openmpi/node/r1", ["--samples", "2"]),
        _job(hello, OMPI, "openmpi/node/r2", ["--samples", "2"]),
        _job(hello, MPICH, "mpich/node/r1", ["--samples", "2"]),
    ]
    backend.submit(run_id, jobs)
    states = backend.wait(run_id, progress=False)
    assert [s.state for s in states] == ["COMPLETED"] * 3, [s.detail for s in states]
    report = backend.collect(run_id)
    assert report.new_tasks == 3 and report.new_records == 9 and report.pending == 0
    launches = store.launches(run_id)
    assert [launch["status"] for launch in launches] == ["COMPLETED"] * 3
    for launch in launches:
        hosts = [r["host"] for r in launch["meta"]["ranks"]]
        assert len(set(hosts)) == 2 and all(h.startswith("n") for h in hosts), (launch, hosts)
    assert store.run(run_id)["status"] == "ok"
    samples = len(store.samples(run_id))
    again = backend.collect(run_id)  # idempotent: nothing new
    assert again.new_tasks == 0 and again.new_records == 0
    assert len(store.samples(run_id)) == samples == 6


def test_cancel_running_job_keeps_its_records(cluster, hello, tmp_path: Path) -> None:
    cluster(4)
    store, backend, run_id = _backend(tmp_path)
    backend.submit(run_id, [_job(hello, OMPI, "openmpi/node/r1", ["--sleep", "120"])])
    _wait_for(backend, run_id, "RUNNING")
    # The meta and the sample are flushed before the sleep: wait until they are on disk.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        outs = list((tmp_path / "rundir").glob("run-*/*/task-1.jsonl"))
        if outs and outs[0].read_text().count("\n") >= 2:
            break
        time.sleep(0.2)
    backend.cancel(run_id)
    states = backend.wait(run_id, progress=False)
    assert states[0].state == "CANCELLED"
    backend.collect(run_id)
    (launch,) = store.launches(run_id)
    assert launch["status"] == "CANCELLED"
    assert launch["meta"] is not None and len(store.samples(run_id)) == 1
    assert store.run(run_id)["status"] == "failed"


def test_failed_job_is_recorded_with_stderr_and_finished_records(
    cluster, hello, tmp_path: Path
) -> None:
    cluster(4)
    store, backend, run_id = _backend(tmp_path)
    backend.submit(
        run_id,
        [
            _job(hello, MPICH, "mpich/node/r1", ["--samples", "3", "--fail", "3"]),
            _job(hello, OMPI, "openmpi/node/r1"),
        ],
    )
    backend.wait(run_id, progress=False)
    report = backend.collect(run_id)
    failed, ok = store.launches(run_id)
    assert failed["status"] == "FAILED" and failed["returncode"] not in (0, None)
    assert "failing on purpose" in failed["stderr_tail"]
    assert ok["status"] == "COMPLETED"
    by_launch = {}
    for s in store.samples(run_id):
        by_launch[s["launch_id"]] = by_launch.get(s["launch_id"], 0) + 1
    assert by_launch == {failed["id"]: 3, ok["id"]: 1}
    assert [s.job.name for s in report.failed] == ["mpich/node/r1"]
    assert store.run(run_id)["status"] == "failed"


def test_interrupted_collect_resumes_and_collects_take_turns(
    cluster, hello, tmp_path: Path
) -> None:
    """Issue 17: a collect stopped after part of a task file (here: the meta record and
    one sample already stored) made the run uncollectable; now the task starts over, and a
    second collect running at the same time waits for the first."""
    import json
    import sys

    cluster(4)
    store, backend, run_id = _backend(tmp_path)
    backend.submit(run_id, [_job(hello, OMPI, "openmpi/node/r1", ["--samples", "20"])])
    backend.wait(run_id, progress=False)
    (launch,) = store.launches(run_id)
    rundir = tmp_path / "rundir"
    (task_file,) = rundir.glob("run-*/*/task-1.jsonl")
    for line in task_file.read_text().splitlines()[:2]:  # what an interrupted collect left
        store.add_record(launch["id"], json.loads(line))
    collect = [
        sys.executable,
        "-m",
        "hpcscope.cli",
        "--db",
        str(tmp_path / "hpcscope.db"),
        "slurm",
        "collect",
        str(run_id),
        "--out",
        str(tmp_path / "out"),
    ]
    both = [
        subprocess.Popen(
            collect, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    said = [p.communicate(timeout=120) for p in both]
    assert [p.returncode for p in both] == [0, 0], said
    assert sorted("collected 1 task(s)" in err for _, err in said) == [False, True], said
    assert len(store.samples(run_id)) == 20  # every sample once, none twice
    assert store.run(run_id)["status"] == "ok"


def test_collect_while_pending_then_again(cluster, hello, tmp_path: Path) -> None:
    cluster(4)
    store, backend, run_id = _backend(tmp_path)
    jobs = [_job(hello, OMPI, f"openmpi/node/r{r}", ["--sleep", "3"]) for r in (1, 2)]
    backend.submit(run_id, jobs)  # one array, %1: task 2 waits for task 1
    early = backend.collect(run_id)
    assert early.pending == 2 and early.new_tasks == 0
    assert "still pending or running" in early.text()
    assert store.run(run_id)["status"] == "running"
    backend.wait(run_id, progress=False)
    late = backend.collect(run_id)
    assert late.new_tasks == 2 and late.pending == 0
    assert "collected 2 of 2 task(s)" in backend.status_text(run_id)


def test_faults_have_clear_messages(cluster, hello, tmp_path: Path, monkeypatch) -> None:
    conf = cluster(1)
    store, backend, run_id = _backend(tmp_path)
    node_jobs = [_job(hello, OMPI, "openmpi/node/r1")]
    # More nodes than the partition has: refused before anything is queued.
    with pytest.raises(SlurmError, match="needs 2 nodes but partition 'debug' has 1"):
        backend.submit(run_id, node_jobs)
    core = [_job(hello, OMPI, "openmpi/core/r1", nodes=1, cpus=[0, 1])]
    backend.options.partition = "nope"
    with pytest.raises(SlurmError, match="partition 'nope' does not exist.*debug \\(1 nodes\\)"):
        backend.submit(run_id, core)
    backend.options.partition = None
    backend.options.time = "ten"
    with pytest.raises(ScriptError, match="not a SLURM time limit"):
        backend.submit(run_id, core)
    backend.options.time = None
    # SLURM's own refusal is shown with what to change (pre-check bypassed).
    monkeypatch.setattr(backend, "check_partition", lambda data, nodes: None)
    backend.options.partition = "nope"
    with pytest.raises(SlurmError, match="(?s)Invalid partition.*what to change"):
        backend.submit(run_id, core)
    backend.options.partition = None
    # No SLURM on PATH.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SlurmError, match="SLURM commands not found on PATH"):
        backend.submit(run_id, core)
    monkeypatch.undo()
    # Controller unreachable: a configuration naming a port nobody listens on.
    bad = tmp_path / "bad.conf"
    port = cluster.port
    bad.write_text(
        Path(conf).read_text().replace(f"SlurmctldPort={port}", f"SlurmctldPort={port + 999}")
    )
    monkeypatch.setenv("SLURM_CONF", str(bad))
    with pytest.raises(SlurmError, match="cannot reach the SLURM controller"):
        backend.check_partition(None, 1) or backend._run(None, ["squeue", "-h"])
    monkeypatch.setenv("SLURM_CONF", conf)
    # A run that was never submitted, and a run whose directory is gone.
    with pytest.raises(SlurmError, match="not submitted to SLURM"):
        backend.collect(run_id)
    backend.submit(run_id, core)
    backend.wait(run_id, progress=False)
    shutil.rmtree(tmp_path / "rundir")
    with pytest.raises(SlurmError, match="does not exist here.*Nothing in the store"):
        backend.collect(run_id)
    assert store.run(run_id)["status"] == "running"
