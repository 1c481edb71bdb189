"""Fitting SMPI's network model to a measured ping-pong (α-β per message-size segment).

The model SMPI uses (network/model:SMPI, what smpirun selects): a message of S bytes
alone on a route takes

    t(S) = lat_factor(S) * L  +  S / (bw_factor(S) * B)

where L is the sum of the link latencies on the route and B the smallest link bandwidth
on it (concurrent flows share B by max-min fairness). lat_factor and bw_factor are
piecewise constant in S, written "--cfg=smpi/bw-factor:0:f0;S1:f1;S2:f2": factor f_i
applies to every size S >= S_i up to the next threshold (checked with SimGrid 3.32: with
'0:1;1024:3' a 1024-byte message already gets 3). SMPI's own calibration (the
smpi/bw-factor defaults came from an InfiniBand cluster) fits a line per segment to a
ping-pong, because eager/rendezvous protocol switches change both intercept and slope.
This module does the same:

  - per segment [S_i, S_{i+1}) a weighted least-squares line t = a_i + b_i * S, weights
    1/t^2 so every point counts by its relative error (otherwise the largest messages
    decide everything); an intercept below 0 is refit through the origin and a slope
    below 0 (noise in a latency-bound segment) is refit as a constant;
  - the platform's lane latency L is the first segment's intercept and its bandwidth B is
    1/slope of the last segment (the asymptotic bandwidth); then lat_factor_i = a_i / L
    and bw_factor_i = (1/b_i) / B. A segment whose slope is 0 has no measurable bandwidth
    term: its bw factor is FLAT_BW_FACTOR (1000), which makes that term negligible.

Input is one-way latency (half a round trip, what OSU latency and p2p's latency test
report) in seconds. On the platforms of machine/sim_platform.py a route between two
nodes has latency lane_latency (half on each NIC) and bandwidth lane_bandwidth, so L and B
are PlatformSpec's lane_latency and lane_bandwidth. SMPI adds a few tens of nanoseconds
of its own per message (MPI_Wtime and call costs; 20-40 ns measured with 3.32), so fit
and simulation agree only to that.

Breakpoints: fit_alpha_beta takes them from the caller; fit_piecewise chooses them among
the measured sizes: the fewest segments whose largest relative error is within a
tolerance (exact, by dynamic programming). Real ping-pongs have more kinks than the
protocol switches (cache sizes, shared-memory copy methods: on a 2-core EPYC guest Open
MPI's core ping-pong jumps 6x at 4 KiB and 6x again at 1 MiB), so a handful of fixed
breakpoints leaves 50-70 % errors there.

Restrictions: fit_alpha_beta needs two or more distinct sizes per segment by default.
fit_piecewise also allows a segment of one size, fitted through the origin: where time
grows faster than linearly (a cache level running out), no line with a latency >= 0
passes through neighbouring sizes, so such a size has to stand alone; taking the fewest
segments keeps these to where the data need them. Contention, rendezvous handshakes and send/recv CPU
overheads (smpi/os, smpi/or) are not fitted. SMPI's factors are global: the fit is exact
for the route it was measured on, and every other route gets the same per-size factors
(the protocol of the MPI library) on its own latency and bandwidth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Protocol switches common to Open MPI and MPICH over IB/OmniPath: eager limits near
# 1-16 KiB and the rendezvous switch near 64 KiB. Pass your own breakpoints when the
# ping-pong shows kinks elsewhere.
DEFAULT_BREAKPOINTS = (0, 1024, 65536)
FLAT_BW_FACTOR = 1000.0


class CalibrationError(ValueError):
    """Data that cannot be fitted; the message says what is missing."""


@dataclass(frozen=True)
class Segment:
    start: int  # smallest size of the segment (bytes, inclusive)
    end: int | None  # next segment's start, None for the last
    latency: float  # intercept a_i (s)
    inverse_bandwidth: float  # slope b_i (s/byte), 0 when not measurable
    lat_factor: float
    bw_factor: float
    points: int


@dataclass(frozen=True)
class AlphaBetaFit:
    lane_latency: float  # L (s)
    lane_bandwidth: float  # B (bytes/s)
    segments: tuple[Segment, ...]

    def lat_factor_cfg(self) -> str:
        return ";".join(f"{s.start}:{s.lat_factor:.6g}" for s in self.segments)

    def bw_factor_cfg(self) -> str:
        return ";".join(f"{s.start}:{s.bw_factor:.6g}" for s in self.segments)

    def spec_params(self) -> dict[str, float]:
        """Keyword arguments for PlatformSpec (lane_latency, lane_bandwidth)."""
        return {"lane_latency": self.lane_latency, "lane_bandwidth": self.lane_bandwidth}

    def smpi_cfg(self) -> list[str]:
        return [
            f"--cfg=smpi/lat-factor:{self.lat_factor_cfg()}",
            f"--cfg=smpi/bw-factor:{self.bw_factor_cfg()}",
        ]

    def segment_for(self, size: float) -> Segment:
        chosen = self.segments[0]
        for s in self.segments:
            if size >= s.start:
                chosen = s
        return chosen

    def predicted(self, sizes: Sequence[float]) -> list[float]:
        """One-way time SMPI will simulate for each size on an idle route (s)."""
        out = []
        for size in sizes:
            s = self.segment_for(size)
            out.append(
                s.lat_factor * self.lane_latency + size / (s.bw_factor * self.lane_bandwidth)
            )
        return out

    def relative_errors(self, sizes: Sequence[float], times: Sequence[float]) -> list[float]:
        """(predicted - measured) / measured per size."""
        return [(p - t) / t for p, t in zip(self.predicted(sizes), times)]


def _line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Weighted (1/t^2) least squares t = a + b*S with a, b >= 0. Points of one size
    only: through the origin (all bandwidth term), or all latency at 0 bytes."""
    if len({s for s, _ in points}) == 1:
        size = points[0][0]
        mean = sum(t for _, t in points) / len(points)
        return (0.0, mean / size) if size > 0 else (mean, 0.0)
    w = [1.0 / (t * t) for _, t in points]
    sw = sum(w)
    sx = sum(wi * s for wi, (s, _) in zip(w, points))
    sy = sum(wi * t for wi, (_, t) in zip(w, points))
    sxx = sum(wi * s * s for wi, (s, _) in zip(w, points))
    sxy = sum(wi * s * t for wi, (s, t) in zip(w, points))
    det = sw * sxx - sx * sx
    a = (sy * sxx - sx * sxy) / det
    b = (sw * sxy - sx * sy) / det
    if b < 0:  # flat segment: constant fit
        return sy / sw, 0.0
    if a < 0:  # through the origin
        return 0.0, sxy / sxx
    return a, b


