"""Machine topology read from hwloc's XML export.

hwloc does the discovery: its library called with ctypes (machine/hwloc_lib.py, in a child
Python; the same XML as `lstopo-no-graphics --of xml`), or the lstopo program where the
library cannot be loaded. This module only reads the XML, so a topology recorded on a cluster node parses
the same as the local one. lstopo is otherwise only needed for the drawing in the report.

Relations (which core, package and NUMA node a hardware thread belongs to, which CPUs a
cache serves) are computed from the objects' cpusets rather than from their position in
the XML tree. That keeps the parser independent of the layout, which differs between
hwloc 1.x files (NUMANode above Socket, caches as type="Cache" with a depth) and hwloc 2.x
files (NUMA nodes as memory children, L1Cache/L2Cache/L3Cache/L1iCache types, Groups).

Numbering: `os_index` is what the OS and the launchers use (taskset, rankfiles, srun
map_cpu); packages and cores are numbered by hwloc's logical order (document order), since
their OS indices may be sparse; NUMA nodes by OS index (what numactl uses).
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from hpcscope.formatting import format_bytes
from hpcscope.machine import hwloc_lib

# hwloc cache_type attribute: HWLOC_OBJ_CACHE_UNIFIED, _DATA, _INSTRUCTION.
_CACHE_TYPES = {0: "unified", 1: "data", 2: "instruction"}
# hwloc 2.x osdev_type (HWLOC_OBJ_OSDEV_*): only these two are network interfaces.
_NIC_OSDEV_TYPES = {2: "network", 3: "openfabrics"}


class TopologyError(RuntimeError):
    """hwloc is missing, failed, or wrote something this parser cannot use."""


@dataclass
class Package:
    index: int  # logical index (0, 1, ...)
    os_index: int  # physical package id, may be sparse
    cpus: list[int]  # PU OS indices
    model: str = ""  # hwloc info CPUModel, if discovered
    # hwloc infos CPUVendor, CPUFamilyNumber, CPUModelNumber (x86): the CPU of a recorded
    # XML for the peaks (machine/node_facts.from_hwloc); "" / None when not recorded
    vendor: str = ""
    family: int | None = None
    model_number: int | None = None


@dataclass
class NumaNode:
    os_index: int
    memory: int  # bytes local to this node
    cpus: list[int]  # PU OS indices; empty for memory-only nodes (HBM, CXL)


@dataclass
class Core:
    index: int  # logical index over the whole machine
    package: int  # logical package index
    numa: int  # NUMA node OS index
    pus: list[int]  # PU OS indices, in hwloc order (smt_index order)


@dataclass
class PU:
    os_index: int
    core: int  # logical core index
    package: int  # logical package index
    numa: int  # NUMA node OS index
    smt_index: int  # 0 for the first hardware thread of its core


@dataclass
class Cache:
    level: int  # 1, 2, 3, ...
    type: str  # "data", "unified" or "instruction"
    size: int  # bytes of this instance
    cpus: list[int]  # PU OS indices sharing this instance

    @property
    def name(self) -> str:
        """L1d, L1i, L2, L3 (unified caches carry no suffix)."""
        suffix = {"data": "d", "instruction": "i"}.get(self.type, "")
        return f"L{self.level}{suffix}"


@dataclass
class Nic:
    name: str  # OS name: eth0, ib0, mlx5_0, hfi1_0
    type: str  # "network" (Ethernet/IPoIB netdev) or "openfabrics"
    subtype: str = ""  # hwloc subtype attribute when present
    link_speed_gbs: float | None = None  # PCI link speed in GB/s; None when unknown
    pci_busid: str = ""
    address: str = ""  # MAC address, or NodeGUID for OpenFabrics devices


@dataclass
class Topology:
    hostname: str
    packages: list[Package]
    numa_nodes: list[NumaNode]
    cores: list[Core]
    pus: list[PU]
    caches: list[Cache]
    nics: list[Nic]
    total_memory: int
    xml: str = field(default="", repr=False)

    # ----- construction -------------------------------------------------------------
    @classmethod
    def from_xml(cls, text: str) -> Topology:
        """Parse hwloc XML (1.x or 2.x format) as written by `lstopo --of xml`."""
        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            raise TopologyError(f"hwloc XML does not parse: {exc}") from exc
        machine = root.find("object")
        if root.tag != "topology" or machine is None:
            raise TopologyError('not an hwloc topology: expected <topology><object type="Machine">')
        return _Parser(machine).build(text)

    @classmethod
    def from_file(cls, path: str) -> Topology:
        with open(path, encoding="utf-8") as fh:
            return cls.from_xml(fh.read())

    @classmethod
    def local(cls) -> Topology:
        """Discover this machine: hwloc's library when it loads, else hwloc's lstopo."""
        return cls.from_xml(local_xml())

    # ----- queries ------------------------------------------------------------------
    def pu(self, os_index: int) -> PU:
        for p in self.pus:
            if p.os_index == os_index:
                return p
        raise KeyError(os_index)

    def cpu_range(self) -> str:
        """The valid OS CPU indices as a compact list, e.g. '0-23' or '0-3,8-11'."""
        return format_cpulist([p.os_index for p in self.pus])

    def last_level_caches(self) -> list[Cache]:
        """Instances of the highest-level data/unified cache (usually L3), or []."""
        data = [c for c in self.caches if c.type != "instruction"]
        if not data:
            return []
        top = max(c.level for c in data)
        return [c for c in data if c.level == top]

    def cache_sizes(self) -> dict[str, int]:
        """Per-instance size of each cache level: {"L1d": 32768, "L1i": ..., "L2": ..., "L3": ...}.

        With instances of different sizes (hybrid CPUs) the largest one is given: callers
        use these to size working sets that must fit (or must not fit) a level.
        """
        sizes: dict[str, int] = {}
        for c in self.caches:
            sizes[c.name] = max(sizes.get(c.name, 0), c.size)
        return dict(sorted(sizes.items(), key=lambda kv: (int(kv[0][1:].rstrip("di")), kv[0])))

    @property
    def smt(self) -> int:
        """Most hardware threads of any core (1: no SMT)."""
        return max((len(c.pus) for c in self.cores), default=1)

    # ----- output -------------------------------------------------------------------
    def summary(self, os_memory: int | None = None) -> str:
        """One line, e.g. '1 package x 2 cores x 1 hardware thread, 1 NUMA node, 5.6 GiB;
        L1d 32 KiB, L2 512 KiB per core, L3 32 MiB shared by 2 cores'. With `os_memory`
        (/proc/meminfo MemTotal) that differs from the NUMA nodes' by more than 3 %, both:
        '23.5 GiB (hwloc's NUMA nodes: 5.84 GiB)'."""
        npk = len(self.packages)
        cores_per = _uniform(
            [sum(1 for c in self.cores if c.package == p.index) for p in self.packages]
        )
        threads = _uniform([len(c.pus) for c in self.cores])
        nnuma = len(self.numa_nodes)
        head = (
            f"{_plural(npk, 'package')} x {_plural(cores_per, 'core')} x "
            f"{_plural(threads, 'hardware thread')}, {_plural(nnuma, 'NUMA node')}, "
            f"{format_bytes(self.total_memory)}"
        )
        if os_memory and abs(os_memory - self.total_memory) > 0.03 * os_memory:
            head = head.rsplit(", ", 1)[0] + (
                f", {format_bytes(os_memory)} (hwloc's NUMA nodes: "
                f"{format_bytes(self.total_memory)})"
            )
        per_core, shared = [], []
        for name, size in self.cache_sizes().items():
            if name.endswith("i"):
                continue  # instruction caches matter little for data movement; kept in the tree
            n = self._cores_sharing(name)
            if n <= 1:
                per_core.append(f"{name} {format_bytes(size)}")
            else:
                shared.append(f"{name} {format_bytes(size)} shared by {n} cores")
        parts = []
        if per_core:
            parts.append(", ".join(per_core) + " per core")
        parts.extend(shared)
        return head + ("; " + ", ".join(parts) if parts else "")

    def describe(self) -> str:
        """Readable multi-line text: the summary line, then the hierarchy and the NICs."""
        lines = [self.summary()]
        host = self.hostname or "unknown host"
        lines.append(f"Machine {host} ({format_bytes(self.total_memory)})")
        for pkg in self.packages:
            model = f" {pkg.model}" if pkg.model else ""
            lines.append(f"  Package {pkg.index}{model}: CPUs {format_cpulist(pkg.cpus)}")
            pset = set(pkg.cpus)
            for node in self.numa_nodes:
                if node.cpus and set(node.cpus) <= pset:
                    lines.append(
                        f"    NUMA node {node.os_index} ({format_bytes(node.memory)}):"
                        f" CPUs {format_cpulist(node.cpus)}"
                    )
                    for llc in self.last_level_caches():
                        common = sorted(set(llc.cpus) & set(node.cpus))
                        if common:
                            lines.append(
                                f"      {llc.name} {format_bytes(llc.size)}"
                                f" (CPUs {format_cpulist(llc.cpus)})"
                            )
                            for core in self.cores:
                                if core.pus[0] in common:
                                    lines.append(
                                        f"        core {core.index}: PU "
                                        + ",".join(map(str, core.pus))
                                    )
                    if not self.last_level_caches():
                        for core in self.cores:
                            if core.pus[0] in node.cpus:
                                lines.append(
                                    f"      core {core.index}: PU " + ",".join(map(str, core.pus))
                                )
        memory_only = [n for n in self.numa_nodes if not n.cpus]
        for node in memory_only:
            lines.append(f"  NUMA node {node.os_index} ({format_bytes(node.memory)}): memory only")
        for nic in self.nics:
            speed = f", PCI {nic.link_speed_gbs:g} GB/s" if nic.link_speed_gbs else ""
            extra = ", ".join(
                x for x in (nic.subtype, nic.address, nic.pci_busid and f"PCI {nic.pci_busid}") if x
            )
            lines.append(f"  NIC {nic.name} ({nic.type}{', ' + extra if extra else ''}{speed})")
        return "\n".join(lines)

    def to_dict(self, include_xml: bool = False) -> dict[str, Any]:
        """Plain data for JSON. The XML is large; ask for it when storing a run."""
        d = asdict(self)
        if not include_xml:
            d.pop("xml")
        d["summary"] = self.summary()
        d["cache_sizes"] = self.cache_sizes()
        return d

    def _cores_sharing(self, cache_name: str) -> int:
        """How many cores one instance of this cache level serves (largest instance)."""
        pu_core = {p.os_index: p.core for p in self.pus}
        return max(
            (
                len({pu_core[c] for c in cache.cpus if c in pu_core})
                for cache in self.caches
                if cache.name == cache_name
            ),
            default=0,
        )


