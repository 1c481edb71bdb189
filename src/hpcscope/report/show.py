"""`hpcscope show RUN`: what ran, where, what was skipped or failed, and a summary of every
measurement, pooled over the repeated launches of the same configuration."""

from __future__ import annotations

import json
from collections import defaultdict

from rich.console import Console
from rich.table import Table

from hpcscope.results.cells import group_cells, summarize_cell
from hpcscope.results.store import Store


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.4e}"


def print_run(store: Store, run_id: int, console: Console) -> None:
    run = store.run(run_id)
    console.print(
        f"[bold]run {run_id}[/bold] {run['suite']} on {run['host']} "
        f"({run['backend']}): [bold]{run['status']}[/bold]"
    )
    console.print(f"started {run['started']}, finished {run.get('finished') or '-'}")
    for m in run.get("mpi") or []:
        console.print(f"MPI: {m.get('flavor')} {m.get('version')} ({m.get('mpicc')})")
    for note in run.get("notes") or []:
        console.print(f"[yellow]{note['kind']}[/yellow]: {note['text']}")
    launches = store.launches(run_id)
    bad = [l for l in launches if l["status"] != "COMPLETED"]
    console.print(f"{len(launches)} launches, {len(bad)} not completed")
    for l in bad:
        console.print(f"[red]{l['name']}: {l['status']}[/red]\n{l.get('stderr_tail') or ''}")
    groups = group_cells(store.samples(run_id))
    by_metric: dict[tuple, list] = defaultdict(list)
    for key, g in sorted(groups.items(), key=_order):
        by_metric[key[:3]].append((key, g))
    flagged: dict[str, int] = defaultdict(int)
    for (bench, metric, unit), rows in by_metric.items():
        table = Table(
            "configuration",
            "params",
            "launches",
            "n",
            "median",
            "95% CI of median",
            "min",
            "CV",
            "flags",
            title=f"{bench}: {metric} ({unit})",
        )
        for (_, _, _, tags, params), per_launch in rows:
            cell = summarize_cell(per_launch, unit)
            s = cell.all
            config = ", ".join(f"{v}" for k, v in json.loads(tags).items() if k != "mpi_version")
            ci = f"{_fmt(s.ci_low)} .. {_fmt(s.ci_high)}" if s.ci_low is not None else "-"
            flags = [_flag(w) for w in s.warnings]
            for w in s.warnings:
                flagged[_flag(w)] += 1
            table.add_row(
                config,
                _short_params(params),
                str(cell.launches),
                str(s.n),
                _fmt(s.median),
                ci,
                _fmt(s.min),
                f"{100 * s.cv:.1f}%" if s.cv is not None else "-",
                " ".join(flags),
            )
        console.print(table)
    for flag, count in flagged.items():
        console.print(f"[yellow]{flag}[/yellow] on {count} rows: {_FLAGS.get(flag, flag)}")


_FLAGS = {
    "unstable": "coefficient of variation above 5%; treat the median with care",
    "wide-ci": "the 95% CI of the median is wider than 5% of it; take more samples",
    "few": "too few samples for a nonparametric 95% CI of the median; use --repeat",
}


def _flag(warning: str) -> str:
    """Short tag for a Summary warning, explained once below the tables."""
    text = warning.lower()
    if text.startswith("cv "):
        return "unstable"
    if "ci of the median reaches" in text:
        return "wide-ci"
    if "too few" in text:
        return "few"
    return warning


def _order(item: tuple) -> tuple:
    (bench, metric, unit, tags, params), _ = item
    p = json.loads(params)
    return (bench, metric, tags, p.get("bytes", 0), params)


def _short_params(params_json: str) -> str:
    params = json.loads(params_json)
    return ", ".join(
        f"{k}={v}" for k, v in params.items() if k not in ("iterations", "block", "test", "window")
    )
