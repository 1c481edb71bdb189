"""The node table: one row per measurement of the node suite, beside its reference tool and
its theoretical peak (the table users know from hand-written node reports).

Efficiency against the peak: best of our values / the peak (the best of N repetitions is
what STREAM and HPL report, over a stable machine; a bimodal series, analysis/modes.py, is
quoted by its two modes instead). Against a reference tool, like for like: median of ours
over the median of the tool's runs, each side's range and modes kept beside the ratio
(latency: the tool's median / ours, > 1: ours is faster); a ratio outside 0.9-1.1 gets a
cause from what was recorded, or "not explained" (reference_cause). Where ours was also
measured right before and after each run of the tool (samples with param `beside`,
suites/node.py), those values are "ours" for the comparison: the sweep ran earlier, and
a machine's rate can change in between. Memory rows carry the cache level their working
set fits (memory_level.py), disk rows a note where a cache above the device may have
given their rate (_disk_cache).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from hpcscope.analysis import clock_peaks, hpl_facts, machine_measured, memory_level, modes
from hpcscope.analysis import observations as obs
from hpcscope.formatting import format_bytes, format_number
from hpcscope.machine.peaks import Peak
from hpcscope.results.parsers import PARSERS

OURS = ("cpu", "mem", "disk", "net")
MEASURED_BEST = "measured best"  # peak_name of rows whose theoretical peak is unknown


def is_node_sample(s: dict) -> bool:
    """A sample of our node programs or of a reference tool measured beside them."""
    return s.get("benchmark") in OURS or s.get("benchmark") in PARSERS


# Keys that identify a measurement across tools (implementation details such as kernel,
# isa, engine or array size are not part of the identity).
MATCH_KEYS = (
    "workload",
    "op",
    "precision",
    "pattern",
    "protocol",
    "threads",
    "streams",
    "block",
    "bytes",
    "depth",
    "nodes",  # 2: the network test between two nodes (suites/node_net2.py)
    # the NUMA matrix (mem numa_bandwidth, numa_latency): one cell per (CPUs' node, memory's
    # node); without them the near and far cells of one thread count were one row
    "cpu_node",
    "mem_node",
    "load",  # the clock kernel between FP64 FMA work (bench/node/cpu.c) or alone
)
LOWER_IS_BETTER = {"latency"}


def _key(s: dict) -> tuple:
    p = s["params"]
    return (s["metric"],) + tuple(p.get(k) for k in MATCH_KEYS)


def numa_cell(p: dict) -> str | None:
    """'cpu node 0 -> memory node 1 (far)' for a NUMA matrix sample, else None."""
    if p.get("cpu_node") is None or p.get("mem_node") is None:
        return None
    where = "near" if p["cpu_node"] == p["mem_node"] else "far"
    return f"cpu node {p['cpu_node']} -> memory node {p['mem_node']} ({where})"


def _best(metric: str, values: list[float]) -> float:
    return min(values) if metric in LOWER_IS_BETTER else max(values)


def _peak_for(sample: dict, peaks: Sequence[Peak | dict]) -> dict | None:
    for p in peaks:
        p = asdict(p) if isinstance(p, Peak) else p
        m = p.get("match", {})
        if p.get("metric") != sample["metric"]:
            continue
        if all(sample["params"].get(k, sample.get(k)) == v for k, v in m.items()):
            return p
    return None


def _compare_with_tool(
    row: dict, values: list[float], tools: list[dict], beside: list[dict], ours: list[dict]
) -> None:
    """eff_vs_reference of a row, like for like: the median of ours over the median of the
    tool's runs (latency: the tool's median over ours, > 1: ours is faster), each side's
    range and modes beside it, and the cause where the ratio is outside 0.9-1.1.

    Ours is the samples measured right before and after each run of the tool (`beside`:
    one sample per launch; suites/node.py alternates them, at least 3 tool runs) where the
    run has them, else the sweep. Where the brackets' medians differ by more than
    BESIDE_DRIFT and their values do not overlap, the machine changed while the tool ran:
    beside_changed holds the medians in launch order and there is no ratio. Overlapping
    values are one noisy rate: a demo's TCP brackets read 24.2-26.3 and 25.8-32.6 Gbit/s
    (medians 14 % apart) where its sweep spread over 22.5-28.2."""
    metric = row["metric"]
    tool_values = [v for g in tools for v in g["values"]]
    runs = [g["values"] for g in sorted(beside, key=_launch_order) if g["values"]]
    medians = [statistics.median(v) for v in runs]
    apart = bool(medians) and min(medians) > 0 and max(medians) / min(medians) > 1 + BESIDE_DRIFT
    if apart and max(min(v) for v in runs) > min(max(v) for v in runs):
        row["beside_changed"] = medians
        row["reference_cause"] = (
            f"the machine changed while {row['reference_tool']} ran: ours read "
            + ", ".join(format_number(m, row["unit"]) for m in medians)
            + " (medians of the runs around it, in order); no ratio"
        )
        return
    near = [v for g in beside for v in g["values"]]
    mine = near or values
    if not mine or not tool_values:
        return
    row["measured_beside"] = statistics.median(near) if near else None
    row["ours_compared"] = "beside" if near else "sweep"
    row["ours_range"] = [min(mine), max(mine)]
    row["ours_compared_median"] = statistics.median(mine)
    row["reference_range"] = [min(tool_values), max(tool_values)]
    found = modes.two_modes(mine)
    row["ours_modes"] = [m.to_json() for m in found] if found else None
    found = modes.two_modes(tool_values)
    row["reference_modes"] = [m.to_json() for m in found] if found else None
    mid, ref_mid = statistics.median(mine), statistics.median(tool_values)
    if metric in LOWER_IS_BETTER:
        # tools report per-run means (fio) where we keep single I/Os: medians compare
        row["eff_vs_reference"] = ref_mid / mid if mid else None
        row["discrepancy"] = max(mine) < min(tool_values)
    else:
        row["eff_vs_reference"] = mid / ref_mid if ref_mid else None
        row["discrepancy"] = min(mine) > max(tool_values)
    row["reference_cause"] = reference_cause(row, ours, tools)


REFERENCE_AGREES = (0.9, 1.1)  # a ratio outside: its cause, or "not explained"
SIZE_KEYS = ("array_bytes", "file_bytes", "size")  # the working set a side ran on


def reference_cause(row: dict, ours: list[dict], tools: list[dict]) -> str | None:
    """Why ours and the tool differ, for a ratio outside REFERENCE_AGREES, from what the
    run recorded: a discrepancy (ours better beyond both ranges), bimodal values on one
    side, a different working set; else "not explained" and what to check. None inside."""
    eff = row.get("eff_vs_reference")
    if eff is None or REFERENCE_AGREES[0] <= eff <= REFERENCE_AGREES[1]:
        return None
    tool, unit = row["reference_tool"], row["unit"]
    ours_span = modes.span(row["ours_range"], unit)
    ref_span = modes.span(row["reference_range"], unit)
    causes = []
    if row.get("discrepancy"):
        causes.append(
            f"ours {eff:.0%} of {tool} beyond both ranges (ours {ours_span}, {tool} "
            f"{ref_span}): a discrepancy, not a result; check that both do the same work "
            "(kernel, working set, threads and their CPUs)"
        )
    for side, key in (("ours", "ours_modes"), (tool, "reference_modes")):
        if row.get(key):
            causes.append(
                f"{side} bimodal, {modes.text(row[key], unit)}: the medians compare "
                "whichever mode each side caught more often"
            )
    for k in SIZE_KEYS:
        a = {s["params"].get(k) for s in ours if s["params"].get(k) is not None}
        b = {s["params"].get(k) for s in tools if s["params"].get(k) is not None}
        if a and b and a.isdisjoint(b) and _apart(a, b):
            causes.append(
                f"a different working set: ours {', '.join(format_bytes(x) for x in sorted(a))}, "
                f"{tool} {', '.join(format_bytes(x) for x in sorted(b))}"
            )
    if causes:
        return "; ".join(causes)
    where = (
        "ours ran right before and after each run of the tool"
        if row.get("ours_compared") == "beside"
        else f"ours ran in the sweep, {tool} at another moment (no runs of ours beside it)"
    )
    check = (
        "run benchmarks/node_targets, which alternates them"
        if tool in ("likwid-bench", "fio", "iperf3")
        else "compare the two at the same problem size"
    )
    return f"not explained: {where}; check the tool's parameters against ours and {check}"


def _apart(a: set, b: set) -> bool:
    """Working sets further apart than 5 % (likwid-bench rounds an array to its threads)."""
    return abs(max(a) / max(b) - 1) > 0.05 if max(b) else True


def _modes_json(values: list[float]) -> list[dict] | None:
    found = modes.two_modes(values)
    return [m.to_json() for m in found] if found else None


def _launch_order(sample: dict) -> int:
    launch = sample.get("launch_id")
    return launch if isinstance(launch, int) else 0


def _sort_key(key: tuple) -> list[tuple[int, float, str]]:
    """Rows in the order of their identity, numbers numerically (4 KiB before 16 MiB)."""
    return [
        (0, float(x), "")
        if isinstance(x, (int, float)) and not isinstance(x, bool)
        else (1, 0.0, str(x))
        for x in key
    ]


def node_table(
    samples: list[dict], peaks: Sequence[Peak | dict], run: dict | None = None
) -> list[dict]:
    """Rows: workload, op, precision/pattern/protocol, concurrency, block, unit, measured
    (median and best of our values), reference (tool, median, best), peak (name, value,
    formula, or 'measured best' when unknown) and efficiencies best/peak and best/reference.
    `samples` are store dicts: benchmark, metric, unit, params, values, tags, launch_id.
    FLOP/s and op/s peaks are taken at the clock the samples measured (clock_peaks.py).
    `run` (its environment and notes) gives efficiency causes their recorded facts
    (machine_measured.run_facts); without it only the samples' own."""
    peaks = clock_peaks.at_measured_clock(peaks, samples)
    clocks = machine_measured.clocks(samples)
    ours: dict[tuple, list[dict]] = {}
    beside: dict[tuple, list[dict]] = {}
    refs: dict[tuple, list[dict]] = {}
    for s in samples:
        if s["benchmark"] in OURS and s["params"].get("beside"):
            beside.setdefault(_key(s), []).append(s)
        elif s["benchmark"] in OURS:
            ours.setdefault(_key(s), []).append(s)
        elif s["benchmark"] in PARSERS:
            refs.setdefault(_key(s), []).append(s)
    # Best measured per resource, used where the theoretical peak is unknown (labelled).
    best_seen: dict[tuple, float] = {}
    for group in ours.values():
        res = _resource(group[0])
        values = [v for g in group for v in g["values"]]
        best_seen[res] = max(best_seen.get(res, 0.0), max(values))

    rows = []
    for key, group in sorted(ours.items(), key=lambda kv: _sort_key(kv[0])):
        s = group[0]
        p = s["params"]
        metric = s["metric"]
        values = [v for g in group for v in g["values"]]
        best = _best(metric, values)
        row: dict[str, Any] = {
            "benchmark": s["benchmark"],
            "workload": p.get("workload"),
            "op": p.get("op"),
            "variant": p.get("precision")
            or p.get("pattern")
            or p.get("protocol")
            or numa_cell(p)
            or p.get("load"),
            "concurrency": p.get("threads", p.get("streams")),
            "block": p.get("block", p.get("bytes")),
            "nodes": p.get("nodes"),
            "metric": metric,
            "unit": s["unit"],
            "file_bytes": p.get("file_bytes"),  # disk: each concurrent I/O's file
            "measured_median": statistics.median(values),
            "measured_best": best,
            "n": len(values),
            # best to worst over the repetitions (max / min - 1): a noisy host shows here
            "spread": max(values) / min(values) - 1 if min(values) > 0 else None,
            "reference_tool": None,
            "reference_median": None,
            "reference_best": None,
            # two modes of our values (analysis/modes.py), None: one mode
            "modes": _modes_json(values),
            # the memory level a mem point's working set per thread fits (memory_level.py)
            "level": None,
            # a disk row whose rate may be a cache's above the device (disk_cache)
            "cache_note": None,
            # ours right before and after the tool (median), None without
            "measured_beside": None,
            # their medians before and after, where they disagree (then no ratio)
            "beside_changed": None,
            # what the ratio compares: ours "beside" the tool or from the "sweep", each
            # side's [min, max], our median, both sides' modes, ours better beyond both
            # ranges, and why the ratio is outside 0.9-1.1 (reference_cause)
            "ours_compared": None,
            "ours_compared_median": None,
            "ours_range": None,
            "reference_range": None,
            "ours_modes": None,
            "reference_modes": None,
            "discrepancy": None,
            "reference_cause": None,
            "eff_vs_reference": None,
            "peak_name": None,
            "peak": None,
            "peak_formula": None,
            "eff_vs_peak": None,
        }
        if key in refs:
            rv = [v for g in refs[key] for v in g["values"]]
            rbest = _best(metric, rv)
            tool = refs[key][0]["benchmark"]
            row.update(
                reference_tool=tool, reference_median=statistics.median(rv), reference_best=rbest
            )
            _compare_with_tool(
                row,
                values,
                refs[key],
                [g for g in beside.get(key, []) if g["params"]["beside"] == tool],
                group,
            )
        if metric == "iops":
            # IOPS have a peak only where the device (or the user) states one; otherwise
            # the row says "not stated" rather than dividing by the run's own best.
            peak = _peak_for(s, peaks)
            if peak and peak.get("value"):
                row.update(peak_name=peak["name"], peak=peak["value"], peak_formula=peak["formula"])
                row["eff_vs_peak"] = best / peak["value"]
            elif peak:
                row.update(peak_name=peak["name"], peak_formula=peak["formula"])
        elif "link_mbit" in p and metric == "throughput":
            _nic_peak(row, p, best)
        elif metric not in LOWER_IS_BETTER and metric != "frequency":
            # a working set in the caches is not bound by DRAM's peak (see _resource)
            caches = p.get("workload") == "mem_wss"
            peak = None if caches else _peak_for({**s, "benchmark": s["benchmark"]}, peaks)
            if peak and s["benchmark"] == "cpu":
                peak = clock_peaks.for_threads(peak, p.get("threads"), clocks)
            if peak and peak.get("value"):
                row.update(peak_name=peak["name"], peak=peak["value"], peak_formula=peak["formula"])
            elif s["benchmark"] == "disk":
                # no "measured best" for a disk: its best is a write, which a cache above
                # the device (the host's write-back) may have taken; read then showed as
                # "25 % of peak" of a 6.4 GB/s write on a virtio disk
                row.update(peak_name="disk", peak_formula=DISK_NO_PEAK)
            elif peak is not None or s["benchmark"] in ("mem", "net"):
                seen = best_seen[_resource(s)]
                row.update(
                    peak_name=MEASURED_BEST,
                    peak=seen,
                    peak_formula="theoretical peak unknown: best measured value of this "
                    "resource in this run",
                )
            if row["peak"]:
                row["eff_vs_peak"] = best / row["peak"]
        rows.append(row)
    rows += _reference_only_rows(ours, refs, peaks)
    _memory_levels(rows, run)
    _disk_cache(rows, run)
    scaling = machine_measured.core_scaling(samples)
    facts = machine_measured.run_facts(run, samples)
    for row in rows:
        row["cause"] = machine_measured.efficiency_cause(row, scaling, facts)
    return rows


