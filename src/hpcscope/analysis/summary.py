"""The answer first: the few numbers that say how fast a machine and its MPI are, taken
from stored runs, for the top of the report and the end of `hpcscope demo`.

- p2p: per MPI library and placement class, the small-message latency (at 8 B, else the
  smallest size above 0 that was measured), the peak bandwidth (the largest centre over
  the sizes) with the size it was reached at, and the bandwidth at the largest size where
  that is another one (within a node the peak is often where a message still fits in
  the caches, 8-64 KiB, above what large copies through memory reach); "unstable" only
  where the quoted number's own 95 % interval (over launches) is wider than the
  precision asked (5 % for fixed counts), with its half-width and class in words
  (analysis/p2p_curves.grade: launches bimodal, budget ran out, noise above the target).
- coll: per run and MPI library, how many guideline checks (mock-up vs native at one
  collective and count) there were and their findings (analysis/verdicts.findings: one
  per collective and comparison with its factor range, Holm-corrected, violated only
  where two or more launches each show it, else suggested), and with 1 rank per node
  that these compare MPI calls with each other, not lanes;
- lanes: the lane pattern's best factor over one lane, or that only k = 1 was measured;
  a simulated run says so (a deterministic model).
- node: one row per measured quantity with a reference tool or a theoretical peak, at
  the most threads (streams) and the largest block measured: the value, its fraction of
  the reference tool's value and of the peak.
- steps: one line per skipped part, failed launch and run that did not end `ok`.

Pure functions of what the store returns (run, samples, launches dicts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hpcscope.analysis import memory_level, modes, node_table, p2p_curves, verdicts
from hpcscope.analysis.observations import PLACEMENT_ORDER
from hpcscope.analysis.p2p_curves import curves, small_size
from hpcscope.formatting import format_bytes, format_number


@dataclass
class P2PLine:
    run_id: int
    config: str  # "openmpi core"
    latency_us: float | None
    latency_bytes: float | None
    bandwidth_MBps: float | None
    bandwidth_bytes: float | None
    largest_MBps: float | None = None  # at the largest size, where the peak is elsewhere
    largest_bytes: float | None = None
    # "latency ±7% (launches bimodal: CPU pair moved in launch 2 (...))": the quoted
    # numbers whose interval is wider than the precision asked, with the class in words
    unstable: list[str] = field(default_factory=list)
    anchor: str = ""  # the report section it links to


@dataclass
class CollLine:
    """The guideline checks of one MPI library in a run, as findings (verdicts.findings:
    one per collective and comparison, corrected with Holm over the run's checks)."""

    run_id: int
    suite: str
    mpi: str
    checks: int
    violations: int = 0  # checks violated (each of 2+ launches shows it)
    suggested: int = 0  # checks only one launch shows (or a simulated model)
    findings: list[verdicts.Finding] = field(default_factory=list)
    family: int = 0  # the checks Holm's correction ran over (the run's, every library)
    one_per_node: bool = False  # every check had 1 rank per node: MPI calls, not lanes
    anchor: str = ""  # the report section it links to

    def text(self) -> str:
        """'1 finding in 140 guideline checks (Holm-corrected over the run's 280), suggested
        by the run's 1 launch (...): MPI_Scan takes 1.47-1.71x the time of ...'."""
        corrected = (
            f"Holm-corrected over the run's {self.family}"
            if self.family
            else "a simulation's deterministic model: no test to correct"
        )
        if not self.findings:
            text = f"no guideline finding in {self.checks} checks ({corrected})"
        else:
            n = len(self.findings)
            statuses = {f.short_status() for f in self.findings}
            text = (
                f"{n} finding{'s' if n != 1 else ''} in {self.checks} guideline checks "
                f"({corrected})"
            )
            if len(statuses) == 1:  # said once for all
                text += f", {'each ' if n > 1 else ''}{statuses.pop()}"
            shown = [
                f.headline(detail=False) + ("" if len(statuses) <= 1 else f", {f.short_status()}")
                for f in self.findings[:2]
            ]
            text += ": " + "; ".join(shown) + (f"; and {n - 2} more" if n > 2 else "")
        if self.one_per_node:
            text += (
                "; with 1 rank per node lane and hier are the library's own collectives "
                "plus local work: these checks compare MPI calls with each other, not lanes"
            )
        return text


@dataclass
class LanesLine:
    """The lane pattern's best speed-up t(1)/t(k) over one lane (L physical lanes: up to
    L), None when only k = 1 was measured. `simulated`: the model's name ('hydra', N x n)
    for a simulated run: a deterministic model, not a measurement."""

    run_id: int
    mpi: str
    best_factor: float | None
    k: int | None
    count: int | None
    ks: list[int] = field(default_factory=list)
    anchor: str = ""  # the report section it links to
    simulated: str | None = None

    def text(self) -> str:
        where = (
            f"simulated on a model of {self.simulated} (SimGrid; a deterministic model, "
            "not this machine): "
            if self.simulated
            else ""
        )
        if self.best_factor is None:
            return (
                where
                + "lane pattern measured at k = 1 only (one process per node): no lane comparison"
            )
        return where + (
            f"lane pattern {self.best_factor:.2f}x faster over k = {self.k} lanes than one "
            f"(count {self.count})"
        )


@dataclass
class NodeLine:
    run_id: int
    workload: str
    name: str
    value: float
    unit: str
    reference_tool: str | None
    vs_reference: float | None
    peak_name: str | None
    vs_peak: float | None
    anchor: str = ""  # the report section it links to
    cause: str | None = None  # why below 90 % of the peak (analysis/machine_measured.py)
    # ours right beside the reference tool, where it differs from `value` (node_table.
    # beside_drift): vs_reference compares with it, not with `value`
    beside: float | None = None
    # ours right before and right after the tool where they disagree: no ratio then
    changed: list[float] | None = None
    # like for like (node_table._compare_with_tool): the medians compared and each side's
    # [min, max]; why the ratio is outside 0.9-1.1, or "not explained" (reference_cause)
    ours_median: float | None = None
    ours_range: list[float] | None = None
    reference_median: float | None = None
    reference_range: list[float] | None = None
    reference_cause: str | None = None
    discrepancy: bool = False
    # two modes of our values (analysis/modes.py): quoted instead of one value
    modes: list[dict] | None = None
    # what the number measured where it is not what its name says: the cache level of a
    # memory point, a latency whose working set is not DRAM's, a disk rate a cache's
    caveat: str | None = None

    def has_reference(self) -> bool:
        return self.vs_reference is not None or bool(self.changed)

    def value_text(self) -> str:
        """'30.4 GB/s', or the two modes of a bimodal series, with the caveat."""
        text = (
            modes.text(self.modes, self.unit)
            if self.modes
            else format_number(self.value, self.unit)
        )
        return f"{text} ({self.caveat})" if self.caveat else text

    def reference_text(self) -> str:
        """'111% of likwid-bench (medians: ours 57.7 GB/s, 45.2-88 GB/s; likwid-bench 51.9
        GB/s, 49.2-54.6 GB/s)' with the cause where outside 0.9-1.1, or why no ratio."""
        if self.changed:
            values = node_table.changed_text({"beside_changed": self.changed, "unit": self.unit})
            return (
                f"no ratio to {self.reference_tool}: the machine's rate changed while it ran "
                f"(ours read {values} in its runs around the tool's, in order)"
            )
        text = f"{self.vs_reference:.0%} of {self.reference_tool}"
        if self.ours_median is not None and self.ours_range and self.reference_range:
            tool = self.reference_tool
            text += (
                f" (medians: ours {format_number(self.ours_median, self.unit)}, "
                f"{modes.span(self.ours_range, self.unit)}; {tool} "
                f"{format_number(self.reference_median or 0, self.unit)}, "
                f"{modes.span(self.reference_range, self.unit)})"
            )
        if self.beside is not None:
            text += (
                f" (ours read {format_number(self.beside, self.unit)} right beside it: the "
                "machine's rate changed after the sweep)"
            )
        if self.reference_cause:
            cause = self.reference_cause
            if self.caveat and cause.startswith(self.caveat):  # said beside the value
                cause = "that cache" + cause[len(self.caveat) :]
            text += f": {cause}"
        return text


@dataclass
class StepLine:
    run_id: int
    suite: str
    text: str
    anchor: str = ""  # the report section it links to


@dataclass
class Summary:
    p2p: list[P2PLine] = field(default_factory=list)
    coll: list[CollLine] = field(default_factory=list)
    lanes: list[LanesLine] = field(default_factory=list)
    node: list[NodeLine] = field(default_factory=list)
    steps: list[StepLine] = field(default_factory=list)

    def extend(self, other: Summary) -> None:
        self.p2p += other.p2p
        self.coll += other.coll
        self.lanes += other.lanes
        self.node += other.node
        self.steps += other.steps

    def headline_lines(self) -> list[str]:
        """The summary as short lines of plain text (the demo's terminal)."""
        out = []
        for p in self.p2p:
            mark = f" (unstable: {'; '.join(p.unstable)})" if p.unstable else ""
            lat = (
                f"latency {format_number(p.latency_us, 'us')} at {format_bytes(p.latency_bytes)}"
                if p.latency_us is not None and p.latency_bytes is not None
                else "latency -"
            )
            bw = (
                f"peak bandwidth {format_number(p.bandwidth_MBps, 'MB/s')} at "
                f"{format_bytes(p.bandwidth_bytes)}"
                if p.bandwidth_MBps is not None and p.bandwidth_bytes is not None
                else "bandwidth -"
            )
            if p.largest_MBps is not None and p.largest_bytes is not None:
                bw += (
                    f" ({format_number(p.largest_MBps, 'MB/s')} at {format_bytes(p.largest_bytes)})"
                )
            out.append(f"p2p {p.config}: {lat}, {bw}{mark}")
        out += [f"{c.suite} {c.mpi}: {c.text()}" for c in self.coll]
        for lane in self.lanes:
            out.append(f"lanes {lane.mpi}: {lane.text()}")
        for n in self.node:
            parts = [f"{n.name}: {n.value_text()}"]
            if n.has_reference():
                parts.append(n.reference_text())
            if n.vs_peak is not None:
                parts.append(f"{n.vs_peak:.0%} of peak")
            if n.cause:
                parts.append(f"below 90% because: {n.cause}")
            out.append("node " + ", ".join(parts))
        out += [f"{s.suite} (run {s.run_id}): {s.text}" for s in self.steps]
        return out


def summarize(run: dict, samples: list[dict], launches: list[dict], anchor: str = "") -> Summary:
    """The summary of one run (or of a group of runs pooled: pass its first run).
    `anchor`: the report's id of the run (its sections are ANCHOR-p2p, ANCHOR-coll, ...),
    default run<ID>."""
    rid = int(run["id"])
    found = Summary(
        p2p=p2p_lines(rid, samples, run, launches),
        coll=coll_lines(rid, run.get("suite", ""), samples),
        lanes=lanes_lines(rid, samples),
        node=node_lines(rid, run, samples),
        steps=step_lines(run, launches),
    )
    base = anchor or f"run{rid}"
    for section, lines in (
        ("p2p", found.p2p),
        ("coll", found.coll),
        ("coll", found.lanes),
        ("node", found.node),
    ):
        for line in lines:
            line.anchor = f"{base}-{section}"
    for step in found.steps:
        step.anchor = base
    return found


def _place_order(config: str) -> tuple:
    words = config.split()
    place = words[1] if len(words) > 1 else ""
    rank = PLACEMENT_ORDER.index(place) if place in PLACEMENT_ORDER else len(PLACEMENT_ORDER)
    return (words[0] if words else "", rank, config)


def p2p_lines(
    run_id: int, samples: list[dict], run: dict | None = None, launches: list[dict] | None = None
) -> list[P2PLine]:
    """One line per curve; `run` (its precision target, its budget note) and `launches`
    (their CPU-pair probes) grade the quoted numbers (module doc)."""
    p2p = [s for s in samples if s.get("benchmark") == "p2p"]
    latency = curves(p2p, "latency")
    bandwidth = curves(p2p, "bandwidth")
    how = p2p_curves.grading(run, p2p, launches)
    out = []
    for config in sorted(set(latency) | set(bandwidth), key=_place_order):
        line = P2PLine(run_id, config, None, None, None, None)
        lat = latency.get(config) or {}
        size = small_size(lat)
        if size is not None:
            line.latency_us, line.latency_bytes = lat[size]["center"], float(size)
            cls = p2p_curves.grade(lat[size], config, "latency", size, how)
            if cls:
                line.unstable.append("latency " + p2p_curves.grade_text(lat[size], cls))
        bw = bandwidth.get(config) or {}
        if bw:
            best = max(bw, key=lambda s: bw[s]["center"])
            line.bandwidth_MBps, line.bandwidth_bytes = bw[best]["center"], float(best)
            largest = max(bw)
            if largest != best:
                line.largest_MBps, line.largest_bytes = bw[largest]["center"], float(largest)
            cls = p2p_curves.grade(bw[best], config, "bandwidth", best, how)
            if cls:
                line.unstable.append("peak bandwidth " + p2p_curves.grade_text(bw[best], cls))
        out.append(line)
    return out


def coll_lines(run_id: int, suite: str, samples: list[dict]) -> list[CollLine]:
    """Guideline checks of the coll table (one per row and mock-up with a verdict) per MPI
    library, grouped into findings."""
    coll = [s for s in samples if s.get("benchmark") == "coll"]
    if not coll:
        return []
    rows = verdicts.coll_table(coll)
    by_mpi: dict[str, CollLine] = {}
    shapes: dict[str, set[int]] = {}
    for row in rows:
        mpi = str(row.get("mpi", ""))
        line = by_mpi.setdefault(mpi, CollLine(run_id, suite or "coll", mpi, 0))
        line.family = int(row.get("checks_in_run") or 0)
        for alg in row.get("algorithms", []):
            verdict = row.get(f"{alg}_verdict")
            if alg == "native" or verdict is None:
                continue
            line.checks += 1
            shapes.setdefault(mpi, set()).add(int(row["n"]))
            if verdict == "violation" and not row.get("deterministic"):
                line.violations += 1
            elif verdict in verdicts.FASTER:
                line.suggested += 1
    for f in verdicts.findings(rows):
        by_mpi[f.mpi].findings.append(f)
    for mpi, line in by_mpi.items():
        line.one_per_node = shapes.get(mpi) == {1}
    return list(by_mpi.values())


def lanes_lines(run_id: int, samples: list[dict]) -> list[LanesLine]:
    rows = [r for r in verdicts.lanes_table(samples) if r["benchmark"] == "lane_pattern"]
    platforms = {
        verdicts.mpi_of(s): str((s.get("tags") or {}).get("platform") or "a platform file")
        for s in samples
        if (s.get("tags") or {}).get("simulated")
    }
    out: dict[str, LanesLine] = {}
    for r in rows:
        line = out.setdefault(r["mpi"], LanesLine(run_id, r["mpi"], None, None, None))
        if r.get("deterministic") and r["mpi"] in platforms:
            line.simulated = f"{platforms[r['mpi']]}, {r['N']} nodes x {r['n']} ranks"
        if r["k"] not in line.ks:
            line.ks.append(r["k"])
        if r["k"] > 1 and r.get("factor") and r["factor"] > (line.best_factor or 0):
            line.best_factor, line.k, line.count = r["factor"], r["k"], r["count"]
    return list(out.values())


# What people quote of a node, in the summary also where it has no yardstick: memory
# latency and the core clock have none, and a machine without likwid-bench, fio or iperf3
# still wants its memory, disk and network bandwidth. (workload, op, variant); None: any.
QUOTED = (
    ("mem_latency", None, None),
    ("cpu_clock", None, None),
    ("stream", "triad", None),
    ("mem_wss", "copy", None),
    ("disk", "read", "seq"),
    ("disk", "write", "seq"),
    ("net", "stream", None),
)


def node_lines(run_id: int, run: dict, samples: list[dict]) -> list[NodeLine]:
    """One line per (workload, op, variant, metric): at the most threads and the largest
    block, where a reference tool or a theoretical peak gives it a yardstick, and what
    people quote (QUOTED) with or without one."""
    node = [s for s in samples if node_table.is_node_sample(s)]
    if not node:
        return []
    peaks = [
        dict(n["data"], text=n.get("text", ""))
        for n in run.get("notes") or []
        if n.get("kind") == "peak"
    ]
    rows = node_table.node_table(node, peaks, run)
    levels = memory_level.levels_of(run.get("topology_xml"))
    chosen: dict[tuple, dict] = {}
    for r in rows:
        key = (r["benchmark"], r["workload"], r["op"], r["variant"], r["metric"], r.get("nodes"))
        rank = (r.get("concurrency") or 0, r.get("block") or 0)
        old = chosen.get(key)
        if old is None or rank > (old.get("concurrency") or 0, old.get("block") or 0):
            chosen[key] = r
    out = []
    for r in chosen.values():
        real_peak = r.get("peak_name") not in (None, node_table.MEASURED_BEST)
        quoted = any(
            r["workload"] == w and op in (None, r["op"]) and variant in (None, r["variant"])
            for w, op, variant in QUOTED
        )
        if node_table.restates_bandwidth(r):
            continue
        if not (r.get("reference_tool") or real_peak or quoted):
            continue
        line = NodeLine(
            run_id,
            str(r["workload"]),
            node_table.human_name(r),
            node_table.quoted(r),
            r["unit"],
            r.get("reference_tool"),
            r.get("eff_vs_reference"),
            r.get("peak_name") if real_peak else None,
            r.get("eff_vs_peak") if real_peak else None,
            cause=r.get("cause") if real_peak else None,
            beside=r["measured_beside"] if node_table.beside_drift(r) else None,
            changed=r.get("beside_changed"),
            ours_median=r.get("ours_compared_median"),
            ours_range=r.get("ours_range"),
            reference_median=r.get("reference_median"),
            reference_range=r.get("reference_range"),
            reference_cause=r.get("reference_cause"),
            discrepancy=bool(r.get("discrepancy")),
            modes=r.get("modes"),
            caveat=r.get("cache_note") or _not_dram(r, levels),
        )
        out.append(line)
    return sorted(out, key=lambda n: (_WORKLOAD_ORDER.get(n.workload, 99), n.name))


def _not_dram(row: dict, levels: list[memory_level.Level]) -> str | None:
    """For the memory latency line: what its working set was where it is not DRAM's by
    memory_level.dram_only (at least 4x the last-level cache a thread sees): a --quick
    chase stops at 2x hwloc's last-level cache."""
    if row["workload"] != "mem_latency" or not levels or not isinstance(row.get("block"), int):
        return None
    threads = row.get("concurrency") or 1
    if memory_level.dram_only(row["workload"], row["block"], threads, levels):
        return None
    llc = levels[-1]
    share = llc.size / min(threads, llc.cpus)
    return (
        f"not DRAM alone: working set only {row['block'] / share:.2g}x the {llc.name} a "
        f"thread sees ({format_bytes(share)}); DRAM needs {memory_level.DRAM_FACTOR}x"
    )


_WORKLOAD_ORDER = {
    w: i
    for i, w in enumerate(
        ("cpu_peak", "dgemm", "hpl", "cpu_clock", "stream", "mem_wss", "mem_latency", "disk", "net")
    )
}


def step_lines(run: dict, launches: list[dict]) -> list[StepLine]:
    rid, suite = int(run["id"]), str(run.get("suite", ""))
    out = []
    skipped = [str(n.get("text", "")) for n in run.get("notes") or [] if n.get("kind") == "skipped"]
    if skipped:
        out.append(StepLine(rid, suite, "skipped: " + "; ".join(skipped)))
    bad = [launch for launch in launches if launch.get("status") != "COMPLETED"]
    if bad:
        names = ", ".join(f"{b.get('name')} ({b.get('status')})" for b in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        out.append(StepLine(rid, suite, f"{len(bad)} launches did not complete: {names}{more}"))
    if run.get("status") not in ("ok", None):
        out.append(StepLine(rid, suite, f"the run ended {run.get('status')}"))
    return out
