"""Turn hpcscope Jobs into SLURM batch scripts: one script (a job array) per group of repeats.

A group is the set of Jobs that differ only by name and tags (the repeats of one
measurement): array index i runs the group's i-th Job, `--array=1-N%K` lets at most K of
them run at once (K=1 by default, so repeats never disturb each other).

Inside the job each task writes, under <rundir>/<group>/:
    task-<i>.jobid   the task's own SLURM job id (sacct -c knows only those)
    task-<i>.jsonl   the program's stdout: the records
    task-<i>.err     its stderr
    task-<i>.rc      its exit status, written only when the program ended by itself
<rundir> is a new folder per run (SlurmBackend.fresh_rundir: mkdtemp, mode 0700).

Files are only ever created, never written through an existing entry: the script runs
under `set -o noclobber`, and `new` refuses any entry that exists (`-e` or `-L`: bash's
noclobber alone still writes through a symbolic link to /dev/null, a FIFO or a device)
with one line naming it, exit 2; the group folder is made with mkdir or must be a real
folder of this user's own. Before the program starts all four names are checked, so a
planted entry stops the task before anything runs. (Between the check and the write a
new entry could still appear; the folder is private to the user, so only they could.)

Safety: #SBATCH lines are read by sbatch, not by a shell, so shell quoting does not
protect them; anything the user gave that lands there is either sanitised (job names) or
rejected when it contains a newline or control character (which would start a new,
executed line). Everything in the script body is shlex-quoted. Only --prelude lines are
emitted verbatim: they are shell commands the user asked to run.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from hpcscope.launch import epoch as launch_epoch
from hpcscope.launch import launcher
from hpcscope.plan.job import Job

_TIME = re.compile(r"\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(:\d{1,2}){0,2}", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ScriptError(ValueError):
    """A user option that cannot go into a batch script; the message says what to change."""


@dataclass
class SlurmOptions:
    """What the user passes through to sbatch (`hpcscope run ... --on slurm ...`)."""

    partition: str | None = None
    account: str | None = None
    time: str | None = None  # minutes ("10") or [D-]HH:MM:SS; None: from job timeouts
    qos: str | None = None
    constraint: str | None = None
    mail_type: str | None = None
    mail_user: str | None = None
    exclusive: bool = True  # performance runs own their nodes
    modules: list[str] = field(default_factory=list)  # -> `module load X`
    prelude: list[str] = field(default_factory=list)  # shell lines, verbatim
    sbatch_args: list[str] = field(default_factory=list)  # extra #SBATCH options
    launcher: str = "srun"  # "srun" or "mpirun" (the MPI library's own)
    srun_mpi: str | None = None  # srun --mpi=...; None: pmix for Open MPI, pmi2 for MPICH
    array_limit: int = 1  # %K: array tasks (repeats) running at the same time

    @classmethod
    def from_options(cls, kw: dict) -> SlurmOptions:
        """From the command line's option names (`hpcscope run ... --on slurm`)."""
        return cls(
            partition=kw.get("partition"),
            account=kw.get("account"),
            time=kw.get("time"),
            qos=kw.get("qos"),
            constraint=kw.get("constraint"),
            mail_type=kw.get("mail_type"),
            mail_user=kw.get("mail_user"),
            exclusive=kw.get("exclusive", True),
            modules=list(kw.get("module") or ()),
            prelude=list(kw.get("prelude") or ()),
            sbatch_args=list(kw.get("sbatch_arg") or ()),
            launcher=kw.get("launcher") or "srun",
            array_limit=kw.get("array_limit") or 1,
        )


@dataclass
class JobGroup:
    """Jobs run as one array: task i (from 1) runs jobs[i-1]."""

    name: str  # safe for paths and #SBATCH lines, unique in its run
    jobs: list[Job]

    @property
    def first(self) -> Job:
        return self.jobs[0]