DISK_NO_PEAK = (
    "no rated bandwidth stated by the device; give it with --peak disk=2GB/s (not the "
    "best measured value: the best is a write, which a cache above the device may take)"
)


def _memory_levels(rows: list[dict], run: dict | None) -> None:
    """Each working-set and pointer-chase row's level (L1d, L2, L3, DRAM) from the run's
    recorded topology (memory_level.py); STREAM's and the block sweep's arrays are sized
    beyond the caches by their own rules and keep None."""
    levels = memory_level.levels_of((run or {}).get("topology_xml"))
    for r in rows:
        if r["benchmark"] == "mem" and r["workload"] in ("mem_wss", "mem_latency"):
            if isinstance(r.get("block"), (int, float)) and levels:
                r["level"] = memory_level.level(
                    r["workload"], r["block"], r.get("concurrency") or 1, levels
                )


STRUCTURED = ("modes", "ours_modes", "reference_modes", "ours_range", "reference_range")


def flat(row: dict) -> dict:
    """The row for a table cell or CSV: the ranges as '45.1-58.3 GB/s' and the modes as
    their sentence (analysis/modes.py), never a Python list's text."""
    out = dict(row)
    for key in STRUCTURED:
        value = row.get(key)
        if not value:
            out[key] = None
        elif key.endswith("modes"):
            out[key] = modes.text(value, row["unit"])
        else:
            out[key] = modes.span(value, row["unit"])
    return out


