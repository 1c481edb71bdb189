"""What `run links` found: the N x N matrices, the slow pairs, who is at fault, and what
the fabric loses under load. Fed only by the recorded samples of bench/mpi/links.c
(docs/records.md section 4, links; docs/links.md).

A pair's value is its best sample (the lowest latency, the highest bandwidth of its
parallel-phase values): a bad link or node is slow in every sample, while load on a
shared host and congestion come and go. An endpoint's value (a node on one lane) is the
median of its pairs' values.

The rule (one for both metrics and both stages, stated in every view): a value is
flagged when it is worse than the median of its kind by more than K x 1.4826 x MAD
(MAD: median absolute deviation; 1.4826 x MAD estimates a normal spread's sigma) AND by
more than FLOOR x the median: bandwidth below, latency above. K = 3 and FLOOR = 20 % by
default. The floor keeps a tight machine (or a deterministic simulation, MAD = 0) from
flagging a pair a few percent slower; the MAD keeps a noisy one from flagging its noise.
Fewer than MIN_PAIRS values: no flag.

  1. nodes: each endpoint's value against all endpoints' (a slow node is slow with every
     peer, so its median stands out even when its pairs are a third of all pairs, which
     would inflate the pairs' MAD);
  2. pairs: each pair's value against the pairs that touch no endpoint flagged in 1;
     a pair of an endpoint flagged in 1 is flagged when it is worse than those pairs'
     median by the floor alone (its node was already held against the MAD).

Attribution of a flagged pair (per metric):
  - node: it touches an endpoint flagged in 1: "n3" when every lane of the node is
    flagged, else "n3 lane 1";
  - link: it does not, and re-measured alone (serial phase) it is still beyond the rule;
  - round: re-measured alone it is within the rule: slow only beside the other pairs of
    its round (congestion), not by itself;
  - not explained: not re-measured alone, so link and round cannot be told apart.

Bisection ratio per pairing: the sum of the pairs' bandwidths together / the sum of the
same pairs' bandwidths alone. All-to-all ratio: the time p-1 blocks would take at one
pair's bandwidth alone (the median of the bisection pairs alone, else of the ping-pong
pairs) / the measured MPI_Alltoall time. 1 = nothing lost under load.

Cost: one pass over the samples, O(P log P) for P pairs (1,024 nodes: 523,776 pairs, a
million samples, about 6 s of CPU); matrices N x N per lane.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from hpcscope.analysis import links_schedule
from hpcscope.formatting import format_quantity as q

BENCHMARK = "links"
K_DEFAULT = 3.0
FLOOR_DEFAULT = 0.2
MAD_TO_SIGMA = 1.4826
MIN_PAIRS = 3  # fewer pairs: no median to stand against
SHOWN_FLAGS = 20  # show: flagged pairs listed one by one, beyond a node's own line
METRICS = (("bandwidth", "MB/s", False), ("latency", "us", True))  # name, unit, higher worse


@dataclass(frozen=True)
class Rule:
    k: float = K_DEFAULT
    floor: float = FLOOR_DEFAULT

    def text(self) -> str:
        return (
            f"flagged when worse than the median of all pairs by more than {self.k:g} x "
            f"1.4826 x MAD and by more than {100 * self.floor:g} % of the median"
        )


@dataclass
class Pair:
    rank_a: int
    rank_b: int
    node_a: int
    node_b: int
    lane: int
    round: int | None
    bandwidth: float | None  # MB/s, the best of the parallel phase's values
    latency: float | None  # us, the lowest
    serial_bandwidth: float | None = None  # re-measured alone (best)
    serial_latency: float | None = None


@dataclass
class Flag:
    metric: str
    unit: str
    node_a: str
    node_b: str
    lane: int
    round: int | None
    value: float
    median: float
    threshold: float
    serial: float | None
    cause: str  # node | link | round | not explained
    culprit: str  # "n3", "n3 lane 1", "n1-n4", "round 5" or ""
    why: str


@dataclass
class Bisection:
    pairing: str
    pairs: int
    together: float  # MB/s: sum over the pairs of each one's bandwidth beside the others
    sum_alone: float  # MB/s: sum over the same pairs of each one's bandwidth alone
    ratio: float  # together / sum_alone
    aggregate: float  # MB/s: all senders' bytes / the slowest sender's time (medians)


@dataclass
class Alltoall:
    p: int
    bytes: int
    time_us: float
    reference_bw: float | None  # MB/s of one pair alone
    ratio: float | None
    why: str


@dataclass
class LinksResult:
    nodes: list[str]
    lanes: int
    rule: Rule
    medians: dict[str, float]
    thresholds: dict[str, float]
    pairs: list[Pair]
    flags: list[Flag]
    at_fault: list[str]  # nodes (or node lanes) named at fault
    rounds: list[dict[str, Any]]
    retested: int
    phase: str = "parallel"  # how the matrix was measured: parallel rounds or sequential
    bisection: list[Bisection] = field(default_factory=list)
    alltoall: Alltoall | None = None
    schedule_ok: bool = True

    def matrix(self, metric: str, lane: int = 0, serial: bool = False) -> np.ndarray:
        """N x N of the pairs' medians (NaN on the diagonal and where not measured)."""
        n = len(self.nodes)
        m = np.full((n, n), np.nan)
        for p in self.pairs:
            if p.lane != lane:
                continue
            v = getattr(p, f"serial_{metric}" if serial else metric)
            if v is not None:
                m[p.node_a, p.node_b] = m[p.node_b, p.node_a] = v
        return m

    def to_json(self) -> dict[str, Any]:
        """Machine-readable (export --format json, benchmarks/links_targets)."""
        return {
            "nodes": self.nodes,
            "lanes": self.lanes,
            "phase": self.phase,
            "rounds_total_us": sum(r["time_us"] for r in self.rounds),
            "rule": {**asdict(self.rule), "text": self.rule.text()},
            "medians": self.medians,
            "thresholds": self.thresholds,
            "flags": [asdict(f) for f in self.flags],
            "at_fault": self.at_fault,
            "retested": self.retested,
            "rounds": self.rounds,
            "bisection": [asdict(b) for b in self.bisection],
            "alltoall": asdict(self.alltoall) if self.alltoall else None,
            "schedule_ok": self.schedule_ok,
            "matrices": {
                metric: [
                    [[None if math.isnan(v) else v for v in row] for row in self.matrix(metric, l)]
                    for l in range(self.lanes)
                ]
                for metric, _, _ in METRICS
            },
        }


