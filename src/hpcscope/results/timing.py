"""Were the timed intervals long enough for the clock? (docs/records.md, "timer").

Every MPI program's meta record states its clock: `resolution_ns` and `overhead_ns` of
CLOCK_MONOTONIC (what the programs time with), `wtick_s` (MPI_Wtick) and `wtime_cost_ns`
(one MPI_Wtime call). A timed interval shorter than MIN_TICKS ticks is quantised, and
one whose clock readings cost more than MAX_READ_SHARE of it measures the clock. Both
are checked against the coarser tick and the dearer reading of the two clocks.

The interval of each raw value follows from the benchmark's definition (records.md
section 4): p2p per timed block, coll and multi_coll per repetition, lane_pattern per
repetition of `steps` steps. One clock reading falls inside each interval (back-to-back
blocks share their boundary readings; a repetition's two readings each put half of their
cost inside). p2p's summaries carry the same check as computed in C (`timing`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MIN_TICKS = 1000.0  # bench/common/timer.h HS_TIMER_MIN_TICKS
MAX_READ_SHARE = 0.01  # bench/common/timer.h HS_TIMER_MAX_READ_SHARE


def clock_facts(meta: dict[str, Any] | None) -> tuple[float, float] | None:
    """(tick_ns, read_ns) of a launch's meta record, or None when it has no usable timer
    (no meta, or a parsed tool's 0/0)."""
    timer = (meta or {}).get("timer") or {}
    tick = float(timer.get("resolution_ns") or 0)
    read = float(timer.get("overhead_ns") or 0)
    if _finite(timer.get("wtick_s")):
        tick = max(tick, float(timer["wtick_s"]) * 1e9)
    if _finite(timer.get("wtime_cost_ns")):
        read = max(read, float(timer["wtime_cost_ns"]))
    if tick <= 0 and read <= 0:
        return None
    return tick, read


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _p2p_counts(params: dict[str, Any], n: int) -> list[int]:
    iters, block = int(params.get("iterations") or 0), int(params.get("block") or 0)
    if block <= 0 or iters <= 0 or -(-iters // block) != n:
        return [block or 1] * n
    return [block] * (n - 1) + [iters - (n - 1) * block]


def intervals_s(sample: dict[str, Any]) -> list[float] | None:
    """Seconds of the timed interval behind each raw value, or None when the benchmark has
    no rule here (node programs time seconds-long repetitions; reference tools)."""
    bench, metric, params = sample["benchmark"], sample["metric"], sample["params"]
    values = [float(v) for v in sample["values"]]
    if bench == "p2p":
        counts = _p2p_counts(params, len(values))
        if params.get("protocol") == "osu" or params.get("timer") == "iteration":
            counts = [1] * len(values)  # OSU's loop: every iteration is its own interval
        window = float(params.get("window") or 64)
        size = float(params.get("bytes") or 0)
        out = []
        for v, c in zip(values, counts, strict=True):
            if v <= 0:
                out.append(0.0)
            elif metric == "latency":
                out.append(v * 2 * c / 1e6)
            elif metric == "bandwidth":
                out.append(size * window * c / 1e6 / v)
            elif metric == "bibandwidth":
                out.append(2 * size * window * c / 1e6 / v)
            elif metric == "message_rate":
                out.append(window / v)  # every iteration is timed on its own
            else:
                return None
        return out
    if bench in ("coll", "multi_coll") and metric == "time":
        return [v / 1e6 for v in values]
    if bench == "lane_pattern" and metric == "time_per_step":
        steps = float(params.get("steps") or 1)
        return [v * steps / 1e6 for v in values]
    return None


def check_sample(sample: dict[str, Any], facts: tuple[float, float]) -> dict[str, Any] | None:
    """{min_interval_s, min_ticks, max_read_share, short, read_heavy} of one sample, as
    the C programs write it (hs_timing_json), or None without a rule."""
    intervals = intervals_s(sample)
    if not intervals:
        return None
    tick_ns, read_ns = facts
    shortest = min(intervals)
    ticks = shortest * 1e9 / tick_ns if tick_ns > 0 else math.inf
    share = max((read_ns * 1e-9 / t if t > 0 else math.inf) for t in intervals)
    return {
        "min_interval_s": shortest,
        "min_ticks": ticks,
        "max_read_share": share,
        "short": ticks < MIN_TICKS,
        "read_heavy": share > MAX_READ_SHARE,
    }


def _describe(sample: dict[str, Any]) -> str:
    params = sample["params"]
    keys = [k for k in ("test", "collective", "algorithm", "lanes", "bytes") if k in params]
    return ", ".join(f"{k}={params[k]}" for k in keys) or sample["metric"]


def run_findings(
    launches: Iterable[dict[str, Any]], samples: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One finding per (benchmark, mpi) with flagged samples:
    {benchmark, mpi, samples, short, read_heavy, worst_ticks, worst_share, worst_short,
     worst_read, tick_ns, read_ns}. Simulated launches are skipped (simulated time)."""
    facts = {}
    for launch in launches:
        if (launch.get("tags") or {}).get("simulated"):
            continue
        f = clock_facts(launch.get("meta"))
        if f is not None:
            facts[launch["id"]] = f
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for s in samples:
        f = facts.get(s["launch_id"])
        if f is None:
            continue
        check = check_sample(s, f)
        if check is None:
            continue
        key = (s["benchmark"], str((s.get("tags") or {}).get("mpi", "")))
        g = groups.setdefault(
            key,
            {
                "benchmark": key[0],
                "mpi": key[1],
                "samples": 0,
                "short": 0,
                "read_heavy": 0,
                "worst_ticks": math.inf,
                "worst_share": 0.0,
                "worst_short": "",
                "worst_read": "",
                "tick_ns": f[0],
                "read_ns": f[1],
            },
        )
        g["samples"] += 1
        g["tick_ns"], g["read_ns"] = max(g["tick_ns"], f[0]), max(g["read_ns"], f[1])
        if check["short"]:
            g["short"] += 1
        if check["read_heavy"]:
            g["read_heavy"] += 1
        if check["min_ticks"] < g["worst_ticks"]:
            g["worst_ticks"], g["worst_short"] = check["min_ticks"], _describe(s)
        if check["max_read_share"] > g["worst_share"]:
            g["worst_share"], g["worst_read"] = check["max_read_share"], _describe(s)
    return [g for g in groups.values() if g["short"] or g["read_heavy"]]


def finding_text(f: dict[str, Any]) -> str:
    """One sentence for `show` and the report."""
    where = f"{f['benchmark']}" + (f" ({f['mpi']})" if f["mpi"] else "")
    parts = []
    if f["short"]:
        parts.append(
            f"{f['short']} of {f['samples']} samples have timed intervals shorter than "
            f"{MIN_TICKS:,.0f} ticks of {f['tick_ns']:.3g} ns (fewest {f['worst_ticks']:.0f}"
            f" at {f['worst_short']})"
        )
    if f["read_heavy"]:
        parts.append(
            f"{f['read_heavy']} of {f['samples']} samples spend more than "
            f"{MAX_READ_SHARE:.0%} of a timed interval reading the clock ({f['read_ns']:.3g} ns"
            f" per reading; worst {f['worst_share']:.1%} at {f['worst_read']})"
        )
    return f"timer, {where}: " + "; ".join(parts)