def disk_facts_of(run: dict | None) -> dict | None:
    """The disk facts a node run recorded (Note data "disk_facts", machine/disk_facts.py)."""
    for n in (run or {}).get("notes") or []:
        data = n.get("data") if isinstance(n, dict) else None
        if isinstance(data, dict) and isinstance(data.get("disk_facts"), dict):
            return data["disk_facts"]
    return None


WRITE_OVER_READ = 2.0  # a virtual disk writing this much faster than it reads: a cache


def _disk_cache(rows: list[dict], run: dict | None) -> None:
    """cache_note on every disk row whose rate may be a cache's above the device: its file
    fits in RAM (MemTotal), or, on a virtual disk, sequential writes ran more than
    WRITE_OVER_READ x the reads at the same block and threads (the host's write-back
    cache takes what O_DIRECT sends past the guest's)."""
    facts = disk_facts_of(run) or {}
    ram = facts.get("mem_total")
    disk = [r for r in rows if r["benchmark"] == "disk"]
    seq = {
        (r["op"], r.get("block"), r.get("concurrency")): r["measured_median"]
        for r in disk
        if r["metric"] == "bandwidth" and r["variant"] == "seq"
    }
    for r in disk:
        why = []
        size = r.get("file_bytes")
        if isinstance(size, (int, float)) and ram and size * (r.get("concurrency") or 1) <= ram:
            files = r.get("concurrency") or 1
            why.append(
                f"its {files} file{'s' if files > 1 else ''} of {format_bytes(size)} fit in "
                f"RAM ({format_bytes(ram)})"
            )
        write = seq.get(("write", r.get("block"), r.get("concurrency")))
        read = seq.get(("read", r.get("block"), r.get("concurrency")))
        if facts.get("virtual") and write and read and write > WRITE_OVER_READ * read:
            why.append(
                f"writes ran {write / read:.1f}x the reads on a virtual ({facts.get('kind')}) disk"
            )
        if why:
            r["cache_note"] = "a cache above the device (host write-back?): " + "; ".join(why)
            cause = r.get("reference_cause") or ""
            if cause.startswith("not explained"):
                # a recorded fact that explains it: the tool and ours met the host's
                # cache in different states (fio runs apart from ours, docs/node.md)
                r["reference_cause"] = (
                    f"{r['cache_note']}: ours (in the sweep) and {r['reference_tool']} (apart "
                    "from it) met that cache in different states; check with "
                    "benchmarks/node_targets, which alternates them"
                )