def is_links(sample: dict) -> bool:
    return sample.get("benchmark") == BENCHMARK


def _median(values: list[float]) -> float | None:
    """The median of a sample's few values, in plain Python: numpy's call costs tens of
    microseconds of overhead each, and 1,024 nodes record a million samples."""
    if not values:
        return None
    v = sorted(values)
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def node_labels(hosts: dict[int, set[str]]) -> list[str]:
    """A name per node index from the host names its ranks recorded: the host name (the
    common part of its lanes' names, 'n3' of 'n3-s0' and 'n3-s1'); 'node I' where names
    repeat (emulated nodes)."""
    n = max(hosts) + 1 if hosts else 0
    names = []
    for i in range(n):
        found = sorted(hosts.get(i, set()))
        name = found[0] if len(found) == 1 else _common(found)
        names.append(name)
    if len(set(names)) != len(names) or not all(names):
        return [f"node {i}" for i in range(n)]
    # one host per node named NODE-SUFFIX with the same suffix everywhere (a simulated
    # platform's 'n7-node'): the node's own name 'n7'
    heads = [name.rpartition("-")[0] for name in names]
    if all(heads) and len({name.rpartition("-")[2] for name in names}) == 1:
        if len(set(heads)) == len(heads):
            return heads
    return names


def _common(names: list[str]) -> str:
    if not names:
        return ""
    prefix = names[0]
    for other in names[1:]:
        while not other.startswith(prefix):
            prefix = prefix[:-1]
    # back to the last separator: 'n3' of 'n3-s0' and 'n3-s1', not 'n3-s'
    cut = max(prefix.rfind(c) for c in "-_.")
    return prefix[:cut] if cut > 0 else prefix


