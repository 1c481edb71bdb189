"""The nbc suite's samples as the text OSU 7.4's programs print (`export --format osu`):
one block per (MPI, collective, other settings), under the program's own title line.

    # OSU MPI Non-Blocking Broadcast Latency Test v7.4
    # Overall = Coll. Init + Compute + MPI_Test + MPI_Wait
    # hpcscope: nbc, mpi=openmpi, ranks=2; median of all values per size over 1 launch(es)
    # Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)
    1                       1.26              0.92              0.54             45.73

The values are the medians of all raw values per size (as the p2p blocks), not OSU's
means: OSU's own aggregate of the same iterations is each launch's `osu` summary. The
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


def blocks(samples: Sequence[dict[str, Any]]) -> list[str]:
    """OSU text blocks of the nbc samples (benchmark nbc)."""
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
        launches = len({s["launch_id"] for s in group})
        lines = [title]
        nbc = overlap_measured(collective)
        if nbc:
            lines.append("# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait")
        lines.append(
            f"# hpcscope: nbc, {one_line(said)}; median of all values per size over "
            f"{launches} launch(es)"
        )
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
            if nbc:
                if not all(m in metrics for m, _ in NBC_COLUMNS):
                    continue
                values = [_median(metrics[m]) for m, _ in NBC_COLUMNS]
                first_cell = (
                    f"{values[0]:>13.2f}" if barrier else f"{size:<10d}{values[0]:>{WIDTH}.2f}"
                )
                lines.append(first_cell + "".join(f"{v:>{WIDTH}.2f}" for v in values[1:]))
            elif "time" in metrics:
                value = _median(metrics["time"])
                lines.append(f"{value:>17.2f}" if barrier else f"{size:<10d}{value:>{WIDTH}.2f}")
        out.append("\n".join(lines) + "\n")
    if missing:
        out.append(
            f"# not exported: nbc {', '.join(sorted(missing))} have no OSU 7.4 program; "
            "--format json, csv or markdown has them\n"
        )
    return out
