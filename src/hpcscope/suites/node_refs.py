"""Standard tools measured beside our node kernels, in the same run, with equivalent parameters.

Each reference is a Job whose stdout becomes records with the same
metric and params keys as ours (workload, op, precision, threads/streams, block, pattern,
depth, protocol), so the report can put "measured" and "reference" on one row:

  likwid-bench  hpcscope_fma_<isa> <-> cpu  workload=cpu_peak  (FP64 FMA, same threads):
                a likwid-bench user kernel (.ptt, compiled by likwid-bench at run time)
                with our kernel's instruction mix: 12 independent vector FMA chains in
                registers, no loads. likwid's own peakflops_<isa> is a different work
                (one load + 15 dependent FMAs per vector), so it is not our reference;
                benchmarks/node_targets measures it beside both for comparison.
                stream_<isa>     <-> mem  workload=stream op=triad (A = B*c + C is STREAM's
                                   triad: same 24 counted bytes per element; likwid's own
                                   "triad" kernel is the 4-stream A = B*C + D); -W: each
                                   thread first-touches its chunk, as ours
                copy_<isa>       <-> mem  workload=mem_wss op=copy, same working sets (-W)
  fio           psync, numjobs=threads, direct=1, same bs, overwrite=1,
                scramble_buffers=0                          <-> disk
  iperf3        -J, -P streams, -l block, server on 127.0.0.1 <-> net protocol=tcp/udp
  (likwid-bench's STREAM and iperf3 run once a job, and suites/node.py alternates three
  such jobs with four short runs of ours at the same point; the node table compares
  their medians, analysis/node_table.py. fio stays one job of its repetitions: see
  docs/node.md "Ours right beside the tool".)
  (OpenBLAS DGEMM is measured by our cpu program itself: workload=dgemm, the HPL-like bound.)

Their output is parsed by hpcscope.results.parsers (Job.output names the parser); a
tool's failure becomes an error record with the tool's own message, and our numbers are
stored independently.
"""

from __future__ import annotations

import shlex
import shutil
import socket

from hpcscope.plan.job import Job
from hpcscope.suites.base import Note

# Debian package of each tool, for the "skipped" note.
INSTALL = {"likwid-bench": "likwid", "fio": "fio", "iperf3": "iperf3", "hpcc": "hpcc"}


def fma_isa(flags: set[str]) -> str | None:
    """The vector ISA our cpu program's FP64 FMA kernel runs on (the same test as its
    cpu_kernels.c isa_ok): avx512, avx2, or None (no FMA: no like-for-like kernel)."""
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return None


FMA_CHAINS = 12  # = NACC of bench/node/cpu_kernels.h: independent accumulators


def fma_ptt(isa: str) -> tuple[str, str]:
    """(kernel name, likwid-bench .ptt text) doing our FP64 kernel's work in likwid's
    harness: FMA_CHAINS independent vfmadd231pd on register accumulators per loop
    iteration, no memory traffic (the one stream only satisfies likwid's framework).
    Accumulators and factors start at zero (xor), so no denormal can slow one side.
    FLOPS counts per element: FMA_CHAINS x lanes x 2 FLOP per iteration of `lanes`
    elements."""
    reg, lanes = {"avx512": ("zmm", 8), "avx2": ("ymm", 4)}[isa]
    zero = [f"vxorpd {reg}{i}, {reg}{i}, {reg}{i}" for i in range(FMA_CHAINS + 2)]
    body = [
        f"vfmadd231pd {reg}{i}, {reg}{FMA_CHAINS}, {reg}{FMA_CHAINS + 1}" for i in range(FMA_CHAINS)
    ]
    head = [
        "STREAMS 1",
        "TYPE DOUBLE",
        f"FLOPS {2 * FMA_CHAINS}",
        "BYTES 8",
        f"DESC hpcscope cpu fp64 kernel: {FMA_CHAINS} independent FMA chains in registers",
        "LOADS 0",
        "STORES 0",
        f"INSTR_CONST {len(zero)}",
        f"INSTR_LOOP {FMA_CHAINS + 3}",
        f"UOPS {FMA_CHAINS + 3}",
    ]
    name = f"hpcscope_fma_{isa}"
    return name, "\n".join(head + zero + [f"LOOP {lanes}"] + body) + "\n"