def _thresholds(values: np.ndarray, worse_high: bool, rule: Rule) -> tuple[float, float]:
    med = float(np.median(values))
    scale = MAD_TO_SIGMA * float(np.median(np.abs(values - med)))
    if worse_high:
        return med, max(med + rule.k * scale, med * (1 + rule.floor))
    return med, min(med - rule.k * scale, med * (1 - rule.floor))


def _beyond(value: float, threshold: float, worse_high: bool) -> bool:
    return value > threshold if worse_high else value < threshold


def analyse(samples: list[dict], rule: Rule | None = None) -> LinksResult | None:
    """The links view of one run's samples (None without ping-pong samples)."""
    rule = rule or Rule()
    mine = [s for s in samples if is_links(s)]
    ping = [s for s in mine if s["params"].get("test") == "pingpong"]
    if not ping:
        return None
    hosts: dict[int, set[str]] = defaultdict(set)
    pairs: dict[tuple[int, int], Pair] = {}
    phases = set()
    lanes = 1
    # one pass, no getattr or numpy per sample: 1,024 nodes record a million samples
    for s in ping:
        prm = s["params"]
        key = (prm["rank_a"], prm["rank_b"])
        p = pairs.get(key)
        if p is None:
            p = pairs[key] = Pair(
                key[0],
                key[1],
                prm["node_a"],
                prm["node_b"],
                int(prm.get("lane", 0)),
                None,
                None,
                None,
            )
            hosts[p.node_a].add(str(prm.get("host_a", "")))
            hosts[p.node_b].add(str(prm.get("host_b", "")))
            lanes = max(lanes, int(prm.get("lanes", 1)))
        phase, metric = prm.get("phase"), s["metric"]
        value = max(s["values"]) if metric == "bandwidth" else min(s["values"])
        phases.add(phase)
        if phase == "serial":
            if metric == "bandwidth":
                p.serial_bandwidth = value
            elif metric == "latency":
                p.serial_latency = value
            continue
        if prm.get("round") is not None:
            p.round = prm["round"]
        if metric == "bandwidth":
            p.bandwidth = value
        elif metric == "latency":
            p.latency = value
    nodes = node_labels(hosts)
    plist = sorted(pairs.values(), key=lambda p: (p.lane, p.node_a, p.node_b))
    medians: dict[str, float] = {}
    thresholds: dict[str, float] = {}
    flagged: dict[str, list[Pair]] = {}
    bad_ends: dict[str, dict[tuple[int, int], str]] = {}
    for metric, _, high in METRICS:
        measured = [p for p in plist if getattr(p, metric) is not None]
        if len(measured) < MIN_PAIRS:
            continue
        bad_ends[metric] = _slow_endpoints(measured, metric, high, rule)
        healthy = [
            p
            for p in measured
            if (p.node_a, p.lane) not in bad_ends[metric]
            and (p.node_b, p.lane) not in bad_ends[metric]
        ]
        values = np.array([getattr(p, metric) for p in (healthy or measured)])
        medians[metric], thresholds[metric] = _thresholds(values, high, rule)
        # a slow endpoint's pairs: each one worse than the other pairs' median by the
        # floor (stage 1 already held the node against the MAD)
        floor = medians[metric] * (1 + rule.floor if high else 1 - rule.floor)
        flagged[metric] = [
            p
            for p in measured
            if _beyond(getattr(p, metric), thresholds[metric], high)
            or (
                ((p.node_a, p.lane) in bad_ends[metric] or (p.node_b, p.lane) in bad_ends[metric])
                and _beyond(getattr(p, metric), floor, high)
            )
        ]
    flags, at_fault = _attribute(plist, flagged, bad_ends, medians, thresholds, nodes, lanes)
    return LinksResult(
        nodes=nodes,
        lanes=lanes,
        rule=rule,
        medians=medians,
        thresholds=thresholds,
        pairs=plist,
        flags=flags,
        at_fault=at_fault,
        rounds=_rounds(mine),
        retested=sum(1 for p in plist if p.serial_bandwidth is not None),
        phase="sequential" if "sequential" in phases else "parallel",
        bisection=_bisection(mine),
        alltoall=_alltoall(mine, plist),
        schedule_ok=_schedule_ok(plist, len(nodes)),
    )


