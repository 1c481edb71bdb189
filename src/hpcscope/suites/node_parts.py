"""Arguments of our node programs (bench/node/{mem,disk,net}) from the suite's options.

Defaults by mode (the knobs of cli/node_knobs.py replace them one by one):

  mem   --quick: blocks 4K,1M, each thread sweeping a quarter of a STREAM array (at least
        64 MiB: far beyond a cache, and a tenth of the time of a whole array; the medians
        agreed within 4 % here), latency with 1 thread; full: blocks 1K..10M over a whole
        array, latency with 1 thread and all cores at once; working-set sweep over the
        same sizes
  disk  two jobs, as the seed exercises measure: throughput over block sizes (--quick: 1M,
        1 I/O at a time, sequential only; full: 4K..100M x 1, 2, cores I/Os, all four tests)
        and IOPS/latency over concurrency (random 4 KiB reads and writes, or the smallest
        --disk-blocks of at most 64 KiB, at each --disk-depths; full default 1, 2, cores,
        16, 64; --quick only when depths are given). Concurrent I/Os = threads, each with
        its own buffer of the largest block, so 128 x 100 MiB blocks is never asked.
  net   --quick: TCP 128K, 1 stream, ping-pong 1 B; full: 1K,32K,128K x 1 and cores streams

Disk files: one per concurrent I/O. Throughput: 256 MiB (--quick) or 1 GiB each, at least
twice the largest block; a full run grows them past RAM where outgrow_ram allows
(suites/node.py disk_note; fio runs the same size). IOPS: 2 GiB (--quick 256 MiB) divided by the largest depth, so
depth 128 does not need 128 times the space. The program refuses sizes the file system
cannot hold, naming them.
"""

from __future__ import annotations

from hpcscope.formatting import format_bytes

MIB = 1 << 20
MEM_BLOCKS_FULL = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, MIB, 4 * MIB, 10 * MIB]
MEM_BLOCKS_QUICK = [4 << 10, MIB]
QUICK_BLOCK_TOTAL_MIN = 64 * MIB
DISK_BLOCKS_FULL = [4 << 10, 64 << 10, MIB, 16 * MIB, 100 * MIB]


