"""What goes to the top of the report: at most MAX_HIGHLIGHTS observations, ranked by what
they change for the reader, and the grouping that keeps a section's observations short.

Ranking (first tier first; inside a tier, the larger effect first):

0. results that cannot be trusted as labelled: a placement that was not where it was
   asked to be, launches that failed, launches split by the host moving the ranks' CPUs
   (analysis/cpu_pair.py; it replaces the same curves' "launches disagree" line, whose
   advice, more launches, would not help);
1. guideline findings (analysis/verdicts.findings: one per MPI, collective and
   comparison, Holm-corrected; violated before suggested), by the largest factor, at most
   GUIDELINES_ALONE, the rest as one line;
2. placement inversions, two placements that ran on the same CPUs yet differ
   (analysis/same_cpus.py), and numbers too unstable to use (launch medians spread or a
   CV of more than UNUSABLE_SPREAD; the 5 % flag alone stays in the section; more than
   UNSTABLE_ALONE such curves as one line);
3. node rates far below their reference tool (under FAR_BELOW of it) and paper-vs-
   simulation disagreements;
4. rates more than ABOVE_PEAK above their theoretical peak (one line for all; a rate
   under its peak is in the node table, since the peak is the whole node's and most rows
   use fewer threads);
5. curves whose deepest bandwidth dip is deeper than DIP_HIGHLIGHT, one line per cause
   of that dip (the same recorded protocol threshold, or the same unexplained size step)
   naming the curves and sizes, and placement ratios above 2x.

Everything else (fits, plateaus, flat regions, cache steps, dips a quiet machine also
shows) stays in its section's Observations. Pure functions over Observation lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hpcscope.analysis import modes, node_table
from hpcscope.analysis.observations import Observation
from hpcscope.formatting import format_bytes, format_number

MAX_HIGHLIGHTS = 12
UNUSABLE_SPREAD = 0.20  # launch medians or values this far apart: the number is not one
UNSTABLE_ALONE = 2  # more curves with launches that disagree read as one highlight
GUIDELINES_ALONE = 3  # more guideline findings read as one highlight
FAR_BELOW = 0.80  # a rate under 80 % of its reference tool's
# A best-of-repetitions rate against a peak at the median measured clock: the clock's own
# samples spread by 2-3 % around it (3.97-4.22 GHz on a Zen 5 guest, where FP32 on one
# thread read 101 %), so up to this much above the peak is that spread, not a wrong formula.
ABOVE_PEAK = 1.03
DIP_HIGHLIGHT = 0.20  # a quiet machine shows dips of 8-20 % between two sizes


@dataclass
class Highlight:
    text: str
    anchor: str  # the section it came from (#id)
    severity: str
    tier: int
    score: float


def group_dips(found: Sequence[Observation]) -> list[Observation]:
    """Several bandwidth dips of one curve as one observation: the deepest one's sentence
    and the others' sizes and depths ('...; 2 more dips below the neighbours' trend: 128 B
    (-18%), 2 MiB (-9%)'); a single dip keeps its own sentence."""
    by_subject: dict[str, list[Observation]] = defaultdict(list)
    for o in found:
        if o.kind == "dip":
            by_subject[o.subject].append(o)
    out: list[Observation] = []
    done: set[str] = set()
    for o in found:
        if o.kind != "dip":
            out.append(o)
            continue
        dips = by_subject[o.subject]
        if len(dips) == 1:
            out.append(o)
            continue
        if o.subject in done:
            continue
        done.add(o.subject)
        worst = max(dips, key=lambda d: d.numbers["shortfall"])
        others = ", ".join(
            f"{format_bytes(d.numbers['bytes'])} (-{d.numbers['shortfall']:.0%}"
            # a recorded protocol threshold within that dip's step (analysis/mpi_transport)
            + (f"; {d.numbers['switch']}: the protocol switch" if d.numbers.get("switch") else "")
            + ")"
            for d in dips
            if d is not worst
        )
        more = len(dips) - 1
        out.append(
            Observation(
                "dip",
                f"{worst.text.rstrip('.')}; {more} more dip{'s' if more > 1 else ''} below the "
                f"neighbours' trend: {others}.",
                {
                    **worst.numbers,
                    "count": len(dips),
                    "sizes": [d.numbers["bytes"] for d in dips],
                    # each dip's own numbers, so the highlights can group them by cause
                    "dips": [d.numbers for d in dips],
                },
                worst.severity,
                o.subject,
            )
        )
    return out


