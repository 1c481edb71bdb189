"""The node suite: CPU, memory, disk and network of one node, beside the standard tools.

plan() turns options into Jobs for our four programs (bench/node/{cpu,mem,disk,net}.c),
reference Jobs (likwid-bench, fio, iperf3: node_refs.py) with the same parameters, and
Notes: one "peak" per theoretical peak (machine/peaks.py, formula included) and one
"skipped" per thing that cannot run here, with the reason.

outputs() writes the node table (hpcscope.analysis.node_table) and the figures.

Budget on a quiet 2-core VM: --quick about 1 min (hpcc, which always runs its other tests
beside HPL, takes about half), full about 10 min (disk and hpcc dominate).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from hpcscope.analysis import node_table
from hpcscope.figures import node as node_figures
from hpcscope.formatting import format_bytes
from hpcscope.machine import disk_facts, node_facts
from hpcscope.machine.peaks import node_peaks, parse_cpuinfo
from hpcscope.plan.job import Job
from hpcscope.suites import (
    node_alloc,
    node_hpl,
    node_net2,
    node_parts,
    node_precision,
    node_refs,
)
from hpcscope.suites.base import Note, PlanContext, SuitePlan

OURS = node_table.OURS


def _ncores(topology: Any) -> int:
    cores = getattr(topology, "cores", None)
    if isinstance(cores, list) and cores:
        return len(cores)
    return os.cpu_count() or 1


def _llc_total(topology: Any) -> int:
    try:
        return sum(c.size for c in topology.last_level_caches()) or 32 << 20
    except AttributeError:
        return 32 << 20


def _threads(opts: dict, n: int, quick: bool) -> list[int]:
    if opts.get("threads"):
        return sorted({int(t) for t in opts["threads"]})
    return sorted({1, n}) if quick else list(range(1, n + 1))


def numa_matrix_notes(topology: Any, threads: list[int]) -> list[Note]:
    """What the mem program's NUMA near/far matrix will and will not measure on this
    topology, said in the plan: one NUMA node has nothing remote; a thread count above a
    node's CPUs is skipped on that node (bench/node/mem.c run_numa does the same)."""
    nodes = list(getattr(topology, "numa_nodes", []) or [])
    if len(nodes) < 2:
        return [
            Note(
                "skipped", f"memory NUMA matrix: {max(len(nodes), 1)} NUMA node, nothing is remote"
            )
        ]
    with_cpus = [n for n in nodes if getattr(n, "cpus", None)]
    notes = [
        Note(
            "info",
            f"memory NUMA matrix: threads on each of {len(with_cpus)} NUMA node(s) with CPUs x "
            f"memory on each of {len(nodes)}, at {', '.join(map(str, threads))} thread(s)",
            {"numa_nodes": len(nodes), "cpu_nodes": len(with_cpus), "threads": threads},
        )
    ]
    for t in threads:
        small = [n for n in with_cpus if len(n.cpus) < t]
        if small:
            listed = ", ".join(f"{n.os_index} ({len(n.cpus)} CPUs)" for n in small)
            notes.append(
                Note(
                    "skipped",
                    f"memory NUMA matrix: {t} threads on NUMA node(s) {listed}: more threads "
                    "than the node has CPUs",
                    {"threads": t, "numa_nodes": [n.os_index for n in small]},
                )
            )
    return notes


# --quick caps each STREAM array here: STREAM's rule (4 x the last-level caches) asks for
# 1.9 GiB arrays where a VM reports its host's 480 MiB L3, and initialising and sweeping
# three of them took 40 of the demo's 120 s of node measurements (and 20 s more in
# likwid-bench's reference run, which uses the same size). Full runs keep the rule.
QUICK_ARRAY_CAP = 512 << 20


