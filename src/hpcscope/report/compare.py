"""`hpcscope compare RUN_A RUN_B`: what changed between two runs, with significance.

Matching: a measurement is a cell of hpcscope.results.cells (benchmark, metric, unit,
configuration tags, identifying params), the same grouping every view uses. Tags that are constant within each run but differ between the two runs (e.g.
`mpi` when run A used Open MPI and run B MPICH, or the host) are what is being compared,
so they are left out of the key and shown in the header instead.

Testing: Mann-Whitney U on the raw values pooled over launches (hpcscope.results.stats
.compare), significant only when p < 0.05 AND the medians differ by more than the
threshold (default 5 %). Rows carry "faster", "slower" or "same" for B relative to A.

Summary: a geometric mean of the B/A median ratios per (metric, unit) only - ratios of
different metrics mean different things (a latency ratio below 1 is good, a bandwidth
ratio below 1 is bad), so they are never mixed into one number.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hpcscope import safe_write
from hpcscope.formatting import markup_safe, plain
from hpcscope.results import stats
from hpcscope.results.cells import LAUNCH_TAGS, compare_cells, group_cells
from hpcscope.results.store import Store

_HIDDEN = ("mpi_version",)  # kept in the match key, too long to repeat on every row


@dataclass
class Row:
    benchmark: str
    metric: str
    unit: str
    params: dict[str, Any]
    config: dict[str, Any]  # tags shared by both runs (the matched configuration)
    median_a: float
    median_b: float
    ratio: float  # median_b / median_a
    p_value: float
    verdict: str  # faster | slower | same (B relative to A)
    n_a: int
    n_b: int
    launches_a: int
    launches_b: int
    lower_is_better: bool
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.config.items() if k not in _HIDDEN]
        parts += [f"{k}={v}" for k, v in self.params.items() if k not in ("iterations", "block")]
        return ", ".join(parts)


@dataclass
class Summary:
    metric: str
    unit: str
    rows: int
    geomean_ratio: float  # geometric mean of median_b / median_a
    faster: int
    slower: int
    same: int
    lower_is_better: bool

    @property
    def text(self) -> str:
        better = (self.geomean_ratio < 1) == self.lower_is_better
        change = abs(self.geomean_ratio - 1)
        direction = "better" if better else "worse"
        if change < 0.005:
            direction, change = "unchanged", 0.0
        return (
            f"{self.metric} ({self.unit}): geometric mean of B/A = "
            f"{self.geomean_ratio:.3f} over {self.rows} measurements "
            f"({change:.1%} {direction}); {self.faster} faster, {self.slower} slower, "
            f"{self.same} not significant"
        )


def _lower_is_better(metric: str, unit: str) -> bool:
    try:
        return stats.lower_is_better(unit)
    except ValueError:
        # Units that are neither a time nor a rate (e.g. counts): treat like times only
        # for metrics named as such, else higher is better.
        return metric in ("latency", "time")


def _compared_tags(a: list[dict], b: list[dict]) -> set[str]:
    """Tags constant within each run whose value differs between the runs."""

    def constants(samples: list[dict]) -> dict[str, Any]:
        seen: dict[str, set[str]] = defaultdict(set)
        for s in samples:
            for k, v in s["tags"].items():
                seen[k].add(json.dumps(v, sort_keys=True))
        return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}

    ca, cb = constants(a), constants(b)
    return {k for k in ca.keys() & cb.keys() if ca[k] != cb[k]}


def compare_samples(a: list[dict], b: list[dict], threshold: float = 0.05) -> list[Row]:
    """Match and test the samples of two runs (see module doc); pure, no store."""
    drop = _compared_tags(a, b) | set(LAUNCH_TAGS)

    def strip(samples: list[dict]) -> list[dict]:
        return [
            dict(s, tags={k: v for k, v in s["tags"].items() if k not in drop}) for s in samples
        ]

    ga, gb = group_cells(strip(a)), group_cells(strip(b))
    rows: list[Row] = []
    for key in sorted(ga.keys() & gb.keys(), key=_sort_key):
        bench, metric, unit, tags, params = key
        lib = _lower_is_better(metric, unit)
        c = compare_cells(ga[key], gb[key], threshold, lower_is_better=lib)
        rows.append(
            Row(
                bench,
                metric,
                unit,
                json.loads(params),
                json.loads(tags),
                c.median_a,
                c.median_b,
                c.ratio,
                c.p_value,
                c.verdict,
                c.n_a,
                c.n_b,
                len(ga[key]),
                len(gb[key]),
                lib,
                list(c.warnings),
            )
        )
    return rows


def _sort_key(key: tuple) -> tuple:
    bench, metric, unit, tags, params = key
    p = json.loads(params)
    numeric = tuple(sorted((k, v) for k, v in p.items() if isinstance(v, (int, float))))
    return (
        bench,
        metric,
        tags,
        tuple(sorted((k, str(v)) for k, v in p.items() if not isinstance(v, (int, float)))),
        numeric,
    )


def compare_runs(store: Store, a: int, b: int, threshold: float = 0.05) -> list[Row]:
    """Rows for every measurement present in both runs, B relative to A."""
    return compare_samples(store.samples(a), store.samples(b), threshold)


def compared_tags(store: Store, a: int, b: int) -> dict[str, tuple[Any, Any]]:
    """What differs between the runs as a whole: {tag: (value in A, value in B)}."""
    sa, sb = store.samples(a), store.samples(b)
    names = _compared_tags(sa, sb)
    return {k: (sa[0]["tags"][k], sb[0]["tags"][k]) for k in sorted(names)}


def summarize(rows: list[Row]) -> list[Summary]:
    """Geometric mean of ratios per (metric, unit) - never across metrics."""
    by: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        if r.ratio > 0 and math.isfinite(r.ratio):
            by[(r.metric, r.unit)].append(r)
    out = []
    for (metric, unit), rs in sorted(by.items()):
        g = math.exp(sum(math.log(r.ratio) for r in rs) / len(rs))
        out.append(
            Summary(
                metric,
                unit,
                len(rs),
                g,
                sum(r.verdict == "faster" for r in rs),
                sum(r.verdict == "slower" for r in rs),
                sum(r.verdict == "same" for r in rs),
                rs[0].lower_is_better,
            )
        )
    return out


def changed_first(rows: list[Row]) -> list[Row]:
    """Significant changes first (slower, then faster), the rest in measurement order."""
    rank = {"slower": 0, "faster": 1}
    return sorted(rows, key=lambda r: rank.get(r.verdict, 2))


def _fmt(x: float) -> str:
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.3e}"


_STYLE = {"faster": "green", "slower": "red", "same": "dim"}


def print_comparison(rows: list[Row], console: Console, title: str = "B relative to A") -> None:
    """Terminal table (rich) and the per-metric geometric means."""
    if not rows:
        console.print(
            "[yellow]no measurement is present in both runs[/yellow] (different "
            "suites, sizes or placements?)"
        )
        return
    table = Table(
        "benchmark",
        "metric",
        "configuration",
        "median A",
        "median B",
        "B/A",
        "p",
        "verdict",
        "n A/B",
        title=markup_safe(title),
    )
    for r in changed_first(rows):
        style = _STYLE.get(r.verdict, "")
        table.add_row(
            Text(plain(r.benchmark)),
            Text(plain(f"{r.metric} ({r.unit})")),
            Text(plain(r.label)),
            _fmt(r.median_a),
            _fmt(r.median_b),
            f"{r.ratio:.3f}",
            f"{r.p_value:.2g}",
            Text(r.verdict, style=style),
            f"{r.n_a}/{r.n_b}",
        )
    console.print(table)
    for s in summarize(rows):
        console.print(Text(plain(s.text)))


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("hpcscope.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )


def render_comparison(rows: list[Row], heading: str = "Comparison") -> Markup:
    """The comparison section as an HTML fragment (used inside the report); rendered with
    autoescaping, so it is marked safe for the page that embeds it."""
    return Markup(
        _env()
        .get_template("compare_section.html")
        .render(rows=changed_first(rows), summaries=summarize(rows), heading=heading, fmt=_fmt)
    )


def write_comparison_html(rows: list[Row], path: Path, title: str = "hpcscope comparison") -> Path:
    """A standalone page with the comparison table; no scripts, no external requests."""
    path = Path(path)
    safe_write.ensure_dir(path.parent)  # the folder of the file the user named
    html = (
        _env()
        .get_template("compare_page.html")
        .render(
            title=title,
            rows=changed_first(rows),
            summaries=summarize(rows),
            fmt=_fmt,
            heading=title,
        )
    )
    safe_write.write_text(path, html)
    return path
