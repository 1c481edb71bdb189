"""OSU's own number of a `--protocol osu` rma run, for `export --format osu`.

Under `--protocol osu` bench/mpi/rma.c times OSU 7.4's loop and writes OSU's number, one
mean over the whole loop (t_end - t_start), as each summary's `value`. The OSU text of such
a run prints that number (the mean over launches where there are several), as OSU prints
it; the median of the blocks, the default elsewhere, reads lower under load, where a few
preempted iterations lift OSU's mean (docs/rma.md, "Against OSU 7.4 itself").
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from hpcscope.results.cells import canonical

# not "# OSU...": OSU-text readers (benchmarks/osu_side_by_side) start a block at that
NOTE = "# value: OSU's own number (t_end - t_start over the timed iterations), mean over {n} launch(es)"


def numbers(summaries: Sequence[dict[str, Any]]) -> dict[tuple[int, str], float]:
    """{(launch id, params json): value} of the rma summaries a --protocol osu run wrote."""
    return {
        (int(r["launch_id"]), canonical(r.get("params") or {})): float(r["value"])
        for r in summaries
        if (r.get("params") or {}).get("protocol") == "osu" and r.get("value") is not None
    }


def value(samples: Sequence[dict[str, Any]], found: dict[tuple[int, str], float]) -> float | None:
    """The mean of OSU's numbers behind these samples (one size of one block), or None
    when any is missing (the caller then prints the median)."""
    got = [found.get((int(s["launch_id"]), canonical(s["params"]))) for s in samples]
    return fmean(v for v in got if v is not None) if got and None not in got else None