def _llc_for_arrays(topology: Any, opts: dict, out: SuitePlan, mem: bool = True) -> int:
    """The last-level cache STREAM's arrays must exceed: hwloc's, or the one this host's
    newest node run measured where that disagrees (`usable_llc`, set by the CLI from the
    store: machine_measured.usable_llc) and hwloc still reports the same size; a note says
    which (`mem`: the memory part runs; the likwid references alone need no note). The
    pointer chase keeps sweeping past hwloc's size, so the next run checks it."""
    reported = _llc_total(topology)
    usable = opts.get("usable_llc")
    if not isinstance(usable, dict):
        return reported
    try:
        instances = topology.last_level_caches()
        same = bool(instances) and usable.get("reported") == max(c.size for c in instances)
    except (AttributeError, TypeError):
        return reported
    if not same or not isinstance(usable.get("bytes"), int) or usable["bytes"] <= 0:
        return reported
    measured = usable["bytes"] * len(instances)
    if not mem:
        return measured
    out.notes.append(
        Note(
            "info",
            f"memory: STREAM arrays sized from the last-level cache as run {usable.get('run_id')} "
            f"measured it (memory latency from {format_bytes(usable['bytes'])} per "
            f"{usable.get('level', 'cache')}, hwloc reports {format_bytes(usable['reported'])})",
            {"usable_llc": usable, "llc_bytes": measured, "reported_llc_bytes": reported},
        )
    )
    return measured


def stream_array_bytes(llc: int, quick: bool, mem: bool, out: SuitePlan) -> int:
    """Bytes per STREAM array: 4 x the last-level caches, at least 64 MiB; with --quick
    at most QUICK_ARRAY_CAP, with a warning naming what the rule wanted."""
    rule = max(4 * llc, 64 << 20)
    if not quick or rule <= QUICK_ARRAY_CAP:
        return rule
    if mem:
        out.notes.append(
            Note(
                "warning",
                f"memory (--quick): STREAM arrays of {format_bytes(QUICK_ARRAY_CAP)} each, "
                f"below STREAM's rule of 4 x the last-level cache "
                f"({format_bytes(rule)}): part of the traffic may hit the cache; a run "
                "without --quick sizes them by the rule",
                {"array_bytes": QUICK_ARRAY_CAP, "rule_bytes": rule},
            )
        )
    return QUICK_ARRAY_CAP


