"""The links suite: every pair of nodes of an allocation in one MPI launch (JSC linktest's
way), the slow pairs again alone, bisection and all-to-all under load (docs/links.md).

One job per MPI library: bench/mpi/links.c with one rank per node and lane. Where the
nodes are:
  - lab, sim, slurm: the backend's nodes (nodes_available); lanes per node from the
    backend (`lanes_per_node`: the lab's lanes with per-process binding, the simulated
    platform's hosts per node, SLURM's --ntasks-per-node), else 1;
  - local (one machine): `ranks` emulated nodes of one rank each (LANECOLL_NODE_SIZE=1,
    default 4). Chosen over refusing so the program runs under real Open MPI and MPICH
    mpirun on any machine (tests, a first look); a note says the "links" are then this
    machine's shared memory, and the matrix shows nothing of a network.
SLURM: one allocation and one job step for all pairs (never a job per pair).

plan opts (all optional): ranks (local), lanes_per_node and nodes_share_cpus (from the
backend: the lab's nodes share this machine's cores), quick,
repeat, lat_bytes, bw_bytes, bw_iterations, k, floor, retest_max, bisection (bool),
alltoall_bytes, sequential (bool: the rounds' pairs one after another, the reference a
parallel run's time is compared with).
"""

from __future__ import annotations

import re
from pathlib import Path

from hpcscope.analysis import links_schedule
from hpcscope.plan.job import Job
from hpcscope.suites import coll as coll_suite
from hpcscope.suites.base import Note, PlanContext, SuitePlan

PROGRAM = "links"
LOCAL_RANKS = 4
# --quick: fewer and smaller messages (a first look; a slow link still stands out)
QUICK_ARGS = {
    "--lat-blocks": "5",
    "--bw-bytes": "256K",
    "--bw-iterations": "3",
    "--bisection-reps": "2",
    "--alltoall-bytes": "16K",
    "--alltoall-reps": "2",
}
# opts key -> program option
OPTION_ARGS = {
    "lat_bytes": "--lat-bytes",
    "bw_bytes": "--bw-bytes",
    "bw_iterations": "--bw-iterations",
    "k": "--k",
    "floor": "--floor",
    "retest_max": "--retest-max",
    "alltoall_bytes": "--alltoall-bytes",
}


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    notes: list[Note] = []
    real_nodes = max(1, int(ctx.nodes_available or 1))
    lanes = int(opts.get("lanes_per_node") or 1)
    env: dict[str, str] = {}
    tags: dict = {}
    if real_nodes == 1:
        nodes = opts.get("ranks") or LOCAL_RANKS
        if not isinstance(nodes, int) or nodes < 2:
            raise ValueError(
                f"--ranks {nodes}: links needs 2 or more nodes; on one machine give --ranks "
                "N >= 2 (N emulated nodes), or use --on lab, --on sim or --on slurm"
            )
        lanes = 1
        env["LANECOLL_NODE_SIZE"] = "1"
        tags.update({"emulated_nodes": True, "node_size": 1})
        notes.append(
            Note(
                "info",
                f"links: one machine, so {nodes} ranks are {nodes} emulated nodes "
                "(LANECOLL_NODE_SIZE=1): every 'link' is this machine's shared memory; use "
                "--on lab, --on sim or --on slurm for a network",
                {"node_size": 1, "ranks": nodes},
            )
        )
    else:
        nodes = real_nodes
        if opts.get("ranks") not in (None, nodes * lanes):
            raise ValueError(
                f"--ranks {opts['ranks']}: links runs one rank per node and lane "
                f"({nodes} nodes x {lanes} = {nodes * lanes}); drop --ranks"
            )
    ranks = nodes * lanes
    # the lab's nodes share this machine's cores
    cores = coll_suite.cores(ctx) * (1 if opts.get("nodes_share_cpus") else real_nodes)
    oversubscribe = ranks > cores
    if oversubscribe:
        tags["oversubscribed"] = True
        notes.append(
            Note(
                "warning",
                f"links: {ranks} ranks on {cores} cores: oversubscribed, so a pair's "
                "latency in its round waits for CPUs, not only for its link (the re-tests "
                "alone run with the other ranks asleep)",
                {"ranks": ranks, "cores": cores},
            )
        )
    args = _program_args(opts)
    notes.append(_schedule_note(nodes, lanes, opts))
    result = SuitePlan(notes=notes)
    repeat = opts.get("repeat") or 1
    for rep in range(1, repeat + 1):
        for mpi in ctx.mpis:
            result.jobs.append(
                Job(
                    suite="links",
                    name=f"{mpi.flavor}/links/n{nodes}x{lanes}/r{rep}",
                    program=[str(ctx.binary(PROGRAM, mpi)), *args],
                    mpi=mpi,
                    ranks=ranks,
                    nodes=real_nodes,
                    env=dict(env),
                    tags=dict(
                        tags,
                        links_nodes=nodes,
                        links_lanes=lanes,
                        mpi=mpi.flavor,
                        mpi_version=mpi.version,
                        repeat=rep,
                    ),
                    timeout_s=900 if opts.get("quick") else 3600,
                    oversubscribe=oversubscribe,
                )
            )
    return result


def _program_args(opts: dict) -> list[str]:
    args: dict[str, str] = dict(QUICK_ARGS) if opts.get("quick") else {}
    for key, flag in OPTION_ARGS.items():
        if opts.get(key) is not None:
            args[flag] = str(opts[key])
    out = [w for flag, value in args.items() for w in (flag, value)]
    if opts.get("bisection") is False:
        out.append("--bisection=0")
    if opts.get("sequential"):
        out.append("--sequential")
    return out


def _schedule_note(nodes: int, lanes: int, opts: dict) -> Note:
    rounds = links_schedule.rounds(nodes)
    pairs = nodes * (nodes - 1) // 2
    retests = opts.get("retest_max") or 64
    return Note(
        "info",
        f"links: {nodes} nodes x {lanes} lane(s): {rounds} parallel rounds of "
        f"{nodes // 2} pair(s) ({pairs} node pairs{' per lane' if lanes > 1 else ''}"
        + ("; each pair alone, one after another" if opts.get("sequential") else "")
        + "), then "
        f"at most {retests} slow pairs re-measured alone, "
        + ("bisection (halves, random) and " if opts.get("bisection") is not False else "")
        + "an all-to-all; one launch",
        {"nodes": nodes, "lanes": lanes, "rounds": rounds, "pairs": pairs},
    )


def describe(plan: SuitePlan) -> list[str]:
    """The dry run's schedule: one line per round (Suite.describe)."""
    if not plan.jobs:
        return []
    tags = plan.jobs[0].tags
    return list(links_schedule.schedule_lines(tags["links_nodes"], tags["links_lanes"]))


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """links_bandwidth.csv, links_latency.csv (N x N per lane), links_flags.csv,
    links.json (the analysis) and the heatmaps."""
    from hpcscope.analysis import links as analysis
    from hpcscope.figures import links as figures
    from hpcscope.figures.common import save_drawings

    found = analysis.by_launch(store.samples(run_id, benchmark=PROGRAM))
    paths: list[Path] = []
    for name, result in found:
        tag = "" if len(found) == 1 else re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") + "_"
        paths += analysis.write_files(result, out_dir, tag)
        paths += save_drawings(figures.drawings(result, tag), out_dir)
    return paths
