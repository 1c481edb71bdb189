"""FLOP/s and op/s peaks at the clock the cores actually ran at.

A peak computed at the nominal clock of the model name is wrong both ways: turbo runs
the cores faster (a kernel then shows more than 100 % of "peak"), a hypervisor or an
AVX frequency licence slower. The node suite's clock kernel (bench/node/cpu.c, workload
`cpu_clock`) measures the clock with T threads busy at once; each peak that carries the
clock it was computed with (Peak.clock_ghz) is scaled to the clock measured with the
most threads, and its formula states the measured and the nominal clock side by side.
A peak whose clock the user stated (`--peak freq=...`) or gave outright keeps its value.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from hpcscope.machine.peaks import Peak


def positive_number(x: Any) -> bool:
    """A finite number above 0 (an imported store may hold anything else)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def clock_samples(samples: Sequence[dict]) -> list[dict]:
    """The clock kernel's samples (workload cpu_clock): those measured between FP64 FMA
    work (param `load`, the clock the peaks' instruction mix runs at) where the run has
    them, else the add chain alone."""
    found = [
        s
        for s in samples
        if isinstance(s.get("params"), dict) and s["params"].get("workload") == "cpu_clock"
    ]
    return [s for s in found if s["params"].get("load")] or found


def measured_clock(samples: Sequence[dict]) -> tuple[float, int, int] | None:
    """(GHz, threads, repetitions) of the clock samples (clock_samples) with the most
    threads: the median of their values, or None without clock samples."""
    clocks = [
        (s["params"].get("threads", 1), [v for v in s.get("values") or [] if positive_number(v)])
        for s in clock_samples(samples)
    ]
    clocks = [(t, vs) for t, vs in clocks if isinstance(t, int) and positive_number(t) and vs]
    if not clocks:
        return None
    threads = max(t for t, _ in clocks)
    values = [v for t, vs in clocks if t == threads for v in vs]
    return statistics.median(values), threads, len(values)


def at_measured_clock(peaks: Sequence[Peak | dict], samples: Sequence[dict]) -> list[dict]:
    """The peaks as dicts, FLOP/s and op/s peaks scaled to the measured clock."""
    out = [
        asdict(p) if isinstance(p, Peak) else dict(p) if isinstance(p, dict) else {} for p in peaks
    ]
    clock = measured_clock(samples)
    if clock is None:
        return out
    ghz, threads, reps = clock
    load = next(
        (s["params"]["load"] for s in clock_samples(samples) if s["params"].get("load")), None
    )
    under = f" between {str(load).upper()} work" if load else ""
    for p in out:
        stated = p.get("clock_ghz")
        if not (
            positive_number(stated)
            and positive_number(p.get("value"))
            and isinstance(p.get("formula"), str)
        ):
            continue
        nominal_value = p["value"]
        p["value"] = nominal_value * ghz / stated
        p["clock_ghz"] = ghz
        p["nominal_clock_ghz"] = stated
        p["value_at_nominal_clock"] = nominal_value
        old = f"x {stated:.4g} GHz x"
        new = (
            f"x {ghz:.4g} GHz (measured: dependent-add chain on {threads} "
            f"thread{'s' if threads > 1 else ''}{under}, median of {reps}; "
            f"nominal {stated:.4g} GHz gives {nominal_value:.4g} {p.get('unit', '')}) x"
        )
        p["formula"] = p["formula"].replace(old, new, 1)
    return out


def for_threads(peak: dict, threads: Any, clocks: dict[int, float]) -> dict:
    """The peak of a row measured with `threads` threads: as many of the formula's cores
    (a peak that carries them, Peak.cores) at the clock measured with that many threads
    busy (clocks: {threads: GHz}, machine_measured.clocks), so that every thread count's
    efficiency is against what its cores could do at the clock they ran at. The peak as
    it is where either is unknown or nothing changes."""
    cores, ghz = peak.get("cores"), peak.get("clock_ghz")
    if not (
        isinstance(threads, int)
        and positive_number(threads)
        and isinstance(cores, int)
        and positive_number(cores)
        and positive_number(peak.get("value"))
        and positive_number(ghz)
    ):
        return peak
    used = min(threads, cores)
    clock = clocks.get(threads)
    clock = clock if positive_number(clock) and peak.get("nominal_clock_ghz") else ghz
    if used == cores and clock == ghz:
        return peak
    value = peak["value"] * used / cores * clock / ghz
    how = (
        f"{peak['value']:.4g} {peak.get('unit', '')} of all {cores} cores x {used}/{cores} "
        f"cores x {clock:.4g}/{ghz:.4g} GHz (the clock measured with {threads} "
        f"thread{'s' if threads > 1 else ''} busy)"
    )
    return {**peak, "value": value, "clock_ghz": clock, "formula": how}
