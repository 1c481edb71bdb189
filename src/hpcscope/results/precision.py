"""Measuring to a precision: how precise a cell is, and why it stopped (issue 29).

A cell's precision is the relative half-width of the 95 % interval of the number it is
quoted by, the median over launches of each launch's median (`quoted_interval`; issue 47:
the samples' interval alone held another run's median in 64 % of cells here):

  - 2-5 launches: centre +- t(0.975, n-1) s / sqrt(n) over the launch medians (a
              t-interval: with so few launches no nonparametric interval exists, and one
              that ignored them held far less than 95 %), at least the samples' half-width;
  - 6+ launches: the nonparametric 95 % CI of the launch medians (stats.summarize), at
              least the samples' half-width;
  - 1 launch:  the CI of its samples (the only interval there is; it cannot see what
              another launch would measure: `level` says "samples").

`level` says which part is the wider: "samples" (more blocks in a launch would narrow
it) or "launches" (only more launches would).

The benchmark program stops adding blocks at a size when the first level is met or the
size's share of the budget is spent (bench/common/precision.h); the runner adds launches
to the cells that still miss (suites/p2p_adaptive.py). Each cell says which way it ended:

  met            the half-width is at most the target
  budget         the run's (or the size's) time ran out first
  launch spread  the launches differ by more than the target and the launches allowed
                 (or the budget) ended before their median was as precise as asked
  cap            the program's cap ended the blocks (p2p: 20x the fixed count) or
                 the repetitions (coll, lanes: --repetitions) first
  CPU pair moved the launches split with their CPU pair's cache-line time
                 (results/cpu_pair.py): they measured two placements, and no number of
                 launches makes their median as precise as asked

Costs: one summarize per cell and one per launch median set (numpy sort), no I/O.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import t as t_dist

from hpcscope.formatting import format_bytes
from hpcscope.results.cpu_pair import pair_moves
from hpcscope.results.rma_tests import is_rma
from hpcscope.results.rma_tests import label as rma_label
from hpcscope.results.stats import min_n_for_ci, summarize

PRECISION_TEXT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$")
BUDGET_TEXT = re.compile(r"^\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+(?:\.\d+)?)s?)?\s*$")


def parse_precision(text: str) -> float:
    """'1%' or '0.01' -> 0.01; '0' -> 0 (fixed counts). ValueError names the fix."""
    match = PRECISION_TEXT.match(text or "")
    value = float(match.group(1)) / (100 if match.group(2) else 1) if match else -1.0
    if not match or not 0 <= value < 1:
        raise ValueError(
            f"--precision {text!r}: give the 95 % CI half-width as a percentage or a "
            "fraction below 1, e.g. 1% or 0.01 (0: the fixed counts)"
        )
    return value


def parse_budget(text: str) -> float:
    """'10m', '90s', '90', '1h30m', '2m30s' -> seconds (> 0)."""
    match = BUDGET_TEXT.match(text or "")
    seconds = 0.0
    if match and any(match.groups()):
        h, m, s = match.groups()
        seconds = int(h or 0) * 3600 + int(m or 0) * 60 + float(s or 0)
    if seconds <= 0:
        raise ValueError(f"--budget {text!r}: give the run's wall time, e.g. 90s, 10m or 1h30m")
    return seconds


def half_width(values: list[float]) -> float | None:
    """Relative half-width of the 95 % CI of the median; None without a CI (n < 6) or
    with a median of 0."""
    s = summarize(values)
    if s.ci_low is None or s.ci_high is None or s.median == 0:
        return None
    return max(s.median - s.ci_low, s.ci_high - s.median) / abs(s.median)


@dataclass
class QuotedInterval:
    """The 95 % interval of a cell's quoted number (module doc); bounds absolute."""

    centre: float  # the median over launches of each launch's median
    low: float | None
    high: float | None
    half_width: float | None  # relative: the farther bound's distance / |centre|
    level: str  # "samples" or "launches": which part is the wider
    launches: int
    method: str  # "t over 3 launch medians", "order statistics of 8 launch medians", ...


def _t_half(medians: list[float]) -> float:
    """Absolute half-width of the 95 % t-interval over launch medians (n >= 2)."""
    n = len(medians)
    return float(t_dist.ppf(0.975, n - 1) * np.std(medians, ddof=1) / math.sqrt(n))


