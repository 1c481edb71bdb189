"""Launches split by where the host put the two ranks' CPUs (issue 29: why a cell misses).

Every 2-rank p2p launch on one node measures, at its end, how long one cache line takes
between its two CPUs (meta `cpu_pair.cacheline_ns`, bench/common/cacheline_mpi.h). On a
virtual machine that time jumps when the hypervisor moves the virtual CPUs to other
physical cores, and small-message results jump with it, for minutes at a time: on a
2-vCPU AMD EPYC KVM guest (November 2026) the line took 41-75 ns or 190-307 ns, and Open
MPI's 8 B latency was 0.12 or 0.37 us with it. Launches in two such states measure two
placements, not one: more launches only sample the mixture, no precision target is met
there, and runs minutes apart disagree beyond their intervals (docs/osu.md).

`pair_moves` finds them per configuration (MPI, placement):
  - states: the launches' cache-line times, sorted, split at the largest ratio between
    neighbours when it is at least STATE_RATIO (2x; within one state 55-180 ns was seen
    on an Intel guest without the results following it, so the split alone proves
    nothing);
  - following cells: those whose launch medians separate by state in the direction a
    slower line predicts (times up, rates down), every median of one state beyond every
    median of the other, the states' medians more than SPLIT_LIMIT apart;
  - a move is reported when at least MIN_FOLLOWING cells follow it and at least
    CHANCE_FACTOR times as many as would by chance (a cell's medians separate so with
    probability 1 / C(a + b, a) for a and b launches in the states when the state does
    not matter). The probe runs at a launch's end, so a launch that moved during its
    sizes counts in its end state; this lowers the count, never raises it.
Cost: one median per cell and launch; no I/O.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcscope.analysis.observations import Observation
from hpcscope.analysis.p2p_curves import curve_label
from hpcscope.formatting import format_bytes, format_number
from hpcscope.results.cells import canonical, config_tags, group_cells
from hpcscope.results.stats import lower_is_better

STATE_RATIO = 2.0
SPLIT_LIMIT = 0.05
MIN_FOLLOWING = 3
CHANCE_FACTOR = 3.0


@dataclass
class PairMove:
    configuration: str  # the curve's label (p2p_curves.curve_label): "openmpi core"
    fast: list[float]  # cache-line ns of the launches in the faster state, sorted
    slow: list[float]
    following: list[tuple[str, int, float, float]]  # (metric, bytes, fast median, slow median)
    cells: int  # cells with launches in both states
    unit: dict[str, str]  # metric -> unit

    def text(self) -> str:
        """One sentence: the two states, how many cells follow, and the clearest example
        (latency where it follows: the number people know)."""
        latency = [f for f in self.following if f[0] == "latency"]
        metric, size, fast, slow = max(
            latency or self.following,
            key=lambda f: abs(f[2] - f[3]) / (min(abs(f[2]), abs(f[3])) or 1e-300),
        )
        unit = self.unit.get(metric, "")
        return (
            f"{self.configuration}: the ranks' CPUs moved during the run. One cache line "
            f"between them took {_ns(self.fast)} ns in {len(self.fast)} "
            f"launch{'es' if len(self.fast) != 1 else ''} and {_ns(self.slow)} ns in "
            f"{len(self.slow)}, and {len(self.following)} of {self.cells} cells split with "
            f"it ({metric} at {format_bytes(size)}: {format_number(fast, unit)} vs "
            f"{format_number(slow, unit)}). The launches measured two placements (on a "
            "virtual machine: the host moving its virtual CPUs); their median mixes them, "
            "and more launches will not make it more precise: pin the virtual CPUs or use "
            "bare metal."
        )

    def observation(self) -> Observation:
        return Observation(
            "cpu_pair",
            self.text(),
            {
                "fast_ns": self.fast,
                "slow_ns": self.slow,
                "following": len(self.following),
                "cells": self.cells,
            },
            "warning",
            self.configuration,
        )


def _ns(values: list[float]) -> str:
    low, high = round(min(values)), round(max(values))
    return f"{low}" if low == high else f"{low}-{high}"


def _states(times: dict[Any, float]) -> tuple[set[Any], set[Any]] | None:
    """The launches in the faster and the slower state, or None for one state."""
    ordered = sorted(times, key=lambda k: times[k])
    if len(ordered) < 2:
        return None
    ratios = [times[ordered[i]] / times[ordered[i - 1]] for i in range(1, len(ordered))]
    cut = int(np.argmax(ratios)) + 1
    if ratios[cut - 1] < STATE_RATIO:
        return None
    return set(ordered[:cut]), set(ordered[cut:])


def _follows(fast: list[float], slow: list[float], lower_better: bool) -> bool:
    """The slow state's medians are all worse than the fast state's, by more than
    SPLIT_LIMIT between the states' medians."""
    worse = min(slow) > max(fast) if lower_better else max(slow) < min(fast)
    centre_fast, centre_slow = float(np.median(fast)), float(np.median(slow))
    return worse and centre_fast != 0 and abs(centre_slow / centre_fast - 1) > SPLIT_LIMIT


def pair_moves(samples: list[dict], launches: list[dict]) -> list[PairMove]:
    """The configurations whose p2p launches split with the CPU pair (module doc)."""
    times: dict[str, dict[Any, float]] = {}
    labels: dict[str, str] = {}
    for launch in launches:
        pair = (launch.get("meta") or {}).get("cpu_pair") or {}
        ns = pair.get("cacheline_ns")
        if isinstance(ns, (int, float)) and ns > 0:
            tags = config_tags(launch.get("tags") or {})
            key = canonical(tags)
            times.setdefault(key, {})[launch["id"]] = float(ns)
            labels[key] = curve_label({"tags": tags})
    moves = []
    for key, by_launch in times.items():
        states = _states(by_launch)
        if states is None:
            continue
        fast_ids, slow_ids = states
        following, cells, units = [], 0, {}
        ours = [
            s for s in samples if s.get("benchmark") == "p2p" and s.get("launch_id") in by_launch
        ]
        for (_, metric, unit, _, params), per_launch in group_cells(ours).items():
            fast = [float(np.median(v)) for k, v in per_launch.items() if k in fast_ids and v]
            slow = [float(np.median(v)) for k, v in per_launch.items() if k in slow_ids and v]
            if not fast or not slow:
                continue
            cells += 1
            try:
                lower = lower_is_better(unit)
            except ValueError:
                continue
            if _follows(fast, slow, lower):
                size = json.loads(params).get("bytes")
                following.append(
                    (metric, int(size or 0), float(np.median(fast)), float(np.median(slow)))
                )
                units[metric] = unit
        chance = cells / math.comb(len(fast_ids) + len(slow_ids), len(fast_ids))
        if len(following) >= max(MIN_FOLLOWING, CHANCE_FACTOR * chance):
            fast_ns = sorted(by_launch[k] for k in fast_ids)
            slow_ns = sorted(by_launch[k] for k in slow_ids)
            moves.append(PairMove(labels[key], fast_ns, slow_ns, following, cells, units))
    return moves
