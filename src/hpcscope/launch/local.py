"""Run jobs on this machine: mpirun (Open MPI / MPICH) or a plain process.

Records are ingested line by line while the program runs, so a crash, a killed rank, a
timeout or Ctrl-C loses at most the record in flight. After each MPI job the binding
reported from inside the processes is checked against the placement that was asked for
(launch/placement_check.py, the same check as SLURM collection; the sim and lab backends
pass the planned host of every rank instead or as well).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from hpcscope.launch import command, launcher, placement_check
from hpcscope.launch.base import CollectReport, JobState
from hpcscope.launch.ingest import IngestResult, ingest_lines, ingest_tool_output
from hpcscope.machine.mpi import launch_env
from hpcscope.plan.job import Job
from hpcscope.results.store import Store


def run_job(
    store: Store,
    run_id: int,
    job: Job,
    workdir: Path,
    topology=None,
    command_line: tuple[list[str], dict[str, str]] | None = None,
    expected: placement_check.Expected | None = None,
) -> JobState:
    """Runs one job to the end and stores everything it produced. KeyboardInterrupt is
    re-raised after the launch is marked interrupted. `command_line` (argv, env) replaces
    the mpirun line for backends with their own launcher (sim: smpirun, lab: mpirun in a
    namespace); bindings are checked only when `topology` is given, hosts (and lanes) when
    `expected` is (sim, lab: launch/placement_check.py). JobState.backend_id holds the
    launch id."""
    workdir.mkdir(parents=True, exist_ok=True)
    launch_id = store.add_launch(run_id, job.name, job.tags)
    if command_line is not None:
        argv, env = list(command_line[0]), {**job.env, **command_line[1]}
    else:
        argv = launcher.mpirun_argv(job, workdir) if job.mpi else list(job.program)
        env = dict(job.env)
        if job.mpi:
            env.update(launch_env(job.mpi))
    stderr_tail: list[str] = []
    result = IngestResult()
    state, returncode = "FAILED", None
    try:
        proc = command.start(argv, env)
    except FileNotFoundError as exc:
        store.finish_launch(launch_id, "FAILED", None, str(exc))
        return JobState(job, "FAILED", None, str(exc), str(launch_id))
    assert proc.stdout is not None  # command.start opens stdout as a pipe
    reader = threading.Thread(target=command.drain, args=(proc.stderr, stderr_tail), daemon=True)
    reader.start()
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        command.kill_group(proc)

    timer = threading.Timer(job.timeout_s, expire)
    timer.start()
    try:
        if job.output == "jsonl":
            ingest_lines(store, launch_id, proc.stdout, job.name, result)
        else:
            ingest_tool_output(
                store, launch_id, job.output, proc.stdout.read(), result, stderr_tail
            )
        returncode = proc.wait()
        state = "TIMEOUT" if expired.is_set() else ("COMPLETED" if returncode == 0 else "FAILED")
    except KeyboardInterrupt:
        command.kill_group(proc)
        state = "INTERRUPTED"
        raise
    finally:
        timer.cancel()
        reader.join(timeout=5)
        detail = _detail(job, argv, result, stderr_tail, state, returncode)
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
        store.finish_launch(launch_id, state, returncode, detail)
    return JobState(job, state, returncode, detail, str(launch_id))


def _detail(
    job: Job,
    argv: list[str],
    result: IngestResult,
    stderr_tail: list[str],
    state: str,
    returncode: int | None,
) -> str:
    lines = [f"command: {subprocess.list2cmdline(argv)}"]
    if state == "TIMEOUT":
        lines.append(
            f"killed after the time limit of {job.timeout_s:.0f} s; finished records are "
            "kept (--time D-HH:MM:SS gives every job longer)"
        )
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
            self.on_job(job, run_job(self.store, run_id, job, self.workdir, self.topology))

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
