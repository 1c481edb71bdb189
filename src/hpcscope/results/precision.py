"""Measuring to a precision: how precise a cell is, and why it stopped (issue 29).

A cell's precision is the relative half-width of the 95 % confidence interval of its
median (stats.summarize, nonparametric), taken at the level that matters:

  - samples:  while the launches agree (one launch, or launch medians within the
              target of each other, or their CIs overlapping: no difference their own
              samples do not explain), the CI of all the cell's samples pooled;
  - launches: once they differ by more than the target and more than their samples
              explain, the CI of the launch medians, which exists from 6 launches on
              (min_n_for_ci); with fewer the cell has no precision yet.

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
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcscope.formatting import format_bytes
from hpcscope.results.cpu_pair import pair_moves
from hpcscope.results.stats import summarize

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
class CellPrecision:
    half_width: float | None  # at `level`; None: not computable yet
    level: str  # "samples" or "launches"
    launches: int
    spread: float | None  # relative range of the launch medians (None: one launch)
    met: bool

    def text(self) -> str:
        """'±1.3% (samples)'; '-' where there is no interval yet."""
        shown = "-" if self.half_width is None else f"{self.half_width:.1%}"
        return f"±{shown} ({self.level})"


def launches_differ(groups: list[list[float]], spread: float | None, target: float) -> bool:
    """Do the launches differ, by more than the target and more than their own samples
    explain (their medians' CIs do not all overlap, as stats.pooled warns)? Then the
    launch medians are the samples that count."""
    if spread is None or spread <= target:
        return False
    cis = [summarize(g) for g in groups]
    bounds = [(c.ci_low, c.ci_high) for c in cis if c.ci_low is not None and c.ci_high is not None]
    if len(bounds) < 2:
        return True  # too few samples in a launch to tell: the launch level decides
    return max(low for low, _ in bounds) > min(high for _, high in bounds)


def cell_precision(per_launch: dict[Any, list[float]], target: float) -> CellPrecision:
    """The precision of one cell ({launch: raw values}) against `target` (module doc)."""
    groups = [list(v) for v in per_launch.values() if v]
    medians = [float(np.median(g)) for g in groups]
    centre = float(np.median(medians))
    spread = (max(medians) - min(medians)) / abs(centre) if len(groups) > 1 and centre else None
    if launches_differ(groups, spread, target):
        level, half = "launches", half_width(medians)
    else:
        level, half = "samples", half_width([x for g in groups for x in g])
    met = half is not None and half <= target
    return CellPrecision(half, level, len(groups), spread, met)


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
    "achieved: 95% CI half-width of the median ('-': no interval yet, under 6 launches "
    "where launches differ). why: budget (the run's or the measurement's time ran out), "
    "launch spread (launches differ by more than the target), CPU pair moved (the launches "
    "split with the time one cache line takes between the ranks' CPUs: two placements), "
    "cap (the most blocks or repetitions allowed: p2p 20x its fixed count, coll and lanes "
    "--repetitions, node 50)."
)

STOPS = ("met", "budget", "cap")  # what the programs write (p2p.c, coll_repeat.h)


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


def _run_stop(notes: list[dict]) -> str | None:
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
    run_stop = _run_stop(notes)
    moved = {key for move in pair_moves(samples, launches) for key in move.keys}
    out = []
    for key, per_launch in group_cells(samples).items():
        own = stops.get((key[1], key[3], key[4]))
        if own is None:
            continue
        cell = cell_precision(per_launch, target)
        out.append(CellResult(key, cell, stop_reason(cell, own, run_stop, key in moved)))
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