def safe_name(text: str, limit: int = 64) -> str:
    """A name usable as a directory and in an #SBATCH line: [A-Za-z0-9._-] only."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return name[:limit] or "job"


def _shape(job: Job) -> tuple:
    """What must be equal for jobs to share one batch script (everything but name/tags)."""
    mpi = (job.mpi.flavor, job.mpi.mpirun) if job.mpi else None
    return (
        tuple(job.program),
        mpi,
        job.ranks,
        tuple(job.cpus or ()),
        job.nodes,
        tuple(sorted(job.env.items())),
        job.timeout_s,
        job.output,
        job.oversubscribe,
        job.suite,
        job.launcher_binding,
    )


def group_jobs(jobs: list[Job]) -> list[JobGroup]:
    """Group repeats: same shape -> one array. Order of first appearance is kept."""
    groups: dict[tuple, list[Job]] = {}
    for job in jobs:
        groups.setdefault(_shape(job), []).append(job)
    result: list[JobGroup] = []
    used: set[str] = set()
    for members in groups.values():
        # "openmpi/core/r1" -> "openmpi_core": the repeat suffix names a task, not the group.
        base = re.sub(r"[/_-]r(ep)?\d+$", "", members[0].name) or members[0].name
        name = safe_name(base)
        candidate, n = name, 2
        while candidate in used:
            candidate, n = f"{name}-{n}", n + 1
        used.add(candidate)
        result.append(JobGroup(candidate, members))
    return result


def _one_line(option: str, value: str) -> str:
    """A directive value: one line, no control characters, quoted if it has spaces."""
    if _CONTROL.search(value):
        raise ScriptError(
            f"{option} {value!r} contains a newline or control character; "
            "a SLURM directive must be one plain line"
        )
    if '"' in value:
        raise ScriptError(
            f"{option} {value!r} contains a double quote, which #SBATCH "
            "lines cannot carry; remove it"
        )
    return f'"{value}"' if re.search(r"\s", value) else value


def check_time(value: str) -> str:
    value = value.strip()
    if not _TIME.fullmatch(value):
        raise ScriptError(
            f"--time {value!r} is not a SLURM time limit: give minutes "
            "(--time 10) or [D-]HH:MM:SS (--time 1:30:00, --time 1-00:00:00)"
        )
    return value


# The longest --time hpcscope takes: a year. More is a typo (and overflows the timers
# that enforce it); SLURM's own limit for a job is its partition's MaxTime.
MAX_TIME_S = 365 * 24 * 3600


def time_limit_seconds(value: str) -> int:
    """A SLURM time limit in seconds: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
    D-HH:MM:SS (sbatch's forms), minutes and seconds below 60 and hours below 24 after a
    day part, at most a year. Raises ScriptError for anything else or zero."""
    text = check_time(str(value))
    days, _, rest = text.rpartition("-")
    if len(text) > 64:  # far longer than a year: refused without reading the numbers
        raise ScriptError(f"--time {value!r}: longer than a year; give at most 365-00:00:00")
    parts = [int(x) for x in rest.split(":")]
    if days:  # D-HH[:MM[:SS]]
        parts += [0] * (3 - len(parts))
        hours, minutes, seconds = parts
        day_hours, hours = hours, hours + 24 * int(days)
    elif len(parts) == 3:
        day_hours, (hours, minutes, seconds) = 0, parts
    else:  # minutes[:seconds]
        day_hours, hours, (minutes, seconds) = 0, 0, (parts + [0])[:2]
    if day_hours >= 24 or (len(parts) == 3 and minutes >= 60) or seconds >= 60:
        raise ScriptError(
            f"--time {value!r}: hours after a day part must be 0..23, minutes and seconds "
            "after a colon 0..59; e.g. --time 1:30:00 or --time 1-12:00:00"
        )
    total = 3600 * hours + 60 * minutes + seconds
    if total <= 0:
        raise ScriptError(f"--time {value!r}: a time limit must be longer than zero")
    if total > MAX_TIME_S:
        raise ScriptError(f"--time {value!r}: longer than a year; give at most 365-00:00:00")
    return total


def _time_for(group: JobGroup, options: SlurmOptions) -> str:
    if options.time:
        return check_time(str(options.time))
    # One array task runs one job: its own timeout plus a minute for startup.
    return str(math.ceil(max(j.timeout_s for j in group.jobs) / 60) + 1)


def directives(
    group: JobGroup, run_id: int | str, rundir: Path, options: SlurmOptions
) -> list[str]:
    """The #SBATCH lines (without the prefix), in a fixed order: golden-testable."""
    job = group.first
    out_pattern = str(rundir).replace("%", "%%") + "/slurm-%A_%a.out"
    lines = [
        f"--job-name=hpcscope-{run_id}-{group.name}",
        f"--output={_one_line('--out', out_pattern)}",
        f"--chdir={_one_line('--out', str(rundir))}",
        f"--array=1-{len(group.jobs)}%{max(1, options.array_limit)}",
        f"--nodes={job.nodes}",
        f"--ntasks={job.ranks}",
    ]
    per_node = launcher.per_node(job)
    if per_node is not None:
        lines.append(f"--ntasks-per-node={per_node}")
    placement = str(job.tags.get("placement", ""))
    # Ask SLURM for cores where the placement needs them, so that even a shared
    # (non-exclusive) allocation holds CPUs on the right sockets.
    if placement == "socket":
        lines.append("--ntasks-per-socket=1")
    elif placement == "core" and per_node:
        lines.append(f"--ntasks-per-socket={per_node}")
    if options.exclusive:
        lines.append("--exclusive")
    lines.append(f"--time={_time_for(group, options)}")
    for option, value in (
        ("--partition", options.partition),
        ("--account", options.account),
        ("--qos", options.qos),
        ("--constraint", options.constraint),
        ("--mail-type", options.mail_type),
        ("--mail-user", options.mail_user),
    ):
        if value:
            lines.append(f"{option}={_one_line(option, value)}")
    for arg in options.sbatch_args:
        if not arg.startswith("-"):
            raise ScriptError(
                f"--sbatch-arg {arg!r} is not an sbatch option (it must start "
                "with '-', e.g. --sbatch-arg=--gres=gpu:1)"
            )
        if "=" in arg:
            key, _, value = arg.partition("=")
            lines.append(f"{_one_line('--sbatch-arg', key)}={_one_line('--sbatch-arg', value)}")
        else:
            lines.append(_one_line("--sbatch-arg", arg))
    return lines


def launch_line(job: Job, options: SlurmOptions) -> list[str]:
    """The shell words that start the job's ranks inside the allocation."""
    if options.launcher not in launcher.SLURM_LAUNCHERS:
        raise ScriptError(f"launcher {options.launcher!r} is unknown: use srun or mpirun")
    return launcher.slurm_argv(
        job, options.launcher, exclusive=options.exclusive, srun_mpi=options.srun_mpi
    )


# Inside each step: SLURM's own name of the node it runs on must be the one asked for
# (the collection then records the placement as checked by SLURMD_NODENAME).
STEP_CHECK = (
    '[ "$SLURMD_NODENAME" = "$0" ] || { echo "hpcscope: step for node $0 ran on '
    '${SLURMD_NODENAME:-an unnamed node}" >&2; exit 3; }; exec "$@"'
)


def every_node_lines(job: Job) -> list[str]:
    """An every-node job (the node suite over an allocation, suites/node_alloc.py): one
    step per node of the allocation, all at once (srun -N1 -n1 --nodelist=NODE &), each
    writing task-<i>.node-<NODE>.{jsonl,err,rc}; the task's own jsonl stays empty and
    its rc is the first failing step's. Node names are checked to be plain host names
    before any file is named after them, and every file is new (`new`, noclobber)."""
    program = " ".join(shlex.quote(a) for a in job.program)
    node = '"$group/task-$task.node-$h'
    return [
        'mapfile -t hosts < <(scontrol show hostnames "$SLURM_JOB_NODELIST") || exit 2',
        'for h in "${hosts[@]}"; do',
        '  case $h in ""|*[!A-Za-z0-9._-]*) refuse "node $h" "not a plain host name" ;; esac',
        f'  for f in jsonl err rc; do new {node}.$f"; done',
        "done",
        "pids=()",
        'for h in "${hosts[@]}"; do',
        '  { srun --nodes=1 --ntasks=1 --nodelist="$h" --cpus-per-task="${SLURM_CPUS_ON_NODE:-1}"'
        f' --kill-on-bad-exit=1 sh -c {shlex.quote(STEP_CHECK)} "$h" {program}'
        f' >{node}.jsonl" 2>{node}.err";',
        f'    echo "$?" >{node}.rc"; }} &',
        "  pids+=($!)",
        "done",
        'for p in "${pids[@]}"; do wait "$p"; done',
        "rc=0",
        'for h in "${hosts[@]}"; do',
        f'  r=$(cat {node}.rc" 2>/dev/null || echo 1); [ "$rc" = 0 ] && rc=$r',
        "done",
        ': >"$group/task-$task.jsonl"  # the records are per node (task-<i>.node-<NODE>.jsonl)',
        ': >"$group/task-$task.err"',
    ]


def render(group: JobGroup, run_id: int | str, rundir: Path, options: SlurmOptions) -> str:
    """The complete batch script for one group."""
    q = shlex.quote
    rundir = Path(rundir).absolute()
    job = group.first
    lines = ["#!/bin/bash"]
    lines += [f"#SBATCH {d}" for d in directives(group, run_id, rundir, options)]
    lines += [
        "#",
        f"# hpcscope run {run_id}, group {group.name}: array task i runs job i of",
    ]
    # Job names are user-influenced: only their sanitised form goes into comments.
    lines += [f"#   {i} {safe_name(j.name, 120)}" for i, j in enumerate(group.jobs, 1)]
    lines += [
        "# Each task writes <rundir>/<group>/task-<i>.{jobid,jsonl,err,rc} (hpcscope slurm"
        " collect reads them).",
        "",
    ]
    for module in options.modules:
        lines.append(f"module load {q(module)}")
    lines += list(options.prelude)
    for key, value in sorted(job.env.items()):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ScriptError(f"environment variable name {key!r} is not valid in a shell")
        lines.append(f"export {key}={q(value)}")
    lines += [
        "set -o noclobber  # create files only; `new` refuses what noclobber lets through",
        f"rundir={q(str(rundir))}",
        f'group="$rundir"/{q(group.name)}',
        'task="${SLURM_ARRAY_TASK_ID:?this script runs as a SLURM job array (sbatch --array)}"',
        "refuse() {",
        '  echo "hpcscope: refusing $1: $2 (planted?); remove it or submit again" >&2',
        "  exit 2",
        "}",
        'new() { if [ -e "$1" ] || [ -L "$1" ]; then refuse "$1" "it already exists"; fi; }',
        'mkdir -m 700 -- "$group" 2>/dev/null ||',
        '  { [ -d "$group" ] && [ ! -L "$group" ] && [ -O "$group" ]; } ||',
        '  refuse "$group" "it is not a folder of this user\'s own"',
        'for f in jobid jsonl err rc; do new "$group/task-$task.$f"; done',
        'echo "${SLURM_JOB_ID:-}" >"$group/task-$task.jobid" || exit 2',
    ]
    if (
        options.launcher == "mpirun"
        and job.mpi is not None
        and job.mpi.flavor != "mpich"
        and job.cpus
        and options.exclusive
    ):
        lines += launcher.rankfile_script(job)
    if job.tags.get("every_node"):
        lines += every_node_lines(job)
    else:
        lines += launch_epoch.shell_line(job.env)
        lines += [
            " ".join(launch_line(job, options))
            + ' >"$group/task-$task.jsonl" 2>"$group/task-$task.err"',
            "rc=$?",
        ]
    lines += [
        'new "$group/task-$task.rc"',
        'echo "$rc" >"$group/task-$task.rc" || exit 2',
        'exit "$rc"',
        "",
    ]
    return "\n".join(lines)
