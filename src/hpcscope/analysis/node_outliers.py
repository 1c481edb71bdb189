"""Which node of an allocation is slow: each rate of the node suite across the nodes that
measured it at once (samples tagged `node`, launch/every_node.py), and the nodes that fall
out of the others by a robust rule (issue 45 part 3).

The rule, per rate (stated in every view as RULE_TEXT): a node is an outlier when
  1. its median is more than SLOWER (20 %) worse than the median of the other nodes'
     medians (worse: lower for a rate, higher for a latency),
  2. and further from that median than K (3) x the other nodes' MAD (median absolute
     deviation, scaled by 1.4826 to a standard deviation's size for normal data), so a
     rate that varies this much between healthy nodes flags nobody,
  3. and even its best repetition is worse than that median: one slow slice of a shared
     machine (the lab's nodes share its CPUs) is not a slow node.
The other nodes, not all of them, give the centre: a bad node does not pull the bar it is
measured against. Fewer than MIN_NODES nodes with the rate: nothing is flagged (with two,
which one is the odd one out cannot be told), and the rate says so.

A clock that drops under load on one node only is the rate "clock under FP64 load" of
one node flagged while its "clock" is not: the table shows both rows. Where the nodes
share one machine's CPUs (the lab: samples tagged `shared_cpus`), that rate is shown but
not judged (SHARED_CLOCK): bench/node/cpu.c reads it in 0.1 ms windows between 2 ms of
FMA work, and on a shared CPU a window either runs whole (the core's clock, 3.7 GHz here)
or spans another node's time slice; a healthy 6-node lab read one node's median at 0.3
to 3.8 GHz from run to run, the node the scheduler happened to interleave.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hpcscope.formatting import sig3

NODE_TAG = "node"  # launch/every_node.NODE_TAG (launch is a layer above analysis)
SLOWER = 0.20
K = 3.0
MAD_SCALE = 1.4826
MIN_NODES = 3
RULE_TEXT = (
    f"a node is flagged on a rate when its median is more than {SLOWER:.0%} worse than the "
    f"median of the other nodes' medians, further from it than {K:g} x their MAD (scaled "
    f"by {MAD_SCALE}), and even its best repetition is worse than that median; at least "
    f"{MIN_NODES} nodes"
)
LOWER_IS_BETTER = {"latency", "time"}
SHARED_CLOCK = (
    "not judged: the nodes share this machine's CPUs, and a clock read in 0.1 ms windows "
    "between FMA bursts measures the scheduler's interleaving, not the node"
)


@dataclass
class Flag:
    node: str
    rate: str
    unit: str
    value: float
    others_median: float
    mad: float
    ratio: float  # the node's median / the others' median

    @property
    def text(self) -> str:
        pct = abs(1 - self.ratio) * 100
        side = "above" if self.ratio > 1 else "under"
        return (
            f"{self.node}: {self.rate} {sig3(self.value)} {self.unit}, {pct:.0f} % {side} the "
            f"other nodes' median {sig3(self.others_median)} (MAD {sig3(self.mad)})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "rate": self.rate,
            "unit": self.unit,
            "value": self.value,
            "others_median": self.others_median,
            "mad": self.mad,
            "ratio": self.ratio,
            "text": self.text,
        }


@dataclass
class Rate:
    label: str
    unit: str
    lower_is_better: bool
    medians: dict[str, float]  # node -> its median
    best: dict[str, float]  # node -> its best repetition
    flagged: list[str] = field(default_factory=list)
    note: str = ""  # why nothing could be flagged (too few nodes)


@dataclass
class NodeOutliers:
    nodes: list[str]
    rates: list[Rate]
    flags: list[Flag]

    @property
    def flagged_nodes(self) -> list[str]:
        return sorted({f.node for f in self.flags}, key=_node_order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": RULE_TEXT,
            "nodes": self.nodes,
            "rates": [
                {
                    "rate": r.label,
                    "unit": r.unit,
                    "medians": r.medians,
                    "flagged": r.flagged,
                    "note": r.note,
                }
                for r in self.rates
            ],
            "flags": [f.to_dict() for f in self.flags],
        }


def _node_order(node: str) -> tuple:
    digits = "".join(c for c in node if c.isdigit())
    return (node.rstrip("0123456789"), int(digits) if digits else 0, node)


def rate_label(sample: dict) -> str:
    """'clock (1 thread)', 'clock under fp64 fma avx512 (1 thread)', 'fp64 fma (1
    thread)', 'STREAM triad (1 thread)': what one rate of a node measures."""
    p = sample.get("params") or {}
    metric = sample.get("metric", "")
    if metric == "frequency":
        what = "clock" + (f" under {p['load']}" if p.get("load") else "")
    elif p.get("workload") == "stream":
        what = f"STREAM {p.get('op', '')}"
    elif metric == "flops":
        what = f"{p.get('precision', '')} {p.get('op', '')}".strip()
    else:
        what = " ".join(str(p[k]) for k in ("workload", "op", "precision") if p.get(k)) or metric
    threads = p.get("threads")
    if isinstance(threads, int):
        what += f" ({threads} thread{'s' if threads != 1 else ''})"
    return what


