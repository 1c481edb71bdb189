"""Observations drawn from measured curves: what a careful person writes under a figure.

Every function here is pure (arrays in, `Observation`s out) so it can be tested without a
store, and every observation carries the numbers it was computed from. Nothing is canned:
a sentence exists only when the data show the effect.

Methods (also stated in the report's "methods" section):

- Hockney model per segment: T(m) = alpha + m / beta, fitted by weighted least squares
  with weights 1/T (so the small-message microseconds count as much as the large-message
  milliseconds: the residuals minimised are relative ones).
- Breakpoints: optimal piecewise fit by dynamic programming (segmented least squares,
  Bellman 1961 / Kleinberg-Tardos 6.3): minimise the sum over segments of the squared
  relative residuals plus a penalty per extra segment, with at least `min_points` sizes per
  segment. A breakpoint is the boundary between two segments: the protocol switch or cache
  effect lies between the last size of one segment and the first size of the next.
- Dips: a bandwidth point lower than the geometric mean of its two neighbours by more than
  `min_drop` (and more than its confidence interval explains); under the Hockney model
  bandwidth never decreases with size, so a dip is an effect (protocol switch, cache).
  Its cause is named only from a recorded protocol threshold within its step (the eager
  limit read through MPI_T, analysis/mpi_transport.py); otherwise it is "not explained".
- Flat region: the longest prefix of sizes whose latency stays within `tolerance` of its
  smallest value.
- Placement ratios: at a small size (8 B when measured) and at the largest common size.
- Cache plateaus (pointer chase): piecewise-constant segmentation of log latency; each
  step is named after the cache whose size lies at the step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import nnls

from hpcscope.analysis import mpi_transport
from hpcscope.formatting import format_bytes, format_number, format_span

SEVERITIES = ("info", "notable", "warning")
CV_LIMIT_DEFAULT = 0.05
PLACEMENT_ORDER = ("smt", "core", "numa", "socket", "node")


def _ordered(labels) -> list[str]:
    """Labels of hardware placements, closest first. `default` (the launcher's own binding,
    which may be any class) has no place in this order: ratios and inversions leave it out."""
    return sorted((l for l in labels if l.split()[-1:] != ["default"]), key=_placement_rank)


@dataclass
class Observation:
    kind: str  # "flat", "dip", "breakpoint", "ratio", "fit", ...
    text: str  # one sentence, numbers included
    numbers: dict[str, Any] = field(default_factory=dict)  # what the sentence is based on
    severity: str = "info"  # info | notable | warning
    subject: str = ""  # e.g. "openmpi core" (curve the observation is about)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _arrays(
    sizes: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("sizes and values must be 1-D arrays of the same length")
    order = np.argsort(x)
    return x[order], y[order]


# ------------------------------------------------------------------------ Hockney fits


@dataclass
class Segment:
    start: int  # index of the first point (sorted by size)
    stop: int  # index one past the last point
    alpha: float  # intercept, e.g. us
    slope: float  # 1 / beta, e.g. us per byte
    cost: float  # sum of squared relative residuals
    lo_size: float = 0.0
    hi_size: float = 0.0

    @property
    def beta(self) -> float:
        """Asymptotic bandwidth of the segment (bytes per time unit); inf when flat."""
        return math.inf if self.slope <= 0 else 1.0 / self.slope


def fit_line_relative(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """y ~ a + b x minimising sum(((y - a - b x) / y)^2); returns a, b, cost.

    Weights 1/y make residuals relative, so one fit can span 0.2 us and 1 ms."""
    if x.size == 0:
        return 0.0, 0.0, 0.0
    w = 1.0 / np.where(y != 0, np.abs(y), 1.0)
    design = np.column_stack([np.ones_like(x), x]) * w[:, None]
    if x.size == 1 or np.ptp(x) == 0:
        a = float(np.sum(w * w * y) / np.sum(w * w))
        return a, 0.0, float(np.sum(((y - a) * w) ** 2))
    # Non-negative least squares: a start-up time and a time per byte cannot be negative,
    # and an unconstrained fit through one outlier would report e.g. alpha = -68 us.
    coef, _ = nnls(design, y * w)
    a, b = float(coef[0]), float(coef[1])
    return a, b, float(np.sum(((y - a - b * x) * w) ** 2))


def fit_hockney(sizes: Sequence[float], times: Sequence[float]) -> tuple[float, float]:
    """(alpha, beta) of T(m) = alpha + m / beta; beta is inf when T does not grow with m."""
    x, y = _arrays(sizes, times)
    a, b, _ = fit_line_relative(x, y)
    return a, (math.inf if b <= 0 else 1.0 / b)


def _fit_constant_log(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Plateau model for pointer chases: log y ~ c; returns exp(c), 0, cost."""
    logs = np.log(y)
    c = float(np.mean(logs))
    return math.exp(c), 0.0, float(np.sum((logs - c) ** 2))


