"""Performance-guideline verdicts for MPI collectives, and the lane tables (Träff & Hunold).

A guideline says an MPI collective should be no slower than any composition of the
library's own smaller collectives doing the same job. lanecoll's full-lane ("lane", and
"lane_v" with vector node collectives) and hierarchical ("hier") mock-ups are such
compositions, so for each (MPI library, collective, count, N nodes, n processes per node)
every mock-up is one guideline check against native:

    violation  the mock-up is faster than native MPI_<Coll>: Mann-Whitney U on the raw
               repetitions (hpcscope.results.stats.compare), p below ALPHA after Holm's
               correction over every check of the table (a run's checks), AND shifted at
               least 5 % of native's median below it (Hodges-Lehmann), AND the same shown
               by each of at least two launches on its own (results.cells.compare_cells).
               The native collective then violates the guideline.
    suggested  the same, from the run's only launch: "repeat with --repeat 2" decides it.
    same       no significant difference of at least 5 % (or launches that disagree).
    slower     the mock-up is significantly slower (the guideline holds).

Why Holm, not Benjamini-Hochberg: a violation is a claim about one library's collective
at one size, each read on its own (and `tune` acts on each), so the error controlled is
the chance of any false claim in the run (family-wise), not their expected share. Holm
holds under any dependence between the checks (they share native's repetitions), where
Benjamini-Hochberg needs a positive one; and the real effects here are far below its
thresholds (a quick run's 1.5x MPI_Scan gap: p ~ 1e-34 against 0.05 / 280). Simulated
runs are a deterministic model (their repetitions repeat): no test, a mock-up at least
5 % faster in the model is a violation of the model, and those checks are not counted.

Besides lanecoll's, the coll program has mock-ups of its own (MOCKUPS): MPI_Reduce plus
MPI_Scatterv for MPI_Reduce_scatter, MPI_Alltoallv with regular counts for MPI_Alltoall
(Träff, Gropp & Thakur's self-consistent guidelines), checked the same way; their
findings name the composition at any node shape.

Findings (`findings`) group the violated checks: one per (MPI, collective, node shape,
comparison) with its factor range and the counts, not one line per count. With one rank
per node (N x 1) the node steps are local copies and the lane or leader communicator
holds every rank, so a mock-up is the library's own collective (for MPI_Scan: its
MPI_Exscan plus a local reduction) or lanecoll's point-to-point messages (ONE_PER_NODE):
such a check compares two MPI calls, not lanes, and the finding says which.

Repetitions of several launches of the same configuration are pooled for the test.
Values of different launches are not i.i.d. (Hoefler & Belli), hence the launch rule. The
speed-up is median(native) / median(mock-up); avg and min are reported as in the paper's
tables (min is what the paper's text quotes: best of 100).

Rows are plain dicts (one per configuration, implementations side by side: the paper's
table shape), so the terminal, Markdown, CSV and HTML renderers share them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcscope.analysis import observations as obs
from hpcscope.formatting import format_number, format_p
from hpcscope.results import stats
from hpcscope.results.cells import compare_cells, summarize_cell

THRESHOLD = 0.05  # a mock-up must be at least 5 % faster (Hodges-Lehmann shift) to count
ALPHA = 0.05  # and significant at this level (Mann-Whitney, two-sided)
ALG_ORDER = ("native", "lane", "lane_v", "hier")  # the paper's table order
LANE_BENCHMARKS = {"lane_pattern": "lane pattern", "multi_coll": "multi-collective"}
FASTER = ("violation", "suggested")  # the verdicts of a mock-up faster than native


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
        if (s.get("tags") or {}).get("tool") == "osu":
            continue  # a user's OSU build (--osu-dir): its own table, never a verdict
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


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order: the i-th smallest of m is
    multiplied by (m - i), then made non-decreasing in that order and capped at 1. A check
    is significant at level alpha after the correction when its adjusted p is below alpha
    (the same as Holm's sequential rule)."""
    m = len(p_values)
    out = [1.0] * m
    running = 0.0
    for i, idx in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        running = max(running, min(1.0, (m - i) * p_values[idx]))
        out[idx] = running
    return out


def _shared_launches(native: dict[Any, list[float]], other: dict[Any, list[float]]) -> int:
    """Launches that timed both (a launch id of None is one launch: samples without ids)."""
    return sum(1 for k in native if native[k] and other.get(k))


