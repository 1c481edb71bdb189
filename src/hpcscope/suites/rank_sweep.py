"""What the startup and io suites share: one program launched at each rank count, for
every MPI library, `repeat` times, interleaved (repeats outermost, then rank counts, then
libraries) so that a slow period of a shared machine touches every configuration alike;
ranks where the launcher puts them (no binding options, the placement proof reports
them); counts above the cores run, tagged oversubscribed. And their output files: a
table in three forms and one figure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hpcscope.plan.job import Job
from hpcscope.suites.base import Note, PlanContext


def jobs(
    ctx: PlanContext,
    suite: str,
    program: str,
    args: list[str],
    counts: list[int],
    cores: int,
    repeat: int,
    nodes_of: Callable[[int], int],
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> list[Job]:
    """`program` with `args` at every rank count; nodes_of(ranks): nodes the ranks span."""
    out = []
    for rep in range(1, repeat + 1):
        for n in counts:
            for mpi in ctx.mpis:
                tags = {"mpi": mpi.flavor, "mpi_version": mpi.version, "repeat": rep, "ranks": n}
                if n > cores:
                    tags["oversubscribed"] = True
                out.append(
                    Job(
                        suite=suite,
                        name=f"{mpi.flavor}/{program}/np{n}/r{rep}",
                        program=[str(ctx.binary(program, mpi)), *args],
                        mpi=mpi,
                        ranks=n,
                        nodes=nodes_of(n),
                        env=dict(env or {}),
                        tags=tags,
                        timeout_s=timeout_s,
                        oversubscribe=n > cores,
                        launcher_binding=True,
                    )
                )
    return out


def oversubscribed(suite: str, counts: list[int], cores: int, means: str) -> list[Note]:
    """The warning for the counts above the cores (none when there are none)."""
    over = [n for n in counts if n > cores]
    if not over:
        return []
    text = f"{suite}: {', '.join(map(str, over))} ranks on {cores} cores: oversubscribed "
    return [Note("warning", text + f"(marked so){means}", {"ranks": over, "cores": cores})]


def write_outputs(rows: list[dict], columns: list, drawing, out_dir: Path, stem: str) -> list[Path]:
    """<stem>.{csv,md,txt} of the rows and the drawing's PNG and SVG; nothing without rows."""
    from hpcscope.analysis import tables
    from hpcscope.figures.common import save_drawings

    if not rows:
        return []
    paths = tables.write_tables(rows, columns, out_dir, stem)
    return paths + save_drawings([drawing(rows)], out_dir)
