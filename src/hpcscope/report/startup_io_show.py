"""`hpcscope show` for the startup and io suites: their tables (analysis/startup_rows.py,
analysis/io_rows.py) as aligned text, with what each number means in one line."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape


def print_suites(samples: list[dict], console: Console) -> None:
    from hpcscope.analysis import startup_rows, tables

    start = [s for s in samples if s["benchmark"] == "startup"]
    rows = startup_rows.rows(start)
    if rows:
        console.print(
            "[bold]startup[/bold]: median over launches (min..max of the launches); MPI_Init "
            "per rank on CLOCK_MONOTONIC, avg and max over ranks as OSU's osu_init; hello: "
            "launch to the last rank's hello; job: the harness's wall time around mpirun"
        )
        console.print(escape(tables.to_text(rows, startup_rows.COLUMNS)), soft_wrap=True)
    io = [s for s in samples if s["benchmark"] == "mpiio"]
    if io:
        from hpcscope.analysis import io_rows

        console.print(f"[bold]io[/bold]: {escape(io_rows.HEADLINE)}")
        console.print(escape(tables.to_text(io_rows.rows(io), io_rows.COLUMNS)), soft_wrap=True)
        for line in io_rows.caveats(io):
            console.print(f"[yellow]io[/yellow]: {escape(line)}")
