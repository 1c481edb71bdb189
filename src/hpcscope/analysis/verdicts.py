"""Performance-guideline verdicts for MPI collectives, and the lane tables (Träff & Hunold).

A guideline says an MPI collective should be no slower than any composition of the
library's own smaller collectives doing the same job. lanecoll's full-lane ("lane", and
"lane_v" with vector node collectives) and hierarchical ("hier") mock-ups are such
compositions, so for each (MPI library,
collective, count, N nodes, n processes per node):

    violation  a mock-up is faster than native MPI_<Coll>, tested: Mann-Whitney U on the
               raw repetitions p < 0.05 (hpcscope.results.stats.compare) AND shifted
               at least 5 % of native's median below native (Hodges-Lehmann). The native collective then violates the
               guideline: the library could be faster by using its own pieces.
    same       no significant difference of at least 5 %.
    slower     the mock-up is significantly slower (the guideline holds).

Repetitions of several launches of the same configuration are pooled. Values of
different launches are not i.i.d. (Hoefler & Belli), so a verdict from one launch is a
statement about that launch; the tuned_vs_best benchmark interleaves launches for that
reason. The speed-up is median(native) / median(mock-up); avg and min are reported as in
the paper's tables (min is what the paper's text quotes: best of 100).

Rows are plain dicts (one per configuration, implementations side by side: the paper's
table shape), so the terminal, Markdown, CSV and HTML renderers share them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from hpcscope.analysis import observations as obs
from hpcscope.formatting import format_number
from hpcscope.results import stats
from hpcscope.results.cells import compare_cells, summarize_cell

THRESHOLD = 0.05  # a mock-up must be at least 5 % faster (Hodges-Lehmann shift) to count
ALPHA = 0.05  # and significant at this level (Mann-Whitney, two-sided)
ALG_ORDER = ("native", "lane", "lane_v", "hier")  # the paper's table order
LANE_BENCHMARKS = {"lane_pattern": "lane pattern", "multi_coll": "multi-collective"}


def alg_key(name: str) -> tuple[int, str]:
    return (ALG_ORDER.index(name), name) if name in ALG_ORDER else (len(ALG_ORDER), name)


def mpi_of(sample: dict) -> str:
    tags = sample.get("tags") or {}
    return str(tags.get("mpi") or tags.get("mpi_flavor") or "?")


def _coll_key(sample: dict) -> tuple | None:
    """(mpi, collective, nodes, ppn, p, count, bytes, regular) of a coll time sample."""
    prm = sample.get("params") or {}
    if sample.get("metric") != "time" or "collective" not in prm or "algorithm" not in prm:
        return None
    return (
        mpi_of(sample),
        prm["collective"],
        int(prm.get("nodes", 1)),
        int(prm.get("ppn", 0)),
        int(prm.get("p", 0)),
        int(prm["count"]),
        int(prm.get("bytes", 0)),
        bool(prm.get("regular", True)),
    )


def row_key(row: dict) -> tuple:
    """The coll key of a coll_table row (the same configuration it was grouped by)."""
    return (
        row["mpi"],
        row["collective"],
        row["N"],
        row["n"],
        row["p"],
        row["count"],
        row["bytes"],
        row["regular"],
    )


def group_coll_launches(samples: Iterable[dict]) -> dict[tuple, dict[str, dict[Any, list[float]]]]:
    """{coll key: {algorithm: {launch id: values}}}: the one grouping of collective samples
    (the coll key names the configuration; every launch of it is kept apart)."""
    groups: dict[tuple, dict[str, dict[Any, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for s in samples:
        key = _coll_key(s)
        if key is not None:
            groups[key][s["params"]["algorithm"]][s.get("launch_id")].extend(
                float(v) for v in s["values"]
            )
    return groups


def group_coll(samples: Iterable[dict]) -> dict[tuple, dict[str, list[float]]]:
    """{coll key: {algorithm: values}}, repetitions of every launch pooled."""
    return {
        key: {alg: [v for vs in launches.values() for v in vs] for alg, launches in by_alg.items()}
        for key, by_alg in group_coll_launches(samples).items()
    }


def group_coll_by_launch(samples: Iterable[dict]) -> dict[tuple, dict[Any, dict[str, list]]]:
    """{coll key: {launch_id: {algorithm: values}}}: group_coll_launches turned inside out,
    for judging launch by launch (samples without a launch_id are left out)."""
    out: dict[tuple, dict[Any, dict[str, list]]] = defaultdict(lambda: defaultdict(dict))
    for key, by_alg in group_coll_launches(samples).items():
        for alg, launches in by_alg.items():
            for launch, values in launches.items():
                if launch is not None:
                    out[key][launch][alg] = values
    return out


def verdict_of(
    native: dict[Any, list[float]],
    other: dict[Any, list[float]],
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Verdict of one mock-up against native, {launch: values} each (both are timed in the
    same launches): speedup, p-value, violation/same/slower, by the launch rule of
    results.cells.compare_cells (a violation must show in every launch)."""
    cmp = compare_cells(native, other, threshold, lower_is_better=True, paired=True, alpha=alpha)
    verdict = {"faster": "violation", "slower": "slower"}.get(cmp.verdict, "same")
    return {
        "speedup": (cmp.median_a / cmp.median_b) if cmp.median_b else float("inf"),
        "p_value": cmp.p_value,
        "verdict": verdict,
        "warnings": cmp.warnings,
    }


