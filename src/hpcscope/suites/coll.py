"""The coll suite: native MPI collectives against lanecoll's lane and hier mock-ups, with
performance-guideline verdicts (Träff & Hunold; docs/records.md).

One launch per MPI library of the `coll` program (bench/mpi/coll.c), ranks = cores by
default. On one machine, `node_size` K emulates nodes of K consecutive ranks through
lanecoll's LANECOLL_NODE_SIZE (the job is tagged emulated_nodes): the decomposition into
node and lane communicators is then the multi-node one, although every message still
travels through shared memory, so "lanes" are not physical network lanes.

plan opts (all optional):
    collectives   list[str] | None   default all (the ten regular ones, allgatherv,
                                     gatherv, scatterv, and the native-only barrier,
                                     alltoallv, alltoallw, reduce_scatter); unknown
                                     names -> ValueError
    algorithms    list[str] | None   default native, lane, hier, lane_v (lane_v: lane with
                                     the vector node collectives, bcast/reduce/allreduce/
                                     scan/exscan only; tuned: MPI_<Coll>, only meaningful
                                     under liblanecoll_pmpi.so)
    interleave    bool               algorithms in turn within each repetition
    counts        list[int|str]|None  MPI counts; "10p" = 10 x ranks; None: the program's
                                     sweep (quick: 1p..1000p)
    node_size     int | None         emulated node size K (LANECOLL_NODE_SIZE)
    ranks         int | None         default: cores of this machine (x nodes on clusters)
    repetitions   int | None         a fixed count (default 100, quick 20); with precision
                                     the most repetitions (default 10x the fixed count)
    precision     float | None       target half-width of each median's 95 % CI (default
                                     0.01, quick 0.02; 0: the fixed count), see
                                     suites/coll_precision.py
    budget_s      float | None       the run's wall time (default 300, quick 10)
    quick         bool               fewer counts and repetitions
    validate      bool               default True: untimed comparison with native
    regular_only  bool               a node size that does not divide ranks -> ValueError
    repeat        int | None         launches per MPI library (default 1), round-robin over
                                     the libraries so a slow phase does not bias one
    defaults      dict | None        a backend's defaults for what the command line left
                                     out (sim: the paper's collectives, algorithms,
                                     repetitions), see with_defaults
    job_per_collective  bool         one launch per collective (sim) instead of one for all
    npmin         int | None         IMB-MPI1's -npmin K: everything on K, 2K, 4K, ...
                                     ranks and finally all of them, in one launch (the
                                     samples' params p says how many)
    protocol      str | None         hpcscope (default) or osu: OSU 7.4's loop (fixed
                                     iterations, one value per rank; suites/coll_osu.py),
                                     algorithms then default to native
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpcscope.machine import environment
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan import placement as placement_mod
from hpcscope.plan.job import Job
from hpcscope.suites import coll_osu, coll_precision, osu_programs
from hpcscope.suites.base import Note, PlanContext, SuitePlan


def catalog_names(ctx: PlanContext) -> tuple[list[str], list[str], list[str]]:
    """(collectives, algorithms the build has, extra callables such as `tuned`), read from
    the built coll program (`coll --list-algorithms`, generated from lanecoll's catalogue),
    never from a list kept here."""
    if ctx.catalog is None or not ctx.mpis:
        raise ValueError("the coll suite needs a built coll program (hpcscope build)")
    catalog = ctx.catalog(ctx.mpis[0])
    colls = [c["name"] for c in catalog["collectives"]]
    algs: list[str] = []
    for c in catalog["collectives"]:
        algs += [a["variant"] for a in c["algorithms"] if a["variant"] not in algs]
    return colls, algs, [e["variant"] for e in catalog.get("extra_algorithms", [])]


DEFAULT_REPS, QUICK_REPS = 100, 20
DEFAULT_WARMUP, QUICK_WARMUP = 5, 2
QUICK_COUNTS = "1p:1000p:10"
_COUNT = re.compile(r"^\d+[pP]?$|^[pP]$")


def cores(ctx: PlanContext) -> int:
    """Cores of one node the plan is for: the simulated node on --on sim, else this one."""
    if ctx.cores_per_node:
        return ctx.cores_per_node
    topo = ctx.topology
    return len(getattr(topo, "cores", []) or []) or len(getattr(topo, "pus", []) or []) or 1


def count_spec(counts: list | None) -> str | None:
    """['1p', 64] -> '1p,64' for the programs' --counts; None stays None."""
    if not counts:
        return None
    items = [str(c).strip() for c in counts]
    bad = [c for c in items if not _COUNT.match(c)]
    if bad:
        raise ValueError(
            f"counts {bad} are not counts; give integers, optionally with a p "
            "suffix meaning times the number of ranks (e.g. 1p, 100p, 4096)"
        )
    return ",".join(items)


MAX_BYTES_PER_PROCESS = 1 << 30  # the coll program's --max-bytes default, passed explicitly
_ROOTED_OR_BLOCK = {
    "gather": (1, "p"),
    "allgather": (1, "p"),
    "scatter": ("p", 1),
    "reduce_scatter_block": ("p", 1),
    "alltoall": ("p", "p"),
    "allgatherv": ("p", "p"),  # vector: any rank's block may reach p x the mean count
    "gatherv": ("p", "p"),
    "scatterv": ("p", "p"),
    "alltoallv": ("p", "p"),  # irregular blocks, p x the mean count each way
    "alltoallw": ("p", "p"),
    "reduce_scatter": ("p", "p"),
    "bcast": (0, 1),
    "barrier": (0, 0),
}  # (send, receive) elements per count; others (1, 1)


def buffer_bytes(collective: str, count: int, ranks: int, validate: bool) -> int:
    """Bytes of MPI_INT buffers one process needs, as bench/mpi/coll_catalog.h sizes them
    (validation keeps a second receive buffer)."""
    send, recv = _ROOTED_OR_BLOCK.get(collective, (1, 1))
    elems = {0: 0, 1: count, "p": count * ranks}
    return (elems[send] + elems[recv] * (2 if validate else 1)) * 4


def _largest_counts(counts: str | None, ranks: int) -> list[tuple[str, int]]:
    """(as written, elements) of every count item; a sweep FROM:TO[:F] by its end, no
    counts by the program's own sweep's end (10000p, or 10000 per process for block
    collectives: the larger, 10000p, stands for both)."""
    out = []
    for item in (counts or "10000p").split(","):
        item = item.split(":")[1] if ":" in item else item
        out.append((item, int(item[:-1]) * ranks if item.endswith("p") else int(item)))
    return out


def buffers_fit(colls: list[str], counts: str | None, ranks: int) -> bool:
    """Whether every rank's own validated buffers fit in 80 % of the available memory."""
    available = environment.available_memory()
    need = max(
        buffer_bytes(coll, count, ranks, True) * ranks
        for coll in colls
        for _, count in _largest_counts(counts, ranks)
    )
    return not available or need <= 0.8 * available


# Collectives whose SMPI algorithms hold a temporary of the whole count in every simulated
# rank (reduction buffers), which shared malloc does not share: at 1152 ranks an
# MPI_Allreduce of 11.52 M ints needs 1152 x 46 MB = 53 GB, and the simulator was killed
# by the kernel at 22.6 GB on this 24 GiB machine.
SIM_REDUCTIONS = (
    "reduce",
    "allreduce",
    "reduce_scatter_block",
    "reduce_scatter",
    "scan",
    "exscan",
)
SIM_ELEMENT_BYTES = 4  # MPI_INT


def simulator_memory_problem(colls: list[str], counts: str | None, ranks: int) -> str:
    """Why simulated reductions of these counts cannot fit in 80 % of the available memory
    (their per-rank temporaries); "" when they fit."""
    available = environment.available_memory()
    reductions = [c for c in colls if c in SIM_REDUCTIONS]
    if not available or not reductions:
        return ""
    for item, count in _largest_counts(counts, ranks):
        need = count * SIM_ELEMENT_BYTES * ranks
        if need > 0.8 * available:
            return (
                f"{reductions[0]} count {item} on {ranks} simulated ranks: SimGrid's reduction "
                f"algorithms keep a temporary of the count in every rank, {need / 2**30:.0f} "
                f"GiB in all, but this machine has {available / 2**30:.0f} GiB available"
            )
    return ""


def check_memory(colls: list[str], counts: str | None, ranks: int, validate: bool) -> None:
    """Refuse explicit counts before anything runs when their buffers exceed the per-process
    limit or, summed over the ranks of this machine, most of its available memory."""
    if not counts:
        return  # the program's own sweep drops sizes over the limit and says so
    available = environment.available_memory()
    for item, count in _largest_counts(counts, ranks):
        for coll in colls:
            need = buffer_bytes(coll, count, ranks, validate)
            if need > MAX_BYTES_PER_PROCESS:
                raise ValueError(
                    f"{coll} count {item} on {ranks} ranks needs {need / 2**20:.0f} MiB of "
                    f"buffers per process, above the limit of {MAX_BYTES_PER_PROCESS >> 20} "
                    "MiB; lower --counts (or measure fewer ranks)"
                )
            if available and need * ranks > 0.8 * available:
                raise ValueError(
                    f"{coll} count {item} needs {need * ranks / 2**30:.1f} GiB over {ranks} "
                    f"ranks but this machine has {available / 2**30:.1f} GiB available; "
                    "lower --counts"
                )


@dataclass
class Layout:
    """Where the ranks of a coll or lanes job go: the part of the plan both suites share."""

    ranks: int
    node_size: int | None  # emulated node size (LANECOLL_NODE_SIZE), None: real nodes
    env: dict[str, str]
    tags: dict[str, Any]
    oversubscribe: bool
    nodes: int  # nodes the job spans
    notes: list[Note]
    cpus: list[int] | None = None  # CPU per rank (rank layout), None: not pinned by us
    launcher_binding: bool = False  # rank layout `default`: no binding options at all

    def job(
        self, suite: str, program_name: str, program: list[str], mpi: MpiSpec, rep: int, quick: bool
    ) -> Job:
        """One launch of `program` (named after program_name) with this layout."""
        size = f"-ns{self.node_size}" if self.node_size else ""
        return Job(
            suite=suite,
            name=f"{mpi.flavor}/{program_name}/np{self.ranks}{size}/r{rep}",
            program=program,
            mpi=mpi,
            ranks=self.ranks,
            nodes=self.nodes,
            env=dict(self.env),
            tags=dict(self.tags, mpi=mpi.flavor, mpi_version=mpi.version, repeat=rep),
            timeout_s=900 if quick else 3600,
            oversubscribe=self.oversubscribe,
            cpus=list(self.cpus) if self.cpus else None,
            launcher_binding=self.launcher_binding,
        )


def layout(ctx: PlanContext, opts: dict, suite: str) -> Layout:
    """Ranks, node size, env, tags, oversubscription and notes of a coll/lanes plan."""
    notes: list[Note] = []
    per_node = cores(ctx)
    real_nodes = max(1, int(ctx.nodes_available or 1))
    ranks = opts.get("ranks") or per_node * real_nodes
    if not isinstance(ranks, int) or ranks < 1:
        raise ValueError(f"ranks must be a positive integer, got {ranks!r}")
    node_size = opts.get("node_size")
    env: dict[str, str] = {}
    tags: dict[str, Any] = {"ranks": ranks}
    if node_size is not None:
        if not isinstance(node_size, int) or node_size < 1 or node_size > ranks:
            raise ValueError(
                f"node_size must be between 1 and the ranks ({ranks}), got {node_size!r}"
            )
        full, rest = divmod(ranks, node_size)
        if rest:
            text = (
                f"node size {node_size} does not divide {ranks} ranks: the decomposition "
                f"is irregular ({full} node(s) of {node_size} and one of {rest}); lane "
                "algorithms that need a regular communicator fall back to native and "
                "are reported as not timed"
            )
            if opts.get("regular_only"):
                raise ValueError(
                    text + "; choose a node size dividing the ranks or drop regular_only"
                )
            notes.append(Note("warning", text, {"node_size": node_size, "ranks": ranks}))
        env["LANECOLL_NODE_SIZE"] = str(node_size)
        tags.update({"emulated_nodes": True, "node_size": node_size})
        notes.append(
            Note(
                "info",
                f"{suite}: {ranks} ranks as {full + (1 if rest else 0)} "
                f"emulated node(s) of {node_size} (LANECOLL_NODE_SIZE={node_size}); "
                "all traffic still goes through this machine's memory",
                {"node_size": node_size},
            )
        )
    elif real_nodes == 1:
        notes.append(
            Note(
                "info",
                f"{suite}: all {ranks} ranks on one node; the lane/hier "
                "decompositions are then node-local. Use --node-size K to emulate "
                "several nodes",
                {"ranks": ranks},
            )
        )
    oversubscribe = ranks > per_node * real_nodes
    if oversubscribe:
        notes.append(
            Note(
                "warning",
                f"{suite}: {ranks} ranks on {per_node * real_nodes} "
                "cores: oversubscribed, so timings are not meaningful (correctness "
                "only; MPICH busy-polls)",
                {"ranks": ranks, "cores": per_node},
            )
        )
        tags["oversubscribed"] = True
    cpus, rank_layout = pin_ranks(ctx, opts, ranks, real_nodes, oversubscribe, suite, notes)
    tags["rank_layout"] = rank_layout
    return Layout(
        ranks,
        node_size,
        env,
        tags,
        oversubscribe,
        real_nodes,
        notes,
        cpus,
        launcher_binding=rank_layout == "default",
    )


def pin_ranks(
    ctx: PlanContext,
    opts: dict,
    ranks: int,
    nodes: int,
    oversubscribe: bool,
    suite: str,
    notes: list[Note],
) -> tuple[list[int] | None, str]:
    """(CPU per rank, the rank_layout tag) for --rank-layout (default alternate: rank i of a
    node on socket i mod S, as the paper pinned its lane benchmarks). "unpinned" when
    hpcscope cannot pin: more ranks than cores, ranks not dividing over the nodes, or a
    backend whose nodes share this machine's CPUs or have none (opts pin_ranks False)."""
    wanted = opts.get("rank_layout") or "alternate"
    if wanted not in placement_mod.RANK_LAYOUTS:
        raise ValueError(
            f"--rank-layout {wanted!r} is not a rank layout: choose "
            f"{', '.join(placement_mod.RANK_LAYOUTS)}"
        )
    if wanted == "default" or opts.get("pin_ranks") is False:
        return None, ("default" if wanted == "default" else "unpinned")
    per_node = ranks // nodes if ranks % nodes == 0 else None
    local = (
        placement_mod.rank_layout_cpus(ctx.topology, per_node, wanted)
        if per_node and not oversubscribe
        else None
    )
    if local is None:
        notes.append(
            Note(
                "info",
                f"{suite}: ranks not pinned ({ranks} ranks on {nodes} node(s) of "
                f"{cores(ctx)} cores): rank layout {wanted} needs at most one rank per "
                "core and the same number of ranks on every node",
                {"rank_layout": wanted},
            )
        )
        return None, "unpinned"
    sockets = len(ctx.topology.packages)
    if wanted == "alternate" and sockets > 1:
        notes.append(
            Note(
                "info",
                f"{suite}: rank i of each node pinned on socket i mod {sockets} "
                f"(--rank-layout alternate): CPUs {','.join(map(str, local))} per node",
                {"rank_layout": wanted, "cpus": local},
            )
        )
    return local * nodes, wanted


def repetitions(opts: dict) -> tuple[int, int]:
    quick = bool(opts.get("quick"))
    reps = opts.get("repetitions") or (QUICK_REPS if quick else DEFAULT_REPS)
    if not isinstance(reps, int) or reps < 1:
        raise ValueError(f"repetitions must be a positive integer, got {reps!r}")
    warmup = opts.get("warmup")  # a backend's own (sim: 1), else the machine's rule
    return reps, warmup if warmup is not None else QUICK_WARMUP if quick else DEFAULT_WARMUP


def to_precision(
    opts: dict, reps: int, launch_count: int, suite: str, result: SuitePlan
) -> tuple[int, list[str]]:
    """The repetitions to pass (the cap when measuring to a precision) and the programs'
    precision arguments; the plan's note says what it aims for (suites/coll_precision)."""
    adaptive = coll_precision.settings(opts, bool(opts.get("quick")), reps)
    if adaptive is None:
        return reps, []
    result.notes.append(coll_precision.plan_note(adaptive, launch_count, suite))
    return adaptive["cap"], coll_precision.program_args(adaptive, launch_count)


def timing_args(reps: int, warmup: int, counts: str | None, opts: dict) -> list[str]:
    """The arguments the coll, lane_pattern and multi_coll programs share."""
    args = ["--repetitions", str(reps), "--warmup", str(warmup)]
    if counts:
        args += ["--counts", counts]
    if opts.get("validate") is False:
        args.append("--validate=0")
    return args


def launches(ctx: PlanContext, opts: dict) -> list[tuple[int, Any]]:
    """(repeat number, MPI) in launch order: repeats outermost, libraries round-robin."""
    repeat = opts.get("repeat") or 1
    if not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive integer, got {repeat!r}")
    return [(rep, mpi) for rep in range(1, repeat + 1) for mpi in ctx.mpis]


def _names(given: list | None, valid: tuple[str, ...], what: str) -> list[str]:
    names = list(given) if given else list(valid)
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; valid: {', '.join(valid)}")
    return names


def with_defaults(opts: dict, notes: list[Note]) -> dict:
    """opts with the backend's defaults (`defaults`, from the sim backend) for what the
    command line left out, and a note naming them; unchanged without such defaults."""
    defaults = opts.get("defaults") or {}
    used = {key: value for key, value in defaults.items() if not opts.get(key)}
    if used:
        said = "; ".join(
            f"{key} {', '.join(map(str, v)) if isinstance(v, list) else v}"
            for key, v in used.items()
        )
        notes.append(
            Note(
                "info",
                f"simulated: the paper's experiments by default ({said}); choose others "
                f"with {', '.join('--' + key for key in used)}",
                dict(used),
            )
        )
    return {**opts, **used}


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    notes: list[Note] = []
    opts = with_defaults(opts, notes)
    protocol = coll_osu.protocol(opts)
    known_colls, known_algs, extra = catalog_names(ctx)
    colls = _names(opts.get("collectives"), tuple(known_colls), "collective(s)")
    algs = (
        _names(opts.get("algorithms"), tuple(known_algs + extra), "algorithm(s)")
        if opts.get("algorithms")
        else ["native"]
        if protocol == "osu"  # OSU measures the library's own collectives
        else known_algs
    )
    if protocol == "osu":
        osu_counts = coll_osu.QUICK_COUNTS if opts.get("quick") else coll_osu.COUNTS
        opts = {**opts, "precision": 0, "count_sweep": osu_counts}
    reps, warmup = repetitions(opts)
    where = layout(ctx, opts, "coll")
    if opts.get("npmin") is not None and any(m.flavor == "smpi" for m in ctx.mpis):
        raise ValueError(NPMIN_ON_SIM)
    npmin_args = rank_sweep(opts.get("npmin"), where.ranks, where.notes)
    # One job for all collectives, or one per collective (sim: each its own count sweep,
    # memory check and time limit, so a reduction's limit does not cut a bcast's sweep).
    groups = [[c] for c in colls] if opts.get("job_per_collective") else [colls]
    shaped = [(group, *job_counts(group, opts, where)) for group in groups]
    result = SuitePlan(notes=notes + where.notes)
    order = launches(ctx, opts)
    reps, precision_args = to_precision(opts, reps, len(order) * len(groups), "coll", result)
    if protocol == "osu":
        precision_args = coll_osu.program_args(opts)
        result.notes.append(
            coll_osu.plan_note(count_spec(opts.get("counts")) or opts["count_sweep"])
        )
    for rep, mpi in order:
        for group, counts, job_opts in shaped:
            program = [
                str(ctx.binary("coll", mpi)),
                "--collectives",
                ",".join(group),
                "--algorithms",
                ",".join(algs),
                "--max-bytes",
                str(MAX_BYTES_PER_PROCESS),
                *timing_args(reps, warmup, counts, job_opts),
                *precision_args,
            ]
            if opts.get("interleave"):
                program.append("--interleave")
            program += npmin_args
            name = "coll" if len(groups) == 1 else f"coll-{group[0]}"
            job = where.job("coll", name, program, mpi, rep, bool(opts.get("quick")))
            if protocol == "osu":
                job.tags["protocol"] = "osu"  # the hpcscope protocol's tags stay as before
            result.jobs.append(job)
    span = osu_programs.count_range(shaped[0][1] if shaped else None)  # OSU's -m: the bytes
    osu_programs.add(
        ctx,
        opts,
        "coll",
        colls,
        result,
        lambda _, p: osu_programs.program_args(*span, p) if span else [],
    )
    return result


# Probed with SimGrid 3.32 (hydra:nodes=2,cores_per_socket=2, native allreduce, --npmin 2):
# the simulation aborts in the first level's communicator ("Actor pid=-1 is gone??",
# smpi_request.cpp), so the sweep is refused on sim rather than planned to fail.
NPMIN_ON_SIM = (
    "--npmin on --on sim: SimGrid's SMPI aborts on the sweep's sub-communicators "
    "(probed with SimGrid 3.32: 'Actor pid=-1 is gone??'); drop --npmin, or run the sweep "
    "on this machine, the lab or SLURM"
)


def rank_sweep(npmin: int | None, ranks: int, notes: list[Note]) -> list[str]:
    """The program's --npmin for IMB-MPI1's process-count sweep (K, 2K, 4K, ..., all
    ranks), with a note naming the rank counts; [] without it. ValueError outside 1..ranks."""
    if npmin is None:
        return []
    if not isinstance(npmin, int) or not 1 <= npmin <= ranks:
        raise ValueError(
            f"--npmin {npmin!r}: give a rank count from 1 to the run's {ranks} ranks "
            "(IMB-MPI1's -npmin: K, 2K, 4K, ... and finally all ranks)"
        )
    counts = []
    k = npmin
    while k < ranks:
        counts.append(k)
        k *= 2
    counts.append(ranks)
    notes.append(
        Note(
            "info",
            f"coll: every collective on {', '.join(map(str, counts))} ranks in turn (--npmin "
            f"{npmin}, IMB-MPI1's process-count sweep), the first ranks of the launch; the "
            "others wait",
            {"npmin": npmin, "rank_counts": counts},
        )
    )
    return ["--npmin", str(npmin)]


def job_counts(colls: list[str], opts: dict, where: Layout) -> tuple[str | None, dict]:
    """The --counts of one job of these collectives and its opts (validate may turn off):
    explicit counts that cannot fit are refused (ValueError), a default sweep that would
    exhaust the simulator ends earlier; both add a note to where.notes."""
    counts = (
        count_spec(opts.get("counts"))
        or opts.get("count_sweep")
        or (QUICK_COUNTS if opts.get("quick") else None)
    )
    validate = opts.get("validate") is not False
    if validate and opts.get("shareable_buffers") and not buffers_fit(colls, counts, where.ranks):
        # A backend that shares unvalidated buffers (SimGrid) runs what memory would not
        # hold, without the untimed check against native.
        opts = {**opts, "validate": False}
        where.notes.append(
            Note(
                "info",
                f"coll ({', '.join(colls)}): the buffers of these counts do not fit in memory "
                "once per rank, so the simulated ranks share them and the check against "
                "native is skipped",
                {"ranks": where.ranks, "counts": counts, "collectives": colls},
            )
        )
    elif not opts.get("shareable_buffers"):
        check_memory(colls, counts, where.ranks, validate)
    if opts.get("shareable_buffers"):
        problem = simulator_memory_problem(colls, counts, where.ranks)
        if problem and counts is None:
            # The program's own sweep (1p..10000p) would end in a killed simulation: end it
            # at 1000p, where the reductions fit, and say so; explicit counts are refused.
            counts = QUICK_COUNTS
            where.notes.append(
                Note(
                    "info",
                    f"coll: the count sweep ends at 1000p, not 10000p: {problem}",
                    {"ranks": where.ranks, "counts": counts},
                )
            )
            problem = simulator_memory_problem(colls, counts, where.ranks)
        if problem:
            raise ValueError(
                problem + "; lower --counts or simulate fewer nodes (--platform NAME:nodes=N)"
            )
    return counts, opts


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """coll_table.{csv,md,txt} in the paper's shape, coll_by_ranks.{csv,md,txt} and
    coll_ranks_*.png/svg for a process-count sweep (--npmin), coll_not_timed.csv (fallbacks),
    coll_*.png/svg figures, and for simulated runs on Hydra
    coll_paper_vs_simulation.{csv,md,txt}."""
    import csv

    from hpcscope import safe_write
    from hpcscope.analysis import paper_colls, tables, verdicts
    from hpcscope.figures import coll as figures
    from hpcscope.figures.common import save_drawings
    from hpcscope.formatting import csv_cell

    samples = store.samples(run_id, benchmark="coll")
    rows = verdicts.coll_table(samples)
    if not rows:
        return []
    columns = tables.coll_columns(rows)
    paths = tables.write_tables(rows, columns, out_dir, "coll_table")
    by_ranks = verdicts.ranks_table(rows)  # --npmin: IMB's table by rank count
    if by_ranks:
        paths += tables.write_tables(
            verdicts.flat_ranks(by_ranks),
            verdicts.ranks_columns(by_ranks),
            out_dir,
            "coll_by_ranks",
        )
    paper = paper_colls.paper_vs_simulation(samples)  # simulated runs on Hydra only
    if paper:
        paths += tables.write_tables(
            paper, paper_colls.COLUMNS, out_dir, "coll_paper_vs_simulation"
        )
    not_timed = [
        s for s in store.summaries(run_id) if s.get("metric") in ("fallback", "unavailable")
    ]
    if not_timed:
        extra = out_dir / "coll_not_timed.csv"
        with safe_write.open_for_write(extra, newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["collective", "algorithm", "count", "why"])
            for s in not_timed:
                prm = s.get("params", {})
                writer.writerow(
                    [
                        csv_cell(v)
                        for v in (
                            prm.get("collective"),
                            prm.get("algorithm"),
                            prm.get("count"),
                            str(s.get("reason", "")),
                        )
                    ]
                )
        paths.append(extra)
    drawings = figures.coll_drawings(rows) + figures.ranks_drawings(by_ranks)
    return paths + save_drawings(drawings, out_dir)
