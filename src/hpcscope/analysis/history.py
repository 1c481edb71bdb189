"""One measurement over many runs, and the runs where it changes (`hpcscope history`).

A series is one cell of results/cells.py (benchmark, metric, unit, configuration tags,
identifying params) followed across runs, in the order the runs started. Tags that
name the software rather than the measurement (HISTORY_TAGS: the MPI version) are left
out of the key, so an upgrade is a change within a series, not a new series; each point
keeps them to say what changed with it.

Each point is the run's cell as cells.summarize_cell gives it (the median of all its raw
values and the 95% CI of that median; `centre`), so a point of history is the number `show` prints for it.

Change detection (docs/records.md section 7.8) uses the comparison every other view uses,
cells.compare_cells with the launch rule of section 7.3a, and nothing else:

  level = the runs since the last change (at most WINDOW of the newest of them);
  for each run in start order: compare_cells(level's launches, the run's launches);
    faster or slower -> a change starts at this run, and the new level is this run;
    same             -> the run joins the level.

So a step is found at the first run of the new level, and a single slow run (a run
under load) gives two changes: slower at that run, faster at the next ("back to the
level before run X"). A run becomes a change only when the pooled values differ
(Mann-Whitney p < 0.05 and a Hodges-Lehmann shift beyond the threshold) and every launch
median of the run lies beyond every launch median of the level: on pure noise the
chance of that is small, and it never depends on how many runs came before beyond
WINDOW. Cost: one compare per run and series, skipped (with the same answer) when the
launch medians overlap; about 1 s for 1,000 runs x 8 series.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hpcscope.results.cells import (
    LAUNCH_TAGS,
    canonical,
    compare_cells,
    identity,
)
from hpcscope.results.placement_proof import tag_value
from hpcscope.results.stats import Comparison, lower_is_better, median_ci_ranks

WINDOW = 5  # runs of the current level a new run is compared with (the newest ones)
THRESHOLD = 0.05  # as `hpcscope compare`: smallest relative shift that counts
HISTORY_TAGS = ("mpi_version",)  # software identity: shown per point, not part of the key

SeriesKey = tuple[str, str, str, str, str]  # benchmark, metric, unit, config json, params json


@dataclass
class Point:
    """One run's value of one series."""

    run_id: int
    started: str
    label: str
    median: float
    ci_low: float | None
    ci_high: float | None
    launches: int
    n: int
    software: dict[str, Any]  # HISTORY_TAGS of this run's launches (e.g. mpi_version)
    per_launch: dict[Any, list[float]] = field(repr=False, default_factory=dict)
    # median of each launch, computed once: every later run of the level reads them
    launch_medians: list[float] = field(repr=False, default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("per_launch")
        out.pop("launch_medians")
        return out


@dataclass
class Change:
    """A new level starting at `run_id`, against the level of `before_runs`."""

    run_id: int
    started: str
    label: str
    index: int  # position of the run in the series
    before_runs: list[int]
    median_before: float  # median of the level's raw values (compare's median_a)
    median_after: float  # median of this run's raw values (compare's median_b)
    ratio: float
    p_value: float
    shift: float
    verdict: str  # slower | faster: this run relative to the level before it
    software_before: dict[str, Any]
    software_after: dict[str, Any]
    back_to_before: int | None = None  # run id of the change this one undoes, if any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Series:
    benchmark: str
    metric: str
    unit: str
    config: dict[str, Any]
    params: dict[str, Any]
    lower_is_better: bool
    points: list[Point]
    changes: list[Change] = field(default_factory=list)

    @property
    def label(self) -> str:
        # a flag tag that is on reads as its name ('emulated nodes'), not True
        parts = [t for t in (tag_value(k, v) for k, v in self.config.items()) if t]
        parts += [f"{k}={v}" for k, v in self.params.items()]
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "metric": self.metric,
            "unit": self.unit,
            "config": self.config,
            "params": self.params,
            "lower_is_better": self.lower_is_better,
            "points": [p.to_dict() for p in self.points],
            "changes": [c.to_dict() for c in self.changes],
        }


def series_key(sample: dict[str, Any]) -> SeriesKey:
    tags = {
        k: v
        for k, v in (sample.get("tags") or {}).items()
        if k not in LAUNCH_TAGS and k not in HISTORY_TAGS
    }
    return (
        sample["benchmark"],
        sample["metric"],
        sample["unit"],
        canonical(tags),
        canonical(identity(sample.get("params") or {})),
    )


def centre(per_launch: dict[Any, list[float]]) -> tuple[float, float | None, float | None, int]:
    """(median, CI low, CI high, n) of all raw values of a cell: the `median` and CI of
    cells.summarize_cell (stats.summarize with the same order-statistic ranks), without
    the rest of the summary, which costs 30 times more and history needs for thousands
    of cells."""
    ordered = sorted(v for vs in per_launch.values() for v in vs)
    n = len(ordered)
    ranks = median_ci_ranks(n)
    low = high = None
    if ranks is not None:
        low, high = float(ordered[ranks[0] - 1]), float(ordered[ranks[1] - 1])
    return _median(ordered, presorted=True), low, high, n


def _median(values: Sequence[float], presorted: bool = False) -> float:
    """numpy.median's value (the middle one, or the mean (a + b) / 2 of the two middle
    ones, the same float operation), at a tenth of its cost on the short lists of one
    launch: history takes tens of thousands of them."""
    ordered = values if presorted else sorted(values)
    n = len(ordered)
    middle = n // 2
    if n % 2:
        return float(ordered[middle])
    return float((ordered[middle - 1] + ordered[middle]) / 2)


def _lower_is_better(metric: str, unit: str) -> bool:
    """As `compare` decides it (report/compare.py): units first, then the metric's name."""
    try:
        return lower_is_better(unit)
    except ValueError:
        return metric in ("latency", "time")


