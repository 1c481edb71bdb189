"""The backend interface: submit, poll, wait, cancel, collect (ReFrame's scheduler split).

Every backend runs Jobs and hands each finished job's output to `ingest`, which validates
records and stores them as they arrive, so an interrupted run keeps what it finished.
A backend is one module plus one line in launch/backends.py (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
        return "\n".join(lines + self.messages)


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
