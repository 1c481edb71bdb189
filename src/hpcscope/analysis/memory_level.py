"""The level of the memory hierarchy a memory point measured: L1, L2, L3 or DRAM.

A copy within a 1 MiB working set on 2 threads is 512 KiB per thread: on a Zen 5 core
with 1 MiB of L2 that is the L2 cache at 570 GB/s, not "memory". The rule, from the
topology's caches (hwloc, recorded with the run):

- the working set per thread: the mem program's wss sweep splits W bytes (both arrays)
  over its T threads (W / T each); the pointer chase gives every thread its own chain of
  W bytes (W each);
- a cache level holds it when the per-thread working set times the threads sharing one
  instance of that cache (min(T, CPUs per instance): the threads are pinned one per CPU
  in order, so they fill an instance before the next) fits its size;
- the first (smallest) data or unified level that holds it is the level; none: DRAM
  where it is at least DRAM_FACTOR x the last-level cache's share (below), else
  "L3+DRAM" (the accesses hit both).

The summary quotes memory bandwidth and latency as DRAM's only where the per-thread
working set is at least DRAM_FACTOR x the last-level cache a thread sees (STREAM's rule:
4x; between 1x and 4x a share of the traffic still hits the cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DRAM_FACTOR = 4


@dataclass(frozen=True)
class Level:
    name: str  # "L1d", "L2", "L3"
    size: int  # bytes of one instance
    cpus: int  # CPUs sharing one instance


def levels_of(topology_xml: str | None) -> list[Level]:
    """The data and unified caches of a recorded topology, smallest level first ([]
    without a topology or with one hwloc cannot read)."""
    if not topology_xml:
        return []
    from hpcscope.machine.topology import Topology, TopologyError

    try:
        caches = Topology.from_xml(topology_xml).caches
    except (TopologyError, ValueError):
        return []
    found: dict[str, Level] = {}
    for c in caches:
        if c.type == "instruction":
            continue
        old = found.get(c.name)
        if old is None or c.size > old.size:
            found[c.name] = Level(c.name, c.size, max(1, len(c.cpus)))
    return sorted(found.values(), key=lambda lv: int(lv.name[1:].rstrip("d")))


def per_thread(workload: str | None, working_set: float, threads: int) -> float:
    """Bytes one thread touches (see the module doc)."""
    if workload == "mem_wss":
        return working_set / max(threads, 1)
    return working_set


def level(workload: str | None, working_set: float, threads: int, levels: Sequence[Level]) -> str:
    """'L1d', 'L2', 'L3', 'DRAM', or 'L3+DRAM' past the last-level cache but below
    DRAM_FACTOR x its share (part of the accesses still hit it); '' when no cache is
    known."""
    if not levels:
        return ""
    each = per_thread(workload, working_set, threads)
    for lv in levels:
        if each * min(max(threads, 1), lv.cpus) <= lv.size:
            return lv.name
    return (
        "DRAM" if dram_only(workload, working_set, threads, levels) else f"{levels[-1].name}+DRAM"
    )


def dram_only(
    workload: str | None, working_set: float, threads: int, levels: Sequence[Level]
) -> bool:
    """True where the per-thread working set is at least DRAM_FACTOR x the share of the
    last-level cache one thread has (the instance's size over the threads sharing it)."""
    if not levels:
        return False
    llc = levels[-1]
    share = llc.size / min(max(threads, 1), llc.cpus)
    return per_thread(workload, working_set, threads) >= DRAM_FACTOR * share


def name(level_name: str) -> str:
    """'L2 cache', 'DRAM' for a sentence."""
    if not level_name:
        return ""
    if level_name.endswith("+DRAM"):
        return f"{level_name.removesuffix('+DRAM').rstrip('d')} cache and DRAM"
    return level_name if level_name == "DRAM" else f"{level_name.rstrip('d')} cache"
