"""What machine and software a report is about, for its first screen (issue 46 part 1):
CPU model, packages x cores x threads, the clock (nominal and, where a node run measured
it, measured), the memory the OS has (and hwloc's view where it differs, with the fact
that explains it), the MPI libraries, OS and kernel, and bare metal or which hypervisor.

Everything comes from what the runs recorded (runs.environment, runs.topology_xml,
runs.mpi, the peak notes, the node run's clock samples); a value not recorded is said
to be so, never guessed. Simulated runs describe a model, not this machine: they are
used only where a report holds nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hpcscope.analysis import clock_peaks
from hpcscope.formatting import format_bytes
from hpcscope.machine.peaks import nominal_ghz
from hpcscope.machine.topology import Topology, TopologyError

# hwloc's memory counts as the OS's when it is within this share of MemTotal (the kernel
# reserves a little that /proc/meminfo does not count; hwloc reads the node's own total)
_SAME_MEMORY = 0.03


@dataclass
class MachineLine:
    """One machine of a report: `title` (host and CPU model) and `facts`, (name, text)
    pairs in reading order."""

    host: str
    cpu: str
    facts: list[tuple[str, str]] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.host}, {self.cpu}" if self.cpu else self.host


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _uniform_text(values: list[int], word: str) -> str:
    """'2 cores' where every package has 2, '2-4 cores' where they differ."""
    if not values:
        return f"? {word}s"
    lo, hi = min(values), max(values)
    return _plural(lo, word) if lo == hi else f"{lo}-{hi} {word}s"


def shape(topo: Topology) -> str:
    """'1 socket x 2 cores x 1 thread (2 CPUs)'."""
    per_package = [sum(1 for c in topo.cores if c.package == p.index) for p in topo.packages]
    threads = [len(c.pus) for c in topo.cores]
    return (
        f"{_plural(len(topo.packages), 'socket')} x {_uniform_text(per_package, 'core')} x "
        f"{_uniform_text(threads, 'thread')} ({_plural(len(topo.pus), 'CPU')})"
    )


def memory_text(env: dict, topo: Topology | None) -> str:
    """The memory the OS has (/proc/meminfo MemTotal); where hwloc's NUMA nodes hold
    noticeably less, both, and what the recorded facts say about the rest: the kernel's
    own NUMA-node count (sysfs) equal to hwloc's means the rest lies in no NUMA node."""
    os_total = _positive_int(env.get("mem_total_bytes"))
    hw = topo.total_memory if topo is not None and topo.total_memory > 0 else None
    if os_total is None:
        if hw is None:
            return "not recorded"
        return f"{format_bytes(hw)} (hwloc's NUMA nodes; the OS's total was not recorded)"
    text = f"{format_bytes(os_total)} (/proc/meminfo MemTotal)"
    if hw is None or abs(hw - os_total) <= _SAME_MEMORY * os_total:
        return text
    one = topo is not None and len(topo.numa_nodes) == 1
    nodes = "NUMA node reports" if one else "NUMA nodes report"
    text += f"; hwloc's {nodes} {format_bytes(hw)}"
    numa = _positive_int(env.get("numa_mem_total_bytes"))
    if numa is not None and abs(numa - hw) <= _SAME_MEMORY * max(numa, hw) and hw < os_total:
        text += (
            ", all the kernel counts in its NUMA nodes (/sys/devices/system/node): the "
            f"other {format_bytes(os_total - numa)} lie in no NUMA node"
        )
        if _virtual(env):
            text += " (in a virtual machine, memory added after boot can)"
    else:
        text += (
            ": not explained by a recorded fact (compare `numactl -H` and "
            "/sys/devices/system/node/node*/meminfo with /proc/meminfo)"
        )
    return text


def _positive_int(x: object) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) and x > 0 else None


def _virtual(env: dict) -> bool:
    v = env.get("virtualization")
    return isinstance(v, dict) and bool(
        v.get("hypervisor") or v.get("sys_hypervisor") or v.get("hypervisor_flag")
    )


def hypervisor_text(env: dict) -> str:
    """'KVM virtual machine', 'a virtual machine (hypervisor not named)', 'bare metal (no
    hypervisor flag in /proc/cpuinfo)' or 'hypervisor not recorded'."""
    v = env.get("virtualization")
    if not isinstance(v, dict):
        return "hypervisor not recorded"
    where = v.get("hypervisor") or v.get("sys_hypervisor")
    product = f", {v['dmi_product']}" if v.get("dmi_product") else ""
    if where:
        return f"{where} virtual machine{product}"
    if v.get("hypervisor_flag"):
        return f"a virtual machine (hypervisor not named){product}"
    if v.get("hypervisor_flag") is False:
        return "bare metal (no hypervisor flag in /proc/cpuinfo)"
    return "hypervisor not recorded"


