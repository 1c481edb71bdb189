"""The machine as measured, beside the machine as reported (issue 33).

hwloc reports what the machine says about itself; a VM's "L3 480 MiB shared by 2 cores"
or its 16 vCPUs say nothing of what the guest can use. Three checks read the node suite's
own samples:

- Cache edges: the pointer chase's latency rises where a working set leaves a cache. Each
  rise (consecutive working sets whose latency grows by at least RISE, merged while it
  keeps rising) is an edge; the last one leads to memory, so it is the last-level
  cache's effective size; the others go to the nearest reported level. An edge agrees
  with hwloc when the reported size lies within a factor 2 of it (the rise is gradual).
  Cost: O(points).
- Core scaling: the FP64 FMA rate per thread at n threads against one thread's, beside
  the clock measured with n threads busy. Where the rate per thread falls more than the
  clock does, the n threads got the throughput of fewer cores (vCPUs floating over
  fewer host cores, or SMT siblings), which no topology shows.
- Efficiency causes: every row of the node table below 90 % of a theoretical peak gets
  its reasons from recorded facts, each with its number (RunFacts: the OpenBLAS kernel
  DGEMM and HPL ran, whose vector width caps them below an AVX-512 peak; OPENBLAS_CORETYPE;
  the clock under load; threads that do not scale, told apart by steal time and by other
  processes' CPU use around the job, machine/host_load.py; a spread between repetitions),
  or "not explained; check ..." with what to check.
- NUMA distances (with several NUMA nodes): hwloc's latency matrix against the measured
  near/far one (analysis/numa_distances.py).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from hpcscope.analysis.clock_peaks import clock_samples
from hpcscope.analysis.numa_distances import AGREES, Distances, distances
from hpcscope.formatting import format_bytes

RISE = 1.25  # latency growth between two working sets that counts as part of an edge
EDGE = 1.5  # total growth of an edge (a cache's latency to the next level's)
LOW_EFFICIENCY = 0.90
CLOCK_HOLDS = 0.95  # clock(n) / clock(1) above this: no clock drop
SCALES = 0.90  # rate per thread at n / at 1 above this: the threads scale
NOISY = 0.10  # repetitions spread (max / min - 1) above this: a noisy host


@dataclass
class CacheEdge:
    level: str | None  # the reported level it belongs to; None: no level explains it
    reported: int | None  # hwloc's size of that level (per instance)
    low: float  # last working set before the rise
    high: float  # first working set after it
    before: float  # latency before and after (the chase's unit)
    after: float

    @property
    def agrees(self) -> bool:
        return self.reported is not None and self.low / 2 <= self.reported <= self.high * 2

    def text(self) -> str:
        where = f"{format_bytes(self.low)}-{format_bytes(self.high)}"
        rise = f"latency {self.before:.3g} -> {self.after:.3g} ns"
        if self.level is None:
            return f"a step at {where} ({rise}) that no reported cache explains"
        said = f"{self.level} {format_bytes(self.reported)}" if self.reported else self.level
        if self.agrees:
            return f"{said}: edge at {where} ({rise}), as reported"
        return f"{said} reported; usable up to about {where} ({rise}): {_factor_text(self)}"


def _edges(x: Sequence[float], y: Sequence[float]) -> list[tuple[float, float, float, float]]:
    """(low, high, before, after) of every rise of at least EDGE in the chase curve."""
    out = []
    i = 0
    while i + 1 < len(x):
        if y[i] > 0 and y[i + 1] / y[i] >= RISE:
            j = i + 1
            while j + 1 < len(x) and y[j + 1] / y[j] >= RISE:
                j += 1
            if y[j] / y[i] >= EDGE:
                out.append((x[i], x[j], y[i], y[j]))
            i = j
        else:
            i += 1
    return out


def cache_edges(
    x: Sequence[float], y: Sequence[float], reported: dict[str, int]
) -> list[CacheEdge]:
    """The chase's edges (working sets x ascending, median latencies y), each with the
    reported level it belongs to: the last edge (into memory) is the last-level cache;
    the others take the nearest remaining reported level (at most once each)."""
    levels = sorted(
        ((name, size) for name, size in reported.items() if not name.endswith("i")),
        key=lambda kv: (int(kv[0][1:].rstrip("d")), kv[1]),
    )
    found = _edges(x, y)
    if not found:
        return []
    out: list[CacheEdge] = []
    free = list(levels)
    if free:
        name, size = free.pop()
        low, high, before, after = found[-1]
        out.append(CacheEdge(name, size, low, high, before, after))
    for low, high, before, after in reversed(found[:-1]):
        mid = math.sqrt(low * high)
        best = min(free, key=lambda kv: abs(math.log(kv[1] / mid)), default=None)
        if best is not None and abs(math.log(best[1] / mid)) <= math.log(8):
            free.remove(best)
            out.append(CacheEdge(best[0], best[1], low, high, before, after))
        else:
            out.append(CacheEdge(None, None, low, high, before, after))
    return sorted(out, key=lambda e: e.low)


@dataclass
class Scaling:
    threads: int
    rate_per_thread: float  # of one thread's (1.0: perfect scaling)
    clock_ratio: float | None  # clock with n threads busy / with one (None: not measured)
    clock_ghz: float | None
    rate_one: float = 0.0  # one thread's FP64 FMA rate (best ISA)

    @property
    def effective_cores(self) -> float:
        """How many single threads' throughput the n threads got, at equal clock."""
        return self.threads * self.rate_per_thread / (self.clock_ratio or 1.0)

    @property
    def shared(self) -> bool:
        """The rate per thread falls more than the clock does: fewer cores than threads."""
        return self.threads > 1 and self.rate_per_thread / (self.clock_ratio or 1.0) < SCALES