def disk_note(
    out: SuitePlan, ctx: PlanContext, disk: dict, disk_dir: str | None, quick: bool
) -> None:
    """The facts under --disk-dir (machine/disk_facts.py) as a Note with data
    {"disk_facts": ...}, read by every view of the disk rows (node_table._disk_cache),
    and the throughput files grown past RAM where node_parts.outgrow_ram allows (`disk`
    changed in place; fio runs the same size). A plan for other nodes (--on slurm) does
    not read this machine's disk: it says so."""
    if ctx.node_facts is not None:
        out.notes.append(
            Note(
                "info",
                "disk: the compute node's device and file system are not read at plan time "
                "(the disk lines cannot say whether a cache served them)",
            )
        )
        return
    facts = disk_facts.facts(disk_dir)
    size, why = node_parts.outgrow_ram(disk, facts, quick)
    disk["size"] = size
    out.notes.append(
        Note(
            "info",
            f"disk: {disk_facts.text(facts)}; throughput files {format_bytes(size)} each: {why}",
            {"disk_facts": facts, "file_bytes": size},
        )
    )


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    opts = dict(opts)
    parts = {k: bool(opts.get(k)) for k in OURS}
    if not any(parts.values()):
        parts = {k: True for k in OURS}
    quick = bool(opts.get("quick") or ctx.quick)
    if opts.get("every_node"):  # every node of an allocation at once (issue 45 part 3)
        return node_alloc.plan(ctx, opts, parts, quick)
    n = _ncores(ctx.topology)
    threads = _threads(opts, n, quick)
    tl = ",".join(map(str, threads))
    out = SuitePlan()
    tags = {"suite": "node", "quick": quick}

    # The facts of the nodes the plan is for: a SLURM compute node's (probe, cache or
    # --topology/--cpuinfo files), else this machine's. Their origin is in every peak.
    facts = ctx.node_facts or node_facts.local()
    flags = parse_cpuinfo(facts.cpuinfo_text).flags
    peaks = node_peaks(facts, ctx.topology, opts.get("peaks") or {})
    for p in peaks:
        value = f"{p.value:.4g} {p.unit}" if p.value is not None else "unknown"
        out.notes.append(Note("peak", f"{p.name} peak: {value} = {p.formula}", asdict(p)))
    if max(threads) > n:
        out.notes.append(
            Note(
                "warning",
                f"{max(threads)} threads on {n} cores: threads share cores and timings mean little",
            )
        )

    def job(prog: str, args: list[str], timeout: float) -> Job:
        return Job(
            suite="node",
            name=f"node/{prog}",
            program=[str(ctx.binary(prog, None))] + args,
            tags={**tags, "part": prog},
            timeout_s=timeout,
        )

    # Measured to a precision (suites/node_precision.py): the programs' --reps is the cap,
    # and a repetition is shorter where its length is free.
    adaptive = node_precision.settings(opts, quick)
    if adaptive:
        out.notes.append(node_precision.plan_note(adaptive, parts))

    def to_precision(part: str) -> list[str]:
        return node_precision.program_args(adaptive, part, parts) if adaptive else []

    reps = node_precision.CAP if adaptive else 3 if quick else 5
    seconds = node_precision.repetition_s("cpu", quick) if adaptive else 0.1 if quick else 0.2
    if parts["cpu"]:
        kernels = ["clock", "fp64", "fp32", "dgemm"] + (
            [] if quick else ["int8", "int16", "int32", "int64"]
        )
        for prec, flag in (("fp16", "avx512_fp16"), ("bf16", "avx512_bf16")):
            if flag in flags:
                kernels.append(prec)
            elif not facts.flags_known:
                why = f"the ISA flags of the CPU are not known ({facts.cpu_origin})"
                out.notes.append(Note("skipped", f"cpu {prec}: {why}"))
            else:
                out.notes.append(Note("skipped", f"cpu {prec}: the CPU has no {flag} instructions"))
        out.jobs.append(
            job(
                "cpu",
                [
                    f"--kernels={','.join(kernels)}",
                    f"--threads={tl}",
                    f"--seconds={seconds}",
                    f"--reps={reps}",
                    f"--dgemm-n={1000 if quick else 3000}",
                ]
                + to_precision("cpu"),
                300,
            )
        )
    array_bytes = stream_array_bytes(
        _llc_for_arrays(ctx.topology, opts, out, parts["mem"]), quick, parts["mem"], out
    )
    if parts["mem"]:
        repeat = (
            (node_precision.CAP + 1, node_precision.repetition_s("chase", quick))
            if adaptive
            else None
        )
        args = node_parts.mem_args(
            opts, quick, n, _llc_total(ctx.topology), tl, array_bytes, repeat
        )
        out.jobs.append(job("mem", args + to_precision("mem"), 300))
        out.notes.extend(numa_matrix_notes(ctx.topology, opts.get("numa_threads") or [1]))
    disk_dir = opts.get("disk_dir")
    disk = node_parts.disk_plan(opts, quick, n)
    disk_iops = node_parts.disk_iops_plan(opts, quick, n)
    if parts["disk"]:
        disk_note(out, ctx, disk, disk_dir, quick)
    if parts["disk"]:
        ours = adapted(disk, "disk", adaptive, quick)
        out.jobs.append(
            job("disk", node_parts.disk_args(ours, disk_dir) + to_precision("disk"), 900)
        )
        if disk_iops:
            ours = adapted(disk_iops, "disk", adaptive, quick)
            iops_job = job("disk", node_parts.disk_args(ours, disk_dir) + to_precision("disk"), 900)
            iops_job.name = "node/disk/iops"
            out.jobs.append(iops_job)
    net = node_parts.net_plan(opts, quick, n)
    if parts["net"]:
        ours = adapted(net, "net", adaptive, quick)
        out.jobs.append(job("net", node_parts.net_args(ours) + to_precision("net"), 300))
        if ctx.nodes_available >= 2:  # SLURM with --nodes 2 or more
            binary = str(ctx.binary("net", None))
            two = node_parts.net_args(ours) + to_precision("net")
            out.jobs.append(node_net2.slurm_job(binary, two, tags))
            out.notes.append(
                Note(
                    "info",
                    "network: also between two nodes (server on the first, client "
                    "on the second; peak from the client NIC's stated speed)",
                )
            )
    fp64 = next((p.value for p in peaks if p.name == "fp64"), None)
    disks = [d for d in (disk, disk_iops) if d]
    _plan_refs(out, parts, quick, flags, threads, array_bytes, disks, net, opts, tags, fp64)
    out.jobs = _bracket_refs(out.jobs, job, array_bytes, net)
    return out


