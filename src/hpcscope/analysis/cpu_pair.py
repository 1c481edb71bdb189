"""A move of the ranks' CPUs in words (results/cpu_pair.py finds it): the report's p2p
observation and first highlight, and `show`'s line."""

from __future__ import annotations

from hpcscope.analysis.observations import Observation
from hpcscope.analysis.p2p_curves import curve_label
from hpcscope.formatting import format_bytes, format_number
from hpcscope.results.cpu_pair import PairMove, pair_moves


def text(move: PairMove) -> str:
    """One sentence: the curve, the two states, how many cells follow, and the clearest
    example (latency where it follows: the number people know)."""
    latency = [f for f in move.following if f[0] == "latency"]
    metric, size, fast, slow = max(
        latency or move.following,
        key=lambda f: abs(f[2] - f[3]) / (min(abs(f[2]), abs(f[3])) or 1e-300),
    )
    unit = move.unit.get(metric, "")
    return (
        f"{curve_label({'tags': move.tags})}: the ranks' CPUs moved during the run. One "
        f"cache line between them took {_ns(move.fast)} ns in {len(move.fast)} "
        f"launch{'es' if len(move.fast) != 1 else ''} and {_ns(move.slow)} ns in "
        f"{len(move.slow)}, and {len(move.following)} of {move.cells} cells split with it "
        f"({metric} at {format_bytes(size)}: {format_number(fast, unit)} vs "
        f"{format_number(slow, unit)}). The launches measured two placements (on a "
        "virtual machine: the host moving its virtual CPUs); their median mixes them, and "
        "more launches will not make it more precise: pin the virtual CPUs or use bare "
        "metal."
    )


def observations(samples: list[dict], launches: list[dict]) -> list[Observation]:
    """One warning per configuration whose launches split with the CPU pair; its subject
    is the curve's label, as the same curve's instability observations have it."""
    return [
        Observation(
            "cpu_pair",
            text(m),
            {
                "fast_ns": m.fast,
                "slow_ns": m.slow,
                "following": len(m.following),
                "cells": m.cells,
            },
            "warning",
            curve_label({"tags": m.tags}),
        )
        for m in pair_moves(samples, launches)
    ]


def _ns(values: list[float]) -> str:
    low, high = round(min(values)), round(max(values))
    return f"{low}" if low == high else f"{low}-{high}"
