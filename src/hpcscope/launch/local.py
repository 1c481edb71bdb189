"""Run jobs on this machine: mpirun (Open MPI / MPICH) or a plain process.

Records are ingested line by line while the program runs, so a crash, a killed rank, a
timeout or Ctrl-C loses at most the record in flight. After each MPI job the binding
reported from inside the processes is checked against the placement that was asked for
(launch/placement_check.py, the same check as SLURM collection; the sim and lab backends
pass the planned host of every rank instead or as well).

Faults (issue 32):
- the job's process tree never outlives hpcscope: a watcher (build.TreeGuard) ends its
  process group, and the lab's namespaces, if hpcscope dies, SIGKILL included; any
  exception while the job runs (a full disk, a locked store, a bug) kills the tree, marks
  the launch FAILED with what happened, and is raised on to the run's guard (runner.py);
- output is read as bytes: a line that is not UTF-8 fails this job, naming the program,
  and the other jobs still run; stderr is kept with undecodable bytes replaced;
- a launch is hung when its program has written no record for longer than a bound
  derived from what it measures (ProgressWatch): it is killed, marked TIMEOUT, and its
  error record says after which step (test and size) it stopped. The job's own time
  limit (--time) still applies on top.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from hpcscope import safe_write
from hpcscope.build import TreeGuard
from hpcscope.launch import command, launcher, placement_check
from hpcscope.launch import epoch as launch_epoch
from hpcscope.launch.base import CollectReport, JobState, fault_text, kill_namespaces
from hpcscope.launch.ingest import IngestResult, ingest_lines, ingest_tool_output, step_text
from hpcscope.machine.mpi import SIMULATED, launch_env
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

# Hang bounds: a launch is hung after no record for max(HANG_MIN_S, HANG_FACTOR x the
# expected time of a step). A program that states its largest step (p2p: --max-size)
# gets the expected time of that step, projected from the steps measured so far (the
# smallest projection of gap x largest / size: the step whose size is closest to it);
# others GENERIC_HANG_S at least. Before the first measured step there is nothing to
# derive a bound from: the job's time limit alone. $HPCSCOPE_HANG_S replaces the bound
# (tests, or a user who knows their steps).
HANG_MIN_S = 60.0
HANG_FACTOR = 20.0
GENERIC_HANG_S = 600.0
WATCH_PERIOD_S = 0.25


def hang_override() -> float | None:
    """$HPCSCOPE_HANG_S: a fixed hang bound in seconds; None when unset or not a number."""
    try:
        value = float(os.environ.get("HPCSCOPE_HANG_S") or "nan")
    except ValueError:
        return None
    return value if value > 0 else None


def _largest_step(job: Job) -> int | None:
    """The size of the largest step a program will measure, when its command line says
    (bench/mpi/p2p: --max-size BYTES)."""
    argv = job.program
    for i, word in enumerate(argv[:-1]):
        if word == "--max-size":
            try:
                return max(int(argv[i + 1]), 1)
            except ValueError:
                return None
    return None


class ProgressWatch:
    """Progress of one launch from its records: when each step ended, how long it took,
    what it was. `bound()` is how long the launch may stay silent before it is hung."""

    def __init__(self, job: Job, argv: Sequence[str] = ()) -> None:
        self.largest = _largest_step(job)
        self.override = hang_override()
        # A simulation (smpirun, the sim backend) spends wall time on the simulated ranks,
        # not on what a step measures: its steps give no bound, only its time limit does.
        self.simulated = (job.mpi is not None and job.mpi.flavor == SIMULATED) or any(
            Path(word).name.startswith("smpirun") for word in argv
        )
        self.last = time.monotonic()
        self.longest = 0.0  # longest step so far (s)
        self.projected: float | None = None  # expected time of the largest step (s)
        self.key: tuple | None = None  # the step of the last record
        self.step = ""  # its words (ingest.step_text)
        self.measured = False
        self._lock = threading.Lock()

    def record(self, record: dict) -> None:
        now = time.monotonic()
        with self._lock:
            if record.get("type") not in ("sample", "summary"):
                self.last = now
                return
            found = record.get("params")
            params: dict = found if isinstance(found, dict) else {}
            key = tuple(sorted((k, str(v)) for k, v in params.items()))
            if key != self.key:  # a new step ended (its sample; its summary follows)
                gap = now - self.last
                self.longest = max(self.longest, gap)
                size = params.get("bytes")
                if self.largest is not None and isinstance(size, int) and size >= 0:
                    guess = gap * self.largest / max(size, 1)
                    self.projected = guess if self.projected is None else min(self.projected, guess)
                self.key = key
                self.step = step_text(record) or self.step
            self.measured = True
            self.last = now

    def bound(self) -> float | None:
        """Seconds without a record after which the launch is hung; None: no bound yet."""
        if self.override is not None:
            return self.override
        if not self.measured or self.simulated:
            return None
        if self.largest is not None:
            if self.projected is None:
                return None
            return max(HANG_MIN_S, HANG_FACTOR * max(self.longest, self.projected))
        return max(GENERIC_HANG_S, HANG_FACTOR * self.longest)

    def silence(self) -> float:
        with self._lock:
            return time.monotonic() - self.last

    def where(self) -> str:
        return f"after {self.step} (its last record)" if self.step else "before its first step"


def _drain(stream: IO[bytes], sink: list[str], limit: int = 200) -> None:
    """Reads stderr as bytes to the end, keeping the last `limit` lines, bytes that are
    not UTF-8 replaced (a tail to read, not records)."""
    for raw in stream:
        sink.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
        if len(sink) > limit:
            del sink[0]


def _finish_quietly(
    store: Store, launch_id: int, state: str, returncode: int | None, detail: str
) -> None:
    """finish_launch while another fault is being raised: a second failure (the same
    full disk) must not replace the first."""
    try:
        store.finish_launch(launch_id, state, returncode, detail)
    except Exception:
        pass


def run_job(
    store: Store,
    run_id: int,
    job: Job,
    workdir: Path,
    topology=None,
    command_line: tuple[list[str], dict[str, str]] | None = None,
    expected: placement_check.Expected | None = None,
    *,
    namespaces: Sequence[str] = (),
    on_step: Callable[[str], None] | None = None,
) -> JobState:
    """Runs one job to the end and stores everything it produced. KeyboardInterrupt is
    re-raised after the launch is marked interrupted; any other exception after its
    process tree is ended and the launch marked FAILED. `command_line` (argv, env)
    replaces the mpirun line for backends with their own launcher (sim: smpirun, lab:
    mpirun in a namespace); bindings are checked only when `topology` is given, hosts
    (and lanes) when `expected` is (sim, lab: launch/placement_check.py). `namespaces`:
    network namespaces whose processes belong to the job (the lab's nodes), ended with
    it. `on_step`: called with the words of each step measured (the progress line).
    JobState.backend_id holds the launch id."""
    launch_id = store.add_launch(run_id, job.name, job.tags)
    try:
        # <run folder>/launch: this user's own folder, never a planted link
        safe_write.ensure_dir(workdir.parent, workdir.name)
        if command_line is not None:
            argv, env = list(command_line[0]), {**job.env, **command_line[1]}
        else:
            argv = launcher.mpirun_argv(job, workdir) if job.mpi else list(job.program)
            env = dict(job.env)
            if job.mpi:
                env.update(launch_env(job.mpi))
    except BaseException as exc:  # e.g. no space left for its rankfile
        why = fault_text(exc, [workdir]) or f"{type(exc).__name__}: {exc}"
        _finish_quietly(store, launch_id, "FAILED", None, f"not started: {why}")
        raise
    program = Path(job.program[0]).name if job.program else job.name
    stderr_tail: list[str] = []
    result = IngestResult()
    state, returncode = "FAILED", None
    ended = 0.0  # time.time() when the process had exited
    env = launch_epoch.stamp(env)  # the startup benchmark's launch time, just before it
    try:
        proc = command.start(argv, env)
    except FileNotFoundError as exc:
        store.finish_launch(launch_id, "FAILED", None, str(exc))
        return JobState(job, "FAILED", None, str(exc), str(launch_id))
    guard = TreeGuard(proc.pid, namespaces)  # if hpcscope dies, the job dies with it
    assert proc.stdout is not None and proc.stderr is not None  # pipes (command.start)
    # command.start opens the pipes as text; read the bytes under them (never both)
    stdout: IO[bytes] = getattr(proc.stdout, "buffer", proc.stdout)
    stderr: IO[bytes] = getattr(proc.stderr, "buffer", proc.stderr)
    reader = threading.Thread(target=_drain, args=(stderr, stderr_tail), daemon=True)
    reader.start()
    watch = ProgressWatch(job, argv)
    expired, hung = threading.Event(), threading.Event()
    stop = threading.Event()
    started = time.monotonic()
    hung_text: list[str] = []

    def end_tree() -> None:
        command.kill_group(proc)
        kill_namespaces(namespaces)

    def watcher() -> None:
        """The job's time limit and its hang bound, checked a few times a second."""
        while not stop.wait(WATCH_PERIOD_S):
            if time.monotonic() - started > job.timeout_s:
                expired.set()
            else:
                bound, silence = watch.bound(), watch.silence()
                if bound is None or silence <= bound:
                    continue
                hung_text.append(
                    f"hung: no record for {silence:.0f} s (bound {bound:.0f} s) "
                    f"{watch.where()}; the launch was killed, finished records are kept"
                )
                hung.set()
            end_tree()
            return

    def stepped(record: dict) -> None:
        before = watch.step
        watch.record(record)
        if on_step is not None and watch.step != before:
            on_step(watch.step)

    timer = threading.Thread(target=watcher, daemon=True)
    timer.start()
    fault: BaseException | None = None
    try:
        if job.output == "jsonl":
            ingest_lines(
                store,
                launch_id,
                stdout,
                job.name,
                result,
                program=program,
                on_record=stepped,
            )
        else:
            ingest_tool_output(
                store,
                launch_id,
                job.output,
                stdout,  # read there up to MAX_TOOL_OUTPUT_BYTES, the rest drained
                result,
                stderr_tail,
                program=program,
                argv=job.program,
                suite=job.suite,
            )
        returncode = proc.wait()
        ended = time.time()
        if hung.is_set() or expired.is_set():
            state = "TIMEOUT"
        else:
            state = "COMPLETED" if returncode == 0 else "FAILED"
    except BaseException as exc:
        fault = exc
        stop.set()
        end_tree()  # the job's whole tree ends with the fault
        state = "INTERRUPTED" if isinstance(exc, KeyboardInterrupt) else "FAILED"
        raise
    finally:
        stop.set()
        timer.join(timeout=15)
        reader.join(timeout=5)
        guard.release()
        detail = _detail(job, argv, result, stderr_tail, state, returncode, hung_text)
        if fault is not None:  # being raised: record what can be, hide nothing
            if not isinstance(fault, KeyboardInterrupt):
                why = fault_text(fault, [workdir]) or f"{type(fault).__name__}: {fault}"
                detail = f"stopped by a fault: {why}\n{detail}"
            _finish_quietly(store, launch_id, state, returncode, detail)
    try:
        if hung_text:  # the launch's error record says where it stopped
            store.add_record(launch_id, {"type": "error", "message": hung_text[0]})
        wall = launch_epoch.harness_sample(env, ended, job.ranks) if state == "COMPLETED" else None
        if wall is not None:  # the harness's own clock around mpirun (startup suite)
            store.add_record(launch_id, wall)
        if state == "COMPLETED" and (topology is not None or expected is not None):
            verdict = placement_check.check(
                job, result.meta, topology, expected=expected, decomposition=result.decomposition
            )
            if verdict is not None:
                placement_check.record(store, run_id, launch_id, job.name, verdict)
                if not verdict.ok:
                    state, detail = "FAILED", verdict.reason + "\n" + detail
        if state == "COMPLETED" and (result.errors or result.problems):
            state = "FAILED"
        for warning in result.warnings:  # OSU sizes: shown by show and the report
            store.add_note(
                run_id,
                "warning",
                f"{job.name}: {warning}",
                {"launch": job.name, "launch_id": launch_id},
            )
        store.finish_launch(launch_id, state, returncode, detail)
    except BaseException:
        _finish_quietly(store, launch_id, "FAILED", returncode, detail)
        raise
    return JobState(job, state, returncode, detail, str(launch_id))


def _detail(
    job: Job,
    argv: list[str],
    result: IngestResult,
    stderr_tail: list[str],
    state: str,
    returncode: int | None,
    hung: Sequence[str] = (),
) -> str:
    lines = [f"command: {subprocess.list2cmdline(argv)}"]
    if hung:
        lines.insert(0, hung[0])
    elif state == "TIMEOUT":
        lines.append(
            f"killed after the time limit of {job.timeout_s:.0f} s; finished records are "
            "kept (--time D-HH:MM:SS gives every job longer)"
        )
    lines += [f"warning: {w}" for w in result.warnings]
    lines += [f"benchmark error: {e}" for e in result.errors]
    lines += [f"malformed output: {p}" for p in result.problems[:5]]
    if state != "COMPLETED" and result.noise:
        lines += ["stdout (not records):"] + result.noise[-10:]
    if stderr_tail:
        lines += ["stderr:"] + stderr_tail[-30:]
    return "\n".join(lines)


class LocalBackend:
    """The Backend protocol (launch/base.py) on this machine. Jobs run one at a time, in
    plan order, while `submit` waits: measurements must not share the machine with each
    other. poll/collect then read the outcome from the store, like the SLURM backend."""

    name = "local"
    blocking = True

    def __init__(
        self,
        store: Store,
        workdir: Path,
        topology=None,
        on_job: Callable[[Job, JobState | None], None] | None = None,
    ) -> None:
        self.store = store
        self.workdir = workdir
        self.topology = topology
        self.on_job = on_job or (lambda job, state: None)  # progress: before and after a job

    def submit(self, run_id: int, jobs: list[Job]) -> None:
        for job in jobs:
            self.on_job(job, None)
            state = run_job(
                self.store,
                run_id,
                job,
                self.workdir,
                self.topology,
                on_step=self.stepper(job),
            )
            self.on_job(job, state)

    def stepper(self, job: Job) -> Callable[[str], None] | None:
        """Progress within a job, for an on_job callback that has a `step(job, text)`
        attribute (the runner's progress bar): called with the step measured last,
        e.g. 'latency 64 KiB'. on_job itself is still called only before and after."""
        step = getattr(self.on_job, "step", None)
        if not callable(step):
            return None
        return lambda text: step(job, text)

    def poll(self, run_id: int) -> list[JobState]:
        """States of the run's launches (JobState.job is None: the plan is not stored)."""
        return [
            JobState(None, l["status"], l.get("returncode"), l.get("stderr_tail") or "")
            for l in self.store.launches(run_id)
        ]

    def cancel(self, run_id: int) -> None:
        """Nothing is queued locally: a running job is stopped by Ctrl-C (KeyboardInterrupt
        kills its process group and marks the run interrupted)."""

    def wait(self, run_id: int, progress: bool = True, console=None) -> list[JobState]:
        return self.poll(run_id)  # submit returned after the last job

    def collect(self, run_id: int) -> CollectReport:
        """Records were stored as they arrived; this only reports the launches' states."""
        return CollectReport(run_id, self.poll(run_id))

    def status_text(self, run_id: int) -> str:
        states = self.poll(run_id)
        done = sum(1 for s in states if s.state == "COMPLETED")
        return f"run {run_id}: {done} of {len(states)} launch(es) completed on this machine"