def segment_fit(
    sizes: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    *,
    penalty: float = 0.02,
    min_points: int = 3,
    model: str = "line",
) -> list[Segment]:
    """Optimal segmentation: minimise sum(segment cost) + penalty x (number of segments).

    model "line": Hockney line per segment with relative residuals (see module doc);
    model "constant": constant log value per segment (plateaus).
    Exact dynamic programme over all split points: O(n^2) fits, n is ~25 sizes.
    Default penalty 0.02: a split must remove as much squared relative error as two
    points that are each 10 % off the single-line fit."""
    x, y = _arrays(sizes, values)
    n = x.size
    fit = fit_line_relative if model == "line" else _fit_constant_log
    if n < 2 * min_points:
        a, b, c = fit(x, y)
        return [Segment(0, n, a, b, c, float(x[0]) if n else 0.0, float(x[-1]) if n else 0.0)]
    cost = np.full((n + 1, n + 1), np.inf)
    params: dict[tuple[int, int], tuple[float, float]] = {}
    for i in range(n):
        for j in range(i + min_points, n + 1):
            a, b, c = fit(x[i:j], y[i:j])
            cost[i, j] = c
            params[(i, j)] = (a, b)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    prev = np.zeros(n + 1, dtype=int)
    for j in range(min_points, n + 1):
        for i in range(0, j - min_points + 1):
            if not math.isfinite(best[i]) or not math.isfinite(cost[i, j]):
                continue
            total = best[i] + cost[i, j] + penalty
            if total < best[j]:
                best[j], prev[j] = total, i
    segments: list[Segment] = []
    j = n
    while j > 0:
        i = int(prev[j])
        a, b = params[(i, j)]
        segments.append(Segment(i, j, a, b, float(cost[i, j]), float(x[i]), float(x[j - 1])))
        j = i
    return segments[::-1]


# ------------------------------------------------------------------------ point-to-point


def flat_region(
    sizes: Sequence[float], latency: Sequence[float], tolerance: float = 0.10, subject: str = ""
) -> Observation | None:
    """'latency is flat within 10% up to 16 B': the longest prefix within tolerance of its
    minimum. None when not even two sizes are flat."""
    x, y = _arrays(sizes, latency)
    if x.size < 2:
        return None
    end = 0
    for k in range(1, x.size):
        window = y[: k + 1]
        if window.max() <= window.min() * (1 + tolerance):
            end = k
        else:
            break
    if end < 1:
        return None
    lo, hi = float(y[: end + 1].min()), float(y[: end + 1].max())
    nxt = (
        (
            f"; at {format_bytes(x[end + 1])} it is {format_number(y[end + 1], 'us')} "
            f"({y[end + 1] / lo:.2f}x)"
        )
        if end + 1 < x.size
        else ""
    )
    return Observation(
        "flat",
        f"{subject + ': ' if subject else ''}latency is flat within "
        f"{tolerance:.0%} up to {format_bytes(x[end])} ({format_span(lo, hi, 'us')}){nxt}.",
        {
            "up_to_bytes": float(x[end]),
            "min_us": lo,
            "max_us": hi,
            "tolerance": tolerance,
            "next_bytes": float(x[end + 1]) if end + 1 < x.size else None,
            "next_us": float(y[end + 1]) if end + 1 < x.size else None,
        },
        "info",
        subject,
    )


