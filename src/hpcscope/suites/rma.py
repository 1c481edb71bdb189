"""The rma suite: MPI one-sided latency and bandwidth (OSU 7.4's one-sided programs,
bench/mpi/rma.c) at each placement, in --repeat launches.

It plans like p2p and borrows p2p's pieces (placements, sizes, protocols, launch order
round-robin over MPI libraries and placements) rather than copying them. Each launch runs
the chosen tests between two ranks; with --pairs P > 1 the multi-pair tests (get_mbw,
get_multi_lat) get a launch of their own with 2P ranks, binding left to the launcher
(placement `default`: where the ranks ran is read from inside and reported).

Measuring to a precision (`precision`, `budget_s`, p2p's settings: suites/p2p_adaptive.py):
rma.c adds blocks at each size until the 95 % CI of their median is within the target or
the size's share of the budget is spent (`--size-budget-ms`). Unlike p2p no launches are
added: the run is its --repeat launches (rma has no follow_up), so the per-size share is
ONE_ROUND_SHARE of the budget, not p2p's first-rounds share. The default is OSU's fixed
counts, as p2p's (docs/rma.md says why).

Not offered (said here so that nobody looks for it): a validation pass (OSU 7.4 has none
for these programs either).
"""

from __future__ import annotations

from hpcscope.plan import placement as placement_mod
from hpcscope.plan.job import Job
from hpcscope.results.rma_tests import RMA_TESTS, TEST_NAMES, WINDOW_KINDS
from hpcscope.suites import osu_programs, p2p_adaptive
from hpcscope.suites.base import Note, PlanContext, SuitePlan
from hpcscope.suites.p2p import (
    DEFAULT_REPEAT,
    QUICK_REPEAT,
    check_protocol,
    figures_and_tables,
    parse_size_range,
    protocol_args,
)

PAIR_TESTS = tuple(t for t in TEST_NAMES if not RMA_TESTS[t].pairs)
DEFAULT_TESTS = TEST_NAMES  # all eleven: a 2-rank launch runs the pair ones with P = 1
SYNCS = ("auto", "lock", "flush", "flush_local", "lock_all", "fence", "pscw")
MAX_PAIRS = 64
# Open MPI 4.1's osc/rdma over the TCP BTL (what ob1 uses between nodes without UCX, as on
# the lab and the local SLURM) fails window creation: MPI_Win_allocate returns MPI_ERR_WIN
# (measured --on slurm --placements node; on one node with OMPI_MCA_osc=rdma
# OMPI_MCA_btl=tcp,self). Jobs across nodes leave it out, so the library picks osc/ucx or
# pt2pt; osc/ucx, chosen first where UCX is in use, is unaffected.
OPENMPI_ACROSS_NODES_ENV = {"OMPI_MCA_osc": "^rdma"}
# --precision: the budget's share for the blocks (warm-ups included); the rest covers each
# launch's start-up (p2p_adaptive.LAUNCH_START_S a launch, taken off first), windows made
# and freed per size, the looks, and the figures. Higher than p2p's BLOCK_SHARE (0.3),
# which keeps the rest for launches added later; rma adds none.
ONE_ROUND_SHARE = 0.6
ONE_SIZE = ("fop_latency", "cas_latency")  # one MPI_CHAR, whatever --sizes (rma.c size_list)


def check_tests(tests: list[str] | None) -> list[str]:
    tests = list(tests or DEFAULT_TESTS)
    if tests == ["all"]:
        return list(TEST_NAMES)
    unknown = [t for t in tests if t not in RMA_TESTS]
    if unknown:
        raise ValueError(
            f"unknown rma test(s) {', '.join(unknown)}; choose from {', '.join(TEST_NAMES)}, or all"
        )
    return tests


def check_sync(sync: str | None, tests: list[str]) -> str:
    """auto (each OSU program's default) or one sync every chosen test offers."""
    sync = sync or "auto"
    if sync not in SYNCS:
        raise ValueError(f"--sync '{sync}': choose {', '.join(SYNCS)}")
    refusing = [t for t in tests if sync != "auto" and sync not in RMA_TESTS[t].syncs]
    if refusing:
        offers = "; ".join(f"{t}: {', '.join(RMA_TESTS[t].syncs)}" for t in refusing)
        raise ValueError(
            f"--sync {sync}: OSU 7.4 has no such variant of {', '.join(refusing)} ({offers}); "
            "leave them out (--tests) or use --sync auto"
        )
    return sync


