"""Node suite in the report: efficiency against theoretical peaks and against reference
tools, the pointer-chase figure, and a fallback table until the node engineer's
`hpcscope.suites.node.node_table` exists.

Peaks come from the run's "peak" notes (data: name, value, unit, formula, metric, match);
a peak bounds a measurement when metric and unit agree and every `match` key equals the
sample's benchmark or parameter of that name. Reference tools (likwid-bench, fio, iperf3,
dgemm) measure the same quantity as our cpu/mem/disk/net benchmarks; their best value is
shown next to ours ("vs reference").
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hpcscope.report import observations as obs  # noqa: E402
from hpcscope.results import stats  # noqa: E402

OURS = ("cpu", "mem", "disk", "net")
REFERENCE = {"cpu": "dgemm", "mem": "likwid-bench", "disk": "fio", "net": "iperf3"}
WORKING_SET_KEYS = ("working_set", "bytes", "size")


def is_node_sample(s: dict) -> bool:
    return s.get("benchmark") in OURS or s.get("benchmark") in REFERENCE.values()


def peak_for(sample: dict, peaks: list[dict]) -> dict | None:
    for peak in peaks:
        if peak.get("unit") != sample["unit"]:
            continue
        if peak.get("metric") and peak["metric"] != sample["metric"]:
            continue
        match = peak.get("match") or {}
        if all(sample.get(k) == v or sample["params"].get(k) == v for k, v in match.items()):
            return peak
    return None


# Parameters that say what was measured; the rest (iteration counts, validation flags,
# register tiling) is bookkeeping that would only bury the number in a sentence.
_IDENTIFYING = ("workload", "op", "precision", "pattern", "protocol", "threads", "streams",
                "block", "depth")


def _what(params: dict) -> str:
    return ", ".join(f"{k}={params[k]}" for k in _IDENTIFYING if k in params)


def fallback_rows(samples: list[dict], peaks: list[dict]) -> tuple[list[dict], list[obs.Observation]]:
    """One row per (benchmark, metric, unit, params): median, 95 % CI, CV, peak and
    efficiency; plus efficiency observations."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    first: dict[tuple, dict] = {}
    for s in samples:
        if not is_node_sample(s):
            continue
        key = (s["benchmark"], s["metric"], s["unit"], json.dumps(s["params"], sort_keys=True))
        groups[key].extend(s["values"])
        first.setdefault(key, s)
    best_ref: dict[tuple[str, str, str], float] = {}
    for (bench, metric, unit, _), vals in groups.items():
        if bench in REFERENCE.values():
            m = float(np.median(vals))
            k = (bench, metric, unit)
            better = max if stats.is_rate(unit) else min
            best_ref[k] = better(best_ref.get(k, m), m)
    rows: list[dict] = []
    found: list[obs.Observation] = []
    for key in sorted(groups):
        bench, metric, unit, params = key
        vals = groups[key]
        summ = stats.summarize(vals, rate=stats.is_rate(unit))
        peak = peak_for(first[key], peaks)
        eff = summ.median / peak["value"] if peak and peak.get("value") else None
        ref = best_ref.get((REFERENCE.get(bench, ""), metric, unit))
        rows.append({"benchmark": bench, "metric": metric, "unit": unit,
                     "params": ", ".join(f"{k}={v}" for k, v in json.loads(params).items()),
                     "median": summ.median, "ci_low": summ.ci_low, "ci_high": summ.ci_high,
                     "cv": summ.cv, "n": summ.n,
                     "peak": peak.get("value") if peak else None,
                     "peak_name": peak.get("name", "") if peak else "",
                     "efficiency": eff,
                     "reference": REFERENCE.get(bench, ""),
                     "vs_reference": summ.median / ref if ref else None})
        if peak and peak.get("value") and stats.is_rate(unit):
            o = obs.efficiency(f"{bench} {metric} ({_what(json.loads(params))})", summ.median,
                               peak["value"], unit, peak.get("name", ""), peak.get("formula", ""))
            if o:
                found.append(o)
    return rows, found


def pointer_chase(samples: list[dict]) -> tuple[list[float], list[float], str] | None:
    """(working sets, median latencies, unit) of the mem benchmark's latency samples."""
    points: dict[float, list[float]] = defaultdict(list)
    unit = "ns"
    for s in samples:
        if s.get("benchmark") != "mem" or s.get("metric") != "latency":
            continue
        key = next((k for k in WORKING_SET_KEYS if k in s["params"]), None)
        if key is None:
            continue
        points[float(s["params"][key])].extend(s["values"])
        unit = s["unit"]
    if len(points) < 4:
        return None
    x = sorted(points)
    return x, [float(np.median(points[v])) for v in x], unit


def pointer_chase_figure(x: list[float], y: list[float], unit: str, caches: dict[str, int]) -> Any:
    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=100)
    ax.plot(x, y, marker="o", markersize=3)
    ymax = max(y)
    for name, size in caches.items():
        if name.endswith("i"):
            continue
        ax.axvline(size, color="0.5", linestyle="--", linewidth=1)
        ax.text(size, ymax, f" {name} {obs.fmt_bytes(size)}", fontsize=7, rotation=90,
                va="top", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Working set (bytes)")
    ax.set_ylabel(f"Latency per load ({unit}, median)")
    ax.set_title("Pointer chase: latency vs working set, with cache sizes", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def efficiency_figure(rows: list[dict]) -> Any:
    """Horizontal bars: median as % of peak for every row that has a peak."""
    with_peak = [r for r in rows if r.get("efficiency") is not None]
    if not with_peak:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * len(with_peak) + 1.2), dpi=100)
    labels = [f"{r['benchmark']} {r['metric']} {r['params']}"[:60] for r in with_peak]
    eff = [100 * r["efficiency"] for r in with_peak]
    ax.barh(range(len(eff)), eff, color=["C3" if e > 100 else "C0" for e in eff])
    ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(eff)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("% of theoretical peak (median)")
    ax.set_title("Efficiency vs theoretical peak", fontsize=10)
    fig.tight_layout()
    return fig