def verdict_of(
    native: dict[Any, list[float]],
    other: dict[Any, list[float]],
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    p_adjusted: float | None = None,
    deterministic: bool = False,
    pooled: stats.Comparison | None = None,
) -> dict[str, Any]:
    """Verdict of one mock-up against native, {launch: values} each (both are timed in the
    same launches): speed-up, p-value (raw and corrected), launches, and violation /
    suggested / same / slower (module text). `p_adjusted`: this check's p after the run's
    correction (None: the check alone). `deterministic`: a simulated model, no test.
    `pooled`: stats.compare of the pooled values, where the caller has it already."""
    pooled_a = [v for vs in native.values() for v in vs]
    pooled_b = [v for vs in other.values() for v in vs]
    launches = _shared_launches(native, other)
    if deterministic:
        ma, mb = float(np.median(pooled_a)), float(np.median(pooled_b))
        verdict = "same"
        if mb < (1 - threshold) * ma:
            verdict = "violation"
        elif mb > (1 + threshold) * ma:
            verdict = "slower"
        return {
            "speedup": ma / mb if mb else float("inf"),
            "p_value": None,
            "p_adjusted": None,
            "launches": launches,
            "verdict": verdict,
            "warnings": [],
        }
    if pooled is None:
        pooled = stats.compare(pooled_a, pooled_b, threshold, lower_is_better=True, alpha=alpha)
    p_adj = pooled.p_value if p_adjusted is None else p_adjusted
    warnings = list(pooled.warnings)
    verdict = "same"
    if p_adj < alpha and pooled.verdict != "same":
        verdict = {"faster": "violation", "slower": "slower"}[pooled.verdict]
        if launches >= 2:  # the launch rule of compare_cells: each launch shows it
            cmp = compare_cells(
                native, other, threshold, lower_is_better=True, paired=True, alpha=alpha
            )
            warnings = list(cmp.warnings)
            verdict = {"faster": "violation", "slower": "slower"}.get(cmp.verdict, "same")
        elif verdict == "violation":
            verdict = "suggested"
    return {
        "speedup": (pooled.median_a / pooled.median_b) if pooled.median_b else float("inf"),
        "p_value": pooled.p_value,
        "p_adjusted": p_adj,
        "launches": launches,
        "verdict": verdict,
        "warnings": warnings,
    }


def _simulated(sample: dict) -> bool:
    return bool((sample.get("tags") or {}).get("simulated"))


def coll_table(
    samples: Iterable[dict], *, threshold: float = THRESHOLD, alpha: float = ALPHA
) -> list[dict]:
    """One row per (mpi, collective, N, n, p, count) with, for every algorithm present,
    `<alg>_avg`, `<alg>_min`, `<alg>_median` (us), `<alg>_reps`, and for every mock-up
    `<alg>_speedup` (median native / median mock-up), `<alg>_p` (Mann-Whitney),
    `<alg>_p_adjusted` (Holm over every check of these samples; None on simulated rows),
    `<alg>_launches` and `<alg>_verdict`. `verdict` sums the row up: "violation (lane
    1.8x)", "suggested (lane 1.8x)", "ok", "no native" (nothing to compare with) or, for
    `run coll --protocol osu` (`per_rank`: one mean per rank, no repetitions), "not judged";
    `checks_in_run` is the size of the Holm family, `deterministic` marks simulated rows.
    `algorithms` lists the algorithms in column order. Rows are sorted by mpi, collective,
    N, n, count."""
    samples = list(samples)
    simulated = {_coll_key(s) for s in samples if _simulated(s)}
    # OSU's protocol stores one mean per rank, not repetitions: nothing to test on
    per_rank = {_coll_key(s) for s in samples if (s.get("params") or {}).get("protocol") == "osu"}
    rows, checks = [], []
    for key, launches_by_alg in sorted(group_coll_launches(samples).items()):
        mpi, coll, nodes, ppn, p, count, nbytes, regular = key
        cells = {
            alg: summarize_cell(per_launch, "us") for alg, per_launch in launches_by_alg.items()
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
            "deterministic": key in simulated,
        }
        algs = sorted(launches_by_alg, key=alg_key)
        row["algorithms"] = algs
        for alg in algs:
            summary = cells[alg].all
            row[f"{alg}_avg"] = summary.mean
            row[f"{alg}_min"] = summary.min
            row[f"{alg}_median"] = summary.median
            row[f"{alg}_reps"] = summary.n
        row["per_rank"] = key in per_rank
        if "native" in launches_by_alg and not row["per_rank"]:
            checks += [(row, alg, launches_by_alg) for alg in algs if alg != "native"]
        rows.append(row)
    # Holm's family: every tested check of these samples (simulated ones are not tests)
    tested = [c for c in checks if not c[0]["deterministic"]]
    pooled = {
        (id(r), alg): stats.compare(
            [v for vs in by_alg["native"].values() for v in vs],
            [v for vs in by_alg[alg].values() for v in vs],
            threshold,
            lower_is_better=True,
            alpha=alpha,
        )
        for r, alg, by_alg in tested
    }
    adjusted = dict(zip(pooled, holm([c.p_value for c in pooled.values()])))
    for row, alg, by_alg in checks:
        v = verdict_of(
            by_alg["native"],
            by_alg[alg],
            threshold=threshold,
            alpha=alpha,
            p_adjusted=adjusted.get((id(row), alg)),
            deterministic=row["deterministic"],
            pooled=pooled.get((id(row), alg)),
        )
        row[f"{alg}_speedup"] = v["speedup"]
        row[f"{alg}_p"] = v["p_value"]
        row[f"{alg}_p_adjusted"] = v["p_adjusted"]
        row[f"{alg}_launches"] = v["launches"]
        row[f"{alg}_verdict"] = v["verdict"]
        row.setdefault("warnings", []).extend(v["warnings"])
    for row in rows:
        row["checks_in_run"] = len(tested)
        row["warnings"] = sorted(set(row.get("warnings", [])))
        if "native" not in row["algorithms"]:
            row["verdict"] = "no native"
            continue
        if row["per_rank"]:
            row["verdict"] = "not judged (OSU protocol: one mean per rank)"
            continue
        said = {
            word: [
                f"{alg} {row[f'{alg}_speedup']:.2f}x"
                for alg in row["algorithms"]
                if row.get(f"{alg}_verdict") == word
            ]
            for word in ("violation", "suggested")
        }
        row["verdict"] = (
            ", ".join(f"{word} ({', '.join(said[word])})" for word in said if said[word]) or "ok"
        )
    return rows


