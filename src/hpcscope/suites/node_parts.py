"""Arguments of our node programs (bench/node/{mem,disk,net}) from the suite's options.

Defaults by mode (the knobs of cli/node_knobs.py replace them one by one):

  mem   --quick: blocks 4K,1M, latency with 1 thread; full: blocks 1K..10M, latency with
        1 thread and all cores at once; working-set sweep over the same sizes
  disk  --quick: 1M blocks, 1 I/O at a time, sequential only; full: 4K..100M x 1, 2, cores,
        all four tests. Given --disk-blocks or --disk-depths, all four tests run (IOPS and
        latency are what depth is varied for).
  net   --quick: TCP 128K, 1 stream, ping-pong 1 B; full: 1K,32K,128K x 1 and cores streams

Disk files: one per concurrent I/O, each the test size divided by the largest depth
(at least twice the largest block, a multiple of 1 MiB), so depth 128 does not need 128
times the space: --quick 256 MiB in all, full 2 GiB in all (the program refuses sizes the
file system cannot hold, naming them).
"""

from __future__ import annotations

MIB = 1 << 20
MEM_BLOCKS_FULL = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, MIB, 4 * MIB, 10 * MIB]
MEM_BLOCKS_QUICK = [4 << 10, MIB]
DISK_BLOCKS_FULL = [4 << 10, 64 << 10, MIB, 16 * MIB, 100 * MIB]


def sizes(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def mem_args(opts: dict, quick: bool, n: int, llc: int, threads: str, array_bytes: int) -> list:
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
    if quick:
        return args + [
            "--reps=5",
            "--chase-steps=1",
            "--chase-seconds=0.02",
            f"--chase-max={2 * llc}",
        ]
    return args + ["--reps=10", "--chase-steps=2"]


def disk_plan(opts: dict, quick: bool, n: int) -> dict:
    """blocks, depths, tests, per-file size, seconds and repetitions of the disk program."""
    chosen = bool(opts.get("disk_blocks") or opts.get("disk_depths"))
    blocks = opts.get("disk_blocks") or ([MIB] if quick else DISK_BLOCKS_FULL)
    depths = opts.get("disk_depths") or ([1] if quick else sorted({1, min(n, 2), n}))
    total = (256 if quick else 2048) * MIB
    per_file = max(2 * max(blocks), total // max(depths))
    per_file = (per_file + MIB - 1) // MIB * MIB
    return {
        "blocks": blocks,
        "depths": depths,
        "tests": "seqwrite,seqread" if quick and not chosen else "all",
        "size": per_file,
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