def bandwidth_dips(
    sizes: Sequence[float],
    bandwidth: Sequence[float],
    *,
    min_drop: float = 0.08,
    ci_halfwidth: Sequence[float] | None = None,
    subject: str = "",
    explain: bool = False,
    thresholds: Sequence[mpi_transport.Threshold] | None = None,
) -> list[Observation]:
    """Sizes where bandwidth falls below the geometric mean of its neighbours.

    Under the Hockney model bandwidth m / (alpha + m/beta) only grows with m, so a point
    clearly below its neighbours' trend is an effect to explain. The shortfall must exceed
    `min_drop` and the point's relative CI half-width (when given), so noise is not named.

    `explain`: name each dip's cause from `thresholds`, the protocol thresholds the
    curve's launches recorded (analysis/mpi_transport.py; None: they recorded no
    transport): the one within the dip's step (from the size before it to its own size)
    is the protocol switch; with none there, the text says "not explained" and what to
    check.
    """
    x, y = _arrays(sizes, bandwidth)
    half = (
        np.zeros_like(y)
        if ci_halfwidth is None
        else np.asarray(ci_halfwidth, dtype=float)[np.argsort(np.asarray(sizes))]
    )
    out: list[Observation] = []
    for i in range(1, x.size - 1):
        expected = math.sqrt(y[i - 1] * y[i + 1])
        if y[i] <= 0 or expected <= 0:
            continue
        shortfall = 1 - y[i] / expected
        noise = half[i] / y[i] if y[i] else 0.0
        if shortfall <= max(min_drop, noise):
            continue
        drop = 1 - y[i] / y[i - 1]
        recovered = next((float(x[k]) for k in range(i + 1, x.size) if y[k] >= y[i - 1]), None)
        if drop > 0:
            what = (
                f"bandwidth drops from {format_number(y[i - 1], 'MB/s')} at "
                f"{format_bytes(x[i - 1])} to {format_number(y[i], 'MB/s')} at "
                f"{format_bytes(x[i])} ({-drop:+.0%})"
            )
        else:
            what = (
                f"bandwidth dips at {format_bytes(x[i])}: {format_number(y[i], 'MB/s')}, "
                f"{shortfall:.0%} below the {format_number(expected, 'MB/s')} expected between "
                f"{format_bytes(x[i - 1])} ({format_number(y[i - 1], 'MB/s')}) and "
                f"{format_bytes(x[i + 1])} ({format_number(y[i + 1], 'MB/s')})"
            )
        tail = (
            f"; it is back above the {format_bytes(x[i - 1])} value from "
            f"{format_bytes(recovered)} on"
            if recovered is not None and drop > 0
            else ""
        )
        switch = None
        if explain:
            tail += "; " + mpi_transport.step_text(x[i - 1], x[i], thresholds)
            switch = mpi_transport.explain_step(x[i - 1], x[i], thresholds or [])
        out.append(
            Observation(
                "dip",
                f"{subject + ': ' if subject else ''}{what}{tail}.",
                {
                    "bytes": float(x[i]),
                    "before_bytes": float(x[i - 1]),
                    "before_MBps": float(y[i - 1]),
                    "at_MBps": float(y[i]),
                    "after_bytes": float(x[i + 1]),
                    "after_MBps": float(y[i + 1]),
                    "expected_MBps": expected,
                    "shortfall": shortfall,
                    "drop": drop,
                    "recovered_bytes": recovered,
                    # the recorded threshold within the step, e.g. "btl_vader_eager_limit
                    # = 4096" (None: none, or no transport recorded)
                    "switch": switch.cite() if switch else None,
                    "switch_bytes": switch.bytes if switch else None,
                },
                "notable",
                subject,
            )
        )
    return out


