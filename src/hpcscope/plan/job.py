"""A Job: one execution of one benchmark program, independent of where it runs.

Suites turn user options into Jobs (the plan stage); a backend (local, slurm, lab, sim)
turns a Job into processes. Keeping the Job free of launcher syntax is what lets the same
plan run on a laptop and on a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpcscope.machine.mpi import MpiSpec


@dataclass
class Job:
    suite: str  # "p2p", "coll", "node", ...
    name: str  # unique in its run, e.g. "openmpi/core/r1"
    program: list[str]  # executable and its arguments
    mpi: MpiSpec | None = None  # None: a plain process (node benchmarks, reference tools)
    ranks: int = 1
    cpus: list[int] | None = None  # OS CPU index per rank (binding), None: launcher default
    nodes: int = 1  # distinct nodes the ranks must span
    env: dict[str, str] = field(default_factory=dict)
    tags: dict[str, Any] = field(default_factory=dict)  # stored with every record of the job
    timeout_s: float = 600.0
    # How stdout becomes records: "jsonl" (our benchmarks) or the name of a parser in
    # hpcscope.results.parsers.PARSERS (reference tools such as fio, iperf3, likwid-bench).
    output: str = "jsonl"
    oversubscribe: bool = False  # correctness runs only: timings then mean nothing
    # Placement `default`: no binding options at all, the launcher binds as it does by
    # itself (cpus is then None); the ranks' binding is read from inside and reported.
    launcher_binding: bool = False