def _nic_peak(row: dict, p: dict, best: float) -> None:
    """Two-node network rows: the peak is the stated speed of the client's device toward
    the server (sysfs), or none when the device states none (loopback, veth)."""
    dev, mbit = p.get("link_dev") or "unknown", p.get("link_mbit")
    if mbit and mbit > 0:
        row.update(
            peak_name=f"NIC {dev}",
            peak=float(mbit),
            peak_formula=f"stated speed of {dev}: {mbit} Mbit/s (/sys/class/net/{dev}/speed)",
            eff_vs_peak=best / mbit,
        )
    else:
        row.update(
            peak_name=f"NIC {dev}",
            peak_formula=f"no stated speed: {dev} is a virtual device (loopback, veth, "
            "bridge) or reports none; give it with --peak net=10Gbit/s",
        )


def _reference_only_rows(
    ours: dict[tuple, list[dict]], refs: dict[tuple, list[dict]], peaks: Sequence[Peak | dict]
) -> list[dict]:
    """Rows for what only a reference tool measures (HPL through hpcc, beside our DGEMM):
    the tool's values as measured, with the theoretical peak they divide by."""
    rows = []
    for key, group in sorted(refs.items(), key=lambda kv: [str(x) for x in kv[0]]):
        if key in ours:
            continue
        s = group[0]
        p = s["params"]
        if s["benchmark"] != "hpcc":
            continue  # the other tools only stand beside one of our rows
        values = [v for g in group for v in g["values"]]
        best = _best(s["metric"], values)
        peak = _peak_for(s, peaks)
        value = peak.get("value") if peak else None
        name, formula = (peak["name"], peak["formula"]) if peak and value else (None, None)
        rows.append(
            {
                "benchmark": s["benchmark"],
                "workload": p.get("workload"),
                "op": f"{p.get('op')} N={p.get('n')}" if p.get("n") else p.get("op"),
                "variant": p.get("precision"),
                "concurrency": p.get("threads"),
                "block": None,
                "nodes": None,
                "metric": s["metric"],
                "unit": s["unit"],
                "measured_median": statistics.median(values),
                "measured_best": best,
                "n": len(values),
                "reference_tool": None,
                "reference_median": None,
                "reference_best": None,
                "eff_vs_reference": None,
                "peak_name": name,
                "peak": value,
                "peak_formula": formula,
                "eff_vs_peak": best / value if value else None,
                "hpl": hpl_facts.hpl_facts(p, best, s.get("tags"))
                if p.get("workload") == "hpl"
                else None,
            }
        )
    return rows


