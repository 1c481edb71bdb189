"""Heatmaps of `run links`: the N x N bandwidth and latency matrices (one panel per lane,
at most 3 a row), the flagged pairs ringed. Drawn from analysis.links results only.

Node names label the axes up to LABELLED_NODES nodes; beyond, node indexes (the matrix
CSV names them). Cost: one imshow per lane (1,024 nodes: a 1024 x 1024 raster, well
under a second); the cache key is a hash of the matrices, not the numbers themselves.
"""

from __future__ import annotations

import hashlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hpcscope.analysis.links import METRICS, LinksResult  # noqa: E402
from hpcscope.figures.common import (  # noqa: E402
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    Drawing,
    quantity_formatter,
)

LABELLED_NODES = 40
RINGED_FLAGS = 200  # more flagged pairs than this: no rings (the table lists them)


def drawings(result: LinksResult, tag: str = "") -> list[Drawing]:
    """links_[TAG]bandwidth and links_[TAG]latency (each where some pair has the metric;
    TAG names the launch where a run has several)."""
    out = []
    for metric, unit, high in METRICS:
        mats = [result.matrix(metric, lane) for lane in range(result.lanes)]
        if all(np.isnan(m).all() for m in mats):
            continue
        flagged = [
            (result.nodes.index(f.node_a), result.nodes.index(f.node_b), f.lane)
            for f in result.flags
            if f.metric == metric
        ]
        digest = hashlib.sha256(b"".join(np.nan_to_num(m, nan=-1.0).tobytes() for m in mats))
        data = {
            "metric": metric,
            "nodes": result.nodes if len(result.nodes) <= LABELLED_NODES else len(result.nodes),
            "matrices": digest.hexdigest(),
            "flagged": flagged[:RINGED_FLAGS],
        }

        def draw(mats=mats, metric=metric, unit=unit, high=high, flagged=flagged):
            return _heatmap(result.nodes, mats, metric, unit, high, flagged)

        out.append(Drawing(f"links_{tag}{metric}", "links_heatmap", data, draw))
    return out


def _heatmap(
    nodes: list[str],
    mats: list[np.ndarray],
    metric: str,
    unit: str,
    high_worse: bool,
    flagged: list[tuple[int, int, int]],
):
    panels = len(mats)
    cols = min(3, panels)
    rows = (panels + cols - 1) // cols
    side = min(PAGE_WIDTH_IN / cols, 5.5)
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, side * rows * 0.9), squeeze=False)
    finite = np.concatenate([m[np.isfinite(m)] for m in mats])
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    # worse is darker: reversed map for latency (high = worse)
    cmap = plt.get_cmap("viridis_r" if high_worse else "viridis").copy()
    cmap.set_bad("#dddddd")
    n = len(nodes)
    for lane, m in enumerate(mats):
        ax = axes[lane // cols][lane % cols]
        image = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
        if n <= LABELLED_NODES:
            ax.set_xticks(range(n), nodes, rotation=90, fontsize=MIN_FONT_PT)
            ax.set_yticks(range(n), nodes, fontsize=MIN_FONT_PT)
        else:
            ax.tick_params(labelsize=MIN_FONT_PT + 1)
        ringed = [(a, b) for a, b, l in flagged if l == lane][:RINGED_FLAGS]
        for a, b in ringed:
            for x, y in ((a, b), (b, a)):
                ax.add_patch(
                    plt.Rectangle(
                        (x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=1.2
                    )
                )
        title = f"{metric} (each pair's best in its round)"
        ax.set_title(title if len(mats) == 1 else f"{title}, lane {lane}", fontsize=MIN_FONT_PT + 2)
        bar = fig.colorbar(image, ax=ax, shrink=0.8, format=quantity_formatter(unit))
        bar.ax.tick_params(labelsize=MIN_FONT_PT + 1)
    for k in range(panels, rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.tight_layout()
    return fig
