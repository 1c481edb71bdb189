"""The startup suite: how long an MPI job takes to start (OSU 7.4 osu_init, osu_hello).

Per MPI library and rank count, `--repeat` launches of bench/mpi/startup, interleaved
(repeats outermost, then rank counts, then libraries) so a slow period of the machine
touches every configuration alike. Each launch gives MPI_Init per rank (the OSU min, max
and mean over ranks come from these), the time from the launch to every rank's hello
(HPCSCOPE_LAUNCH_EPOCH, launch/epoch.py) and the harness's own wall time around mpirun or
srun (local, lab and sim backends). Start-up varies a lot between launches, so the views
report the median over launches and their spread (analysis/startup_rows.py).

Ranks are left where the launcher puts them (no binding options): that is the start-up a
user gets, and the placement proof reports where they ran. A rank count above the cores
is run, marked oversubscribed (start-up with more processes than cores is a real case:
the numbers then include the wait for a core).

plan opts (all optional): rank_counts (list[int]; default powers of two up to the cores
of the nodes, and the cores themselves), repeat (launches, default 5, --quick 3), quick.
"""

from __future__ import annotations

from pathlib import Path

from hpcscope.launch import epoch
from hpcscope.suites import coll as coll_suite
from hpcscope.suites import osu_programs, rank_sweep
from hpcscope.suites.base import Note, PlanContext, SuitePlan

DEFAULT_REPEAT, QUICK_REPEAT = 5, 3
JOB_LIMIT_S = 300  # one launch of a trivial program; a start-up over 5 minutes is a hang


def default_counts(total: int) -> list[int]:
    """1, 2, 4, ... up to `total`, and `total` itself when it is not a power of two."""
    counts = [1 << i for i in range(total.bit_length()) if 1 << i <= total]
    return counts + ([total] if counts[-1] != total else [])


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    nodes = max(1, int(ctx.nodes_available or 1))
    cores = coll_suite.cores(ctx) * nodes
    simulated = any(m.flavor == "smpi" for m in ctx.mpis)
    per_node = coll_suite.cores(ctx)
    if simulated:  # whole simulated nodes of --ppn ranks (the sim backend's hostfile)
        counts = opts.get("rank_counts") or [per_node * k for k in default_counts(nodes)]
        odd = [n for n in counts if n % per_node or n > cores]
        if odd:
            raise ValueError(
                f"--ranks {','.join(map(str, odd))}: --on sim places whole nodes of --ppn "
                f"{per_node} ranks, at most {cores}; give multiples of {per_node} (or --ppn 1)"
            )
    else:
        counts = opts.get("rank_counts") or default_counts(cores)
    if not all(isinstance(n, int) and n >= 1 for n in counts):
        raise ValueError(f"--ranks {counts}: give positive whole numbers, e.g. 1,2,4")
    repeat = opts.get("repeat") or (QUICK_REPEAT if opts.get("quick") else DEFAULT_REPEAT)
    result = SuitePlan()
    result.notes += rank_sweep.oversubscribed(
        "startup", counts, cores, "; their start-up includes waiting for a core"
    )
    result.notes.append(
        Note(
            "info",
            "startup: MPI_Init per rank on CLOCK_MONOTONIC; hello = launch (harness clock "
            "just before mpirun/srun) to the last rank's hello on CLOCK_REALTIME"
            + (
                "; simulated: SMPI's clock, which charges no process start-up, so the "
                "numbers say what the simulator models, not a machine's start-up"
                if simulated
                else ""
            ),
        )
    )
    result.jobs = rank_sweep.jobs(
        ctx,
        "startup",
        "startup",
        [],
        counts,
        cores,
        repeat,
        (lambda n: -(-n // per_node)) if simulated else (lambda n: min(nodes, n)),
        JOB_LIMIT_S,
        {epoch.VARIABLE: epoch.PENDING},
    )
    osu_programs.add(ctx, opts, "startup", osu_programs.STARTUP, result, lambda _, p: [])
    return result


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """startup_table.{csv,md,txt} and the figure startup_time.{png,svg}."""
    from hpcscope.analysis import startup_rows
    from hpcscope.figures import startup_io

    rows = startup_rows.rows(store.samples(run_id, benchmark="startup"))
    return rank_sweep.write_outputs(
        rows, startup_rows.COLUMNS, startup_io.startup_drawing, out_dir, "startup_table"
    )
