"""Figures of the node suite, in the layouts users know from benchmark reports:
operations/s vs threads per precision with the theoretical peak as a line, memory and
disk bandwidth vs block size (sequential vs random), network throughput vs streams, and
the pointer chase with hwloc's cache sizes marked. Reference tools are drawn as open
markers beside hpcscope's own kernels. Each point is the median of the raw repetitions.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from hpcscope.analysis import node_table  # noqa: E402
from hpcscope.figures.common import Drawing, save_drawings, save_png_svg  # noqa: E402
from hpcscope.formatting import format_bytes  # noqa: E402


def _series(samples: list[dict], pick, x_key: str, label) -> dict[str, list[tuple[float, float]]]:
    """{label: [(x, median)]} over the samples `pick` accepts."""
    points: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if pick(s) and x_key in s["params"]:
            points[label(s)][float(s["params"][x_key])].extend(s["values"])
    return {
        name: sorted((x, float(np.median(v))) for x, v in by_x.items())
        for name, by_x in points.items()
    }


def _plot(
    series: dict[str, list[tuple[float, float]]],
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    peaks: Sequence[tuple[str, float]] = (),
) -> Any:
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.0), dpi=100)
    for name, pts in sorted(series.items()):
        reference = name.split()[0] not in node_table.OURS
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            marker="s" if reference else "o",
            markersize=5,
            fillstyle="none" if reference else "full",
            linestyle=":" if reference else "-",
            label=name,
        )
    for name, value in peaks:
        ax.axhline(value, color="0.3", linestyle="--", linewidth=1)
        ax.text(ax.get_xlim()[0], value, f" peak {name}: {value:.4g}", fontsize=7, va="bottom")
    if logx:
        ax.set_xscale("log", base=2)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figures(samples: list[dict], peaks: list[dict], caches: dict[str, int]) -> dict[str, Any]:
    """{file stem: matplotlib figure} for whatever the samples contain. Our runs beside a
    reference tool (param `beside`) are not curves of their own: the node table shows them."""
    samples = [s for s in samples if not (s.get("params") or {}).get("beside")]
    figs: dict[str, Any] = {}
    flops = _series(
        samples,
        lambda s: s["metric"] == "flops",
        "threads",
        lambda s: (
            f"{s['benchmark']} {s['params'].get('workload', '')} {s['params'].get('precision', '')}"
        ),
    )
    peak_lines = [
        (p["name"], p["value"])
        for p in peaks
        if p.get("unit") == "GFLOP/s"
        and p.get("value")
        and any(p["name"] in label for label in flops)
    ]
    figs["node_flops_vs_threads"] = _plot(
        flops, "Floating-point rate vs threads", "threads", "GFLOP/s (median)", peaks=peak_lines
    )
    figs["node_int_vs_threads"] = _plot(
        _series(
            samples,
            lambda s: s["metric"] == "throughput" and s["unit"] == "GOP/s",
            "threads",
            lambda s: f"{s['benchmark']} {s['params'].get('precision', '')}",
        ),
        "Integer operations vs threads",
        "threads",
        "GOP/s (median)",
    )
    figs["node_stream_vs_threads"] = _plot(
        _series(
            samples,
            lambda s: (
                s["metric"] == "bandwidth"
                and s["params"].get("workload") == "stream"
                or (s["benchmark"] == "likwid-bench" and s["metric"] == "bandwidth")
            ),
            "threads",
            lambda s: f"{s['benchmark']} {s['params'].get('op', '')}",
        ),
        "STREAM bandwidth vs threads",
        "threads",
        "MB/s (median)",
    )
    figs["node_mem_vs_block"] = _plot(
        _series(
            samples,
            lambda s: (
                s["benchmark"] == "mem" and s["metric"] == "bandwidth" and "block" in s["params"]
            ),
            "block",
            lambda s: (
                f"mem {s['params'].get('pattern', '')} {s['params'].get('op', '')} "
                f"{s['params'].get('threads', '')}t"
            ),
        ),
        "Memory bandwidth vs block size",
        "block (bytes)",
        "MB/s (median)",
        logx=True,
    )
    figs["node_disk_vs_block"] = _plot(
        _series(
            samples,
            lambda s: s["metric"] == "bandwidth" and s["benchmark"] in ("disk", "fio"),
            "block",
            lambda s: (
                f"{s['benchmark']} {s['params'].get('pattern', '')} "
                f"{s['params'].get('op', '')} d{s['params'].get('depth', '')}"
            ),
        ),
        "Disk throughput (O_DIRECT) vs block size",
        "block (bytes)",
        "MB/s (median)",
        logx=True,
    )
    figs["node_net_vs_streams"] = _plot(
        _series(
            samples,
            lambda s: s["metric"] == "throughput" and s["unit"] == "Mbit/s",
            "streams",
            lambda s: (
                f"{s['benchmark']} {s['params'].get('protocol', '')} "
                f"{s['params'].get('block', '')}B"
                + (" between 2 nodes" if s["params"].get("nodes") else "")
            ),
        ),
        "Network throughput vs streams (loopback, and between 2 nodes where run)",
        "streams",
        "Mbit/s (median)",
    )
    figs["node_mem_wss"] = _plot(
        _series(
            samples,
            lambda s: s["metric"] == "bandwidth" and s["params"].get("workload") == "mem_wss",
            "bytes",
            lambda s: f"{s['benchmark']} copy {s['params'].get('threads', '')}t",
        ),
        "Copy bandwidth vs working set (ours and likwid-bench copy)",
        "working set (bytes, both arrays)",
        "MB/s (median)",
        logx=True,
    )
    loaded = _series(
        samples,
        lambda s: s["benchmark"] == "mem" and s["params"].get("workload") == "mem_latency",
        "bytes",
        lambda s: f"mem {s['params'].get('threads', 1)} thread(s) chasing at once",
    )
    if len(loaded) > 1:  # one curve is the pointer-chase figure below
        figs["node_latency_vs_threads"] = _plot(
            loaded,
            "Pointer-chase latency vs working set, per number of threads chasing at once",
            "working set (bytes)",
            "ns per load (median)",
            logx=True,
        )
    return {k: v for k, v in figs.items() if v is not None}


def pointer_chase(samples: list[dict]) -> tuple[list[float], list[float], str] | None:
    """(working sets, median latencies, unit) of the single-thread pointer chase."""
    from hpcscope.analysis.machine_measured import chase_curve

    return chase_curve(samples)


def chase_drawing(samples: list[dict], caches: dict[str, int]) -> Drawing | None:
    """The single-thread pointer chase with the topology's cache sizes, or None."""
    chase = pointer_chase(samples)
    if chase is None:
        return None
    data = [*chase, caches]
    draw = functools.partial(pointer_chase_figure, *chase, caches)
    return Drawing("node_pointer_chase", "node_chase", data, draw)


