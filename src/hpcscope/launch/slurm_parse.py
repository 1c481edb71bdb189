"""Parse what SLURM's commands print: sbatch --parsable, squeue, scontrol -o, sacct, sacct -c.

Pure functions over text, no subprocess, so each is tested against recorded outputs
(tests/fixtures/slurm/). The backend asks for fixed output formats (the *_FORMAT constants)
so that parsing never depends on a site's SQUEUE_FORMAT or column widths.

Array jobs: SLURM names an array task "123_4" (array job 123, index 4). Each task also
gets a raw job id of its own once it starts (e.g. 127), and `sacct -c` (job-completion
log, used when accounting is off) knows only raw ids. The batch script writes its raw id
next to its output, so the backend can always map raw ids back to array indexes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hpcscope.launch.base import ACTIVE, TERMINAL  # noqa: F401  (re-used by slurm.py)

# squeue -h -r -o FORMAT: one line per array task (-r), fields separated by "|".
SQUEUE_FORMAT = "%i|%A|%T|%r"
# sacct -n -P -X -o FIELDS (also valid for sacct -c, where JobID is the raw id).
SACCT_FIELDS = "JobID,State,ExitCode"

# What a backend reports, from the many states SLURM knows (JobState in launch/base.py).
_NORMAL = {
    "PENDING": "PENDING",
    "REQUEUED": "PENDING",
    "REQUEUE_HOLD": "PENDING",
    "REQUEUE_FED": "PENDING",
    "RESV_DEL_HOLD": "PENDING",
    "SPECIAL_EXIT": "PENDING",
    "RUNNING": "RUNNING",
    "CONFIGURING": "RUNNING",
    "COMPLETING": "RUNNING",
    "SUSPENDED": "RUNNING",
    "STOPPED": "RUNNING",
    "SIGNALING": "RUNNING",
    "STAGE_OUT": "RUNNING",
    "RESIZING": "RUNNING",
    "COMPLETED": "COMPLETED",
    "FAILED": "FAILED",
    "OUT_OF_MEMORY": "FAILED",
    "TIMEOUT": "TIMEOUT",
    "DEADLINE": "TIMEOUT",
    "CANCELLED": "CANCELLED",
    "PREEMPTED": "CANCELLED",
    "REVOKED": "CANCELLED",
    "NODE_FAIL": "NODE_FAIL",
    "BOOT_FAIL": "NODE_FAIL",
}

# Pending reasons that never resolve by waiting: the request cannot fit the partition.
HOPELESS_REASONS = {
    "PartitionConfig": "the request does not fit the partition (more nodes or tasks per "
    "node than it has): lower --nodes/--ntasks-per-node or pick "
    "another --partition (`sinfo -s` lists them)",
    "PartitionNodeLimit": "more nodes than the partition allows: lower --nodes or pick "
    "another --partition (`sinfo -s`)",
    "PartitionTimeLimit": "--time exceeds the partition's limit: lower --time "
    "(`scontrol show partition P` shows MaxTime)",
    "BadConstraints": "no node has the requested --constraint features "
    "(`sinfo -o '%N %f'` lists them)",
    "InvalidAccount": "the account is not valid: fix --account "
    "(`sacctmgr show assoc user=$USER` lists yours)",
    "InvalidQOS": "the QOS is not valid: fix --qos (`sacctmgr show qos`)",
    "QOSMaxNodePerJobLimit": "more nodes than the QOS allows: lower --nodes or change --qos",
    "QOSMaxWallDurationPerJobLimit": "--time exceeds the QOS limit: lower --time",
    "AssocMaxNodesPerJobLimit": "more nodes than your association allows: lower --nodes",
    "AssocMaxWallDurationPerJobLimit": "--time exceeds your association's limit",
}


class SlurmParseError(ValueError):
    """SLURM printed something this parser does not understand (named in the message)."""


@dataclass(frozen=True)
class TaskState:
    """One array task (or a plain job when task is None) as a SLURM command reported it."""

    job_id: str  # the array job id ("123"), or the raw id when the array is unknown
    task: int | None  # array index, None for a raw id from sacct -c
    raw_id: str  # the task's own job id; == job_id until it starts
    state: str  # normalised: PENDING RUNNING COMPLETED FAILED TIMEOUT CANCELLED NODE_FAIL
    slurm_state: str  # as SLURM printed it, e.g. "CANCELLED by 0", "OUT_OF_MEMORY"
    reason: str = ""  # pending reason (squeue %r / scontrol Reason)
    exit_code: int | None = None  # exit status, or -signal when killed by a signal

    @property
    def key(self) -> str:
        return f"{self.job_id}_{self.task}" if self.task is not None else self.raw_id


def normal_state(slurm_state: str) -> str:
    """'CANCELLED by 1000' -> CANCELLED, 'OUT_OF_MEMORY' -> FAILED, unknown -> as is."""
    word = slurm_state.strip().split(" ")[0].rstrip("+").upper()
    return _NORMAL.get(word, word or "UNKNOWN")


def parse_exit_code(text: str) -> int | None:
    """SLURM's 'status:signal' -> status, or -signal when a signal ended the job."""
    text = text.strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d+)(?::(\d+))?", text)
    if not m:
        raise SlurmParseError(f"exit code {text!r} is not 'status:signal'")
    status, signal = int(m.group(1)), int(m.group(2) or 0)
    return -signal if signal and not status else status