def _slow_endpoints(
    measured: list[Pair], metric: str, high: bool, rule: Rule
) -> dict[tuple[int, int], str]:
    """Stage 1: (node, lane) -> why, for each endpoint whose median over its pairs is
    beyond the rule among all endpoints' medians."""
    per: dict[tuple[int, int], list[float]] = defaultdict(list)
    for p in measured:
        value = getattr(p, metric)
        per[(p.node_a, p.lane)].append(value)
        per[(p.node_b, p.lane)].append(value)
    if len(per) < MIN_PAIRS:
        return {}
    ends = {end: float(np.median(v)) for end, v in per.items()}
    med, threshold = _thresholds(np.array(list(ends.values())), high, rule)
    unit = dict((m, u) for m, u, _ in METRICS)[metric]
    return {
        end: (
            f"its median over its {len(per[end])} pairs is {q(v, unit)}, beyond "
            f"{q(threshold, unit)} (the rule over all nodes' medians, median {q(med, unit)})"
        )
        for end, v in ends.items()
        if _beyond(v, threshold, high)
    }


def _attribute(
    plist: list[Pair],
    flagged: dict[str, list[Pair]],
    bad_ends: dict[str, dict[tuple[int, int], str]],
    medians: dict[str, float],
    thresholds: dict[str, float],
    nodes: list[str],
    lanes: int,
) -> tuple[list[Flag], list[str]]:
    """Each flagged pair's cause (module docstring) and the nodes at fault."""
    flags: list[Flag] = []
    faulty: set[tuple[int, int]] = set()
    for metric, unit, high in METRICS:
        bad = bad_ends.get(metric, {})
        faulty |= set(bad)
        for p in flagged.get(metric, []):
            serial = getattr(p, f"serial_{metric}")
            ends = [e for e in ((p.node_a, p.lane), (p.node_b, p.lane)) if e in bad]
            value = getattr(p, metric)
            said = f"{metric} {q(value, unit)} vs median {q(medians[metric], unit)}"
            if ends:
                node, lane = ends[0]
                cause, culprit = "node", _end_name(nodes, node, lane, lanes, set(bad))
                why = f"{culprit}: {bad[ends[0]]}"
            elif serial is not None and _beyond(serial, thresholds[metric], high):
                cause, culprit = "link", f"{nodes[p.node_a]}-{nodes[p.node_b]}"
                why = (
                    f"alone (serial re-test) still {q(serial, unit)}, and neither node "
                    "is slow with its other peers"
                )
            elif serial is not None:
                cause, culprit = "round", f"round {p.round}"
                why = (
                    f"alone (serial re-test) {q(serial, unit)}, within the rule: slow only "
                    "beside the other pairs of its round"
                )
            else:
                cause, culprit = "not explained", ""
                why = "not re-measured alone, so the link and its round are not told apart"
            flags.append(
                Flag(
                    metric,
                    unit,
                    nodes[p.node_a],
                    nodes[p.node_b],
                    p.lane,
                    p.round,
                    value,
                    medians[metric],
                    thresholds[metric],
                    serial,
                    cause,
                    culprit,
                    f"{said}; {why}",
                )
            )
    named = sorted({_end_name(nodes, n, l, lanes, faulty) for n, l in faulty})
    return flags, named


def _end_name(nodes: list[str], node: int, lane: int, lanes: int, bad: set[tuple[int, int]]) -> str:
    """'n3' when every lane of the node is at fault (or it has one), else 'n3 lane 1'."""
    if all((node, l) in bad for l in range(lanes)):
        return nodes[node]
    return f"{nodes[node]} lane {lane}"


def _rounds(samples: list[dict]) -> list[dict[str, Any]]:
    out = []
    for s in samples:
        prm = s["params"]
        if prm.get("test") == "round":
            out.append(
                {"round": prm["round"], "pairs": prm.get("pairs"), "time_us": s["values"][0]}
            )
    return sorted(out, key=lambda r: r["round"])