def _guidelines(items: list[tuple[Observation, str]]) -> list[Highlight]:
    """The guideline findings (verdicts.findings: already one per collective and
    comparison, with their count and factor ranges), violated ones first, then the
    largest factor; past GUIDELINES_ALONE the rest as one line that names them."""
    found = sorted(
        items,
        key=lambda x: (
            x[0].numbers.get("status") != "violated",
            -(x[0].numbers.get("speedup") or 0),
        ),
    )
    out = [
        Highlight(o.text, a, o.severity, 1, o.numbers.get("speedup") or 1.0)
        for o, a in found[:GUIDELINES_ALONE]
    ]
    rest = found[GUIDELINES_ALONE:]
    if rest:
        named = ", ".join(
            f"{o.subject} ({o.numbers.get('speedup') or 1.0:.2f}x, {o.numbers.get('status')})"
            for o, _ in rest[:3]
        )
        more = f" and {len(rest) - 3} more" if len(rest) > 3 else ""
        first, anchor = rest[0]
        out.append(
            Highlight(
                f"{len(rest)} more guideline findings: {named}{more} (see the section).",
                anchor,
                first.severity,
                1,
                first.numbers.get("speedup") or 1.0,
            )
        )
    return out


def _unstable(items: list[tuple[Observation, str]]) -> list[Highlight]:
    """Curves whose launch medians disagree by more than UNUSABLE_SPREAD somewhere: the
    median of one launch is then not the machine's number. A large CV of the pooled
    values alone (a few slow blocks) leaves the median usable and stays in the section.
    Up to UNSTABLE_ALONE curves get a line each; more read as one line, the worst first:
    on a machine whose launches do not repeat (a busy or virtual host) every curve says
    the same, and that one fact should not crowd out the rest of the top."""
    found = []
    for o, anchor in items:
        spread = o.numbers.get("max_spread") or 0
        if spread > UNUSABLE_SPREAD:
            found.append((o, anchor, spread))
    found.sort(key=lambda x: -x[2])
    advice = "repeat on a quieter machine or with more launches before using these numbers."
    if len(found) > UNSTABLE_ALONE:
        worst, anchor, spread = found[0]
        named = [
            f"{s:.0%}{' apart' if i == 0 else ''} in {o.subject}{_at(o)}"
            for i, (o, _, s) in enumerate(found[:3])
        ]
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        text = (
            f"Launches disagree in {len(found)} curves, their medians up to "
            f"{', '.join(named)}{more}: this machine's launches do not repeat; {advice}"
        )
        return [Highlight(text, anchor, worst.severity, 2, spread)]
    out = []
    for o, anchor, spread in found:
        text = (
            f"{o.subject}: launches disagree, their medians up to {spread:.0%} apart{_at(o)} "
            f"(unstable at {len(o.numbers.get('sizes') or [])} sizes in all): {advice}"
        )
        out.append(Highlight(text, anchor, o.severity, 2, spread))
    return out


def _at(o: Observation) -> str:
    at = o.numbers.get("max_spread_at")
    return f" at {format_bytes(at)}" if at is not None else ""


def _above_peak(items: list[tuple[Observation, str]]) -> list[Highlight]:
    if not items:
        return []
    worst, anchor = max(items, key=lambda x: x[0].numbers["efficiency"])
    if len(items) == 1:
        return [Highlight(worst.text, anchor, "warning", 4, worst.numbers["efficiency"])]
    names = ", ".join(o.subject for o, _ in items[:4]) + (", ..." if len(items) > 4 else "")
    return [
        Highlight(
            f"{len(items)} rates exceed their computed peak, up to "
            f"{worst.numbers['efficiency']:.0%} ({names}): the clock or FLOP/cycle in the "
            "peak's formula is below what the cores did.",
            anchor,
            "warning",
            4,
            worst.numbers["efficiency"],
        )
    ]


def _cause(dip: dict) -> tuple[str, ...]:
    """What a dip is put down to: the recorded protocol threshold within its step
    (mpi_transport, e.g. 'btl_vader_eager_limit = 4096'), or, with none recorded there,
    the size step itself (from the size before it to its own): dips of several curves at
    one step share what to check, though no record names the cause."""
    if dip.get("switch"):
        return ("switch", str(dip["switch"]))
    return ("step", str(dip.get("before_bytes")), str(dip.get("bytes")))


def _sizes(dips: Sequence[dict]) -> str:
    """'4 KiB' or '16-32 KiB': the sizes of one curve's dips of one cause."""
    sizes = sorted({d["bytes"] for d in dips})
    if len(sizes) == 1:
        return format_bytes(sizes[0])
    lo, hi = format_bytes(sizes[0]), format_bytes(sizes[-1])
    lo_n, _, lo_unit = lo.partition(" ")
    hi_n, _, hi_unit = hi.partition(" ")
    return f"{lo_n}-{hi}" if lo_unit == hi_unit else f"{lo}-{hi}"


