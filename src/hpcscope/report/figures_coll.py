"""Collectives in the report: time-versus-size figures per collective and, until the coll
engineer's `hpcscope.analysis.verdicts.coll_table` exists, a fallback paper-style table.

Fallback table (as in the multi-lane paper): one row per (collective, nodes x ppn, count),
the median time of each algorithm, the speed-up of each mock-up (lane, hier) over native,
and the performance-guideline verdict: native should be no slower than a mock-up of itself;
a mock-up that is significantly faster (Mann-Whitney, > 5 %) is a violation.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hpcscope.report import observations as obs  # noqa: E402

ALGOS = ("native", "lane", "hier", "lane_v")


def _config(s: dict) -> tuple:
    p = s["params"]
    return (p.get("collective", "?"), p.get("nodes"), p.get("ppn"), p.get("p"))


def fallback_rows(samples: list[dict], threshold: float = 0.05) -> tuple[list[dict], list[obs.Observation]]:
    """Rows {collective, nodes, ppn, p, count, bytes, native_us, lane_us, lane_speedup,
    hier_us, hier_speedup, verdict} and the guideline observations behind the verdicts."""
    values: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if s.get("benchmark") != "coll" or s.get("metric") != "time":
            continue
        p = s["params"]
        key = (*_config(s), p.get("count"), p.get("bytes"))
        values[key][p.get("algorithm", "native")].extend(s["values"])
    rows: list[dict] = []
    found: list[obs.Observation] = []
    for key in sorted(values, key=lambda k: tuple(str(x) if x is None else x for x in k)):
        coll, nodes, ppn, p, count, nbytes = key
        algos = values[key]
        row: dict[str, Any] = {"collective": coll, "nodes": nodes, "ppn": ppn, "p": p,
                               "count": count, "bytes": nbytes}
        native = algos.get("native")
        row["native_us"] = float(np.median(native)) if native else None
        verdicts = []
        for mock in ALGOS[1:]:
            vals = algos.get(mock)
            row[f"{mock}_us"] = float(np.median(vals)) if vals else None
            row[f"{mock}_speedup"] = (row["native_us"] / row[f"{mock}_us"]
                                      if native and vals and row[f"{mock}_us"] else None)
            if native and vals:
                subject = (f"MPI_{str(coll).capitalize()} {nodes}x{ppn}, count {count}")
                v = obs.guideline_violation(subject, native, vals, mock, threshold=threshold)
                if v:
                    found.append(v)
                    verdicts.append(f"{mock} faster")
        row["verdict"] = ("violated: " + ", ".join(verdicts)) if verdicts else (
            "ok" if native and any(algos.get(m) for m in ALGOS[1:]) else "-")
        rows.append(row)
    return rows, found


def time_figures(samples: list[dict]) -> list[tuple[str, Any]]:
    """One figure per collective: median time vs message bytes, a line per algorithm and
    nodes x ppn configuration, log-log."""
    data: dict[str, dict[tuple, dict[float, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for s in samples:
        if s.get("benchmark") != "coll" or s.get("metric") != "time":
            continue
        p = s["params"]
        size = p.get("bytes", p.get("count"))
        if size is None:
            continue
        data[str(p.get("collective", "?"))][(p.get("algorithm", "native"), p.get("nodes"),
                                            p.get("ppn"))][float(size)].extend(s["values"])
    out = []
    for coll, lines in sorted(data.items()):
        fig, ax = plt.subplots(figsize=(7.5, 4.0), dpi=100)
        styles = {"native": "-", "lane": "--", "hier": ":", "lane_v": "-."}
        configs = sorted({(n, q) for _, n, q in lines}, key=str)
        for (algo, nodes, ppn), points in sorted(lines.items(), key=str):
            x = np.array(sorted(points))
            y = np.array([np.median(points[v]) for v in x])
            colour = f"C{configs.index((nodes, ppn)) % 10}"
            ax.plot(np.maximum(x, 1), y, styles.get(algo, "-"), color=colour, marker="o",
                    markersize=3, label=f"{algo} {nodes}x{ppn}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("Message size (bytes per process)")
        ax.set_ylabel("Time (us, median; max over ranks)")
        ax.set_title(f"MPI_{coll.capitalize()}: native vs lane and hierarchical mock-ups",
                     fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        out.append((coll, fig))
    return out


def observations_from_rows(rows: list[dict]) -> list[obs.Observation]:
    """Guideline observations from hpcscope.analysis.verdicts.coll_table rows (their
    verdict is authoritative; this only words it and cites the numbers)."""
    out = []
    for r in rows:
        for alg in r.get("algorithms", []):
            if r.get(f"{alg}_verdict") != "violation":
                continue
            subject = f"{r.get('mpi', '')} MPI_{str(r['collective']).capitalize()} " \
                      f"N={r.get('N')} x n={r.get('n')}, count {r.get('count')}".strip()
            out.append(obs.Observation(
                "guideline", f"{subject}: native ({obs.fmt_num(r['native_median'], 'us')}) is "
                f"{r[f'{alg}_speedup']:.2f}x slower than the {alg} mock-up "
                f"({obs.fmt_num(r[f'{alg}_median'], 'us')}), p = {r[f'{alg}_p']:.2g}: "
                "guideline violated.",
                {"native_median_us": r["native_median"], "mockup_median_us": r[f"{alg}_median"],
                 "speedup": r[f"{alg}_speedup"], "p_value": r[f"{alg}_p"], "mockup": alg,
                 "native_reps": r.get("native_reps"), "mockup_reps": r.get(f"{alg}_reps")},
                "warning", subject))
    return out