def _check_points(sizes: Sequence[float], times: Sequence[float]) -> None:
    if len(sizes) != len(times):
        raise CalibrationError(f"{len(sizes)} sizes but {len(times)} times: give one time per size")
    for s, t in zip(sizes, times):
        if not (math.isfinite(s) and s >= 0):
            raise CalibrationError(f"size {s!r}: must be a finite number of bytes >= 0")
        if not (math.isfinite(t) and t > 0):
            raise CalibrationError(f"time {t!r} at {s} bytes: must be a positive number of seconds")


def fit_alpha_beta(
    sizes: Sequence[float],
    times: Sequence[float],
    breakpoints: Sequence[int] = DEFAULT_BREAKPOINTS,
    min_sizes: int = 2,
) -> AlphaBetaFit:
    """Piecewise α-β fit of one-way ping-pong times (seconds) over message sizes (bytes);
    every segment needs min_sizes distinct sizes."""
    _check_points(sizes, times)
    bps = list(breakpoints)
    if not bps or bps[0] != 0 or bps != sorted(set(bps)):
        raise CalibrationError(f"breakpoints {bps}: must start at 0 and increase strictly")
    raw = []
    for i, start in enumerate(bps):
        end = bps[i + 1] if i + 1 < len(bps) else None
        pts = [
            (float(s), float(t))
            for s, t in zip(sizes, times)
            if s >= start and (end is None or s < end)
        ]
        if len({s for s, _ in pts}) < max(min_sizes, 1):
            raise CalibrationError(
                f"segment [{start}, {end if end is not None else 'inf'}) bytes has "
                f"{len({s for s, _ in pts})} distinct sizes: measure at least {min_sizes} sizes in it "
                "or drop the breakpoint"
            )
        a, b = _line(pts)
        if i == 0 and a <= 0 and len({s for s, _ in pts}) == 1:
            a, b = pts[0][1], 0.0  # the route's latency L must come from somewhere
        raw.append((start, end, a, b, len(pts)))
    lat = raw[0][2]
    if lat <= 0:
        raise CalibrationError(
            "the smallest-size segment fits a zero latency: include small "
            "messages (0-64 bytes) in the ping-pong"
        )
    last_slope = raw[-1][3]
    if last_slope <= 0:
        raise CalibrationError(
            "the largest-size segment shows no bandwidth term: measure larger messages (MiB range)"
        )
    bw = 1.0 / last_slope
    # A flat segment (no measurable bandwidth term) gets FLAT_BW_FACTOR: its bandwidth
    # term shrinks to 1/1000 of what the asymptotic bandwidth gives, as its fit says.
    filled = [min((1.0 / b) / bw, FLAT_BW_FACTOR) if b > 0 else FLAT_BW_FACTOR for *_, b, _ in raw]
    segments = tuple(
        Segment(
            start=st,
            end=en,
            latency=a,
            inverse_bandwidth=b,
            lat_factor=max(a, 1e-3 * lat) / lat,
            bw_factor=f,
            points=n,
        )
        for (st, en, a, b, n), f in zip(raw, filled)
    )
    return AlphaBetaFit(lane_latency=lat, lane_bandwidth=bw, segments=segments)


