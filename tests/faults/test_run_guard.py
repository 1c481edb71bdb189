"""Faults that used to escape the run's guard (issue 32, parts 2-4): each is made for real
and must end with one line naming it, a run marked failed with what it stored, and no
process of the run left behind.

- a full disk (a small tmpfs) under the store or the output folder;
- a store write-locked by another process (BEGIN EXCLUSIVE; HPCSCOPE_LOCK_TIMEOUT small);
- benchmark output that is not UTF-8, and OSU output with sizes twice, outside -m or
  missing (a fake --osu-dir of shell scripts);
- one rank stopped (SIGSTOP): the launch is hung once it wrote no record for
  HPCSCOPE_HANG_S, and its error record names the last test and size;
- hpcscope killed (SIGKILL) during a local run, a `node --net` run, a lab run and a build;
  `hpcscope build` interrupted (SIGINT);
- two `lab up` at once; Open MPI's session folders of killed lab jobs after `lab down`;
- a store in a read-only folder; a bug (the traceback goes to a log file, not the
  terminal).

Every process a test's hpcscope starts carries HPCSCOPE_TEST_TAG=<unique> in its
environment (Open MPI and the lab's agent pass it on to mpirun, orted and the ranks), so
"nothing of this run is left" is checked without touching other sessions' processes.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import requires_openmpi
from test_run_p2p import _alive, _p2p_pids

from hpcscope import build as build_mod
from hpcscope.build import BuildInterrupted, TreeGuard
from hpcscope.launch import lab_net
from hpcscope.launch.local import ProgressWatch
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job
from hpcscope.results.parsers import check_osu_sizes, parse_osu
from hpcscope.results.store import Store, StoreError

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="mounting a tmpfs needs root")


# -- helpers ----------------------------------------------------------------------------


@pytest.fixture
def tag(monkeypatch) -> str:
    """A unique tag in the environment of everything the test's hpcscope starts."""
    value = uuid.uuid4().hex
    monkeypatch.setenv("HPCSCOPE_TEST_TAG", value)
    return value


def tagged(tag: str) -> list[int]:
    """Live processes (not zombies) carrying the tag, other than this test process."""
    needle = f"HPCSCOPE_TEST_TAG={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
        except OSError:
            continue
        if _alive(int(entry)):
            found.append(int(entry))
    return found


def _commands(pids: list[int]) -> list[str]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                words = fh.read().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid}: {words}")
        except OSError:
            pass
    return out


def assert_none_left(tag: str, within: float = 8.0) -> None:
    deadline = time.time() + within
    while time.time() < deadline:
        if not tagged(tag):
            return
        time.sleep(0.2)
    left = tagged(tag)
    for pid in left:  # never leave them to the next test
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, "left running: " + "; ".join(_commands(left))


@pytest.fixture
def tmpfs(tmp_path):
    """mount(folder, size, ro=False): a tmpfs there, unmounted at teardown."""
    mounted: list[Path] = []

    def mount(folder: Path, size: str = "1m", ro: bool = False) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        opts = f"size={size}" + (",ro" if ro else "")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(folder)], capture_output=True
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path) -> None:
    """Fills the file system of `folder` to the last byte."""
    with open(folder / "filler", "ab", buffering=0) as fh:
        for chunk in (65536, 4096, 1):
            try:
                while True:
                    fh.write(b"\0" * chunk)
            except OSError:
                pass


