"""Render the rows of hpcscope.analysis.verdicts as text, Markdown or CSV.

The column lists say which keys become columns and how they are titled; the paper's
layout (N, n, p, count, then avg and min per implementation) is `coll_columns(rows)`.
Times are microseconds with 2 decimals like the paper; missing cells are empty.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.analysis.verdicts import alg_key
from hpcscope.formatting import csv_cell, markdown_table, one_line

Column = tuple[str, str]  # (row key, title)

LANES_COLUMNS: list[Column] = [
    ("mpi", "MPI"),
    ("benchmark", "benchmark"),
    ("k", "k"),
    ("N", "N"),
    ("n", "n"),
    ("p", "p"),
    ("count", "count"),
    ("avg_us", "avg (us)"),
    ("min_us", "min (us)"),
    ("median_us", "median (us)"),
    ("factor", "factor"),
    ("p_vs_1", "p vs k=1"),
]


def coll_columns(rows: Sequence[dict], *, with_mpi: bool = True) -> list[Column]:
    """N, n, p, count, then per algorithm avg and min, per mock-up speed-up and verdict."""
    algs = sorted({alg for row in rows for alg in row.get("algorithms", [])}, key=alg_key)
    cols: list[Column] = ([("mpi", "MPI")] if with_mpi else []) + [
        ("collective", "collective"),
        ("N", "N"),
        ("n", "n"),
        ("p", "p"),
        ("count", "count"),
    ]
    for alg in algs:
        cols += [(f"{alg}_avg", f"{alg} avg (us)"), (f"{alg}_min", f"{alg} min (us)")]
    for alg in algs:
        if alg != "native":
            cols += [(f"{alg}_speedup", f"{alg} speed-up"), (f"{alg}_verdict", f"{alg} verdict")]
    return cols + [("verdict", "verdict")]


def cell(value: Any, key: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if key.endswith("_p") or key == "p_vs_1":
            return f"{value:.3g}"
        if key.endswith("speedup") or key == "factor":
            return f"{value:.2f}"
        return f"{value:.2f}"
    return str(value)


def to_text(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    """Aligned plain-text table (numbers right-aligned) for terminals and logs."""
    table = [[one_line(title) for _, title in columns]]
    table += [[one_line(cell(row.get(k), k)) for k, _ in columns] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    lines = []
    for n, r in enumerate(table):
        parts = []
        for i, text in enumerate(r):
            numeric = n > 0 and _numeric(text)
            parts.append(text.rjust(widths[i]) if numeric else text.ljust(widths[i]))
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def to_markdown(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    return markdown_table(
        [t for _, t in columns],
        [[cell(row.get(k), k) for k, _ in columns] for row in rows],
        [_numeric_column(rows, k) for k, _ in columns],
    )


def to_csv(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    """CSV with the row keys as header (machine-readable: full precision, no units)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(k) for k, _ in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(k)) for k, _ in columns])
    return buf.getvalue()


def write_tables(
    rows: Sequence[dict], columns: Sequence[Column], out_dir: Path, stem: str
) -> list[Path]:
    """<stem>.csv, <stem>.md and <stem>.txt (aligned text) in out_dir; returns the paths."""
    safe_write.ensure_dir(out_dir)  # the run's folder, made by its caller
    paths = [out_dir / f"{stem}.csv", out_dir / f"{stem}.md", out_dir / f"{stem}.txt"]
    for path, render in zip(paths, (to_csv, to_markdown, to_text)):
        safe_write.write_text(path, render(rows, columns))
    return paths


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _numeric_column(rows: Sequence[dict], key: str) -> bool:
    values = [row.get(key) for row in rows if row.get(key) is not None]
    return bool(values) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    )
