"""Standard tools measured beside our node kernels, in the same run, with equivalent parameters.

Each reference is a Job whose stdout a parser here turns into records with the same
metric and params keys as ours (workload, op, precision, threads/streams, block, pattern,
depth, protocol), so the report can put "measured" and "reference" on one row:

  likwid-bench  peakflops_<isa>  <-> cpu  workload=cpu_peak  (FP64 FMA, same threads)
                stream_<isa>     <-> mem  workload=stream op=triad (A = B*c + C is STREAM's
                                   triad: same 24 counted bytes per element; likwid's own
                                   "triad" kernel is the 4-stream A = B*C + D)
  fio           psync, numjobs=threads, direct=1, same bs  <-> disk
  iperf3        -J, -P streams, -l block, server on 127.0.0.1 <-> net protocol=tcp/udp
  (OpenBLAS DGEMM is measured by our cpu program itself: workload=dgemm, the HPL-like bound.)

Parsers are `parse_<tool>(stdout_text) -> list[record dict]`, looked up by the local
runner as PARSERS[job.output]. Every parsed stream starts with a meta record (benchmark =
the tool, version from its output). A tool's failure becomes an error record with the
tool's own message; our numbers are stored independently.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
from typing import Any, Callable

from hpcscope.plan.job import Job
from hpcscope.suites.base import Note

SCHEMA = "hpcscope.bench/1"

# Debian package of each tool, for the "skipped" note.
INSTALL = {"likwid-bench": "likwid", "fio": "fio", "iperf3": "iperf3"}


def _meta(tool: str, version: str, options: dict[str, Any]) -> dict[str, Any]:
    # The tools time themselves; their timer quality is not reported, hence zeros with
    # "source" saying so (the contract requires the fields).
    return {"type": "meta", "schema": SCHEMA, "benchmark": tool, "version": version or "unknown",
            "mpi": None, "ranks": [],
            "timer": {"resolution_ns": 0, "overhead_ns": 0, "source": f"{tool}'s own"},
            "options": options}


def _sample(metric: str, unit: str, params: dict[str, Any], values: list[float]) -> dict:
    return {"type": "sample", "metric": metric, "unit": unit, "params": params,
            "values": values, "warmups": 0}


def _merge(samples: list[dict]) -> list[dict]:
    """Repetitions of one point (a tool run several times in one job) become one sample."""
    merged: dict[str, dict] = {}
    for s in samples:
        key = json.dumps([s["metric"], s["unit"], s["params"]], sort_keys=True)
        if key in merged:
            merged[key]["values"].extend(s["values"])
        else:
            merged[key] = s
    return list(merged.values())


def _json_documents(text: str) -> list[Any]:
    """All JSON objects in text (tools run several times print several; noise between)."""
    docs, dec, i = [], json.JSONDecoder(), 0
    while (i := text.find("{", i)) >= 0:
        try:
            doc, end = dec.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        docs.append(doc)
        i = end
    return docs


# ------------------------------------------------------------------ likwid-bench

_LIKWID_OPS = {"peakflops": ("flops", "cpu_peak"), "stream": ("bandwidth", "stream"),
               "copy": ("bandwidth", "stream"), "triad": ("bandwidth", "stream")}


def parse_likwid_bench(text: str) -> list[dict]:
    version = (re.search(r"likwid-bench -- Version\s+(\S+)", text) or [None, ""])[1]
    samples, tests = [], []
    for block in re.split(r"(?=^Test: )", text, flags=re.M)[1:]:
        test = re.match(r"Test: (\S+)", block).group(1)
        threads = re.search(r"Using (\d+) threads", block)
        size = re.search(r"Size \(Byte\):\s+(\d+)", block)
        base = test.split("_")[0]
        metric, workload = _LIKWID_OPS.get(base, ("bandwidth", base))
        if not threads:
            continue
        params: dict[str, Any] = {"workload": workload, "threads": int(threads.group(1)),
                                  "kernel": test}
        if metric == "flops":
            mflops = re.search(r"MFlops/s:\s+([\d.]+)", block)
            if not mflops:
                continue
            params.update(op="fma" if "fma" in test else "madd",
                          precision="fp32" if "_sp" in test else "fp64")
            samples.append(_sample("flops", "GFLOP/s", params, [float(mflops.group(1)) / 1e3]))
        else:
            mbytes = re.search(r"MByte/s:\s+([\d.]+)", block)
            if not mbytes:
                continue
            op = {"stream": "triad", "triad": "triad4", "copy": "copy"}.get(base, base)
            streams = {"triad": 3, "triad4": 4, "copy": 2}.get(op, 3)
            params.update(op=op)
            if size:
                params["array_bytes"] = int(size.group(1)) // streams
            samples.append(_sample("bandwidth", "MB/s", params, [float(mbytes.group(1))]))
        tests.append(test)
    records: list[dict] = [_meta("likwid-bench", version, {"tests": sorted(set(tests))})]
    if not samples:
        tail = " ".join(text.strip().splitlines()[-3:])[-300:]
        records.append({"type": "error", "message": f"likwid-bench gave no result: {tail}"})
    return records + _merge(samples)


def likwid_kernels(flags: set[str]) -> tuple[str, str]:
    """(peakflops kernel, stream kernel) of the widest ISA this CPU has."""
    if "avx512f" in flags:
        return "peakflops_avx512_fma", "stream_avx512_fma"
    if "avx2" in flags and "fma" in flags:
        return "peakflops_avx_fma", "stream_avx_fma"
    if "avx" in flags:
        return "peakflops_avx", "stream_avx"
    return "peakflops_sse", "stream_sse"


# --------------------------------------------------------------------------- fio

def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)i?[bB]?", str(text).strip())
    if not m:
        return int(float(text))
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2).lower()]


def parse_fio(text: str) -> list[dict]:
    docs = [d for d in _json_documents(text) if "jobs" in d]
    if not docs:
        tail = " ".join(text.strip().splitlines()[-3:])[-300:]
        return [_meta("fio", "", {}), {"type": "error", "message": f"fio gave no JSON: {tail}"}]
    first = docs[0]
    options = first.get("global options") or (first["jobs"][0].get("job options", {})
                                               if first["jobs"] else {})
    records = [_meta("fio", first.get("fio version", ""), options)]
    samples = []
    for doc in docs:
        for job in doc["jobs"]:
            o = {**doc.get("global options", {}), **job.get("job options", {})}
            if job.get("error"):
                records.append({"type": "error", "message": f"fio job {job.get('jobname')} "
                                f"failed with error {job['error']}"})
                continue
            rw = o.get("rw", "read")
            threads = int(o.get("numjobs", 1))
            engine = o.get("ioengine", "psync")
            depth = threads * (int(o.get("iodepth", 1)) if engine not in ("psync", "sync") else 1)
            for op in ("read", "write"):
                r = job.get(op, {})
                if not r.get("io_bytes"):
                    continue
                params = {"workload": "disk", "op": op,
                          "pattern": "rand" if rw.startswith("rand") else "seq",
                          "block": _size(o.get("bs", "4k")), "threads": threads, "depth": depth,
                          "engine": engine, "direct": str(o.get("direct", "0")) == "1"}
                samples.append(_sample("bandwidth", "MB/s", params, [r["bw_bytes"] / 1e6]))
                samples.append(_sample("iops", "IOPS", dict(params), [r["iops"]]))
                clat = r.get("clat_ns", {})
                if clat.get("N"):
                    samples.append(_sample("latency", "us", dict(params), [clat["mean"] / 1e3]))
                    pct = clat.get("percentile", {})
                    summary = {"type": "summary", "metric": "latency", "unit": "us",
                               "params": dict(params), "source": "fio clat percentiles"}
                    for name, key in (("p50", "50.000000"), ("p90", "90.000000"),
                                      ("p99", "99.000000"), ("p99_9", "99.900000")):
                        if key in pct:
                            summary[name] = pct[key] / 1e3
                    records.append(summary)
    return records + _merge(samples)


# ------------------------------------------------------------------------ iperf3

def parse_iperf3(text: str) -> list[dict]:
    docs = [d for d in _json_documents(text) if "start" in d or "error" in d]
    version = next((d["start"].get("version", "") for d in docs if "start" in d), "")
    records: list[dict] = [_meta("iperf3", version, {})]
    samples = []
    for d in docs:
        if d.get("error"):
            records.append({"type": "error", "message": f"iperf3: {d['error']}"})
            continue
        ts = d["start"].get("test_start", {})
        records[0]["options"] = ts
        protocol = ts.get("protocol", "TCP").lower()
        end = d.get("end", {})
        # The receiver's count: bytes still in socket buffers at the end are not delivered.
        rx = end.get("sum_received") or end.get("sum", {})
        bits = rx.get("bits_per_second")
        if protocol == "udp" and "sum_received" not in end and "lost_percent" in rx:
            bits = bits * (1 - rx["lost_percent"] / 100)
        if bits is None:
            continue
        params = {"workload": "net", "protocol": protocol, "op": "stream",
                  "block": int(ts.get("blksize", 0)), "streams": int(ts.get("num_streams", 1)),
                  "host": d["start"].get("connecting_to", {}).get("host", "")}
        samples.append(_sample("throughput", "Mbit/s", params, [bits / 1e6]))
    if len(records) == 1 and not samples:
        records.append({"type": "error", "message": "iperf3 gave no result: "
                        + " ".join(text.strip().splitlines()[-3:])[-300:]})
    return records + _merge(samples)


PARSERS: dict[str, Callable[[str], list[dict]]] = {
    "likwid-bench": parse_likwid_bench,
    "fio": parse_fio,
    "iperf3": parse_iperf3,
}


# ------------------------------------------------------------------ job builders

def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel picks it; a small race is possible)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing(tool: str) -> Note | None:
    if shutil.which(tool):
        return None
    return Note("skipped", f"reference {tool} is not installed: apt-get install {INSTALL[tool]}",
                {"tool": tool, "install": f"apt-get install {INSTALL[tool]}"})


def _repeat(cmd: list[str], reps: int) -> list[str]:
    line = " ".join(shlex.quote(c) for c in cmd)
    return ["sh", "-c", f"for i in $(seq {reps}); do {line} || exit $?; done"]


def likwid_jobs(flags: set[str], threads: list[int], array_bytes: int, reps: int,
                tags: dict) -> list[Job]:
    peak, stream = likwid_kernels(flags)
    jobs = []
    for t in threads:
        # 32 kB per thread stays in L1: peakflops then measures the FMA units only.
        # -i fixes the iterations (~0.5 s) instead of likwid's automatic ~1 s calibration.
        for kernel, size, iters in ((peak, f"{32 * t}kB", 200000 // t),
                                    (stream, f"{3 * array_bytes // 1000}kB", 20)):
            cmd = ["likwid-bench", "-t", kernel, "-w", f"N:{size}:{t}", "-i", str(iters)]
            jobs.append(Job(suite="node", name=f"ref/likwid/{kernel}/t{t}",
                            program=["sh", "-c", "likwid-bench -v | head -1; "
                                     + _repeat(cmd, reps)[2]],
                            output="likwid-bench", tags={**tags, "reference": "likwid-bench"},
                            timeout_s=120))
    return jobs


def fio_jobs(points: list[tuple[str, int, int]], size: int, seconds: float, reps: int,
             disk_dir: str | None, tags: dict) -> list[Job]:
    """points: (rw, block bytes, threads). psync + numjobs = our engine (threads x pread/
    pwrite), so depth means the same on both sides. Files in a fresh directory, removed."""
    jobs = []
    for rw, block, threads in points:
        base = shlex.quote(disk_dir) if disk_dir else "/var/tmp"
        fio = ["fio", "--name=ref", f"--rw={rw}", f"--bs={block}", f"--numjobs={threads}",
               "--ioengine=psync", "--direct=1", f"--size={size}", f"--runtime={seconds:g}",
               "--time_based", "--group_reporting", "--output-format=json", '--directory="$d"']
        script = (f'd=$(mktemp -d {base}/hpcscope-fio-XXXXXX) || exit 2; '
                  f'trap \'rm -rf "$d"\' EXIT INT TERM; rc=0; '
                  f'for i in $(seq {reps}); do {" ".join(fio)} || rc=$?; done; exit $rc')
        jobs.append(Job(suite="node", name=f"ref/fio/{rw}/{block}/t{threads}",
                        program=["sh", "-c", script], output="fio",
                        tags={**tags, "reference": "fio"}, timeout_s=60 + reps * (seconds + 30)))
    return jobs


def iperf3_jobs(points: list[tuple[str, int, int]], seconds: float, reps: int,
                tags: dict) -> list[Job]:
    """points: (protocol, block, streams). One server per job on a free loopback port,
    stopped when the job ends (also on failure)."""
    jobs = []
    for protocol, block, streams in points:
        port = free_port()
        secs = max(1, round(seconds))  # iperf3 -t takes whole seconds; 0 would mean forever
        # timeout(1) on both sides: a killed job must not leave a server or client behind.
        limit = reps * (secs + 10) + 10
        client = ["timeout", str(secs + 10), "iperf3", "-c", "127.0.0.1", "-p", str(port),
                  "-t", str(secs),
                  "-P", str(streams), "-l", str(block), "-J"]
        if protocol == "udp":
            client += ["-u", "-b", "0"]
        line = " ".join(client)
        script = (f"timeout {limit} iperf3 -s -B 127.0.0.1 -p {port} >/dev/null 2>&1 & srv=$!; "
                  f"trap 'kill $srv 2>/dev/null' EXIT INT TERM; sleep 0.3; rc=0; "
                  f"for i in $(seq {reps}); do {line} || rc=$?; done; exit $rc")
        jobs.append(Job(suite="node", name=f"ref/iperf3/{protocol}/{block}/P{streams}",
                        program=["sh", "-c", script], output="iperf3",
                        tags={**tags, "reference": "iperf3"}, timeout_s=limit + 30))
    return jobs
