"""NUMA distances as hwloc reports them beside the near/far matrix the node suite measured
(issue 33, part 4).

Reported: hwloc's latency matrix between NUMA nodes (on Linux the firmware's SLIT, local
= 10), from the topology XML: `<distances2 type="NUMANode" kind=K>` in hwloc 2 files
(K has HWLOC_DISTANCES_KIND_MEANS_LATENCY, 4; `indexes` are the nodes' OS indices when
indexing="os", `u64values` the matrix row by row) or `<distances latency_base=B>` with
N x N `<latency value=V/>` in hwloc 1.x files (one row per node in logical order).
Measured: the mem benchmark's pointer chase from node i's CPUs into node m's memory
(workload numa_latency) and its triad bandwidth the same way (numa_bandwidth).

Both become "remote / local" ratios per (i, m), the SLIT scale divided by the diagonal,
so the firmware's constants and nanoseconds compare directly. SLIT values are coarse
(10, 11, 12, 20, 21, 32 are the usual ones), so a measured ratio within AGREES of the
reported one counts as "as reported". Cost: O(nodes^2).
"""

from __future__ import annotations

import statistics
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

MEANS_LATENCY = 4  # HWLOC_DISTANCES_KIND_MEANS_LATENCY
AGREES = 0.25  # |measured / reported - 1| at most this: as reported

Matrix = dict[tuple[int, int], float]  # (cpu node, memory node) -> value, OS indices


@dataclass
class Distances:
    """Remote/local ratios per (i, m), i != m: reported (None: hwloc has none) and measured."""

    reported: Matrix | None
    latency: Matrix  # measured, chase latency ratio
    bandwidth: Matrix  # measured, far / near triad bandwidth

    def worst(self) -> tuple[int, int] | None:
        """The pair whose measured latency ratio is farthest from the reported one."""
        reported = self.reported or {}
        pairs = [p for p in self.latency if p in reported]
        return max(pairs, key=lambda p: abs(self.latency[p] / reported[p] - 1), default=None)

    def differing(self) -> list[tuple[int, int]]:
        reported = self.reported or {}
        return [
            p
            for p, v in sorted(self.latency.items())
            if p in reported and abs(v / reported[p] - 1) > AGREES
        ]


def reported_matrix(xml: str) -> Matrix | None:
    """hwloc's NUMA latency matrix as remote/local ratios; None when the XML has none."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return None
    numa_os = [
        int(e.get("os_index", "-1"))
        for e in root.iter("object")
        if e.get("type") == "NUMANode"  # hwloc 1 and 2 alike; document order = logical order
    ]
    for d in root.iter("distances2"):
        if d.get("type") != "NUMANode" or not int(d.get("kind", "0")) & MEANS_LATENCY:
            continue
        idx = d.find("indexes")
        vals = d.find("u64values")
        if idx is None or vals is None:
            continue
        indexes = [int(v) for v in (idx.text or "").split()]
        if d.get("indexing") != "os":  # gp indices: fall back to the logical order
            indexes = numa_os[: len(indexes)]
        values = [float(v) for v in (vals.text or "").split()]
        return _ratios(indexes, values)
    for d in root.iter("distances"):  # hwloc 1.x
        values = [float(e.get("value", "nan")) for e in d.iter("latency")]
        n = int(d.get("nbobjs", "0"))
        if n == len(numa_os) and len(values) == n * n:
            return _ratios(numa_os, values)
    return None


def _ratios(indexes: list[int], values: list[float]) -> Matrix | None:
    n = len(indexes)
    if n < 2 or len(values) != n * n:
        return None
    out: Matrix = {}
    for a, i in enumerate(indexes):
        local = values[a * n + a]
        if not local > 0:
            return None
        for b, m in enumerate(indexes):
            if a != b:
                out[(i, m)] = values[a * n + b] / local
    return out


def _measured(samples: Sequence[dict], workload: str, threads: int | None) -> Matrix:
    """Medians per (cpu node, memory node) of one NUMA workload (bandwidth: the fewest
    threads measured, where each node's bandwidth is least limited by its own CPUs)."""
    by_pair: dict[tuple[int, int], list[float]] = {}
    for s in samples:
        p = s.get("params") or {}
        if s.get("benchmark") != "mem" or p.get("workload") != workload:
            continue
        if threads is not None and p.get("threads") != threads:
            continue
        i, m = p.get("cpu_node"), p.get("mem_node")
        if isinstance(i, int) and isinstance(m, int):
            by_pair.setdefault((i, m), []).extend(s["values"])
    medians = {k: statistics.median(v) for k, v in by_pair.items() if v}
    out: Matrix = {}
    for (i, m), v in medians.items():
        local = medians.get((i, i))
        if i != m and local:
            out[(i, m)] = v / local
    return out


def distances(xml: str, samples: Sequence[dict]) -> Distances | None:
    """The comparison, or None when the run measured no remote NUMA node."""
    latency = _measured(samples, "numa_latency", None)
    if not latency:
        return None
    threads = sorted(
        p["threads"]
        for s in samples
        if (p := s.get("params") or {}).get("workload") == "numa_bandwidth"
        and isinstance(p.get("threads"), int)
    )
    bandwidth = _measured(samples, "numa_bandwidth", threads[0]) if threads else {}
    return Distances(reported_matrix(xml), latency, bandwidth)