# Repetitions of each of our runs around a reference run, the first a warm-up: STREAM's
# take about 0.1 s each at 512 MiB arrays (plus their first touch), a TCP or UDP point's
# the net plan's seconds each.
BESIDE_REPS = {"mem": 6, "net": 3}
# Runs of the tool (one run each) alternating with ours where the tool is cheap (likwid-
# bench's STREAM, iperf3): ours, tool, ours, tool, ours, tool, ours. A slow phase that
# lasts exactly while one run of the tool runs then shows in that run alone, and the
# ratio compares medians over several moments on both sides (node_table).
ALTERNATE = 3


def beside_point(ref: Job, array_bytes: int, net: dict) -> tuple[str, list[str]] | None:
    """Our program and its arguments for the one point a reference job measures (named
    by node_refs: ref/likwid/stream_<isa>/t<threads>, ref/iperf3/<protocol>/<block>/
    P<streams>), or None for references compared with the sweep (likwid's copy and FP64,
    hpcc, fio: our disk runs before and after fio would change the host's write-back
    state it measures)."""
    parts = ref.name.split("/")
    if len(parts) == 4 and parts[1] == "likwid" and parts[2].startswith("stream"):
        threads = parts[3].removeprefix("t")
        if threads.isdigit():
            return "mem", [
                "--tests=stream",
                f"--threads={threads}",
                f"--array-bytes={array_bytes}",
                f"--reps={BESIDE_REPS['mem']}",
            ]
    if len(parts) == 5 and parts[1] == "iperf3" and parts[3].isdigit():
        streams = parts[4].removeprefix("P")
        if parts[2] in ("tcp", "udp") and streams.isdigit():
            return "net", [
                f"--tests={parts[2]}",
                f"--streams={streams}",
                f"--blocks={parts[3]}",
                f"--seconds={net['seconds']}",
                f"--reps={BESIDE_REPS['net']}",
            ]
    return None


def _bracket_refs(
    jobs: list[Job], job: Callable[[str, list[str], float], Job], array_bytes: int, net: dict
) -> list[Job]:
    """Every reference job beside_point knows becomes ALTERNATE runs of the tool, each
    between two short runs of our program at the same point (samples with param
    beside=<tool>): ours 1, tool r1, ours 2, tool r2, ... ours ALTERNATE + 1, so the node
    table compares the tool with ours measured seconds from each of its runs. Why: a VM's
    rates change with where its host puts it; on a 2-vCPU EPYC guest our STREAM sweep read
    86 GB/s and likwid-bench 46 GB/s 10 s later (186 %), a rerun 49 and 49 (101 %). The
    reference job given here runs the tool once (_plan_refs: one repetition)."""
    out = []
    for ref in jobs:
        point = beside_point(ref, array_bytes, net)
        if point is None:
            out.append(ref)
            continue
        program, args = point
        tool = ref.tags.get("reference", "")

        where = ref.name.removeprefix("ref/")
        out.append(_beside_run(job, program, args, tool, f"{where}/1"))
        for i in range(1, ALTERNATE + 1):
            out.append(dataclasses.replace(ref, name=f"{ref.name}/r{i}", tags=dict(ref.tags)))
            out.append(_beside_run(job, program, args, tool, f"{where}/{i + 1}"))
    return out


def _beside_run(
    job: Callable[[str, list[str], float], Job], program: str, args: list[str], tool: str, at: str
) -> Job:
    """One of our short runs beside a reference tool's (param and tag beside=<tool>)."""
    run = job(program, args + [f"--beside={tool}"], 120)
    run.name = f"node/{program}/beside-{at}"
    run.tags["beside"] = tool
    return run


def adapted(point_plan: dict, part: str, adaptive: dict | None, quick: bool) -> dict:
    """A disk or net plan with the repetition length and cap of a run to a precision
    (the reference tools keep the fixed plan's)."""
    if not adaptive:
        return point_plan
    seconds = node_precision.repetition_s(part, quick)
    return {**point_plan, "seconds": seconds, "reps": node_precision.CAP}