def likwid_kernels(flags: set[str]) -> tuple[str, str]:
    """(peakflops kernel, stream kernel) of the widest ISA this CPU has."""
    if "avx512f" in flags:
        return "peakflops_avx512_fma", "stream_avx512_fma"
    if "avx2" in flags and "fma" in flags:
        return "peakflops_avx_fma", "stream_avx_fma"
    if "avx" in flags:
        return "peakflops_avx", "stream_avx"
    return "peakflops_sse", "stream_sse"


# ------------------------------------------------------------------ job builders


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel picks it; a small race is possible)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing(tool: str) -> Note | None:
    if shutil.which(tool):
        return None
    return Note(
        "skipped",
        f"reference {tool} is not installed: apt-get install {INSTALL[tool]}",
        {"tool": tool, "install": f"apt-get install {INSTALL[tool]}"},
    )


def _repeat(cmd: list[str], reps: int) -> list[str]:
    line = " ".join(shlex.quote(c) for c in cmd)
    return ["sh", "-c", f"for i in $(seq {reps}); do {line} || exit $?; done"]


def likwid_jobs(
    flags: set[str],
    threads: list[int],
    array_bytes: int,
    reps: int,
    tags: dict,
    stream_reps: int | None = None,
) -> list[Job]:
    """FP64 FMA (our kernel's work, see fma_ptt) and STREAM triad, per thread count;
    `reps` runs of likwid-bench a job (STREAM: `stream_reps` where given: suites/node.py
    runs it once a job, alternating with ours).
    likwid-bench reads user kernels from $HOME/.likwid/bench/x86-64/: the job writes the
    .ptt into a fresh directory used as HOME for likwid-bench only, removed at the end."""
    isa = fma_isa(flags)
    _, stream = likwid_kernels(flags)
    peak, ptt = fma_ptt(isa) if isa else (likwid_kernels(flags)[0], "")
    jobs = []
    for t in threads:
        # 32 kB per thread: the (unused) stream stays in L1. -i fixes the iterations
        # per thread (about 0.3 s at 3.6 GHz) instead of likwid's ~1 s calibration.
        for kernel, size, iters in (
            (peak, f"{32 * t}kB", 200000),
            (stream, f"{3 * array_bytes // 1000}kB", 20),
        ):
            # -W for STREAM: every thread first-touches its own chunk, as our mem program
            # does (-w lets the first thread initialise all of it: on a multi-NUMA node all
            # pages would sit on one node and the reference would measure something else).
            spread = "-W" if kernel == stream else "-w"
            cmd = ["likwid-bench", "-t", kernel, spread, f"N:{size}:{t}", "-i", str(iters)]
            runs = stream_reps if kernel == stream and stream_reps else reps
            script = "likwid-bench -v | head -1; " + _repeat(cmd, runs)[2]
            if kernel == peak and ptt:
                script = (
                    "h=$(mktemp -d) || exit 2; trap 'rm -rf \"$h\"' EXIT INT TERM; "
                    'mkdir -p "$h/.likwid/bench/x86-64" && '
                    f"printf '%s' {shlex.quote(ptt)} > \"$h/.likwid/bench/x86-64/{kernel}.ptt\" "
                    '&& export HOME="$h" || exit 2; ' + script
                )
            jobs.append(
                Job(
                    suite="node",
                    name=f"ref/likwid/{kernel}/t{t}",
                    program=["sh", "-c", script],
                    output="likwid-bench",
                    tags={**tags, "reference": "likwid-bench"},
                    timeout_s=120,
                )
            )
    return jobs


