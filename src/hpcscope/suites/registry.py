"""Every suite hpcscope can run, registered in one place.

A suite is a planner (options -> Jobs and Notes, nothing run) and an output writer (the
figures and tables of a finished run). Adding one is its module plus one SUITES line;
`hpcscope run NAME` and the runner find it here (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hpcscope.suites import coll, io, lanes, links, nbc, node, p2p, rma, startup
from hpcscope.suites.base import PlanContext, SuitePlan


@dataclass(frozen=True)
class Suite:
    name: str
    summary: str
    plan: Callable[[PlanContext, dict], SuitePlan]
    outputs: Callable[..., list[Path]]  # (store, run_id, out_dir) -> files written
    needs_mpi: bool  # its jobs are MPI programs (--mpi applies)
    # Measuring to a precision: (store, run_id, jobs so far, monotonic start) -> more jobs
    # after a round ([] = done); only on backends that run jobs now (runner.more_rounds).
    follow_up: Callable[..., list] | None = None
    # What a dry run prints after the jobs (links: the schedule, a line per round).
    describe: Callable[[SuitePlan], list[str]] | None = None


SUITES: dict[str, Suite] = {
    "p2p": Suite(
        "p2p",
        "MPI point-to-point latency and bandwidth at each placement",
        p2p.plan,
        p2p.outputs,
        True,
        p2p.follow_up,
    ),
    "coll": Suite(
        "coll",
        "collectives: native vs lanecoll's decompositions, with verdicts",
        coll.plan,
        coll.outputs,
        True,
    ),
    "lanes": Suite(
        "lanes", "lane-pattern and multi-collective benchmarks", lanes.plan, lanes.outputs, True
    ),
    "node": Suite(
        "node",
        "CPU, memory, disk, network vs peak and the standard tools",
        node.plan,
        node.outputs,
        False,
    ),
    "rma": Suite(
        "rma",
        "MPI one-sided (RMA) latency and bandwidth, OSU 7.4's one-sided programs",
        rma.plan,
        rma.outputs,
        True,
    ),
    "links": Suite(
        "links",
        "every pair of nodes in parallel rounds, slow pairs alone, bisection",
        links.plan,
        links.outputs,
        True,
        describe=links.describe,
    ),
    "nbc": Suite(
        "nbc",
        "non-blocking (overlap), persistent and neighbourhood collectives, OSU 7.4's",
        nbc.plan,
        nbc.outputs,
        True,
    ),
    "startup": Suite(
        "startup",
        "MPI start-up: MPI_Init and launch-to-hello time per rank count (OSU osu_init/hello)",
        startup.plan,
        startup.outputs,
        True,
    ),
    "io": Suite(
        "io",
        "MPI-IO bandwidth: independent and collective, shared file and file per process",
        io.plan,
        io.outputs,
        True,
    ),
}


def suite_for(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"unknown suite '{name}'; choose one of {', '.join(SUITES)}") from None