def best_algorithm(row: dict, *, candidates: Iterable[str] | None = None) -> str:
    """The algorithm to use for a coll_table row: the significantly faster mock-up with
    the highest speed-up, else native (also used by hpcscope.tune). A check suggested by
    a run's only launch counts: choosing an algorithm is a decision on the best evidence
    at hand, not a claim about the library (tune's own launch rule is stricter)."""
    best, best_speedup = "native", 1.0
    for alg in row["algorithms"]:
        if alg == "native" or (candidates is not None and alg not in candidates):
            continue
        if row.get(f"{alg}_verdict") in FASTER and row[f"{alg}_speedup"] > best_speedup:
            best, best_speedup = alg, row[f"{alg}_speedup"]
    return best


# What a mock-up is with one rank per node (N x 1): its node steps run on one process
# (local copies), its lane or leader communicator holds every rank, so it is the library's
# own collective named here plus local work, or lanecoll's point-to-point messages
# (the steps of lanecoll/include/lanecoll_algorithms.def). Default: the same collective.
_P2P = "lanecoll's own point-to-point messages"
ONE_PER_NODE: dict[tuple[str, str], str] = {
    **{("scan", a): "its own MPI_Exscan plus a local reduction" for a in ALG_ORDER[1:]},
    **{("exscan", a): "its own MPI_Exscan plus local work" for a in ALG_ORDER[1:]},
    ("allgather", "hier"): "its own MPI_Allgatherv",
    ("gather", "hier"): "its own MPI_Gatherv",
    ("scatter", "hier"): "its own MPI_Scatterv",
    ("reduce_scatter_block", "hier"): "its own MPI_Reduce_scatter",
    ("reduce_scatter_block", "lane"): "its own MPI_Reduce_scatter_block plus a local permutation",
    ("allgatherv", "hier"): _P2P,
    ("gatherv", "hier"): _P2P,
    ("scatterv", "hier"): _P2P,
}
_OWN_P2P = ("kported", "pipeline", "pipeline1")  # lanecoll's own trees and pipelines
# The coll program's own mock-ups (bench/mpi/coll_catalog.h hs_mockups): compositions of
# the library's own collectives (Träff, Gropp & Thakur's self-consistent guidelines), the
# same call whatever the node shape.
MOCKUPS: dict[str, str] = {
    "reduce_scatterv": "its own MPI_Reduce plus MPI_Scatterv of the same data",
    "alltoallv": "its own MPI_Alltoallv with regular counts",
}
ONE_PER_NODE_TEXT = (
    "with 1 rank per node (n=1) the node steps of lane and hier are local copies and "
    "their lane or leader communicator holds every rank: each mock-up is the library's own "
    "collective (MPI_Scan's: its MPI_Exscan plus a local reduction) or lanecoll's "
    "point-to-point messages, so these checks compare MPI calls with each other, not lanes."
)


