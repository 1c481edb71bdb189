"""Two modes in one series of repetitions: the one rule the node table, the summary and the
highlights use to say "bimodal" instead of quoting a best value.

A virtual machine's memory rate can switch between two levels within seconds (a 2-vCPU
EPYC guest's 2-thread STREAM triad: 45-58 and 83-88 GB/s in one run of 50 repetitions);
its best value then is the upper mode's, and a ratio of best values compares whichever
mode each side happened to catch. The rule, cost O(n log n):

  sort the values; take the largest gap between neighbours; the series is bimodal when
  - each side of the gap holds at least MIN_SHARE of the values (and at least 2),
  - the gap is wider than either side's own range (max - min), and
  - the gap is at least MIN_GAP of the value above it (a relative floor, so that equal
    values with one tiny step are not two modes).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from hpcscope.formatting import format_number

MIN_SHARE = 0.20
MIN_GAP = 0.10
MIN_VALUES = 6  # fewer cannot give two groups of 2 with 20 % each and a range


@dataclass(frozen=True)
class Mode:
    low: float
    high: float
    median: float
    count: int
    share: float  # of all values

    def to_json(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "median": self.median,
            "count": self.count,
            "share": self.share,
        }


def two_modes(values: Sequence[float]) -> tuple[Mode, Mode] | None:
    """(lower, upper) mode by the rule above, or None where the series is one mode."""
    v = sorted(float(x) for x in values)
    n = len(v)
    if n < MIN_VALUES:
        return None
    gap, i = max((v[k + 1] - v[k], k) for k in range(n - 1))
    low, high = v[: i + 1], v[i + 1 :]
    if min(len(low), len(high)) < max(2, MIN_SHARE * n):
        return None
    if gap <= max(low[-1] - low[0], high[-1] - high[0]):
        return None
    if high[0] <= 0 or gap < MIN_GAP * high[0]:
        return None
    return tuple(  # type: ignore[return-value]
        Mode(g[0], g[-1], statistics.median(g), len(g), len(g) / n) for g in (low, high)
    )


def span(bounds: Sequence[float], unit: str) -> str:
    """'45.1-58.3 GB/s' for bounds (low, high): the unit once (format_number's scaling on
    both)."""
    a, b = format_number(bounds[0], unit), format_number(bounds[-1], unit)
    head, _, tail = a.rpartition(" ")
    if head and b.endswith(" " + tail):
        return f"{head}-{b}"
    return f"{a} to {b}"


def text(modes: Sequence[Mode | dict], unit: str) -> str:
    """'two modes: 52 GB/s (60 % of 50, 45-58 GB/s) and 86 GB/s (40 % of 50, 83-88 GB/s)'."""
    total = sum(m.count if isinstance(m, Mode) else int(m["count"]) for m in modes)
    parts = []
    for m in modes:
        d = m.to_json() if isinstance(m, Mode) else m
        parts.append(
            f"{format_number(d['median'], unit)} ({d['share']:.0%} of {total}, "
            f"{span((d['low'], d['high']), unit)})"
        )
    return "two modes: " + " and ".join(parts)
