"""Point-to-point curves: one per (MPI, placement), the centre of each message size and
its spread over launches. The one definition used by the figures, the report's tables,
its summary and `show`.

The centre is the median over launches of each launch's median; low and high are the
smallest and largest launch median; ci_low/ci_high are the nonparametric 95 % CI of the
median of all samples pooled (results/stats.py: the figures' "samples" interval);
q_low/q_high and half_width are the 95 % interval of the centre itself, over launches
(results/precision.quoted_interval): the interval a star and "unstable" are judged by.

A point is graded (issue 47), not stamped: `grade` gives None where its half-width is
within the precision asked (the run's target; stats.CV_LIMIT, 5 %, for a run of fixed
counts), else one class in words:
  launches bimodal: CPU pair moved in launch N   (results/cpu_pair.py found the move)
  launches bimodal; other processes used ...     (the launch medians form two groups
                                                  BIMODAL_GAP apart; no recorded move;
                                                  the run's `load` notes show other
                                                  processes using OTHER_CORES or more
                                                  beside some of its launches; else
                                                  "not explained" and what to check)
  budget ran out before the target               (the run's budget ended its launches)
  noise above the target                         (none of those; the other load
                                                  beside its launches is named where
                                                  it was OTHER_CORES or more)
  one launch: no interval over launches          (whatever its samples' interval: one
                                                  launch's held another run's median in
                                                  59 % of cells on the 2-vCPU guest)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from hpcscope.results import precision, stats
from hpcscope.results.cells import NAMED_P2P_TESTS, canonical, config_tags
from hpcscope.results.cpu_pair import pair_moves
from hpcscope.results.precision import quoted_interval


def curve_label(sample: dict) -> str:
    """'mpi placement', marked when the numbers are OSU's loop (--protocol osu) or the
    user's own OSU programs (--osu-dir, tag tool=osu), so they sit beside hpcscope's."""
    tags = sample["tags"]
    mark = " [OSU build]" if tags.get("tool") == "osu" else ""
    mark += " [--protocol osu]" if tags.get("protocol") == "osu" else ""
    return f"{tags.get('mpi', '?')} {tags.get('placement', '?')}{mark}"


SMALL_BYTES = 8  # OSU users quote latency at a few bytes; 8 B is one double


def small_size(sizes) -> int | None:
    """The size a latency is quoted at: SMALL_BYTES where measured, else the smallest
    measured size above 0; None when there is none."""
    positive = sorted(s for s in sizes if s > 0)
    return SMALL_BYTES if SMALL_BYTES in positive else (positive[0] if positive else None)


def what(sample: dict) -> str:
    """The curve family a sample belongs to: its metric, or for IMB-MPI1's patterns
    (pingping, sendrecv, exchange: all metric `time`) and OSU's persistent, threaded and
    forked tests (the four's metrics) its test, so they never pool."""
    test = (sample.get("params") or {}).get("test")
    return str(test) if test in NAMED_P2P_TESTS else sample["metric"]


def curves(samples: list[dict], metric: str) -> dict[str, dict[int, dict]]:
    """{label: {bytes: {"center", "low", "high", "ci_low", "ci_high", "q_low", "q_high",
    "half_width", "interval", "launches", "launch_medians"}}} (module doc; launch_medians:
    {launch id: median}). A sample without a message size (an imported file may lack
    one) is no point of a curve."""
    per_launch: dict[str, dict[int, dict]] = defaultdict(lambda: defaultdict(dict))
    for s in samples:
        if what(s) != metric or "bytes" not in (s["params"] or {}):
            continue
        label = curve_label(s)
        size = int(s["params"]["bytes"])
        per_launch[label][size].setdefault(s.get("launch_id"), []).extend(s["values"])
    out: dict[str, dict[int, dict]] = {}
    for label, by_size in per_launch.items():
        out[label] = {}
        for size, groups in sorted(by_size.items()):
            medians = {k: float(np.median(v)) for k, v in groups.items() if v}
            summary = stats.summarize([x for v in groups.values() for x in v])
            quoted = quoted_interval(groups)
            out[label][size] = {
                "center": quoted.centre,
                "low": min(medians.values()),
                "high": max(medians.values()),
                "ci_low": summary.ci_low,
                "ci_high": summary.ci_high,
                "q_low": quoted.low,
                "q_high": quoted.high,
                "half_width": quoted.half_width,
                "interval": quoted.method,
                "launches": len(medians),
                "launch_medians": medians,
            }
    return out


BIMODAL_GAP = 0.10  # launch medians in two groups this far apart (of the centre): bimodal
BIMODAL_RATIO = 3.0  # ... with the gap this many times the spread inside the groups
BUDGET = "budget ran out before the target"
NOISE = "noise above the target"
BIMODAL_UNEXPLAINED = (
    "launches bimodal (not explained: no CPU-pair move and no other load recorded; check "
    "the launches' placement and the host)"
)
# Other processes' CPU use beside a launch (its `load` note) that is named as the likely
# cause: half a core takes a rank's core for half the time on a 2-vCPU machine.
OTHER_CORES = 0.5
ONE_LAUNCH = "one launch: no interval over launches (--repeat 3 or more)"


@dataclass
class Grading:
    """What grading a run's points needs beyond the points: the precision asked, whether
    the budget ended the run, and the CPU-pair moves {(label, metric, bytes): words}."""

    target: float
    asked: bool  # a run measured to a precision (else the target is stats.CV_LIMIT)
    budget_ended: bool
    moved: dict[tuple[str, str, int], str] = field(default_factory=dict)
    others: dict[str, list[float]] = field(default_factory=dict)  # label: cores per launch

    def target_text(self) -> str:
        return f"{self.target:.0%}" + ("" if self.asked else " (no precision asked: fixed counts)")


def grading(run: dict | None, samples: list[dict], launches: list[dict] | None) -> Grading:
    """The run's target and budget stop (its notes), and the moves of its launches."""
    notes = (run or {}).get("notes") or []
    target = precision.target_of(notes)
    found = Grading(target or stats.CV_LIMIT, target is not None, False)
    found.budget_ended = target is not None and precision.run_stop(notes) == "budget"
    order = _launch_order(launches or [])
    for move in pair_moves(samples, launches or []):
        label = curve_label({"tags": move.tags})
        slow = _launches_text([order.get(k, k) for k in move.slow_ids])
        fast = _launches_text([order.get(k, k) for k in move.fast_ids])
        words = (
            f"launches bimodal: CPU pair moved, cache line {_ns(move.slow)} ns in {slow}, "
            f"{_ns(move.fast)} ns in {fast}"
        )
        for metric, size, _, _ in move.following:
            found.moved[(label, metric, size)] = words
    found.others = _other_load(notes, launches or [])
    return found


def _other_load(notes: list[dict], launches: list[dict]) -> dict[str, list[float]]:
    """{curve label: other processes' cores during each of its launches}, from the run's
    `load` notes (machine/host_load.py: one per local job, named like its launch)."""
    label_of = {l.get("name"): curve_label({"tags": l.get("tags") or {}}) for l in launches}
    out: dict[str, list[float]] = {}
    for note in notes:
        data = note.get("data") if isinstance(note, dict) else None
        if note.get("kind") != "load" or not isinstance(data, dict):
            continue
        cores = data.get("others_cores")
        label = label_of.get(data.get("job"))
        if label is not None and isinstance(cores, (int, float)):
            out.setdefault(label, []).append(float(cores))
    return out


def _launch_order(launches: list[dict]) -> dict:
    """{launch id: its number within its configuration, 1-based, in launch order}."""
    seen: dict[str, int] = {}
    out = {}
    for launch in sorted(launches, key=lambda l: l.get("id", 0)):
        key = canonical(config_tags(launch.get("tags") or {}))
        seen[key] = seen.get(key, 0) + 1
        out[launch.get("id")] = seen[key]
    return out


def _launches_text(numbers: list) -> str:
    ordered = sorted(numbers)
    return f"launch{'es' if len(ordered) > 1 else ''} {', '.join(str(n) for n in ordered)}"


def _ns(values: list[float]) -> str:
    low, high = round(min(values)), round(max(values))
    return f"{low}" if low == high else f"{low}-{high}"


def bimodal(point: dict) -> bool:
    """The launch medians form two groups: the largest gap between neighbours is more
    than BIMODAL_GAP of the centre and BIMODAL_RATIO times the ranges inside the groups
    (three launches at most a few per cent apart are noise, not two modes)."""
    medians = sorted(point.get("launch_medians", {}).values())
    centre = point["center"]
    if len(medians) < 3 or not centre:
        return False
    gaps = [b - a for a, b in zip(medians, medians[1:])]
    cut = int(np.argmax(gaps))
    inside = (medians[cut] - medians[0]) + (medians[-1] - medians[cut + 1])
    return gaps[cut] > BIMODAL_GAP * abs(centre) and gaps[cut] > BIMODAL_RATIO * inside


def grade(point: dict, label: str, metric: str, size: int, how: Grading) -> str | None:
    """None where the point's own interval is within the target; else its class (module
    doc) in words."""
    half = point.get("half_width")
    if point.get("launches", 0) == 1:
        return ONE_LAUNCH  # its samples' interval held another run's median in 59 % here
    if half is not None and half <= how.target:
        return None
    moved = how.moved.get((label, metric, size))
    if moved:
        return moved
    others = [c for c in how.others.get(label, []) if c >= OTHER_CORES]
    beside = (
        f"other processes used {_span(others)} cores during {len(others)} of its launches"
        if others
        else ""
    )
    if bimodal(point):
        return f"launches bimodal; {beside}" if beside else BIMODAL_UNEXPLAINED
    if half is None:
        return "no interval: too few samples"
    cls = BUDGET if how.budget_ended else NOISE
    return f"{cls}; {beside}" if beside else cls


def _span(values: list[float]) -> str:
    low, high = f"{min(values):.1f}", f"{max(values):.1f}"
    return low if low == high else f"{low}-{high}"


def grade_text(point: dict, cls: str) -> str:
    """'±7% over 3 launches (launches bimodal: CPU pair moved, ...)'."""
    half = point.get("half_width")
    n = point.get("launches", 0)
    over = f" over {n} launch{'es' if n != 1 else ''}"
    return f"±{'-' if half is None else format(half, '.0%')}{over} ({cls})"


def unstable_point(point: dict, target: float = stats.CV_LIMIT) -> bool:
    """A point whose own 95 % interval (half_width) is wider than `target` (or missing):
    the star of `show` and the summary's "unstable"."""
    half = point.get("half_width")
    return half is None or half > target