def _percent_range(values: Sequence[float]) -> str:
    lo, hi = round(min(values) * 100), round(max(values) * 100)
    return f"{lo} %" if lo == hi else f"{lo}-{hi} %"


def _dip_line(cause: tuple[str, ...], items: list[tuple[Observation, dict]]) -> str:
    """One line for the dips of one cause on several curves, naming the curves and the
    sizes: 'Bandwidth drops 64-85 % at the protocol switch (btl_vader_eager_limit =
    4096): openmpi default and core at 4 KiB.'"""
    by_curve: dict[str, list[dict]] = defaultdict(list)
    for o, d in items:
        by_curve[o.subject or "a curve"].append(d)
    # each curve's first dip of the cause is where it steps down: a drop from the size
    # before it; a single low point between higher neighbours is a dip below their trend
    firsts = [min(dips, key=lambda d: d["bytes"]) for dips in by_curve.values()]
    if all((d.get("drop") or 0) > 0 for d in firsts):
        how = (
            f"Bandwidth drops {_percent_range([d['drop'] for d in firsts])} (from the size before)"
        )
    else:
        deepest = [max(d["shortfall"] for d in dips) for dips in by_curve.values()]
        how = f"Bandwidth falls {_percent_range(deepest)} below the neighbours' trend"
    # curves with the same sizes read together: 'openmpi default and core at 4 KiB'
    by_sizes: dict[str, list[str]] = defaultdict(list)
    for curve, dips in by_curve.items():
        by_sizes[_sizes(dips)].append(curve)
    where = "; ".join(f"{_curves(curves)} at {sizes}" for sizes, curves in by_sizes.items())
    if cause[0] == "switch":
        return f"{how} at the protocol switch ({cause[1]}): {where}."
    step = "at the same size step, not explained" if len(by_curve) > 1 else "not explained"
    return (
        f"{how} {step} (no recorded protocol threshold lies in that step; the section says "
        f"what to check): {where}."
    )


