"""The nbc suite's samples as the text OSU 7.4's programs print (`export --format osu`):
one block per (MPI, collective, other settings), under the program's own title line.

    # OSU MPI Non-Blocking Broadcast Latency Test v7.4
    # Overall = Coll. Init + Compute + MPI_Test + MPI_Wait
    # hpcscope: nbc, mpi=openmpi, ranks=2; median of all values per size over 1 launch(es)
    # Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)
    1                       1.26              0.92              0.54             45.73

The values are the medians of all raw values per size (each the slowest rank's), as the
p2p blocks; for a run with `--protocol osu` read from the store they are OSU's own numbers
instead: each launch's `osu` summary (each rank's mean over the iterations, averaged over
the ranks, as OSU prints them), averaged over the launches. The "# hpcscope:" line says
which. The
blocking, persistent and blocking neighbourhood ones print OSU's "# Size  Avg
Latency(us)"; barriers have no size column, as in OSU. alltoallv_neighbors and
reduce_scatter_block_persistent have no OSU program: left out with a line naming them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcscope.formatting import one_line
from hpcscope.results.cells import LAUNCH_TAGS
from hpcscope.results.nbc_names import osu_title, overlap_measured

WIDTH = 18  # OSU's FIELD_WIDTH; sizes are %-10d
NBC_COLUMNS = (
    ("overall_time", "Overall(us)"),
    ("compute_time", "Compute(us)"),
    ("pure_time", "Pure Comm.(us)"),
    ("overlap", "Overlap(%)"),
)
# Params that are settings of the measurement, not what the block shows.
_SETTINGS = ("bytes", "collective", "family", "iterations", "p")


def _median(samples: Sequence[dict[str, Any]]) -> float:
    return float(np.median([v for s in samples for v in s["values"]]))


OSU_KEYS = {  # the osu summary's keys in OSU's column order
    True: ("overall_us", "compute_us", "pure_us", "overlap"),
    False: ("avg_us",),
}


def _osu_numbers(
    summaries: Sequence[dict[str, Any]], launches: set, collective: str, size: int, nbc: bool
) -> list[float] | None:
    """OSU's aggregate of (collective, size) over the group's launches, or None."""
    found = [
        x
        for x in summaries
        if x.get("metric") == "osu"
        and x.get("launch_id") in launches
        and x.get("params", {}).get("collective") == collective
        and int(x.get("params", {}).get("bytes", -1)) == size
    ]
    if not found or not all(k in x for x in found for k in OSU_KEYS[nbc]):
        return None
    return [float(np.mean([x[k] for x in found])) for k in OSU_KEYS[nbc]]


def blocks(
    samples: Sequence[dict[str, Any]], summaries: Sequence[dict[str, Any]] = ()
) -> list[str]:
    """OSU text blocks of the nbc samples (benchmark nbc); `summaries`: the run's summary
    records, whose `osu` aggregates a --protocol osu run prints."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for s in samples:
        prm = s["params"]
        tags = {k: v for k, v in s["tags"].items() if k not in LAUNCH_TAGS}
        other = {k: v for k, v in prm.items() if k not in _SETTINGS}
        key = (
            str(tags.get("mpi", "")),
            str(prm.get("collective", "")),
            repr(sorted(tags.items())),
            repr(sorted(other.items())),
        )
        groups.setdefault(key, []).append(s)
    out, missing = [], set()
    for key in sorted(groups):
        group = groups[key]
        collective = key[1]
        title = osu_title(collective)
        if title is None:
            missing.add(collective)
            continue
        first = group[0]
        tags = {k: v for k, v in first["tags"].items() if k not in LAUNCH_TAGS}
        other = {k: v for k, v in first["params"].items() if k not in _SETTINGS}
        said = ", ".join(
            [f"p={first['params'].get('p')}"]
            + [f"{k}={v}" for k, v in sorted(tags.items())]
            + [f"{k}={v}" for k, v in sorted(other.items())]
        )
        launch_ids = {s["launch_id"] for s in group}
        launches = len(launch_ids)
        lines = [title]
        nbc = overlap_measured(collective)
        osu_loop = bool(summaries) and all(s["params"].get("protocol") == "osu" for s in group)
        if nbc:
            lines.append("# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait")
        what = (
            "OSU's numbers (each rank's mean, averaged over ranks), mean of"
            if osu_loop
            else "median of all values per size over"
        )
        lines.append(f"# hpcscope: nbc, {one_line(said)}; {what} {launches} launch(es)")
        by_size: dict[int, dict[str, list[dict[str, Any]]]] = {}
        for s in group:
            by_size.setdefault(int(s["params"].get("bytes", 0)), {}).setdefault(
                s["metric"], []
            ).append(s)
        barrier = collective.endswith("barrier") or collective.startswith("barrier")
        if nbc:
            names = [name for _, name in NBC_COLUMNS]
            head = "# Overall(us)" if barrier else f"{'# Size':<10}{names[0]:>{WIDTH}}"
            lines.append(head + "".join(f"{n:>{WIDTH}}" for n in names[1:]))
        else:
            lines.append(
                "# Avg Latency(us)" if barrier else f"{'# Size':<10}{'Avg Latency(us)':>{WIDTH}}"
            )
        for size in sorted(by_size):
            metrics = by_size[size]
            theirs = (
                _osu_numbers(summaries, launch_ids, collective, size, nbc) if osu_loop else None
            )
            if nbc:
                if not all(m in metrics for m, _ in NBC_COLUMNS):
                    continue
                values = theirs or [_median(metrics[m]) for m, _ in NBC_COLUMNS]
                first_cell = (
                    f"{values[0]:>13.2f}" if barrier else f"{size:<10d}{values[0]:>{WIDTH}.2f}"
                )
                lines.append(first_cell + "".join(f"{v:>{WIDTH}.2f}" for v in values[1:]))
            elif "time" in metrics:
                value = theirs[0] if theirs else _median(metrics["time"])
                lines.append(f"{value:>17.2f}" if barrier else f"{size:<10d}{value:>{WIDTH}.2f}")
        out.append("\n".join(lines) + "\n")
    if missing:
        out.append(
            f"# not exported: nbc {', '.join(sorted(missing))} have no OSU 7.4 program; "
            "--format json, csv or markdown has them\n"
        )
    return out
