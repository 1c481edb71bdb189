"""OSU's own number of a `--protocol osu` p2p or rma run, for `export --format osu`.

Under `--protocol osu` bench/mpi/p2p.c and rma.c time OSU 7.4's loop and write OSU's
number, its one aggregate over the timed iterations (a mean: the summed per-iteration
times of osu_latency, t_end - t_start of the one-sided programs), as each summary's
`value`. The OSU text of such a run prints that number (the mean over launches where there
are several), as OSU prints it. The median of the blocks, printed otherwise, reads lower
where a few slow iterations lift OSU's mean: under load, and in osu_latency_persistent,
whose late-posted receives make a heavy tail (docs/rma.md, docs/osu.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from hpcscope.results.cells import canonical

# not "# OSU...": OSU-text readers (benchmarks/osu_side_by_side) start a block at that
NOTE = "# value: OSU's own number (its mean over the timed iterations), mean over {n} launch(es)"


def numbers(summaries: Sequence[dict[str, Any]]) -> dict[tuple[int, str], float]:
    """{(launch id, params json): value} of the summaries a --protocol osu run wrote."""
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