def coll_name(collective: str) -> str:
    return f"MPI_{str(collective).capitalize()}"


def one_per_node(collective: str, alg: str) -> str:
    """What mock-up `alg` of `collective` is with one rank per node (ONE_PER_NODE)."""
    if alg in MOCKUPS:
        return MOCKUPS[alg]
    if alg in _OWN_P2P:
        return _P2P
    return ONE_PER_NODE.get((collective, alg), f"its own {coll_name(collective)}")


@dataclass
class Finding:
    """The violated (or suggested) checks of one comparison: one MPI collective at one
    node shape against one mock-up (with one rank per node: against one MPI call, which
    several mock-ups may be), over the counts where it shows."""

    mpi: str
    collective: str
    N: int
    n: int
    regular: bool
    against: str  # the mock-up's name, or with n = 1 what it is (ONE_PER_NODE)
    algorithms: list[str]
    status: str  # "violated", "suggested" or "model" (simulated, no test)
    counts: list[int]  # the counts where it shows
    checked: int  # the counts where these mock-ups were checked
    low: float  # speed-up range over those counts (native time / mock-up time)
    high: float
    p_max: float | None  # the largest Holm-corrected p among them (None: model)
    launches: int  # the fewest launches behind one of its checks
    family: int  # the checks Holm's correction ran over
    worst_count: int = 0  # where the factor is largest, with the two medians (us)
    worst_native_us: float = 0.0
    worst_mockup_us: float = 0.0

    @property
    def one_per_node(self) -> bool:
        return self.n == 1

    @property
    def own_mockup(self) -> bool:
        """The coll program's own mock-up (MOCKUPS): one MPI composition at any shape."""
        return self.against in MOCKUPS.values()

    def comparison(self) -> str:
        """'its own MPI_Exscan plus a local reduction' or "lanecoll's lane mock-up"."""
        if self.one_per_node or self.own_mockup:
            return self.against
        if self.N == 1:  # one node: the lane steps have one process, the node steps all
            return f"lanecoll's {self.against} mock-up (on 1 node: node-local steps only)"
        return f"lanecoll's {self.against} mock-up"

    def factor(self) -> str:
        low, high = f"{self.low:.2f}", f"{self.high:.2f}"
        return f"{high}x" if low == high else f"{low}-{high}x"

    def where(self, detail: bool = True) -> str:
        """'at 4 of 4 counts (2 to 2000; the largest at count 20: 1.66 us against 0.97 us)'
        (without `detail`: no medians)."""
        counts = sorted(self.counts)
        shown = ", ".join(map(str, counts)) if len(counts) <= 3 else f"{counts[0]} to {counts[-1]}"
        noun = "count" if self.checked == 1 else "counts"
        worst = (
            f"; {'the largest ' if len(counts) > 1 else ''}at count {self.worst_count}: "
            f"{format_number(self.worst_native_us, 'us')} against "
            f"{format_number(self.worst_mockup_us, 'us')}"
        )
        return f"at {len(counts)} of {self.checked} {noun} ({shown}{worst if detail else ''})"

    def status_text(self) -> str:
        if self.status == "model":
            return (
                "in the simulation's deterministic model (at least 5% faster there; "
                "no significance test)"
            )
        # 'p < 1e-10' where it is that small (formatting.format_p), not 'p <= 3.1e-170'
        shown = format_p(self.p_max).replace("p = ", "p <= ")
        p = f"Holm-corrected {shown} over {self.family} checks"
        if self.status == "suggested":
            return (
                f"suggested by one launch ({p}): repeat with --repeat 2 or more to tell "
                "a violation from that launch's luck"
            )
        return f"guideline violated ({p}; each of {self.launches} launches shows it)"

    def short_status(self) -> str:
        if self.status == "violated":
            return f"violated (each of {self.launches} launches shows it)"
        if self.status == "suggested":
            return "suggested by the run's 1 launch (repeat with --repeat 2 to confirm)"
        return "in the deterministic model (simulated, no test)"

    def headline(self, detail: bool = True) -> str:
        """Without the MPI: 'MPI_Scan takes 1.47-1.71x the time of its own MPI_Exscan
        plus a local reduction at 4 of 4 counts (...)'; `detail`: the medians where it is
        largest and, with 1 rank per node, which mock-ups that comparison is."""
        text = (
            f"{coll_name(self.collective)}{'' if self.regular else ' (irregular)'} takes "
            f"{self.factor()} the time of {self.comparison()} {self.where(detail)}"
        )
        if self.one_per_node and detail and not self.own_mockup:
            algs = ", ".join(self.algorithms[:-1])
            algs = f"{algs} and {self.algorithms[-1]}" if algs else self.algorithms[0]
            verb = "is" if len(self.algorithms) == 1 else "are"
            text += f" (what {algs} {verb} with 1 rank per node: not a lane comparison)"
        return text

    def text(self) -> str:
        return f"{self.mpi}, N={self.N} x n={self.n}: {self.headline()}: {self.status_text()}."


