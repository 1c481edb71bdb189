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
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

from hpcscope.analysis import node_table  # noqa: E402
from hpcscope.figures.common import (  # noqa: E402
    MIN_FONT_PT,
    Drawing,
    quantity_formatter,
    save_drawings,
)
from hpcscope.formatting import format_bytes, format_number  # noqa: E402


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
    unit: str = "",
) -> Any:
    """unit: what the y values are in (MB/s, Mbit/s, ns, ...): the ticks scale it as the
    tables do (15.8 GB/s, not 15800); logx: the x values are sizes in bytes, ticked in
    KiB/MiB."""
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
        ax.text(
            ax.get_xlim()[0],
            value,
            f" peak {name}: {format_number(value, unit)}",
            fontsize=MIN_FONT_PT + 1,
            va="bottom",
        )
    if logx:
        _bytes_axis(ax)
    else:
        xs = sorted({p[0] for pts in series.values() for p in pts})
        if len(xs) <= 12:  # threads or streams: the counts measured, not 0.97 ... 1.03
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if unit:
        ax.yaxis.set_major_formatter(quantity_formatter(unit))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=MIN_FONT_PT + 1)
    fig.tight_layout()
    return fig


def _bytes_axis(ax: Any) -> None:
    """A log-2 axis of sizes in bytes ticked at powers of 4 as 4 KiB, 1 MiB (not 2^12)."""
    ax.set_xscale("log", base=2)
    low, high = ax.get_xlim()
    ticks = [4.0**k for k in range(0, 32) if low <= 4.0**k <= high]
    if len(ticks) > 9:  # wide ranges: every other power of 4 keeps the labels apart
        ticks = ticks[::2]
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(quantity_formatter("bytes"))
    ax.xaxis.set_minor_formatter(NullFormatter())


# stem -> (title, x label, y label, byte sizes on x, the unit of y)
_LOOKS = {
    "node_flops_vs_threads": (
        "Floating-point rate vs threads",
        "threads",
        "GFLOP/s (median)",
        False,
        "GFLOP/s",
    ),
    "node_int_vs_threads": (
        "Integer operations vs threads",
        "threads",
        "GOP/s (median)",
        False,
        "",
    ),
    "node_stream_vs_threads": (
        "STREAM bandwidth vs threads",
        "threads",
        "bandwidth (median)",
        False,
        "MB/s",
    ),
    "node_mem_vs_block": (
        "Memory bandwidth vs block size",
        "block",
        "bandwidth (median)",
        True,
        "MB/s",
    ),
    "node_disk_vs_block": (
        "Disk throughput (O_DIRECT) vs block size",
        "block",
        "throughput (median)",
        True,
        "MB/s",
    ),
    "node_net_vs_streams": (
        "Network throughput vs streams (loopback, and between 2 nodes where run)",
        "streams",
        "throughput (median)",
        False,
        "Mbit/s",
    ),
    "node_mem_wss": (
        "Copy bandwidth vs working set (ours and likwid-bench copy)",
        "working set (both arrays)",
        "bandwidth (median)",
        True,
        "MB/s",
    ),
    "node_latency_vs_threads": (
        "Pointer-chase latency vs working set, per number of threads chasing at once",
        "working set",
        "latency per load (median)",
        True,
        "ns",
    ),
}


def title(stem: str) -> str:
    """A node figure's title (its heading in the report)."""
    return _LOOKS[stem][0]


def drawings(samples: list[dict], peaks: list[dict]) -> list[Drawing]:
    """The node figures as Drawings (drawn once for the run's files and the report,
    common.save_drawings / Drawing.uri), for whatever the samples contain."""
    found = []
    for stem, (series, peak_lines) in _series_by_stem(samples, peaks).items():
        title, xlabel, ylabel, logx, unit = _LOOKS[stem]
        draw = functools.partial(_plot, series, title, xlabel, ylabel, logx, peak_lines, unit)
        found.append(Drawing(stem, "node_plot", [stem, series, peak_lines], draw))
    return found


def figures(samples: list[dict], peaks: list[dict], caches: dict[str, int]) -> dict[str, Any]:
    """{file stem: matplotlib figure} for whatever the samples contain (drawn now)."""
    return {d.stem: d.draw() for d in drawings(samples, peaks)}


