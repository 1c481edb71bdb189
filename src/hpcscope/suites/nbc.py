"""The nbc suite: OSU 7.4's non-blocking collectives with their overlap measure, persistent
collectives and neighbourhood collectives, each beside its blocking counterpart, with
guideline checks (docs/nbc.md; the program is bench/mpi/nbc.c).

Launches per MPI library, ranks pinned as the coll suite pins them (coll.pin_ranks):
  - one for the non-blocking collectives and their blocking counterparts (the guideline
    compares I<coll> + MPI_Wait with <coll> measured in the same launch);
  - one per persistent collective: a library whose persistent collective fails ends only
    that launch (MPICH 4.0.2's persistent scatter at 3 ranks aborts in MPI_Wait, as
    osu_scatter_persistent does);
  - one for the neighbourhood collectives with MPI_Alltoallv on the same neighbours.

plan opts (all optional):
    collectives   list[str] | None   names (ibcast, bcast_persistent, neighbor_alltoall, ...)
                                     or families (nonblocking, persistent, neighborhood,
                                     all); default all; blocking counterparts are added
    sizes         str                'MIN:MAX' bytes (default 1:1M, OSU's; quick 1:4K)
    iterations    int | None         timed calls per size (default OSU's 1000 / 100 above
                                     8 KiB; quick 100 / 10)
    protocol      'hpcscope'|'osu'   osu: OSU 7.4's loops (ascending sizes, MPI_Wtime,
                                     barrier after each call)
    probes        int | None         MPI_Test calls inside the compute (OSU's -t; default 0)
    neighbor_dims, neighbor_radius   OSU's Cartesian neighbourhood (default 1, 1)
    precision     float | None       repeat each size's loops until the 95 % CI of the
                                     median is within it (coll's rule and budget,
                                     suites/coll_precision.py); default None: OSU's fixed
                                     counts, unless budget_s is given (then 1 %, quick 2 %)
    budget_s      float | None       the run's wall time (coll's default 300 s, quick 10 s)
    ranks, rank_layout, repeat, quick, validate   as for coll
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hpcscope.results.nbc_names import (
    FAMILIES,
    NAMES,
    NEIGHBORHOOD,
    NONBLOCKING,
    OPS,
    PERSISTENT,
    blocking_of,
)
from hpcscope.suites import coll, coll_precision, osu_programs, p2p_adaptive
from hpcscope.suites.base import Note, PlanContext, SuitePlan
from hpcscope.suites.p2p import check_protocol, parse_size_range

MAX_SIZE = 64 << 20  # the program's bound on --max-size (buffers of p x size)
QUICK_SIZES = "1:4K"
QUICK_ITERATIONS = 100
OSU_ITERATIONS = 1000  # OSU's count up to 8 KiB: the base of the cap to a precision


def adaptive_settings(opts: dict, quick: bool, iterations: int | None) -> dict | None:
    """coll's {target, budget_s, cap} for nbc, or None for the fixed counts: the default
    (OSU's counts, docs/nbc.md says why), --precision 0 and --protocol osu. --budget alone
    asks for the default target; a given --iterations is then the cap."""
    target = opts.get("precision")
    if target is None and opts.get("budget_s"):
        target = coll_precision.QUICK_PRECISION if quick else coll_precision.DEFAULT_PRECISION
    if not target or opts.get("protocol") == "osu":
        return None
    fixed = iterations or OSU_ITERATIONS
    return coll_precision.settings(
        {**opts, "precision": target, "repetitions": opts.get("iterations")}, quick, fixed
    )


def selected(given: list[str] | None) -> list[str]:
    """Names (families expanded, blocking counterparts added) in catalogue order."""
    wanted: set[str] = set()
    for item in given or ["all"]:
        if item == "all":
            wanted |= set(NAMES)
        elif item in FAMILIES:
            wanted |= set(FAMILIES[item])
        elif item in NAMES:
            wanted.add(item)
        else:
            raise ValueError(
                f"unknown collective '{item}'; give nonblocking, persistent, neighborhood, all "
                "or names such as ibcast, bcast_persistent, ineighbor_alltoall (docs/nbc.md)"
            )
    for name in list(wanted):
        base = blocking_of(name)
        if base:
            wanted.add(base)
    return [n for n in NAMES if n in wanted]


def groups(names: list[str]) -> list[tuple[str, list[str]]]:
    """(job label, collectives) per launch: the non-blocking ones with their blocking
    counterparts, each persistent collective with its blocking one (so each guideline
    compares values of the same launches), the neighbourhood ones together."""
    persistent = [n for n in names if n in PERSISTENT]
    nonblocking = [n for n in names if n in NONBLOCKING]
    wanted = {blocking_of(n) for n in nonblocking}
    alone = [n for n in names if n in OPS and (n in wanted or not persistent)]
    out = [("nonblocking", [n for n in names if n in nonblocking or n in alone])]
    out = out if out[0][1] else []
    out += [(n, [str(blocking_of(n)), n]) for n in persistent]
    nbr = [n for n in names if n in NEIGHBORHOOD]
    if nbr:
        out.append(("neighborhood", nbr))
    return out


def neighborhood_problem(ranks: int, dims: int, radius: int) -> str:
    """Why OSU's 1-D Cartesian neighbourhood cannot be built on these ranks; "" when it
    can or when only the program can tell (more dimensions: MPI_Dims_create decides)."""
    if dims == 1 and radius > (ranks - 1) // 2:
        return (
            f"neighbourhood collectives need at least {2 * radius + 1} ranks for radius "
            f"{radius} in 1 dimension (OSU's rule: no neighbour twice), this run has {ranks}; "
            "give --ranks 3 or more"
        )
    return ""


# What SimGrid's SMPI lacks, probed with its smpicc/smpirun (3.32, the one `build --mpi
# smpi` uses here): every MPI_I<coll> ran; MPI_Dist_graph_create_adjacent aborts the
# simulation ("Not yet implemented: PMPI_Dist_graph_create_adjacent"), so no neighbourhood
# collective can run; and it has no MPI_<Coll>_init (nbc's build check finds none).
SMPI_LACKS = {
    "neighborhood": "SimGrid's SMPI does not implement MPI_Dist_graph_create_adjacent "
    "(probed: the simulation aborts 'Not yet implemented'), so OSU's neighbourhood cannot "
    "be built",
    "persistent": "SimGrid's SMPI has no persistent collectives (no MPI_<Coll>_init)",
}


def without_smpi_gaps(ctx: PlanContext, names: list[str], notes: list[Note]) -> list[str]:
    """names without what SMPI cannot run, when the plan is for SMPI (--on sim), with a
    skipped note naming the reason."""
    if not any(m.flavor == "smpi" for m in ctx.mpis):
        return names
    for family, reason in SMPI_LACKS.items():
        gone = [n for n in names if n in FAMILIES[family]]
        if gone:
            names = [n for n in names if n not in gone]
            notes.append(Note("skipped", f"nbc --on sim: {reason}", {"collectives": gone}))
    return names


def _positive(opts: dict, key: str, default: int) -> int:
    value = opts.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{key.replace('_', '-')} must be a positive integer, got {value!r}")
    return value


def layout(ctx: PlanContext, opts: dict, notes: list[Note]) -> coll.Layout:
    """Ranks (default the cores, at least 2) pinned by the coll suite's rank layout."""
    per_node = coll.cores(ctx)
    nodes = max(1, int(ctx.nodes_available or 1))
    ranks = opts.get("ranks") or max(2, per_node * nodes)
    if not isinstance(ranks, int) or ranks < 2:
        raise ValueError(f"--ranks {ranks!r}: a collective needs at least 2 ranks")
    oversubscribe = ranks > per_node * nodes
    tags: dict[str, Any] = {"ranks": ranks}
    if oversubscribe:
        tags["oversubscribed"] = True
        notes.append(
            Note(
                "warning",
                f"nbc: {ranks} ranks on {per_node * nodes} cores: oversubscribed, so the "
                "times and the overlap are not meaningful (correctness only)",
                {"ranks": ranks, "cores": per_node * nodes},
            )
        )
    cpus, rank_layout = coll.pin_ranks(ctx, opts, ranks, nodes, oversubscribe, "nbc", notes)
    tags["rank_layout"] = rank_layout
    return coll.Layout(
        ranks,
        None,
        {},
        tags,
        oversubscribe,
        nodes,
        notes,
        cpus,
        launcher_binding=rank_layout == "default",
    )


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    notes: list[Note] = []
    quick = bool(opts.get("quick"))
    names = selected(opts.get("collectives"))
    low, high = parse_size_range(opts.get("sizes") or (QUICK_SIZES if quick else "1:1M"))
    low = max(low, 1)  # OSU's collectives start at 1 byte
    if high > MAX_SIZE:
        raise ValueError(f"--sizes: at most {MAX_SIZE >> 20}M (buffers hold p x the size)")
    protocol = check_protocol(opts.get("protocol"))
    p2p_adaptive.refuse_with_osu(protocol, opts.get("precision"), opts.get("budget_s"))
    iterations = opts.get("iterations")
    if iterations is not None and (not isinstance(iterations, int) or iterations < 1):
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
    if iterations is None and quick:
        iterations = QUICK_ITERATIONS
    probes = opts.get("probes") or 0
    if not isinstance(probes, int) or probes < 0:
        raise ValueError(f"--probes must be 0 or more, got {probes!r}")
    dims = _positive(opts, "neighbor_dims", 1)
    radius = _positive(opts, "neighbor_radius", 1)
    where = layout(ctx, opts, notes)
    names = without_smpi_gaps(ctx, names, notes)
    problem = neighborhood_problem(where.ranks, dims, radius)
    if problem:
        skipped = [n for n in names if n in NEIGHBORHOOD]
        names = [n for n in names if n not in NEIGHBORHOOD]
        if skipped:
            notes.append(Note("skipped", problem, {"collectives": skipped}))
    need = 3 * where.ranks * high * where.ranks  # 3 buffers of p x size on every rank
    from hpcscope.machine import environment

    available = environment.available_memory()
    if available and need > 0.8 * available:
        raise ValueError(
            f"--sizes up to {high} bytes on {where.ranks} ranks needs {need / 2**30:.1f} GiB "
            f"(3 buffers of ranks x size per rank), this machine has {available / 2**30:.1f} "
            "GiB available; lower the largest size"
        )
    args = ["--min-size", str(low), "--max-size", str(high), "--probes", str(probes)]
    args += ["--neighbor-dims", str(dims), "--neighbor-radius", str(radius)]
    adaptive = adaptive_settings(opts, quick, iterations)
    most = adaptive["cap"] if adaptive else iterations  # with --precision the cap
    if most:
        args += ["--iterations", str(most)]
    if iterations:  # warm-ups: a tenth of the fixed count, never of the cap
        args += ["--warmup", str(max(1, iterations // 10))]
    if protocol == "osu":
        args += ["--protocol", "osu"]
    else:  # ReproMPI's rule: a new random size order per launch, its seed in meta
        args += ["--order", "random", "--seed", "0"]
    if opts.get("validate") is False:
        args.append("--validate=0")
    result = SuitePlan(notes=notes)
    if adaptive:
        launches = len(coll.launches(ctx, opts)) * len(groups(names))
        args += coll_precision.program_args(adaptive, launches)
        result.notes.append(coll_precision.plan_note(adaptive, launches, "nbc"))
    for rep, mpi in coll.launches(ctx, opts):
        for label, group in groups(names):
            program = [str(ctx.binary("nbc", mpi)), "--collectives", ",".join(group), *args]
            job = where.job("nbc", f"nbc-{label}", program, mpi, rep, quick)
            if protocol == "osu":
                job.tags["protocol"] = "osu"
            result.jobs.append(job)
    cart = ["-N", f"cart:{dims}:{radius}"]  # OSU's Cartesian neighbourhood, as nbc's

    def osu_args(name: str, path: Path) -> list[str]:
        return osu_programs.program_args(low, high, path) + cart * ("neighbor_" in name)

    osu_programs.add(ctx, opts, "nbc", [n for g in groups(names) for n in g[1]], result, osu_args)
    return result


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """nbc_table.{csv,md,txt} (times and overlap per collective and size),
    nbc_guidelines.{csv,md,txt} (the verdicts) and the figures."""
    from hpcscope.analysis import nbc_analysis, tables
    from hpcscope.figures import nbc as figures
    from hpcscope.figures.common import save_drawings

    samples = store.samples(run_id, benchmark="nbc")
    rows = nbc_analysis.table(samples)
    if not rows:
        return []
    paths = tables.write_tables(rows, nbc_analysis.COLUMNS, out_dir, "nbc_table")
    verdicts = nbc_analysis.guidelines(samples)
    if verdicts:
        paths += tables.write_tables(
            verdicts, nbc_analysis.GUIDELINE_COLUMNS, out_dir, "nbc_guidelines"
        )
    return paths + save_drawings(figures.drawings(rows), out_dir)
