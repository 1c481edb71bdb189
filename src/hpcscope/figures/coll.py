"""Figures of the collective and lane benchmarks (PNG and SVG, matplotlib Agg).

coll: one figure per (MPI, N, n, p), one panel per collective; time against count on
log-log axes; the line is the median of the repetitions, the small marks below it the
minimum (the paper's "best of"); a mock-up point ringed in red is a guideline violation
(significantly >= 5 % faster than native, see verdicts). Nothing is smoothed.
lanes: one figure per (MPI, benchmark, N, n): median time per k, and the factor of
verdicts.lanes_table against the count (1 = no gain; L lanes: up to L).
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter, LogLocator, NullFormatter  # noqa: E402

from hpcscope.analysis.verdicts import coll_table, lanes_table  # noqa: E402
from hpcscope.figures.common import (  # noqa: E402
    MIN_FONT_PT,
    Drawing,
    quantity_formatter,
    save_drawings,
)

COLORS = {
    "native": "#1f77b4",
    "lane": "#d62728",
    "hier": "#2ca02c",
    "lane_v": "#ff7f0e",
    "tuned": "#9467bd",
}
# The rest of matplotlib's tab10, for the library's own algorithms (kported, pipeline, ...):
# left to the default cycle, the first of them was drawn in native's blue.
OTHER_COLORS = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def coll_figures(samples: Iterable[dict], out_dir: Path) -> list[Path]:
    """Each coll figure as out_dir/STEM.png and .svg; returns the paths."""
    return save_drawings(coll_drawings(coll_table(samples)), out_dir)


def lanes_figures(samples: Iterable[dict], out_dir: Path) -> list[Path]:
    """Each lanes figure as out_dir/STEM.png and .svg; returns the paths."""
    return save_drawings(lanes_drawings(lanes_table(samples)), out_dir)


def coll_drawings(rows: list[dict]) -> list[Drawing]:
    """One grid of collectives per (MPI, N, n, p) of verdicts.coll_table's rows."""
    by_setup: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_setup[(row["mpi"], row["N"], row["n"], row["p"])][row["collective"]].append(row)
    return _drawings("coll_grid", by_setup, lambda s: f"coll_{s[0]}_N{s[1]}_n{s[2]}", _coll_grid)


def ranks_drawings(rows: list[dict]) -> list[Drawing]:
    """One grid per MPI of verdicts.ranks_table's rows (--npmin): time against the rank
    count, a line per algorithm and size."""
    by_mpi: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_mpi[(row["mpi"],)][row["collective"]].append(row)
    return _drawings("coll_ranks", by_mpi, lambda s: f"coll_ranks_{s[0]}", _ranks_grid)


def _ranks_grid(setup: tuple, by_coll: dict[str, list[dict]]) -> Any:
    names = sorted(by_coll)
    cols = min(GRID_COLUMNS, len(names))
    nrows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(
        nrows, cols, figsize=(PANEL_IN[0] * cols, PANEL_IN[1] * nrows), dpi=110, squeeze=False
    )
    for ax, name in zip(axes.flat, names):
        for r in by_coll[name]:  # native solid, mock-ups dashed; colours cycle by size
            ranks = sorted(r["ranks"])
            style = "-" if r["algorithm"] == "native" else "--"
            label = f"{r['algorithm']} {r['bytes']} B"
            ax.plot(ranks, [r["ranks"][p] for p in ranks], style, marker="o", markersize=3,
                    label=label)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_ticks(ax)
        ax.set_xticks(sorted({p for r in by_coll[name] for p in r["ranks"]}))
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("ranks p", fontsize=9)
        ax.set_ylabel("time", fontsize=9)
        ax.tick_params(labelsize=MIN_FONT_PT + 1)
        ax.grid(True, which="major", alpha=0.25)
        ax.legend(fontsize=MIN_FONT_PT + 1)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.suptitle(f"{setup[0]}: median time by rank count (--npmin sweep)", fontsize=10)
    fig.tight_layout()
    return fig


def _drawings(kind: str, groups: dict, stem: Callable, draw: Callable) -> list[Drawing]:
    """One Drawing per group, which is what it shows: draw(key, group)."""
    return [
        Drawing(_safe(stem(key)), kind, [key, group], functools.partial(draw, key, group))
        for key, group in sorted(groups.items())
    ]


# At most 3 panels a row, 3.6 in each: the grid is at most PAGE_WIDTH_IN wide, so the
# report shows it at its own size and its smallest text (MIN_FONT_PT) stays >= 9 px.
# (5 a row of 3.4 in shrank to 0.65 of its size: 7 pt text read as 6 px.)
GRID_COLUMNS = 3
PANEL_IN = (3.6, 2.9)