def expand_indexes(spec: str) -> list[int]:
    """Array index spec -> indexes: '1-5%2' -> 1..5, '1,3,7-11:2' -> 1,3,7,9,11."""
    spec = spec.strip().strip("[]").split("%")[0]
    out: list[int] = []
    for part in filter(None, spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part)
        if not m:
            raise SlurmParseError(f"array index spec {spec!r} has a bad part {part!r}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        step = int(m.group(3)) if m.group(3) else 1
        out.extend(range(first, last + 1, step))
    return out


def _split_array_id(text: str) -> tuple[str, list[int] | None]:
    """'123_4' -> ('123', [4]); '123_[5-9%1]' -> ('123', [5..9]); '123' -> ('123', None)."""
    text = text.strip()
    if "_" not in text:
        return text, None
    job, _, idx = text.partition("_")
    return job, expand_indexes(idx)


def parse_sbatch(stdout: str) -> str:
    """`sbatch --parsable` prints 'JOBID' or 'JOBID;CLUSTER'."""
    for line in stdout.splitlines():
        line = line.strip()
        m = re.fullmatch(r"(\d+)(?:;\S+)?", line)
        if m:
            return m.group(1)
    raise SlurmParseError(f"sbatch --parsable printed no job id: {stdout.strip()!r}")


def parse_squeue(stdout: str) -> list[TaskState]:
    """Lines of SQUEUE_FORMAT ('%i|%A|%T|%r'); a not-yet-split range becomes one per index."""
    tasks: list[TaskState] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != 4:
            raise SlurmParseError(f"squeue line {line!r} is not '{SQUEUE_FORMAT}'")
        ident, raw, state, reason = (f.strip() for f in fields)
        job, indexes = _split_array_id(ident)
        reason = "" if reason in ("None", "(null)") else reason
        for index in indexes if indexes else [None]:
            raw_id = raw if indexes is None or len(indexes) == 1 else job
            tasks.append(TaskState(job, index, raw_id, normal_state(state), state, reason))
    return tasks


def _scontrol_pairs(line: str) -> dict[str, str]:
    """'A=1 B=x y C=2' -> {A: '1', B: 'x y', C: '2'}: a value runs to the next ' Key='."""
    pairs: dict[str, str] = {}
    for m in re.finditer(
        r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=(.*?)(?=\s+[A-Za-z][A-Za-z0-9_/:]*=|\s*$)", line
    ):
        pairs[m.group(1)] = m.group(2)
    return pairs


def parse_scontrol(stdout: str) -> list[TaskState]:
    """`scontrol show job -o ID`: one line per job record (array tasks included)."""
    tasks: list[TaskState] = []
    for line in stdout.splitlines():
        if not line.strip().startswith("JobId="):
            continue
        p = _scontrol_pairs(line.strip())
        raw = p.get("JobId", "")
        state = p.get("JobState", "")
        if not raw or not state:
            raise SlurmParseError(f"scontrol line has no JobId/JobState: {line[:120]!r}")
        reason = p.get("Reason", "")
        reason = "" if reason in ("None", "(null)") else reason
        code = parse_exit_code(p.get("ExitCode", ""))
        array = p.get("ArrayJobId")
        indexes = expand_indexes(p["ArrayTaskId"]) if array and "ArrayTaskId" in p else None
        job = array or raw
        for index in indexes if indexes else [None]:
            raw_id = raw if indexes is None or len(indexes) == 1 else job
            tasks.append(TaskState(job, index, raw_id, normal_state(state), state, reason, code))
    return tasks


def parse_sacct(stdout: str) -> list[TaskState]:
    """`sacct -n -P -X -o JobID,State,ExitCode`, also `sacct -c` (raw ids only).

    Steps ('123_4.batch') are skipped: -X should drop them, but sacct -c ignores -X.
    """
    tasks: list[TaskState] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) < 3:
            raise SlurmParseError(f"sacct line {line!r} is not '{SACCT_FIELDS}' with -P")
        ident, state, code = fields[0].strip(), fields[1].strip(), fields[2].strip()
        if "." in ident:
            continue
        job, indexes = _split_array_id(ident)
        for index in indexes if indexes else [None]:
            tasks.append(
                TaskState(
                    job,
                    index,
                    job if indexes else ident,
                    normal_state(state),
                    state,
                    "",
                    parse_exit_code(code),
                )
            )
    return tasks


def accounting_disabled(stderr_or_stdout: str) -> bool:
    """sacct without slurmdbd says so on stdout or stderr, depending on the version."""
    return "accounting storage is disabled" in stderr_or_stdout.lower()


def parse_sinfo_partitions(stdout: str) -> tuple[dict[str, int], str | None]:
    """`sinfo -h -o '%P|%D'` -> ({partition: nodes}, default partition or None).

    sinfo marks the default partition with '*' and prints a partition once per node
    state, so the node counts of its lines are summed.
    """
    sizes: dict[str, int] = {}
    default: str | None = None
    for line in stdout.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 2 or not fields[1].strip().isdigit():
            continue
        name = fields[0].strip()
        if name.endswith("*"):
            name = name[:-1]
            default = name
        sizes[name] = sizes.get(name, 0) + int(fields[1])
    return sizes, default