def coll_table(
    samples: Iterable[dict], *, threshold: float = THRESHOLD, alpha: float = ALPHA
) -> list[dict]:
    """One row per (mpi, collective, N, n, p, count) with, for every algorithm present,
    `<alg>_avg`, `<alg>_min`, `<alg>_median` (us), `<alg>_reps`, and for every mock-up
    `<alg>_speedup` (median native / median mock-up), `<alg>_p` and `<alg>_verdict`.
    `verdict` sums the row up: "violation (lane 1.8x)", "ok" or "no native" (nothing to
    compare with). `algorithms` lists the algorithms in column order. Rows are sorted by
    mpi, collective, N, n, count."""
    rows = []
    for key, launches_by_alg in sorted(group_coll_launches(samples).items()):
        mpi, coll, nodes, ppn, p, count, nbytes, regular = key
        cells = {
            alg: summarize_cell(per_launch, "us") for alg, per_launch in launches_by_alg.items()
        }
        by_alg = {
            alg: [v for vs in per_launch.values() for v in vs]
            for alg, per_launch in launches_by_alg.items()
        }
        row: dict[str, Any] = {
            "mpi": mpi,
            "collective": coll,
            "N": nodes,
            "n": ppn,
            "p": p,
            "count": count,
            "bytes": nbytes,
            "regular": regular,
        }
        algs = sorted(by_alg, key=alg_key)
        row["algorithms"] = algs
        for alg in algs:
            summary = cells[alg].all
            row[f"{alg}_avg"] = summary.mean
            row[f"{alg}_min"] = summary.min
            row[f"{alg}_median"] = summary.median
            row[f"{alg}_reps"] = summary.n
        native = by_alg.get("native")
        violations, warnings = [], []
        for alg in algs:
            if alg == "native" or native is None:
                continue
            v = verdict_of(
                launches_by_alg["native"], launches_by_alg[alg], threshold=threshold, alpha=alpha
            )
            row[f"{alg}_speedup"] = v["speedup"]
            row[f"{alg}_p"] = v["p_value"]
            row[f"{alg}_verdict"] = v["verdict"]
            warnings += v["warnings"]
            if v["verdict"] == "violation":
                violations.append(f"{alg} {v['speedup']:.2f}x")
        if native is None:
            row["verdict"] = "no native"
        else:
            row["verdict"] = ("violation (" + ", ".join(violations) + ")") if violations else "ok"
        row["warnings"] = sorted(set(warnings))
        rows.append(row)
    return rows


def best_algorithm(row: dict, *, candidates: Iterable[str] | None = None) -> str:
    """The algorithm to use for a coll_table row: the significantly faster mock-up with
    the highest speed-up, else native (also used by hpcscope.tune)."""
    best, best_speedup = "native", 1.0
    for alg in row["algorithms"]:
        if alg == "native" or (candidates is not None and alg not in candidates):
            continue
        if row.get(f"{alg}_verdict") == "violation" and row[f"{alg}_speedup"] > best_speedup:
            best, best_speedup = alg, row[f"{alg}_speedup"]
    return best