def row_label(row: dict) -> str:
    """'cpu fp64 fma 2 threads' style: what a row measured, for figures and sentences."""
    parts = [row["benchmark"], row.get("workload"), row.get("op"), row.get("variant")]
    if row.get("concurrency") is not None:
        unit = "stream" if row["benchmark"] in ("net", "iperf3") else "thread"
        plural = "" if row["concurrency"] == 1 else "s"
        parts.append(f"{row['concurrency']} {unit}{plural}")
    if row.get("block") is not None:
        parts.append(f"{row['block']} B")
    if row.get("nodes"):
        parts.append(f"between {row['nodes']} nodes")
    return " ".join(str(p) for p in parts if p not in (None, ""))


def _resource(s: dict) -> tuple:
    """What a 'measured best' stands in for the unknown peak of: the benchmark's metric,
    where the two-node network is another resource than loopback, and memory's working-set
    sweep (caches: a 4 KiB copy runs at 10-20x DRAM's rate) another than its arrays of
    DRAM size (STREAM, block copies), which it made look 5 % of their peak."""
    p = s["params"]
    return (s["benchmark"], s["metric"], s["unit"], p.get("nodes"), p.get("workload") == "mem_wss")


def _where(row: dict) -> str:
    """'L2 cache', 'DRAM', or 'memory' where the level is not known."""
    return memory_level.name(row.get("level") or "") or "memory"