def clock_text(env: dict, peaks: list[dict], node_runs: list[tuple[int, list[dict]]]) -> str:
    """The nominal clock (the model name's, else the one the peaks used, with its
    source) and the clock the node suite measured under load, with its threads."""
    parts = []
    nominal = nominal_ghz(str(env.get("cpu_model") or ""))
    if nominal:
        parts.append(f"{nominal:g} GHz nominal (model name)")
    else:
        used = next((p for p in peaks if clock_peaks.positive_number(p.get("clock_ghz"))), None)
        source = str(used.get("source") or "") if used else ""
        if used and "cpu MHz" in source:
            parts.append(
                f"no nominal clock in the model name; /proc/cpuinfo 'cpu MHz' "
                f"{used['clock_ghz']:.2f} GHz"
            )
        elif used and "user value" in source:
            parts.append(f"{used['clock_ghz']:.2f} GHz as given (--peak freq)")
        else:
            parts.append("no nominal clock in the model name")
    for run_id, samples in node_runs:
        measured = clock_peaks.measured_clock(samples)
        if measured:
            ghz, threads, n = measured
            # the clock the peaks use: measured between FP64 FMA work where the run did so
            loaded = any(s["params"].get("load") for s in clock_peaks.clock_samples(samples))
            parts.append(
                f"{ghz:.2f} GHz measured{' between FP64 FMA work' if loaded else ''} with "
                f"{_plural(threads, 'thread')} busy (run {run_id}, median of {n})"
            )
            break
    else:
        parts.append("not measured (a node run measures it)")
    return "; ".join(parts)


def mpi_text(runs: list[dict]) -> str:
    """Each MPI library and version the runs used, once: 'openmpi 4.1.4, mpich 4.0.2'."""
    seen: dict[str, None] = {}
    for run in runs:
        mpis = run.get("mpi")
        for m in mpis if isinstance(mpis, list) else []:
            if isinstance(m, dict) and m.get("flavor"):
                version = str(m.get("version") or "version not recorded")
                seen.setdefault(f"{m['flavor']} {version}")
    return ", ".join(seen) or "none used"


def os_text(env: dict) -> str:
    system = env.get("os") or "OS not recorded"
    kernel = f"Linux {env['kernel']}" if env.get("kernel") else "kernel not recorded"
    return f"{system}, {kernel}"


def machines(runs: list[tuple[dict, list[dict]]]) -> list[MachineLine]:
    """One MachineLine per host of the report's measured runs, in run order; simulated
    runs only where there is nothing else."""
    measured = [(r, s) for r, s in runs if r.get("backend") != "sim"] or list(runs)
    found: dict[str, list[tuple[dict, list[dict]]]] = {}
    for run, samples in measured:
        found.setdefault(str(run.get("host") or "unknown host"), []).append((run, samples))
    return [_line(group) for group in found.values()]


def _recorded(run: dict) -> int:
    env = run.get("environment") or {}
    return sum(v is not None for v in env.values()) if isinstance(env, dict) else 0


def _line(group: list[tuple[dict, list[dict]]]) -> MachineLine:
    """The facts of the run of the host that recorded most (an older or imported run may
    lack some), each missing one from the host's other runs."""
    first = max((r for r, _ in group), key=_recorded)
    env: dict = {}
    for run in [first] + [r for r, _ in group if r is not first]:
        other = run.get("environment")
        for key, value in other.items() if isinstance(other, dict) else ():
            if env.get(key) is None:
                env[key] = value
    topo = None
    xml = first.get("topology_xml") or next(
        (r.get("topology_xml") for r, _ in group if r.get("topology_xml")), None
    )
    if xml:
        try:
            topo = Topology.from_xml(xml)
        except TopologyError:
            topo = None
    peaks = [
        n.get("data") or {}
        for r, _ in group
        for n in r.get("notes") or []
        if n.get("kind") == "peak" and isinstance(n.get("data"), dict)
    ]
    node_runs = [(r.get("id") or 0, s) for r, s in group if r.get("suite") == "node"]
    # the model /proc/cpuinfo names, else hwloc's (an imported store may have only that)
    models = [p.model for p in topo.packages if p.model] if topo else []
    cpu = str(env.get("cpu_model") or (models[0] if models else ""))
    line = MachineLine(str(first.get("host") or "unknown host"), cpu)
    line.facts = [
        (
            "CPU",
            f"{cpu or 'model not recorded'}; {shape(topo) if topo else 'topology not recorded'}",
        ),
        ("clock", clock_text(env, peaks, node_runs)),
        ("memory", memory_text(env, topo)),
        ("MPI", mpi_text([r for r, _ in group])),
        ("system", f"{os_text(env)}; {hypervisor_text(env)}"),
    ]
    return line
