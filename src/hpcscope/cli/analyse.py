"""`hpcscope report`, `compare` and `tune`: what the stored runs say."""

from __future__ import annotations

from pathlib import Path

import click

from hpcscope import runner, safe_write
from hpcscope.analysis import tune as tune_mod
from hpcscope.cli.common import (
    err,
    handle_errors,
    need_stdout,
    nonempty,
    out,
    output_alias,
    store_of,
    usable_runs,
    writes_to,
)
from hpcscope.formatting import markup_safe as S
from hpcscope.report import compare as compare_mod
from hpcscope.report import html


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "-o",
    "--out",
    "output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Tuning file to write (JSON, schema lanecoll.tuning/1). Required.",
)
@output_alias
@click.option(
    "--mpi", default=None, help="Which MPI library's measurements (when runs hold several)."
)
@click.pass_context
@handle_errors
def tune(ctx, run_refs: tuple[str, ...], output: str | None, mpi: str | None) -> None:
    """Write lanecoll's tuning table from stored coll runs.

    Per collective, nodes and processes per node: the fastest significantly-better
    algorithm per message-size range, native where nothing is better, neighbouring
    sizes merged. Use it with LANECOLL_TUNING=FILE and liblanecoll_pmpi.so.

    \b
    Example: hpcscope tune last -o tuning.json --mpi openmpi
    """
    output = output or ctx.meta.get("output_alias")
    if not output:
        raise runner.UsageError("tune needs the file to write: -o/--out FILE, e.g. -o tuning.json")
    store = store_of(ctx)
    run_ids = usable_runs(store, [store.resolve(r) for r in run_refs])
    samples = [store.samples(run_id, benchmark="coll") for run_id in run_ids]
    if not any(samples):
        raise runner.UsageError("no coll measurements in those runs; run `hpcscope run coll` first")
    table = tune_mod.make_tuning(samples, mpi=mpi)
    writes_to(f"the tuning file {output}", "choose another file (-o/--out)")
    path = tune_mod.write_tuning(output, table)
    changed = sum(1 for r in table["rules"] if r["algorithm"] != "native")
    err.print(f"{S(path)}: {len(table['rules'])} rules, {changed} choose lane or hier")


@click.command()
@click.argument("run_refs", metavar="[RUN...]", nargs=-1)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for index.html and its CSV tables (default hpcscope-out/report).",
)
@output_alias
@click.pass_context
@handle_errors
def report(ctx, run_refs: tuple[str, ...], out_dir: str | None) -> None:
    """One self-contained HTML page (DIR/index.html) from stored runs (default: last).

    Figures are inline SVG, no external requests, no JavaScript; observations
    (fits, breakpoints, dips, placement ratios, instability) cite their numbers.

    \b
    Example: hpcscope report 12 13 14 -o hpcscope-out/report
    """
    nonempty(out_dir, "-o/--out", "hpcscope-out/report")
    out_dir = out_dir or ctx.meta.get("output_alias")
    store = store_of(ctx)
    run_ids = usable_runs(store, [store.resolve(r) for r in (run_refs or ("last",))])
    # the default's report/ is this user's own folder, never a link planted in a shared
    # hpcscope-out (safe_write.ensure_dir); a folder the user names may be a link
    folder = Path(out_dir) if out_dir else safe_write.ensure_dir("hpcscope-out", "report")
    writes_to(f"the report's folder {folder}", "choose another folder (-o/--out)")
    page = html.write_report(store, run_ids, folder)
    writes_to("standard output", "redirect it to a disk with space")
    err.print("report written:")
    click.echo(str(page.resolve()))


@click.command()
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.05,
    show_default=True,
    help="Smallest relative difference that counts (with Mann-Whitney p < 0.05).",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the comparison as a standalone HTML page.",
)
@click.pass_context
@handle_errors
def compare(ctx, run_a: str, run_b: str, threshold: float, html_path: str | None) -> None:
    """What changed from RUN_A to RUN_B (two MPI libraries, machines, before/after).

    Each matching measurement is tested on its raw samples (Mann-Whitney) and marked
    faster, slower or same; geometric means of ratios are given per metric.

    \b
    Example: hpcscope compare 12 15 --html compare.html
    """
    if threshold != threshold:  # NaN passes every range check
        raise runner.UsageError("--threshold nan: give a fraction such as 0.05 (5 %)")
    nonempty(html_path, "--html", "compare.html")
    need_stdout("compare")
    writes_to("standard output", "redirect it to a disk with space")
    store = store_of(ctx)
    a, b = store.resolve(run_a), store.resolve(run_b)
    for run_id in (a, b):  # both are needed: a bad one is the error
        usable_runs(store, [run_id])
    rows = compare_mod.compare_runs(store, a, b, threshold)
    if a == b:
        out.print(compare_mod.same_run_note(a, b))
    compare_mod.print_comparison(
        rows, out, title=f"run {b} against itself" if a == b else f"run {b} relative to run {a}"
    )
    if html_path:
        writes_to(f"the compare page {html_path}", "choose another file (--html)")
        err.print(f"written {S(compare_mod.write_comparison_html(rows, Path(html_path)))}")
