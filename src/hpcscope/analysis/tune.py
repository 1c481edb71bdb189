"""Tuning table for lanecoll (schema "lanecoll.tuning/1") from coll benchmark samples.

For each collective and decomposition (nodes, ppn) the measured sizes are sorted by
bytes (count x 4 for bcast/reduce/allreduce/scan/exscan, the mean per-process block for
allgatherv/gatherv/scatterv, the per-process block for the others: the same bytes
lanecoll's interposition library computes) and each size gets a winner:

    the mock-up (lane, lane_v or hier) with the largest speed-up among those that beat native
    significantly (Mann-Whitney p < alpha on the raw repetitions) and by >= threshold
    (hpcscope.analysis.verdicts); native when none does.

Hysteresis, so the table does not flap between neighbouring sizes: a winner that holds
at a single measured size while its neighbours (both, or the only one at an edge) agree
on another algorithm is replaced by the neighbours' choice, unless its speed-up over
native is at least `keep_speedup` (a large win is believed even alone) or it won by at
least `threshold` in every one of two or more launches on its own (launches are not
i.i.d., so agreement between them is what tells a real window from noise; pooled
p-values cannot). The reverse case, native at a single size between two sizes won by
the same mock-up, is filled with that mock-up only when the mock-up was not
significantly slower there.

Ranges: neighbouring sizes with the same winner are merged. The boundary between two
measured sizes a < b with different winners lies halfway in log scale: the lower range
ends at floor(sqrt(a*b)) (clamped to [a, b-1]) and the next starts one byte later. The
first range starts at 0 and the last ends at `top_bytes` (default 2^63-1), i.e. the
smallest and largest measured winners are extrapolated; measure the sizes you use.
Rules for native are written too, so every collective's table covers 0..top without
gaps and without overlaps (lanecoll rejects overlaps; first match wins anyway).

One rule for the rooted vector collectives (gatherv, scatterv): only their root knows
the counts, so lanecoll must broadcast the root's byte count (8 bytes) on every call
before it can choose by size, unless the table gives the decomposition one algorithm at
every size. A size-dependent table therefore costs B, the median of native bcast at its
smallest measured size (at most 256 bytes: latency-bound like the 8 bytes it stands
for; `coll`'s default sweep starts bcast at 4p bytes) on the same decomposition (0 when not
measured), on every call. `one_algorithm` writes a single rule 0..top instead when one
algorithm A is good enough at every measured size s: median_A(s) <= (1 + threshold) x
median_winner(s) + B, i.e. A loses less there than the broadcast would cost. Among such
algorithms the one with the smallest geometric mean of median_A / median_winner wins
(native first on a tie, it needs no decomposition). Otherwise the size-dependent ranges
stay, and lanecoll pays the broadcast.

Irregular decompositions (regular=False) are skipped: their ppn is not one number, and
lanecoll's regular-only algorithms fall back there anyway. Algorithms other than lane,
lane_v and hier (e.g. a "tuned" re-run) are never chosen.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcscope import safe_write
from hpcscope.analysis.verdicts import (
    ALPHA,
    THRESHOLD,
    best_algorithm,
    coll_table,
    group_coll_by_launch,
    row_key,
)

SCHEMA = "lanecoll.tuning/1"
TOP_BYTES = 2**63 - 1
NOT_CHOOSABLE = ("native", "tuned")  # every other measured algorithm may be chosen
KEEP_SPEEDUP = 1.5
# Collectives whose byte count only the root knows: a size-dependent choice costs lanecoll
# a broadcast of it on every call (see one_algorithm).
ROOTED_VECTOR = ("gatherv", "scatterv")
# The bcast that estimates that broadcast: the smallest measured, if at most this large
# (the default sweep's smallest bcast is p ints: up to 64 ranks).
SHARED_BYTES_BCAST_MAX = 256


def _flatten(samples_list: Iterable) -> list[dict]:
    out: list[dict] = []
    for item in samples_list:
        if isinstance(item, dict):
            out.append(item)
        else:  # a list of samples per run
            out.extend(item)
    return out


def winners(rows: Sequence[dict]) -> list[tuple[int, str, float, dict]]:
    """[(bytes, winner, speedup of the winner over native, row)] sorted by bytes."""
    out = []
    for row in sorted(rows, key=lambda r: r["bytes"]):
        alg = best_algorithm(
            row, candidates=[a for a in row["algorithms"] if a not in NOT_CHOOSABLE]
        )
        speedup = row.get(f"{alg}_speedup", 1.0) if alg != "native" else 1.0
        out.append((row["bytes"], alg, float(speedup), row))
    return out


def launch_agreement(samples: Iterable[dict], threshold: float = THRESHOLD) -> set[tuple]:
    """{(*coll key, algorithm)} of the mock-ups whose median beats
    native's by at least `threshold` in every launch (two or more) of that point."""
    agreed = set()
    for key, launches in group_coll_by_launch(samples).items():
        if len(launches) < 2:
            continue
        algs = set.intersection(*(set(by_alg) for by_alg in launches.values()))
        for alg in algs - {"native"}:
            if "native" in algs and all(
                np.median(v["native"]) >= (1 + threshold) * np.median(v[alg])
                for v in launches.values()
            ):
                agreed.add((*key, alg))
    return agreed


