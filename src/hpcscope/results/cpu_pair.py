"""Launches split by where the host put the two ranks' CPUs (issue 29: why a cell misses).

The detection; analysis/cpu_pair.py says it in words (report, show), and precision.judge
gives the cells that follow a move their own stop reason.

Every 2-rank p2p launch on one node measures, at its end, how long one cache line takes
between its two CPUs (meta `cpu_pair.cacheline_ns`, bench/common/cacheline_mpi.h). On a
virtual machine that time jumps when the hypervisor moves the virtual CPUs to other
physical cores, and small-message results jump with it, for minutes at a time: on a
2-vCPU AMD EPYC KVM guest (November 2026) the line took 41-75 ns or 190-307 ns, and Open
MPI's 8 B latency was 0.12 or 0.37 us with it. Launches in two such states measure two
placements, not one: more launches only sample the mixture, no precision target is met
there, and runs minutes apart disagree beyond their intervals (docs/osu.md).

`pair_moves` finds them per configuration (its tags without `repeat`):
  - states: the launches' cache-line times, sorted, split at the largest ratio between
    neighbours when it is at least STATE_RATIO (2x; within one state 55-180 ns was seen
    on an Intel guest without the results following it, so the split alone proves
    nothing);
  - following cells: those whose launch medians separate by state in the direction a
    slower line predicts (times up, rates down), every median of one state beyond every
    median of the other, the states' medians more than SPLIT_LIMIT apart;
  - a move is reported when at least MIN_FOLLOWING cells follow it, at least
    CHANCE_FACTOR times as many as oppose it (separate the same way in the other
    direction), and a sign test over following against opposing cells gives p < SIGN_P.
    When the state does not matter, following and opposing are equally likely whatever
    the launch counts, so this holds with two launches (one in each state) as with
    fifteen. (Until issue 47 the bar was CHANCE_FACTOR times the cells times
    1 / C(a + b, a): with one launch in each state that asked for 1.5x the cells, with
    1 + 2 for all of them, so the quick runs' 2-3 launches never showed a move.) The
    probe runs at a launch's end, so a launch that moved during its sizes counts in its
    end state; this lowers the count, never raises it.
Cost: one median per cell and launch; no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import binom

from hpcscope.results.cells import CellKey, canonical, config_tags, group_cells
from hpcscope.results.stats import lower_is_better

STATE_RATIO = 2.0
SPLIT_LIMIT = 0.05
MIN_FOLLOWING = 3
CHANCE_FACTOR = 3.0
SIGN_P = 0.05


@dataclass
class PairMove:
    tags: dict[str, Any]  # the configuration's launch tags without `repeat`
    fast: list[float]  # cache-line ns of the launches in the faster state, sorted
    slow: list[float]
    following: list[tuple[str, int, float, float]]  # (metric, bytes, fast median, slow median)
    keys: set[CellKey]  # the following cells (cells.group_cells keys)
    cells: int  # cells with launches in both states
    unit: dict[str, str]  # metric -> unit
    fast_ids: list[Any] = field(default_factory=list)  # launch ids in each state
    slow_ids: list[Any] = field(default_factory=list)


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
    tags_of: dict[str, dict[str, Any]] = {}
    for launch in launches:
        pair = (launch.get("meta") or {}).get("cpu_pair") or {}
        ns = pair.get("cacheline_ns")
        if isinstance(ns, (int, float)) and ns > 0:
            tags = config_tags(launch.get("tags") or {})
            key = canonical(tags)
            times.setdefault(key, {})[launch["id"]] = float(ns)
            tags_of[key] = tags
    moves = []
    for key, by_launch in times.items():
        states = _states(by_launch)
        if states is None:
            continue
        fast_ids, slow_ids = states
        following, keys, cells, units, opposing = [], set(), 0, {}, 0
        ours = [
            s for s in samples if s.get("benchmark") == "p2p" and s.get("launch_id") in by_launch
        ]
        for cell_key, per_launch in group_cells(ours).items():
            _, metric, unit, _, params = cell_key
            fast = [float(np.median(v)) for k, v in per_launch.items() if k in fast_ids and v]
            slow = [float(np.median(v)) for k, v in per_launch.items() if k in slow_ids and v]
            if not fast or not slow:
                continue
            cells += 1
            try:
                lower = lower_is_better(unit)
            except ValueError:
                continue
            if _follows(slow, fast, lower):
                opposing += 1
            if _follows(fast, slow, lower):
                size = json.loads(params).get("bytes")
                following.append(
                    (metric, int(size or 0), float(np.median(fast)), float(np.median(slow)))
                )
                keys.add(cell_key)
                units[metric] = unit
        count = len(following)
        sign_p = float(binom.sf(count - 1, count + opposing, 0.5)) if count else 1.0
        if count >= max(MIN_FOLLOWING, CHANCE_FACTOR * opposing) and sign_p < SIGN_P:
            fast_ns = sorted(by_launch[k] for k in fast_ids)
            slow_ns = sorted(by_launch[k] for k in slow_ids)
            moves.append(
                PairMove(
                    tags_of[key],
                    fast_ns,
                    slow_ns,
                    following,
                    keys,
                    cells,
                    units,
                    sorted(fast_ids),
                    sorted(slow_ids),
                )
            )
    return moves