def breakpoints(
    sizes: Sequence[float],
    latency: Sequence[float],
    *,
    penalty: float = 0.02,
    min_points: int = 3,
    subject: str = "",
) -> list[Observation]:
    """Hockney fit per segment and the sizes where the fit changes (see module doc)."""
    x, y = _arrays(sizes, latency)
    segs = segment_fit(x, y, penalty=penalty, min_points=min_points)
    out: list[Observation] = []
    for s in segs:
        beta = "no size dependence" if s.slope <= 0 else f"beta = {format_number(s.beta, 'MB/s')}"
        out.append(
            Observation(
                "fit",
                f"{subject + ': ' if subject else ''}{format_bytes(s.lo_size)}-"
                f"{format_bytes(s.hi_size)}: T(m) = alpha + m/beta with alpha = "
                f"{format_number(s.alpha, 'us')}, {beta} (rms relative residual "
                f"{math.sqrt(s.cost / max(s.stop - s.start, 1)):.1%}).",
                {
                    "from_bytes": s.lo_size,
                    "to_bytes": s.hi_size,
                    "alpha_us": s.alpha,
                    "beta_MBps": None if s.slope <= 0 else s.beta,
                    "points": s.stop - s.start,
                    "cost": s.cost,
                },
                "info",
                subject,
            )
        )
    for left, right in zip(segs, segs[1:]):
        x_end, x_next = float(x[left.stop - 1]), float(x[right.start])
        y_end, y_next = float(y[left.stop - 1]), float(y[right.start])
        # Latency the left model predicts at the first size of the right segment: the jump.
        predicted = left.alpha + left.slope * x_next
        jump = y_next / predicted if predicted > 0 else math.nan

        def beta_text(s: Segment) -> str:
            return "flat" if s.slope <= 0 else format_number(s.beta, "MB/s")

        out.append(
            Observation(
                "breakpoint",
                f"{subject + ': ' if subject else ''}the latency model changes "
                f"between {format_bytes(x_end)} ({format_number(y_end, 'us')}) and {format_bytes(x_next)} "
                f"({format_number(y_next, 'us')}): alpha {format_number(left.alpha, 'us')} -> "
                f"{format_number(right.alpha, 'us')}, beta {beta_text(left)} -> {beta_text(right)}; "
                "a protocol switch or cache effect lies between these sizes.",
                {
                    "lo_bytes": x_end,
                    "hi_bytes": x_next,
                    "lo_latency_us": y_end,
                    "hi_latency_us": y_next,
                    "alpha_left_us": left.alpha,
                    "alpha_right_us": right.alpha,
                    "beta_left_MBps": None if left.slope <= 0 else left.beta,
                    "beta_right_MBps": None if right.slope <= 0 else right.beta,
                    "jump": jump,
                },
                "notable",
                subject,
            )
        )
    return out


def _placement_rank(label: str) -> tuple[int, str]:
    words = label.split()
    place = words[-1] if words else label
    rank = PLACEMENT_ORDER.index(place) if place in PLACEMENT_ORDER else len(PLACEMENT_ORDER)
    return rank, label


def placement_ratios(
    curves: Mapping[str, Mapping[float, float]], metric: str = "latency", small: float = 8
) -> list[Observation]:
    """Ratios of each placement to the closest one (smt < core < numa < socket < node) of the
    same MPI: at `small` bytes (or the smallest common size above 0) for latency, at the
    largest common size for bandwidth."""
    out: list[Observation] = []
    by_mpi: dict[str, list[str]] = {}
    for label in curves:
        prefix = " ".join(label.split()[:-1])
        by_mpi.setdefault(prefix, []).append(label)
    unit = "us" if metric == "latency" else "MB/s"
    for found in by_mpi.values():
        labels = _ordered(found)
        if not labels:
            continue
        base = labels[0]
        for other in labels[1:]:
            common = sorted(set(curves[base]) & set(curves[other]))
            if not common:
                continue
            if metric == "latency":
                positive = [s for s in common if s > 0]
                size = small if small in common else (positive[0] if positive else common[0])
            else:
                size = common[-1]
            a, b = float(curves[base][size]), float(curves[other][size])
            if a <= 0:
                continue
            ratio = b / a
            if metric == "latency":
                noun = f"{_pretty(other)} latency is {ratio:.1f}x {_pretty(base)}"
            else:
                noun = f"{_pretty(other)} bandwidth is {ratio:.2f}x {_pretty(base)}"
            out.append(
                Observation(
                    "ratio",
                    f"{noun} at {format_bytes(size)} ({format_number(b, unit)} vs "
                    f"{format_number(a, unit)}).",
                    {
                        "metric": metric,
                        "bytes": float(size),
                        "label": other,
                        "base": base,
                        "value": b,
                        "base_value": a,
                        "ratio": ratio,
                    },
                    "notable" if abs(math.log(ratio)) > math.log(2) else "info",
                    other,
                )
            )
    return out


