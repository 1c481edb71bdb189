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


# ---------------------------------------------------------------- OSU programs

# p2p's title words (after "OSU MPI ", before " Test") -> (test, metric, unit, value
# column). The metrics are bench/mpi/p2p's, so OSU's rows and hpcscope's land in
# comparable cells.
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
# A collective's columns (header words) -> the coll/nbc programs' metric and unit; OSU's
# Min/Max Latency and Iterations (with -f) have no metric of their own there
_OSU_COLL_COLUMNS = {
    "Avg Latency(us)": ("time", "us"),
    "Overall(us)": ("overall_time", "us"),
    "Compute(us)": ("compute_time", "us"),
    "Pure Comm.(us)": ("pure_time", "us"),
    "Overlap(%)": ("overlap", "%"),
}
_OSU_COUNT = re.compile(r"^# Number of (.+?): (\d+)\s*$", re.M)
_OSU_TITLE = re.compile(r"^# (OSU MPI(?:-\w+)?[ _].+? Test)(?: v(\S+))?\s*$", re.M)
_OSU_ROW = re.compile(r"^[ \t]*(\d+(?:\.\d+)?(?:[ \t]+\d+(?:\.\d+)?)*)[ \t]*$", re.M)
_OSU_HEADER = re.compile(r"^#\s*(.*(?:\(us\)|\(%\)|MB/s|Messages/s).*)$", re.M)
_OSU_INIT = re.compile(r"^nprocs: (\d+), min: (\d+) ms, max: (\d+) ms, avg: (\d+) ms\s*$", re.M)
_OSU_HELLO = re.compile(r"^This is a test with (\d+) processes\s*$", re.M)
_OSU_RMA = {"Window creation": "window_kind", "Synchronization": "sync"}
_OSU_RMA_LINE = re.compile(r"^# (Window creation|Synchronization): (\S+)\s*$", re.M)


def _osu_programs() -> dict[str, tuple[str, str, dict[str, Any], tuple | None]]:
    """OSU program -> (its title without '# ' and the version, benchmark, params, (metric,
    unit, column) or None: a collective's columns by its header), from the suites' own
    title tables (p2p's above, results/nbc_names, results/rma_tests, startup's)."""
    from hpcscope.results.nbc_names import FAMILIES, NAMES, OPS, osu_program, osu_title
    from hpcscope.results.rma_tests import RMA_TESTS

    out: dict[str, tuple[str, str, dict[str, Any], tuple | None]] = {}
    for words, (test, metric, unit, column) in _OSU_TESTS.items():
        out[f"osu_{test}"] = (
            f"OSU MPI {words} Test",
            "p2p",
            {"test": test},
            (metric, unit, column),
        )
    for test in ("bw_fan_in", "bw_fan_out"):  # osu_bw's title: told apart by the program
        out[f"osu_{test}"] = (
            "OSU MPI Bandwidth Test",
            "p2p",
            {"test": test},
            ("bandwidth", "MB/s", 1),
        )
    for name in NAMES:
        program, title = osu_program(name), osu_title(name)
        if program and title:  # blocking ones are coll's (nbc's run names the suite)
            family = next((f for f, names in FAMILIES.items() if name in names), "")
            params: dict[str, Any] = {"collective": name}
            params |= {"algorithm": "native"} if name in OPS else {"family": family}
            out[program] = (
                title[2:].rsplit(" v", 1)[0],
                "coll" if name in OPS else "nbc",
                params,
                None,
            )
    for rma in RMA_TESTS.values():
        out[rma.program] = (rma.title, "rma", {"test": rma.name}, (rma.metric, rma.unit, 1))
    out["osu_init"] = ("OSU MPI Init Test", "startup", {"phase": "init"}, ("time", "us", 0))
    out["osu_hello"] = ("OSU MPI Hello World Test", "startup", {"phase": "hello"}, None)
    return out


OSU_PROGRAMS = _osu_programs()
# One entry per title; where two programs print one title (OSU 7.4's osu_alltoallw and
# osu_neighbor_alltoallw), the first (the blocking one) unless the program is named
OSU_TITLES: dict[str, str] = {}
for _program, (_title, *_rest) in OSU_PROGRAMS.items():
    OSU_TITLES.setdefault(_title, _program)