def smooth(
    points: list[tuple[int, str, float, dict]], keep_speedup: float = KEEP_SPEEDUP
) -> list[tuple[int, str]]:
    """Hysteresis over the per-size winners (see the module text), in two passes: first
    native gaps between two sizes won by the same mock-up are filled (unless the mock-up
    was significantly slower there), then isolated mock-up wins are dropped (unless
    large or won in every launch: the row's `<alg>_every_launch`). Each pass decides on
    its input, not on its own partial output."""
    algs = [alg for _, alg, _, _ in points]
    filled = list(algs)
    for i in range(1, len(algs) - 1):
        left, right, row = algs[i - 1], algs[i + 1], points[i][3]
        if (
            algs[i] == "native"
            and left == right != "native"
            and row.get(f"{left}_verdict") in ("same", "violation", "suggested")
        ):
            filled[i] = left
    out = list(filled)
    for i, alg in enumerate(filled):
        neighbours = {filled[j] for j in (i - 1, i + 1) if 0 <= j < len(filled)}
        if alg == "native" or len(neighbours) != 1 or alg in neighbours:
            continue
        if points[i][2] < keep_speedup and not points[i][3].get(f"{alg}_every_launch"):
            out[i] = neighbours.pop()
    return [(p[0], a) for p, a in zip(points, out)]


def boundary(a: int, b: int) -> int:
    """Last byte count of the range ending at measured size a, before measured size b:
    the geometric midpoint, clamped so that a stays below and b above."""
    mid = math.isqrt(a * b) if a > 0 else (b - 1) // 2
    return max(a, min(b - 1, mid))


def ranges(sized: list[tuple[int, str]], top_bytes: int = TOP_BYTES) -> list[tuple[int, int, str]]:
    """Merged, gap-free (min_bytes, max_bytes, algorithm) from per-size winners."""
    if not sized:
        return []
    out: list[list[Any]] = []
    for i, (nbytes, alg) in enumerate(sized):
        if out and out[-1][2] == alg:
            continue
        if out:
            end = boundary(sized[i - 1][0], nbytes)
            out[-1][1] = end
            out.append([end + 1, None, alg])
        else:
            out.append([0, None, alg])
    out[-1][1] = top_bytes
    return [(lo, hi, alg) for lo, hi, alg in out]


def broadcast_cost(rows: Sequence[dict], mpi: str, nodes: int, ppn: int) -> float:
    """B (us): median of native bcast at its smallest measured size, if that is at most
    SHARED_BYTES_BCAST_MAX bytes, on this MPI and decomposition; 0 when not measured."""
    small = [
        r
        for r in rows
        if r["collective"] == "bcast"
        and (r["mpi"], r["N"], r["n"]) == (mpi, nodes, ppn)
        and r.get("native_median") is not None
        and r["bytes"] <= SHARED_BYTES_BCAST_MAX
    ]
    return float(min(small, key=lambda r: r["bytes"])["native_median"]) if small else 0.0


def one_algorithm(
    members: Sequence[dict], sized: list[tuple[int, str]], threshold: float, cost_us: float
) -> str | None:
    """The algorithm for every size of a rooted vector collective (module text), or None
    when no single one is within (1 + threshold) x the winner's median + cost_us at every
    measured size. `sized` are the smoothed winners of the rows `members`."""
    by_bytes = {r["bytes"]: r for r in members}
    winner_median = [by_bytes[b][f"{w}_median"] for b, w in sized]
    candidates = sorted(
        set.intersection(*(set(by_bytes[b]["algorithms"]) for b, _ in sized)) - {"tuned"},
        key=lambda a: (a != "native", a),
    )
    best, best_loss = None, math.inf
    for alg in candidates:
        medians = [by_bytes[b][f"{alg}_median"] for b, _ in sized]
        if any(m > (1 + threshold) * w + cost_us for m, w in zip(medians, winner_median)):
            continue
        loss = float(
            np.mean([math.log(max(m, 1e-9) / max(w, 1e-9)) for m, w in zip(medians, winner_median)])
        )
        if loss < best_loss - 1e-12:
            best, best_loss = alg, loss
    return best