def _pretty(label: str) -> str:
    words = label.split()
    place = words[-1] if words else label
    names = {
        "smt": "hyperthread-to-hyperthread",
        "core": "core-to-core",
        "numa": "NUMA-to-NUMA",
        "socket": "socket-to-socket",
        "node": "node-to-node",
    }
    mpi = " ".join(words[:-1])
    return names.get(place, place) + (f" ({mpi})" if mpi else "")


def bandwidth_plateau(
    sizes: Sequence[float], bandwidth: Sequence[float], tolerance: float = 0.10, subject: str = ""
) -> Observation | None:
    """Where bandwidth saturates: the longest suffix whose values stay within `tolerance`
    of the suffix's median (at least three sizes)."""
    x, y = _arrays(sizes, bandwidth)
    start = None
    for k in range(x.size - 3, -1, -1):
        tail = y[k:]
        med = float(np.median(tail))
        if np.all(np.abs(tail - med) <= tolerance * med):
            start = k
        else:
            break
    if start is None:
        return None
    tail = y[start:]
    return Observation(
        "plateau",
        f"{subject + ': ' if subject else ''}bandwidth saturates at "
        f"{format_number(float(np.median(tail)), 'MB/s')} (range {format_number(float(tail.min()), 'MB/s')}"
        f"-{format_number(float(tail.max()), 'MB/s')}) from {format_bytes(x[start])} on.",
        {
            "from_bytes": float(x[start]),
            "median_MBps": float(np.median(tail)),
            "min_MBps": float(tail.min()),
            "max_MBps": float(tail.max()),
            "tolerance": tolerance,
        },
        "info",
        subject,
    )


def outliers_between(
    curves: Mapping[str, Mapping[float, float]], factor: float = 1.5, metric: str = "latency"
) -> list[Observation]:
    """A placement that should be faster (closer) but is clearly slower at some size, e.g.
    core-to-core 4 MiB latency 739 us against 396 us across sockets."""
    out: list[Observation] = []
    labels = _ordered(curves)
    for i, near in enumerate(labels):
        for far in labels[i + 1 :]:
            if " ".join(near.split()[:-1]) != " ".join(far.split()[:-1]):
                continue
            for size in sorted(set(curves[near]) & set(curves[far])):
                a, b = float(curves[near][size]), float(curves[far][size])
                worse = a / b if metric == "latency" else b / a
                if b > 0 and a > 0 and worse > factor:
                    unit = "us" if metric == "latency" else "MB/s"
                    out.append(
                        Observation(
                            "inversion",
                            f"{_pretty(near)} {metric} at {format_bytes(size)} "
                            f"({format_number(a, unit)}) is {worse:.2f}x worse than "
                            f"{_pretty(far)} ({format_number(b, unit)}), although it is the closer "
                            "placement: check for an outlier or interference.",
                            {
                                "bytes": float(size),
                                "near": near,
                                "far": far,
                                "near_value": a,
                                "far_value": b,
                                "factor": worse,
                            },
                            "warning",
                            near,
                        )
                    )
    return out


# ------------------------------------------------------------------------ stability


