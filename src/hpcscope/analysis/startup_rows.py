"""The startup suite's numbers per (MPI, ranks): one number per launch, then the median
over launches and their spread (min..max), because start-up varies between launches far
more than within one (a cold page cache, the launcher's daemons, the file system).

Per launch (records.md section 4, startup): MPI_Init's mean and max over ranks (OSU's
avg and max; its min is in the export), the launch-to-hello time, and the harness's wall
time around mpirun/srun. All in ms here; the records keep us.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from hpcscope.analysis.tables import Column
from hpcscope.results.startup_osu import osu_numbers, per_launch

COLUMNS: list[Column] = [
    ("mpi", "MPI"),
    ("ranks", "ranks"),
    ("launches", "launches"),
    ("init_avg_ms", "MPI_Init avg (ms)"),
    ("init_avg_span", "avg min..max"),
    ("init_max_ms", "MPI_Init max (ms)"),
    ("hello_ms", "launch to hello (ms)"),
    ("hello_span", "hello min..max"),
    ("job_ms", "job wall (ms)"),
    ("job_span", "job min..max"),
    ("note", "note"),
]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _span(values: list[float]) -> str:
    return f"{min(values):.3g}..{max(values):.3g}" if values else "-"


def rows(samples: list[dict]) -> list[dict[str, Any]]:
    """One row per (MPI, ranks), sorted; medians over launches and their min..max."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for entry in per_launch(samples).values():
        groups[(entry["mpi"], entry["ranks"])].append(entry)
    out = []
    for (mpi, ranks), launches in sorted(groups.items()):
        avg = [osu_numbers(e["init"])[2] for e in launches if "init" in e]
        # osu_init prints its avg, min and max; parse_osu keeps the avg (one value)
        worst = [osu_numbers(e["init"])[1] for e in launches if "init" in e and not e["osu_build"]]
        hello = [e["hello"] for e in launches if "hello" in e]
        job = [e["job"] for e in launches if "job" in e]
        notes = []
        if any(e["oversubscribed"] for e in launches):
            notes.append("oversubscribed")
        if any(e.get("hello_from") == "first_process" for e in launches):
            notes.append("hello from the first process, not the launch")
        if any(e["simulated"] for e in launches):
            notes.append("simulated clock")
        out.append(
            {
                "mpi": mpi,
                "ranks": ranks,
                "launches": len(launches),
                "init_avg_ms": _median(avg),
                "init_avg_span": _span(avg),
                "init_avg_range": (min(avg), max(avg)) if avg else None,
                "init_max_ms": _median(worst),
                "hello_ms": _median(hello),
                "hello_span": _span(hello),
                "hello_range": (min(hello), max(hello)) if hello else None,
                "job_ms": _median(job),
                "job_span": _span(job),
                "note": "; ".join(notes),
            }
        )
    return out