def quoted_interval(per_launch: dict[Any, list[float]]) -> QuotedInterval:
    """The interval the precision claim and the export's ci_low/ci_high refer to."""
    groups = [list(v) for v in per_launch.values() if v]
    medians = [float(np.median(g)) for g in groups]
    centre = float(np.median(medians))
    pooled = summarize([x for g in groups for x in g])
    samples: tuple[float, float] | None = None
    if pooled.ci_low is not None and pooled.ci_high is not None:
        wide = max(pooled.median - pooled.ci_low, pooled.ci_high - pooled.median)
        samples = (centre - wide, centre + wide)
    between: tuple[float, float] | None = None
    n = len(medians)
    if n >= min_n_for_ci():
        across = summarize(medians)
        assert across.ci_low is not None and across.ci_high is not None
        between, method = (across.ci_low, across.ci_high), f"order statistics of {n} launch medians"
    elif n >= 2:
        half = _t_half(medians)
        between, method = (centre - half, centre + half), f"t over {n} launch medians"
    else:
        method = "samples of one launch"
    parts = [b for b in (samples, between) if b is not None]
    if not parts:
        return QuotedInterval(centre, None, None, None, "samples", n, method + ": too few")
    low, high = min(b[0] for b in parts), max(b[1] for b in parts)
    half_width = max(centre - low, high - centre) / abs(centre) if centre else None
    level = (
        "launches"
        if between is not None
        and (samples is None or (between[1] - between[0] > samples[1] - samples[0]))
        else "samples"
    )
    return QuotedInterval(centre, low, high, half_width, level, n, method)


@dataclass
class CellPrecision:
    half_width: float | None  # of the quoted interval; None: not computable yet
    level: str  # "samples" or "launches": which part of the interval is the wider
    launches: int
    spread: float | None  # relative range of the launch medians (None: one launch)
    met: bool

    def text(self) -> str:
        """'±1.3% (samples)'; '-' where there is no interval yet."""
        shown = "-" if self.half_width is None else f"{self.half_width:.1%}"
        return f"±{shown} ({self.level})"


def cell_precision(per_launch: dict[Any, list[float]], target: float) -> CellPrecision:
    """The precision of one cell ({launch: raw values}) against `target` (module doc)."""
    found = quoted_interval(per_launch)
    medians = [float(np.median(v)) for v in per_launch.values() if v]
    centre = found.centre
    spread = (max(medians) - min(medians)) / abs(centre) if len(medians) > 1 and centre else None
    half = found.half_width
    met = half is not None and half <= target
    return CellPrecision(half, found.level, found.launches, spread, met)


def stop_reason(
    cell: CellPrecision, in_launch_stops: list[str], run_stop: str | None, moved: bool = False
) -> str:
    """Why a cell ended where it did (module doc): met, CPU pair moved, budget, launch
    spread or cap. `in_launch_stops`: the program's stop per launch at this size;
    `run_stop`: why the runner stopped adding launches (met, budget, launches); `moved`:
    the cell's launches split with their CPU pair (results/cpu_pair.py)."""
    if cell.met:
        return "met"
    if moved:
        return CPU_PAIR_MOVED
    if cell.level == "launches":
        return "budget" if run_stop == "budget" else "launch spread"
    counts = Counter(s for s in in_launch_stops if s in ("budget", "cap"))
    if run_stop == "budget" or not counts:
        return "budget" if run_stop == "budget" or not in_launch_stops else "launch spread"
    return counts.most_common(1)[0][0]


CPU_PAIR_MOVED = "CPU pair moved"

# The legend of the tables of missed cells (show, report).
MISSED_LEGEND = (
    "achieved: half-width of the 95% interval of the quoted median (over launches: t "
    "over 2-5 launch medians, order statistics from 6; '-': too few samples). why: budget (the run's or the measurement's time ran out), "
    "launch spread (launches differ by more than the target), CPU pair moved (the launches "
    "split with the time one cache line takes between the ranks' CPUs: two placements), "
    "cap (the most blocks or repetitions allowed: p2p and rma 20x their fixed count, coll "
    "and lanes --repetitions, nbc --iterations, node 50)."
)

STOPS = ("met", "budget", "cap")  # what the programs write (p2p.c, rma.c, coll_repeat.h)


@dataclass
class CellResult:
    key: tuple  # results.cells.CellKey
    precision: CellPrecision
    reason: str  # stop_reason


def target_of(notes: list[dict]) -> float | None:
    """The run's precision target, from the note its plan left (suites/p2p_adaptive)."""
    for note in notes:
        data = note.get("data") if isinstance(note, dict) else None
        value = data.get("target") if isinstance(data, dict) else None
        if note.get("kind") == "precision" and isinstance(value, (int, float)) and 0 < value < 1:
            return float(value)
    return None


def run_stop(notes: list[dict]) -> str | None:
    """Why the runner stopped adding launches (met, budget, launches), from its note."""
    for note in notes:
        data = note.get("data") if isinstance(note, dict) else None
        if isinstance(data, dict) and data.get("precision_stop") in ("met", "budget", "launches"):
            return str(data["precision_stop"])
    return None


def judge(
    run: dict, samples: list[dict], summaries: list[dict], launches: list[dict]
) -> list[CellResult]:
    """Every cell measured to the run's precision target, with its precision and why it
    stopped; [] for a run without a target. A cell counts when at least one of its
    launches wrote a stop for it (OSU's own programs and fixed-count launches do not)."""
    from hpcscope.results.cells import canonical, config_tags, group_cells, identity

    notes = run.get("notes") or []
    target = target_of(notes)
    if target is None:
        return []
    tags_of = {l["id"]: config_tags(l.get("tags") or {}) for l in launches}
    stops: dict[tuple[Any, str, str], list[str]] = {}
    for s in summaries:
        found = s.get("precision")
        params = s.get("params")
        if not isinstance(found, dict) or found.get("stop") not in STOPS:
            continue
        if not isinstance(params, dict) or s.get("launch_id") not in tags_of:
            continue
        where = (s.get("metric"), canonical(tags_of[s["launch_id"]]), canonical(identity(params)))
        stops.setdefault(where, []).append(str(found["stop"]))
    stop = run_stop(notes)
    moved = {key for move in pair_moves(samples, launches) for key in move.keys}
    out = []
    for key, per_launch in group_cells(samples).items():
        own = stops.get((key[1], key[3], key[4]))
        if own is None:
            continue
        cell = cell_precision(per_launch, target)
        out.append(CellResult(key, cell, stop_reason(cell, own, stop, key in moved)))
    return out


@dataclass
class MissedRow:
    """Cells of one test and configuration that missed the target for one reason."""

    metric: str
    what: str  # the p2p metric, "bcast lane" (coll) or "lane k=2" (lanes)
    configuration: str  # tag values, e.g. "openmpi core", "openmpi alternate ranks=2"
    sizes: list[int]
    achieved: tuple[float, float] | None  # lowest and highest half-width (None: none had one)
    reason: str


# The params that name a node point (bench/node), in this order; its threads come last.
NODE_WHAT = ("workload", "op", "precision", "pattern", "protocol", "load")


def _what(metric: str, params: dict) -> str:
    """What a cell measures, beside its size: the p2p metric, a collective and its
    algorithm, a lane benchmark and its lane count, or a node point (its workload and
    kind, block and threads: 'disk write seq 1M threads=1')."""
    if "workload" in params:
        words = [str(params[k]) for k in NODE_WHAT if isinstance(params.get(k), str)]
        if isinstance(params.get("block"), int):
            words.append(format_bytes(params["block"]))
        for key in ("threads", "streams"):
            if isinstance(params.get(key), int):
                words.append(f"{key}={params[key]}")
        return " ".join(words)
    if is_rma(params):  # the rma suite's tests share p2p's metrics
        return rma_label(params)
    if "family" in params:  # nbc: its collective and loop (pure_time, overall_time, time)
        return f"{params['collective']} {metric}"
    if "collective" in params:
        return f"{params['collective']} {params.get('algorithm', '')}".strip()
    if "pattern" in params:
        return f"{params['pattern']} k={params.get('lanes')}"
    return metric


def _label(tags: dict) -> str:
    """A configuration in words: its text tags, its numbers as key=value (a flag such
    as emulated_nodes is said elsewhere; the MPI version is in the run's header)."""
    out = []
    for key, value in tags.items():
        if key == "mpi_version" or isinstance(value, bool) or value is None:
            continue
        out.append(str(value) if isinstance(value, str) else f"{key}={value}")
    return " ".join(out)


def missed_rows(results: list[CellResult]) -> list[MissedRow]:
    """The cells that missed, one row per (what, configuration, reason): what `show`
    and the report list instead of a warning per cell."""
    rows: dict[tuple[str, str, str], MissedRow] = {}
    for r in results:
        if r.precision.met:
            continue
        _, metric, _, tags_json, params_json = r.key
        params = json.loads(params_json)
        what, label = _what(metric, params), _label(json.loads(tags_json))
        row = rows.setdefault(
            (what, label, r.reason), MissedRow(metric, what, label, [], None, r.reason)
        )
        size = params.get("bytes")
        if isinstance(size, int):
            row.sizes.append(size)
        half = r.precision.half_width
        if half is not None:
            low, high = row.achieved or (half, half)
            row.achieved = (min(low, half), max(high, half))
    for row in rows.values():
        row.sizes.sort()
    return list(rows.values())