def instability(
    subject: str,
    per_launch: Sequence[Sequence[float]],
    *,
    cv_limit: float = 0.05,
    size: float | None = None,
) -> list[Observation]:
    """Unstable results: CV of the pooled values above `cv_limit`, launch medians that
    disagree by more than `cv_limit`, or a CI of the median wider than `cv_limit`."""
    from hpcscope.results import stats

    groups = [list(g) for g in per_launch if len(g)]
    if not groups:
        return []
    p = stats.pooled(groups, spread_limit=cv_limit)
    out: list[Observation] = []
    nums = {
        "launches": p.launches,
        "median": p.median,
        "cv": p.all.cv,
        "spread": p.spread,
        "ci_low": p.all.ci_low,
        "ci_high": p.all.ci_high,
        "bytes": size,
        "where": format_bytes(size) if size is not None else "",
    }
    if p.all.cv is not None and p.all.cv > cv_limit:
        out.append(
            Observation(
                "unstable",
                f"{subject}: CV {p.all.cv:.1%} over {p.all.n} values (limit {cv_limit:.0%}).",
                nums,
                "warning",
                subject,
            )
        )
    if p.spread is not None and p.spread > cv_limit:
        out.append(
            Observation(
                "unstable",
                f"{subject}: the {p.launches} launch medians "
                f"differ by {p.spread:.1%} (limit {cv_limit:.0%}).",
                nums,
                "warning",
                subject,
            )
        )
    if (
        p.all.ci_low is not None
        and p.all.ci_high is not None
        and p.median
        and (p.all.ci_high - p.all.ci_low) / 2 / abs(p.median) > cv_limit
    ):
        out.append(
            Observation(
                "unstable",
                f"{subject}: 95% CI of the median "
                f"{format_number(p.all.ci_low)}-{format_number(p.all.ci_high)} is wider "
                f"than +-{cv_limit:.0%}.",
                nums,
                "warning",
                subject,
            )
        )
    return out


def instability_summary(subject: str, found: Sequence[Observation]) -> Observation | None:
    """One sentence for many per-size instability warnings of one curve, citing the
    sizes and the worst value, so the highlights stay readable."""
    if not found:
        return None
    sizes = sorted({o.numbers["bytes"] for o in found if o.numbers.get("bytes") is not None})
    worst = max(found, key=lambda o: max(o.numbers.get("cv") or 0, o.numbers.get("spread") or 0))
    widest = max(found, key=lambda o: o.numbers.get("spread") or 0)
    cv = worst.numbers.get("cv") or 0.0
    spread = worst.numbers.get("spread") or 0.0
    where = ", ".join(format_bytes(s) for s in sizes[:8]) + (" ..." if len(sizes) > 8 else "")
    return Observation(
        "unstable",
        f"{subject}: unstable at {len(sizes)} size{'s' if len(sizes) != 1 else ''}"
        f" ({where}); worst: {worst.numbers.get('where', '')} with CV {cv:.1%} and launch "
        f"spread {spread:.1%} (limit {CV_LIMIT_DEFAULT:.0%}).",
        {
            "sizes": sizes,
            "worst_cv": cv,
            "worst_spread": spread,
            "count": len(found),
            "max_spread": widest.numbers.get("spread") or 0.0,
            "max_spread_at": widest.numbers.get("bytes"),
        },
        "warning",
        subject,
    )


# ------------------------------------------------------------------------ node suite


def cache_plateaus(
    working_sets: Sequence[float],
    latency: Sequence[float],
    cache_sizes: Mapping[str, int],
    *,
    penalty: float = 0.1,
    min_points: int = 2,
    unit: str = "ns",
) -> list[Observation]:
    """Plateaus of a pointer chase (latency vs working set) and the cache each step
    follows: the cache whose size lies between the plateau's last working set and the
    next plateau's first one (within a factor 2 either side, since the step is gradual)."""
    x, y = _arrays(working_sets, latency)
    if x.size < 2 * min_points or np.any(y <= 0):
        return []
    segs = segment_fit(x, y, penalty=penalty, min_points=min_points, model="constant")
    data_caches = sorted(
        (size, name) for name, size in cache_sizes.items() if not name.endswith("i")
    )
    out: list[Observation] = []
    for k, s in enumerate(segs):
        level = s.alpha
        nxt = segs[k + 1] if k + 1 < len(segs) else None
        cache = None
        if nxt is not None:
            lo, hi = s.hi_size / 2, nxt.lo_size * 2
            inside = [(size, name) for size, name in data_caches if lo <= size <= hi]
            if inside:
                cache = min(inside, key=lambda c: abs(math.log(c[0] / s.hi_size)))
        where = (
            f"up to {format_bytes(s.hi_size)}"
            if k == 0
            else f"from {format_bytes(s.lo_size)} to {format_bytes(s.hi_size)}"
        )
        step = ""
        if nxt is not None:
            step = f"; it rises {nxt.alpha / level:.1f}x at {format_bytes(nxt.lo_size)}" + (
                f", past the {cache[1]} size of {format_bytes(cache[0])}" if cache else ""
            )
        out.append(
            Observation(
                "cache_plateau",
                f"pointer-chase latency plateau of {format_number(level, unit)} {where}{step}.",
                {
                    "level": level,
                    "from_bytes": s.lo_size,
                    "to_bytes": s.hi_size,
                    "next_level": nxt.alpha if nxt else None,
                    "cache": cache[1] if cache else None,
                    "cache_bytes": cache[0] if cache else None,
                },
                "info",
                "pointer chase",
            )
        )
    return out