def human_name(row: dict) -> str:
    """A node-table row as a person names it: 'FP64 FMA, 2 threads', 'STREAM triad, 2
    threads', 'disk sequential read, 1 MiB blocks'."""
    workload, op, variant = row.get("workload"), row.get("op"), row.get("variant")
    if workload == "hpl" and row.get("hpl"):
        return hpl_facts.label(row["hpl"])  # N, NB, P x Q, time; a quick one says so
    names = {
        "cpu_peak": f"{str(variant or '').upper()} {str(op or '').upper()} peak kernel",
        "dgemm": "DGEMM (OpenBLAS)",
        "hpl": "HPL",
        "stream": f"STREAM {op}",
        # the level the working set fits where the run recorded its caches (_memory_levels)
        "mem_wss": f"{_where(row)} {op}",
        "mem_block": f"memory {variant} {op}",
        "mem_latency": f"{_where(row)} latency",
        "cpu_clock": f"core clock{f' between {str(variant).upper()} work' if variant else ''}",
        "disk": f"disk {'sequential' if variant == 'seq' else 'random'} {op}",
        "net": f"{str(variant or '').upper()} {str(op or '').replace('_', '-')}",
    }
    if str(workload) not in names:
        return row_label(row)  # already says threads, block and nodes
    name = names[str(workload)]
    if row.get("metric") in ("iops", "latency") and workload == "disk":
        name += f" {row['metric'] if row['metric'] == 'latency' else 'IOPS'}"
    details = []
    if row.get("concurrency") is not None and workload != "mem_latency":
        unit = "stream" if row.get("benchmark") == "net" else "thread"
        details.append(f"{row['concurrency']} {unit}{'' if row['concurrency'] == 1 else 's'}")
    if row.get("block") is not None and workload in (
        "disk",
        "mem_block",
        "net",
        "mem_wss",
        "mem_latency",
    ):
        what = "working set" if workload in ("mem_wss", "mem_latency") else "blocks"
        details.append(f"{format_bytes(row['block'])} {what}")
    if row.get("nodes"):
        details.append(f"between {row['nodes']} nodes")
    return name + (f", {', '.join(details)}" if details else "")


