"""The lanes suite: can this system use several lanes at once? (Träff & Hunold, section 2)

Per MPI library two launches: `lane_pattern` (c elements per node and step over k
virtual lanes; factor t(1)/t(k)) and `multi_coll` (k concurrent lane MPI_Alltoalls;
t(k)/t(1)). Both need at least two nodes. On one machine without `node_size`, nodes of
ranks/2 are emulated (LANECOLL_NODE_SIZE; a note says so), so the benchmarks run, but
"lanes" then share one memory system: the numbers describe shared-memory concurrency,
not network rails.

plan opts (all optional): counts (list[int|str] | None), node_size (int | None), ranks
(int | None, default cores), repetitions (int | None), precision and budget_s (as coll's:
suites/coll_precision.py), quick (bool), validate (bool),
regular_only (bool), repeat (int | None: launches per library), lanes (list[int] | None:
the k to measure, default 1..ppn), defaults (a backend's, see coll.with_defaults);
collectives and algorithms are ignored.
"""

from __future__ import annotations

from pathlib import Path

from hpcscope.suites import coll as coll_suite
from hpcscope.suites.base import Note, PlanContext, SuitePlan

PROGRAMS = ("lane_pattern", "multi_coll")


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    opts = dict(opts)
    notes: list[Note] = []
    if opts.get("node_size") is None and max(1, int(ctx.nodes_available or 1)) == 1:
        ranks = opts.get("ranks") or coll_suite.cores(ctx)
        if not isinstance(ranks, int) or ranks < 2:
            raise ValueError(
                "the lanes suite needs at least 2 ranks (2 nodes of 1); pass ranks >= 2"
            )
        opts["node_size"] = max(1, ranks // 2)
        notes.append(
            Note(
                "info",
                f"lanes: one machine, so 2 nodes of {opts['node_size']} "
                "ranks are emulated (pass --node-size K to choose)",
                {"node_size": opts["node_size"]},
            )
        )
    opts = coll_suite.with_defaults(opts, notes)
    counts = coll_suite.count_spec(opts.get("counts")) or (
        coll_suite.QUICK_COUNTS if opts.get("quick") else None
    )
    reps, warmup = coll_suite.repetitions(opts)
    where = coll_suite.layout(ctx, opts, "lanes")
    per_node = where.node_size or max(1, where.ranks // max(1, where.nodes))
    too_many = [k for k in opts.get("lanes") or [] if k > per_node]
    if too_many:
        raise ValueError(
            f"--lanes {','.join(map(str, too_many))}: k virtual lanes need k ranks per node, "
            f"and a node has {per_node}; give k from 1 to {per_node}"
        )
    result = SuitePlan(notes=notes + where.notes)
    lanes = ["--lanes", ",".join(map(str, opts["lanes"]))] if opts.get("lanes") else []
    order = coll_suite.launches(ctx, opts)
    reps, precision_args = coll_suite.to_precision(
        opts, reps, len(order) * len(PROGRAMS), "lanes", result
    )
    for rep, mpi in order:
        for prog in PROGRAMS:
            program = [
                str(ctx.binary(prog, mpi)),
                *coll_suite.timing_args(reps, warmup, counts, opts),
                *precision_args,
                *lanes,
            ]
            result.jobs.append(where.job("lanes", prog, program, mpi, rep, bool(opts.get("quick"))))
    return result


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """lanes_table.{csv,md,txt}, for simulated runs on a preset lanes_paper_vs_simulation
    .{csv,md,txt}, and one figure pair per (MPI, benchmark, N, n)."""
    from hpcscope.analysis import paper_compare, tables, verdicts
    from hpcscope.figures import coll as figures
    from hpcscope.figures.common import save_drawings

    samples = [s for prog in PROGRAMS for s in store.samples(run_id, benchmark=prog)]
    rows = verdicts.lanes_table(samples)
    if not rows:
        return []
    paths = tables.write_tables(rows, tables.LANES_COLUMNS, out_dir, "lanes_table")
    paper = paper_compare.paper_vs_simulation(samples)  # simulated runs on a preset only
    if paper:
        paths += tables.write_tables(
            paper, paper_compare.COLUMNS, out_dir, "lanes_paper_vs_simulation"
        )
    return paths + save_drawings(figures.lanes_drawings(rows), out_dir)
