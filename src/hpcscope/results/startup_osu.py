"""The startup suite in OSU 7.4's own text (`export --format osu`), so scripts written
for osu_init and osu_hello read it:

    # OSU MPI Init Test v7.4
    nprocs: 4, min: 286 ms, max: 291 ms, avg: 288 ms

One such line per launch (OSU prints one per run), in whole ms truncated as osu_init's
`long` does; osu_hello prints no time, so its block carries ours as a comment line.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

OSU_VERSION = "7.4"


def per_launch(samples: list[dict]) -> dict[int, dict[str, Any]]:
    """launch id -> {mpi, ranks, oversubscribed, init (per-rank ms), hello, hello_from, job}."""
    out: dict[int, dict[str, Any]] = {}
    for s in samples:
        if s["benchmark"] != "startup" or s["metric"] != "time":
            continue
        prm, tags = s["params"] or {}, s["tags"] or {}
        entry = out.setdefault(
            s["launch_id"],
            {
                # a user's OSU build (--osu-dir): its own row, never pooled with ours
                "mpi": str(tags.get("mpi", ""))
                + (" [OSU build]" if tags.get("tool") == "osu" else ""),
                "osu_build": tags.get("tool") == "osu",
                "ranks": int(prm.get("ranks", tags.get("ranks", 0))),
                "oversubscribed": bool(tags.get("oversubscribed")),
                "simulated": bool(tags.get("simulated")),
            },
        )
        ms = [float(v) / 1000 for v in s["values"] if v is not None]
        if not ms:
            continue
        phase = prm.get("phase")
        if phase == "init":
            entry["init"] = ms
        elif phase == "hello":
            entry["hello"], entry["hello_from"] = ms[0], prm.get("from", "")
        elif phase == "job":
            entry["job"] = ms[0]
    return out


def osu_numbers(init_ms: list[float]) -> tuple[float, float, float]:
    """(min, max, avg) over the ranks of one launch, as osu_init reports them."""
    return min(init_ms), max(init_ms), sum(init_ms) / len(init_ms)


def osu_text(samples: list[dict[str, Any]]) -> str:
    """The OSU blocks of the startup samples ('' when there are none)."""
    launches = per_launch([s for s in samples if s["benchmark"] == "startup"])
    if not launches:
        return ""
    by_mpi: dict[str, list[dict]] = defaultdict(list)
    for launch_id in sorted(launches):
        by_mpi[launches[launch_id]["mpi"]].append(launches[launch_id])
    out = []
    for mpi, entries in sorted(by_mpi.items()):
        entries.sort(key=lambda e: e["ranks"])
        lines = [f"# OSU MPI Init Test v{OSU_VERSION}", f"# hpcscope: startup, mpi={mpi}"]
        for e in entries:
            if "init" in e:
                # osu_init: each rank's time as a long (whole ms, truncated), the
                # average as the integer sum over the processes divided by their number
                whole = [int(x) for x in e["init"]]
                low, high, avg = min(whole), max(whole), sum(whole) // len(whole)
                lines.append(f"nprocs: {e['ranks']}, min: {low} ms, max: {high} ms, avg: {avg} ms")
        lines += ["", f"# OSU MPI Hello World Test v{OSU_VERSION}"]
        for ranks in sorted({e["ranks"] for e in entries}):
            hello = [e["hello"] for e in entries if e["ranks"] == ranks and "hello" in e]
            if hello:
                lines.append(
                    f"# hpcscope: launch to every rank's hello {statistics.median(hello):.1f} "
                    f"ms (median of {len(hello)} launches, mpi={mpi})"
                )
            lines.append(f"This is a test with {ranks} processes")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)
