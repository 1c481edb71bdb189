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
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hpcscope import safe_write
from hpcscope.formatting import format_bytes, format_p, markup_safe, plain, sig3, unit_scale
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
        """The configuration in few characters: mpi and placement as bare values
        ('openmpi core'), the rest name=value with sizes as format_bytes ('bytes=4 KiB')
        and yes/no for flags."""
        return self.label_without(())

    def parts(self) -> dict[str, str]:
        """{name: value as text} of the configuration and the parameters."""
        found = {k: _text(k, v) for k, v in self.config.items() if k not in _HIDDEN}
        for k, v in self.params.items():
            if k not in ("iterations", "block"):
                found[k] = _text(k, v)
        return found

    def label_without(self, shared: Iterable[str]) -> str:
        """The label less the names in `shared` (the same in every row, said once)."""
        skip = set(shared)
        return " ".join(
            v if k in _BARE else f"{k}={v}" for k, v in self.parts().items() if k not in skip
        )

    def medians(self) -> tuple[str, str]:
        """Both medians in one unit scaled to the larger (0.0951 us -> '95.1 ns')."""
        return _pair(self.median_a, self.median_b, self.unit)


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
        overall = (
            "unchanged" if change < 0.005 else f"{change:.1%} {'better' if better else 'worse'}"
        )
        counts = (
            f"all {self.rows} unchanged"
            if self.same == self.rows
            else f"{self.faster} faster, {self.slower} slower, {self.same} not significant"
        )
        return (
            f"{self.metric} ({'µs' if self.unit == 'us' else self.unit}): geometric mean of B/A = "
            f"{self.geomean_ratio:.3f} over {self.rows} measurements ({overall}); {counts}"
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


_SIZES = ("bytes", "size", "array_bytes", "file_bytes")
_BARE = ("mpi", "placement")  # values that name themselves: 'openmpi core'


def _text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name in _SIZES and isinstance(value, (int, float)):
        return format_bytes(value)
    return str(value)


def shared_parts(rows: list[Row]) -> dict[str, str]:
    """The configuration and parameters with one value in every row (more than one
    row): said once above the table, so each row's label keeps what tells it apart (a
    100-column terminal then shows it whole)."""
    if len(rows) < 2:
        return {}
    first = rows[0].parts()
    return {k: v for k, v in first.items() if all(r.parts().get(k) == v for r in rows[1:])}


def _pair(a: float, b: float, unit: str) -> tuple[str, str]:
    """Two medians of one measurement in one scaled unit (formatting.unit_scale of the
    larger), three digits each, the unit after each: '95.1 ns', '120 ns'."""
    if unit in ("B", "bytes"):
        return format_bytes(a), format_bytes(b)
    shown, per = unit_scale(max(abs(a), abs(b)), unit)
    return f"{sig3(a / per)} {shown}".strip(), f"{sig3(b / per)} {shown}".strip()


def _p(p: float) -> str:
    """The p column: '< 1e-10' rather than '0' (formatting.format_p)."""
    return format_p(p).removeprefix("p = ").replace("p ", "")


def same_run_note(a: int, b: int) -> str:
    """One line when both sides are one run (every measurement against itself)."""
    return (
        f"runs A and B are the same run ({a}): every measurement is compared with itself, "
        "so all are unchanged; name two different runs to see a change"
        if a == b
        else ""
    )


_STYLE = {"faster": "green", "slower": "red", "same": "dim"}


def print_comparison(rows: list[Row], console: Console, title: str = "B relative to A") -> None:
    """Terminal table (rich) and the per-metric geometric means."""
    if not rows:
        console.print(
            "[yellow]no measurement is present in both runs[/yellow] (different "
            "suites, sizes or placements?)"
        )
        return
    shared = shared_parts(rows)
    if shared:
        console.print(
            Text(
                "in every row: "
                + " ".join(v if k in _BARE else f"{k}={v}" for k, v in shared.items())
            )
        )
    cells = []
    for r in changed_first(rows):
        cells.append(
            [
                plain(f"{r.benchmark} {r.metric}"),  # the medians carry their unit
                plain(r.label_without(shared)),
                *r.medians(),
                f"{r.ratio:.3f}",
                _p(r.p_value),
                r.verdict,
                f"{r.n_a}/{r.n_b}",
            ]
        )
    heads = ["measurement", "configuration", "median A", "median B", "B/A", "p", "verdict"]
    heads.append("n A/B")
    # Every column at its own width, one line a cell, and the configuration in what is
    # left (wrapped between its words, at least 16 characters): a 100-column terminal
    # shows every column and every configuration whole.
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    # each column: 1 space either side and 1 between (SIMPLE_HEAD draws no vertical rule)
    rest = console.width - sum(w for i, w in enumerate(widths) if i != 1) - 3 * len(heads)
    table = Table(title=markup_safe(title), box=box.SIMPLE_HEAD, show_edge=False)
    for i, head in enumerate(heads):
        if i == 1:
            table.add_column(head, width=max(16, min(widths[1], rest)), overflow="fold")
        else:
            table.add_column(head, width=widths[i], no_wrap=True)
    for c in cells:
        table.add_row(
            *(Text(t, style=_STYLE.get(t, "") if i == 6 else "") for i, t in enumerate(c))
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
        .render(rows=changed_first(rows), summaries=summarize(rows), heading=heading, p=_p)
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
            p=_p,
            heading=title,
        )
    )
    safe_write.write_text(path, html)
    return path
