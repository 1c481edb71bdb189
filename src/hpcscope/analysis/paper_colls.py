"""The paper's Hydra collective times, beside simulated ones ("paper vs simulation").

Source: J. L. Träff and S. Hunold, "Decomposing Collectives for Exploiting Multi-lane
Communication" (arXiv 1910.13373, CLUSTER 2020), section 4, Open MPI 4.0.1 on Hydra
(N = 36 nodes, n = 32 processes per node, p = 1152); rows copied from the plain-text
extraction in /work/shared/reference, whose captions are lost, so each table is named by
the text that refers to it:

  TABLE_6   "The results with the Open MPI 4.0.1 library are shown in Table 6" (MPI_Bcast,
            c = 1152 ... 11520000 elements in all). Two full-lane blocks: the text says
            the version with irregular scatter and allgather (lanecoll's lane_v) was
            slightly better than the one with regular collectives (lane); the second block
            is the better one, so it is taken as lane_v and the first as lane.
  TABLE_11  "Results for the allgather implementations are shown in Table 11" (c elements
            per process, 1 ... 10000). Its first full-lane block is the zero-copy version
            of Listing 5 (lanecoll's lane); the second, with consecutive buffers, has no
            lanecoll counterpart and is left out.
  TABLE_15  "shown in Table 15" (MPI_Allreduce, c = 1152 ... 11520000). Two full-lane
            blocks, assigned as for Table 6 (the text: the irregular version is better,
            "more prominent for the reduction collectives").

Columns: count c (MPI_INT) as the paper gives it and as `coll --counts` takes it (bcast
and allreduce: elements in all; allgather: elements per process), average and minimum
time in microseconds. No number is filled in or smoothed.
"""

from __future__ import annotations

from collections.abc import Iterable

from hpcscope.analysis import observations as obs
from hpcscope.analysis import verdicts
from hpcscope.machine import simgrid

SHAPE = {"N": 36, "n": 32, "p": 1152}

# {collective: {algorithm: ((count, avg_us, min_us), ...)}}
TABLES: dict[str, tuple[str, dict[str, tuple[tuple[int, float, float], ...]]]] = {
    "bcast": (
        "Table 6",
        {
            "lane": (
                (1152, 52.27, 29.61),
                (11520, 111.81, 83.99),
                (115200, 354.83, 314.01),
                (1152000, 3934.19, 3798.2),
                (11520000, 38805.02, 38629.53),
            ),
            "lane_v": (
                (1152, 89.24, 44.62),
                (11520, 88.0, 82.88),
                (115200, 337.42, 301.16),
                (1152000, 3826.27, 3670.76),
                (11520000, 37757.87, 37482.68),
            ),
            "hier": (
                (1152, 45.78, 30.44),
                (11520, 140.03, 132.81),
                (115200, 1465.79, 1364.15),
                (1152000, 16339.26, 13290.9),
                (11520000, 53409.95, 47903.34),
            ),
            "native": (
                (1152, 41.98, 34.32),
                (11520, 145.0, 130.11),
                (115200, 8418.56, 8093.52),
                (1152000, 19178.54, 18414.16),
                (11520000, 120751.21, 104535.94),
            ),
        },
    ),
    "allgather": (
        "Table 11",
        {
            "lane": (
                (1, 53.88, 39.55),
                (10, 86.18, 76.97),
                (100, 636.36, 560.67),
                (1000, 10777.78, 10023.95),
                (10000, 135983.9, 134931.78),
            ),
            "hier": (
                (1, 44.01, 36.3),
                (10, 140.52, 123.17),
                (100, 1232.35, 1189.94),
                (1000, 10553.83, 10280.65),
                (10000, 48009.4, 44854.14),
            ),
            "native": (
                (1, 36.5, 29.18),
                (10, 119.15, 108.54),
                (100, 2087.12, 1959.38),
                (1000, 7282.44, 6963.72),
                (10000, 42437.28, 41982.33),
            ),
        },
    ),
    "allreduce": (
        "Table 15",
        {
            "lane": (
                (1152, 73.14, 62.24),
                (11520, 346.12, 334.99),
                (115200, 2697.34, 2550.35),
                (1152000, 11526.37, 10829.64),
                (11520000, 207529.85, 206294.47),
            ),
            "lane_v": (
                (1152, 50.36, 38.89),
                (11520, 137.58, 120.25),
                (115200, 1475.7, 1296.44),
                (1152000, 10409.37, 10133.58),
                (11520000, 139247.27, 135422.53),
            ),
            "hier": (
                (1152, 83.97, 68.81),
                (11520, 500.59, 477.73),
                (115200, 3935.85, 3615.86),
                (1152000, 20164.34, 19732.57),
                (11520000, 239983.19, 235367.89),
            ),
            "native": (
                (1152, 99.79, 87.67),
                (11520, 4383.72, 3885.67),
                (115200, 5657.04, 5161.85),
                (1152000, 19652.38, 18973.4),
                (11520000, 132091.1, 130392.48),
            ),
        },
    ),
}

