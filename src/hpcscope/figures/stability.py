"""Stability of point-to-point results over repeated launches (Hoefler & Belli rule 9/10:
show the variation, do not hide it in a mean).

Left: relative half-width of the 95 % interval of the quoted median over launches
(results/precision.quoted_interval: what a star and "unstable" are judged by). Right:
spread of the launch medians, (max - min) / median. A dashed line marks 5 %, the limit
for a run of fixed counts; a dotted one the run's precision target where it has one: a
point above the line that applies is starred in `show` and listed in the report with
its class. Box plots show the launch medians at a few sizes.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hpcscope.formatting import size_tick  # noqa: E402
from hpcscope.results import stats  # noqa: E402

LIMIT = stats.CV_LIMIT


def spread_figure(curves: dict[str, dict[int, dict]], what: str, target: float | None = None):
    """curves: figures.p2p.curves(samples, metric). None when there is nothing to show.
    target: the run's precision target (a run measured to a precision), drawn dotted."""
    if not curves:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.4), dpi=100, sharex=True)
    for label, points in sorted(curves.items()):
        x = np.array(sorted(points))
        centre = np.array([points[s]["center"] for s in x])
        half = np.array(
            [
                points[s]["half_width"] if points[s].get("half_width") is not None else np.nan
                for s in x
            ]
        )
        spread = np.array([points[s]["high"] - points[s]["low"] for s in x])
        with np.errstate(divide="ignore", invalid="ignore"):
            left.plot(x, 100 * half, marker="o", markersize=3, label=label)
            right.plot(x, 100 * spread / centre, marker="o", markersize=3, label=label)
    for ax, title in (
        (left, "95% interval of the median, over launches"),
        (right, "spread of launch medians (max-min)"),
    ):
        ax.axhline(100 * LIMIT, color="0.3", linestyle="--", linewidth=1)
        if target:
            ax.axhline(100 * target, color="tab:red", linestyle=":", linewidth=1.2)
        ax.set_xscale("symlog", base=2, linthresh=1)
        ax.set_title(f"{what}: {title}", fontsize=9)
        ax.set_ylabel("% of median")
        # Symmetric log: one wild size must not flatten the rest against the 5% line.
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("Message size")
        ax.grid(True, alpha=0.3)
        ticks = [0] + [2**k for k in range(0, 23, 4)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_tick(t) for t in ticks], fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_xlim(-0.5, max(max(points) for points in curves.values()) * 1.5)
    right.legend(fontsize=7)
    fig.tight_layout()
    return fig


def box_figure(samples: list[dict], metric: str, sizes_wanted: int = 6):
    """Box plots of the raw values, normalised to each group's median, at a few sizes per
    label: the shape of the distribution (tails, modes) that a mean would hide."""
    groups: dict[str, dict[int, list[float]]] = {}
    for s in samples:
        if s["metric"] != metric:
            continue
        label = f"{s['tags'].get('mpi', '?')} {s['tags'].get('placement', '?')}"
        groups.setdefault(label, {}).setdefault(int(s["params"]["bytes"]), []).extend(s["values"])
    if not groups:
        return None
    all_sizes = sorted({size for g in groups.values() for size in g})
    pick = sorted(
        {
            all_sizes[int(round(i))]
            for i in np.linspace(0, len(all_sizes) - 1, min(sizes_wanted, len(all_sizes)))
        }
    )
    labels = sorted(groups)
    fig, ax = plt.subplots(figsize=(9.5, 3.2), dpi=100)
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        data, pos = [], []
        for i, size in enumerate(pick):
            vals = np.asarray(groups[label].get(size, []), dtype=float)
            if vals.size and np.median(vals) != 0:
                data.append(100 * (vals / np.median(vals) - 1))
                pos.append(i + (k - (len(labels) - 1) / 2) * width)
        if data:
            bp = ax.boxplot(
                data,
                positions=pos,
                widths=width * 0.9,
                patch_artist=True,
                manage_ticks=False,
                flierprops={"markersize": 2},
            )
            colour = f"C{k}"
            for box in bp["boxes"]:
                box.set_facecolor(colour)
                box.set_alpha(0.5)
            ax.plot([], [], color=colour, linewidth=6, alpha=0.5, label=label)
    ax.set_xticks(range(len(pick)))
    ax.set_xticklabels([size_tick(s) for s in pick])
    ax.set_xlabel("Message size")
    ax.set_ylabel("% from median")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_title(f"{metric}: distribution of all samples over all launches", fontsize=9)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(len(labels), 4))
    fig.tight_layout()
    return fig