def _plan_refs(
    out: SuitePlan,
    parts: dict,
    quick: bool,
    flags: set[str],
    threads: list[int],
    array_bytes: int,
    disks: list[dict],
    net: dict,
    opts: dict,
    tags: dict,
    fp64_peak: float | None,
) -> None:
    reps = 2 if quick else 3
    if parts["cpu"] or parts["mem"]:
        if note := node_refs.missing("likwid-bench"):
            out.notes.append(note)
        else:
            # STREAM: one likwid-bench run a job, ALTERNATE jobs alternating with ours
            # (_bracket_refs); FP64 keeps its repetitions in one job
            for j in node_refs.likwid_jobs(
                flags, [max(threads)] if quick else threads, array_bytes, reps, tags, 1
            ):
                is_stream = j.name.startswith("ref/likwid/stream")
                if parts["mem"] if is_stream else parts["cpu"]:
                    out.jobs.append(j)
            if parts["mem"]:
                wss = opts.get("mem_blocks") or (
                    node_parts.MEM_BLOCKS_QUICK if quick else node_parts.MEM_BLOCKS_FULL
                )
                # --quick: at the most threads only, as the other likwid references (each
                # likwid-bench start sleeps 1 s calibrating its timer: 4 s a thread count)
                copy_threads = [max(threads)] if quick else threads
                out.jobs.extend(node_refs.likwid_copy_jobs(flags, copy_threads, wss, reps, tags))
    if parts["cpu"]:
        if note := node_refs.missing("hpcc"):
            out.notes.append(note)
        else:
            hpl = node_hpl.plan_hpl(quick, max(threads), fp64_peak, tags)
            out.notes.append(Note("info", hpl.rule))
            out.jobs.append(hpl.job)
    if parts["disk"]:
        if note := node_refs.missing("fio"):
            out.notes.append(note)
        else:
            rws = {"seqwrite": "write", "seqread": "read", "randread": "randread"}
            rws["randwrite"] = "randwrite"
            for d in disks:
                tests = list(rws) if d["tests"] == "all" else d["tests"].split(",")
                blocks = d["blocks"]
                if d["tests"] == "all" and not opts.get("disk_blocks"):
                    # full default: fio at 4 KiB and 1 MiB only (its runs cost as ours)
                    blocks = [b for b in blocks if b in (4096, 1 << 20)]
                points = [(rws[t], b, k) for t in tests for b in blocks for k in d["depths"]]
                out.jobs.extend(
                    node_refs.fio_jobs(
                        points, d["size"], d["seconds"], reps, opts.get("disk_dir"), tags
                    )
                )
    if parts["net"]:
        if note := node_refs.missing("iperf3"):
            out.notes.append(note)
        else:
            points = [("tcp", b, s) for b in net["blocks"] for s in net["streams"]]
            if "udp" in net["tests"]:
                fits = [b for b in net["blocks"] if b <= 65507]  # one datagram
                points += [("udp", max(fits), 1)] if fits else []
            # one iperf3 run a job: ALTERNATE jobs alternate with ours (_bracket_refs)
            out.jobs.extend(node_refs.iperf3_jobs(points, 1, 1, tags))


def outputs(store, run_id: int, out_dir):
    """The node table (measured x reference x peak x efficiencies) and the figures."""
    import csv

    from hpcscope import safe_write
    from hpcscope.formatting import csv_cell
    from hpcscope.machine.topology import Topology

    run = store.run(run_id)
    samples = store.samples(run_id)
    written = node_alloc.write_outputs(samples, out_dir)  # every node at once: node x rate
    samples = [s for s in samples if not (s.get("tags") or {}).get("node")]
    peaks = [n["data"] for n in run.get("notes") or [] if n["kind"] == "peak"]
    rows = node_table.node_table(samples, peaks, run)
    if rows:
        columns = list(rows[0].keys())
        with safe_write.open_for_write(out_dir / "node_table.csv", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(
                {k: csv_cell(v) for k, v in node_table.flat(row).items()} for row in rows
            )
        written.append(out_dir / "node_table.csv")
    caches = Topology.from_xml(run["topology_xml"]).cache_sizes() if run.get("topology_xml") else {}
    return written + node_figures.write(samples, peaks, caches, out_dir)
