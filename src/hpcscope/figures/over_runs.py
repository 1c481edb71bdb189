"""Figures of many runs: curves of comparable runs overlaid, and history over time.

overlay_figure: one panel per configuration (MPI and placement for p2p), one thin line
per run (its median per message size; colour by run order), and the median over the
runs in black. Up to LEGEND_RUNS runs are named in a legend; beyond, a colour bar gives
the run order. The figure costs the same for 40 runs as for 4 but for 36 short lines.

history_figure: one figure per metric, x the runs in start order, one line per
configuration and key size (the run's median with its 95% CI as a band), a dashed
vertical line where a detected change starts (analysis/history.py). Values are scaled
to each line's first value when their magnitudes differ (sizes of one metric span
orders of magnitude), which the axis label says.

Both draw what analysis computed; they compute no statistics of their own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import cm, colors, ticker  # noqa: E402

from hpcscope.analysis.history import Series  # noqa: E402
from hpcscope.figures.common import MIN_FONT_PT, quantity_formatter  # noqa: E402
from hpcscope.formatting import size_tick  # noqa: E402

LEGEND_RUNS = 12
_PLAIN = ticker.FuncFormatter(lambda v, _: f"{v:g}")


def _config(s: Series) -> str:
    return " ".join(str(v) for v in s.config.values()) or s.benchmark


def overlay_figure(series: Sequence[Series], run_ids: Sequence[int], run_names: dict[int, str]):
    """series: one metric, sizes as params['bytes']; None when there is nothing to draw."""
    panels: dict[str, list[Series]] = defaultdict(list)
    for s in series:
        if isinstance(s.params.get("bytes"), (int, float)) and s.points:
            panels[_config(s)].append(s)
    if not panels:
        return None
    metric, unit = series[0].metric, series[0].unit
    names = sorted(panels)
    cols = min(len(names), 2)
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(4.6 * cols + 1.2, 3.2 * rows),
        dpi=100,
        squeeze=False,
        layout="constrained",  # room for the colour bar and the rotated ticks
    )
    order = {rid: i for i, rid in enumerate(run_ids)}
    cmap = plt.get_cmap("viridis")
    norm = colors.Normalize(0, max(len(run_ids) - 1, 1))
    for ax, name in zip(axes.flat, names, strict=False):
        by_run: dict[int, dict[int, float]] = defaultdict(dict)
        for s in panels[name]:
            for p in s.points:
                by_run[p.run_id][int(s.params["bytes"])] = p.median
        for rid in sorted(by_run, key=lambda r: order.get(r, 0)):
            x = sorted(by_run[rid])
            ax.plot(
                x,
                [by_run[rid][v] for v in x],
                color=cmap(norm(order.get(rid, 0))),
                linewidth=0.9,
                alpha=0.8,
                label=run_names.get(rid, f"run {rid}") if len(run_ids) <= LEGEND_RUNS else None,
            )
        sizes = sorted({v for pts in by_run.values() for v in pts})
        median = [float(np.median([pts[v] for pts in by_run.values() if v in pts])) for v in sizes]
        ax.plot(sizes, median, color="black", linewidth=1.8, label="median over runs")
        ax.set_xscale("symlog", base=2, linthresh=1)
        ax.set_yscale("log")
        ax.set_xticks(sizes if len(sizes) <= 8 else sizes[:: max(len(sizes) // 8, 1)])
        ax.set_xticklabels(
            [size_tick(t) for t in ax.get_xticks()], rotation=45, fontsize=MIN_FONT_PT
        )
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("Message size", fontsize=8)
        ax.set_ylabel(metric, fontsize=8)  # the ticks carry the unit: 1.5 µs, 12 GB/s
        ax.grid(True, which="both", alpha=0.3)
        ax.yaxis.set_major_formatter(quantity_formatter(unit))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.legend(fontsize=MIN_FONT_PT, ncol=2)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    if len(run_ids) > LEGEND_RUNS:
        bar = fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=axes, fraction=0.03)
        bar.set_label("run, in start order (0 = first)", fontsize=8)
    return fig


def history_figure(series: Sequence[Series], index_of: dict[int, int]):
    """series: one metric (key sizes); index_of: run id -> position in start order."""
    drawn = [s for s in series if s.points]
    if not drawn:
        return None
    metric, unit = drawn[0].metric, drawn[0].unit
    firsts = [abs(s.points[0].median) for s in drawn if s.points[0].median]
    relative = bool(firsts) and max(firsts) / max(min(firsts), 1e-300) > 3
    fig, ax = plt.subplots(figsize=(9.0, 3.6), dpi=100)
    starts: set[int] = set()
    for s in drawn:
        x = np.array([index_of[p.run_id] for p in s.points])
        scale = s.points[0].median if relative and s.points[0].median else 1.0
        y = np.array([p.median for p in s.points]) / scale
        low = np.array([p.ci_low if p.ci_low is not None else p.median for p in s.points]) / scale
        high = np.array([p.ci_high if p.ci_high is not None else p.median for p in s.points])
        high = high / scale
        size = s.params.get("bytes")
        name = _config(s) + (f" {size_tick(int(size))}" if isinstance(size, (int, float)) else "")
        (line,) = ax.plot(
            x, y, linewidth=0.9, marker="o" if len(x) <= 60 else None, markersize=2.5, label=name
        )
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.1, linewidth=0)
        starts |= {index_of[c.run_id] for c in s.changes}
    for at in sorted(starts):
        ax.axvline(at, color="0.35", linestyle="--", linewidth=0.8)
    ax.set_xlabel("runs in start order" + (" (dashed: a change starts)" if starts else ""))
    ax.set_ylabel(f"{metric} / first run" if relative else metric)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_PLAIN if relative else quantity_formatter(unit))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    if len(index_of) <= 30:  # few runs: name them
        ids = sorted(index_of, key=index_of.__getitem__)
        ax.set_xticks(range(len(ids)))
        ax.set_xticklabels([str(r) for r in ids], fontsize=MIN_FONT_PT)
        ax.set_xlabel("run id, in start order" + (" (dashed: a change starts)" if starts else ""))
    ax.set_title(
        f"{metric} over {len(index_of)} runs: median per run, band: its 95% CI", fontsize=10
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=MIN_FONT_PT, ncol=3)
    fig.tight_layout()
    return fig