def wss_bytes(w: int, threads: int) -> int:
    """The working set both sides use: w rounded down to a multiple of 1 KiB x threads
    (64 doubles per thread and array: likwid-bench's copy kernels then split it without
    rounding; bench/node/mem.c wss_round is the same rule)."""
    unit = 1024 * threads
    return max(1, w // unit) * unit


def likwid_copy_jobs(
    flags: set[str], threads: list[int], sizes: list[int], reps: int, tags: dict
) -> list[Job]:
    """likwid-bench copy_<isa> over the working sets of our mem wss sweep, per thread
    count: one job per thread count, all sizes in it."""
    isa = likwid_kernels(flags)[1].removeprefix("stream")  # "_avx512_fma" etc.
    kernel = "copy" + isa.replace("_fma", "")  # likwid has no _fma copy: same loads/stores
    jobs = []
    for t in threads:
        lines = []
        for w in sizes:
            cmd = ["likwid-bench", "-t", kernel, "-W", f"N:{wss_bytes(w, t)}B:{t}"]
            # -i: enough sweeps for about 20 ms at 50 GB/s, at least 10
            cmd += ["-i", str(max(10, int(1e9 / max(wss_bytes(w, t), 1))))]
            lines.append(_repeat(cmd, reps)[2])
        jobs.append(
            Job(
                suite="node",
                name=f"ref/likwid/{kernel}/t{t}",
                program=["sh", "-c", "likwid-bench -v | head -1; " + "; ".join(lines)],
                output="likwid-bench",
                tags={**tags, "reference": "likwid-bench"},
                timeout_s=60 + 10 * len(sizes) * reps,
            )
        )
    return jobs


def fio_jobs(
    points: list[tuple[str, int, int]],
    size: int,
    seconds: float,
    reps: int,
    disk_dir: str | None,
    tags: dict,
) -> list[Job]:
    """points: (rw, block bytes, threads). psync + numjobs = our engine (threads x pread/
    pwrite), so depth means the same on both sides; overwrite=1 and scramble_buffers=0 do
    what our program does with the file and the buffer. Files in a fresh directory,
    removed."""
    jobs = []
    for rw, block, threads in points:
        base = shlex.quote(disk_dir) if disk_dir else "/var/tmp"
        fio = [
            "fio",
            "--name=ref",
            f"--rw={rw}",
            f"--bs={block}",
            f"--numjobs={threads}",
            "--ioengine=psync",
            "--direct=1",
            # like our disk program: the file laid out before timing (not written into
            # fallocated, unwritten extents) and one buffer written unchanged (fio's default
            # rewrites part of it before every write: 0.75x the write throughput here)
            "--overwrite=1",
            "--scramble_buffers=0",
            f"--size={size}",
            f"--runtime={max(1, round(seconds))}",  # fio refuses fractions, then runs size-bound
            "--time_based",
            "--group_reporting",
            "--output-format=json",
            '--directory="$d"',
        ]
        script = (
            f"d=$(mktemp -d {base}/hpcscope-fio-XXXXXX) || exit 2; "
            f"trap 'rm -rf \"$d\"' EXIT INT TERM; rc=0; "
            # fio's complaints about its options go to stderr while it runs anyway, under
            # other rules than ours: any stderr line makes the reference a failure.
            f'for i in $(seq {reps}); do {" ".join(fio)} 2>"$d/err" || rc=$?; '
            f'if [ -s "$d/err" ]; then cat "$d/err" >&2; rc=3; fi; done; exit $rc'
        )
        jobs.append(
            Job(
                suite="node",
                name=f"ref/fio/{rw}/{block}/t{threads}",
                program=["sh", "-c", script],
                output="fio",
                tags={**tags, "reference": "fio"},
                timeout_s=60 + reps * (seconds + 30),
            )
        )
    return jobs


def iperf3_jobs(
    points: list[tuple[str, int, int]], seconds: float, reps: int, tags: dict
) -> list[Job]:
    """points: (protocol, block, streams). One server per job on a free loopback port,
    stopped when the job ends (also on failure)."""
    jobs = []
    for protocol, block, streams in points:
        port = free_port()
        secs = max(1, round(seconds))  # iperf3 -t takes whole seconds; 0 would mean forever
        # timeout(1) on both sides: a job that hangs must not leave a server or client
        # behind. --foreground keeps them in the job's process group: without it timeout
        # makes a group of its own, which the kill of the job's group (a time limit,
        # Ctrl-C, launch/command.kill_group) missed, leaving iperf3 running (issue 43).
        limit = reps * (secs + 10) + 10
        client = [
            "timeout",
            "--foreground",
            str(secs + 10),
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            str(port),
            "-t",
            str(secs),
            "-P",
            str(streams),
            "-l",
            str(block),
            "-J",
        ]
        if protocol == "udp":
            client += ["-u", "-b", "0"]
        line = " ".join(client)
        script = (
            f"timeout --foreground {limit} iperf3 -s -B 127.0.0.1 -p {port} >/dev/null 2>&1 "
            "& srv=$!; "
            f"trap 'kill $srv 2>/dev/null' EXIT INT TERM; sleep 0.3; rc=0; "
            f"for i in $(seq {reps}); do {line} || rc=$?; done; exit $rc"
        )
        jobs.append(
            Job(
                suite="node",
                name=f"ref/iperf3/{protocol}/{block}/P{streams}",
                program=["sh", "-c", script],
                output="iperf3",
                tags={**tags, "reference": "iperf3"},
                timeout_s=limit + 30,
            )
        )
    return jobs