def build_series(samples: Iterable[dict[str, Any]], runs: Sequence[dict[str, Any]]) -> list[Series]:
    """Series from samples that carry `run_id` (Store.samples_of_runs); `runs` in the
    order of the history (id, started, label each). Runs without the cell are skipped
    in that series."""
    values: dict[SeriesKey, dict[int, dict[Any, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    software: dict[SeriesKey, dict[int, dict[str, Any]]] = defaultdict(dict)
    for s in samples:
        key = series_key(s)
        values[key][s["run_id"]][s["launch_id"]].extend(float(v) for v in s["values"])
        tags = s.get("tags") or {}
        software[key].setdefault(s["run_id"], {k: tags[k] for k in HISTORY_TAGS if k in tags})
    out = []
    for key, by_run in values.items():
        bench, metric, unit, config, params = key
        points = []
        for run in runs:
            per_launch = by_run.get(run["id"])
            if not per_launch:
                continue
            median, ci_low, ci_high, n = centre(per_launch)
            points.append(
                Point(
                    run["id"],
                    run.get("started") or "",
                    run.get("label") or "",
                    median,
                    ci_low,
                    ci_high,
                    len(per_launch),
                    n,
                    software[key].get(run["id"], {}),
                    dict(per_launch),
                    [_median(v) for v in per_launch.values() if v],
                )
            )
        out.append(
            Series(
                bench,
                metric,
                unit,
                json.loads(config),
                json.loads(params),
                _lower_is_better(metric, unit),
                points,
            )
        )
    out.sort(key=_series_order)
    return out


def _series_order(s: Series) -> tuple:
    size = s.params.get("bytes")
    return (s.benchmark, s.metric, canonical(s.config), size if size is not None else -1)


def _separated(ma: Sequence[float], mb: Sequence[float]) -> bool:
    """False when compare_cells must answer "same" because the launch medians of the two
    sides overlap (section 7.3a, unpaired). A cheap test that skips the Mann-Whitney
    test where it could not change the answer; exactly compare_cells' own condition."""
    if len(ma) < 2 and len(mb) < 2:
        return True  # the pooled verdict stands: compare_cells decides
    return not (max(mb) >= min(ma) and min(mb) <= max(ma))


def compare_level(
    level: Sequence[Point], point: Point, threshold: float, lower: bool
) -> Comparison | None:
    """The run against the level before it (compare_cells), or None when the launch
    medians overlap (compare_cells would say "same")."""
    if not _separated([m for p in level for m in p.launch_medians], point.launch_medians):
        return None
    before: dict[Any, list[float]] = {}
    for p in level:
        for launch, vs in p.per_launch.items():
            before[(p.run_id, launch)] = vs
    after = {(point.run_id, k): v for k, v in point.per_launch.items()}
    return compare_cells(before, after, threshold, lower_is_better=lower)


def detect_changes(
    series: Series, threshold: float = THRESHOLD, window: int = WINDOW
) -> list[Change]:
    """The runs where a new level starts (module doc); also stored in series.changes."""
    changes: list[Change] = []
    level: list[Point] = []
    level_software: dict[str, Any] = {}
    for index, point in enumerate(series.points):
        recent = level[-window:]
        result = compare_level(recent, point, threshold, series.lower_is_better) if recent else None
        if result is not None and result.verdict != "same":
            change = Change(
                point.run_id,
                point.started,
                point.label,
                index,
                [p.run_id for p in recent],
                result.median_a,
                result.median_b,
                result.ratio,
                result.p_value,
                result.shift,
                result.verdict,
                level_software,
                point.software,
            )
            if changes and changes[-1].verdict != change.verdict:
                previous = changes[-1]
                if abs(change.median_after / previous.median_before - 1) <= threshold:
                    change.back_to_before = previous.run_id
            changes.append(change)
            level = [point]
            level_software = point.software
            continue
        if not level:
            level_software = point.software
        level.append(point)
    series.changes = changes
    return changes


def key_sizes(series: Sequence[Series]) -> set[tuple]:
    """Per (benchmark, metric, configuration): the smallest non-zero (0 B is a special
    case of every protocol), a middle and the largest message size, the sizes the history table and figures show (all changes are still
    detected and listed at every size). Series without a size are all key."""
    sizes: dict[tuple, list[int]] = defaultdict(list)
    for s in series:
        if isinstance(s.params.get("bytes"), (int, float)):
            sizes[(s.benchmark, s.metric, canonical(s.config))].append(int(s.params["bytes"]))
    keys: set[tuple] = set()
    for group, found in sizes.items():
        found = sorted(set(found))
        positive = [x for x in found if x > 0] or found
        middle = positive[len(positive) // 2]
        keys |= {(*group, x) for x in (positive[0], middle, found[-1])}
    return keys


def is_key(series: Series, keys: set[tuple]) -> bool:
    size = series.params.get("bytes")
    if not isinstance(size, (int, float)):
        return True
    return (series.benchmark, series.metric, canonical(series.config), int(size)) in keys


@dataclass
class History:
    runs: list[dict[str, Any]]  # id, started, label, suite, status
    series: list[Series]
    threshold: float
    window: int = WINDOW

    @property
    def changes(self) -> list[tuple[Series, Change]]:
        found = [(s, c) for s in self.series for c in s.changes]
        return sorted(found, key=lambda sc: (sc[1].started, sc[1].run_id, _series_order(sc[0])))

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "window": self.window,
            "runs": self.runs,
            "series": [s.to_dict() for s in self.series],
            "changes": [
                dict(
                    c.to_dict(),
                    benchmark=s.benchmark,
                    metric=s.metric,
                    unit=s.unit,
                    config=s.config,
                    params=s.params,
                )
                for s, c in self.changes
            ],
        }


def history(
    samples: Iterable[dict[str, Any]],
    runs: Sequence[dict[str, Any]],
    threshold: float = THRESHOLD,
    window: int = WINDOW,
) -> History:
    """Series of every cell in `samples` over `runs`, with their changes detected."""
    if not 0 < threshold < 1 or math.isnan(threshold):
        raise ValueError(f"threshold {threshold}: give a fraction such as 0.05 (5 %)")
    found = build_series(samples, runs)
    for s in found:
        detect_changes(s, threshold, window)
    light = [
        {k: r.get(k) for k in ("id", "started", "label", "suite", "status", "host")} for r in runs
    ]
    return History(light, found, threshold, window)
