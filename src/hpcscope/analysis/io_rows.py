"""The io suite's numbers per (MPI, ranks, op, mode, layout, transfer): the median of the
repetitions' bandwidths over every launch, the launches' own medians' min..max (the
spread between launches), and what the read numbers mean (records.md section 4, mpiio)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from hpcscope.analysis.tables import Column

HEADLINE = (
    "MPI-IO bandwidth, MB/s = ranks x block / slowest rank's open..close (writes: sync "
    "before close); median of all repetitions, min..max of the launches' medians"
)

COLUMNS: list[Column] = [
    ("mpi", "MPI"),
    ("ranks", "ranks"),
    ("op", "op"),
    ("mode", "mode"),
    ("layout", "file"),
    ("transfer_text", "transfer"),
    ("block_text", "block"),
    ("launches", "launches"),
    ("median_mbs", "median (MB/s)"),
    ("span", "launches min..max"),
    ("note", "note"),
]


def _size(n: int) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def rows(samples: list[dict]) -> list[dict[str, Any]]:
    groups: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    extra: dict[tuple, set[str]] = defaultdict(set)
    for s in samples:
        if s["benchmark"] != "mpiio" or s["metric"] != "bandwidth":
            continue
        prm, tags = s["params"] or {}, s["tags"] or {}
        key = (
            str(tags.get("mpi", "")),
            int(prm.get("ranks", 0)),
            {"write": 0, "read": 1}.get(str(prm.get("op")), 2),
            str(prm.get("op")),
            str(prm.get("mode")),
            str(prm.get("layout")),
            int(prm.get("transfer", 0)),
            int(prm.get("block", 0)),
        )
        groups[key][s["launch_id"]].extend(float(v) for v in s["values"] if v is not None)
        if prm.get("cache") == "kept":
            extra[key].add("page cache not dropped: may read memory")
        if prm.get("op") == "read" and int(prm.get("ranks", 0)) > 1 and prm.get("nodes") == 1:
            extra[key].add(
                "one node: another rank's block, same node (the cache drop keeps it off memory)"
            )
        if tags.get("oversubscribed"):
            extra[key].add("oversubscribed")
    out = []
    for key, launches in sorted(groups.items()):
        mpi, ranks, _, op, mode, layout, transfer, block = key
        pooled = [v for vs in launches.values() for v in vs]
        medians = [statistics.median(vs) for vs in launches.values() if vs]
        if not pooled:
            continue
        out.append(
            {
                "mpi": mpi,
                "ranks": ranks,
                "op": op,
                "mode": mode,
                "layout": layout,
                "transfer": transfer,
                "transfer_text": _size(transfer),
                "block": block,
                "block_text": _size(block),
                "launches": len(launches),
                "median_mbs": statistics.median(pooled),
                "range": (min(medians), max(medians)),
                "span": f"{min(medians):.4g}..{max(medians):.4g}",
                "note": "; ".join(sorted(extra[key])),
            }
        )
    return out


def caveats(samples: list[dict]) -> list[str]:
    """What every reader of the io numbers must know, from the records."""
    reads = [s for s in samples if (s["params"] or {}).get("op") == "read"]
    out = []
    if any((s["params"] or {}).get("cache") == "kept" for s in reads):
        out.append(
            "some reads ran without dropping the file from the page cache (posix_fadvise "
            "failed): those measure memory, not the file system"
        )
    elif reads:
        out.append(
            "reads follow a page-cache drop of the written file (fdatasync + "
            "POSIX_FADV_DONTNEED); a file system that keeps files in memory (tmpfs) or a "
            "server-side cache still serves them from memory"
        )
    return out


def disk_ceiling(store, host: str) -> dict | None:
    """The disk rate the newest node run of `host` measured, as the io suite's ceiling:
    {run, write, read (MB/s medians), block_text}, sequential with 1 thread at 1 MiB
    blocks (else the largest block measured); None when no node run measured the disk."""
    runs = [r for r in store.runs([]) if r.get("suite") == "node" and r.get("host") == host]
    for run in reversed(runs):
        if store.problem(run["id"]):
            continue
        disk = [
            s
            for s in store.samples(run["id"], benchmark="disk", metric="bandwidth")
            if (s["params"] or {}).get("pattern") == "seq"
            and int((s["params"] or {}).get("threads", 1)) == 1
        ]
        if not disk:
            continue
        blocks = {int(s["params"].get("block", 0)) for s in disk}
        block = 1 << 20 if 1 << 20 in blocks else max(blocks)
        found: dict[str, Any] = {"run": run["id"], "block_text": f"block {_size(block)}"}
        for op in ("write", "read"):
            values = [
                float(v)
                for s in disk
                if s["params"].get("op") == op and int(s["params"].get("block", 0)) == block
                for v in s["values"]
                if v is not None
            ]
            if values:
                found[op] = statistics.median(values)
        return found
    return None