def fit_piecewise(
    sizes: Sequence[float],
    times: Sequence[float],
    tolerance: float = 0.05,
    max_segments: int = 12,
) -> AlphaBetaFit:
    """fit_alpha_beta with breakpoints chosen among the measured sizes: the fewest segments
    (a line through the sizes of each, or one size on its own) whose largest relative
    error is within
    `tolerance`, or, when max_segments cannot reach it, the max_segments segments with the
    smallest largest error. Exact minimax by dynamic programming over the segment ends:
    O(n^2) line fits and O(max_segments * n^2) steps for n distinct sizes."""
    _check_points(sizes, times)
    xs = sorted({float(s) for s in sizes})
    n = len(xs)
    if n < 2:
        return fit_alpha_beta(sizes, times, [0])  # raises, naming what is missing
    by_size: dict[float, list[float]] = {}
    for size, t in zip(sizes, times):
        by_size.setdefault(float(size), []).append(float(t))

    def worst(i: int, j: int) -> float:
        """Largest relative error of one line through the sizes xs[i:j]."""
        pts = [(x, t) for x in xs[i:j] for t in by_size[x]]
        a, b = _line(pts)
        return max(abs(a + b * x - t) / t for x, t in pts)

    errors = {(i, j): worst(i, j) for i in range(n) for j in range(i + 1, n + 1)}
    # best[k][j]: smallest largest error of k segments covering xs[:j]; start[k][j]: where
    # the k-th of them begins.
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(max_segments + 1)]
    start = [[0] * (n + 1) for _ in range(max_segments + 1)]
    best[0][0] = 0.0
    for k in range(1, max_segments + 1):
        for j in range(1, n + 1):
            for i in range(0, j):
                value = max(best[k - 1][i], errors[(i, j)])
                if value < best[k][j]:
                    best[k][j], start[k][j] = value, i
    reachable = [k for k in range(1, max_segments + 1) if best[k][n] < inf]
    within = [k for k in reachable if best[k][n] <= tolerance]
    k = within[0] if within else min(reachable, key=lambda k: best[k][n])
    begins, j = [], n
    for level in range(k, 0, -1):
        j = start[level][j]
        begins.append(j)
    breakpoints = [0] + [int(xs[i]) for i in sorted(begins)[1:]]
    return fit_alpha_beta(sizes, times, breakpoints, min_sizes=1)
