"""Point-to-point curves: one per (MPI, placement), the centre of each message size and
its spread over launches. The one definition used by the figures, the report's tables,
its summary and `show`.

The centre is the median over launches of each launch's median; low and high are the
smallest and largest launch median; the CI is the nonparametric 95 % CI of the median of
all samples pooled (results/stats.py).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from hpcscope.results import stats


def curve_label(sample: dict) -> str:
    """'mpi placement', marked when the numbers are OSU's loop (--protocol osu) or the
    user's own OSU programs (--osu-dir, tag tool=osu), so they sit beside hpcscope's."""
    tags = sample["tags"]
    mark = " [OSU build]" if tags.get("tool") == "osu" else ""
    mark += " [--protocol osu]" if tags.get("protocol") == "osu" else ""
    return f"{tags.get('mpi', '?')} {tags.get('placement', '?')}{mark}"


SMALL_BYTES = 8  # OSU users quote latency at a few bytes; 8 B is one double


def small_size(sizes) -> int | None:
    """The size a latency is quoted at: SMALL_BYTES where measured, else the smallest
    measured size above 0; None when there is none."""
    positive = sorted(s for s in sizes if s > 0)
    return SMALL_BYTES if SMALL_BYTES in positive else (positive[0] if positive else None)


def curves(samples: list[dict], metric: str) -> dict[str, dict[int, dict]]:
    """{label: {bytes: {"center", "low", "high", "ci_low", "ci_high", "launches"}}}. A
    sample without a message size (an imported file may lack one) is no point of a curve."""
    per_launch: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    pooled: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if s["metric"] != metric or "bytes" not in (s["params"] or {}):
            continue
        label = curve_label(s)
        size = int(s["params"]["bytes"])
        per_launch[label][size].append(float(np.median(s["values"])))
        pooled[label][size].extend(s["values"])
    out: dict[str, dict[int, dict]] = {}
    for label, by_size in per_launch.items():
        out[label] = {}
        for size, medians in sorted(by_size.items()):
            summary = stats.summarize(pooled[label][size])
            out[label][size] = {
                "center": float(np.median(medians)),
                "low": min(medians),
                "high": max(medians),
                "ci_low": summary.ci_low,
                "ci_high": summary.ci_high,
                "launches": len(medians),
            }
    return out


def unstable_point(point: dict) -> bool:
    """A curve point whose launch medians spread, or whose 95 % CI of the median reaches,
    more than stats.CV_LIMIT (5 %) from its centre: the mark of the report's summary and
    of `show`."""
    centre = point["center"]
    if not centre:
        return False
    spread = (point["high"] - point["low"]) / abs(centre)
    wide = (
        point["ci_low"] is not None
        and point["ci_high"] is not None
        and (point["ci_high"] - point["ci_low"]) / 2 / abs(centre) > stats.CV_LIMIT
    )
    return spread > stats.CV_LIMIT or wide
