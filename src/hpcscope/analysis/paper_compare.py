"""Paper vs simulation: simulated lane-pattern factors beside the paper's (paper_lanes.py).

A simulated run on a preset platform (tags simulated=true, platform=hydra|vsc3|jupiter)
is put next to the paper's table of that system, row by row at equal count c per node and
lane count k. The simulated factor is lanes_table's (median t(1) / median t(k)); the
paper's are computed from its minimum and its average times (it gives no medians). A row
whose count the paper does not list says so instead of borrowing a neighbour's number;
a run whose nodes or processes per node differ from the paper's says that too, since the
factor depends on both.
"""

from __future__ import annotations

from collections.abc import Iterable

from hpcscope.analysis import verdicts
from hpcscope.analysis.paper_lanes import LANE_PATTERN_TABLES

COLUMNS = [
    ("platform", "platform"),
    ("table", "paper table"),
    ("N", "N sim"),
    ("n", "n sim"),
    ("count", "c"),
    ("k", "k"),
    ("sim_factor", "sim t(1)/t(k)"),
    ("paper_factor_min", "paper t(1)/t(k) (min)"),
    ("paper_factor_avg", "paper t(1)/t(k) (avg)"),
    ("note", "note"),
]


def simulated_platform(samples: Iterable[dict]) -> str | None:
    """The platform of a simulated run's samples; None for measured runs."""
    names = {
        str(s["tags"].get("platform")) for s in samples if (s.get("tags") or {}).get("simulated")
    }
    return names.pop() if len(names) == 1 else None


def paper_vs_simulation(samples: list[dict]) -> list[dict]:
    """Rows for COLUMNS; [] when the run is not simulated or its platform has no table."""
    platform = simulated_platform(samples)
    table = LANE_PATTERN_TABLES.get(platform or "")
    if table is None:
        return []
    paper_shape = {(int(r[2]), int(r[1])) for r in table.rows}  # (N, n)
    out = []
    for row in verdicts.lanes_table(samples):
        if row["benchmark"] != "lane_pattern":
            continue
        count, k = int(row["count"]), int(row["k"])
        times = table.times(count)
        notes = []
        if not times:
            notes.append(f"the paper gives no number at c = {count}")
        elif k not in times:
            notes.append(f"the paper gives no number for k = {k}")
        if (row["N"], row["n"]) not in paper_shape:
            n_paper, ppn_paper = next(iter(paper_shape))
            notes.append(f"shape differs from the paper's N={n_paper}, n={ppn_paper}")
        out.append(
            {
                "platform": platform,
                "table": f"{table.name} ({table.system}, {table.mpi})",
                "N": row["N"],
                "n": row["n"],
                "count": count,
                "k": k,
                "sim_factor": row.get("factor"),
                "paper_factor_min": table.factor(count, k, "min"),
                "paper_factor_avg": table.factor(count, k, "avg"),
                "note": "; ".join(notes),
            }
        )
    return out