def node_samples(samples: Iterable[dict]) -> list[dict]:
    return [s for s in samples if (s.get("tags") or {}).get(NODE_TAG)]


def analyse(samples: Iterable[dict]) -> NodeOutliers | None:
    """The node x rate table and its outliers; None when no sample is tagged by node."""
    per: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    lower: dict[tuple[str, str], bool] = {}
    unjudged: dict[tuple[str, str], str] = {}
    for s in node_samples(samples):
        key = (rate_label(s), s.get("unit", ""))
        per[key][s["tags"][NODE_TAG]].extend(float(v) for v in s["values"])
        lower[key] = s.get("metric") in LOWER_IS_BETTER
        if s["tags"].get("shared_cpus") and (s.get("params") or {}).get("load"):
            unjudged[key] = SHARED_CLOCK
    if not per:
        return None
    nodes = sorted({n for by_node in per.values() for n in by_node}, key=_node_order)
    rates, flags = [], []
    for (label, unit), by_node in per.items():
        low = lower[(label, unit)]
        medians = {n: statistics.median(v) for n, v in by_node.items() if v}
        best = {n: (min(v) if low else max(v)) for n, v in by_node.items() if v}
        rate = Rate(
            label, unit, low, dict(sorted(medians.items(), key=lambda i: _node_order(i[0]))), best
        )
        if (label, unit) in unjudged:
            rate.note = unjudged[(label, unit)]
        elif len(medians) < MIN_NODES:
            rate.note = f"{len(medians)} node(s): at least {MIN_NODES} are needed to flag one"
        else:
            for node, value in rate.medians.items():
                flag = judge(node, value, best[node], rate, medians)
                if flag:
                    rate.flagged.append(node)
                    flags.append(flag)
        rates.append(rate)
    return NodeOutliers(nodes, rates, flags)


def judge(
    node: str, value: float, best: float, rate: Rate, medians: dict[str, float]
) -> Flag | None:
    """The rule (module docstring) for one node on one rate."""
    others = [v for n, v in medians.items() if n != node]
    centre = statistics.median(others)
    if centre <= 0:
        return None
    mad = MAD_SCALE * statistics.median(abs(v - centre) for v in others)
    worse = value - centre if rate.lower_is_better else centre - value
    best_worse = best > centre if rate.lower_is_better else best < centre
    if worse > SLOWER * centre and worse > K * mad and best_worse:
        return Flag(node, rate.label, rate.unit, value, centre, mad, value / centre)
    return None


def table_rows(result: NodeOutliers) -> list[dict[str, Any]]:
    """One row per rate: {'rate', 'unit', node: 'value' or 'value !' (flagged)}."""
    rows = []
    for r in result.rates:
        row: dict[str, Any] = {"rate": r.label, "unit": r.unit}
        for node in result.nodes:
            v = r.medians.get(node)
            row[node] = "-" if v is None else sig3(v) + (" !" if node in r.flagged else "")
        rows.append(row)
    return rows


def summary_lines(result: NodeOutliers) -> list[str]:
    """What show prints: the outliers (or none), each with its numbers, and the rule."""
    if not result.flags:
        lines = [f"node outliers: none among {len(result.nodes)} nodes"]
    else:
        lines = [f"node outliers: {', '.join(result.flagged_nodes)}"]
        lines += [f"  {f.text}" for f in result.flags]
    lines += [f"  {r.label}: {r.note}" for r in result.rates if r.note]
    lines.append(f"  rule: {RULE_TEXT}")
    return lines