def pointer_chase_figure(x: list[float], y: list[float], unit: str, caches: dict[str, int]) -> Any:
    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=100)
    ax.plot(x, y, marker="o", markersize=3)
    ymax = max(y)
    for name, size in caches.items():
        if name.endswith("i"):
            continue
        ax.axvline(size, color="0.5", linestyle="--", linewidth=1)
        ax.text(
            size,
            ymax,
            f" {name} {format_bytes(size)}",
            fontsize=7,
            rotation=90,
            va="top",
            ha="right",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Working set (bytes)")
    ax.set_ylabel(f"Latency per load ({unit}, median)")
    ax.set_title("Pointer chase: latency vs working set, with cache sizes", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def efficiency_figure(rows: list[dict]) -> Any:
    """Horizontal bars: best as % of peak for every node_table row that has a peak."""
    with_peak = node_table.with_theoretical_peak(rows)
    if not with_peak:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * len(with_peak) + 1.2), dpi=100)
    labels = [node_table.row_label(r)[:60] for r in with_peak]
    eff = [100 * r["eff_vs_peak"] for r in with_peak]
    ax.barh(range(len(eff)), eff, color=["C3" if e > 100 else "C0" for e in eff])
    ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(eff)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("% of theoretical peak (best)")
    ax.set_title("Efficiency vs theoretical peak", fontsize=10)
    fig.tight_layout()
    return fig


def write(
    samples: list[dict], peaks: list[dict], caches: dict[str, int], out_dir: Path
) -> list[Path]:
    written: list[Path] = []
    for stem, fig in figures(samples, peaks, caches).items():
        written += save_png_svg(fig, out_dir, stem)
    chase = chase_drawing(samples, caches)
    return written + (save_drawings([chase], out_dir) if chase else [])
