"""One measurement over its launches: which samples form a cell, and the cell's summary.

Every view (show, export, report, compare, tune) groups samples with `group_cells` and
summarises a cell with `summarize_cell`, so one cell has one central value everywhere
(pyperf's rule; docs/records.md, "Statistics").

A cell is (benchmark, metric, unit, configuration tags, identifying params):
  - tags in LAUNCH_TAGS only tell the launches of one configuration apart (pooled);
  - params in SETTING_PARAMS say how a value was measured, not what (iteration counts
    and block lengths change with the size; `repeat` counts in-launch repetitions): pooled.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hpcscope.results.stats import Pooled, Summary, is_rate, pooled, summarize

LAUNCH_TAGS = ("repeat",)
SETTING_PARAMS = ("iterations", "block", "window", "repeat", "test")


def config_tags(tags: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tags.items() if k not in LAUNCH_TAGS}


def identity(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k not in SETTING_PARAMS}


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


@dataclass
class Cell:
    """`all`: every raw value of the cell pooled (its median is the cell's central value);
    `across`: the launch view (median and CI of launch medians, their spread), None with
    one launch. Warnings of both."""

    unit: str
    launches: int
    all: Summary
    across: Pooled | None
    warnings: list[str]

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
    )