def _median(samples: Sequence[dict]) -> float | None:
    values = [v for s in samples for v in s.get("values") or []]
    return statistics.median(values) if values else None


def clocks(samples: Sequence[dict]) -> dict[int, float]:
    """{threads: median GHz} of the clock kernel (bench/node/cpu.c): measured between FP64
    FMA work where the run has it (clock_peaks.clock_samples), else the add chain alone."""
    by: dict[int, list[dict]] = {}
    for s in clock_samples(samples):
        if isinstance(s["params"].get("threads"), int):
            by.setdefault(s["params"]["threads"], []).append(s)
    return {t: m for t, group in by.items() if (m := _median(group)) is not None}


def core_scaling(samples: Sequence[dict]) -> list[Scaling]:
    """Per thread count, the FP64 FMA rate per thread against one thread's (the widest
    ISA: the highest one-thread rate) and the clock ratio; [] without both."""
    rates: dict[str, dict[int, float]] = {}
    for s in samples:
        p = s.get("params") or {}
        if (
            s.get("benchmark") == "cpu"
            and p.get("workload") == "cpu_peak"
            and p.get("precision") == "fp64"
            and p.get("op") == "fma"
            and isinstance(p.get("threads"), int)
            and s.get("values")
        ):
            rates.setdefault(str(p.get("isa")), {})[p["threads"]] = max(s["values"])
    with_one = {isa: r for isa, r in rates.items() if 1 in r and r[1] > 0}
    if not with_one:
        return []
    best = max(with_one.values(), key=lambda r: r[1])
    ghz = clocks(samples)
    out = []
    for n in sorted(best):
        ratio = ghz[n] / ghz[1] if n in ghz and ghz.get(1) else None
        out.append(Scaling(n, best[n] / n / best[1], ratio, ghz.get(n), best[1]))
    return out


# OpenBLAS's kernels (openblas_get_corename, lower case) by vector width in bits and
# whether they use FMA: DYNAMIC_ARCH picks one from CPUID, OPENBLAS_CORETYPE forces one.
# A name not here has no ceiling stated (OpenBLAS's kernel/ and driver/others/dynamic.c).
BLAS_KERNELS: dict[str, tuple[int, bool, str]] = {
    **dict.fromkeys(("skylakex", "cooperlake", "sapphirerapids"), (512, True, "AVX-512")),
    **dict.fromkeys(("haswell", "zen", "excavator", "steamroller"), (256, True, "AVX2")),
    **dict.fromkeys(("piledriver", "bulldozer"), (256, True, "AVX with FMA")),
    "sandybridge": (256, False, "AVX without FMA"),
    **dict.fromkeys(
        ("nehalem", "core2", "penryn", "dunnington", "prescott", "atom", "barcelona", "opteron"),
        (128, False, "SSE2/SSE3"),
    ),
}
OTHERS = 0.2  # cores of other processes during a job that count as a cause
STEAL = 2.0  # % steal time during a job (or since boot) that counts as a cause


