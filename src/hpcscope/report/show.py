"""`hpcscope show RUN`: what ran, where, what was skipped or failed, and a summary of every
measurement, pooled over the repeated launches of the same configuration."""

from __future__ import annotations

import json
from collections import defaultdict

from rich.console import Console
from rich.table import Table
from rich.text import Text

from hpcscope.formatting import markup_safe as S
from hpcscope.formatting import plain
from hpcscope.results import placement_proof
from hpcscope.results.cells import group_cells, summarize_cell
from hpcscope.results.store import Store


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.4e}"


def print_run(store: Store, run_id: int, console: Console) -> None:
    run = store.run(run_id)
    # Everything below but our own markup comes from the store: user labels, host names,
    # benchmark and MPI output. It is printed as plain text (markup_safe).
    console.print(
        f"[bold]run {run_id}[/bold] {S(run['suite'])} on {S(run['host'])} "
        f"({S(run['backend'])}): [bold]{S(run['status'])}[/bold]"
    )
    console.print(f"started {S(run['started'])}, finished {S(run.get('finished') or '-')}")
    for m in run.get("mpi") or []:
        console.print(f"MPI: {S(m.get('flavor'))} {S(m.get('version'))} ({S(m.get('mpicc'))})")
    notes = run.get("notes") or []
    for note in notes:
        if note["kind"] != "placement":  # one line per launch class below, not per launch
            console.print(f"[yellow]{S(note['kind'])}[/yellow]: {S(note['text'])}")
    launches = store.launches(run_id)
    print_placements(launches, notes, console)
    bad = [l for l in launches if l["status"] != "COMPLETED"]
    console.print(f"{len(launches)} launches, {len(bad)} not completed")
    for l in bad:
        console.print(
            f"[red]{S(l['name'])}: {S(l['status'])}[/red]\n{S(l.get('stderr_tail') or '')}"
        )
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
            "launch mean ± σ",
            "per launch",
            "flags",
            title=S(f"{bench}: {metric} ({unit})"),
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
                *(
                    Text(plain(c))
                    for c in (
                        config,
                        _short_params(params),
                        str(cell.launches),
                        str(s.n),
                        _fmt(s.median),
                        ci,
                        _fmt(s.min),
                        f"{100 * s.cv:.1f}%" if s.cv is not None else "-",
                        _over_text(cell.over),
                        _values_text(cell.over),
                        " ".join(flags),
                    )
                )
            )
        console.print(table)
    for flag, count in flagged.items():
        console.print(f"[yellow]{S(flag)}[/yellow] on {count} rows: {S(_FLAGS.get(flag, flag))}")


def print_placements(launches: list[dict], notes: list[dict], console: Console) -> None:
    """Where the ranks ran, read from inside each rank, one line per launch class, with
    the verdict of the placement check (results/placement_proof.py)."""
    lines = placement_proof.proof_lines(launches, notes)
    if not lines:
        return
    console.print("[bold]placement[/bold] (read from inside every rank; verdict per launch):")
    for line in lines:
        colour = "red" if line.verdicts.get("wrong") else "green"
        console.print(f"  [{colour}]{S(line.label)}[/{colour}]: {S(line.verdict_text())}")
        for binding, count in line.bindings:
            times = f"{count}x " if len(line.bindings) > 1 else ""
            console.print(f"    {times}{S(binding)}")
        for reason in line.reasons:
            console.print(f"    [red]{S(reason)}[/red]")


def _over_text(over) -> str:
    """The seeds' view: mean and sigma over the launches' one-number-per-launch values."""
    if over is None:
        return "-"
    return f"{_fmt(over.mean)} ± {_fmt(over.std)}" if over.std is not None else _fmt(over.mean)


def _values_text(over, shown: int = 5) -> str:
    if over is None:
        return "-"
    text = ", ".join(_fmt(v) for v in over.values[:shown])
    return text + (f", ... ({len(over.values)})" if len(over.values) > shown else "")


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
