"""`hpcscope list`, `show`, `export` and `import`: what is stored, and moving it."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from hpcscope.cli.common import err, handle_errors, out, store_of
from hpcscope.formatting import plain
from hpcscope.report import show as show_mod
from hpcscope.results import export as export_mod
from hpcscope.results import transfer


@click.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_context
@handle_errors
def list_runs(ctx, fmt: str) -> None:
    """List stored runs, newest last.

    \b
    Example: hpcscope list
             hpcscope --db other.db list --format json
    """
    runs = store_of(ctx).runs()
    if fmt == "json":
        click.echo(json.dumps(runs, indent=2, default=str))
        return
    table = Table("id", "started", "suite", "status", "host", "backend", "label")
    for r in runs:
        cells = (
            r["id"],
            str(r["started"])[:19],
            r["suite"],
            r["status"],
            r.get("host") or "",
            r.get("backend") or "",
            r.get("label") or "",
        )
        table.add_row(*(Text(plain(c)) for c in cells))  # user text, never markup
    out.print(table)


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.pass_context
@handle_errors
def show(ctx, run_ref: str) -> None:
    """Show one run: what ran, where, notes, failures and a summary per measurement.

    \b
    Example: hpcscope show last
             hpcscope show 12
    """
    store = store_of(ctx)
    show_mod.print_run(store, store.resolve(run_ref), out)


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json", "markdown", "osu"]),
    default="csv",
    show_default=True,
)
@click.pass_context
@handle_errors
def export(ctx, run_ref: str, fmt: str) -> None:
    """Write a run's measurements to stdout as CSV, JSON (raw samples), Markdown or OSU text.

    \b
    Example: hpcscope export last --format osu > osu_latency.txt
             hpcscope export 12 --format json | jq '.pooled[0]'
    """
    store = store_of(ctx)
    run_id = store.resolve(run_ref)
    text = getattr(export_mod, f"to_{fmt}")(store, run_id)
    if fmt == "osu" and not text:
        raise ValueError(
            f"run {run_id} has no message-size measurements, so it has no OSU form: "
            "--format osu is for p2p runs; use csv, json or markdown"
        )
    click.echo(text, nl=False)


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
@handle_errors
def import_runs(ctx, file: str) -> None:
    """Take runs measured elsewhere into this store as new runs (new ids).

    FILE is a JSON export (`hpcscope export RUN --format json`) or another hpcscope store
    file (all its runs). Nothing is stored unless the whole file is good.

    \b
    Example: ssh cluster hpcscope export last --format json > cluster.json
             hpcscope import cluster.json && hpcscope show last
             hpcscope import /scratch/me/hpcscope.db
    """
    # Read and check the file before the store is opened: a bad file creates nothing.
    runs = transfer.read_file(file)
    with store_of(ctx, create=True) as store:
        new = store.import_runs(runs)
    for item, run_id in zip(runs, new, strict=True):
        err.print(f"imported run {item['run'].get('id')} of {file} as run {run_id}")
    click.echo(" ".join(str(n) for n in new))