COLUMNS = [
    ("table", "paper table"),
    ("collective", "collective"),
    ("count", "c"),
    ("algorithm", "algorithm"),
    ("sim_median", "sim median (us)"),
    ("paper_min", "paper min (us)"),
    ("sim_speedup", "sim native/alg"),
    ("paper_speedup", "paper native/alg (min)"),
    ("agree", "same side of native"),
    ("note", "note"),
]


def _paper_min(coll: str, alg: str, count: int) -> float | None:
    for c, _, low in TABLES[coll][1].get(alg, ()):
        if c == count:
            return low
    return None


def paper_vs_simulation(samples: Iterable[dict]) -> list[dict]:
    """Rows for COLUMNS from a simulated coll run on Hydra; [] otherwise. A mock-up's
    speed-up is median native / median mock-up (simulated) and minimum native / minimum
    mock-up (the paper gives no medians); "same side" says whether both find the mock-up
    faster (> 1) or both slower."""
    samples = list(samples)
    platforms = {
        str((s.get("tags") or {}).get("platform"))
        for s in samples
        if (s.get("tags") or {}).get("simulated")
    }
    if platforms != {"hydra"}:
        return []
    # MPI_Allgather was the forced NTSLR ring unless every launch ran on a SimGrid with the
    # allgather patches (launch/smpi_command.py; an untagged sample: the ring, as before)
    versions = {str((s.get("tags") or {}).get("mpi_version", "")) for s in samples}
    native_ring = not all(simgrid.allgathers_fixed(v) for v in versions)
    out = []
    for row in verdicts.coll_table(samples):
        coll = str(row.get("collective"))
        if coll not in TABLES:
            continue
        table, _ = TABLES[coll]
        count = int(row["count"])
        shape_note = (
            ""
            if (row.get("N"), row.get("n")) == (SHAPE["N"], SHAPE["n"])
            else f"shape N={row.get('N')}, n={row.get('n')} differs from the paper's 36 x 32"
        )
        native_sim = row.get("native_median")
        native_paper = _paper_min(coll, "native", count)
        for alg in row.get("algorithms", []):
            sim = row.get(f"{alg}_median")
            paper = _paper_min(coll, alg, count)
            sim_speedup = native_sim / sim if native_sim and sim else None
            paper_speedup = native_paper / paper if native_paper and paper else None
            notes = [shape_note] if shape_note else []
            if paper is None:
                notes.append(f"the paper gives no {alg} number at c = {count}")
            agree = None
            if alg != "native" and sim_speedup and paper_speedup:
                agree = "yes" if (sim_speedup > 1) == (paper_speedup > 1) else "no"
            out.append(
                {
                    "table": table,
                    "collective": coll,
                    "count": count,
                    "algorithm": alg,
                    "sim_median": sim,
                    "paper_min": paper,
                    "sim_speedup": sim_speedup,
                    "paper_speedup": paper_speedup,
                    "agree": agree,
                    "note": "; ".join(notes),
                    "native_ring": native_ring,
                }
            )
    return out


# A native time more than this factor away from the paper's says the model, not the
# mock-up, decides the comparison at that count.
NATIVE_GAP = 2.0
CLOSE_CALL = 1.15  # a speed-up within this factor of 1 is a close call


