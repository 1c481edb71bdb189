"""What every suite module provides: a plan (jobs plus notes) made from user options.

A suite module `hpcscope.suites.<name>` exposes `plan(ctx: PlanContext, opts: dict) ->
SuitePlan`. Planning never runs anything: it only decides what to run, so the same plan
can be printed (dry run), executed locally, or turned into a SLURM batch script.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.node_facts import NodeFacts
from hpcscope.plan.job import Job


@dataclass
class Note:
    """Something the user must be told and the store must keep (skips, warnings, peaks)."""

    kind: str  # "skipped", "warning", "peak", "info"
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlanContext:
    topology: Any  # hpcscope.machine.topology.Topology
    mpis: list[MpiSpec]  # the MPI libraries chosen by --mpi (may be empty)
    binary: Callable[[str, MpiSpec | None], Path]  # program name -> built executable
    quick: bool = False
    nodes_available: int = 1  # >1 on SLURM / lab / sim backends
    # Cores of one node when the plan is not for this machine (sim: the platform's node,
    # or --ppn); None: this machine's topology.
    cores_per_node: int | None = None
    # MPI -> what its `coll --list-algorithms` prints (build.algorithm_catalog)
    catalog: Callable[[MpiSpec], dict] | None = None
    # What the node suite's peaks read from the nodes the plan is for (machine/node_facts
    # NodeFacts: a SLURM compute node's); None: this machine's, read when planning.
    node_facts: NodeFacts | None = None
    # The backend runs jobs now and lets the suite add rounds after each (not SLURM):
    # a suite measuring to a precision then plans its first round only.
    adds_rounds: bool = False


@dataclass
class SuitePlan:
    jobs: list[Job] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
