"""Figures of the nbc suite (PNG and SVG, matplotlib Agg), from analysis.nbc_analysis rows:

nbc_overlap_<mpi>: OSU's overlap (%) against the message size, one line per non-blocking
    collective (median of the per-iteration overlaps);
nbc_times_<mpi>: time against size, one panel per family: non-blocking (pure I<coll> +
    MPI_Wait), persistent (Start + Wait) and neighbourhood collectives, each variant
    beside its blocking collective (dashed, same colour). Nothing is smoothed.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter, NullFormatter  # noqa: E402

from hpcscope.figures.coll import GRID_COLUMNS, PANEL_IN, _plain_log_ticks, _safe  # noqa: E402
from hpcscope.figures.common import MIN_FONT_PT, Drawing  # noqa: E402
from hpcscope.results.nbc_names import blocking_of  # noqa: E402

FAMILY_TITLES = {
    "nonblocking": "non-blocking: I<coll> + MPI_Wait",
    "persistent": "persistent: MPI_Start + MPI_Wait",
    "neighborhood": "neighbourhood collectives",
}


def drawings(rows: list[dict]) -> list[Drawing]:
    by_mpi: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_mpi[row["mpi"]].append(row)
    out = []
    for mpi, mine in sorted(by_mpi.items()):
        overlap = [r for r in mine if r.get("overlap") is not None and r["bytes"] > 0]
        if overlap:
            out.append(
                Drawing(
                    _safe(f"nbc_overlap_{mpi}"),
                    "nbc_overlap",
                    [mpi, overlap],
                    functools.partial(_overlap, mpi, overlap),
                )
            )
        timed = [r for r in mine if r["bytes"] > 0]
        if timed:
            out.append(
                Drawing(
                    _safe(f"nbc_times_{mpi}"),
                    "nbc_times",
                    [mpi, timed],
                    functools.partial(_times, mpi, timed),
                )
            )
    return out


def _series(rows: list[dict], key: str) -> dict[str, list[tuple[int, float]]]:
    lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r.get(key) is not None:
            lines[r["collective"]].append((r["bytes"], r[key]))
    return {name: sorted(points) for name, points in sorted(lines.items())}


def _size_axis(ax: Any) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(EngFormatter(places=0, sep=""))  # 1, 64, 1k: not 2^6
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size (bytes)", fontsize=9)
    ax.tick_params(labelsize=MIN_FONT_PT + 1)
    ax.grid(True, which="major", alpha=0.25)


def _overlap(mpi: str, rows: list[dict]) -> Any:
    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=110)
    for name, points in _series(rows, "overlap").items():
        ax.plot(*zip(*points), marker="o", markersize=3, label=name)
    _size_axis(ax)
    ax.set_ylim(-2, 102)
    ax.set_ylabel("overlap (%)", fontsize=9)
    ax.legend(fontsize=MIN_FONT_PT, ncol=2, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_title(
        f"{mpi}: overlap = max(0, 100 - (overall - compute) / pure x 100), median", fontsize=9
    )
    fig.tight_layout()
    return fig


def _times(mpi: str, rows: list[dict]) -> Any:
    families = [f for f in FAMILY_TITLES if any(r["family"] == f for r in rows)]
    panels = [(f, [r for r in rows if r["family"] == f]) for f in families]
    if not panels:  # only blocking collectives were asked for
        panels = [("blocking", rows)]
    base_rows = [r for r in rows if r["family"] == "blocking"]
    cols = min(GRID_COLUMNS, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(
        nrows,
        cols,
        figsize=(PANEL_IN[0] * cols, PANEL_IN[1] * nrows * 1.2),
        dpi=110,
        squeeze=False,
    )
    for ax, (family, mine) in zip(axes.flat, panels):
        pure = _series(mine, "pure_us")
        lines = {**_series(mine, "time_us"), **pure}  # a variant's own time
        bases = _series(base_rows, "time_us")
        for name, points in lines.items():
            (line,) = ax.plot(*zip(*points), marker="o", markersize=3, label=name)
            base = blocking_of(name)
            if base in bases and base not in lines:  # its blocking collective, dashed
                ax.plot(*zip(*bases[base]), linestyle="--", color=line.get_color())
        _size_axis(ax)
        ax.set_yscale("log")
        _plain_log_ticks(ax)
        ax.set_ylabel("median time", fontsize=9)
        ax.set_title(FAMILY_TITLES.get(family, family), fontsize=MIN_FONT_PT + 1)
        ax.legend(fontsize=MIN_FONT_PT, ncol=2)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"{mpi}: median time per call against message size; dashed: the blocking collective",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
