"""`hpcscope list`, `show`, `export` and `import`: what is stored, and moving it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import click
from rich import box
from rich.table import Table
from rich.text import Text

from hpcscope.cli.common import err, handle_errors, need_stdout, out, store_of, writes_to
from hpcscope.results.store import RUN_STATUSES, SUITE_NAMES

# show, export and import load their modules when they run: those pull in numpy and
# scipy, which `list` does not need (list < 1 s, issue 19).


_RELATIVE = re.compile(r"^(\d+)\s*([dhm])$")


def parse_since(text: str | None) -> str | None:
    """--since: an ISO date or time (UTC unless it names a zone) or an age such as 7d,
    12h or 30m -> the ISO 8601 UTC text `started` is compared with."""
    if text is None:
        return None
    match = _RELATIVE.match(text.strip())
    if match:
        unit = {"d": 86400, "h": 3600, "m": 60}[match.group(2)]
        # An age up to 100 years: more is a typo, and overflows the date (year 1)
        if len(match.group(1)) > 9 or int(match.group(1)) * unit > 36500 * 86400:
            raise ValueError(
                f"--since {text!r}: an age of at most 100 years (36500d); "
                "give e.g. 7d, 12h or 30m, or a date (2026-11-24)"
            )
        when = datetime.now(UTC) - timedelta(seconds=int(match.group(1)) * unit)
    else:
        try:
            when = datetime.fromisoformat(text.strip())
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            when = when.astimezone(UTC)  # OverflowError near year 1 or 9999
        except (ValueError, OverflowError):
            raise ValueError(
                f"--since {text!r}: give a date (2026-11-24), a time (2026-11-24T08:00) or "
                "an age (7d, 12h, 30m)"
            ) from None
    return when.isoformat(timespec="milliseconds")


def run_filters(fn):
    """--suite, --label, --since, --status: which runs a listing or history takes."""
    for option in reversed(
        (
            click.option(
                "--suite",
                type=click.Choice(SUITE_NAMES),
                default=None,
                help="Only runs of this suite.",
            ),
            click.option(
                "--label", default=None, help="Only runs with this label (* and ? match any)."
            ),
            click.option(
                "--since", default=None, help="Only runs started since: 2026-11-24, 7d, 12h."
            ),
            click.option(
                "--status",
                type=click.Choice([*RUN_STATUSES, "abandoned"]),
                default=None,
                help="Only runs in this state.",
            ),
        )
    ):
        fn = option(fn)
    return fn


DEFAULT_PAGE = 50
SQL_INT_MAX = 2**63 - 1  # --limit and --offset go to SQLite, whose integers are 64 bits


@click.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@run_filters
@click.option(
    "--limit",
    type=click.IntRange(min=0, max=SQL_INT_MAX),
    default=None,
    help=f"Show this many runs, the newest (table default {DEFAULT_PAGE}, json all; 0: all).",
)
@click.option(
    "--offset",
    type=click.IntRange(min=0, max=SQL_INT_MAX),
    default=0,
    help="Skip this many of the newest matches first (the next page: --offset 50).",
)
@click.pass_context
@handle_errors
def list_runs(
    ctx,
    fmt: str,
    suite: str | None,
    label: str | None,
    since: str | None,
    status: str | None,
    limit: int | None,
    offset: int,
) -> None:
    """List stored runs, newest last, a page at a time.

    \b
    Example: hpcscope list
             hpcscope list --suite p2p --since 7d --status ok
             hpcscope list --limit 50 --offset 50      the 50 before the newest 50
             hpcscope --db other.db list --format json
    """
    need_stdout("list")
    writes_to("standard output", "redirect it to a disk with space")
    if limit is None:
        limit = DEFAULT_PAGE if fmt == "table" else 0
    skipped: list[str] = []  # runs whose stored columns do not decode: one line each
    runs, total = store_of(ctx).list_runs(
        suite=suite,
        label=label,
        since=parse_since(since),
        status=status,
        limit=limit or None,
        offset=offset,
        full=fmt == "json",
        problems=skipped,
    )
    for line in skipped:
        from hpcscope.formatting import markup_safe

        err.print(f"[yellow]warning:[/yellow] {markup_safe(line)}", soft_wrap=True)
    if fmt == "json":
        click.echo(json.dumps(runs, indent=2, default=str))
        return
    from hpcscope.report.show import clean  # rich and formatting only: list stays fast

    def text(value: object) -> str:  # user text, one line, never markup or escapes
        return " ".join(clean(value).split())

    def when(value: object) -> str:
        try:
            started = datetime.fromisoformat(str(value))
        except ValueError:
            return text(value)
        if started.tzinfo is not None:
            started = started.astimezone(UTC)
        return started.strftime("%Y-%m-%d %H:%M")

    # The backend only where it tells runs apart; the label last, where it may run long.
    with_backend = any((r.get("backend") or "local") != "local" for r in runs)
    head = ["id", "started (UTC)", "suite", "status", "host"]
    head += ["backend"] * with_backend + ["samples", "label"]
    rows = [
        [str(r["id"]), when(r["started"]), text(r["suite"]), text(r["status"])]
        + [text(r.get("host") or "")]
        + [text(r.get("backend") or "")] * with_backend
        + [str(r["n_samples"]), text(r.get("label") or "")]
        for r in runs
    ]
    numeric = {0, len(head) - 2}  # id, samples
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    folded = {head.index("host"), len(head) - 1}  # host and label fold; the rest never
    fixed = sum(w + 2 for i, w in enumerate(widths) if i not in folded)
    if not out.is_terminal or fixed + 2 * 8 > out.width:
        # A pipe, a file or a very narrow terminal: plain columns, one run a line, nothing
        # cut (a terminal wraps a long line whole).
        for row in [head, *rows] if rows else []:
            cells = [
                c.rjust(w) if i in numeric else c.ljust(w)
                for i, (c, w) in enumerate(zip(row[:-1], widths[:-1], strict=True))
            ]
            click.echo("  ".join([*cells, row[-1]]).rstrip())
    elif rows:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
        for i, title in enumerate(head):
            table.add_column(
                title,
                justify="right" if i in numeric else "left",
                no_wrap=i not in folded,
                overflow="fold",  # host and label wrap (at spaces first), never '…'
            )
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        out.print(table)
    page = len(runs) + len(skipped)  # the skipped runs are on this page too
    if page < total:
        shown_from = total - offset - page + 1
        more = f"; older: --offset {offset + page}" if offset + page < total else ""
        err.print(
            f"runs {shown_from}-{shown_from + page - 1} of {total} matching shown{more}"
            + ("; newer: --offset " + str(max(offset - (limit or 0), 0)) if offset else "")
        )
    elif not total:
        err.print("no run matches" if any((suite, label, since, status)) else "no runs yet")


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--cells",
    is_flag=True,
    help="Instead of the summary tables, every cell's statistics: n, median, its 95% CI, "
    "min, CV, the mean and sigma over launches and each launch's value.",
)
@click.pass_context
@handle_errors
def show(ctx, run_ref: str, cells: bool) -> None:
    """Show one run: what ran, where, notes, failures, and its results as tables: p2p
    latency and bandwidth per message size and MPI x placement (as OSU prints them),
    collective speed-ups and guideline verdicts, the lane factors, the node table.

    \b
    Example: hpcscope show last
             hpcscope show 12 --cells      every cell's statistics
    """
    from hpcscope.report import show as show_mod

    need_stdout("show")
    writes_to("standard output", "redirect it to a disk with space")

    store = store_of(ctx)
    show_mod.print_run(store, store.resolve(run_ref), out, cells=cells)


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
    from hpcscope.results import export as export_mod

    need_stdout("export")
    writes_to("standard output", "redirect it to a disk with space")

    store = store_of(ctx)
    run_id = store.resolve(run_ref)
    text = getattr(export_mod, f"to_{fmt}")(store, run_id)
    if fmt == "json":
        text = with_links(store, run_id, text)
    if fmt == "osu" and not text:
        raise ValueError(
            f"run {run_id} has no message-size measurements, so it has no OSU form: "
            "--format osu is for p2p runs; use csv, json or markdown"
        )
    click.echo(text, nl=False)


def with_links(store, run_id: int, text: str) -> str:
    """A links run's JSON export gains "links": per launch its matrices, flagged pairs with
    their cause, nodes at fault and ratios under load (analysis/links.py; derived, like
    "pooled": import ignores it)."""
    import json

    from hpcscope.analysis import links

    found = links.by_launch(store.samples(run_id, benchmark=links.BENCHMARK))
    if not found:
        return text
    doc = json.loads(text)
    doc["links"] = [{"launch": name, **result.to_json()} for name, result in found]
    return json.dumps(doc, indent=1) + "\n"


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
    import sys
    from typing import NoReturn

    from hpcscope.cli.common import EXIT_USAGE
    from hpcscope.formatting import markup_safe
    from hpcscope.results import transfer
    from hpcscope.results.store import default_path

    def refuse(problem: str) -> NoReturn:
        """One line, never wrapped: `error: import: FILE: run N: PATH: problem`, exit 2."""
        line = markup_safe(problem).replace("\n", "\\n").replace("\r", "\\r")
        err.print(f"[red]error:[/red] import: {line}", soft_wrap=True, emoji=False)
        sys.exit(EXIT_USAGE)

    # Read and check the whole file before the store is opened: a bad file creates and
    # changes nothing (results/transfer.py checks it against docs/export.schema.json).
    try:
        transfer.refuse_self(default_path(ctx.obj["db"]), file)
        runs = transfer.read_file(file)
    except ValueError as exc:
        refuse(str(exc))
    except OSError as exc:  # unreadable: permissions, a directory, an I/O error
        refuse(f"{file}: cannot read it ({exc.strerror or exc})")
    try:
        with store_of(ctx, create=True) as store:
            new = store.import_runs(runs)
    except ValueError as exc:  # the store's own problem (a folder that does not exist)
        refuse(str(exc))
    for item, run_id in zip(runs, new, strict=True):
        err.print(f"imported run {item['run'].get('id')} of {file} as run {run_id}")
    click.echo(" ".join(str(n) for n in new))