def parse_osu(text: str, program: str = "", benchmark: str = "") -> list[dict]:
    """The text output of an OSU 7.4 program (5-7 for p2p) this project has a counterpart
    of: point-to-point, blocking, non-blocking, persistent and neighbourhood collectives,
    one-sided, osu_init and osu_hello. A "# OSU MPI<...> Test vX" title, "#" lines, then
    rows. One sample per size and column with OSU's one aggregate as its only value (OSU
    keeps no per-block samples), in the metrics and params of the suite's own program, so
    they land beside hpcscope's cells; the job's tag tool=osu tells them apart.

    `program` (its file name) tells apart programs printing one title; `benchmark` the
    suite that ran it (the blocking collectives are coll's or nbc's). A size-less program
    (the barriers) has size 0, as nbc's barrier. OSU does not report where its ranks ran:
    ranks is empty and the binding is the launcher's, unverified."""
    title = _OSU_TITLE.search(text)
    words = re.sub(r"^OSU MPI-\w+ ", "OSU MPI ", title.group(1)) if title else ""
    name = program if OSU_PROGRAMS.get(program, ("",))[0] == words else OSU_TITLES.get(words)
    spec = OSU_PROGRAMS.get(name or "")
    meta = _meta(
        spec[1] if spec else benchmark or "p2p", f"OSU {title.group(2) or '?'}" if title else "", {}
    )
    meta["timer"]["source"] = "OSU's own (MPI_Wtime around every iteration)"
    if spec is None:
        first = next((line for line in text.splitlines() if line.strip()), "")[:120]
        why = (
            f"title '{title.group(0)}' is not one of OSU 7.4's programs hpcscope compares"
            if title
            else f"no '# OSU MPI ... Test' title (first line: {first!r})"
        )
        return [
            meta,
            {"type": "error", "message": f"not output of an OSU program hpcscope compares: {why}"},
        ]
    assert title is not None and name is not None
    _, suite, base, column = spec
    if benchmark and suite in ("coll", "nbc"):
        meta["benchmark"] = suite = benchmark
        if benchmark == "nbc" and base.get("algorithm"):  # nbc's blocking counterparts
            base = {"collective": base["collective"], "family": "blocking"}
    meta["options"] = {"tool": "osu", "program": name, "title": title.group(0)[2:]}
    if suite == "p2p":
        meta["options"]["test"] = base["test"]
    params = dict(base)
    params |= {
        _OSU_COUNTS[m.group(1)]: int(m.group(2))
        for m in _OSU_COUNT.finditer(text)
        if m.group(1) in _OSU_COUNTS
    }
    rma_words = {v: k for table in _rma_texts() for k, v in table.items()}
    params |= {
        _OSU_RMA[m.group(1)]: rma_words.get(m.group(2), m.group(2))
        for m in _OSU_RMA_LINE.finditer(text)
    }
    samples = _osu_rows(text, title.end(), name, params, column)
    if not samples:
        return [meta, {"type": "error", "message": f"OSU {name} printed a title but no rows"}]
    return [meta, *samples]


def _rma_texts() -> tuple[dict[str, str], dict[str, str]]:
    from hpcscope.results.rma_tests import SYNC_TEXT, WINDOW_TEXT

    return SYNC_TEXT, WINDOW_TEXT


def _osu_rows(text: str, start: int, name: str, params: dict, column: tuple | None) -> list:
    """The samples of an OSU program's rows after its title."""
    if name == "osu_init":  # "nprocs: 4, min: 286 ms, max: 291 ms, avg: 288 ms"
        return [
            _sample("time", "us", {**params, "ranks": int(m.group(1))}, [float(m.group(4)) * 1e3])
            for m in _OSU_INIT.finditer(text, start)
        ]
    if name == "osu_hello":  # no time: how many ranks said hello, as a summary
        return [
            {"type": "summary", "metric": "hello_ranks", "params": {**params}, "value": int(n)}
            for n in _OSU_HELLO.findall(text, start)
        ]
    header = _OSU_HEADER.search(text, start)
    words = header.group(1).strip() if header else ""
    sized = not header or words.startswith("Size")  # the barriers print no Size column
    labels = ["Size"] * sized + re.split(r"\s{2,}", words.removeprefix("Size").strip())
    columns = [column] if column else []
    if column is None:  # a collective: its columns by their header words
        columns = [
            (*_OSU_COLL_COLUMNS[label], i)
            for i, label in enumerate(labels)
            if label in _OSU_COLL_COLUMNS
        ]
    samples = []
    for row in _OSU_ROW.finditer(text, header.end() if header else start):
        numbers = row.group(1).split()
        size = int(float(numbers[0])) if sized else 0
        for metric, unit, index in columns:
            if index < len(numbers) and (sized or column is None):
                samples.append(
                    _sample(metric, unit, {**params, "bytes": size}, [float(numbers[index])])
                )
    return samples


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
    rows = [
        r
        for r in records
        if r.get("type") == "sample" and isinstance(r.get("params", {}).get("bytes"), int)
    ]
    # one row per size: a collective's row holds several columns (metrics), one each
    sizes = [r["params"]["bytes"] for r in rows if r["metric"] == rows[0]["metric"]]
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