def _bisection(samples: list[dict]) -> list[Bisection]:
    """Per pairing the pairs' bandwidths together and alone, each pair's median; a pair
    slow alone too (a slow node) weighs the same on both sides of the ratio."""
    agg: dict[str, float] = {}
    found: dict[tuple[str, str], dict[tuple[int, int], float]] = defaultdict(dict)
    for s in samples:
        prm = s["params"]
        if prm.get("test") != "bisection":
            continue
        value = _median(s["values"])
        if value is None:
            continue
        if prm.get("scope") == "aggregate":
            agg[prm["pairing"]] = value
        else:
            found[(prm["pairing"], prm.get("phase", ""))][(prm["rank_a"], prm["rank_b"])] = value
    out = []
    for pairing, aggregate in agg.items():
        together, alone = found[(pairing, "together")], found[(pairing, "alone")]
        both = sorted(set(together) & set(alone))
        t, a = sum(together[k] for k in both), sum(alone[k] for k in both)
        if a > 0:
            out.append(Bisection(pairing, len(both), t, a, t / a, aggregate))
    return out


def _alltoall(samples: list[dict], plist: list[Pair]) -> Alltoall | None:
    found = [s for s in samples if s["params"].get("test") == "alltoall"]
    if not found:
        return None
    s = found[0]
    p, block = int(s["params"].get("p", 0)), int(s["params"].get("bytes", 0))
    t = float(np.median(s["values"]))
    alone = [
        float(np.median(x["values"]))
        for x in samples
        if x["params"].get("test") == "bisection" and x["params"].get("phase") == "alone"
    ]
    source = "the bisection pairs alone"
    if not alone:
        alone = [q.bandwidth for q in plist if q.bandwidth is not None]
        source = "the ping-pong pairs in their rounds"
    if not alone or t <= 0 or p < 2:
        return Alltoall(p, block, t, None, None, "no pair bandwidth to compare with")
    ref = float(np.median(alone))
    ideal_us = (p - 1) * block / ref  # bytes / (MB/s) = us
    return Alltoall(
        p,
        block,
        t,
        ref,
        ideal_us / t,
        f"ideal (p-1) x {q(block, 'B')} at {q(ref, 'MB/s')} (median of {source}) = "
        f"{q(ideal_us, 'us')}",
    )


def _schedule_ok(plist: list[Pair], n: int) -> bool:
    """The recorded rounds are the circle method's (links_schedule), pair for pair."""
    for p in plist:
        if p.round is not None and links_schedule.partner(p.node_a, p.round, n) != p.node_b:
            return False
    return True


def matrix_csv(result: LinksResult, metric: str) -> str:
    """The N x N matrix of one metric as CSV: a row per (lane, node), a column per node,
    empty where not measured (the diagonal)."""
    unit = dict((m, u) for m, u, _ in METRICS)[metric]
    lines = [",".join(["lane", f"node ({metric} {unit})", *result.nodes])]
    for lane in range(result.lanes):
        m = result.matrix(metric, lane)
        for i, name in enumerate(result.nodes):
            cells = ["" if math.isnan(v) else f"{v:.6g}" for v in m[i]]
            lines.append(",".join([str(lane), name, *cells]))
    return "\n".join(lines) + "\n"


FLAG_COLUMNS = (
    "metric",
    "unit",
    "node_a",
    "node_b",
    "lane",
    "round",
    "value",
    "median",
    "threshold",
    "serial",
    "cause",
    "culprit",
    "why",
)


def flags_csv(result: LinksResult) -> str:
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FLAG_COLUMNS)
    for f in result.flags:
        row = asdict(f)
        w.writerow(["" if row[c] is None else row[c] for c in FLAG_COLUMNS])
    return out.getvalue()


def write_files(result: LinksResult, out_dir, tag: str = "") -> list:
    """links_[TAG]bandwidth.csv, ..._latency.csv, ..._flags.csv and links_[TAG]json in
    out_dir (TAG: the launch, where a run has several)."""
    import json

    from hpcscope import safe_write

    safe_write.ensure_dir(out_dir)  # the run's folder, made by its caller
    written = {
        f"links_{tag}bandwidth.csv": matrix_csv(result, "bandwidth"),
        f"links_{tag}latency.csv": matrix_csv(result, "latency"),
        f"links_{tag}flags.csv": flags_csv(result),
        f"links_{tag}analysis.json": json.dumps(result.to_json(), indent=1) + "\n",
    }
    return [safe_write.write_text(out_dir / name, text) for name, text in written.items()]