def efficiency(
    subject: str,
    measured: float,
    peak: float | None,
    unit: str,
    peak_name: str = "",
    formula: str = "",
    cause: str | None = None,
) -> Observation | None:
    """Measured rate as a fraction of its theoretical peak; above 100 % is a warning: a
    finding to explain, named after what the peak's formula assumed."""
    if peak is None or peak <= 0:
        return None
    frac = measured / peak
    sev = "warning" if frac > 1.0 else ("notable" if frac < 0.5 else "info")
    extra = ""
    if frac > 1.0:
        extra = (
            " - above the peak: the kernel ran at a higher clock than the clock kernel "
            "measured, or the CPU does more operations per cycle than the formula assumes"
            if "GHz (measured" in formula
            else " - above the peak: the cores ran faster than the clock in its formula "
            "(turbo above nominal; run the clock kernel, `--cpu`, to measure it)"
        )
    return Observation(
        "efficiency",
        f"{subject} reaches {format_number(measured, unit)} = {frac:.1%} of the "
        f"{peak_name + ' ' if peak_name else ''}peak {format_number(peak, unit)}"
        f"{' (' + formula + ')' if formula else ''}{extra}."
        + (f" Below 90% because: {cause}." if cause else ""),
        {
            "measured": measured,
            "peak": peak,
            "efficiency": frac,
            "unit": unit,
            "peak_name": peak_name,
            "formula": formula,
            "cause": cause,
        },
        sev,
        subject,
    )


# ------------------------------------------------------------------------ p2p summary


def p2p_observations(
    latency: Mapping[str, Mapping[float, float]],
    bandwidth: Mapping[str, Mapping[float, float]],
    bandwidth_ci: Mapping[str, Mapping[float, float]] | None = None,
    transport: Mapping[str, Sequence[mpi_transport.Threshold]] | None = None,
) -> list[Observation]:
    """All point-to-point observations for curves {label: {bytes: median}}. `transport`:
    {label: recorded protocol thresholds} (mpi_transport.curve_thresholds); given, every
    dip is explained from it or says "not explained" (a curve without an entry recorded
    no transport)."""
    out: list[Observation] = []
    for label in sorted(latency, key=_placement_rank):
        sizes = sorted(latency[label])
        vals = [latency[label][s] for s in sizes]
        flat = flat_region(sizes, vals, subject=label)
        if flat:
            out.append(flat)
        out.extend(breakpoints(sizes, vals, subject=label))
    out.extend(placement_ratios(latency, "latency"))
    out.extend(outliers_between(latency, metric="latency"))
    for label in sorted(bandwidth, key=_placement_rank):
        sizes = sorted(s for s in bandwidth[label] if bandwidth[label][s] > 0)
        vals = [bandwidth[label][s] for s in sizes]
        half = None
        if bandwidth_ci and label in bandwidth_ci:
            half = [bandwidth_ci[label].get(s, 0.0) for s in sizes]
        out.extend(
            bandwidth_dips(
                sizes,
                vals,
                ci_halfwidth=half,
                subject=label,
                explain=transport is not None,
                thresholds=None if transport is None else transport.get(label),
            )
        )
        plateau = bandwidth_plateau(sizes, vals, subject=label)
        if plateau:
            out.append(plateau)
    out.extend(placement_ratios(bandwidth, "bandwidth"))
    return out
