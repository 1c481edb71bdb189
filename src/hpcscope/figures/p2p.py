"""Latency and bandwidth versus message size, one curve per (MPI, placement).

The curve is the median over launches of each launch's median; the shaded band spans the
smallest to the largest launch median, so run-to-run spread is visible rather than hidden
in an average. Error bars show the nonparametric 95% CI of the pooled samples where it
exists. 0 B is drawn on a symmetric-log axis (linear below 1 B) since log(0) is undefined.
"""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402

from hpcscope.analysis.p2p_curves import curve_label, curves, what  # noqa: E402, F401
from hpcscope.figures.common import (  # noqa: E402
    MIN_FONT_PT,
    Drawing,
    quantity_formatter,
    save_drawings,
)
from hpcscope.formatting import size_tick  # noqa: E402
from hpcscope.results.cells import OSU_MORE_P2P  # noqa: E402

# metric: (axis label, scale, the unit the samples record; ticks scale it as the tables
# do: 95 ns, 1.5 µs; 800 MB/s, 15 GB/s with MB = 10^6 B as OSU's; 10 M/s)
METRICS = {
    "latency": ("Latency", "log", "us"),
    "bandwidth": ("Bandwidth (1 MB = 1,000,000 B)", "log", "MB/s"),
    "bibandwidth": ("Bidirectional bandwidth", "log", "MB/s"),
    "message_rate": ("Message rate (messages/s)", "log", "messages/s"),
    # IMB-MPI1's patterns: metric time, one figure per test (p2p_curves.what)
    "pingping": ("IMB-MPI1 PingPing time per iteration", "log", "us"),
    "sendrecv": ("IMB-MPI1 Sendrecv time per iteration", "log", "us"),
    "exchange": ("IMB-MPI1 Exchange time per iteration", "log", "us"),
    # OSU's persistent, threaded and forked tests: one figure per test, too
    **{t: (words.capitalize(), "log", unit) for t, (_, _, words, unit) in OSU_MORE_P2P.items()},
}


def drawings(samples: list[dict]) -> list[Drawing]:
    """One figure per metric the samples have."""
    found = []
    for metric in METRICS:
        shown = [[s["tags"], s["params"], s["values"]] for s in samples if what(s) == metric]
        if shown:
            draw = functools.partial(plot_metric, samples, metric)
            found.append(Drawing(f"p2p_{metric}", "p2p_metric", [metric, shown], draw))
    return found


def plot_metric(samples: list[dict], metric: str):
    data = curves(samples, metric)
    if not data:
        return None
    ylabel, yscale, unit = METRICS[metric]
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    for label, points in sorted(data.items()):
        x = np.array(sorted(points))
        y = np.array([points[v]["center"] for v in x])
        (line,) = ax.plot(x, y, marker="o", markersize=2.5, linewidth=1.2, label=label)
        # light, so that the bands of several curves overlapping stay see-through
        # (alpha 0.2 of four curves read as one blob)
        ax.fill_between(
            x,
            [points[v]["low"] for v in x],
            [points[v]["high"] for v in x],
            color=line.get_color(),
            alpha=0.08,
            linewidth=0,
        )
    ax.set_xscale("symlog", base=2, linthresh=1)
    ax.set_yscale(yscale)
    ax.set_xlabel("Message size")
    ax.set_ylabel(ylabel)
    ax.set_title(f"MPI point-to-point {metric.replace('_', ' ')} by placement", fontsize=11)
    ax.text(
        0.0,
        -0.26,
        "line: median of launch medians; band: lowest to highest launch median",
        transform=ax.transAxes,
        fontsize=MIN_FONT_PT,
        color="0.4",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.yaxis.set_major_formatter(quantity_formatter(unit))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    largest = max(max(points) for points in data.values())
    ticks = [0] + [2**k for k in range(0, 23, 2) if 2**k <= max(largest, 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_tick(t) for t in ticks], rotation=45, fontsize=MIN_FONT_PT + 1)
    fig.tight_layout()
    return fig


def write(samples: list[dict], out_dir: Path) -> list[Path]:
    """PNG and SVG per metric; returns the files written."""
    return save_drawings(drawings(samples), out_dir)
