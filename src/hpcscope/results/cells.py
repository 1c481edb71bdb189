"""One measurement over its launches: which samples form a cell, and the cell's summary.

Every view (show, export, report, compare, tune) groups samples with `group_cells` and
summarises a cell with `summarize_cell`, so one cell has one central value everywhere
(pyperf's rule; docs/records.md, "Statistics").

A cell is (benchmark, metric, unit, configuration tags, identifying params):
  - tags in LAUNCH_TAGS only tell the launches of one configuration apart (pooled);
  - params in SETTING_PARAMS say how a value was measured, not what (iteration counts
    and block lengths change with the size; `repeat` counts in-launch repetitions): pooled,
    except a node point's `block`, the size it measures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hpcscope.results.rma_tests import is_rma
from hpcscope.results.stats import Comparison, Pooled, Summary, compare, is_rate, pooled, summarize

LAUNCH_TAGS = ("repeat",)
SETTING_PARAMS = ("iterations", "block", "window", "repeat", "test")
IMB_P2P_TESTS = ("pingping", "sendrecv", "exchange")  # suites/p2p.IMB_TESTS
# OSU 7.4's other two-rank programs (suites/p2p.OSU_MORE_TESTS): their metrics are the
# four's (latency, bandwidth, bibandwidth), so their test names the cell as well.
# test: (OSU's program, its BENCHMARK title after "OSU MPI", what show and the figures
# call it, unit)
OSU_MORE_P2P = {
    "latency_persistent": ("osu_latency_persistent", "Latency Persistent Test", "latency, persistent requests", "us"),
    "bw_persistent": ("osu_bw_persistent", "Bandwidth Persistent Test", "bandwidth, persistent requests", "MB/s"),
    "bibw_persistent": ("osu_bibw_persistent", "Bi-Directional Bandwidth Persistent Test", "bidirectional bandwidth, persistent requests", "MB/s"),
    "latency_mt": ("osu_latency_mt", "Multi-threaded Latency Test", "latency, threads per rank", "us"),
    "latency_mp": ("osu_latency_mp", "Multi-process Latency Test", "latency, forked processes per rank", "us"),
    "multi_lat": ("osu_multi_lat", "Multi Latency Test", "latency, pairs at once", "us"),
    # OSU's congestion programs print osu_bw's title
    "bw_fan_in": ("osu_bw_fan_in", "Bandwidth Test", "bandwidth, fan-in into the root group", "MB/s"),
    "bw_fan_out": ("osu_bw_fan_out", "Bandwidth Test", "bandwidth, fan-out from the root group", "MB/s"),
}  # fmt: skip
OSU_MORE_P2P_TESTS = tuple(OSU_MORE_P2P)
NAMED_P2P_TESTS = IMB_P2P_TESTS + OSU_MORE_P2P_TESTS  # p2p tests whose test is the cell


def config_tags(tags: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tags.items() if k not in LAUNCH_TAGS}


def identity(params: dict[str, Any]) -> dict[str, Any]:
    """What a sample measures. A node point (params with a `workload`) keeps `block`:
    there it is the copy, I/O or send size measured, not a p2p block length."""
    node = "workload" in params
    # IMB-MPI1's p2p patterns all write metric `time`, OSU's persistent, threaded and
    # forked tests the four's metrics, and the rma suite's tests share p2p's metrics:
    # there the test is what is measured
    named = params.get("test") in NAMED_P2P_TESTS or is_rma(params)
    return {
        k: v
        for k, v in params.items()
        if k not in SETTING_PARAMS or (node and k == "block") or (named and k == "test")
    }


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


CellKey = tuple[str, str, str, str, str]  # benchmark, metric, unit, tags json, params json


def cell_key(sample: dict[str, Any]) -> CellKey:
    return (
        sample["benchmark"],
        sample["metric"],
        sample["unit"],
        canonical(config_tags(sample.get("tags") or {})),
        canonical(identity(sample.get("params") or {})),
    )


def group_cells(samples: Iterable[dict[str, Any]]) -> dict[CellKey, dict[Any, list[float]]]:
    """{cell key: {launch id: raw values}}, in first-seen order."""
    cells: dict[CellKey, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        cells[cell_key(s)][s.get("launch_id")].extend(float(v) for v in s["values"])
    return cells


def launch_value(values: list[float], unit: str) -> float:
    """One number for one launch, computed as OSU computes the number it prints for one
    run: the mean time per timed unit (arithmetic mean of the launch's values), and for
    rates the work over the total time (harmonic mean; 0 when a value is 0 or below, i.e.
    a block that moved nothing). Equal to p2p's `osu:` summary value when the launch's
    blocks are of equal length (records.md section 4)."""
    arr = np.asarray(values, dtype=float)
    if not is_rate(unit):
        return float(np.mean(arr))
    return float(arr.size / np.sum(1.0 / arr)) if np.all(arr > 0) else 0.0


@dataclass
class OverLaunches:
    """The seeds' stability view (the LCC3 exercises: mean and standard deviation over the
    per-run OSU numbers): one `launch_value` per launch, in launch order, and their
    arithmetic mean and sample standard deviation (ddof 1; None with one launch). Several
    runs of one configuration (the other spread, over runs) are not computed here."""

    values: list[float]
    mean: float
    std: float | None


def over_launches(per_launch: dict[Any, list[float]], unit: str) -> OverLaunches | None:
    """The one place the over-launches numbers are computed (show, report, exports)."""
    values = [launch_value(v, unit) for v in per_launch.values() if v]
    if not values:
        return None
    std = float(np.std(values, ddof=1)) if len(values) > 1 else None
    return OverLaunches(values, float(np.mean(values)), std)


@dataclass
class Cell:
    """`all`: every raw value of the cell pooled (its median is the cell's central value);
    `across`: the launch view (median and CI of launch medians, their spread), None with
    one launch; `over`: the seeds' view (one number per launch, their mean and sigma).
    Warnings of both."""

    unit: str
    launches: int
    all: Summary
    across: Pooled | None
    warnings: list[str]
    over: OverLaunches | None = None

    @property
    def median(self) -> float:
        return self.all.median


def summarize_cell(per_launch: dict[Any, list[float]], unit: str) -> Cell:
    rate = is_rate(unit)
    groups = [v for v in per_launch.values() if v]
    everything = summarize([x for g in groups for x in g], rate)
    across = pooled(groups, rate) if len(groups) > 1 else None
    return Cell(
        unit,
        len(groups),
        everything,
        across,
        list(everything.warnings) + (list(across.warnings) if across else []),
        over_launches(per_launch, unit),
    )


def compare_cells(
    a: dict[Any, list[float]],
    b: dict[Any, list[float]],
    threshold: float,
    *,
    lower_is_better: bool,
    paired: bool = False,
    alpha: float = 0.05,
) -> Comparison:
    """b against a, launches respected (the one rule for verdicts, compare and tune).

    Repetitions of different launches are not i.i.d. (Hoefler & Belli), so a difference
    found on the pooled values (stats.compare: Mann-Whitney p < alpha and a Hodges-Lehmann
    shift beyond `threshold`) counts only if the launches agree:
      paired   (a and b measured in the same launches, e.g. native and a mock-up of one
               coll launch): the same verdict in every launch both have;
      unpaired (two runs): the launch medians do not overlap, every launch median of b
               beyond every launch median of a in the verdict's direction.
    With one launch on a side the pooled verdict stands (nothing to disagree with). A
    verdict the launches do not share becomes "same" with a warning naming the launches.
    """
    pooled_a = [v for vs in a.values() for v in vs]
    pooled_b = [v for vs in b.values() for v in vs]
    result = compare(pooled_a, pooled_b, threshold, lower_is_better=lower_is_better, alpha=alpha)
    if result.verdict == "same":
        return result
    if paired:
        shared = [k for k in a if k in b and a[k] and b[k]]
        if len(shared) < 2:
            return result
        per_launch = {
            k: compare(a[k], b[k], threshold, lower_is_better=lower_is_better, alpha=alpha).verdict
            for k in shared
        }
        disagree = sorted(str(k) for k, v in per_launch.items() if v != result.verdict)
        why = f"launches {', '.join(disagree)} do not show it on their own"
    else:
        medians_a = [float(np.median(v)) for v in a.values() if v]
        medians_b = [float(np.median(v)) for v in b.values() if v]
        if len(medians_a) < 2 and len(medians_b) < 2:
            return result
        b_lower = result.shift < 0
        disagree = (
            ["overlap"]
            if (max(medians_b) >= min(medians_a) if b_lower else min(medians_b) <= max(medians_a))
            else []
        )
        why = "the launch medians of the two sides overlap"
    if not disagree:
        return result
    return replace(
        result,
        significant=False,
        verdict="same",
        warnings=[*result.warnings, f"pooled values say {result.verdict}, but {why}"],
    )