def samples_in(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            return con.execute("SELECT count(*) FROM samples").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def wait_for_samples(db: Path, count: int, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if samples_in(db) >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"hpcscope ended early: {proc.communicate()[1]}")
        time.sleep(0.1)
    raise AssertionError("no samples in time")


def runs_of(cli) -> list[dict]:
    done = cli("list", "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout or "[]")


def one_line_no_traceback(err: str) -> None:
    assert "Traceback" not in err, err
    assert 'File "' not in err, err


P2P = ["run", "p2p", "--mpi", "openmpi", "--quick", "--precision", "0"]  # fixed counts: fast


# -- a full disk ---------------------------------------------------------------------------


@pytest.mark.mpi
@needs_root
@requires_openmpi
def test_full_disk_under_the_store_is_named_and_the_store_stays_readable(cli, tag, tmpfs):
    disk = tmpfs(cli.folder / "disk", "1m")
    cli.db = disk / "h.db"
    proc = cli.start(*P2P, "--placements", "core", "--tests", "latency,bw", "--repeat", "3")
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, err
    one_line_no_traceback(err)
    assert f"no space left on {disk}" in " ".join(err.split()), err
    assert_none_left(tag)  # mpirun and its ranks ended with the fault
    # what the run stored stays readable on the full disk: list, show, export, report
    fill(disk)
    (run,) = runs_of(cli)
    assert run["status"] == "failed"
    shown = cli("show", "last")
    assert shown.returncode == 0, shown.stderr
    assert "no space left" in shown.stdout and "not run" in shown.stdout
    exported = cli("export", "last", "--format", "json")
    assert exported.returncode == 0 and json.loads(exported.stdout)["samples"]
    report = cli("report", "last", "-o", str(cli.folder / "report"))
    assert report.returncode == 0, report.stderr
    assert not (disk / "h.db-reserve").exists()


@pytest.mark.mpi
@needs_root
@requires_openmpi
def test_full_output_folder_stops_the_run_naming_the_folder(cli, tag, tmpfs):
    out = tmpfs(cli.folder / "out", "256k")
    # every core job writes its rankfile into the folder. Four jobs: the folder fills after
    # the first, the second may have written its rankfile already, so the third fails at
    # the latest and the fourth is left not run (with mixed placements the failing job
    # could be the last one, leaving nothing "not run" to check).
    proc = cli.start(
        *P2P, "--placements", "core", "--tests", "latency", "--sizes", "0:1K",
        "--repeat", "4", "--out", str(out),
    )  # fmt: skip
    wait_for_samples(cli.db, 1, proc)
    fill(out)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # jobs ran: 1, not "nothing was run"
    one_line_no_traceback(err)
    assert f"no space left on {out}" in " ".join(err.split()), err
    (run,) = runs_of(cli)
    assert run["status"] == "failed"
    notes = json.loads(cli("export", "last", "--format", "json").stdout)["run"]["notes"]
    (skipped,) = [n for n in notes if n["kind"] == "skipped" and "not_run" in n["data"]]
    assert skipped["data"]["not_run"]  # the last repeat never started
    assert_none_left(tag)


# -- a locked store ----------------------------------------------------------------------


def _hold_lock(db: Path, seconds: float) -> subprocess.Popen:
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('held', flush=True)\n"
        f"time.sleep({seconds})\n"
        "c.execute('COMMIT')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.mpi
@requires_openmpi
def test_locked_store_says_who_holds_it_while_waiting_and_gives_up(cli, monkeypatch):
    Store(cli.db).close()  # an existing store
    monkeypatch.setenv("HPCSCOPE_LOCK_TIMEOUT", "2")
    holder = _hold_lock(cli.db, 60)
    try:
        start = time.time()
        done = cli(*P2P, "--placements", "core", "--tests", "latency", "--sizes", "0:8")
        took = time.time() - start
    finally:
        holder.kill()
        holder.wait()
    one_line_no_traceback(done.stderr)
    err = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr  # nothing was run
    assert f"is locked by another process (pid {holder.pid}" in err
    assert "waiting up to 2 s" in err
    assert f"stayed locked by another process (pid {holder.pid}" in err
    assert took < 60  # not BUSY_TIMEOUT_S of silence


@pytest.mark.mpi
@requires_openmpi
def test_store_locked_during_a_run_fails_the_run_and_marks_it(cli, tag, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_LOCK_TIMEOUT", "1")
    proc = cli.start(
        *P2P, "--placements", "core", "--tests", "latency,bw", "--sizes", "0:4M", "--repeat", "2"
    )
    wait_for_samples(cli.db, 2, proc)
    holder = _hold_lock(cli.db, 2.5)  # the run gives up after 1 s; then records its failure
    _, err = proc.communicate(timeout=120)
    holder.wait(timeout=30)
    assert proc.returncode == 1, err
    one_line_no_traceback(err)
    assert "stayed locked by another process" in " ".join(err.split()), err
    (run,) = runs_of(cli)
    assert run["status"] == "failed"
    assert_none_left(tag)


# -- benchmark output: not UTF-8, OSU sizes ----------------------------------------------

# A fake OSU program: OSU's text format from rank 0 only; the 1-byte probe
# (-m 1:1) always gets a good answer, the run itself what FAULT says.
FAKE_OSU = r"""#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0
range=1:1
while [ $# -gt 0 ]; do [ "$1" = -m ] && range=$2; shift; done
echo "# OSU MPI TITLE Test v7.4"
echo "# Size       COLUMN"
if [ "$range" = 1:1 ]; then echo "1                       1.00"; exit 0; fi
for size in 1 2 4 8 16 32 64 128 256 512 1024; do
  case FAULT in
    notutf8) [ $size = 64 ] && printf '64                      \377\376.00\n' && continue ;;
    twice) [ $size = 64 ] && echo "64                       2.00" ;;
    missing) [ $size = 128 ] && continue ;;
  esac
  echo "$size                       1.50"
done
"""


def fake_osu(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, title, column, fault in (
        ("osu_latency", "Latency", "Latency (us)", "notutf8"),
        ("osu_bw", "Bandwidth", "Bandwidth (MB/s)", "twice"),
        ("osu_bibw", "Bi-Directional Bandwidth", "Bandwidth (MB/s)", "missing"),
    ):
        text = FAKE_OSU.replace("TITLE", title).replace("COLUMN", column)
        (folder / name).write_text(text.replace("FAULT", fault))
        (folder / name).chmod(0o755)
    return folder


@pytest.mark.mpi
@requires_openmpi
def test_osu_output_not_utf8_or_with_bad_sizes_fails_that_job_only(cli, tmp_path):
    osu = fake_osu(tmp_path / "osu")
    done = cli(
        *P2P, "--placements", "core", "--tests", "latency,bw,bibw", "--sizes", "0:1K",
        "--repeat", "1", "--osu-dir", str(osu),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # some jobs failed, the run went on
    one_line_no_traceback(done.stderr)
    launches = {l["name"]: l for l in Store(cli.db).launches(1)}
    assert launches["openmpi/core/r1"]["status"] == "COMPLETED"  # ours still ran
    latency = launches["osu/latency/openmpi/core/r1"]
    assert latency["status"] == "FAILED"
    assert "osu_latency wrote bytes that are not UTF-8" in latency["stderr_tail"]
    bw = launches["osu/bw/openmpi/core/r1"]
    assert bw["status"] == "FAILED" and "64 more than once" in bw["stderr_tail"]
    bibw = launches["osu/bibw/openmpi/core/r1"]
    assert bibw["status"] == "COMPLETED"  # a missing size is a warning, not a failure
    shown = " ".join(cli("show", "last").stdout.split())
    assert "osu_bibw printed no row for size(s) 128" in shown
    report = cli("report", "last", "-o", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    html = " ".join(p.read_text() for p in (tmp_path / "report").rglob("*.html"))
    assert "printed no row for size(s) 128" in html


def test_osu_size_checks():
    text = "# OSU MPI Latency Test v7.4\n# Size Latency (us)\n" + "".join(
        f"{s} 1.0\n" for s in (1, 2, 4, 4, 16, 4096)
    )
    errors, warnings = check_osu_sizes(parse_osu(text), (1, 32), "osu_latency")
    assert any("size(s) 4 more than once" in e for e in errors)
    assert any("4096 outside the range asked for (-m 1:32)" in e for e in errors)
    assert any("no row for size(s) 8, 32" in w for w in warnings)
    # without a range: only the gaps between the first and the last size printed
    assert check_osu_sizes(parse_osu(text.replace("4 1.0\n4 1.0", "4 1.0\n8 1.0")), None) == (
        [],
        [
            "the OSU program printed no row for size(s) 32, 64, 128, 256, 512, 1024, 2048 of "
            "the range it was asked for"
        ],
    )


# -- hangs found by progress -------------------------------------------------------------


@pytest.mark.mpi
@requires_openmpi
def test_stopped_rank_is_found_hung_and_the_record_names_test_and_size(cli, tag, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_HANG_S", "6")
    proc = cli.start(
        *P2P, "--placements", "core", "--tests", "latency,bw", "--sizes", "0:64K", "--repeat", "2"
    )
    wait_for_samples(cli.db, 3, proc)
    ranks = _p2p_pids(proc.pid)
    assert ranks, "no p2p rank found"
    os.kill(max(ranks), signal.SIGSTOP)
    stopped = time.time()
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        for pid in ranks:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert time.time() - stopped < 60, "hang not found by progress"
    assert proc.returncode == 1, err
    one_line_no_traceback(err)
    first, second = Store(cli.db).launches(1)
    assert first["status"] == "TIMEOUT" and second["status"] == "COMPLETED"  # the next ran
    (message,) = first["errors"]
    assert message.startswith("hung: no record for")
    assert " after latency " in message or " after bw " in message, message
    assert "hung" in err
    assert_none_left(tag)


def test_hang_bound_is_derived_from_the_steps_measured(monkeypatch):
    monkeypatch.delenv("HPCSCOPE_HANG_S", raising=False)
    job = Job(suite="p2p", name="x", program=["p2p", "--max-size", str(4 << 20)])
    watch = ProgressWatch(job)
    assert watch.bound() is None  # nothing measured: the job's own time limit only
    clock = [100.0]
    monkeypatch.setattr("hpcscope.launch.local.time.monotonic", lambda: clock[0])
    watch.last = clock[0]
    for size, took in ((1, 0.01), (65536, 0.5)):
        clock[0] += took
        sample = {"type": "sample", "params": {"bytes": size, "test": "bw"}}
        watch.record(sample)
        watch.record({**sample, "type": "summary"})  # the same step: no new gap
    # the 4 MiB step is expected to take 64 x the 64 KiB one: 32 s; bound 20 x that
    assert watch.bound() == pytest.approx(20 * 0.5 * 64)
    assert watch.where() == "after bw 64 KiB (its last record)"
    other = ProgressWatch(Job(suite="coll", name="y", program=["coll"]))
    other.record({"type": "sample", "params": {"count": 8}})
    assert other.bound() == 600.0  # no largest step known: at least 10 minutes


def test_progress_line_gets_each_step_measured(tmp_path):
    """The progress bar's description follows the steps (LocalBackend.stepper): an
    on_job callback with a `step` attribute gets the test and size of each new step."""
    from hpcscope.launch.local import LocalBackend

    meta = {
        "type": "meta", "schema": "hpcscope.bench/1", "benchmark": "toy", "version": "1",
        "mpi": None, "ranks": [], "timer": {"resolution_ns": 1, "overhead_ns": 1},
        "options": {},
    }  # fmt: skip
    records = [meta] + [
        {"type": kind, "metric": "latency", "unit": "us", "params": {"bytes": n, "test": "latency"},
         "values": [1.0], "warmups": 0, "value": 1.0}
        for n in (8, 65536) for kind in ("sample", "summary")
    ]  # fmt: skip
    code = "import json\n" + "".join(f"print(json.dumps({r!r}))\n" for r in records)
    steps: list[tuple[str, str]] = []

    def on_job(job, state):
        pass

    on_job.step = lambda job, text: steps.append((job.name, text))  # type: ignore[attr-defined]
    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("toy")
    job = Job(suite="toy", name="toy", program=[sys.executable, "-c", code])
    LocalBackend(store, tmp_path / "launch", on_job=on_job).submit(run_id, [job])
    assert steps == [("toy", "latency 8 B"), ("toy", "latency 64 KiB")]


# -- hpcscope killed or interrupted --------------------------------------------------------


@pytest.mark.mpi
@requires_openmpi
@pytest.mark.parametrize(
    "args, running",
    [
        (
            [*P2P, "--placements", "core", "--tests", "bw", "--sizes", "0:4M", "--repeat", "3"],
            "mpi/p2p",
        ),
        (["run", "node", "--net", "--quick"], "node/net"),
    ],
    ids=["p2p", "node-net"],
)
def test_sigkill_of_hpcscope_leaves_no_process_of_the_run(cli, tag, args, running):
    """The benchmark must end with hpcscope at once (the watcher: TERM, KILL after 1 s),
    not when it next writes to a pipe nobody reads."""
    proc = cli.start(*args)
    deadline = time.time() + 120
    while time.time() < deadline and not any(running in c for c in _commands(tagged(tag))):
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    time.sleep(0.5)  # inside its measurement
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert_none_left(tag, within=3)


@pytest.mark.parametrize("ignores_term", [False, True])
def test_the_watcher_ends_the_group_when_its_pipe_closes(ignores_term):
    """TreeGuard's watcher, run by this machine's sh (dash on Debian), signals the whole
    process group once the pipe closes without "done": TERM, and KILL a second later for
    a process that ignores TERM. A process that writes nothing (a long measurement) is
    ended too, not only one that would die on its next write."""
    trap = "trap '' TERM; " if ignores_term else ""
    group = subprocess.Popen(
        ["sh", "-c", f"{trap}sleep 60 & sleep 60; wait"], start_new_session=True
    )
    guard = TreeGuard(group.pid)
    assert guard._proc is not None and guard._proc.stdin is not None
    guard._proc.stdin.close()  # as when hpcscope dies: end of file, no "done"
    try:
        assert group.wait(timeout=5) in (-signal.SIGTERM, -signal.SIGKILL)
        deadline = time.time() + 5
        while time.time() < deadline and _group_alive(group.pid):
            time.sleep(0.05)
        assert not _group_alive(group.pid), "a process of the group outlived the watcher"
    finally:
        if _group_alive(group.pid):
            os.killpg(group.pid, signal.SIGKILL)
        guard._proc.wait(timeout=5)


def _group_alive(pgid: int) -> bool:
    """Any live (not zombie) process in process group pgid."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.mark.mpi
@requires_openmpi
def test_killed_or_interrupted_build_takes_its_compilers_along(cli, tag, monkeypatch, tmp_path):
    for sig in (signal.SIGKILL, signal.SIGINT):
        monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path / f"cache-{sig.name}"))
        proc = cli.start("build", "--mpi", "openmpi")
        deadline = time.time() + 60
        while time.time() < deadline and not any(
            "cmake" in c for c in _commands([p for p in tagged(tag) if p != proc.pid])
        ):
            time.sleep(0.05)
        assert proc.poll() is None, "the build ended before it could be interrupted"
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        if sig == signal.SIGINT:
            assert proc.returncode == 1, err
            one_line_no_traceback(err)
            assert "the build was interrupted" in err
            assert "nothing was being measured" not in err
        assert_none_left(tag)


def test_ctrl_c_between_build_steps_is_named_as_the_builds(monkeypatch, tmp_path):
    """Ctrl-C that lands after cmake's configure step ended and before its build step
    started (CI hit this window once) still names the build, not "nothing measured"."""
    steps: list[list[str]] = []

    def step(argv, cwd, log):
        steps.append(argv)
        if len(steps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    monkeypatch.setattr(build_mod, "_run", step)
    mpi = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")
    with pytest.raises(BuildInterrupted, match="the build was interrupted"):
        build_mod.build(mpi)
    assert [argv[1] for argv in steps] == ["-S", "--build"]


# -- the store's folder, and bugs ------------------------------------------------------------


@pytest.mark.mpi
@needs_root
@requires_openmpi
def test_store_in_a_read_only_folder_is_named(cli, tmpfs):
    ro = tmpfs(cli.folder / "ro", "64k", ro=True)
    cli.db = ro / "h.db"
    done = cli(*P2P, "--placements", "core", "--tests", "latency", "--sizes", "0:8")
    assert done.returncode == 2, done.stderr
    one_line_no_traceback(done.stderr)
    err = " ".join(done.stderr.split())
    assert f"the folder {ro} is on a read-only file system" in err
    assert "not a usable hpcscope store" not in err
    with pytest.raises(StoreError, match="read-only file system"):
        Store(ro / "other.db")


def test_a_bug_during_a_run_fails_it_with_one_line_and_a_log(tmp_path, monkeypatch):
    """A bug in the middle of a job: its process is ended, the run is marked failed, the
    job after it is listed as not run, and the traceback is in a log file."""
    from rich.console import Console

    from hpcscope import runner
    from hpcscope.launch import local
    from hpcscope.suites.base import SuitePlan

    real = local.ingest_lines
    pids: list[int] = []

    def buggy(store, launch_id, lines, source, result=None, **kw):
        if source == "sleeper":
            raise RuntimeError("boom")
        return real(store, launch_id, lines, source, result, **kw)

    monkeypatch.setattr(local, "ingest_lines", buggy)
    monkeypatch.setattr(local.command, "start", _recording(local.command.start, pids))
    meta = {
        "type": "meta", "schema": "hpcscope.bench/1", "benchmark": "toy", "version": "1",
        "mpi": None, "ranks": [], "timer": {"resolution_ns": 1, "overhead_ns": 1},
        "options": {},
    }  # fmt: skip
    emit = f"import json; print(json.dumps({meta!r}))"
    jobs = [
        Job(suite="toy", name="ok", program=[sys.executable, "-c", emit]),
        Job(
            suite="toy",
            name="sleeper",
            program=[sys.executable, "-c", "import time; time.sleep(60)"],
        ),
        Job(suite="toy", name="never", program=[sys.executable, "-c", emit]),
    ]
    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("p2p")
    outcome = runner.run_jobs(
        store, run_id, SuitePlan(jobs=jobs), "local", {}, None, tmp_path / "out",
        Console(file=open(tmp_path / "console", "w")),
    )  # fmt: skip
    assert outcome.exit_code == 1 and outcome.status == "failed"
    (line,) = outcome.messages
    assert "unexpected error (RuntimeError: boom)" in line and "1 not run" in line
    log = Path(line.split("traceback in ")[1].split(".log")[0] + ".log")
    assert log.parent == tmp_path / "out" and "Traceback" in log.read_text()
    run = store.run(run_id)
    assert run["status"] == "failed"
    assert [n["data"].get("not_run") for n in run["notes"] if n["kind"] == "skipped"] == [["never"]]
    assert [l["status"] for l in store.launches(run_id)] == ["COMPLETED", "FAILED"]
    assert not _alive(pids[1])  # the sleeper was ended with the fault


def _recording(start, pids):
    def wrapped(*args, **kwargs):
        proc = start(*args, **kwargs)
        pids.append(proc.pid)
        return proc

    return wrapped


def test_a_bug_outside_a_run_prints_one_line_and_logs_the_traceback(tmp_path, monkeypatch, capsys):
    from hpcscope.cli.common import handle_errors

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def buggy() -> None:
        raise AttributeError("'NoneType' object has no attribute 'x'")

    with pytest.raises(SystemExit) as exit_info:
        handle_errors(buggy)()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "unexpected error" in err and "Traceback" not in err
    (log,) = (tmp_path / "cache" / "hpcscope" / "errors").iterdir()
    assert "AttributeError" in log.read_text() and "Traceback" in log.read_text()
    assert str(log) in "".join(err.split())  # the path, however the terminal wrapped it


# -- the lab ------------------------------------------------------------------------------


def _lab_why_not() -> str | None:
    if not ROOT:
        return "the lab needs root"
    try:
        if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
            return "no network namespaces here"
    except OSError:
        return "iproute2 is not installed"
    if lab_net.current() is not None or lab_net.ours():
        return "a lab is up already; these tests would replace it"
    return None


needs_lab = pytest.mark.skipif(_lab_why_not() is not None, reason=str(_lab_why_not()))


@pytest.fixture
def lab():
    """A 2-node, 1-lane lab for one test; removed after it (also when the test fails)."""
    state, built = lab_net.up(lab_net.LabSpec(nodes=2, lanes=1, rate="200mbit"))
    assert built
    try:
        yield state
    finally:
        lab_net.down()


@pytest.mark.lab
@needs_lab
def test_two_lab_ups_at_once_both_succeed_one_builds(cli):
    try:
        ups = [cli.start("lab", "up", "--nodes", "2", "--lanes", "1") for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in ups]
        assert [p.returncode for p in ups] == [0, 0], outs
        said = " ".join(err for _, err in outs)
        assert said.count("lab built") == 1 and said.count("lab already up") == 1, said
        assert set(lab_net.ours()) == {"hpcs-fabric", "hpcs-n1", "hpcs-n2"}
    finally:
        down = cli("lab", "down")
        assert down.returncode == 0, down.stderr


@pytest.mark.mpi
@pytest.mark.lab
@requires_openmpi
@needs_lab
def test_sigkill_during_a_lab_run_leaves_nothing_in_the_nodes(cli, tag, lab):
    proc = cli.start(
        "run", "p2p", "--on", "lab", "--mpi", "openmpi", "--placements", "node",
        "--tests", "latency,bw", "--sizes", "0:64K", "--quick", "--repeat", "3",
    )  # fmt: skip
    wait_for_samples(cli.db, 2, proc, timeout=120)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    nodes = lab.spec.hosts
    deadline = time.time() + 5
    while time.time() < deadline and any(_netns_pids(ns) for ns in nodes):
        time.sleep(0.2)
    assert {ns: _netns_pids(ns) for ns in nodes} == {ns: [] for ns in nodes}
    assert_none_left(tag, within=2)
    # `lab down` removes the session folders killed jobs leave (one planted as an orted
    # killed mid-run leaves it, in case this run's own were cleaned by Open MPI)
    stale = Path("/tmp") / f"ompi.{nodes[-1]}.{os.getuid()}"
    stale.mkdir(exist_ok=True)
    (stale / "jobfam").mkdir(exist_ok=True)
    down = cli("lab", "down")
    assert down.returncode == 0, down.stderr
    assert lab_net.session_dirs() == []
    assert not stale.exists()


def _netns_pids(ns: str) -> list[str]:
    done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return done.stdout.split()


def test_lab_lock_serialises_up_and_down(tmp_path, monkeypatch):
    """Without root: the lock itself. A second holder waits, told who holds it."""
    monkeypatch.setenv("HPCSCOPE_LAB_DIR", str(tmp_path / "lab"))
    said: list[str] = []
    order: list[str] = []
    with lab_net.locked():
        order.append("first")

        def second() -> None:
            with lab_net.locked(said.append):
                order.append("second")

        other = threading.Thread(target=second)
        other.start()
        time.sleep(0.5)
        assert order == ["first"]  # waiting
    other.join(timeout=10)
    assert order == ["first", "second"]
    assert said and f"pid {os.getpid()}" in said[0]
    link = tmp_path / "lab" / "lock"
    link.unlink()
    link.symlink_to(tmp_path / "victim")
    with pytest.raises(OSError):
        with lab_net.locked():
            pass
    assert not (tmp_path / "victim").exists()
