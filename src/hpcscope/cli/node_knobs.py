"""The knobs of `hpcscope run node` that the seed exercises vary, and their validation.

Each option is a comma list; a bad value stops the run before anything is measured with one
line naming the value and the fix (exit 2). The limits are the ones the exercises use and
what the programs can do:

  --disk-blocks    1 KiB .. 100 MiB, multiples of 512 B: O_DIRECT needs offsets and sizes
                   aligned to the device's logical block size (512 B or 4 KiB); the disk
                   program refuses blocks below it, naming the device's size
  --disk-depths    1 .. 128 concurrent I/Os (threads x synchronous pread/pwrite)
  --net-streams    1 .. 8 parallel TCP/UDP streams
  --net-blocks     1 B .. 64 MiB per send (UDP datagrams above 65,507 B are skipped)
  --mem-blocks     1 KiB .. 1 GiB: the block-copy sweep and the working-set sweep
  --latency-threads / --numa-threads   1 .. 64 threads (pointer chase; NUMA matrix)
"""

from __future__ import annotations

import re

from hpcscope import runner
from hpcscope.cli.common import csv_list
from hpcscope.cli.options import once_list

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
_UNITS = {"": 1, "K": KIB, "M": MIB, "G": GIB}


def parse_size(text: str) -> int | None:
    """'4K' / '4KiB' / '1M' / '512' -> bytes (binary units); None when unreadable."""
    m = re.fullmatch(r"([0-9]{1,20})\s*([KMG]?)(?:i?B)?", text.strip(), flags=re.I)
    return int(m.group(1)) * _UNITS[m.group(2).upper()] if m else None


def human(n: int) -> str:
    for unit, size in (("G", GIB), ("M", MIB), ("K", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def size_list(
    text: str | None, option: str, low: int, high: int, multiple: int = 1, why: str = ""
) -> list[int] | None:
    items = csv_list(text, option, f"{human(low)},{human(min(high, 1 << 20))}")
    if not items:
        return None
    out = []
    for item in items:
        n = parse_size(item)
        if n is None:
            raise runner.UsageError(
                f"{option} '{item}': not a size; write bytes or K/M/G, e.g. "
                f"{human(low)},{human(min(high, 1 << 20))}"
            )
        if not low <= n <= high:
            raise runner.UsageError(
                f"{option} '{item}': outside {human(low)}..{human(high)}; choose sizes in "
                "that range"
            )
        if n % multiple:
            raise runner.UsageError(
                f"{option} '{item}': not a multiple of {multiple} B{why}; e.g. "
                f"{human((n // multiple + 1) * multiple)}"
            )
        out.append(n)
    return sorted(set(out))


def count_range(text: str | None, option: str, low: int, high: int) -> list[int] | None:
    items = csv_list(text, option, f"{low},{min(high, 4)}")
    if not items:
        return None
    out = []
    for item in items:
        if not (item.isascii() and item.isdigit() and len(item) < 10 and low <= int(item) <= high):
            raise runner.UsageError(
                f"{option} '{item}': give whole numbers {low}..{high}, e.g. {low},{min(high, 4)}"
            )
        out.append(int(item))
    return sorted(set(out))


DIO = " (O_DIRECT needs multiples of the device's logical block size, 512 B or 4 KiB)"


def node_knobs(own: dict) -> dict:
    """The validated knob values (None: the suite's default for --quick or full)."""
    return {
        "disk_blocks": size_list(own.get("disk_blocks"), "--disk-blocks", KIB, 100 * MIB, 512, DIO),
        "disk_depths": count_range(own.get("disk_depths"), "--disk-depths", 1, 128),
        "net_streams": count_range(own.get("net_streams"), "--net-streams", 1, 8),
        "net_blocks": size_list(own.get("net_blocks"), "--net-blocks", 1, 64 * MIB),
        "mem_blocks": size_list(own.get("mem_blocks"), "--mem-blocks", KIB, GIB),
        "latency_threads": count_range(own.get("latency_threads"), "--latency-threads", 1, 64),
        "numa_threads": count_range(own.get("numa_threads"), "--numa-threads", 1, 64),
    }


def node_knob_options(fn):
    """The click options of the knobs above (help texts state the ranges)."""
    for decorator in reversed(
        [
            once_list(
                "--disk-blocks",
                "1K,4K",
                default=None,
                help="Disk block sizes, 1K..100M, multiples of 512 B (O_DIRECT alignment), "
                "e.g. 1K,4K,1M,100M.",
            ),
            once_list(
                "--disk-depths",
                "1,8",
                default=None,
                help="Concurrent I/Os of the IOPS/latency test (random small blocks), 1..128, "
                "e.g. 1,8,128.",
            ),
            once_list(
                "--net-streams",
                "1,2",
                default=None,
                help="Parallel network streams, 1..8, e.g. 1,2,8.",
            ),
            once_list(
                "--net-blocks",
                "1K,32K",
                default=None,
                help="Bytes per network send, 1..64M, e.g. 1K,32K,128K (UDP: at most 65507).",
            ),
            once_list(
                "--mem-blocks",
                "1K,64K",
                default=None,
                help="Memory block sizes and working sets, 1K..1G, e.g. 1K,64K,1M,10M.",
            ),
            once_list(
                "--latency-threads",
                "1,2",
                default=None,
                help="Threads chasing pointers at once for memory latency, 1..64, e.g. 1,2.",
            ),
            once_list(
                "--numa-threads",
                "1,2",
                default=None,
                help="Threads per NUMA node in the near/far bandwidth matrix, 1..64.",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn
