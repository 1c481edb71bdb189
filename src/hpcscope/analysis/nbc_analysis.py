"""The nbc suite's rows: times and overlap per (MPI, collective, size), and its guideline
checks with the coll suite's statistics (verdicts.verdict_of, Holm over the run's checks).

Guidelines (docs/nbc.md), each "the candidate is not slower than the reference":
    I<coll> + MPI_Wait (pure_time)        vs <coll>                  (time)
    <coll>_persistent Start + Wait (time) vs <coll>                  (time)
    ineighbor_<c> + MPI_Wait (pure_time)  vs neighbor_<c>            (time)
    neighbor_alltoall (time)              vs MPI_Alltoallv on the same neighbours' blocks
                                             (alltoallv_neighbors)
verdicts.verdict_of tests "is `other` faster than `native`": called with the candidate as
native and the reference as other, its "violation" (the reference significantly >= 5 %
faster, in at least two launches each) is a violated guideline, "suggested" the same from
one launch, "slower" a candidate significantly faster, "same" neither.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from hpcscope.analysis.verdicts import ALPHA, THRESHOLD, holm, mpi_of, verdict_of
from hpcscope.results import stats
from hpcscope.results.nbc_names import blocking_of

TIME_METRICS = ("time", "pure_time", "overall_time", "compute_time")
COLUMNS = [
    ("mpi", "MPI"),
    ("family", "family"),
    ("collective", "collective"),
    ("p", "p"),
    ("bytes", "size (B)"),
    ("time_us", "time (us)"),
    ("pure_us", "pure comm. (us)"),
    ("overall_us", "overall (us)"),
    ("compute_us", "compute (us)"),
    ("overlap", "overlap (%)"),
    ("blocking_us", "blocking (us)"),
]
GUIDELINE_COLUMNS = [
    ("mpi", "MPI"),
    ("guideline", "guideline"),
    ("p", "p"),
    ("bytes", "size (B)"),
    ("candidate_us", "candidate (us)"),
    ("reference_us", "reference (us)"),
    ("factor", "candidate / reference"),
    ("p_adjusted", "Holm-corrected p"),
    ("launches", "launches"),
    ("status", "verdict"),
]
STATUS = {
    "violation": "violated",
    "suggested": "suggested (one launch: repeat with --repeat 2)",
    "same": "holds (no difference of 5 % or more)",
    "slower": "holds (candidate faster)",
}
_ROW_KEYS = {
    "time": "time_us",
    "pure_time": "pure_us",
    "overall_time": "overall_us",
    "compute_time": "compute_us",
    "overlap": "overlap",
}


def _key(s: dict) -> tuple:
    prm = s["params"]
    return (mpi_of(s), prm.get("collective", ""), int(prm.get("p", 0)), int(prm.get("bytes", 0)))


def cells(samples: Iterable[dict]) -> dict[tuple, dict[str, dict[Any, list[float]]]]:
    """(mpi, collective, p, bytes) -> metric -> launch id -> raw values."""
    out: dict[tuple, dict[str, dict[Any, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for s in samples:
        if s.get("benchmark") != "nbc" or "collective" not in s["params"]:
            continue
        if (s.get("tags") or {}).get("tool") == "osu":
            continue  # a user's OSU build (--osu-dir): its own table, never pooled or judged
        out[_key(s)][s["metric"]][s.get("launch_id")].extend(s["values"])
    return out


def _median(by_launch: dict[Any, list[float]] | None) -> float | None:
    values = [v for vs in (by_launch or {}).values() for v in vs]
    return float(np.median(values)) if values else None


def table(samples: Iterable[dict]) -> list[dict]:
    """One row per (MPI, collective, p, size): the medians of every metric measured (raw
    values of all launches pooled) and, for a variant, its blocking counterpart's."""
    found = cells(samples)
    families: dict[str, str] = {}
    for s in samples:
        if s.get("benchmark") == "nbc":
            families[s["params"].get("collective", "")] = s["params"].get("family", "")
    rows = []
    for key in sorted(found):
        mpi, collective, p, size = key
        row: dict[str, Any] = {
            "mpi": mpi,
            "family": families.get(collective, ""),
            "collective": collective,
            "p": p,
            "bytes": size,
        }
        for metric, by_launch in found[key].items():
            if metric in _ROW_KEYS:
                row[_ROW_KEYS[metric]] = _median(by_launch)
        base = blocking_of(collective)
        if base and (mpi, base, p, size) in found:
            row["blocking_us"] = _median(found[(mpi, base, p, size)].get("time"))
        rows.append(row)
    return rows


def _pairs(found: dict) -> list[tuple[tuple, str, str, str]]:
    """(key, candidate, its metric, reference) of every guideline check the run has."""
    out = []
    for key, metrics in found.items():
        mpi, collective, p, size = key
        if collective == "alltoallv_neighbors":
            ref = (mpi, "neighbor_alltoall", p, size)
            if ref in found and "time" in found[ref]:
                out.append((ref, "neighbor_alltoall", "time", collective))
            continue
        base = blocking_of(collective)
        metric = "pure_time" if "pure_time" in metrics else "time"
        if base and metric in metrics and (mpi, base, p, size) in found:
            out.append((key, collective, metric, base))
    return sorted(out)


def guidelines(samples: Iterable[dict]) -> list[dict]:
    """One row per check, Holm-corrected over the run's checks (module text)."""
    samples = list(samples)
    found = cells(samples)
    deterministic = any(s.get("tags", {}).get("simulated") for s in samples)
    checks = []
    for key, candidate, metric, reference in _pairs(found):
        mpi, _, p, size = key
        cand = found[key][metric]
        if reference == "alltoallv_neighbors" or candidate == "neighbor_alltoall":
            ref = found[(mpi, "alltoallv_neighbors", p, size)]["time"]
        else:
            ref = found[(mpi, reference, p, size)]["time"]
        pooled = stats.compare(
            [v for vs in cand.values() for v in vs],
            [v for vs in ref.values() for v in vs],
            THRESHOLD,
            lower_is_better=True,
            alpha=ALPHA,
        )
        checks.append((key, candidate, metric, reference, cand, ref, pooled))
    adjusted = holm([c[6].p_value for c in checks]) if checks else []
    rows = []
    for (key, candidate, metric, reference, cand, ref, pooled), p_adj in zip(checks, adjusted):
        mpi, _, p, size = key
        if candidate == "neighbor_alltoall":
            reference = "alltoallv_neighbors"
        v = verdict_of(cand, ref, p_adjusted=p_adj, pooled=pooled, deterministic=deterministic)
        what = f"{candidate} + MPI_Wait" if metric == "pure_time" else candidate
        if candidate.endswith("_persistent"):
            what = f"{candidate} (MPI_Start + MPI_Wait)"
        against = (
            "MPI_Alltoallv on the same neighbours"
            if reference == "alltoallv_neighbors"
            else reference
        )
        cm, rm = _median(cand), _median(ref)
        rows.append(
            {
                "mpi": mpi,
                "guideline": f"{what} not slower than {against}",
                "candidate": candidate,
                "reference": reference,
                "p": p,
                "bytes": size,
                "candidate_us": cm,
                "reference_us": rm,
                "factor": cm / rm if cm is not None and rm else None,
                "p_adjusted": v["p_adjusted"],
                "launches": v["launches"],
                "verdict": v["verdict"],
                "status": STATUS[v["verdict"]],
            }
        )
    return rows