def guideline_observations(rows: list[dict]) -> list[obs.Observation]:
    """One sentence per guideline violation of coll_table rows (the verdict is decided
    above; this only words it and cites the numbers)."""
    out = []
    for r in rows:
        for alg in r.get("algorithms", []):
            if r.get(f"{alg}_verdict") != "violation":
                continue
            subject = (
                f"{r.get('mpi', '')} MPI_{str(r['collective']).capitalize()} "
                f"N={r.get('N')} x n={r.get('n')}, count {r.get('count')}".strip()
            )
            out.append(
                obs.Observation(
                    "guideline",
                    f"{subject}: native ({format_number(r['native_median'], 'us')}) is "
                    f"{r[f'{alg}_speedup']:.2f}x slower than the {alg} mock-up "
                    f"({format_number(r[f'{alg}_median'], 'us')}), p = {r[f'{alg}_p']:.2g}: "
                    "guideline violated.",
                    {
                        "native_median_us": r["native_median"],
                        "mockup_median_us": r[f"{alg}_median"],
                        "speedup": r[f"{alg}_speedup"],
                        "p_value": r[f"{alg}_p"],
                        "mockup": alg,
                        "native_reps": r.get("native_reps"),
                        "mockup_reps": r.get(f"{alg}_reps"),
                    },
                    "warning",
                    subject,
                )
            )
    return out


def lanes_table(samples: Iterable[dict]) -> list[dict]:
    """Lane pattern and multi-collective rows: one per (mpi, benchmark, N, n, p, count, k)
    with avg/min/median (us) and

      lane_pattern  factor = median t(k=1) / median t(k): how many times faster c
                    elements per node move over k lanes than over one (L physical lanes:
                    up to L).
      multi_coll    factor = median t(k) / median t(k=1): time of k concurrent lane
                    alltoalls relative to one (L lanes: about 1 up to k = L).

    `p_vs_1` is the Mann-Whitney p-value against k = 1 and `significant` says whether
    the difference is significant and at least 5 %."""
    groups: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        prm = s.get("params") or {}
        bench = s.get("benchmark") or ""
        if bench not in LANE_BENCHMARKS and prm.get("pattern") not in ("lane", "multi_alltoall"):
            continue
        if bench not in LANE_BENCHMARKS:
            bench = "lane_pattern" if prm.get("pattern") == "lane" else "multi_coll"
        key = (
            mpi_of(s),
            bench,
            int(prm.get("nodes", 1)),
            int(prm.get("ppn", 0)),
            int(prm.get("p", 0)),
            int(prm["count"]),
            int(prm.get("bytes", 0)),
        )
        groups[key][int(prm["lanes"])].extend(float(v) for v in s["values"])
    rows = []
    for key, by_k in sorted(groups.items()):
        mpi, bench, nodes, ppn, p, count, nbytes = key
        base = by_k.get(1)
        for k in sorted(by_k):
            vals = np.asarray(by_k[k])
            row: dict[str, Any] = {
                "mpi": mpi,
                "benchmark": bench,
                "N": nodes,
                "n": ppn,
                "p": p,
                "count": count,
                "bytes": nbytes,
                "k": k,
                "avg_us": float(vals.mean()),
                "min_us": float(vals.min()),
                "median_us": float(np.median(vals)),
                "reps": int(vals.size),
            }
            if base is not None:
                m1, mk = float(np.median(base)), row["median_us"]
                row["factor"] = (
                    (m1 / mk if bench == "lane_pattern" else mk / m1) if mk and m1 else None
                )
                if k == 1:
                    row["p_vs_1"], row["significant"] = None, False
                else:
                    cmp = stats.compare(base, by_k[k], THRESHOLD, lower_is_better=True)
                    row["p_vs_1"], row["significant"] = cmp.p_value, cmp.significant
            else:
                row["factor"], row["p_vs_1"], row["significant"] = None, None, False
            rows.append(row)
    return rows
