"""`hpcscope history`: one measurement over many runs, and the runs where it changed."""

from __future__ import annotations

import json

import click

from hpcscope.analysis import history as history_mod
from hpcscope.cli.common import (
    err,
    handle_errors,
    need_stdout,
    out,
    store_of,
    usable_runs,
    writes_to,
)
from hpcscope.cli.store import parse_since, run_filters
from hpcscope.formatting import markup_safe as S
from hpcscope.report import history as history_view


@click.command()
@run_filters
@click.option("--metric", default=None, help="Only this metric (latency, bandwidth, time, ...).")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=history_mod.THRESHOLD,
    show_default=True,
    help="Smallest relative shift that counts as a change (with Mann-Whitney p < 0.05).",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_context
@handle_errors
def history(
    ctx,
    suite: str | None,
    label: str | None,
    since: str | None,
    status: str | None,
    metric: str | None,
    threshold: float,
    fmt: str,
) -> None:
    """Each measurement over the stored runs, in the order they started, and the runs
    where it changed (tested as `compare` tests two runs, launches respected).

    \b
    Example: hpcscope history --suite p2p
             hpcscope history --suite p2p --since 30d --label nightly --metric latency
             hpcscope history --format json | jq '.changes[].run_id'
    """
    if threshold != threshold:  # NaN passes every range check
        raise ValueError("--threshold nan: give a fraction such as 0.05 (5 %)")
    need_stdout("history")
    writes_to("standard output", "redirect it to a disk with space")
    store = store_of(ctx)
    skipped: list[str] = []
    runs, _ = store.list_runs(
        suite=suite, label=label, since=parse_since(since), status=status, problems=skipped
    )
    for line in skipped:
        err.print(f"[yellow]warning:[/yellow] {S(line)}", soft_wrap=True)
    good = set(usable_runs(store, [r["id"] for r in runs])) if runs else set()
    runs = [r for r in runs if r["id"] in good]
    runs.sort(key=lambda r: (r["started"], r["id"]))
    samples = store.samples_of_runs([r["id"] for r in runs], metric=metric)
    if runs and metric and not samples:
        raise ValueError(
            f"no {metric!r} measurements in the {len(runs)} matching runs; "
            "`hpcscope show RUN` lists the metrics a run has"
        )
    result = history_mod.history(samples, runs, threshold)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=1, default=str))
        return
    history_view.print_history(result, out)
