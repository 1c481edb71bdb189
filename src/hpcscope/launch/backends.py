"""Where a run's jobs run: every launch backend, registered in one place.

A backend implements the Backend protocol of launch/base.py. Adding one (e.g. a SimGrid
or a network-namespace backend) is its module plus one BACKENDS line here; the runner and
the command line find it by name (`hpcscope run SUITE --on NAME`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcscope.launch import lab, sim_options, slurm_topology
from hpcscope.launch.base import Backend
from hpcscope.launch.local import LocalBackend
from hpcscope.launch.sim import SimBackend
from hpcscope.launch.slurm import SlurmBackend
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.results.store import Store


@dataclass
class BackendContext:
    """What a backend is made from: the store, the run's folder, the machine the plan was
    made for, the command line's options (each backend reads its own keys) and a
    progress callback (job, state-or-None) for backends that run jobs themselves."""

    store: Store
    folder: Path
    topology: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    on_job: Callable | None = None


@dataclass(frozen=True)
class BackendEntry:
    name: str
    description: str
    make: Callable[[BackendContext], Backend]
    nodes: Callable[[dict[str, Any]], int]  # nodes the plan may span, from the options
    # (suite, backend options, suite options) -> the same, adjusted for this backend, and
    # the cores of one node when they are not this machine's; ValueError for what it
    # cannot run (exit 2, before anything is built).
    plan_options: Callable[[str, dict, dict], tuple[dict, dict, int | None]] = (
        lambda suite, kw, opts: (kw, opts, None)
    )
    # options -> the topology of the nodes the plan runs on, with where it came from
    # (slurm_topology.NodeTopology); None: this machine's, read by hwloc.
    node_topology: Callable[[dict[str, Any]], Any] | None = None
    # Every job's time limit (s) on this backend unless --time says otherwise; None: the
    # suite's own (e.g. 1 h per coll job).
    job_time_limit_s: int | None = None
    # Jobs run now, one round after another, so a suite measuring to a precision may plan
    # one round and add the others as the results come in (runner.more_rounds); a queue
    # (SLURM) gets every round up front.
    adds_rounds: bool = True


def _local(ctx: BackendContext) -> Backend:
    return LocalBackend(ctx.store, ctx.folder / "launch", ctx.topology, ctx.on_job)


def _slurm(ctx: BackendContext) -> Backend:
    rundir = ctx.options.get("slurm_dir")
    return SlurmBackend(
        ctx.store,
        SlurmOptions.from_options(ctx.options),
        rundir=Path(rundir) if rundir else ctx.folder / "slurm",
        rundir_named=bool(rundir),
    )


def _slurm_plan_options(suite: str, kw: dict, opts: dict) -> tuple[dict, dict, None]:
    """--ntasks-per-node: the ranks of coll and lanes are nodes x tasks per node; links:
    the lanes of a node (one rank per node and lane)."""
    if suite == "links":
        return kw, {**opts, "lanes_per_node": kw.get("ntasks_per_node") or 1}, None
    if kw.get("ntasks_per_node"):
        nodes = kw.get("nodes") or 1
        opts = {**opts, "ranks": nodes * kw["ntasks_per_node"], "nodes": nodes}
    if suite == "node" and (kw.get("nodes") or 1) >= 2:
        # every node of the allocation at once, one step per node (suites/node_alloc.py)
        opts = {**opts, "every_node": True}
    return kw, opts, None


def _slurm_topology(kw: dict) -> slurm_topology.NodeTopology:
    """--topology FILE, else the cached or freshly probed compute-node topology; its CPU
    facts from --cpuinfo FILE when given."""
    return slurm_topology.node_topology(
        SlurmOptions.from_options(kw), kw.get("topology"), cpuinfo_file=kw.get("cpuinfo")
    )


def _sim(ctx: BackendContext) -> Backend:
    return SimBackend(
        ctx.store,
        ctx.folder / "sim",
        sim_options.machine_of(ctx.options),
        sim_options.ppn_of(ctx.options),
        ctx.on_job,
    )


def _no_pinning(name: str, why: str, plan_options: Callable) -> Callable:
    """plan_options of backends whose nodes share this machine's CPUs (lab) or have none
    (sim): coll and lanes ranks are not pinned there, and --rank-layout is refused."""

    def wrapped(suite: str, kw: dict, opts: dict) -> tuple[dict, dict, int | None]:
        kw, opts, cores = plan_options(suite, kw, opts)
        if suite in ("coll", "lanes", "nbc"):
            if opts.get("rank_layout"):
                raise ValueError(
                    f"--rank-layout {opts['rank_layout']}: --on {name} does not pin ranks "
                    f"({why}); drop --rank-layout"
                )
            opts = {**opts, "pin_ranks": False}
        return kw, opts, cores

    return wrapped


def _lab_plan_options(suite: str, kw: dict, opts: dict) -> tuple[dict, dict, None]:
    """The node suite on the lab runs on every lab node at once (suites/node_alloc.py),
    one thread per node unless --threads says otherwise: the nodes share this machine."""
    if suite == "node":
        opts = {
            **opts,
            "every_node": True,
            "threads": opts.get("threads") or [1],
            "shared_cpus": True,  # node_outliers: a clock in short windows is not compared
        }
    if suite == "links":
        return lab.plan_options(suite, kw, opts)
    return kw, opts, None


BACKENDS: dict[str, BackendEntry] = {
    "local": BackendEntry("local", "this machine, one job at a time", _local, lambda o: 1),
    "lab": BackendEntry(
        "lab",
        lab.DESCRIPTION,
        lab.make,
        lab.lab_nodes,
        _no_pinning("lab", "its nodes share this machine's CPUs", _lab_plan_options),
    ),
    "slurm": BackendEntry(
        "slurm",
        "SLURM job arrays (sbatch), collected from their files",
        _slurm,
        lambda o: o.get("nodes") or 1,
        _slurm_plan_options,
        _slurm_topology,
        adds_rounds=False,
    ),
    "sim": BackendEntry(
        "sim",
        "a simulated cluster (SimGrid SMPI, --platform), one job at a time",
        _sim,
        lambda o: sim_options.machine_of(o).nodes,
        _no_pinning("sim", "simulated ranks have no CPUs", sim_options.plan_options),
        job_time_limit_s=sim_options.SIM_JOB_TIME_LIMIT_S,
    ),
}


def backend_for(name: str) -> BackendEntry:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}") from None
