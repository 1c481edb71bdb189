"""The SLURM backend: submit job arrays with sbatch, follow them, collect what they wrote.

Stages (docs/architecture.md, launch): `submit` writes one batch script per group of repeats
(launch/slurm_script.py) into the run directory and runs sbatch; `poll` asks squeue while
tasks are queued or running, then scontrol (while SLURM keeps the finished job), then
sacct, or `sacct -c` (the job-completion log) where accounting is off; `collect` ingests
the files each finished array task wrote, once; `cancel` runs scancel.

Everything needed later is in the store (run backend data, key "slurm") and in the run
directory, so status and collect work from a new shell, days later. Every SLURM command
goes through `run_command`, the one place that turns missing commands, an unreachable
controller and hung commands into messages that say what to do.

Backend data of a run (store.get_run_backend_data(run)["slurm"]):
    rundir, slurm_conf, options, cancel_requested,
    groups: [{name, script, job_id, shape: {...}, tasks: [{name, tags, launch_id}]}],
    ingested: {"<job_id>_<index>": final state}     # collect ingests each key once
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.launch import every_node, placement_check
from hpcscope.launch import slurm_parse as sp
from hpcscope.launch.base import BackendError, CollectReport, JobState, progress_bar
from hpcscope.launch.ingest import IngestResult, ingest_lines, ingest_tool_output
from hpcscope.launch.slurm_script import JobGroup, ScriptError, SlurmOptions, group_jobs, render
from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.topology import Topology, TopologyError
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

COMMAND_TIMEOUT_S = 60.0
_UNREACHABLE = (
    "unable to contact slurm controller",
    "unable to establish control machine",
    "socket timed out",
    "zero bytes were transmitted",
    "connection refused",
    "communication connection failure",
)
_NO_CONFIG = (
    "unable to process configuration file",
    "cannot stat file",
    "could not establish a configuration source",
)
_INVALID_ID = "invalid job id specified"


class SlurmError(BackendError):
    """A SLURM problem; the message names it and what to change. Nothing stored is lost."""


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def run_command(
    argv: list[str],
    timeout: float = COMMAND_TIMEOUT_S,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one SLURM command (the only place this module starts a process).

    Returns the finished process whatever its exit status (callers decide what a failure
    means), except for problems no caller can handle: the command is missing, the
    configuration is unreadable, the controller is unreachable, or it hangs.
    """
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise SlurmError(
            f"SLURM commands not found on PATH ({argv[0]}): install "
            "slurm-client or load the slurm module (`module load slurm`)"
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmError(
            f"`{' '.join(argv[:2])}` did not answer within {timeout:.0f} s: "
            "the SLURM controller is overloaded or unreachable; check "
            "`scontrol ping` and try again"
        ) from None
    text = proc.stderr.lower()
    conf = full_env.get("SLURM_CONF", "the default slurm.conf")
    if proc.returncode != 0 and any(s in text for s in _NO_CONFIG):
        raise SlurmError(
            f"SLURM cannot read its configuration ({_first_line(proc.stderr)}):"
            f" SLURM_CONF is {conf}; set SLURM_CONF or load the slurm module"
        )
    if proc.returncode != 0 and any(s in text for s in _UNREACHABLE):
        raise SlurmError(
            f"cannot reach the SLURM controller ({_first_line(proc.stderr)}): "
            f"check that slurmctld runs (`scontrol ping`) and that {conf} "
            "(SLURM_CONF) names this cluster"
        )
    return proc


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"


def explain_submit_error(stderr: str, options: SlurmOptions) -> str:
    """sbatch's own error plus what to change."""
    text = stderr.lower()
    hint = ""
    if "invalid partition" in text:
        hint = (
            f"partition {options.partition!r} does not exist: `sinfo -s` lists the "
            "partitions; pass --partition NAME"
        )
    elif "invalid account" in text:
        hint = (
            f"account {options.account!r} is not valid for you here: "
            "`sacctmgr show assoc user=$USER format=account,partition` lists yours; "
            "pass --account NAME"
        )
    elif "time limit" in text or "--time" in text:
        hint = (
            "change --time: minutes (--time 10) or [D-]HH:MM:SS, within the partition's "
            "MaxTime (`scontrol show partition P`)"
        )
    elif "invalid qos" in text:
        hint = "the QOS is not valid: `sacctmgr show qos` lists them; change --qos"
    elif "feature" in text or "constraint" in text:
        hint = "no node has these --constraint features: `sinfo -o '%N %f'` lists them"
    elif "node configuration is not available" in text or "node count" in text:
        hint = (
            "the partition cannot give that many nodes or tasks per node: lower --nodes "
            "or --ntasks-per-node, or pick another --partition (`sinfo -s`)"
        )
    message = f"sbatch refused the job: {stderr.strip()}"
    return message + (f"\n  what to change: {hint}" if hint else "")


def _job_of(group: dict[str, Any], task: dict[str, Any]) -> Job:
    """A Job rebuilt from the store (a new shell has no plan), enough to name a task."""
    shape = group.get("shape", {})
    flavor = shape.get("mpi")
    return Job(
        suite=shape.get("suite", ""),
        name=task["name"],
        program=list(shape.get("program", [])),
        mpi=MpiSpec(flavor, "", "") if flavor else None,  # which library, enough to check
        ranks=shape.get("ranks", 1),
        cpus=shape.get("cpus"),
        nodes=shape.get("nodes", 1),
        tags=task.get("tags", {}),
        output=shape.get("output", "jsonl"),
        launcher_binding=bool(shape.get("launcher_binding")),
    )


def _tail(path: Path, lines: int = 30) -> list[str]:
    try:
        with open(path, errors="replace") as f:
            return [ln.rstrip("\n") for ln in f.readlines()[-lines:]]
    except OSError:
        return []


class SlurmBackend:
    """Backend protocol (launch/base.py) on SLURM. `runner` is replaceable for unit tests."""

    name = "slurm"
    blocking = False

    def __init__(
        self,
        store: Store,
        options: SlurmOptions | None = None,
        rundir: Path | None = None,
        runner: Runner = run_command,
        poll_interval_s: float = 2.0,
        rundir_named: bool = False,
    ) -> None:
        """rundir: where each submitted run gets its own new folder (fresh_rundir);
        rundir_named: the user named it (--slurm-dir), so it may be a symbolic link."""
        self.store = store
        self.options = options or SlurmOptions()
        self.rundir = rundir
        self.rundir_named = rundir_named
        self.runner = runner
        self.poll_interval_s = poll_interval_s

    # -- bookkeeping ----------------------------------------------------------------

    def _data(self, run_id: int) -> dict[str, Any]:
        data = self.store.get_run_backend_data(run_id).get("slurm")
        if not data:
            raise SlurmError(
                f"run {run_id} was not submitted to SLURM (no job ids stored); "
                "`hpcscope list` shows each run's backend"
            )
        return data

    def _save(self, run_id: int, data: dict[str, Any]) -> None:
        self.store.set_run_backend_data(run_id, {"slurm": data})

    def _save_empty(self, run_id: int) -> None:
        self.store.set_run_backend_data(run_id, {"slurm": {}})

    def _run(
        self, data: dict[str, Any] | None, argv: list[str], cwd: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """SLURM_CONF recorded at submit time is used when this shell does not set one."""
        env = {}
        conf = (data or {}).get("slurm_conf")
        if conf and not os.environ.get("SLURM_CONF"):
            env["SLURM_CONF"] = conf
        return self.runner(argv, timeout=COMMAND_TIMEOUT_S, env=env, cwd=cwd)

    def _rundir(self, run_id: int, data: dict[str, Any]) -> Path:
        rundir = Path(data.get("rundir", ""))
        if not data.get("rundir") or not rundir.is_dir():
            raise SlurmError(
                f"run {run_id}'s SLURM directory {str(rundir) or '(none recorded)'} does not "
                "exist here; the jobs write their results there. Collect on a machine that "
                "mounts it (it must be on a file system shared with the compute nodes), or "
                "restore it. Nothing in the store was changed."
            )
        return rundir

    # -- scripts and submission -----------------------------------------------------

    def fresh_rundir(self, run_id: int) -> Path:
        """A new folder for one run's scripts, batch output and task files: made by
        mkdtemp (mode 0700, a name no one can guess or plant beforehand: run-ID.RANDOM)
        inside the run directory: --slurm-dir as named, else <run folder>/slurm, which
        must be this user's own folder (safe_write.ensure_dir). Nothing is reused, so a
        task never writes through an entry someone else placed."""
        base = self.rundir or Path("hpcscope-out") / f"run-{run_id}" / "slurm"
        if self.rundir_named:
            safe_write.ensure_dir(base)
        else:
            safe_write.ensure_dir(base.parent, base.name)
        return Path(tempfile.mkdtemp(prefix=f"run-{run_id}.", dir=base)).absolute()

    def scripts(
        self, run_id: int | str, jobs: list[Job], rundir: Path
    ) -> list[tuple[JobGroup, str]]:
        """The batch scripts for a plan, without submitting (`hpcscope slurm script`)."""
        return [(g, render(g, run_id, rundir, self.options)) for g in group_jobs(jobs)]

    def check_partition(self, data: dict[str, Any] | None, nodes: int) -> None:
        """Refuse before submitting when the partition does not exist or is too small:
        SLURM would accept such a job and leave it pending forever."""
        proc = self._run(data, ["sinfo", "-h", "-o", "%P|%D"])
        if proc.returncode != 0:
            return  # sbatch will say what is wrong
        sizes, default = sp.parse_sinfo_partitions(proc.stdout)
        name = self.options.partition or default
        listing = ", ".join(f"{p} ({n} nodes)" for p, n in sizes.items()) or "none"
        if self.options.partition and self.options.partition not in sizes:
            raise SlurmError(
                f"partition {self.options.partition!r} does not exist on this "
                f"cluster; partitions: {listing}. Pass --partition NAME"
            )
        if name and nodes > sizes.get(name, nodes):
            raise SlurmError(
                f"the plan needs {nodes} nodes but partition {name!r} has "
                f"{sizes[name]}: lower --nodes or choose a bigger --partition "
                f"({listing})"
            )

    def submit(self, run_id: int, jobs: list[Job]) -> None:
        """Write the scripts, sbatch them, record job ids and one PENDING launch per task.

        Scripts are rendered first, so a bad option fails before anything is queued. If
        sbatch fails midway, the groups already queued stay recorded (cancel/collect work).
        """
        if not jobs:
            raise SlurmError("nothing to submit: the plan has no jobs")
        rundir = self.fresh_rundir(run_id)
        try:
            rendered = self.scripts(run_id, jobs, rundir)  # may raise ScriptError
        except ScriptError:
            rundir.rmdir()  # still empty: nothing was written into it
            raise
        data: dict[str, Any] = {
            "rundir": str(rundir),
            "slurm_conf": os.environ.get("SLURM_CONF", ""),
            "options": asdict(self.options),
            "cancel_requested": False,
            "groups": [],
            "ingested": {},
        }
        self.check_partition(data, max(j.nodes for j in jobs))
        self._save(run_id, data)
        try:
            self._submit_groups(run_id, rendered, data, rundir)
        except BaseException:
            if not data["groups"]:  # nothing reached SLURM: not a SLURM run after all
                self._save_empty(run_id)
            raise

    def _submit_groups(
        self, run_id: int, rendered: list[tuple[JobGroup, str]], data: dict[str, Any], rundir: Path
    ) -> None:
        for group, text in rendered:
            script = rundir / f"{group.name}.sbatch"
            safe_write.write_text(script, text)
            proc = self._run(data, ["sbatch", "--parsable", str(script)], cwd=str(rundir))
            if proc.returncode != 0:
                queued = len(data["groups"])
                raise SlurmError(
                    explain_submit_error(proc.stderr, self.options)
                    + (
                        f"\n  {queued} group(s) were queued before this one: "
                        f"`hpcscope slurm cancel {run_id}` removes them"
                        if queued
                        else ""
                    )
                )
            job_id = sp.parse_sbatch(proc.stdout)
            job = group.first
            entry: dict[str, Any] = {
                "name": group.name,
                "script": str(script),
                "job_id": job_id,
                "shape": {
                    "suite": job.suite,
                    "program": job.program,
                    "ranks": job.ranks,
                    "nodes": job.nodes,
                    "cpus": job.cpus,
                    "output": job.output,
                    "mpi": job.mpi.flavor if job.mpi else None,
                    "launcher_binding": job.launcher_binding,
                },
                "tasks": [],
            }
            for index, member in enumerate(group.jobs, 1):
                launch_id = self.store.add_launch(
                    run_id,
                    member.name,
                    member.tags,
                    backend_id=f"{job_id}_{index}",
                    status="PENDING",
                )
                entry["tasks"].append(
                    {"name": member.name, "tags": member.tags, "launch_id": launch_id}
                )
            data["groups"].append(entry)
            self._save(run_id, data)

    # -- following the jobs ---------------------------------------------------------

    def _states(self, run_id: int, data: dict[str, Any]) -> dict[str, sp.TaskState]:
        """Current state of every task not yet ingested, keyed '<job_id>_<index>'."""
        rundir = Path(data["rundir"])
        wanted: dict[str, tuple[dict, int]] = {}
        for group in data["groups"]:
            for index in range(1, len(group["tasks"]) + 1):
                key = f"{group['job_id']}_{index}"
                if key not in data["ingested"]:
                    wanted[key] = (group, index)
        found: dict[str, sp.TaskState] = {}
        if not wanted:
            return found
        ids = sorted({g["job_id"] for g, _ in wanted.values()}, key=int)
        # 1. Queued or running: squeue (one line per array task with -r).
        proc = self._run(data, ["squeue", "-h", "-r", "-j", ",".join(ids), "-o", sp.SQUEUE_FORMAT])
        if proc.returncode == 0:
            for t in sp.parse_squeue(proc.stdout):
                if t.key in wanted:
                    found[t.key] = t
        elif _INVALID_ID not in proc.stderr.lower():
            raise SlurmError(f"squeue failed: {proc.stderr.strip()}")
        # 2. Finished but still in the controller's memory (MinJobAge): scontrol.
        for job_id in ids:
            if all(k in found for k, (g, _) in wanted.items() if g["job_id"] == job_id):
                continue
            proc = self._run(data, ["scontrol", "show", "job", "-o", job_id])
            if proc.returncode == 0:
                for t in sp.parse_scontrol(proc.stdout):
                    if t.key in wanted and (t.key not in found or t.state in sp.TERMINAL):
                        found[t.key] = t
        missing = [k for k in wanted if k not in found]
        # 3. Purged from memory: accounting (sacct), else the job-completion log.
        if missing:
            found.update(self._from_sacct(data, rundir, {k: wanted[k] for k in missing}))
        return found

    def _from_sacct(
        self, data: dict[str, Any], rundir: Path, wanted: dict[str, tuple[dict, int]]
    ) -> dict[str, sp.TaskState]:
        found: dict[str, sp.TaskState] = {}
        ids = sorted({g["job_id"] for g, _ in wanted.values()}, key=int)
        if data.get("accounting") is not False:
            proc = self._run(
                data, ["sacct", "-n", "-P", "-X", "-j", ",".join(ids), "-o", sp.SACCT_FIELDS]
            )
            if sp.accounting_disabled(proc.stdout + proc.stderr):
                data["accounting"] = False
            elif proc.returncode == 0:
                data["accounting"] = True
                for t in sp.parse_sacct(proc.stdout):
                    if t.key in wanted:
                        found[t.key] = t
        if data.get("accounting") is False:
            # sacct -c knows raw ids only; each task wrote its raw id next to its output.
            raw: dict[str, str] = {}
            for key, (group, index) in wanted.items():
                text = rundir / group["name"] / f"task-{index}.jobid"
                try:
                    rid = text.read_text().strip()
                except OSError:
                    continue
                if rid.isdigit():
                    raw[rid] = key
            if raw:
                proc = self._run(
                    data, ["sacct", "-c", "-n", "-P", "-j", ",".join(raw), "-o", sp.SACCT_FIELDS]
                )
                if proc.returncode == 0:
                    for t in sp.parse_sacct(proc.stdout):
                        if t.raw_id in raw:
                            key = raw[t.raw_id]
                            job_id, _, task_index = key.partition("_")
                            found[key] = sp.TaskState(
                                job_id,
                                int(task_index),
                                t.raw_id,
                                t.state,
                                t.slurm_state,
                                t.reason,
                                t.exit_code,
                            )
        return found

    def _resolve(
        self,
        key: str,
        group: dict,
        index: int,
        t: sp.TaskState | None,
        data: dict[str, Any],
        rundir: Path,
    ) -> sp.TaskState:
        """A task SLURM no longer reports: decide from what it left behind."""
        if t is not None:
            return t
        job_id = group["job_id"]
        rc_file = rundir / group["name"] / f"task-{index}.rc"
        if rc_file.exists():
            rc = int(rc_file.read_text().strip() or 1)
            return sp.TaskState(
                job_id,
                index,
                job_id,
                "COMPLETED" if rc == 0 else "FAILED",
                "(from task exit status)",
                "",
                rc,
            )
        if data.get("cancel_requested"):
            return sp.TaskState(job_id, index, job_id, "CANCELLED", "CANCELLED", "", None)
        if not (rundir / group["name"] / f"task-{index}.jobid").exists():
            # SLURM forgets an array task cancelled before it was split off the pending
            # array record: no scontrol entry, no completion log line.
            return sp.TaskState(
                job_id,
                index,
                job_id,
                "CANCELLED",
                "CANCELLED",
                "never started and SLURM no longer knows it (cancelled "
                "while pending, e.g. by scancel)",
                None,
            )
        return sp.TaskState(
            job_id,
            index,
            job_id,
            "FAILED",
            "UNKNOWN",
            "SLURM no longer knows this task and it left no exit status "
            "(purged before collect, and no accounting or completion log)",
            None,
        )

    def poll(self, run_id: int) -> list[JobState]:
        """The state of every task of the run (ingested tasks: their final state)."""
        data = self._data(run_id)
        rundir = Path(data["rundir"])
        current = self._states(run_id, data)
        out: list[JobState] = []
        for group in data["groups"]:
            for index, task in enumerate(group["tasks"], 1):
                key = f"{group['job_id']}_{index}"
                job = _job_of(group, task)
                if key in data["ingested"]:
                    out.append(JobState(job, data["ingested"][key], None, "", key))
                    continue
                t = self._resolve(key, group, index, current.get(key), data, rundir)
                detail = t.reason
                if t.state == "PENDING" and t.reason in sp.HOPELESS_REASONS:
                    detail = f"{t.reason}: {sp.HOPELESS_REASONS[t.reason]}"
                out.append(JobState(job, t.state, t.exit_code, detail, key))
        self._save(run_id, data)  # keeps what was learnt (accounting on/off)
        return out

    def hopeless(self, states: list[JobState]) -> list[JobState]:
        """Pending tasks that will never start (the request does not fit)."""
        return [
            s
            for s in states
            if s.state == "PENDING" and s.detail.split(":")[0] in sp.HOPELESS_REASONS
        ]

    def wait(self, run_id: int, progress: bool = True, console=None) -> list[JobState]:
        """Block until every task has finished (rich progress bar on stderr), then return
        the states. Raises SlurmError when pending tasks can never start. Ctrl-C stops
        waiting only: the jobs keep running, `hpcscope slurm collect` picks them up."""
        bar = progress_bar(console, progress)
        with bar:
            task = None
            while True:
                states = self.poll(run_id)
                done = sum(1 for s in states if s.state in sp.TERMINAL)
                counts = {k: sum(1 for s in states if s.state == k) for k in sp.ACTIVE}
                text = (
                    f"run {run_id} on SLURM: {counts['PENDING']} pending, "
                    f"{counts['RUNNING']} running"
                )
                if task is None:
                    task = bar.add_task(text, total=len(states))
                bar.update(task, completed=done, description=text)
                stuck = self.hopeless(states)
                if stuck and len(stuck) == sum(counts.values()):
                    raise SlurmError(
                        f"{len(stuck)} task(s) of run {run_id} will never start:"
                        f" {stuck[0].detail}. Remove them with `hpcscope slurm "
                        f"cancel {run_id}`"
                    )
                if done == len(states):
                    return states
                time.sleep(self.poll_interval_s)

    def cancel(self, run_id: int) -> None:
        """scancel every job of the run that is not finished; collect keeps what exists."""
        data = self._data(run_id)
        ids = [
            g["job_id"]
            for g in data["groups"]
            if any(
                f"{g['job_id']}_{i}" not in data["ingested"] for i in range(1, len(g["tasks"]) + 1)
            )
        ]
        data["cancel_requested"] = True
        self._save(run_id, data)
        if ids:
            proc = self._run(data, ["scancel", *ids])
            if proc.returncode != 0 and _INVALID_ID not in proc.stderr.lower():
                raise SlurmError(f"scancel failed: {proc.stderr.strip()}")

    # -- collection -----------------------------------------------------------------

    def collect(self, run_id: int) -> CollectReport:
        """Ingest every finished task not ingested before; finish the run when all are.

        Resumable: a task counts as ingested only after its whole file is in the store, and
        a task whose ingestion was interrupted (Ctrl-C, a crash) is reset and read again.
        Two collects of one run take turns (a lock file in the run's SLURM directory)."""
        data = self._data(run_id)
        rundir = self._rundir(run_id, data)
        with safe_write.open_lock(rundir / ".collect.lock") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent collect waits here
            return self._collect_locked(run_id, rundir)

    def _collect_locked(self, run_id: int, rundir: Path) -> CollectReport:
        report = CollectReport(run_id)
        states = self.poll(run_id)
        data = self._data(run_id)
        by_key = {
            (g["job_id"], i): (g, t) for g in data["groups"] for i, t in enumerate(g["tasks"], 1)
        }
        final: list[JobState] = []
        topology = self._planned_topology(run_id)
        for state in states:
            key = state.backend_id
            if key in data["ingested"] or state.state not in sp.TERMINAL:
                final.append(state)
                continue
            job_id, _, index = key.partition("_")
            group, task = by_key[(job_id, int(index))]
            self.store.reset_launch(task["launch_id"])
            final.append(
                self._ingest_task(state, group, int(index), task, rundir, report, topology, run_id)
            )
            data["ingested"][key] = final[-1].state
            self._save(run_id, data)
        report.states = final
        if final and all(s.state in sp.TERMINAL for s in final):
            failed = any(s.state != "COMPLETED" for s in final)
            if report.new_tasks:
                self.store.finish_run(run_id, "failed" if failed else "ok")
        return report

    def _planned_topology(self, run_id: int) -> Topology | None:
        """The compute nodes' topology the plan used (stored with the run), for the
        placement check; None when the run has none that parses (nothing is checked)."""
        xml = self.store.run(run_id).get("topology_xml")
        try:
            return Topology.from_xml(xml) if xml else None
        except TopologyError:
            return None

    def _ingest_task(
        self,
        state: JobState,
        group: dict,
        index: int,
        task: dict,
        rundir: Path,
        report: CollectReport,
        topology: Topology | None = None,
        run_id: int | None = None,
    ) -> JobState:
        base = rundir / group["name"] / f"task-{index}"
        result = IngestResult()
        out = base.with_suffix(".jsonl")
        launch_id = task["launch_id"]
        lines: list[str] = []
        if out.exists():
            with open(out, errors="replace") as f:
                if group.get("shape", {}).get("output", "jsonl") == "jsonl":
                    ingest_lines(self.store, launch_id, f, str(out), result)
                else:
                    assert state.job is not None  # poll() rebuilds the job of every task
                    job = state.job
                    ingest_tool_output(
                        self.store,
                        launch_id,
                        job.output,
                        f,
                        result,
                        lines,
                        program=Path(job.program[0]).name if job.program else "",
                        argv=job.program,
                        suite=job.suite,
                    )
        returncode = state.returncode
        rc_file = base.with_suffix(".rc")
        if rc_file.exists():
            text = rc_file.read_text().strip()
            returncode = int(text) if text.lstrip("-").isdigit() else returncode
        status = state.state
        if status == "COMPLETED" and (
            returncode not in (0, None) or result.errors or result.problems or not out.exists()
        ):
            status = "FAILED"
        detail = [f"SLURM {state.state} (job {state.backend_id}), script {group['script']}"]
        if status == "COMPLETED" and topology is not None and run_id is not None:
            # The same from-inside check as local runs (launch/placement_check.py).
            assert state.job is not None
            exclusive = bool(self._data(run_id).get("options", {}).get("exclusive", True))
            verdict = placement_check.check(state.job, result.meta, topology, exclusive)
            if verdict is not None:
                placement_check.record(self.store, run_id, launch_id, task["name"], verdict)
                if not verdict.ok:
                    status = "FAILED"
                    detail.insert(0, verdict.reason)
        if state.detail:
            detail.append(state.detail)
        if not out.exists():
            detail.append(
                f"no output file {out}: the task did not start or the run "
                "directory is not shared with the compute nodes"
            )
        detail += [f"benchmark error: {e}" for e in result.errors]
        detail += [f"malformed output: {p}" for p in result.problems[:5]]
        err = _tail(base.with_suffix(".err"))
        if err:
            detail += ["stderr:"] + err
        if status != "COMPLETED":
            slurm_out = _tail(rundir / f"slurm-{state.backend_id}.out", 10)
            if slurm_out:
                detail += ["batch output:"] + slurm_out
        detail += lines
        if state.job is not None and state.job.tags.get("every_node") and run_id is not None:
            # every node of the allocation at once (issue 45): a launch per node
            nodes = self._ingest_nodes(state, base, run_id)
            detail.append("; ".join(f"{h}: {s.state}" for h, s in nodes))
            if status == "COMPLETED" and any(s.state != "COMPLETED" for _, s in nodes):
                status = "FAILED"
        self.store.finish_launch(launch_id, status, returncode, "\n".join(detail))
        report.new_tasks += 1
        report.new_records += result.records
        return JobState(state.job, status, returncode, "\n".join(detail), state.backend_id)

    def _ingest_nodes(self, state: JobState, base: Path, run_id: int) -> list[tuple[str, JobState]]:
        """An every-node task's per-node files (slurm_script.every_node_lines), each a
        launch tagged with its node (launch/every_node.store_node_output)."""
        assert state.job is not None
        prefix = f"{base.name}.node-"
        found = []
        for out in sorted(base.parent.glob(f"{prefix}*.jsonl")):
            host = out.name[len(prefix) : -len(".jsonl")]
            rc_text = _tail(out.with_suffix(".rc"), 1)
            rc = int(rc_text[0]) if rc_text and rc_text[0].lstrip("-").isdigit() else None
            with open(out, "rb") as stream:
                node_state = every_node.store_node_output(
                    self.store,
                    run_id,
                    state.job,
                    host,
                    stream,
                    rc,
                    [f"SLURM step on {host} of job {state.backend_id}"],
                    _tail(out.with_suffix(".err")),
                    not_checked="CPU binding: the step has the node's CPUs",
                    placed_by="the step's SLURMD_NODENAME",
                )
            found.append((host, node_state))
        return found

    # -- status for humans ----------------------------------------------------------

    def status_text(self, run_id: int) -> str:
        """One line per group: job id, task counts per state, reasons (`slurm status`)."""
        data = self._data(run_id)
        states = self.poll(run_id)
        lines = [
            f"run {run_id}: {len(states)} task(s) in {len(data['groups'])} SLURM "
            f"job(s); directory {data['rundir']}"
        ]
        for group in data["groups"]:
            mine = [s for s in states if s.backend_id.startswith(group["job_id"] + "_")]
            counts: dict[str, int] = {}
            for s in mine:
                counts[s.state] = counts.get(s.state, 0) + 1
            summary = ", ".join(f"{n} {k.lower()}" for k, n in sorted(counts.items()))
            lines.append(f"  {group['job_id']:>10}  {group['name']:<28} {summary}")
            reasons = sorted({s.detail for s in mine if s.state == "PENDING" and s.detail})
            lines += [f"{'':14}pending: {r}" for r in reasons]
        collected = len(data["ingested"])
        lines.append(
            f"collected {collected} of {len(states)} task(s)"
            + (
                ""
                if collected == len(states)
                else f"; `hpcscope slurm collect {run_id}` ingests the finished ones"
            )
        )
        return "\n".join(lines)


__all__ = [
    "SlurmBackend",
    "SlurmError",
    "ScriptError",
    "SlurmOptions",
    "CollectReport",
    "run_command",
    "explain_submit_error",
]
