"""Runs that measure the same thing: which runs are comparable, and each measurement's
spread over them (the report's one section per group of runs, issue 19).

Comparable runs: the same suite on the same host with the same configurations (the
launch tags without the launch index and the MPI version: MPI library and placement for
p2p). Runs that differ only in when they ran, their label or their MPI version are one
group; the report overlays their curves and puts one column per run in one table.

Spread over runs: each run contributes one value per measurement, the median of all its
raw values (results/cells.py, the number `show` prints); over those per-run values the
mean and standard deviation (the seed-style figures, mean harmonic for rates as
everywhere: stats.summarize) stand next to the robust ones, the median of the run values
and its nonparametric 95% CI (6 runs or more). This is the spread between runs; the
spread between the launches of one run is another table (the per-run stability table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hpcscope.analysis.history import HISTORY_TAGS, Series
from hpcscope.results.cells import LAUNCH_TAGS, canonical
from hpcscope.results.stats import Summary, is_rate, summarize


def comparable_key(run: dict[str, Any], samples: Sequence[dict[str, Any]]) -> tuple:
    """(suite, host, configurations): runs with equal keys measure the same thing."""
    configs = sorted(
        {
            canonical(
                {
                    k: v
                    for k, v in (s.get("tags") or {}).items()
                    if k not in LAUNCH_TAGS and k not in HISTORY_TAGS
                }
            )
            for s in samples
        }
    )
    return (run.get("suite") or "", run.get("host") or "", tuple(configs))


def group_comparable(
    runs: Sequence[tuple[dict[str, Any], Sequence[dict[str, Any]]]],
) -> list[list[int]]:
    """Run ids grouped by comparable_key, groups in the order of their first run, runs in
    the order given. A run without samples is a group of its own (nothing to compare)."""
    groups: dict[tuple, list[int]] = {}
    for run, samples in runs:
        key = comparable_key(run, samples) if samples else ("", "", (), run["id"])
        groups.setdefault(key, []).append(int(run["id"]))
    return list(groups.values())


@dataclass
class Spread:
    """One measurement over the runs of a group: the run values and their summary."""

    series: Series
    values: dict[int, float]  # run id -> the run's median
    summary: Summary | None  # over the run values; None with no value


def spread_over_runs(series: Sequence[Series]) -> list[Spread]:
    out = []
    for s in series:
        values = {p.run_id: p.median for p in s.points}
        summary = summarize(list(values.values()), is_rate(s.unit)) if values else None
        out.append(Spread(s, values, summary))
    return out
