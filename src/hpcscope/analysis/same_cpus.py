"""Two placements of one MPI that ran on the same CPUs measure the same thing.

`default` (mpirun's own binding) often runs as one of the asked-for classes, and the
placement proof (meta `ranks`, read from inside every rank) says so. Where two such
configurations still differ by more than SAME_CPUS_LIMIT, at the small-message latency
or at the largest bandwidth, that difference is how much the machine's launches differ,
not what the placement does: the report's p2p section, its highlights and `show` say so
beside the numbers a reader would otherwise compare.

Only plain hpcscope curves are paired (an [OSU build] or --protocol osu curve differs by
its loop), and only where every launch of both ran with one and the same binding (host
and CPU list of each of the two ranks or more); simulated ranks have no CPUs and are
never paired.
"""

from __future__ import annotations

from itertools import combinations

from hpcscope.analysis.highlights import UNUSABLE_SPREAD
from hpcscope.analysis.observations import Observation
from hpcscope.analysis.p2p_curves import curve_label, curves, small_size
from hpcscope.formatting import format_bytes, format_number
from hpcscope.results.placement_proof import rank_text

# launches that differ by this much make a number unusable (highlights.UNUSABLE_SPREAD)
SAME_CPUS_LIMIT = 1 + UNUSABLE_SPREAD


def _bindings(launches: list[dict]) -> dict[str, tuple[set[tuple], list[dict]]]:
    """{curve label: (the launches' distinct bindings, one launch's ranks)}."""
    out: dict[str, tuple[set[tuple], list[dict]]] = {}
    for launch in launches:
        tags = launch.get("tags") or {}
        ranks = (launch.get("meta") or {}).get("ranks") or []
        osu = tags.get("tool") == "osu" or tags.get("protocol") == "osu"
        if osu or len(ranks) < 2 or not all(r.get("cpus") for r in ranks):
            continue  # another loop, not both ranks, or no CPUs (simulated): not comparable
        binding = tuple(
            sorted(
                (int(r.get("rank", 0)), str(r.get("host")), tuple(r.get("cpus") or ()))
                for r in ranks
            )
        )
        seen, _ = out.setdefault(curve_label({"tags": tags}), (set(), ranks))
        seen.add(binding)
    return out


def _compare(a: dict, b: dict, metric: str) -> tuple[float, float, float] | None:
    """(bytes, value a, value b) at the size the summary quotes: latency at 8 B (else the
    smallest common size above 0), bandwidth at the largest common size."""
    common = sorted(set(a) & set(b))
    if metric == "latency":
        size = small_size(common)
    else:
        size = common[-1] if common else None
    if size is None:
        return None
    return float(size), a[size]["center"], b[size]["center"]


def observations(samples: list[dict], launches: list[dict]) -> list[Observation]:
    """One warning per pair of configurations of one MPI that ran on the same CPUs and
    differ by more than SAME_CPUS_LIMIT; its subject is the second curve's label."""
    p2p = [s for s in samples if s.get("benchmark") == "p2p"]
    by_metric = {m: curves(p2p, m) for m in ("latency", "bandwidth")}
    bound = {label: found for label, found in _bindings(launches).items() if len(found[0]) == 1}
    out = []
    for first, second in combinations(sorted(bound), 2):
        if first.split()[0] != second.split()[0] or bound[first][0] != bound[second][0]:
            continue
        worst = None
        for metric, unit in (("latency", "us"), ("bandwidth", "MB/s")):
            a, b = by_metric[metric].get(first), by_metric[metric].get(second)
            got = _compare(a, b, metric) if a and b else None
            if got is None or min(got[1], got[2]) <= 0:
                continue
            ratio = max(got[1], got[2]) / min(got[1], got[2])
            if worst is None or ratio > worst[0]:
                worst = (ratio, metric, unit, *got)
        if worst is None or worst[0] <= SAME_CPUS_LIMIT:
            continue
        ratio, metric, unit, size, va, vb = worst
        out.append(
            Observation(
                "same_cpus",
                f"{first} and {second} ran on the same CPUs in every launch "
                f"({_where(bound[first][1])}), yet their {metric} at {format_bytes(size)} "
                f"reads {format_number(va, unit)} against {format_number(vb, unit)} "
                f"({ratio:.1f}x). The binding cannot explain that: read it as the spread "
                "between this machine's launches, not as an effect of the placement.",
                {"metric": metric, "bytes": size, "first": va, "second": vb, "ratio": ratio},
                "warning",
                second,
            )
        )
    return out


def _where(ranks: list[dict]) -> str:
    """'rank 0 on vm CPU 0, rank 1 on vm CPU 1': the placement section gives the socket,
    NUMA node and core."""
    ordered = sorted(ranks, key=lambda r: int(r.get("rank", 0)))
    return ", ".join(rank_text(r, detail=False) for r in ordered)
