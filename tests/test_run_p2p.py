"""End to end: `hpcscope run p2p` with real Open MPI and MPICH, bad input, faults."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time

import pytest
from conftest import requires_mpich, requires_openmpi

pytestmark = pytest.mark.mpi


def _samples(cli, run: str = "last") -> list[dict]:
    done = cli("export", run, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["samples"]


@requires_openmpi
@requires_mpich
def test_quick_p2p_both_libraries_records_binding_and_sane_values(cli):
    done = cli(
        "run",
        "p2p",
        "--mpi",
        "openmpi,mpich",
        "--quick",
        "--repeat",
        "2",
        "--sizes",
        "0:64K",
        "--validate",
    )
    assert done.returncode == 0, done.stderr
    assert "skipped: placement socket" in done.stderr or "placement socket" in done.stderr
    runs = json.loads(cli("list", "--format", "json").stdout)
    assert runs[-1]["status"] == "ok"
    samples = _samples(cli)
    launches = {s["launch_id"] for s in samples}
    assert len(launches) == 8  # 2 libraries x 2 placements (default, core) x 2 repeats
    assert {s["tags"]["mpi"] for s in samples} == {"openmpi", "mpich"}
    latency = [s for s in samples if s["metric"] == "latency"]
    bandwidth = [s for s in samples if s["metric"] == "bandwidth"]
    assert {s["params"]["bytes"] for s in latency} >= {0, 1, 1024, 65536}
    # microseconds; pinned ranks only: unpinned ones (placement default, MPICH binds
    # nothing) may share one CPU on this busy 2-core machine and wait for each other
    pinned = [s for s in latency if s["tags"]["placement"] == "core"]
    assert pinned and all(0 < v < 10_000 for s in pinned for v in s["values"])
    assert all(v > 0 for s in latency for v in s["values"])
    # bandwidth below what this memory system can move (far above any real MPI copy rate)
    assert all(0 < v < 200_000 for s in bandwidth for v in s["values"])  # MB/s
    # the binding each rank reported from inside is stored and matches the placement
    db = sqlite3.connect(cli.db)
    rows = [
        (json.loads(t), json.loads(m)) for t, m in db.execute("SELECT tags, meta FROM launches")
    ]
    metas = [m for _, m in rows]
    for tags, meta in rows:
        if tags["placement"] == "core":
            assert [r["cpus"] for r in meta["ranks"]] == [[0], [1]]
    # placement default: binding left to mpirun, reported as what it amounts to
    notes = json.loads(cli("export", "last", "--format", "json").stdout)["run"]["notes"]
    verdicts = {n["data"]["launch"]: n["data"] for n in notes if n["kind"] == "placement"}
    assert verdicts["openmpi/core/r1"]["verdict"] == "verified"
    default = verdicts["openmpi/default/r1"]
    assert default["verdict"] == "reported" and default["observed"] in ("core", "unbound")
    assert {m["mpi"]["library"] for m in metas} == {"Open MPI", "MPICH"}
    out = cli.folder / "hpcscope-out"
    assert list(out.glob("run-*/p2p_latency.png")) and list(out.glob("run-*/p2p_bandwidth.svg"))


@requires_openmpi
def test_export_formats(cli):
    assert (
        cli(
            "run",
            "p2p",
            "--mpi",
            "openmpi",
            "--quick",
            "--repeat",
            "1",
            "--sizes",
            "0:1K",
            "--tests",
            "latency,bw",
        ).returncode
        == 0
    )
    osu = cli("export", "last", "--format", "osu").stdout
    assert "# OSU MPI Latency Test" in osu
    rows = [l.split() for l in osu.splitlines() if l and not l.startswith("#")]
    assert ["0", "1"] == [r[0] for r in rows[:2]] and float(rows[0][1]) > 0
    csv = cli("export", "last", "--format", "csv").stdout
    assert csv.splitlines()[0].count(",") >= 5
    assert "|" in cli("export", "last", "--format", "markdown").stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["--placements", "diagonal"], ["diagonal", "smt"]),
        (["--sizes", "4M:0"], ["MIN", "MAX"]),
        (["--sizes", "lots"], ["lots", "size"]),
        (["--mpi", "intelmpi"], ["intelmpi", "openmpi"]),
        (["--placements", "socket"], ["nothing to run", "1 package"]),
        (["--cpus", "0,99"], ["99"]),
        (["--tests", "latency,psychic"], ["psychic", "latency"]),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(cli, args, words):
    done = cli("run", "p2p", "--mpi", "openmpi", *args)
    assert done.returncode == 2, done.stderr
    for word in words:
        assert word in done.stderr
    assert "Traceback" not in done.stderr
    runs = cli("list", "--format", "json")
    assert json.loads(runs.stdout or "[]") == []  # nothing was recorded


def _wait_for_samples(cli, count: int, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cli.db.exists():
            try:
                n = sqlite3.connect(cli.db).execute("SELECT count(*) FROM samples").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            if n >= count:
                return
        time.sleep(0.2)
    raise AssertionError("the benchmark produced no samples in time")


def _p2p_pids(root: int) -> list[int]:
    """p2p ranks started under `root` (this test's hpcscope), never other sessions' ranks."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                commands[int(entry)] = fh.read().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if "mpi/p2p --tests" in commands.get(child, ""):
                found.append(child)
    return found


@requires_openmpi
def test_killed_rank_marks_run_failed_and_keeps_finished_results(cli):
    proc = cli.start(
        "run", "p2p", "--mpi", "openmpi", "--repeat", "1", "--sizes", "0:4M", "--precision", "0"
    )  # fmt: skip
    _wait_for_samples(cli, 5)
    pids = _p2p_pids(proc.pid)
    assert pids, "no p2p rank found to kill"
    os.kill(max(pids), signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    run = json.loads(cli("list", "--format", "json").stdout)[-1]
    assert run["status"] == "failed"
    assert len(_samples(cli)) >= 5  # what finished before the kill is kept
    shown = cli("show", "last").stdout
    assert "FAILED" in shown


@requires_openmpi
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_marks_run_interrupted_and_keeps_finished_results(cli, signum):
    proc = cli.start(
        "run", "p2p", "--mpi", "openmpi", "--repeat", "3", "--sizes", "0:4M", "--precision", "0"
    )  # fmt: skip
    _wait_for_samples(cli, 5)
    ranks = _p2p_pids(proc.pid)
    assert ranks, "no p2p rank running"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "interrupted" in err
    run = json.loads(cli("list", "--format", "json").stdout)[-1]
    assert run["status"] == "interrupted"
    assert len(_samples(cli)) >= 5
    time.sleep(0.5)
    assert [pid for pid in ranks if _alive(pid)] == []  # no orphaned ranks left behind


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