def _coll_grid(setup: tuple, by_coll: dict[str, list[dict]]) -> Any:
    mpi, nodes, ppn, p = setup
    names = sorted(by_coll)
    cols = min(GRID_COLUMNS, len(names))
    nrows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(
        nrows, cols, figsize=(PANEL_IN[0] * cols, PANEL_IN[1] * nrows), dpi=110, squeeze=False
    )
    used = {a for rows in by_coll.values() for r in rows for a in r["algorithms"]}
    others = sorted(used - COLORS.keys())
    colors = {a: OTHER_COLORS[i % len(OTHER_COLORS)] for i, a in enumerate(others)}
    for ax, name in zip(axes.flat, names):
        points = sorted(by_coll[name], key=lambda r: r["count"])
        algs: list[str] = []
        for r in points:
            algs += [a for a in r["algorithms"] if a not in algs]
        for alg in algs:
            xs = [r["count"] for r in points if f"{alg}_median" in r]
            med = [r[f"{alg}_median"] for r in points if f"{alg}_median" in r]
            mins = [r[f"{alg}_min"] for r in points if f"{alg}_min" in r]
            color = COLORS.get(alg, colors.get(alg))
            ax.plot(xs, med, marker="o", markersize=3, label=alg, color=color)
            ax.plot(xs, mins, linestyle="none", marker="_", markersize=6, color=color)
            bad = [
                (r["count"], r[f"{alg}_median"])
                for r in points
                if r.get(f"{alg}_verdict") == "violation"
            ]
            if bad:
                ax.plot(
                    *zip(*bad),
                    linestyle="none",
                    marker="o",
                    markersize=9,
                    markerfacecolor="none",
                    markeredgecolor="red",
                )
        countless = all(r["count"] == 0 for r in points)  # barrier: no data, one point
        ax.set_xscale("linear" if countless else "log")
        ax.set_yscale("log")
        _plain_log_ticks(ax)
        if countless:
            ax.set_xticks([0], ["no data"])
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("count (MPI_INT)", fontsize=9)
        ax.set_ylabel("time", fontsize=9)
        ax.tick_params(labelsize=MIN_FONT_PT + 1)
        ax.grid(True, which="major", alpha=0.25)  # minor lines: half the SVG of 13 panels
        ax.legend(fontsize=MIN_FONT_PT + 1)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"{mpi}: N={nodes} nodes x n={ppn} (p={p}); line = median, "
        "dash = min, red ring = guideline violation",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def _plain_log_ticks(ax: Any) -> None:
    """Log axes labelled as people write numbers: counts 1, 100, 10k (not 10^2 or
    2 x 10^0 on minor ticks), times with their unit (100 ns, 1.5 ms)."""
    ax.xaxis.set_major_formatter(EngFormatter(places=0, sep=""))
    ax.xaxis.set_minor_formatter(NullFormatter())
    # 1-2-5 ticks: a panel spans less than a decade of time, where ticks at powers of
    # ten alone left one labelled tick
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(quantity_formatter("us"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _lane_groups(rows: list[dict]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["mpi"], row["benchmark"], row["N"], row["n"])].append(row)
    return groups


def lanes_drawings(rows: list[dict]) -> list[Drawing]:
    """Time and factor against one lane per (MPI, benchmark, N, n) of
    verdicts.lanes_table's rows; not where only k = 1 was measured (a flat 1.00 line
    with nothing to compare: lanes_left_out names them)."""
    groups = {g: pts for g, pts in _lane_groups(rows).items() if len({r["k"] for r in pts}) > 1}
    return _drawings("lanes_grid", groups, lambda g: f"{g[1]}_{g[0]}_N{g[2]}_n{g[3]}", _lanes_grid)


def lanes_left_out(rows: list[dict]) -> list[str]:
    """'multi_coll openmpi N=2 x n=1' for each group with one lane count only."""
    return [
        f"{bench} {mpi} N={nodes} x n={ppn}"
        for (mpi, bench, nodes, ppn), pts in sorted(_lane_groups(rows).items())
        if len({r["k"] for r in pts}) <= 1
    ]


def _lanes_grid(group: tuple, points: list[dict]) -> Any:
    mpi, bench, nodes, ppn = group
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=110)
    for k in sorted({r["k"] for r in points}):
        mine = sorted((r for r in points if r["k"] == k), key=lambda r: r["count"])
        xs = [r["count"] for r in mine]
        left.plot(xs, [r["median_us"] for r in mine], marker="o", markersize=3, label=f"k={k}")
        fx = [(r["count"], r["factor"]) for r in mine if r.get("factor") is not None]
        if fx:
            right.plot(*zip(*fx), marker="o", markersize=3, label=f"k={k}")
    title = "time per step" if bench == "lane_pattern" else "time of k concurrent alltoalls"
    left.set(
        xscale="log",
        yscale="log",
        xlabel="count c (MPI_INT)",
        ylabel="median time",
        title=title,
    )
    _plain_log_ticks(left)
    right.set(
        xscale="log",
        xlabel="count c (MPI_INT)",
        ylabel="t(1)/t(k): speed-up" if bench == "lane_pattern" else "t(k)/t(1)",
        title="factor vs one lane",
    )
    right.xaxis.set_major_formatter(EngFormatter(places=0, sep=""))
    right.xaxis.set_minor_formatter(NullFormatter())
    right.axhline(1.0, color="grey", linewidth=0.8)
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=MIN_FONT_PT + 1)
    fig.suptitle(f"{mpi} {bench}: N={nodes} x n={ppn}", fontsize=10)
    fig.tight_layout()
    return fig