_STATUS = {"violation": "violated", "suggested": "suggested"}


def findings(rows: list[dict]) -> list[Finding]:
    """The violated and suggested checks of coll_table rows grouped into findings, the
    largest factor first (module text)."""
    groups: dict[tuple, list[tuple[dict, str]]] = defaultdict(list)
    checked: dict[tuple, set[int]] = defaultdict(set)
    for r in rows:
        for alg in r.get("algorithms", []):
            verdict = r.get(f"{alg}_verdict")
            if alg == "native" or verdict is None:
                continue
            against = one_per_node(r["collective"], alg) if r["n"] == 1 or alg in MOCKUPS else alg
            shape = (r["mpi"], r["collective"], r["N"], r["n"], r["regular"], against)
            checked[shape].add(r["count"])
            if verdict in FASTER:
                status = "model" if r.get("deterministic") else _STATUS[verdict]
                groups[(*shape, status)].append((r, alg))
    out = []
    for (mpi, coll, nodes, ppn, regular, against, status), found in groups.items():
        factors = [r[f"{alg}_speedup"] for r, alg in found]
        worst_row, worst_alg = max(found, key=lambda x: x[0][f"{x[1]}_speedup"])
        adjusted = [r[f"{alg}_p_adjusted"] for r, alg in found]
        out.append(
            Finding(
                mpi=mpi,
                collective=coll,
                N=nodes,
                n=ppn,
                regular=regular,
                against=against,
                algorithms=sorted({alg for _, alg in found}, key=alg_key),
                status=status,
                counts=sorted({r["count"] for r, _ in found}),
                checked=len(checked[(mpi, coll, nodes, ppn, regular, against)]),
                low=min(factors),
                high=max(factors),
                p_max=None if status == "model" else max(adjusted),
                launches=min(r[f"{alg}_launches"] for r, alg in found),
                family=int(found[0][0].get("checks_in_run") or 0),
                worst_count=int(worst_row["count"]),
                worst_native_us=worst_row["native_median"],
                worst_mockup_us=worst_row[f"{worst_alg}_median"],
            )
        )
    return sorted(out, key=lambda f: (f.status != "violated", -f.high))


def guideline_observations(rows: list[dict]) -> list[obs.Observation]:
    """One observation per finding of coll_table rows (the verdicts are decided above;
    this words them and cites the numbers): a warning where violated, notable where one
    launch suggests it or a simulated model shows it."""
    return [
        obs.Observation(
            "guideline",
            f.text(),
            {
                "speedup": f.high,
                "low": f.low,
                "counts": f.counts,
                "checked": f.checked,
                "status": f.status,
                "algorithms": f.algorithms,
                "p_adjusted_max": f.p_max,
                "launches": f.launches,
                "checks_in_run": f.family,
            },
            "warning" if f.status == "violated" else "notable",
            f"{f.mpi} {coll_name(f.collective)} N={f.N} x n={f.n}",
        )
        for f in findings(rows)
    ]