def _series_by_stem(samples: list[dict], peaks: list[dict]) -> dict[str, tuple[dict, list]]:
    """{file stem: (series, peak lines)} of the figures the samples have. Our runs beside a
    reference tool (param `beside`) are not curves of their own: the node table shows them."""
    # node samples only (the report's selection too, so that the run's files and the
    # report draw one figure between them: common.Drawing)
    samples = [
        s
        for s in samples
        if node_table.is_node_sample(s) and not (s.get("params") or {}).get("beside")
    ]
    figs: dict[str, tuple[dict, list]] = {}
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
    figs["node_flops_vs_threads"] = (flops, peak_lines)
    figs["node_int_vs_threads"] = (
        _series(
            samples,
            lambda s: s["metric"] == "throughput" and s["unit"] == "GOP/s",
            "threads",
            lambda s: f"{s['benchmark']} {s['params'].get('precision', '')}",
        ),
        [],
    )
    figs["node_stream_vs_threads"] = (
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
        [],
    )
    figs["node_mem_vs_block"] = (
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
        [],
    )
    figs["node_disk_vs_block"] = (
        _series(
            samples,
            lambda s: s["metric"] == "bandwidth" and s["benchmark"] in ("disk", "fio"),
            "block",
            lambda s: (
                f"{s['benchmark']} {s['params'].get('pattern', '')} "
                f"{s['params'].get('op', '')} d{s['params'].get('depth', '')}"
            ),
        ),
        [],
    )
    figs["node_net_vs_streams"] = (
        _series(
            samples,
            lambda s: s["metric"] == "throughput" and s["unit"] == "Mbit/s",
            "streams",
            lambda s: (
                f"{s['benchmark']} {s['params'].get('protocol', '')} "
                + (format_bytes(s["params"]["block"]) if "block" in s["params"] else "")
                + (" between 2 nodes" if s["params"].get("nodes") else "")
            ),
        ),
        [],
    )
    figs["node_mem_wss"] = (
        _series(
            samples,
            lambda s: s["metric"] == "bandwidth" and s["params"].get("workload") == "mem_wss",
            "bytes",
            lambda s: f"{s['benchmark']} copy {s['params'].get('threads', '')}t",
        ),
        [],
    )
    loaded = _series(
        samples,
        lambda s: s["benchmark"] == "mem" and s["params"].get("workload") == "mem_latency",
        "bytes",
        lambda s: f"mem {s['params'].get('threads', 1)} thread(s) chasing at once",
    )
    if len(loaded) > 1:  # one curve is the pointer-chase figure below
        figs["node_latency_vs_threads"] = (loaded, [])
    return {k: v for k, v in figs.items() if v[0]}


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
    # the cache names above the plot area, where no curve can cross them
    above = blended_transform_factory(ax.transData, ax.transAxes)
    for name, size in caches.items():
        if name.endswith("i"):
            continue
        ax.axvline(size, color="0.5", linestyle="--", linewidth=1)
        ax.text(
            size,
            1.01,
            f"{name} {format_bytes(size)}",
            transform=above,
            fontsize=MIN_FONT_PT + 1,
            va="bottom",
            ha="center",
            color="0.3",
        )
    ax.set_xlim(min(x) / 1.5, max(x) * 1.5)
    _bytes_axis(ax)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(quantity_formatter(unit))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Working set")
    ax.set_ylabel("Latency per load (median)")
    ax.set_title("Pointer chase: latency vs working set, with cache sizes", fontsize=10, pad=16)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def efficiency_figure(rows: list[dict]) -> Any:
    """Horizontal bars: best as % of peak for every node_table row that has a peak."""
    with_peak = node_table.with_theoretical_peak(rows)
    if not with_peak:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * len(with_peak) + 1.2), dpi=100)
    labels = [node_table.human_name(r)[:60] for r in with_peak]  # words, not field names
    eff = [100 * r["eff_vs_peak"] for r in with_peak]
    ax.barh(range(len(eff)), eff, color=["C3" if e > 100 else "C0" for e in eff])
    ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(eff)))
    ax.set_yticklabels(labels, fontsize=MIN_FONT_PT + 1)
    ax.invert_yaxis()
    ax.set_xlabel("% of theoretical peak (best)")
    ax.set_title("Efficiency vs theoretical peak", fontsize=10)
    fig.tight_layout()
    return fig


def write(
    samples: list[dict], peaks: list[dict], caches: dict[str, int], out_dir: Path
) -> list[Path]:
    chase = chase_drawing(samples, caches)
    return save_drawings(drawings(samples, peaks) + ([chase] if chase else []), out_dir)