@dataclass
class RunFacts:
    """The recorded facts efficiency_cause reads: the BLAS kernel per workload (sample
    param `blas_core` of our DGEMM and of hpcc's HPL), the run's environment variables,
    its virtual machine facts and the load around each job (`load` notes,
    machine/host_load.py). Empty where a run predates them."""

    blas_core: dict[str, str]  # workload ("dgemm", "hpl") -> OpenBLAS core name
    variables: dict[str, str]
    loads: dict[str, dict]  # job name -> host_load.between() facts
    steal_since_boot: float | None = None
    # peak name -> its formula (the run's peak notes): a row's peak for fewer threads is
    # rescaled and its formula no longer names the FLOP/cycle
    peak_formulas: dict[str, str] = field(default_factory=dict)

    def load(self, row: dict) -> dict | None:
        """The load around the job that measured row: its steal % and other processes'
        cores (the largest over the jobs of that program)."""
        bench = row.get("benchmark")
        found = [
            f
            for job, f in self.loads.items()
            if (bench == "hpcc" and job.startswith("ref/hpcc"))
            or job == f"node/{bench}"
            or job.startswith(f"node/{bench}/")
        ]
        if not found:
            return None
        return {
            "steal_pct": max(f.get("steal_pct") or 0.0 for f in found),
            "others_cores": max(f.get("others_cores") or 0.0 for f in found),
        }


def run_facts(run: dict | None, samples: Sequence[dict]) -> RunFacts:
    cores: dict[str, str] = {}
    for s in samples:
        p = s.get("params") or {}
        if p.get("workload") in ("dgemm", "hpl") and isinstance(p.get("blas_core"), str):
            if s.get("benchmark") in ("cpu", "hpcc") and p["blas_core"]:
                cores.setdefault(p["workload"], p["blas_core"])
    env = (run or {}).get("environment") or {}
    loads = {
        str(n["data"]["job"]): n["data"]
        for n in (run or {}).get("notes") or []
        if n.get("kind") == "load" and isinstance(n.get("data"), dict) and n["data"].get("job")
    }
    virt = env.get("virtualization")
    steal = virt.get("steal_since_boot_pct") if isinstance(virt, dict) else None
    formulas = {
        str(n["data"].get("name")): str(n["data"].get("formula") or "")
        for n in (run or {}).get("notes") or []
        if n.get("kind") == "peak" and isinstance(n.get("data"), dict)
    }
    return RunFacts(
        cores,
        dict(env.get("variables") or {}),
        loads,
        steal if isinstance(steal, (int, float)) else None,
        formulas,
    )


_PEAK_FLOPS = re.compile(r"x (\d+(?:\.\d+)?) FP64 FLOP/cycle \(([^)]*)\)")


def peak_per_cycle(formula: str | None) -> tuple[float, str] | None:
    """(FP64 FLOP/cycle per core, its ISA in words) of the FP64 peak's formula
    (machine/peaks.py flops_peaks: '... x 32 FP64 FLOP/cycle (AVX-512, 2 FMA units)');
    None for a user's --peak."""
    found = _PEAK_FLOPS.search(formula or "")
    if not found:
        return None
    return float(found.group(1)), found.group(2).split(",")[0].split(" on ")[0]


def kernel_ceiling(core: str, formula: str | None) -> tuple[float, str] | None:
    """(the share of the peak an OpenBLAS kernel can reach, its ISA in words); None where
    the kernel or the peak's FLOP/cycle is not known. The kernel's FLOP/cycle: its FP64
    lanes x 2 (FMA) x 2 units, or x 1 add + 1 mul without FMA: every x86 core since
    Haswell issues two 256-bit FMAs per cycle, whatever its 512-bit units (Intel ports
    0 and 1; AMD Zen's FMA pipes), so an AVX2 kernel reaches 16 FLOP/cycle: 50 % of a
    2-unit AVX-512 peak (32), all of a 1-unit one or of Zen 4's (16)."""
    kernel = BLAS_KERNELS.get(core.lower())
    peak = peak_per_cycle(formula)
    if kernel is None or peak is None or peak[0] <= 0:
        return None
    bits, fma, words = kernel
    per_cycle = bits / 64 * (4 if fma else 2)
    return min(1.0, per_cycle / peak[0]), words