def by_launch(samples: list[dict], rule: Rule | None = None) -> list[tuple[str, LinksResult]]:
    """One result per launch (its name; each launch is one allocation-wide measurement:
    two MPI libraries or repeats are not pooled into one matrix)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for s in samples:
        if is_links(s):
            groups[str(s.get("launch") or s.get("launch_id") or "")].append(s)
    found = [(name, analyse(group, rule)) for name, group in groups.items()]
    return [(name, r) for name, r in found if r is not None]


def summary_lines(result: LinksResult) -> list[str]:
    """What `show` prints of one launch: the medians, the rule, each flagged pair with its
    cause, the nodes at fault, the rounds, the bisection and all-to-all ratios."""
    n = len(result.nodes)
    lines = [
        f"{n} nodes x {result.lanes} lane(s), {len(result.pairs)} pairs in "
        f"{links_schedule.rounds(n)} rounds"
        + (" (each pair alone, one after another)" if result.phase == "sequential" else "")
        + f", {result.retested} re-measured alone"
        + ("" if result.schedule_ok else "; WARNING: recorded rounds are not the schedule's")
    ]
    for metric, unit, _ in METRICS:
        if metric in result.medians:
            lines.append(
                f"{metric}: median {q(result.medians[metric], unit)}, flagged beyond "
                f"{q(result.thresholds[metric], unit)}"
            )
    lines.append(f"rule: {result.rule.text()}")
    if not result.flags:
        lines.append("flagged pairs: none")
    # a node's flagged pairs as one line; the others one line each, at most SHOWN_FLAGS
    by_node: dict[tuple[str, str], list[Flag]] = defaultdict(list)
    single = []
    for f in result.flags:
        if f.cause == "node":
            by_node[(f.metric, f.culprit)].append(f)
        else:
            single.append(f)
    for (metric, culprit), group in by_node.items():
        unit = group[0].unit
        peers = sorted(
            {f.node_b if culprit.split()[0] == f.node_a else f.node_a for f in group},
            key=result.nodes.index,
        )
        shown = ", ".join(peers[:8]) + (f" and {len(peers) - 8} more" if len(peers) > 8 else "")
        lines.append(
            f"flagged {metric}: {len(group)} pairs of node {culprit} (with {shown}): median "
            f"{q(float(np.median([f.value for f in group])), unit)} vs "
            f"{q(group[0].median, unit)} of the other pairs; {group[0].why.split('; ', 1)[1]}"
        )
    for f in single[:SHOWN_FLAGS]:
        lane = f" lane {f.lane}" if result.lanes > 1 else ""
        lines.append(
            f"flagged {f.metric}: {f.node_a}-{f.node_b}{lane} (round {f.round}): {f.cause}"
            + (f" {f.culprit}" if f.culprit and f.cause != "round" else "")
            + f"; {f.why}"
        )
    if len(single) > SHOWN_FLAGS:
        lines.append(
            f"... and {len(single) - SHOWN_FLAGS} more flagged pairs (export --format json, "
            "links_flags.csv)"
        )
    if result.at_fault:
        lines.append(f"at fault: {', '.join(result.at_fault)}")
    if result.rounds:
        times = [r["time_us"] for r in result.rounds]
        lines.append(
            f"rounds: {len(times)}, median {q(float(np.median(times)), 'us')}, slowest "
            f"{q(max(times), 'us')}, all {q(sum(times), 'us')}"
        )
    for b in result.bisection:
        lines.append(
            f"bisection {b.pairing}: {b.pairs} pairs, together {q(b.together, 'MB/s')} "
            f"(sum of each pair's), alone {q(b.sum_alone, 'MB/s')}: ratio {b.ratio:.2f}; "
            f"all bytes / slowest sender {q(b.aggregate, 'MB/s')}"
        )
    a = result.alltoall
    if a is not None:
        ratio = f"ratio {a.ratio:.2f} ({a.why})" if a.ratio is not None else a.why
        lines.append(
            f"all-to-all of {q(a.bytes, 'B')} blocks over {a.p} ranks: {q(a.time_us, 'us')}; "
            + ratio
        )
    return lines