def sizes(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def mem_args(
    opts: dict,
    quick: bool,
    n: int,
    llc: int,
    threads: str,
    array_bytes: int,
    repeat: tuple[int, float] | None = None,
) -> list:
    """`repeat`: (--reps, --chase-seconds) of a run to a precision (suites/node_precision),
    instead of the fixed ones."""
    blocks = opts.get("mem_blocks") or (MEM_BLOCKS_QUICK if quick else MEM_BLOCKS_FULL)
    lat = opts.get("latency_threads") or ([1] if quick else sorted({1, n}))
    numa = opts.get("numa_threads") or [1]
    args = [
        f"--threads={threads}",
        f"--array-bytes={array_bytes}",
        f"--block-sizes={sizes(blocks)}",
        f"--chase-threads={sizes(lat)}",
        f"--numa-threads={sizes(numa)}",
    ]
    # fixed: full runs keep the program's chase repetition (0.05 s)
    reps, chase_s = repeat or ((5, 0.02) if quick else (10, None))
    args += [f"--reps={reps}"] + ([f"--chase-seconds={chase_s}"] if chase_s else [])
    if quick:
        return args + [
            f"--block-total={max(array_bytes // 4, QUICK_BLOCK_TOTAL_MIN)}",
            "--chase-steps=1",
            f"--chase-max={2 * llc}",
        ]
    return args + ["--chase-steps=2"]


def disk_plan(opts: dict, quick: bool, n: int) -> dict:
    """The throughput job: blocks, threads, tests, per-file size, seconds, repetitions."""
    blocks = opts.get("disk_blocks") or ([MIB] if quick else DISK_BLOCKS_FULL)
    size = max(2 * max(blocks), (256 if quick else 1024) * MIB)
    return {
        "blocks": blocks,
        "depths": [1] if quick else sorted({1, min(n, 2), n}),
        "tests": "seqwrite,seqread" if quick and not opts.get("disk_blocks") else "all",
        "size": (size + MIB - 1) // MIB * MIB,
        "seconds": 0.5 if quick else 1,
        "reps": 2 if quick else 3,
    }


# The throughput files outgrow RAM (MemTotal) by this factor in a full run, where the
# files of the most concurrent I/Os together take at most OUTGROW_MAX and half the free
# space: laying them out costs their size in writes (about a minute at 1 GB/s for
# OUTGROW_MAX), once for ours and once per fio job.
OUTGROW = 1.25
OUTGROW_MAX = 64 << 30


def outgrow_ram(d: dict, facts: dict, quick: bool) -> tuple[int, str]:
    """(bytes per file, why) for the throughput job `d` on the disk `facts` describes
    (machine/disk_facts.py): past RAM where the rule above allows, else d's own size with
    the reason it stays below."""
    ram, free = facts.get("mem_total"), facts.get("free_bytes")
    size = d["size"]
    if not ram:
        return size, "RAM size unknown"
    if size > ram:
        return size, f"larger than RAM ({format_bytes(ram)})"
    want = -(-int(OUTGROW * ram) // MIB) * MIB
    total = want * max(d["depths"])
    if quick:
        return size, (
            f"within RAM ({format_bytes(ram)}): --quick does not lay out "
            f"{format_bytes(total)}, so a cache above the device may serve the rates"
        )
    room = min(OUTGROW_MAX, (free or 0) // 2)
    if total > room:
        return size, (
            f"within RAM ({format_bytes(ram)}): files past it at {max(d['depths'])} "
            f"concurrent I/Os would take {format_bytes(total)}, more than "
            f"{format_bytes(room)} (the smaller of {format_bytes(OUTGROW_MAX)} and half the "
            "free space)"
        )
    return want, f"{OUTGROW}x RAM ({format_bytes(ram)}), so no cache holds the file"


def disk_iops_plan(opts: dict, quick: bool, n: int) -> dict | None:
    """The IOPS/latency job over concurrency, or None (--quick without --disk-depths, or
    nothing left: depths the throughput job already runs random tests at are not
    measured twice)."""
    depths = opts.get("disk_depths")
    if not depths and quick:
        return None
    depths = depths or sorted({1, min(n, 2), n, 16, 64})
    small = [b for b in opts.get("disk_blocks") or [] if b <= 64 << 10]
    block = min(small) if small else 4096
    tp = disk_plan(opts, quick, n)
    if tp["tests"] == "all" and block in tp["blocks"]:
        depths = [d for d in depths if d not in tp["depths"]]
    if not depths:
        return None
    per_file = max(2 * block, (256 if quick else 2048) * MIB // max(depths))
    return {
        "blocks": [block],
        "depths": depths,
        "tests": "randread,randwrite",
        "size": (per_file + MIB - 1) // MIB * MIB,
        "seconds": 0.5 if quick else 1,
        "reps": 2 if quick else 3,
    }


def disk_args(d: dict, disk_dir: str | None) -> list[str]:
    args = [
        f"--blocks={sizes(d['blocks'])}",
        f"--threads={sizes(d['depths'])}",
        f"--tests={d['tests']}",
        f"--size={d['size']}",
        f"--seconds={d['seconds']}",
        f"--reps={d['reps']}",
    ]
    return args + ([f"--dir={disk_dir}"] if disk_dir else [])


def net_plan(opts: dict, quick: bool, n: int) -> dict:
    streams = opts.get("net_streams") or ([1] if quick else sorted({1, n}))
    blocks = opts.get("net_blocks") or ([128 << 10] if quick else [1 << 10, 32 << 10, 128 << 10])
    chosen = bool(opts.get("net_streams") or opts.get("net_blocks"))
    return {
        "streams": streams,
        "blocks": blocks,
        "tests": "tcp,rr" if quick and not chosen else "tcp,udp,rr",
        "rr": "1" if quick else "1,64,1K",
        "seconds": 0.5 if quick else 1,
        "reps": 2 if quick else 3,
    }


def net_args(d: dict) -> list[str]:
    return [
        f"--tests={d['tests']}",
        f"--streams={sizes(d['streams'])}",
        f"--blocks={sizes(d['blocks'])}",
        f"--rr-bytes={d['rr']}",
        f"--seconds={d['seconds']}",
        f"--reps={d['reps']}",
    ]
