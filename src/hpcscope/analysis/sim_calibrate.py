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
    term: it takes its neighbour's bw factor, and the per-size error report shows what
    that costs.

Input is one-way latency (half a round trip, what OSU latency and p2p's latency test
report) in seconds. On the platforms of machine/sim_platform.py a route between two
nodes has latency lane_latency (half on each NIC) and bandwidth lane_bandwidth, so L and B
are PlatformSpec's lane_latency and lane_bandwidth. SMPI adds a few tens of nanoseconds
of its own per message (MPI_Wtime and call costs; 20-40 ns measured with 3.32), so fit
and simulation agree only to that.

Restrictions: each segment needs measurements at two or more distinct sizes; contention,
rendezvous handshakes and send/recv CPU overheads (smpi/os, smpi/or) are not fitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Protocol switches common to Open MPI and MPICH over IB/OmniPath: eager limits near
# 1-16 KiB and the rendezvous switch near 64 KiB. Pass your own breakpoints when the
# ping-pong shows kinks elsewhere.
DEFAULT_BREAKPOINTS = (0, 1024, 65536)


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
    """Weighted (1/t^2) least squares t = a + b*S with a, b >= 0."""
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


def fit_alpha_beta(
    sizes: Sequence[float], times: Sequence[float], breakpoints: Sequence[int] = DEFAULT_BREAKPOINTS
) -> AlphaBetaFit:
    """Piecewise α-β fit of one-way ping-pong times (seconds) over message sizes (bytes)."""
    if len(sizes) != len(times):
        raise CalibrationError(f"{len(sizes)} sizes but {len(times)} times: give one time per size")
    bps = list(breakpoints)
    if not bps or bps[0] != 0 or bps != sorted(set(bps)):
        raise CalibrationError(f"breakpoints {bps}: must start at 0 and increase strictly")
    for s, t in zip(sizes, times):
        if not (math.isfinite(s) and s >= 0):
            raise CalibrationError(f"size {s!r}: must be a finite number of bytes >= 0")
        if not (math.isfinite(t) and t > 0):
            raise CalibrationError(f"time {t!r} at {s} bytes: must be a positive number of seconds")
    raw = []
    for i, start in enumerate(bps):
        end = bps[i + 1] if i + 1 < len(bps) else None
        pts = [
            (float(s), float(t))
            for s, t in zip(sizes, times)
            if s >= start and (end is None or s < end)
        ]
        if len({s for s, _ in pts}) < 2:
            raise CalibrationError(
                f"segment [{start}, {end if end is not None else 'inf'}) bytes has "
                f"{len({s for s, _ in pts})} distinct sizes: measure at least 2 sizes in it "
                "or drop the breakpoint"
            )
        a, b = _line(pts)
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
    bw_factors: list[float | None] = [(1.0 / b) / bw if b > 0 else None for *_, b, _ in raw]
    # A flat segment borrows the factor of the next segment that has one (the last has).
    for i in range(len(bw_factors) - 1, -1, -1):
        if bw_factors[i] is None:
            bw_factors[i] = bw_factors[i + 1]
    filled: list[float] = []
    for f in bw_factors:
        assert f is not None  # the last segment has a positive slope (checked above)
        filled.append(f)
    segments = tuple(
        Segment(
            start=st,
            end=en,
            latency=a,
            inverse_bandwidth=b,
            lat_factor=max(a, 1e-12 * lat) / lat,
            bw_factor=f,
            points=n,
        )
        for (st, en, a, b, n), f in zip(raw, filled)
    )
    return AlphaBetaFit(lane_latency=lat, lane_bandwidth=bw, segments=segments)
