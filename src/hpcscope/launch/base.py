"""The backend interface: submit, poll, cancel, collect (ReFrame-style scheduler split).

Every backend runs Jobs and hands each finished job's output to `ingest`, which validates
records and stores them as they arrive, so an interrupted run keeps what it finished.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hpcscope.plan.job import Job


@dataclass
class JobState:
    job: Job | None          # None when read back from the store (the plan is not kept)
    state: str               # PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL
    returncode: int | None = None
    detail: str = ""         # stderr tail or scheduler reason
    backend_id: str = ""     # e.g. the SLURM job id


class Backend(Protocol):
    name: str

    def submit(self, run_id: int, jobs: list[Job]) -> None: ...
    def poll(self, run_id: int) -> list[JobState]: ...
    def cancel(self, run_id: int) -> None: ...
    def collect(self, run_id: int) -> list[JobState]: ...