def _blas_cause(row: dict, facts: RunFacts) -> tuple[str, float] | None:
    """The BLAS kernel as a cause: (text, its ceiling), where the kernel OpenBLAS ran
    cannot reach this peak."""
    core = facts.blas_core.get(str(row.get("workload")))
    if not core:
        return None
    formula = row.get("peak_formula")
    if peak_per_cycle(formula) is None:
        formula = facts.peak_formulas.get(str(row.get("peak_name")), formula)
    ceiling = kernel_ceiling(core, formula)
    if ceiling is None or ceiling[0] >= LOW_EFFICIENCY:
        return None
    share, words = ceiling
    peak = peak_per_cycle(formula)
    peak_words = peak[1] if peak else "this"
    forced = facts.variables.get("OPENBLAS_CORETYPE")
    if forced:
        why = f"OPENBLAS_CORETYPE={forced} forces OpenBLAS's {core} kernel ({words})"
    else:
        why = (
            f"OpenBLAS chose its {core} kernel ({words}; no OPENBLAS_CORETYPE set: this "
            "OpenBLAS may not know the CPU, a newer one would)"
        )
    text = f"{why}: its ceiling is {share:.0%} of this {peak_words} peak"
    eff = row["eff_vs_peak"]
    if eff < LOW_EFFICIENCY * share:
        text += f", and this run reached {eff / share:.0%} of that ceiling"
    return text, share


def _load_causes(row: dict, facts: RunFacts) -> list[str]:
    load = facts.load(row)
    out = []
    if load and load["others_cores"] >= OTHERS:
        out.append(
            f"other processes used {load['others_cores']:.1f} cores during the run "
            "(/proc/stat: the guest's own load, not ours)"
        )
    if load and load["steal_pct"] >= STEAL:
        out.append(f"steal time {load['steal_pct']:.0f} %: the host ran other guests")
    return out


def _check(row: dict) -> str:
    """What to check where no recorded fact explains a low efficiency."""
    workload = row.get("workload")
    if workload in ("dgemm", "hpl"):
        return (
            "check the BLAS kernel and threads (OPENBLAS_VERBOSE=2), a larger N, and "
            "other processes (top) while it runs"
        )
    if row.get("benchmark") == "cpu":
        return "check the clock under load (turbo, power limits) and SMT siblings (lscpu)"
    if row.get("benchmark") == "mem":
        return "check the array size against the caches and the NUMA placement"
    return "check the device's stated peak and other load while it runs"


def efficiency_cause(
    row: dict, scaling: Sequence[Scaling], facts: RunFacts | None = None
) -> str | None:
    """Why a node-table row is below LOW_EFFICIENCY of its theoretical peak, from the
    recorded facts, each with the number that makes it one; "not explained; check ..."
    where none does. None when it is not below (or has no theoretical peak)."""
    eff = row.get("eff_vs_peak")
    if eff is None or eff >= LOW_EFFICIENCY or row.get("peak_name") == "measured best":
        return None
    facts = facts or run_facts(None, [])
    causes = []
    blas = _blas_cause(row, facts) if row.get("workload") in ("dgemm", "hpl") else None
    if blas:
        causes.append(blas[0])
    n = row.get("concurrency")
    at = next((s for s in scaling if s.threads == n), None)
    load = facts.load(row)
    if row.get("benchmark") == "cpu" and at is not None:
        if at.clock_ratio is not None and at.clock_ratio < CLOCK_HOLDS:
            causes.append(
                f"clock drop under load: {at.clock_ghz:.3g} GHz with {n} threads busy, "
                f"{at.clock_ratio:.0%} of one thread's"
            )
        if at.shared:
            causes.append(_shared_text(at, at.threads, load, facts.steal_since_boot))
    causes += _load_causes(row, facts)
    if row.get("workload") in ("dgemm", "hpl") and not blas and at is not None and n:
        fma = at.rate_per_thread * n * _one_thread_fma(scaling) / row["peak"]
        if fma >= LOW_EFFICIENCY and not causes:
            causes.append(
                f"not explained: the register-only FMA kernel reaches {fma:.0%} of this "
                f"peak with {n} thread{'s' if n != 1 else ''}, so the cores can; " + _check(row)
            )
        elif fma < LOW_EFFICIENCY:
            causes.append(
                f"the register-only FMA kernel itself reaches only {fma:.0%} of this peak "
                f"with {n} thread{'s' if n != 1 else ''}"
            )
    spread = row.get("spread")
    if spread is not None and spread > NOISY:
        causes.append(
            f"repetitions spread by {spread:.0%} (best to worst): a noisy host; the best is "
            "what the machine can do"
        )
    if blas and eff < LOW_EFFICIENCY * blas[1] and len(causes) == 1:
        causes.append(f"the rest is not explained; {_check(row)}")
    return "; ".join(causes) or f"not explained; {_check(row)}"