# Ours in the sweep and ours beside the reference tool further apart than this: the
# machine's rate changed between the two, and every view of the row says so.
BESIDE_DRIFT = 0.10


def quoted(row: dict) -> float:
    """The value a row is quoted by: the best of our values (STREAM's and HPL's rule, over
    a stable machine), for latencies and for a bimodal series (row["modes"]: the machine
    was not stable) the median; views then give the modes (quoted_text)."""
    if row["metric"] in LOWER_IS_BETTER or row.get("modes"):
        return row["measured_median"]
    return row["measured_best"]


def quoted_text(row: dict) -> str:
    """'86.5 GB/s', or for a bimodal series 'two modes: 50 GB/s (60% of 50, 45.6-57.8
    GB/s) and 86.5 GB/s (40% of 50, 83.1-87.8 GB/s)' instead of its best value."""
    if row.get("modes"):
        return modes.text(row["modes"], row["unit"])
    return format_number(quoted(row), row["unit"])


def changed_text(row: dict) -> str:
    """Our runs around the tool's, in launch order, where they disagree (beside_changed):
    '21.2 Gbit/s, 24.5 Gbit/s and 21.9 Gbit/s'. All of them: with the tool run several times
    between ours, the first and last alone can look alike while the middle ones moved."""
    values = [format_number(v, row["unit"]) for v in row["beside_changed"]]
    return ", ".join(values[:-1]) + f" and {values[-1]}" if len(values) > 1 else values[0]


def beside_drift(row: dict) -> float | None:
    """Median of the sweep over the median right beside the tool, where they differ by
    more than BESIDE_DRIFT, else None (medians on both sides: like for like)."""
    near = row.get("measured_beside")
    sweep = row.get("measured_median")
    if not near or not sweep:
        return None
    ratio = sweep / near
    return ratio if abs(ratio - 1) > BESIDE_DRIFT else None


def restates_bandwidth(row: dict) -> bool:
    """Sequential disk IOPS and latency at one block size are its bandwidth in other
    units: summaries and highlights show the bandwidth alone."""
    return row["workload"] == "disk" and row["metric"] != "bandwidth" and row["variant"] == "seq"


def with_theoretical_peak(rows: list[dict]) -> list[dict]:
    """Rows whose efficiency is against a theoretical peak (not the run's best value)."""
    return [
        r for r in rows if r.get("eff_vs_peak") is not None and r.get("peak_name") != MEASURED_BEST
    ]


def efficiency_observations(rows: list[dict]) -> list[obs.Observation]:
    """One sentence per row with a theoretical peak, for our value and for the reference
    tool's, by the table's own efficiency rule (best / peak)."""
    found = []
    for r in with_theoretical_peak(rows):
        measured = [(human_name(r), r["measured_best"])]
        if r.get("reference_best") and r["metric"] not in LOWER_IS_BETTER:
            label = f"{r['reference_tool']} beside {human_name(r)}"
            measured.append((label, r["reference_best"]))
        for subject, value in measured:
            o = obs.efficiency(
                subject,
                value,
                r["peak"],
                r["unit"],
                r.get("peak_name") or "",
                r.get("peak_formula") or "",
                r.get("cause") if subject == human_name(r) else None,
            )
            if o:
                found.append(o)
    return found