def make_tuning(
    samples_list: Iterable,
    *,
    mpi: str | None = None,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    keep_speedup: float = KEEP_SPEEDUP,
    top_bytes: int = TOP_BYTES,
    collectives: Iterable[str] | None = None,
) -> dict:
    """The lanecoll.tuning/1 table from coll samples (a flat list of samples, or a list
    of such lists, e.g. one per run). Samples of several MPI libraries need `mpi=` to
    pick one (a table is for the library it was measured with)."""
    samples = [
        s for s in _flatten(samples_list) if (s.get("params") or {}).get("collective") is not None
    ]
    rows = coll_table(samples, threshold=threshold, alpha=alpha)
    agreed = launch_agreement(samples, threshold)
    for row in rows:
        for alg in row["algorithms"]:
            row[f"{alg}_every_launch"] = (*row_key(row), alg) in agreed
    mpis = sorted({r["mpi"] for r in rows})
    if mpi is not None and mpi not in mpis:
        raise ValueError(
            f"--mpi {mpi}: these runs measured {', '.join(mpis) or 'no collectives'}; "
            "pass one of those"
        )
    if mpi is None and len(mpis) > 1:
        raise ValueError(
            f"samples of several MPI libraries ({', '.join(mpis)}): pass mpi= "
            "to make the table of one"
        )
    wanted = set(collectives) if collectives else None
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        if (mpi is not None and row["mpi"] != mpi) or not row["regular"]:
            continue
        if "native" not in row["algorithms"] or (wanted and row["collective"] not in wanted):
            continue
        groups[(row["collective"], row["N"], row["n"])].append(row)
    rules = []
    for (coll, nodes, ppn), members in sorted(groups.items()):
        sized = smooth(winners(members), keep_speedup)
        spans = ranges(sized, top_bytes)
        if coll in ROOTED_VECTOR and len(spans) > 1:
            cost = broadcast_cost(rows, members[0]["mpi"], nodes, ppn)
            single = one_algorithm(members, sized, threshold, cost)
            if single is not None:
                spans = [(0, top_bytes, single)]
        for lo, hi, alg in spans:
            rules.append(
                {
                    "collective": coll,
                    "nodes": nodes,
                    "ppn": ppn,
                    "min_bytes": lo,
                    "max_bytes": hi,
                    "algorithm": alg,
                }
            )
    return {"schema": SCHEMA, "rules": rules}


def check_table(table: dict, top_bytes: int = TOP_BYTES) -> None:
    """Raises ValueError unless every (collective, nodes, ppn) covers 0..top_bytes
    exactly once (sorted, no gap, no overlap)."""
    if table.get("schema") != SCHEMA:
        raise ValueError(f"schema must be {SCHEMA!r}")
    spans: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for rule in table["rules"]:
        spans[(rule["collective"], rule.get("nodes"), rule.get("ppn"))].append(
            (rule["min_bytes"], rule["max_bytes"])
        )
    for key, parts in spans.items():
        parts.sort()
        expect = 0
        for lo, hi in parts:
            if lo != expect or hi < lo:
                raise ValueError(f"{key}: ranges {parts} leave a gap or overlap at {expect}")
            expect = hi + 1
        if expect != top_bytes + 1:
            raise ValueError(f"{key}: ranges end at {expect - 1}, not {top_bytes}")


def write_tuning(path: str | os.PathLike[str], table: dict) -> Path:
    """Writes the table as JSON (one rule per line, readable and diffable); returns path.
    Only the keys lanecoll knows are written: its parser rejects unknown keys."""
    path = Path(path)
    lines = ",\n".join(
        "    " + json.dumps(rule, separators=(", ", ": ")) for rule in table["rules"]
    )
    safe_write.write_text(
        path,
        '{"schema": '
        + json.dumps(table["schema"])
        + ',\n "rules": [\n'
        + lines
        + ("\n" if lines else "")
        + " ]}\n",
    )
    return path