def why_they_differ(row: dict, native: dict | None, previous: dict | None = None) -> str:
    """The likely reason why simulation and paper put a mock-up on different sides of
    native at one count, read from the native times (`native`: the native row at this
    count, `previous`: at the next smaller count): the paper's native grows faster than
    the data and far more than the simulated one from the previous count (Open MPI
    switched algorithm), or is far from it (the model charges link latencies only, no
    per-message software overhead, or SMPI chose another algorithm); else a close call in
    one of the two. "" when none holds."""
    sim_native = native.get("sim_median") if native else None
    paper_native = native.get("paper_min") if native else None
    if sim_native and paper_native:
        if previous and previous.get("sim_median") and previous.get("paper_min"):
            paper_growth = paper_native / previous["paper_min"]
            sim_growth = sim_native / previous["sim_median"]
            data_growth = row["count"] / previous["count"]
            # faster than the data (slower per byte) and than the simulated native
            if paper_growth > data_growth and paper_growth >= NATIVE_GAP * sim_growth:
                return (
                    f"the paper's native grew {paper_growth:.0f}x from c = {previous['count']}, "
                    f"the simulated {sim_growth:.0f}x: Open MPI 4.0.1 switched to a slower "
                    "algorithm there that SMPI's copy of its rules does not"
                )
        gap = paper_native / sim_native
        if gap >= NATIVE_GAP:
            return (
                f"the paper's native took {gap:.1f}x the simulated native: real per-message "
                "software overhead, which the model lacks (link latencies only), dominates "
                "at this count, so the ranking rests on what the model leaves out"
            )
        if gap <= 1 / NATIVE_GAP:
            cause = (
                "MPI_Allgather is SMPI's NTSLR ring here, p - 1 steps, because this "
                "SimGrid's other allgathers mishandle lanecoll's datatypes "
                "(launch/smpi_command.py)"
                if row["collective"] == "allgather" and row.get("native_ring", True)
                else "SMPI's copy of Open MPI's selection rules chose a slower algorithm"
            )
            return f"the simulated native took {1 / gap:.1f}x the paper's: {cause}"
    close = [
        who
        for who, speedup in (("simulation", row["sim_speedup"]), ("paper", row["paper_speedup"]))
        if 1 / CLOSE_CALL < speedup < CLOSE_CALL
    ]
    if close:
        verb = "find" if len(close) > 1 else "finds"
        return (
            f"{' and '.join(close)} {verb} it within {CLOSE_CALL - 1:.0%} of native: a close call"
        )
    return ""


def observations(rows: list[dict]) -> list[obs.Observation]:
    """How often simulation and paper put a mock-up on the same side of native, and one
    sentence per case where they do not, with why_they_differ's reason."""
    judged = [r for r in rows if r.get("agree") in ("yes", "no")]
    natives = {(r["collective"], r["count"]): r for r in rows if r.get("algorithm") == "native"}

    def previous(coll: str, count: int) -> dict | None:
        smaller = [c for k, c in natives if k == coll and c < count]
        return natives[(coll, max(smaller))] if smaller else None

    if not judged:
        return []
    agree = sum(r["agree"] == "yes" for r in judged)
    out = [
        obs.Observation(
            "paper",
            f"Simulation and paper put the mock-up on the same side of native in {agree} of "
            f"{len(judged)} (collective, count, algorithm) cases.",
            {"agree": agree, "cases": len(judged)},
        )
    ]
    for r in judged:
        if r["agree"] == "no":
            key = (r["collective"], r["count"])
            why = why_they_differ(r, natives.get(key), previous(*key))
            out.append(
                obs.Observation(
                    "paper",
                    f"{r['collective']} {r['algorithm']} at c = {r['count']}: simulated "
                    f"{r['sim_speedup']:.2f}x native, the paper {r['paper_speedup']:.2f}x"
                    + (f"; {why}." if why else "."),
                    {k: r[k] for k in ("sim_speedup", "paper_speedup")},
                    "notable",
                    f"{r['collective']} {r['algorithm']}",
                )
            )
    return out
