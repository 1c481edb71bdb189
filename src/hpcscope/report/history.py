"""`hpcscope history`: the terminal tables of analysis/history.py's series and changes."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from hpcscope.analysis.history import Change, History, Series, is_key, key_sizes
from hpcscope.formatting import column_unit, format_bytes, format_p, plain, sig3
from hpcscope.formatting import markup_safe as S
from hpcscope.results.placement_proof import tag_value


def _fmt(x: float | None, per: float = 1.0) -> str:
    """Three digits, no exponent (formatting.sig3), in a unit `per` times the stored one."""
    if x is None:
        return "-"
    return sig3(x / per)


def _config(series: Series) -> str:
    # a flag tag that is on reads as its name ('emulated nodes'), not True
    return " ".join(filter(None, (tag_value(k, v) for k, v in series.config.items())))


def _params(series: Series) -> str:
    return ", ".join(f"{k}={v}" for k, v in series.params.items())


_STYLE = {"faster": "green", "slower": "red"}


def change_note(change: Change) -> str:
    """What else changed with it: the MPI version, and whether it undoes an earlier one."""
    notes = []
    if change.software_before and change.software_before != change.software_after:
        notes += [
            f"{k} {change.software_before.get(k)} -> {change.software_after.get(k)}"
            for k in change.software_after
            if change.software_before.get(k) != change.software_after.get(k)
        ]
    if change.back_to_before is not None:
        notes.append(f"back to the level before run {change.back_to_before}")
    return "; ".join(notes)


def _size(series: Series) -> str:
    size = series.params.get("bytes")
    rest = ", ".join(f"{k}={v}" for k, v in series.params.items() if k != "bytes")
    text = format_bytes(size) if isinstance(size, (int, float)) else ""
    return ", ".join(t for t in (text, rest) if t)


def grouped_changes(result: History) -> list[dict]:
    """Changes of one run, metric, configuration and direction in one row (the sizes
    listed): a run under load moves every size at once, and one row says so."""
    rows: dict[tuple, dict] = {}
    for s, c in result.changes:
        key = (c.started, c.run_id, s.benchmark, s.metric, _config(s), c.verdict)
        row = rows.setdefault(
            key,
            {
                "run_id": c.run_id,
                "started": c.started,
                "label": c.label,
                "metric": f"{s.metric} ({s.unit})",
                "benchmark": s.benchmark,
                "config": _config(s),
                "sizes": [],
                "ratios": [],
                "p_max": 0.0,
                "verdict": c.verdict,
                "notes": set(),
            },
        )
        row["sizes"].append(_size(s))
        row["ratios"].append(c.ratio)
        row["p_max"] = max(row["p_max"], c.p_value)
        note = change_note(c)
        if note:
            row["notes"].add(note)
    return list(rows.values())


def ratio_text(ratios: list[float]) -> str:
    low, high = min(ratios), max(ratios)
    return f"x{low:.3g}" if abs(high - low) < 0.005 else f"x{low:.3g} .. x{high:.3g}"


def print_history(result: History, console: Console) -> None:
    runs = result.runs
    if not runs:
        console.print("[yellow]no run matches[/yellow]: check --suite, --label and --since")
        return
    first, last = runs[0]["started"] or "?", runs[-1]["started"] or "?"
    console.print(
        f"[bold]history[/bold] of {len(runs)} runs ({S(first[:16])} .. {S(last[:16])}). "
        f"A change: a run against the level before it (its newest {result.window} runs), "
        f"Mann-Whitney p < 0.05, shift > {result.threshold:.0%}, launch medians apart."
    )
    keys = key_sizes(result.series)
    table = Table(
        "metric",
        "configuration",
        "size",
        "runs",
        "first",
        "last",
        "lowest .. highest",
        "changes",
        title="median per run at key sizes (every size is tested)",
    )
    for s in result.series:
        if not is_key(s, keys) or not s.points:
            continue
        medians = [p.median for p in s.points]
        shown, per = column_unit(medians, s.unit)  # one scaled unit per row: 95.1 ns
        table.add_row(
            *(
                Text(plain(c))
                for c in (
                    f"{s.metric} ({shown})",
                    _config(s),
                    _size(s),
                    str(len(s.points)),
                    _fmt(medians[0], per),
                    _fmt(medians[-1], per),
                    f"{_fmt(min(medians), per)} .. {_fmt(max(medians), per)}",
                    str(len(s.changes)),
                )
            )
        )
    console.print(table)
    rows = grouped_changes(result)
    if not rows:
        console.print("no change detected: every run is within the level before it")
        return
    table = Table(
        "run",
        "started",
        "metric",
        "configuration",
        "sizes",
        "after / before",
        "p up to",
        "verdict",
        "note",
        title="changes, by the run where each starts",
    )
    for r in rows:
        table.add_row(
            Text(str(r["run_id"])),
            Text(plain(r["started"][:16])),
            Text(plain(r["metric"])),
            Text(plain(r["config"])),
            Text(plain(", ".join(r["sizes"]))),
            ratio_text(r["ratios"]),
            format_p(r["p_max"]).removeprefix("p = ").replace("p ", ""),
            Text(r["verdict"], style=_STYLE.get(r["verdict"], "")),
            Text(plain("; ".join(sorted(r["notes"])))),
        )
    console.print(table)
    starts = sorted({r["run_id"] for r in rows})
    back = sorted({r["run_id"] for r in rows if any("back to" in n for n in r["notes"])})
    console.print(
        f"{len(result.changes)} changes (metric x configuration x size) in {len(rows)} rows; "
        f"they start at run{'s' if len(starts) != 1 else ''} "
        + ", ".join(str(r) for r in starts)
        + (
            f"; back to an earlier level at run{'s' if len(back) != 1 else ''} "
            + ", ".join(str(r) for r in back)
            if back
            else ""
        )
    )
