"""The node suite: CPU, memory, disk and network of one node, beside the standard tools.

plan() turns options into Jobs for our four programs (bench/node/{cpu,mem,disk,net}.c),
reference Jobs (likwid-bench, fio, iperf3: node_refs.py) with the same parameters, and
Notes: one "peak" per theoretical peak (machine/peaks.py, formula included) and one
"skipped" per thing that cannot run here, with the reason.

outputs() writes the node table (hpcscope.analysis.node_table) and the figures.

Budget on a 2-core VM: --quick about 30-40 s, full about 5-6 min (disk dominates).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from hpcscope.analysis import node_table
from hpcscope.figures import node as node_figures
from hpcscope.machine.peaks import compute_peaks, parse_cpuinfo, read_machine
from hpcscope.plan.job import Job
from hpcscope.suites import node_refs
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


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    opts = dict(opts)
    parts = {k: bool(opts.get(k)) for k in OURS}
    if not any(parts.values()):
        parts = {k: True for k in OURS}
    quick = bool(opts.get("quick") or ctx.quick)
    n = _ncores(ctx.topology)
    threads = _threads(opts, n, quick)
    tl = ",".join(map(str, threads))
    out = SuitePlan()
    tags = {"suite": "node", "quick": quick}

    machine = read_machine()
    flags = parse_cpuinfo(machine["cpuinfo_text"]).flags
    peaks = compute_peaks(
        machine["cpuinfo_text"],
        ctx.topology,
        opts.get("peaks") or {},
        dmidecode_text=machine["dmidecode_text"],
        link_mbit=machine["link_mbit"],
        disk_model=machine["disk_model"],
    )
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

    reps = 3 if quick else 5
    if parts["cpu"]:
        kernels = ["clock", "fp64", "fp32", "dgemm"] + (
            [] if quick else ["int8", "int16", "int32", "int64"]
        )
        for prec, flag in (("fp16", "avx512_fp16"), ("bf16", "avx512_bf16")):
            if flag in flags:
                kernels.append(prec)
            else:
                out.notes.append(Note("skipped", f"cpu {prec}: the CPU has no {flag} instructions"))
        out.jobs.append(
            job(
                "cpu",
                [
                    f"--kernels={','.join(kernels)}",
                    f"--threads={tl}",
                    f"--seconds={0.1 if quick else 0.2}",
                    f"--reps={reps}",
                    f"--dgemm-n={1000 if quick else 3000}",
                ],
                300,
            )
        )
    array_bytes = max(4 * _llc_total(ctx.topology), 64 << 20)
    if parts["mem"]:
        args = [f"--threads={tl}", f"--array-bytes={array_bytes}"]
        args += (
            [
                "--reps=5",
                "--block-sizes=4K,1M",
                "--chase-steps=1",
                "--chase-seconds=0.02",
                f"--chase-max={2 * _llc_total(ctx.topology)}",
            ]
            if quick
            else ["--reps=10", "--chase-steps=2"]
        )
        out.jobs.append(job("mem", args, 300))
        numa = len(getattr(ctx.topology, "numa_nodes", []) or [])
        if numa < 2:
            out.notes.append(
                Note("skipped", f"memory NUMA matrix: {max(numa, 1)} NUMA node, nothing is remote")
            )
    disk_dir = opts.get("disk_dir")
    if parts["disk"]:
        if quick:
            d_blocks, d_threads, d_tests, d_size, d_sec, d_reps = (
                ["1M"],
                [1],
                "seqwrite,seqread",
                "256M",
                0.5,
                2,
            )
        else:
            d_blocks, d_threads, d_tests, d_size, d_sec, d_reps = (
                ["4K", "64K", "1M", "16M", "100M"],
                sorted({1, min(n, 2), n}),
                "all",
                "1G",
                1,
                3,
            )
        args = [
            f"--blocks={','.join(d_blocks)}",
            f"--threads={','.join(map(str, d_threads))}",
            f"--tests={d_tests}",
            f"--size={d_size}",
            f"--seconds={d_sec}",
            f"--reps={d_reps}",
        ]
        if disk_dir:
            args.append(f"--dir={disk_dir}")
        out.jobs.append(job("disk", args, 900))
    if parts["net"]:
        if quick:
            args = [
                "--tests=tcp,rr",
                "--streams=1",
                "--blocks=128K",
                "--rr-bytes=1",
                "--seconds=0.5",
                "--reps=2",
            ]
        else:
            args = [
                "--streams=" + ",".join(map(str, sorted({1, n}))),
                "--blocks=1K,32K,128K",
                "--seconds=1",
                "--reps=3",
            ]
        out.jobs.append(job("net", args, 300))
    _plan_refs(out, parts, quick, flags, threads, n, array_bytes, disk_dir, tags)
    return out


def _plan_refs(
    out: SuitePlan,
    parts: dict,
    quick: bool,
    flags: set[str],
    threads: list[int],
    n: int,
    array_bytes: int,
    disk_dir: str | None,
    tags: dict,
) -> None:
    reps = 2 if quick else 3
    if parts["cpu"] or parts["mem"]:
        if note := node_refs.missing("likwid-bench"):
            out.notes.append(note)
        else:
            for j in node_refs.likwid_jobs(
                flags, [max(threads)] if quick else threads, array_bytes, reps, tags
            ):
                if ("peakflops" in j.name and parts["cpu"]) or (
                    "stream" in j.name and parts["mem"]
                ):
                    out.jobs.append(j)
    if parts["disk"]:
        if note := node_refs.missing("fio"):
            out.notes.append(note)
        else:
            mib = 1 << 20
            points = (
                [("write", mib, 1), ("read", mib, 1)]
                if quick
                else [
                    (rw, b, t)
                    for rw in ("write", "read")
                    for b in (4096, mib)
                    for t in sorted({1, min(n, 2), n})
                ]
                + [("randread", 4096, 1), ("randwrite", 4096, 1)]
            )
            out.jobs.extend(
                node_refs.fio_jobs(
                    points,
                    (256 if quick else 1024) * mib,
                    0.5 if quick else 1,
                    reps,
                    disk_dir,
                    tags,
                )
            )
    if parts["net"]:
        if note := node_refs.missing("iperf3"):
            out.notes.append(note)
        else:
            points = (
                [("tcp", 131072, 1)]
                if quick
                else [("tcp", b, s) for b in (1024, 32768, 131072) for s in sorted({1, n})]
                + [("udp", 32768, 1)]
            )
            out.jobs.extend(node_refs.iperf3_jobs(points, 1, reps, tags))


def outputs(store, run_id: int, out_dir):
    """The node table (measured x reference x peak x efficiencies) and the figures."""
    import csv
    import io

    from hpcscope.machine.topology import Topology

    run = store.run(run_id)
    samples = store.samples(run_id)
    peaks = [n["data"] for n in run.get("notes") or [] if n["kind"] == "peak"]
    rows = node_table.node_table(samples, peaks)
    written = []
    if rows:
        columns = list(rows[0].keys())
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        (out_dir / "node_table.csv").write_text(text.getvalue())
        written.append(out_dir / "node_table.csv")
    caches = Topology.from_xml(run["topology_xml"]).cache_sizes() if run.get("topology_xml") else {}
    return written + node_figures.write(samples, peaks, caches, out_dir)
