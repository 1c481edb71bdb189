"""The report's parts for a group of comparable runs (issue 19): curves overlaid, one
table with a column per run and the spread over runs, the changes between runs, and
history figures, one per metric.

Returns plain parts (figures and table specifications); report/html.py places them in
its sections and writes the tables' CSV files, so this module needs nothing of html.py.
Costs: a fixed number of figures per metric (one overlay, one history), whatever the
number of runs; tables grow by one column per run.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hpcscope.analysis import history as history_mod
from hpcscope.analysis.over_runs import spread_over_runs
from hpcscope.figures import over_runs as figs
from hpcscope.figures.common import Figure, cached_uri
from hpcscope.report.history import change_note, ratio_text


@dataclass
class TableSpec:
    tid: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""
    classes: list[list[str]] | None = None


@dataclass
class Parts:
    figures: list[Figure] = field(default_factory=list)
    tables: list[TableSpec] = field(default_factory=list)
    history_figures: list[Figure] = field(default_factory=list)
    history_tables: list[TableSpec] = field(default_factory=list)
    changes: int = 0


def _run_name(run: dict[str, Any]) -> str:
    label = f" {run['label']}" if run.get("label") else ""
    return f"run {run['id']}{label}"


def _shown(series: Sequence[history_mod.Series]) -> list:
    """What a figure of these series shows (its cache key, figures.common.cached_uri)."""
    return [
        [
            s.benchmark,
            s.metric,
            s.unit,
            s.config,
            s.params,
            [[p.run_id, p.median, p.ci_low, p.ci_high] for p in s.points],
            [c.run_id for c in s.changes],
        ]
        for s in series
    ]


def _config(s: history_mod.Series) -> str:
    return " ".join(str(v) for v in s.config.values())


def _params(s: history_mod.Series) -> str:
    return ", ".join(f"{k}={v}" for k, v in s.params.items())


def group_parts(
    runs: Sequence[dict[str, Any]],
    samples: Sequence[dict[str, Any]],
    anchor: str,
    threshold: float = history_mod.THRESHOLD,
) -> Parts:
    """runs in start order; samples of all of them, each with `run_id`."""
    result = history_mod.history(samples, runs, threshold)
    parts = Parts(changes=len(result.changes))
    run_ids = [int(r["id"]) for r in runs]
    names = {int(r["id"]): _run_name(r) for r in runs}
    by_metric: dict[tuple[str, str, str], list[history_mod.Series]] = defaultdict(list)
    for s in result.series:
        by_metric[(s.benchmark, s.metric, s.unit)].append(s)
    for (bench, metric, unit), series in by_metric.items():
        uri = cached_uri(
            "overlay",
            [run_ids, names, _shown(series)],
            functools.partial(figs.overlay_figure, series, run_ids, names),
        )
        if uri is not None:
            parts.figures.append(
                Figure(
                    f"{anchor}-{bench}-{metric}-overlay",
                    f"{metric.replace('_', ' ')}: {len(run_ids)} runs overlaid",
                    f"{bench} {metric} ({unit}) per message size: a thin line per run (its "
                    "median over all its launches), colour by run order; black: the median "
                    "over the runs.",
                    uri,
                    f"{metric} of {len(run_ids)} runs overlaid",
                )
            )
    spreads = spread_over_runs(result.series)
    columns = ["benchmark", "metric", "configuration", "params"]
    columns += [f"run {rid}" for rid in run_ids]
    columns += ["runs", "mean", "std", "CV", "median", "CI low", "CI high", "min", "max"]
    rows, classes = [], []
    for sp in spreads:
        s, summary = sp.series, sp.summary
        row: list[Any] = [s.benchmark, f"{s.metric} ({s.unit})", _config(s), _params(s)]
        row += [sp.values.get(rid) for rid in run_ids]
        if summary is None:
            continue
        row += [
            len(sp.values),
            summary.mean,
            summary.std,
            None if summary.cv is None else f"{100 * summary.cv:.1f}%",
            summary.median,
            summary.ci_low,
            summary.ci_high,
            summary.min,
            summary.max,
        ]
        rows.append(row)
        unstable = summary.cv is not None and summary.cv > 0.05
        classes.append([""] * (len(row) - 6) + ["warn" if unstable else ""] + [""] * 5)
    parts.tables.append(
        TableSpec(
            "over_runs",
            f"Each measurement in each of the {len(run_ids)} runs, and its spread over them",
            columns,
            rows,
            "run columns: the run's median (all raw values of all its launches); mean "
            "(harmonic for rates), std and CV: over the run medians, CV highlighted above "
            "5%; median and its nonparametric 95% CI over the run medians (6 runs or more); "
            "min and max run median.",
            classes,
        )
    )
    if len(run_ids) < 2:
        return parts
    index_of = {rid: i for i, rid in enumerate(run_ids)}
    keys = history_mod.key_sizes(result.series)
    for (bench, metric, _unit), series in by_metric.items():
        shown = [s for s in series if history_mod.is_key(s, keys)]
        uri = cached_uri(
            "history",
            [index_of, _shown(shown)],
            functools.partial(figs.history_figure, shown, index_of),
        )
        if uri is not None:
            parts.history_figures.append(
                Figure(
                    f"{anchor}-{bench}-{metric}-history",
                    f"{metric.replace('_', ' ')} over the runs",
                    "Each run's median at the key sizes with its 95% CI (band), runs in "
                    "start order; dashed: a run where a change starts.",
                    uri,
                    f"{metric} history",
                )
            )
    change_rows = []
    for s, c in result.changes:
        change_rows.append(
            [
                c.run_id,
                c.started[:19],
                s.benchmark,
                f"{s.metric} ({s.unit})",
                _config(s),
                _params(s),
                c.median_before,
                c.median_after,
                ratio_text([c.ratio]),
                c.p_value,
                c.verdict,
                change_note(c),
            ]
        )
    parts.history_tables.append(
        TableSpec(
            "changes",
            f"Changes between runs ({len(change_rows)})",
            [
                "run",
                "started",
                "benchmark",
                "metric",
                "configuration",
                "params",
                "level before",
                "this run",
                "ratio",
                "p",
                "verdict",
                "note",
            ],
            change_rows,
            "A run is a change when compare_cells finds it faster or slower than the level "
            f"before it (the runs since the last change, at most {history_mod.WINDOW}): "
            f"Mann-Whitney p < 0.05, Hodges-Lehmann shift > {threshold:.0%}, and every launch "
            "median of the run beyond every launch median of the level. Medians: of all "
            "raw values.",
            [
                ["bad" if r[10] == "slower" else "good" if r[10] == "faster" else ""] * 12
                for r in change_rows
            ],
        )
    )
    return parts
