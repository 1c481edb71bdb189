"""Parsers for the output of the standard tools measured beside our node kernels.

Each `parse_<tool>(stdout_text) -> list[record dict]` turns a tool's own format into records
of the hpcscope.bench/1 contract (docs/records.md), with the same metric and params keys as
our own programs (workload, op, precision, threads/streams, block, pattern, depth,
protocol), so the node table can put "measured" and "reference" on one row. Every parsed
stream starts with a meta record (benchmark = the tool, version from its output). A tool's
failure becomes an error record with the tool's own message.

A Job names its parser in `Job.output`; every backend looks it up in PARSERS here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from hpcscope.results.records import SCHEMA


def _meta(tool: str, version: str, options: dict[str, Any]) -> dict[str, Any]:
    # The tools time themselves; their timer quality is not reported, hence zeros with
    # "source" saying so (the contract requires the fields).
    return {
        "type": "meta",
        "schema": SCHEMA,
        "benchmark": tool,
        "version": version or "unknown",
        "mpi": None,
        "ranks": [],
        "timer": {"resolution_ns": 0, "overhead_ns": 0, "source": f"{tool}'s own"},
        "options": options,
    }


def _sample(metric: str, unit: str, params: dict[str, Any], values: list[float]) -> dict:
    return {
        "type": "sample",
        "metric": metric,
        "unit": unit,
        "params": params,
        "values": values,
        "warmups": 0,
    }


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

_LIKWID_OPS = {
    "peakflops": ("flops", "cpu_peak"),
    "hpcscope": ("flops", "cpu_peak"),  # our FMA mix as a likwid user kernel (node_refs)
    "stream": ("bandwidth", "stream"),
    # copy_<isa> runs beside our working-set sweep (mem wss): same sizes, same counting
    # (read + write bytes of c = a), "bytes" = likwid's whole working set.
    "copy": ("bandwidth", "mem_wss"),
    "triad": ("bandwidth", "stream"),
}


def parse_likwid_bench(text: str) -> list[dict]:
    version_match = re.search(r"likwid-bench -- Version\s+(\S+)", text)
    version = version_match.group(1) if version_match else ""
    samples, tests = [], []
    for block in re.split(r"(?=^Test: )", text, flags=re.M)[1:]:
        heading = re.match(r"Test: (\S+)", block)
        if heading is None:
            raise ValueError(
                f"likwid-bench output has a 'Test:' line without a test name: {block[:80]!r}"
            )
        test = heading.group(1)
        threads = re.search(r"Using (\d+) threads", block)
        size = re.search(r"Size \(Byte\):\s+(\d+)", block)
        base = test.split("_")[0]
        metric, workload = _LIKWID_OPS.get(base, ("bandwidth", base))
        if not threads:
            continue
        params: dict[str, Any] = {
            "workload": workload,
            "threads": int(threads.group(1)),
            "kernel": test,
        }
        # Where likwid pinned its threads (proof of "same CPUs" beside ours).
        cpus = re.findall(r"Global Thread \d+ running on hwthread (\d+)", block)
        if cpus:
            params["hwthreads"] = ",".join(cpus)
        if metric == "flops":
            mflops = re.search(r"MFlops/s:\s+([\d.]+)", block)
            if not mflops:
                continue
            params.update(
                op="fma" if "fma" in test else "madd", precision="fp32" if "_sp" in test else "fp64"
            )
            samples.append(_sample("flops", "GFLOP/s", params, [float(mflops.group(1)) / 1e3]))
        else:
            mbytes = re.search(r"MByte/s:\s+([\d.]+)", block)
            if not mbytes:
                continue
            op = {"stream": "triad", "triad": "triad4", "copy": "copy"}.get(base, base)
            streams = {"triad": 3, "triad4": 4, "copy": 2}.get(op, 3)
            params.update(op=op)
            if size and op == "copy":
                params["bytes"] = int(size.group(1))
            elif size:
                params["array_bytes"] = int(size.group(1)) // streams
            samples.append(_sample("bandwidth", "MB/s", params, [float(mbytes.group(1))]))
        tests.append(test)
    records: list[dict] = [_meta("likwid-bench", version, {"tests": sorted(set(tests))})]
    if not samples:
        tail = " ".join(text.strip().splitlines()[-3:])[-300:]
        records.append({"type": "error", "message": f"likwid-bench gave no result: {tail}"})
    return records + _merge(samples)


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
    options = first.get("global options") or (
        first["jobs"][0].get("job options", {}) if first["jobs"] else {}
    )
    records = [_meta("fio", first.get("fio version", ""), options)]
    samples = []
    for doc in docs:
        for job in doc["jobs"]:
            o = {**doc.get("global options", {}), **job.get("job options", {})}
            if job.get("error"):
                records.append(
                    {
                        "type": "error",
                        "message": f"fio job {job.get('jobname')} failed with error {job['error']}",
                    }
                )
                continue
            rw = o.get("rw", "read")
            threads = int(o.get("numjobs", 1))
            engine = o.get("ioengine", "psync")
            depth = threads * (int(o.get("iodepth", 1)) if engine not in ("psync", "sync") else 1)
            for op in ("read", "write"):
                r = job.get(op, {})
                if not r.get("io_bytes"):
                    continue
                params = {
                    "workload": "disk",
                    "op": op,
                    "pattern": "rand" if rw.startswith("rand") else "seq",
                    "block": _size(o.get("bs", "4k")),
                    "threads": threads,
                    "depth": depth,
                    "engine": engine,
                    "direct": str(o.get("direct", "0")) == "1",
                }
                samples.append(_sample("bandwidth", "MB/s", params, [r["bw_bytes"] / 1e6]))
                samples.append(_sample("iops", "IOPS", dict(params), [r["iops"]]))
                clat = r.get("clat_ns", {})
                if clat.get("N"):
                    samples.append(_sample("latency", "us", dict(params), [clat["mean"] / 1e3]))
                    pct = clat.get("percentile", {})
                    summary = {
                        "type": "summary",
                        "metric": "latency",
                        "unit": "us",
                        "params": dict(params),
                        "source": "fio clat percentiles",
                    }
                    for name, key in (
                        ("p50", "50.000000"),
                        ("p90", "90.000000"),
                        ("p99", "99.000000"),
                        ("p99_9", "99.900000"),
                    ):
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
        params = {
            "workload": "net",
            "protocol": protocol,
            "op": "stream",
            "block": int(ts.get("blksize", 0)),
            "streams": int(ts.get("num_streams", 1)),
            "host": d["start"].get("connecting_to", {}).get("host", ""),
        }
        samples.append(_sample("throughput", "Mbit/s", params, [bits / 1e6]))
    if len(records) == 1 and not samples:
        records.append(
            {
                "type": "error",
                "message": "iperf3 gave no result: "
                + " ".join(text.strip().splitlines()[-3:])[-300:],
            }
        )
    return records + _merge(samples)


# --------------------------------------------------------------------------- hpcc


def parse_hpcc(text: str) -> list[dict]:
    """hpccoutf.txt of the HPC Challenge suite (Debian's hpcc), once per repetition: the
    key=value lines of each Summary section. HPL becomes workload=hpl (LU factorisation,
    FP64, threads = MPI processes); StarDGEMM (every process its own DGEMM at once) x
    processes becomes the node's DGEMM rate beside our OpenBLAS DGEMM (workload=dgemm).
    A failed HPL residual check (an HPL line not PASSED, or Success=0) is an error record."""
    runs = text.split("Begin of Summary section.")[1:]
    first = dict(re.findall(r"^(\w+)=(\S+)$", runs[0], re.M)) if runs else {}
    version = ".".join(first.get(k, "") for k in ("VersionMajor", "VersionMinor", "VersionMicro"))
    records: list[dict] = [_meta("hpcc", version.strip("."), {})]
    # The BLAS hpcc ran with, probed in the job's environment (machine/blas_probe.py)
    probed = re.search(r"^hpcscope-blas: (\{.*\})$", text, re.M)
    try:
        blas = json.loads(probed.group(1)) if probed else None
    except ValueError:
        blas = None
    if isinstance(blas, dict):
        records[0]["blas"] = blas
    hpl_parts = re.findall(r"Begin of HPL section\.(.*?)End of HPL section\.", text, re.S)
    if not runs or not all("HPL_Tflops=" in r for r in runs):
        tail = " ".join(text.strip().splitlines()[-3:])[-300:]
        return records + [{"type": "error", "message": f"hpcc gave no HPL result: {tail}"}]
    if any("FAILED" in h for h in hpl_parts) or any("Success=1" not in r for r in runs):
        return records + [{"type": "error", "message": "hpcc: HPL residual check FAILED"}]
    samples = []
    for run in runs:
        summary = dict(re.findall(r"^(\w+)=(\S+)$", run, re.M))
        procs = int(summary.get("CommWorldProcs", "1"))
        hpl = {
            "workload": "hpl",
            "op": "lu",
            "precision": "fp64",
            "threads": procs,
            "kernel": "hpcc_hpl",
            "n": int(summary["HPL_N"]),
            "nb": int(summary.get("HPL_NB", "0")),
            "grid": f"{summary.get('HPL_nprow', '?')}x{summary.get('HPL_npcol', '?')}",
            "validated": True,
        }
        if isinstance(blas, dict) and blas.get("core"):
            hpl["blas_core"] = str(blas["core"])  # the kernel OpenBLAS dispatched to
        samples.append(_sample("flops", "GFLOP/s", hpl, [float(summary["HPL_Tflops"]) * 1e3]))
        if "StarDGEMM_Gflops" in summary:
            dgemm = {
                "workload": "dgemm",
                "op": "dgemm",
                "precision": "fp64",
                "threads": procs,
                "kernel": "hpcc_star_dgemm",
            }
            rate = float(summary["StarDGEMM_Gflops"]) * procs
            samples.append(_sample("flops", "GFLOP/s", dgemm, [rate]))
    return records + _merge(samples)


# ---------------------------------------------------------------- OSU pt2pt programs

# Title (after "# OSU MPI ", before " Test") -> (test, metric, unit, value column). The
# metrics are bench/mpi/p2p's, so OSU's rows and hpcscope's land in comparable cells.
_OSU_TESTS = {
    "Latency": ("latency", "latency", "us", 1),
    "Bandwidth": ("bw", "bandwidth", "MB/s", 1),
    "Bi-Directional Bandwidth": ("bibw", "bibandwidth", "MB/s", 1),
    "Multiple Bandwidth / Message Rate": ("mbw_mr", "message_rate", "msg/s", 2),
    "Latency Persistent": ("latency_persistent", "latency", "us", 1),
    "Bandwidth Persistent": ("bw_persistent", "bandwidth", "MB/s", 1),
    "Bi-Directional Bandwidth Persistent": ("bibw_persistent", "bibandwidth", "MB/s", 1),
    "Multi-threaded Latency": ("latency_mt", "latency", "us", 1),
    "Multi-process Latency": ("latency_mp", "latency", "us", 1),
    "Multi Latency": ("multi_lat", "latency", "us", 1),
}
# osu_latency_mt's and osu_latency_mp's lines before their title -> p2p.c's params keys
_OSU_COUNTS = {
    "Sender threads": "sender_threads",
    "Receiver threads": "threads",
    "forked processes in sender": "sender_processes",
    "forked processes in receiver": "processes",
}
_OSU_COUNT = re.compile(r"^# Number of (.+?): (\d+)\s*$", re.M)
_OSU_TITLE = re.compile(r"^# OSU MPI(?:-\w+)? (.+?) Test(?: v(\S+))?\s*$", re.M)
_OSU_ROW = re.compile(r"^(\d+)\s+(\d+(?:\.\d+)?)(?:\s+(\d+(?:\.\d+)?))?\s*$", re.M)


def parse_osu(text: str) -> list[dict]:
    """osu_latency, osu_bw, osu_bibw or osu_mbw_mr text output (OSU Micro-Benchmarks 5-7:
    a "# OSU MPI <name> Test vX" title, "#" header lines, then "size value [value]" rows).
    One sample per size with OSU's one aggregate as its only value: OSU keeps no per-block
    samples. The benchmark is "p2p" (the same cells as hpcscope's own); the job's tag
    tool=osu tells them apart. OSU does not report where its ranks ran: ranks is empty and
    the binding is the launcher's, unverified."""
    title = _OSU_TITLE.search(text)
    known = title and title.group(1) in _OSU_TESTS
    meta = _meta("p2p", f"OSU {title.group(2) or '?'}" if title else "", {})
    meta["timer"]["source"] = "OSU's own (MPI_Wtime around every iteration)"
    if not known:
        first = next((line for line in text.splitlines() if line.strip()), "")[:120]
        why = (
            f"title '{title.group(0)}' is not osu_latency/osu_bw/osu_bibw/osu_mbw_mr"
            if title
            else f"no '# OSU MPI ... Test' title (first line: {first!r})"
        )
        return [meta, {"type": "error", "message": f"not OSU point-to-point output: {why}"}]
    assert title is not None
    test, metric, unit, column = _OSU_TESTS[title.group(1)]
    meta["options"] = {"tool": "osu", "test": test, "title": title.group(0)[2:]}
    counts = {
        _OSU_COUNTS[m.group(1)]: int(m.group(2))
        for m in _OSU_COUNT.finditer(text)
        if m.group(1) in _OSU_COUNTS
    }
    samples = []
    for row in _OSU_ROW.finditer(text, title.end()):
        value = row.group(column + 1)
        if value is None:
            continue
        params = {"bytes": int(row.group(1)), "test": test, **counts}
        samples.append(_sample(metric, unit, params, [float(value)]))
    if not samples:
        return [meta, {"type": "error", "message": f"OSU {test} printed a title but no rows"}]
    return [meta, *samples]


def osu_size_range(argv: Sequence[str]) -> tuple[int, int] | None:
    """(MIN, MAX) of an OSU command line's `-m MIN:MAX` (or `-m MAX`); None without one."""
    for i, word in enumerate(argv):
        value = None
        if word in ("-m", "--message-size") and i + 1 < len(argv):
            value = argv[i + 1]
        elif word.startswith("--message-size="):
            value = word.split("=", 1)[1]
        if value is None:
            continue
        low, sep, high = value.partition(":")
        try:
            return (int(low), int(high)) if sep else (1, int(low))
        except ValueError:
            return None
    return None


def _osu_sizes(low: int, high: int) -> list[int]:
    """The sizes OSU's loop measures for -m low:high: low, then doubling up to high."""
    sizes: list[int] = []
    size = low
    while size <= high and len(sizes) < 64:
        sizes.append(size)
        size = size * 2 if size else 1
    return sizes


def check_osu_sizes(
    records: list[dict], size_range: tuple[int, int] | None, program: str = ""
) -> tuple[list[str], list[str]]:
    """(errors, warnings) about the sizes of parsed OSU rows (a user's own OSU build may
    be patched, or print twice). Errors (the job fails): a size printed twice (which
    row is the measurement?), a size outside the -m range asked for (the program did
    not measure what was asked). Warnings (the job stands, a note says it): sizes of the
    range that were not printed, and sizes inside it that OSU's doubling loop does not
    measure. Without a range, only the gaps between the first and last size printed."""
    name = program or "the OSU program"
    sizes = [
        r["params"]["bytes"]
        for r in records
        if r.get("type") == "sample" and isinstance(r.get("params", {}).get("bytes"), int)
    ]
    if not sizes:
        return [], []
    errors: list[str] = []
    warnings: list[str] = []
    twice = sorted({s for s in sizes if sizes.count(s) > 1})
    if twice:
        errors.append(
            f"{name} printed size(s) {', '.join(map(str, twice[:8]))} more than once; "
            "which row is the measurement cannot be told"
        )
    low, high = (max(size_range[0], 1), size_range[1]) if size_range else (min(sizes), max(sizes))
    outside = sorted({s for s in sizes if not low <= s <= high})
    if outside:
        errors.append(
            f"{name} printed size(s) {', '.join(map(str, outside[:8]))} outside the "
            f"range asked for (-m {low}:{high})"
        )
    expected = _osu_sizes(low, high)
    missing = [s for s in expected if s not in sizes]
    odd = sorted({s for s in sizes if low <= s <= high and s not in expected})
    if missing:
        warnings.append(
            f"{name} printed no row for size(s) {', '.join(map(str, missing[:8]))}"
            + (" ..." if len(missing) > 8 else "")
            + " of the range it was asked for"
        )
    if odd:
        warnings.append(
            f"{name} printed size(s) {', '.join(map(str, odd[:8]))} that OSU's doubling "
            "loop does not measure"
        )
    return errors, warnings


PARSERS: dict[str, Callable[[str], list[dict]]] = {
    "hpcc": parse_hpcc,
    "osu": parse_osu,
    "likwid-bench": parse_likwid_bench,
    "fio": parse_fio,
    "iperf3": parse_iperf3,
}