def check_window(window: str | None) -> str:
    window = window or "auto"
    if window not in WINDOW_KINDS:
        raise ValueError(
            f"--window '{window}': choose create, allocate, dynamic or auto (each OSU "
            "program's default: allocate; get_acc_latency create)"
        )
    return window


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    """opts: placements, cpus, sizes 'MIN:MAX' (default 1:4M), tests, sync, window, pairs,
    protocol, quick, repeat, precision (fraction|None: OSU's fixed counts unless budget_s
    is given; 0: fixed counts), budget_s (float|None)."""
    low, high = parse_size_range(opts.get("sizes") or "1:4M")
    if low < 1:
        raise ValueError(
            f"--sizes {opts.get('sizes')}: one-sided sizes start at 1 byte, as OSU's; e.g. 1:4M"
        )
    if high > 32 * 2**20 - 1:
        raise ValueError(
            f"--sizes {opts.get('sizes')}: at most 32M (a bandwidth window holds 64 messages)"
        )
    protocol = check_protocol(opts.get("protocol"))
    p2p_adaptive.refuse_with_osu(protocol, opts.get("precision"), opts.get("budget_s"))
    tests = check_tests(opts.get("tests"))
    sync = check_sync(opts.get("sync"), tests)
    window = check_window(opts.get("window"))
    pairs = int(opts.get("pairs") or 1)
    if not 1 <= pairs <= MAX_PAIRS:
        raise ValueError(f"--pairs {pairs}: give 1 to {MAX_PAIRS}")
    if opts.get("cpus") is not None and len(opts["cpus"]) != 2:
        raise ValueError(
            f"--cpus {','.join(map(str, opts['cpus']))}: rma's pair tests run two ranks, so "
            "give two CPUs, e.g. --cpus 0,7"
        )
    quick = bool(opts.get("quick"))
    repeat = opts.get("repeat") or (QUICK_REPEAT if quick else DEFAULT_REPEAT)
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    classes = opts.get("placements") or list(placement_mod.PLACEMENTS)
    placements = placement_mod.plan_placements(
        ctx.topology, classes, opts.get("cpus"), nodes_available=ctx.nodes_available
    )
    result = SuitePlan()
    usable = []
    for place in placements:
        if place.skipped:
            result.notes.append(
                Note(
                    "skipped", f"placement {place.name}: {place.skipped}", {"placement": place.name}
                )
            )
        else:
            usable.append(place)
    multi = [t for t in tests if RMA_TESTS[t].pairs]
    if multi and pairs > 1 and any(m.flavor == "smpi" for m in ctx.mpis):
        # the sim backend places a launch's ranks by its placement tag, for two ranks
        # (launch/sim.py planned_hosts), as for p2p's multi_lat
        result.notes.append(
            Note(
                "skipped",
                f"{', '.join(multi)} with {pairs} pairs skipped: {2 * pairs} ranks, and --on "
                "sim places a launch's two ranks by its placement; --pairs 1 runs there",
                {"tests": multi},
            )
        )
        tests = [t for t in tests if t not in multi]
        multi = []
    # 2P ranks on fewer hardware threads: run oversubscribed, with p2p's and coll's warning
    crowded = (
        placement_mod.max_ranks_check(ctx.topology, 2 * pairs, 1, True)
        if multi and pairs > 1
        else None
    )
    if crowded:
        result.notes.append(Note("warning", f"{', '.join(multi)}: {crowded}", {}))
    two_rank = [t for t in tests if not RMA_TESTS[t].pairs or pairs == 1]
    common = ["--sync", sync, "--window", window, "--min-size", str(low), "--max-size", str(high)]
    launches = len(usable) * bool(two_rank) + bool(multi and pairs > 1)
    adaptive = precision_args(opts, repeat, len(ctx.mpis) * launches, tests, (low, high), result)
    if quick and not adaptive:  # as p2p: the blocks adapt, the fixed counts do not apply
        common += ["--scale-iterations", "0.2"]
    common += adaptive
    for rep in range(1, repeat + 1):
        for mpi in ctx.mpis:
            tags = {"mpi": mpi.flavor, "mpi_version": mpi.version}
            if protocol == "osu":
                tags["protocol"] = "osu"
            binary = str(ctx.binary("rma", mpi))
            for place in usable if two_rank else []:
                result.jobs.append(
                    Job(
                        suite="rma",
                        name=f"{mpi.flavor}/{place.name}/r{rep}",
                        program=[binary, "--tests", ",".join(two_rank), *common]
                        + protocol_args(protocol),
                        mpi=mpi,
                        ranks=2,
                        cpus=place.cpus,
                        nodes=place.nodes,
                        env=across_nodes_env(mpi.flavor, place.nodes),
                        tags={**tags, "placement": place.name, "repeat": rep},
                        timeout_s=900,
                    )
                )
            if multi and pairs > 1:
                result.jobs.append(
                    Job(
                        suite="rma",
                        name=f"{mpi.flavor}/pairs{pairs}/r{rep}",
                        program=[binary, "--tests", ",".join(multi), *common]
                        + protocol_args(protocol),
                        mpi=mpi,
                        ranks=2 * pairs,
                        cpus=[],
                        nodes=1,
                        launcher_binding=True,
                        tags={**tags, "placement": placement_mod.DEFAULT, "repeat": rep}
                        | ({"oversubscribed": True} if crowded else {}),
                        oversubscribe=bool(crowded),
                        timeout_s=900,
                    )
                )
    if any(job.env for job in result.jobs):
        result.notes.append(
            Note(
                "info",
                "rma: Open MPI launches across nodes run with OMPI_MCA_osc=^rdma (Open MPI "
                "4.1's osc/rdma over TCP fails MPI_Win_allocate with MPI_ERR_WIN)",
                dict(OPENMPI_ACROSS_NODES_ENV),
            )
        )
    osu = [*("-w", window) * (window != "auto"), *("-s", sync) * (sync != "auto")]
    osu_programs.add(
        ctx,
        opts,
        "rma",
        tests,
        result,
        lambda _, path: [*osu_programs.program_args(low, high, path), *osu],
        lambda job: multi if "/pairs" in job.name else two_rank,
    )
    return result