# ----- discovery ------------------------------------------------------------------------

INSTALL_HINT = (
    "install the hwloc library with `apt-get install libhwloc15` (Debian/Ubuntu; it comes "
    "with Open MPI and MPICH) or the tools with `apt-get install hwloc`, or load an hwloc module"
)


def local_xml() -> str:
    """This machine's hwloc XML: from the library (no program needed), else from lstopo."""
    try:
        return hwloc_lib.topology_xml()
    except hwloc_lib.HwlocLibraryError as exc:
        library_problem = str(exc)
    return _lstopo_xml(library_problem)


def _lstopo_xml(library_problem: str) -> str:
    exe = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if exe is None:
        raise TopologyError(
            f"hwloc discovers the machine topology, but {library_problem} and hwloc's "
            f"lstopo-no-graphics/lstopo is not installed: {INSTALL_HINT}"
        )
    try:
        proc = subprocess.run(
            [exe, "--of", "xml"], capture_output=True, text=True, timeout=120, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise TopologyError(f"{exe} --of xml did not finish in 120 s") from exc
    except OSError as exc:
        raise TopologyError(f"{exe} --of xml could not run ({exc}); {library_problem}") from exc
    if proc.returncode != 0:
        raise TopologyError(
            f"{exe} --of xml failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}; "
            f"{library_problem}"
        )
    return proc.stdout


# ----- parsing ----------------------------------------------------------------------------


class _Parser:
    """Collects hwloc objects by type, then derives relations from cpusets."""

    def __init__(self, machine: ET.Element) -> None:
        self.machine = machine

    def build(self, text: str) -> Topology:
        objs = list(_walk(self.machine, None))
        pu_elems = [e for e, _ in objs if e.get("type") == "PU"]
        if not pu_elems:
            raise TopologyError("hwloc XML has no PU objects: cannot place processes")
        pu_ids = [int(e.get("os_index", "0")) for e in pu_elems]

        packages = [
            Package(
                index=i,
                os_index=int(e.get("os_index", str(i))),
                cpus=_cpus(e),
                model=_info(e, "CPUModel"),
                vendor=_info(e, "CPUVendor"),
                family=_int_info(e, "CPUFamilyNumber"),
                model_number=_int_info(e, "CPUModelNumber"),
            )
            for i, e in enumerate(e for e, _ in objs if e.get("type") in ("Package", "Socket"))
        ]
        if not packages:  # some platforms report no package: treat the machine as one
            packages = [Package(index=0, os_index=0, cpus=sorted(pu_ids))]

        numa_nodes = [
            NumaNode(os_index=int(e.get("os_index", "0")), memory=_memory(e), cpus=_cpus(e))
            for e, _ in objs
            if e.get("type") == "NUMANode"
        ]
        numa_nodes.sort(key=lambda n: n.os_index)
        if not numa_nodes:
            numa_nodes = [NumaNode(os_index=0, memory=_memory(self.machine), cpus=sorted(pu_ids))]

        core_elems = [e for e, _ in objs if e.get("type") == "Core"]
        core_sets = [_cpus(e) for e in core_elems] or [[p] for p in pu_ids]

        def owner(cpu: int, sets: list[list[int]]) -> int:
            for i, s in enumerate(sets):
                if cpu in s:
                    return i
            raise TopologyError(f"PU P#{cpu} is in no enclosing object's cpuset")

        pkg_sets = [p.cpus for p in packages]
        numa_with_cpus = [n for n in numa_nodes if n.cpus]

        def numa_of(cpu: int) -> int:
            for n in numa_with_cpus:
                if cpu in n.cpus:
                    return n.os_index
            return numa_nodes[0].os_index

        # PUs in document order = hwloc logical order. Cores are numbered by the first
        # appearance of one of their PUs; smt_index counts the PUs within a core.
        core_of_pu = {cpu: owner(cpu, core_sets) for cpu in pu_ids}
        logical: dict[int, int] = {}
        for cpu in pu_ids:
            logical.setdefault(core_of_pu[cpu], len(logical))
        cores: list[Core] = []
        for ci, li in sorted(logical.items(), key=lambda kv: kv[1]):
            members = [c for c in pu_ids if core_of_pu[c] == ci]
            cores.append(
                Core(
                    index=li,
                    package=owner(members[0], pkg_sets),
                    numa=numa_of(members[0]),
                    pus=members,
                )
            )
        pus: list[PU] = []
        for cpu in pu_ids:
            core = cores[logical[core_of_pu[cpu]]]
            pus.append(
                PU(
                    os_index=cpu,
                    core=core.index,
                    package=core.package,
                    numa=numa_of(cpu),
                    smt_index=core.pus.index(cpu),
                )
            )

        caches = [c for c in (_cache(e) for e, _ in objs) if c is not None]
        nics = [n for n in (_nic(e, parent) for e, parent in objs) if n is not None]
        total = sum(n.memory for n in numa_nodes) or _memory(self.machine)
        return Topology(
            hostname=_info(self.machine, "HostName"),
            packages=packages,
            numa_nodes=numa_nodes,
            cores=cores,
            pus=pus,
            caches=caches,
            nics=nics,
            total_memory=total,
            xml=text,
        )


def _walk(
    elem: ET.Element, parent: ET.Element | None
) -> Iterator[tuple[ET.Element, ET.Element | None]]:
    """All <object> elements in document order, each with its parent object."""
    yield elem, parent
    for child in elem.findall("object"):
        yield from _walk(child, elem)


def _info(elem: ET.Element, name: str) -> str:
    for info in elem.findall("info"):
        if info.get("name") == name:
            return info.get("value", "")
    return ""


def _int_info(elem: ET.Element, name: str) -> int | None:
    text = _info(elem, name)
    return int(text) if text.isdigit() else None


def _memory(elem: ET.Element) -> int:
    # hwloc 2.x: local_memory on NUMANode; 1.x also on Machine when there is no NUMA node.
    return int(elem.get("local_memory", "0") or 0)


def parse_cpuset(text: str) -> list[int]:
    """hwloc bitmap string -> sorted indices. Format: comma-separated 32-bit hex words,
    most significant first ("0x00000003", "0x000000ff,0xffffffff"). An infinite set
    ("0xf...f,...") cannot be listed; only its finite low words are read."""
    text = text.strip()
    if not text or text == "0x0":
        return []
    words = text.split(",")
    if words[0].lower().startswith("0xf...f"):
        words = words[1:]
    # hwloc writes 32-bit words ("0x%08lx"); more than 2048 of them (65536 CPUs) or longer
    # ones come from a damaged file, and listing them would take gigabytes
    if len(words) > 2048 or any(len(word.strip()) > 18 for word in words):
        raise TopologyError(f"cpuset {text[:40]!r}... is not a cpuset of at most 65536 CPUs")
    cpus: list[int] = []
    for pos, word in enumerate(reversed(words)):
        value = int(word, 16)
        bit = 0
        while value:
            if value & 1:
                cpus.append(pos * 32 + bit)
            value >>= 1
            bit += 1
    return sorted(cpus)


def _cpus(elem: ET.Element) -> list[int]:
    return parse_cpuset(elem.get("cpuset", ""))


def _cache(elem: ET.Element) -> Cache | None:
    kind = elem.get("type", "")
    # hwloc 2.x: L1Cache..L5Cache, L1iCache..L3iCache; 1.x: Cache with depth. MemCache is a
    # memory-side cache (e.g. MCDRAM in cache mode), not a CPU cache: left out.
    if not kind.endswith("Cache") or kind == "MemCache":
        return None
    level = int(elem.get("depth", "0") or 0)
    if not level and kind[1:2].isdigit():
        level = int(kind[1])
    ctype = _CACHE_TYPES.get(int(elem.get("cache_type", "-1")), "")
    if not ctype:
        ctype = "instruction" if kind.endswith("iCache") else "unified"
    return Cache(
        level=level, type=ctype, size=int(elem.get("cache_size", "0") or 0), cpus=_cpus(elem)
    )


def _nic(elem: ET.Element, parent: ET.Element | None) -> Nic | None:
    if elem.get("type") != "OSDev":
        return None
    osdev = elem.get("osdev_type", "")
    kind = _NIC_OSDEV_TYPES.get(int(osdev)) if osdev.lstrip("-").isdigit() else None
    if kind is None:
        return None
    speed: float | None = None
    busid = ""
    if parent is not None and parent.get("type") == "PCIDev":
        busid = parent.get("pci_busid", "")
        raw = float(parent.get("pci_link_speed", "0") or 0)
        speed = raw if raw > 0 else None  # 0 means hwloc could not read it (e.g. virtio)
    address = _info(elem, "Address") or _info(elem, "NodeGUID")
    return Nic(
        name=elem.get("name", ""),
        type=kind,
        subtype=elem.get("subtype", ""),
        link_speed_gbs=speed,
        pci_busid=busid,
        address=address,
    )


# ----- CPU lists as taskset and /sys write them --------------------------------------------


def format_cpulist(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5' (the syntax of taskset -c and /sys cpulist files)."""
    out: list[str] = []
    s = sorted(set(cpus))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(out)


def _uniform(values: list[int]) -> int | str:
    if not values:
        return 0
    return values[0] if min(values) == max(values) else f"{min(values)}-{max(values)}"


def _plural(n: int | str, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