def _curves(labels: Sequence[str]) -> str:
    """'openmpi default and core' for curves of one MPI ('mpi placement' labels),
    'openmpi core and mpich core' otherwise."""
    heads = {label.split(" ", 1)[0] for label in labels}
    if len(heads) == 1 and all(" " in label for label in labels):
        head = heads.pop()
        rest = [label.split(" ", 1)[1] for label in labels]
        return f"{head} {_and(rest)}"
    return _and(labels)


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _dips(items: list[tuple[Observation, str]]) -> list[Highlight]:
    """Each curve whose deepest dip is deeper than DIP_HIGHLIGHT, one line per cause and
    section: the protocol switch on four curves is one fact, not four highlights. A
    curve is put under its deepest dip's cause, with that cause's sizes (a step's lower
    plateau included); its other dips stay in the section. A cause on one curve alone
    keeps that curve's own sentence (group_dips' line when it has several dips); on more,
    the line names the curves and sizes. A curve's dips come from numbers['dips'] where
    group_dips joined them."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[Observation, dict]]] = defaultdict(list)
    for o, anchor in items:
        # a dip right after another of the same curve (its size before is that dip's
        # size: the lower plateau of one step) shares that dip's cause
        dips = sorted(o.numbers.get("dips") or [o.numbers], key=lambda d: d["bytes"])
        causes: list[tuple[str, ...]] = []
        for i, d in enumerate(dips):
            chained = i and d.get("before_bytes") == dips[i - 1]["bytes"] and not d.get("switch")
            causes.append(causes[-1] if chained else _cause(d))
        worst = max(range(len(dips)), key=lambda i: dips[i]["shortfall"])
        if dips[worst]["shortfall"] <= DIP_HIGHLIGHT:
            continue
        cause = causes[worst]
        groups[(anchor, cause)] += [(o, d) for d, c in zip(dips, causes) if c == cause]
    out: list[Highlight] = []
    for (anchor, cause), found in groups.items():
        worst_o, worst_d = max(found, key=lambda x: x[1]["shortfall"])
        if len({id(o) for o, _ in found}) == 1:
            text = worst_o.text
        else:
            text = _dip_line(cause, found)
        out.append(Highlight(text, anchor, worst_o.severity, 5, worst_d["shortfall"]))
    return out


def rank(found: Iterable[tuple[Observation, str]], limit: int = MAX_HIGHLIGHTS) -> list[Highlight]:
    """The highlights of (observation, section anchor) pairs, best first, at most `limit`."""
    by_kind: dict[str, list[tuple[Observation, str]]] = defaultdict(list)
    for o, anchor in found:
        by_kind[o.kind].append((o, anchor))
    out: list[Highlight] = []
    for kind in ("placement", "failed", "cpu_pair"):
        out += [Highlight(o.text, a, "warning", 0, 1.0) for o, a in by_kind[kind]]
    out += _guidelines(by_kind["guideline"])
    out += [
        Highlight(o.text, a, o.severity, 2, o.numbers.get("factor", 1.0))
        for o, a in by_kind["inversion"]
    ]
    out += [
        Highlight(o.text, a, o.severity, 2, o.numbers["ratio"]) for o, a in by_kind["same_cpus"]
    ]
    moved = {o.subject for o, _ in by_kind["cpu_pair"]}
    out += _unstable(
        [(o, a) for o, a in by_kind["unstable"] if o.subject.rsplit(" ", 1)[0] not in moved]
    )
    for o, a in by_kind["reference"]:
        eff, drift = o.numbers["efficiency"], o.numbers.get("rate_change")
        if eff is not None and eff < FAR_BELOW:
            out.append(Highlight(o.text, a, "warning", 3, 1 / max(eff, 1e-9)))
        elif eff is not None and o.numbers.get("discrepancy"):  # never shown as a success
            out.append(Highlight(o.text, a, "warning", 3, eff))
        elif drift:  # the machine changed between our runs and the tool's
            out.append(Highlight(o.text, a, "warning", 3, max(drift, 1 / drift)))
    out += [
        Highlight(o.text, a, o.severity, 3, 1.0)
        for o, a in by_kind["paper"]
        if o.severity in ("notable", "warning")
    ]
    efficiency = by_kind["efficiency"]
    out += _above_peak([(o, a) for o, a in efficiency if o.numbers["efficiency"] > ABOVE_PEAK])
    out += _dips(by_kind["dip"])
    out += [
        Highlight(o.text, a, o.severity, 5, o.numbers["ratio"])
        for o, a in by_kind["ratio"]
        if o.severity == "notable"
    ]
    out.sort(key=lambda h: (h.tier, -h.score))
    return out[:limit]


def _changed_during(row: dict) -> Observation:
    """Ours right before and right after the reference tool disagree: no comparison."""
    name, tool, changed = node_table.human_name(row), row["reference_tool"], row["beside_changed"]
    factor = max(changed) / min(changed)
    return Observation(
        "reference",
        f"{name}: ours read {node_table.changed_text(row)} in its runs around {tool}'s, in "
        f"order ({factor:.2f}x): the machine's rate changed while {tool} ran, so the two are not "
        "compared. Run again; on a virtual machine the host may be moving it.",
        {"efficiency": None, "tool": tool, "rate_change": factor},
        "warning",
        name,
    )


def reference_observations(rows: Sequence[dict]) -> list[Observation]:
    """One observation per node-table row with a reference tool: our median over the
    tool's (for latencies the tool's median over ours, so above 1 is always 'ours
    better'), each side's range, and the cause of a ratio outside 0.9-1.1 (node_table.
    reference_cause); ours better beyond both ranges is a discrepancy, a warning."""
    out = []
    for r in rows:
        if r.get("beside_changed") and r.get("reference_tool"):
            out.append(_changed_during(r))
            continue
        eff = r.get("eff_vs_reference")
        if eff is None or not r.get("reference_tool") or node_table.restates_bandwidth(r):
            continue
        name, tool, unit = node_table.human_name(r), r["reference_tool"], r["unit"]
        ranges = ""
        if r.get("ours_range") and r.get("reference_range"):
            ranges = (
                f" (medians: ours {format_number(r['ours_compared_median'], unit)}, "
                f"{modes.span(r['ours_range'], unit)}; {tool} "
                f"{format_number(r['reference_median'], unit)}, "
                f"{modes.span(r['reference_range'], unit)})"
            )
        if r.get("discrepancy"):
            text = f"{name}: ours {eff:.0%} of {tool}{ranges}, beyond both ranges."
        else:
            text = f"{name} reaches {eff:.0%} of {tool} measured beside it{ranges}."
        drift = node_table.beside_drift(r)
        if drift:
            text = (
                f"{name} read {format_number(r['measured_median'], unit)} in the sweep and "
                f"{format_number(r['measured_beside'], unit)} right before and after "
                f"{tool} ({drift:.2f}x, medians): the machine's rate changed between the runs. "
                f"Side by side, ours reaches {eff:.0%} of {tool}{ranges}."
            )
        if r.get("reference_cause"):
            text += f" Why: {r['reference_cause']}."
        out.append(
            Observation(
                "reference",
                text,
                {
                    "efficiency": eff,
                    "tool": tool,
                    "rate_change": drift,
                    "discrepancy": bool(r.get("discrepancy")),
                },
                "warning" if eff < FAR_BELOW or drift or r.get("discrepancy") else "info",
                name,
            )
        )
    return out
