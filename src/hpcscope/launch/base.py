"""The backend interface: submit, poll, wait, cancel, collect (ReFrame's scheduler split).

Every backend runs Jobs and hands each finished job's output to `ingest`, which validates
records and stores them as they arrive, so an interrupted run keeps what it finished.
A backend is one module plus one line in launch/backends.py (docs/architecture.md).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hpcscope.plan.job import Job

# Job states (SLURM's words, which the local backend uses too).
ACTIVE = {"PENDING", "RUNNING"}
TERMINAL = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "INTERRUPTED"}


class BackendError(RuntimeError):
    """The backend could not do what was asked; the message names the problem and what to
    change. Nothing already stored is lost."""


@dataclass
class JobState:
    job: Job | None  # None when read back from the store (the plan is not kept)
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL
    returncode: int | None = None
    detail: str = ""  # stderr tail or scheduler reason
    backend_id: str = ""  # e.g. the SLURM job id


@dataclass
class CollectReport:
    """What one `collect` did; `text()` is what the CLI prints."""

    run_id: int
    states: list[JobState] = field(default_factory=list)
    new_tasks: int = 0
    new_records: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def pending(self) -> int:
        return sum(1 for s in self.states if s.state in ACTIVE)

    @property
    def failed(self) -> list[JobState]:
        return [s for s in self.states if s.state in TERMINAL and s.state != "COMPLETED"]

    def text(self) -> str:
        lines = [
            f"run {self.run_id}: collected {self.new_tasks} task(s), "
            f"{self.new_records} record(s) new; {len(self.states)} task(s) in all"
        ]
        if self.pending:
            lines.append(
                f"{self.pending} task(s) still pending or running: run "
                f"`hpcscope slurm collect {self.run_id}` again when they finish"
            )
        for s in self.failed:
            first = s.detail.splitlines()[0] if s.detail else ""
            name = s.job.name if s.job else "?"
            lines.append(f"{name} ({s.backend_id}): {s.state} {first}")
            lines += [f"  {line}" for line in _launcher_verdict(s.detail)]
        return "\n".join(lines + self.messages)


# What srun and mpirun print when they end a step because a rank died: the line that names
# the rank, the node and the signal, which the batch state alone ("FAILED") does not.
_LAUNCHER_VERDICTS = ("srun: error: ", "mpirun noticed that process rank")


def _launcher_verdict(detail: str) -> list[str]:
    """The first line of a failed task's recorded stderr in which the launcher says which
    rank died and how; none when the launcher said nothing of the kind."""
    for line in detail.splitlines():
        if any(mark in line for mark in _LAUNCHER_VERDICTS):
            return [line.strip()]
    return []


class Backend(Protocol):
    """`blocking`: submit returns only when every job has ended (the local machine runs
    one job at a time); otherwise jobs queue and `wait` blocks until they end."""

    name: str
    blocking: bool

    def submit(self, run_id: int, jobs: list[Job]) -> None: ...
    def poll(self, run_id: int) -> list[JobState]: ...
    def wait(self, run_id: int, progress: bool = True, console=None) -> list[JobState]: ...
    def cancel(self, run_id: int) -> None: ...
    def collect(self, run_id: int) -> CollectReport: ...
    def status_text(self, run_id: int) -> str: ...


def progress_bar(
    console: Console | None = None, enabled: bool = True, transient: bool = False
) -> Progress:
    """The one progress bar of long runs and waits (on stderr): what runs, done of all,
    time elapsed. Not drawn on a console that is not a terminal; gone when done where the
    caller prints its own line instead (transient: the demo's steps)."""
    console = console or Console(stderr=True)
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
        # off where stderr is no terminal: it could only print a blank line when done
        disable=not enabled or not console.is_terminal,
    )


# -- processes that must not outlive hpcscope ---------------------------------------------
# (build.TreeGuard ends a job's process group if hpcscope dies; it lives in the build
# layer, below this one, because builds need it too.)


def kill_namespaces(namespaces: Sequence[str]) -> None:
    """SIGKILL to every process inside these network namespaces (the lab's nodes)."""
    for ns in namespaces:
        try:
            done = subprocess.run(
                ["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        for word in done.stdout.split():
            try:
                os.kill(int(word), signal.SIGKILL)
            except (ValueError, ProcessLookupError, PermissionError):
                pass


# -- faults: named for what they are ------------------------------------------------------


def _cache_root() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "hpcscope"


def fault_log(exc: BaseException, folder: Path | None = None) -> Path | None:
    """Writes the traceback of an unexpected error to a new file and returns its path:
    in `folder` (a run's output folder) when given and writable, else
    ~/.cache/hpcscope/errors/ ($XDG_CACHE_HOME), else the temporary folder; None when
    none of them can take it (a full disk everywhere)."""
    from hpcscope import __version__, safe_write

    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"error-{stamp}-{os.getpid()}.log"
    text = (
        f"hpcscope {__version__}, Python {sys.version.split()[0]}\n"
        f"command: {' '.join(sys.argv)}\n\n" + "".join(traceback.format_exception(exc))
    )
    # (root, below it): the run's folder as the run made it; our own folders in the cache
    # and the temporary folder, never a planted link (safe_write.ensure_dir)
    places = [(folder, "")] if folder is not None else []
    places += [(_cache_root(), "errors"), (Path(tempfile.gettempdir()), f"hpcscope-{os.getuid()}")]
    for root, below in places:
        try:
            return safe_write.write_text(safe_write.ensure_dir(root, below) / name, text)
        except OSError:
            continue
    return None


def full_place(exc: BaseException, places: Sequence[Path] = ()) -> Path | None:
    """The folder a "no space left" error was about: the file it names, else the first
    of `places` whose file system has no space left."""
    name = getattr(exc, "filename", None)
    if name:
        path = Path(os.fsdecode(name))
        return path.parent if not path.is_dir() else path
    for place in places:
        probe = Path(place)
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:
            st = os.statvfs(probe)
        except OSError:
            continue
        if st.f_bavail * st.f_frsize < 64 * 1024:
            return Path(place)
    return None


def fault_text(exc: BaseException, places: Sequence[Path] = ()) -> str | None:
    """One line for a fault outside hpcscope (a full disk, a locked or unusable store, a
    folder that cannot be written, a backend error): what happened and what to do.
    None for anything else, which is a bug (the caller logs its traceback). `places`:
    the folders written to (the store's, the output folder), to name a full one."""
    from hpcscope import safe_write
    from hpcscope.results.store import StoreError

    if isinstance(exc, (StoreError, BackendError, safe_write.UnsafeFolder)):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = full_place(exc, places)
        what = "no space left" if exc.errno == errno.ENOSPC else "disk quota exceeded"
        return (
            f"{what} on {where or 'the disk written to'}: free space there or choose "
            "another place (--out, --db)"
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        target = os.fsdecode(exc.filename) if exc.filename else "a file"
        return f"cannot write {target} ({exc.strerror}); choose a place you can write (--out, --db)"
    if isinstance(exc, OSError) and exc.errno == errno.EIO:
        return f"input/output error on {exc.filename or 'the disk'}: check the disk ({exc})"
    if type(exc).__module__ == "sqlite3" and "disk is full" in str(exc):  # outside Store
        where = full_place(exc, places)
        return f"no space left on {where or 'the disk of the store'}: free space there"
    return None
