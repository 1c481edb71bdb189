"""What else ran while a job ran: steal time and other processes' CPU use, from /proc/stat.

A guest's numbers fall when the host runs other guests on its cores (steal time: the
hypervisor reports it in /proc/stat's 8th column) and when other processes of the guest
itself run beside the job (a compile, another user). The two call for different fixes, so
they are told apart: steal is the host's; "others" is the guest's busy time (user, nice,
system, irq, softirq) minus this process's and its children's CPU time (getrusage), i.e.
processes that are not ours.

    before = snapshot(); ...job...; facts = between(before, snapshot())

facts: wall_s, steal_pct (steal / all jiffies, in %), others_cores (the CPU time of
processes not ours / wall time, in cores), ours_cores, loadavg (1-minute load at the end).
Cost: two reads of /proc/stat and getrusage per job (microseconds). Restriction: this
machine only: a job that runs elsewhere (SLURM) is not observed here. Children's CPU time
counts once they are waited for, which the launcher does when the job ends.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass

_BUSY = (0, 1, 2, 5, 6)  # user, nice, system, irq, softirq (guest time is inside user)
_STEAL = 7
_IDLE = (3, 4)  # idle, iowait


@dataclass
class Snapshot:
    at: float  # time.monotonic()
    jiffies: list[int] | None  # /proc/stat's "cpu" line; None where it cannot be read
    ours_s: float  # this process's and its waited-for children's CPU seconds


def _stat() -> list[int] | None:
    try:
        with open("/proc/stat") as fh:
            first = fh.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu" or len(first) < 9:
        return None
    return [int(x) for x in first[1:]]


def _ours() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def snapshot() -> Snapshot:
    return Snapshot(time.monotonic(), _stat(), _ours())


def loadavg() -> float | None:
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def between(before: Snapshot, after: Snapshot) -> dict | None:
    """The facts of the interval between two snapshots; None where /proc/stat cannot be
    read or no time passed."""
    wall = after.at - before.at
    if before.jiffies is None or after.jiffies is None or wall <= 0:
        return None
    delta = [b - a for a, b in zip(before.jiffies, after.jiffies, strict=False)]
    total = sum(delta[i] for i in _BUSY + _IDLE + (_STEAL,) if i < len(delta))
    if total <= 0:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    busy_s = sum(delta[i] for i in _BUSY) / hz
    ours = max(0.0, after.ours_s - before.ours_s)
    return {
        "wall_s": round(wall, 3),
        "steal_pct": round(100.0 * delta[_STEAL] / total, 2),
        "others_cores": round(max(0.0, busy_s - ours) / wall, 3),
        "ours_cores": round(ours / wall, 3),
        "loadavg": loadavg(),
    }


def text(job: str, facts: dict) -> str:
    load = f", load average {facts['loadavg']:g}" if facts.get("loadavg") is not None else ""
    return (
        f"{job}: steal time {facts['steal_pct']:.1f} %, other processes "
        f"{facts['others_cores']:.2f} cores, ours {facts['ours_cores']:.2f} cores over "
        f"{facts['wall_s']:.1f} s{load} (/proc/stat)"
    )


def summary_text(notes: list[dict]) -> str | None:
    """The run's `load` notes in one line for `show` (one per job is a screenful in a node
    run): the jobs counted, the most other processes' cores and steal time, each with its
    job; None without load notes."""
    facts = [
        n["data"] for n in notes if n.get("kind") == "load" and isinstance(n.get("data"), dict)
    ]
    facts = [f for f in facts if isinstance(f.get("others_cores"), int | float)]
    if not facts:
        return None
    others = max(facts, key=lambda f: f["others_cores"])
    steal = max(facts, key=lambda f: f.get("steal_pct") or 0.0)
    busy = sum(f["others_cores"] >= 0.5 for f in facts)
    return (
        f"{len(facts)} jobs (/proc/stat); other processes used half a core or more during "
        f"{busy} of them, at most {others['others_cores']:.2f} cores ({others.get('job')}); "
        f"steal time at most {steal.get('steal_pct') or 0.0:.1f} % ({steal.get('job')})"
    )


class JobLoads:
    """A `load` note per job of a run on this machine (backend "local"): the facts of
    between() around the job, with data {job, wall_s, steal_pct, others_cores, ours_cores,
    loadavg} (docs/records.md, notes). Other backends run their jobs elsewhere: nothing."""

    def __init__(self, store, run_id: int, backend: str) -> None:
        self.store, self.run_id, self.on = store, run_id, backend == "local"
        self.begun: dict[str, Snapshot] = {}

    def started(self, job) -> None:
        if self.on:
            self.begun[job.name] = snapshot()

    def ended(self, job) -> None:
        before = self.begun.pop(job.name, None)
        facts = between(before, snapshot()) if before else None
        if facts:
            self.store.add_note(
                self.run_id, "load", text(job.name, facts), {"job": job.name, **facts}
            )