def _shared_text(at: Scaling, n: int, load: dict | None, steal_boot: float | None) -> str:
    """Threads that do not scale, told apart by what was recorded: other processes of the
    guest, steal time (the host's other guests), or neither (then not explained)."""
    clock = (
        "while the clock holds"
        if (at.clock_ratio or 1.0) >= CLOCK_HOLDS
        else f"{at.rate_per_thread / (at.clock_ratio or 1.0):.0%} at equal clock"
    )
    scaled = (
        f"the FP64 rate per thread with {n} threads is {at.rate_per_thread:.0%} of one "
        f"thread's ({clock}), about {at.effective_cores:.1f} cores' worth"
    )
    if load is not None and load["others_cores"] >= OTHERS:
        return f"{scaled}: other processes of this machine held the rest (below)"
    steal = load["steal_pct"] if load is not None else steal_boot
    if steal is not None and steal >= STEAL:
        return f"cores shared on the host: {scaled}, with steal time {steal:.0f} %"
    if load is None:
        return (
            f"{scaled}; steal time and other processes were not recorded for this run: "
            "cores shared on the host or the guest's own load"
        )
    return (
        f"{scaled}, with no steal time ({load['steal_pct']:.1f} %) and no other processes "
        f"({load['others_cores']:.1f} cores) recorded: not explained; check SMT siblings "
        "(lscpu) and how the host pins these vCPUs"
    )


def _one_thread_fma(scaling: Sequence[Scaling]) -> float:
    return next((s.rate_one for s in scaling if s.threads == 1), 0.0)


@dataclass
class Compared:
    """One line of the machine as reported beside the machine as measured."""

    what: str
    reported: str
    measured: str
    verdict: str  # "as reported", or the difference in words


def _factor_text(e: CacheEdge) -> str:
    factor = (e.reported or 0) / math.sqrt(e.low * e.high)
    return f"{factor:.0f}x smaller than reported" if factor > 1 else f"{1 / factor:.0f}x larger"


WORKING_SET_KEYS = ("working_set", "bytes", "size")


def chase_curve(samples: Sequence[dict]) -> tuple[list[float], list[float], str] | None:
    """(working sets, median latencies, unit) of the mem benchmark's single-thread pointer
    chase (loaded latency, more threads at once, is not the cache curve); None with
    fewer than 4 working sets."""
    points: dict[float, list[float]] = {}
    unit = "ns"
    for s in samples:
        p = s.get("params") or {}
        if s.get("benchmark") != "mem" or s.get("metric") != "latency":
            continue
        if p.get("workload", "mem_latency") != "mem_latency" or p.get("threads", 1) != 1:
            continue
        key = next((k for k in WORKING_SET_KEYS if k in p), None)
        size = p.get(key) if key else None
        if not isinstance(size, (int, float)) or isinstance(size, bool) or not size > 0:
            continue  # an imported store may hold anything
        points.setdefault(float(size), []).extend(s["values"])
        unit = s["unit"]
    if len(points) < 4:
        return None
    x = sorted(points)
    return x, [statistics.median(points[v]) for v in x], unit


def _range(values: Sequence[float], unit: str) -> str:
    low, high = min(values), max(values)
    return f"{low:.2g}{unit}" if high - low < 0.05 else f"{low:.2g}-{high:.2g}{unit}"


def _numa_line(d: Distances) -> Compared:
    """One line for the NUMA matrix, however many nodes: the ranges, and the pair that
    differs most from hwloc's figure."""
    measured = f"remote latency {_range(list(d.latency.values()), 'x')} local"
    if d.bandwidth:
        measured += f", far bandwidth {_range(list(d.bandwidth.values()), 'x')} near"
    if not d.reported:
        return Compared("NUMA distances", "-", measured, "hwloc reports no distances")
    reported = f"remote {_range(list(d.reported.values()), 'x')} local"
    differing = d.differing()
    if not differing:
        return Compared("NUMA distances", reported, measured, "as reported")
    i, m = d.worst() or differing[0]
    verdict = (
        f"node {i} -> {m}: {d.latency[(i, m)]:.2g}x measured, {d.reported[(i, m)]:.2g}x "
        f"reported ({len(differing)} of {len(d.latency)} pairs differ by over "
        f"{AGREES:.0%})"
    )
    return Compared("NUMA distances", reported, measured, verdict)