def emulation_text(tags: Iterable[dict]) -> str | None:
    """What was emulated, from the launches' tags: 'nodes emulated: 1 rank per node via
    LANECOLL_NODE_SIZE=1 on one machine (2 ranks as 2 nodes)'; None when nothing was.
    Only the node size names it (`emulated_nodes` is a flag; an older store's text
    value is quoted as it was)."""
    sizes: set[int] = set()
    ranks: set[int] = set()
    named: set[str] = set()
    for t in tags:
        flag = t.get("emulated_nodes")
        if not flag:
            continue
        if isinstance(flag, str) and flag not in ("True", "true", "1"):
            named.add(flag)
        if t.get("node_size") is not None:
            sizes.add(int(t["node_size"]))
            if t.get("ranks"):
                ranks.add(int(t["ranks"]))
        elif not isinstance(flag, str):
            named.add("node size not recorded")
    if not (sizes or named):
        return None
    parts = []
    for k in sorted(sizes):
        env = f"LANECOLL_NODE_SIZE={k}"
        shapes = sorted(f"{r} ranks as {-(-r // k)} nodes" for r in ranks if r >= k)
        parts.append(
            f"{k} rank{'s' if k != 1 else ''} per node via {env}"
            + (f" ({', '.join(shapes)})" if shapes else "")
        )
    parts += sorted(named)
    return "nodes emulated: " + "; ".join(parts) + " on one machine"


def lanes_table(samples: Iterable[dict]) -> list[dict]:
    """Lane pattern and multi-collective rows: one per (mpi, benchmark, N, n, p, count, k)
    with avg/min/median (us) and

      lane_pattern  factor = median t(k=1) / median t(k): how many times faster c
                    elements per node move over k lanes than over one (L physical lanes:
                    up to L).
      multi_coll    factor = median t(k) / median t(k=1): time of k concurrent lane
                    alltoalls relative to one (L lanes: about 1 up to k = L).

    `p_vs_1` is the Mann-Whitney p-value against k = 1 and `significant` says whether
    the difference is significant and at least 5 %. Simulated rows (`deterministic`) are
    a model whose repetitions repeat: no test (`p_vs_1` None), `significant` says the
    model's medians differ by at least 5 %."""
    groups: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    simulated: set[tuple] = set()
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
        if _simulated(s):
            simulated.add(key)
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
                "deterministic": key in simulated,
            }
            if base is not None:
                m1, mk = float(np.median(base)), row["median_us"]
                row["factor"] = (
                    (m1 / mk if bench == "lane_pattern" else mk / m1) if mk and m1 else None
                )
                if k == 1:
                    row["p_vs_1"], row["significant"] = None, False
                elif key in simulated:
                    row["p_vs_1"], row["significant"] = None, abs(mk - m1) > THRESHOLD * m1
                else:
                    cmp = stats.compare(base, by_k[k], THRESHOLD, lower_is_better=True)
                    row["p_vs_1"], row["significant"] = cmp.p_value, cmp.significant
            else:
                row["factor"], row["p_vs_1"], row["significant"] = None, None, False
            rows.append(row)
    return rows


def ranks_table(rows: list[dict]) -> list[dict]:
    """IMB-MPI1's view of a process-count sweep (`run coll --npmin K`): one row per (mpi,
    collective, algorithm, size in bytes) measured at two or more rank counts, with
    `ranks` {p: median us} over the rank counts of coll_table's rows. A count with a p
    suffix grows with p, so rows are keyed by bytes per process, as IMB's are."""
    by_size: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in rows:
        for alg in r.get("algorithms", []):
            median = r.get(f"{alg}_median")
            if median is not None:
                key = (r["mpi"], r["collective"], alg, r["bytes"], r["regular"])
                by_size[key][int(r["p"])] = float(median)
    out = []
    for (mpi, coll, alg, nbytes, regular), ranks in sorted(
        by_size.items(), key=lambda kv: (kv[0][0], kv[0][1], alg_key(kv[0][2]), kv[0][3])
    ):
        if len(ranks) >= 2:
            out.append(
                {
                    "mpi": mpi,
                    "collective": coll,
                    "algorithm": alg,
                    "bytes": nbytes,
                    "regular": regular,
                    "ranks": dict(sorted(ranks.items())),
                }
            )
    return out


def ranks_columns(rows: list[dict]) -> list[tuple[str, str]]:
    """Columns of ranks_table's rows flattened by flat_ranks: one median per rank count."""
    counts = sorted({p for r in rows for p in r["ranks"]})
    return [
        ("mpi", "MPI"),
        ("collective", "collective"),
        ("algorithm", "algorithm"),
        ("bytes", "bytes"),
        *((f"p{p}", f"p={p} median (us)") for p in counts),
    ]


def flat_ranks(rows: list[dict]) -> list[dict]:
    """ranks_table's rows with a `p<K>` key per rank count, for the table renderers."""
    return [{**r, **{f"p{p}": v for p, v in r["ranks"].items()}} for r in rows]