def precision_args(
    opts: dict,
    repeat: int,
    configurations: int,
    tests: list[str],
    sizes: tuple[int, int],
    result: SuitePlan,
) -> list[str]:
    """rma.c's --precision and --size-budget-ms, with the plan's `precision` note; [] for
    OSU's fixed counts. p2p's settings and per-size share (p2p_adaptive), with every
    launch planned now: --repeat launches of each configuration."""
    adaptive = p2p_adaptive.settings(opts, bool(opts.get("quick")))
    if adaptive is None or configurations == 0:
        return []
    adaptive = {**adaptive, "min_launches": repeat, "max_launches": repeat}
    sized = [t for t in tests if t not in ONE_SIZE]
    per_launch = p2p_adaptive.sizes_per_launch(sized, *sizes) + len(tests) - len(sized)
    size_ms = p2p_adaptive.size_budget_ms(adaptive, configurations, per_launch, ONE_ROUND_SHARE)
    text = p2p_adaptive.plan_text(adaptive, configurations, size_ms)
    result.notes.append(Note("precision", f"rma: {text}", adaptive))
    return ["--precision", f"{adaptive['target']:g}", "--size-budget-ms", f"{size_ms:.1f}"]


def across_nodes_env(flavor: str, nodes: int) -> dict[str, str]:
    """The environment of a two-rank launch: Open MPI across nodes without osc/rdma."""
    return dict(OPENMPI_ACROSS_NODES_ENV) if flavor == "openmpi" and nodes > 1 else {}


def outputs(store, run_id: int, out_dir):
    """One figure per test (PNG+SVG) and the size x configuration tables."""
    from hpcscope.figures import rma as rma_figures

    return figures_and_tables(store, run_id, out_dir, "rma", rma_figures.write)