def compare(
    samples: Sequence[dict],
    caches: dict[str, int],
    cores: int | None,
    nominal_ghz: float | None,
    topology_xml: str = "",
) -> list[Compared]:
    """Caches (hwloc's sizes against the chase's edges), cores (hwloc's count against
    the FP64 scaling), the clock (nominal against one and all threads busy) and, with
    several NUMA nodes, their distances (hwloc's matrix against the near/far one)."""
    out: list[Compared] = []
    curve = chase_curve(samples)
    edges = cache_edges(curve[0], curve[1], caches) if curve else []
    for e in edges:
        where = f"edge {format_bytes(e.low)}-{format_bytes(e.high)}"
        if e.level is None:
            out.append(Compared("cache step", "-", where, "no reported cache explains it"))
            continue
        out.append(
            Compared(
                e.level,
                format_bytes(e.reported) if e.reported else "-",
                where,
                "as reported" if e.agrees else _factor_text(e),
            )
        )
    scaling = core_scaling(samples)
    if scaling and scaling[-1].threads > 1:
        top = scaling[-1]
        verdict = (
            f"shared on the host: {top.effective_cores:.1f} cores' worth"
            if top.shared
            else "as reported"
        )
        out.append(
            Compared(
                "cores",
                str(cores) if cores else "-",
                f"{top.threads} threads: {top.rate_per_thread:.0%} of 1's FP64 rate each",
                verdict,
            )
        )
    ghz = clocks(samples)
    if ghz:
        most = max(ghz)
        measured = f"{ghz.get(1, ghz[most]):.3g} GHz on 1 thread" + (
            f", {ghz[most]:.3g} on {most}" if most > 1 else ""
        )
        verdict = "-"
        if nominal_ghz:
            ratio = ghz[most] / nominal_ghz
            verdict = (
                "as reported" if abs(ratio - 1) <= 0.02 else f"{ratio:.2f}x nominal under load"
            )
        out.append(
            Compared("clock", f"{nominal_ghz:.3g} GHz" if nominal_ghz else "-", measured, verdict)
        )
    numa = distances(topology_xml, samples)
    if numa:
        out.append(_numa_line(numa))
    return out


def compare_run(run: dict, samples: Sequence[dict]) -> list[Compared]:
    """compare() for a stored node run: what hwloc reported is the run's topology, the
    nominal clock the one its FLOP/s peaks were computed with."""
    from hpcscope.machine.topology import Topology, TopologyError

    caches: dict[str, int] = {}
    cores = None
    if run.get("topology_xml"):
        try:
            topology = Topology.from_xml(run["topology_xml"])
            caches, cores = topology.cache_sizes(), len(topology.cores)
        except TopologyError:
            pass
    nominal = next(
        (
            n["data"]["clock_ghz"]
            for n in run.get("notes") or []
            if n.get("kind") == "peak"
            and isinstance(n.get("data"), dict)
            and isinstance(n["data"].get("clock_ghz"), (int, float))
        ),
        None,
    )
    return compare(samples, caches, cores, nominal, run.get("topology_xml") or "")


def newest_node_run(store, host: str) -> tuple[dict, list[dict]] | None:
    """(run, samples) of the newest node run of `host` with CPU or memory samples."""
    runs = [r for r in store.runs([]) if r.get("suite") == "node" and r.get("host") == host]
    for run in reversed(runs):
        if store.problem(run["id"]):  # a run edited by hand: the views name it, not here
            continue
        samples = store.samples(run["id"])
        if any(s["benchmark"] in ("cpu", "mem") for s in samples):
            return store.run(run["id"]), samples
    return None


def usable_llc(run: dict, samples: Sequence[dict]) -> dict | None:
    """The last-level cache as a node run measured it, where it disagrees with hwloc:
    {bytes (the edge's high end: past it the chase is at memory latency), low, reported,
    level, run_id}; None where they agree or nothing was measured."""
    from hpcscope.machine.topology import Topology, TopologyError

    curve = chase_curve(samples)
    if not curve or not run.get("topology_xml"):
        return None
    try:
        caches = Topology.from_xml(run["topology_xml"]).cache_sizes()
    except TopologyError:
        return None
    top = [e for e in cache_edges(curve[0], curve[1], caches) if e.level and e.reported]
    llc = max(top, key=lambda e: e.reported or 0, default=None)
    if llc is None or llc.agrees:
        return None
    return {
        "bytes": int(llc.high),
        "low": int(llc.low),
        "reported": llc.reported,
        "level": llc.level,
        "run_id": run.get("id"),
    }
