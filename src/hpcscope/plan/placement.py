"""Placement classes: where two ranks sit relative to each other, derived from the topology.

A class names the closest hardware level two ranks share, because that level decides the
path a message takes (docs/records.md, tags):

    smt     two hardware threads of one core (share L1/L2 and the core's execution units)
    core    two cores sharing a package, its last-level cache and a NUMA node
    numa    two NUMA nodes of one package (sub-NUMA clustering, AMD NPS>1)
    socket  two packages of one node (the inter-socket link)
    node    two nodes (the network)

The planner never hard-codes CPU numbers: it reads them from the Topology, so the same
plan gives [0, 12] for `smt` on an Intel node that numbers hyperthreads P#0/P#12 and
[0, 1] on one that numbers them P#0/P#1. A class this machine cannot offer comes back as
a Placement with `skipped` set to the reason, so reports can say why a row is missing.

CPU choice: the first hardware thread of the first suitable core(s), in hwloc's logical
order. CPU 0 is not avoided: on small machines (2 cores) there is no alternative, the same
choice on every machine keeps results comparable, and mpirun's own default mapping also
starts at core 0. If CPU 0 is noisy (interrupts, housekeeping), pass explicit CPUs.

CPU numbers are OS indices (what taskset, lstopo's P#, rankfiles and srun use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hpcscope.formatting import format_bytes
from hpcscope.machine.topology import Topology

CLASSES: tuple[str, ...] = ("smt", "core", "numa", "socket", "node")
# `default` is no hardware level: the launcher binds as it does by itself (the seeds'
# "original" column: plain `mpirun -np 2`), and the ranks report where that put them.
DEFAULT = "default"
PLACEMENTS: tuple[str, ...] = (DEFAULT, *CLASSES)

_RELATION_TEXT = {
    "single": "a single CPU",
    "smt": "hardware threads of one core",
    "core": "different cores of one package and NUMA node",
    "numa": "different NUMA nodes of one package",
    "socket": "different packages",
    "node": "different nodes",
}


class PlacementError(RuntimeError):
    """The ranks did not run where the placement asked, or the machine cannot host the run."""


@dataclass
class Placement:
    name: str  # class name, or "cpus:0,7" for an explicit list
    cpus: list[int]  # OS CPU index per rank (rank i on cpus[i]); [] when skipped
    nodes: int  # distinct nodes the ranks span
    description: str
    skipped: str | None = None  # why this machine cannot offer the class
    relation: str = ""  # the class whose relation the CPUs satisfy

    @property
    def ranks(self) -> int:
        return len(self.cpus)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cpus": list(self.cpus),
            "nodes": self.nodes,
            "description": self.description,
            "skipped": self.skipped,
            "relation": self.relation,
        }


# ----- planning ---------------------------------------------------------------------------


def plan_placements(
    topo: Topology,
    classes: list[str],
    explicit_cpus: list[int] | None = None,
    nodes_available: int = 1,
) -> list[Placement]:
    """One Placement per requested class (in the order given), then one for explicit CPUs.

    Raises ValueError for an unknown class or an invalid explicit CPU list; a class the
    machine cannot offer is returned with `skipped` set instead.
    """
    unknown = [c for c in classes if c not in PLACEMENTS]
    if unknown:
        raise ValueError(
            f"unknown placement class {', '.join(map(repr, unknown))}: "
            f"valid classes are {', '.join(PLACEMENTS)} (or explicit CPUs such as 0,1)"
        )
    planners = {"smt": _plan_smt, "core": _plan_core, "numa": _plan_numa, "socket": _plan_socket}
    out: list[Placement] = []
    for cls in classes:
        if cls == DEFAULT:
            out.append(
                Placement(
                    DEFAULT,
                    [],
                    1,
                    "binding left to the launcher (no binding options); where the ranks "
                    "ran is read from inside and reported",
                    relation=DEFAULT,
                )
            )
        elif cls == "node":
            out.append(_plan_node(topo, nodes_available))
        else:
            out.append(planners[cls](topo))
    if explicit_cpus is not None:
        out.append(explicit_placement(topo, explicit_cpus))
    return out


def _skip(name: str, reason: str, nodes: int = 1) -> Placement:
    return Placement(
        name=name,
        cpus=[],
        nodes=nodes,
        description=f"{name}: skipped ({reason})",
        skipped=reason,
        relation=name,
    )


def _where(topo: Topology, cpu: int) -> str:
    p = topo.pu(cpu)
    return f"CPU {cpu} (core {p.core}, package {p.package}, NUMA node {p.numa})"


def _plan_smt(topo: Topology) -> Placement:
    for core in topo.cores:
        if len(core.pus) >= 2:
            a, b = core.pus[0], core.pus[1]
            return Placement(
                "smt",
                [a, b],
                1,
                relation="smt",
                description=(
                    f"two hardware threads of core {core.index} (package {core.package}, NUMA node "
                    f"{core.numa}): CPUs {a} and {b}; they share the core's L1/L2 and execution units"
                ),
            )
    return _skip("smt", f"no SMT: each core has {topo.smt} hardware thread")


def _plan_core(topo: Topology) -> Placement:
    # Two cores that share the last-level cache and a NUMA node: the cheapest path between
    # cores. Without cache information the package stands in for the cache domain.
    llcs = topo.last_level_caches()
    domains = [(set(c.cpus), f"{c.name} {format_bytes(c.size)}") for c in llcs] or [
        (set(p.cpus), f"package {p.index}") for p in topo.packages
    ]
    for cpus, label in domains:
        by_numa: dict[int, list[int]] = {}
        for core in topo.cores:
            if core.pus[0] in cpus:
                by_numa.setdefault(core.numa, []).append(core.index)
        for numa, members in by_numa.items():
            if len(members) >= 2:
                c0, c1 = topo.cores[members[0]], topo.cores[members[1]]
                return Placement(
                    "core",
                    [c0.pus[0], c1.pus[0]],
                    1,
                    relation="core",
                    description=(
                        f"cores {c0.index} and {c1.index} of package {c0.package}, NUMA node {numa}, "
                        f"sharing {label}: CPUs {c0.pus[0]} and {c1.pus[0]}"
                    ),
                )
    if max(sum(1 for c in topo.cores if c.package == p.index) for p in topo.packages) < 2:
        return _skip("core", "1 core per package")
    return _skip("core", "no two cores share a last-level cache and a NUMA node")


def _plan_numa(topo: Topology) -> Placement:
    for pkg in topo.packages:
        pset = set(pkg.cpus)
        nodes = [n for n in topo.numa_nodes if n.cpus and set(n.cpus) <= pset]
        if len(nodes) >= 2:
            firsts = [next(c for c in topo.cores if c.pus[0] in n.cpus) for n in nodes[:2]]
            a, b = firsts[0].pus[0], firsts[1].pus[0]
            return Placement(
                "numa",
                [a, b],
                1,
                relation="numa",
                description=(
                    f"first cores of NUMA nodes {nodes[0].os_index} and {nodes[1].os_index} of package "
                    f"{pkg.index}: CPUs {a} and {b}"
                ),
            )
    return _skip("numa", "one NUMA node per package")


def _plan_socket(topo: Topology) -> Placement:
    if len(topo.packages) < 2:
        return _skip("socket", f"{len(topo.packages)} package")
    firsts = [next(c for c in topo.cores if c.package == p.index) for p in topo.packages[:2]]
    a, b = firsts[0].pus[0], firsts[1].pus[0]
    return Placement(
        "socket",
        [a, b],
        1,
        relation="socket",
        description=(f"first cores of packages 0 and 1: {_where(topo, a)} and {_where(topo, b)}"),
    )


def _plan_node(topo: Topology, nodes_available: int) -> Placement:
    if nodes_available < 2:
        return _skip("node", "one node: use --on slurm with --nodes 2 or the lab", nodes=2)
    # Rank 1 takes the second core's CPU rather than the same number: on real nodes any
    # core is as good, but test clusters and the lab run several "nodes" on one host, where
    # two ranks pinned to one CPU would time-share it (milliseconds per message).
    first = topo.cores[0].pus[0]
    second = topo.cores[1].pus[0] if len(topo.cores) > 1 else first
    return Placement(
        "node",
        [first, second],
        2,
        relation="node",
        description=(
            f"one rank on each of 2 nodes, on CPU {first} and CPU {second} (first cores; "
            "nodes assumed alike)"
        ),
    )


RANK_LAYOUTS: tuple[str, ...] = ("alternate", "block", "default")


def rank_layout_cpus(topo: Topology, ranks_per_node: int, layout: str) -> list[int] | None:
    """The CPU of each rank of one node (local rank order) for coll and lanes jobs; None
    for `default` (the launcher binds) or when the node has fewer cores than ranks.

        alternate  local rank i on package i mod S, on that package's next free core: the
                   paper's layout for nodes with one NIC per socket (Traeff & Hunold), so
                   consecutive ranks (lane communicators) use both sockets' links
        block      cores in hwloc's logical order: package 0 fills first
    One rank per core (its first hardware thread); with one package both are the same.
    """
    if layout not in RANK_LAYOUTS:
        raise ValueError(
            f"--rank-layout {layout!r} is not a rank layout: choose {', '.join(RANK_LAYOUTS)}"
        )
    if layout == "default":
        return None
    per_package = [[c.pus[0] for c in topo.cores if c.package == p.index] for p in topo.packages]
    if layout == "block":
        order = [cpu for cpus in per_package for cpu in cpus]
    else:
        order = []
        for i in range(max((len(c) for c in per_package), default=0)):
            order += [cpus[i] for cpus in per_package if i < len(cpus)]
    return order[:ranks_per_node] if ranks_per_node <= len(order) else None


def relation_of(topo: Topology, cpus: list[int]) -> str:
    """The class the CPUs correspond to: the widest relation between any two of them."""
    pus = [topo.pu(c) for c in cpus]
    if len(pus) < 2:
        return "single"
    if len({p.package for p in pus}) > 1:
        return "socket"
    if len({p.numa for p in pus}) > 1:
        return "numa"
    if len({p.core for p in pus}) > 1:
        return "core"
    return "smt"


def explicit_placement(topo: Topology, cpus: list[int]) -> Placement:
    """A Placement for CPUs given by the user (OS indices), validated against the topology."""
    if not cpus:
        raise ValueError("explicit CPU list is empty: give one OS CPU index per rank, e.g. 0,1")
    valid = {p.os_index for p in topo.pus}
    bad = [c for c in cpus if c not in valid]
    if bad:
        raise ValueError(
            f"CPU {', '.join(map(str, bad))} does not exist on this machine: valid CPUs "
            f"are {topo.cpu_range()} (OS indices, as lstopo's P# and taskset -c)"
        )
    dups = sorted({c for c in cpus if cpus.count(c) > 1})
    if dups:
        raise ValueError(
            f"CPU {', '.join(map(str, dups))} given more than once: ranks sharing one "
            f"hardware thread time-share it, which measures the scheduler, not the "
            f"hardware; give distinct CPUs"
        )
    rel = relation_of(topo, cpus)
    name = "cpus:" + ",".join(map(str, cpus))
    where = "; ".join(f"rank {r} on {_where(topo, c)}" for r, c in enumerate(cpus))
    corresponds = (
        "" if rel == "single" else f"; corresponds to class '{rel}' ({_RELATION_TEXT[rel]})"
    )
    return Placement(
        name,
        list(cpus),
        1,
        relation=rel,
        description=f"explicit CPUs {','.join(map(str, cpus))}: {where}{corresponds}",
    )


def max_ranks_check(
    topo: Topology, ranks: int, nodes: int = 1, oversubscribe: bool = False
) -> str | None:
    """Refuse more ranks than hardware threads unless oversubscription is asked for.

    Returns None when the ranks fit, a warning text when they do not but oversubscribe is
    set (timings of such runs mean nothing); raises PlacementError otherwise.
    """
    capacity = len(topo.pus) * max(nodes, 1)
    if ranks <= capacity:
        return None
    what = (
        f"{ranks} ranks but {_node_count(nodes)} {'has' if nodes == 1 else 'have'} "
        f"{capacity} hardware threads"
    )
    if oversubscribe:
        return f"{what}: oversubscribed, run for correctness only; its timings mean nothing"
    raise PlacementError(
        f"{what}. Use at most {capacity} ranks, or pass --oversubscribe for "
        f"correctness-only runs (ranks then time-share CPUs and timings mean nothing)"
    )


def _node_count(nodes: int) -> str:
    return "this node" if nodes <= 1 else f"{nodes} nodes"


# ----- verification -----------------------------------------------------------------------

_FIX_HINT = (
    "check that the binding arguments reached the launcher (Open MPI: --rankfile with "
    "--mca rmaps_rank_file_physical 1; MPICH: -bind-to user:...; srun: "
    "--cpu-bind=map_cpu:...) and that no cgroup, cpuset or SLURM allocation hides these CPUs"
)


def verify_binding(placement: Placement, ranks_meta: list[dict[str, Any]], topo: Topology) -> None:
    """Raise PlacementError unless every rank ran where `placement` asked.

    `ranks_meta` is the "ranks" list of the benchmark's meta record, read from inside each
    process: {"rank", "host", "cpus", "core", "socket", "numa"}. CPUs are compared exactly;
    the class relation is checked on the reported core/socket/numa/host values, which only
    need to be consistent among the ranks (they may be logical or physical numbers).
    """
    name = placement.name
    if placement.skipped:
        raise PlacementError(f"placement '{name}' was skipped ({placement.skipped}) but ranks ran")
    metas = sorted(ranks_meta, key=lambda m: int(m.get("rank", 0)))
    if len(metas) != placement.ranks:
        raise PlacementError(
            f"placement '{name}' plans {placement.ranks} ranks but "
            f"{len(metas)} reported where they ran"
        )
    all_cpus = sorted(p.os_index for p in topo.pus)

    for want, meta in zip(placement.cpus, metas):
        got = sorted(int(c) for c in meta.get("cpus", []))
        if got == [want]:
            continue
        rank = meta.get("rank")
        if len(got) > 1:
            state = "unbound" if got == all_cpus else f"bound to {len(got)} CPUs"
            cause = "the launcher ignored the binding"
        elif got:
            state = "bound elsewhere"
            cause = (
                "the launcher bound it to another CPU (logical vs OS numbering? Open MPI needs "
                "rmaps_rank_file_physical 1)"
            )
        else:
            state, cause = "no CPUs reported", "the benchmark could not read its binding"
        raise PlacementError(
            f"placement '{name}' asked rank {rank} on CPU {want} but it ran on "
            f"CPUs {got} ({state}): {cause}; {_FIX_HINT}"
        )

    rel = placement.relation or name
    hosts = [str(m.get("host", "")) for m in metas]

    def values(key: str) -> list[Any]:
        missing = [m.get("rank") for m in metas if m.get(key) is None]
        if missing:
            raise PlacementError(
                f"placement '{name}': rank {missing[0]} did not report its {key!r}; "
                "the benchmark's binding report is incomplete"
            )
        return [m[key] for m in metas]

    def fail(why: str) -> None:
        shown = ", ".join(
            f"rank {m.get('rank')}: host {m.get('host')} socket {m.get('socket')} "
            f"numa {m.get('numa')} core {m.get('core')}"
            for m in metas
        )
        raise PlacementError(
            f"placement '{name}' needs {_RELATION_TEXT.get(rel, rel)} but {why} "
            f"({shown}); the topology the plan used differs from where the ranks "
            f"ran, or {_FIX_HINT}"
        )

    if rel == "node":
        if len(set(hosts)) != placement.nodes:
            fail(f"the ranks ran on {len(set(hosts))} distinct host(s) {sorted(set(hosts))}")
        return
    if placement.nodes > 1:
        # A pinned multi-node job (coll, lanes): ranks in blocks of ranks/nodes per node,
        # the distribution every launcher here uses (srun block, rankfile, -ppn).
        per = max(1, len(metas) // placement.nodes)
        blocks = [hosts[i : i + per] for i in range(0, len(hosts), per)]
        if len(set(hosts)) != placement.nodes or any(len(set(b)) != 1 for b in blocks):
            raise PlacementError(
                f"placement '{name}' needs {per} consecutive ranks on each of "
                f"{placement.nodes} nodes but the ranks ran on hosts {hosts}; {_FIX_HINT}"
            )
        return
    if len(set(hosts)) != 1:
        fail(f"the ranks ran on hosts {sorted(set(hosts))}")
    if rel == "single":
        return
    sockets, numas, cores = values("socket"), values("numa"), values("core")
    # Core numbers may be per package (Linux core_id, what bench/common/binding.c reports as
    # hwloc os_index), so a core is identified by (socket, core).
    if rel == "smt":
        if len(set(zip(sockets, cores))) != 1:
            fail("they ran on different cores")
    elif rel == "core":
        if len(set(sockets)) != 1:
            fail("they ran on different sockets")
        elif len(set(numas)) != 1:
            fail("they ran on different NUMA nodes")
        elif len(set(cores)) < 2:
            fail("they ran on one core")
    elif rel == "numa":
        if len(set(sockets)) != 1:
            fail("they ran on different sockets")
        elif len(set(numas)) < 2:
            fail("they ran on one NUMA node")
    elif rel == "socket":
        if len(set(sockets)) < 2:
            fail("they ran on one socket")


def verify_node_topology(cpus: list[int], ranks_meta: list[dict[str, Any]], topo: Topology) -> None:
    """Raise PlacementError when a rank's CPU is on another socket or NUMA node than the
    topology the plan used says: the nodes are not what was planned for (a stale cached
    probe, a wrong --topology file). Ranks bound as asked only (verify_binding first);
    values a rank could not read (null) are not compared."""
    metas = sorted(ranks_meta, key=lambda m: int(m.get("rank", 0)))
    for want, meta in zip(cpus, metas):
        try:
            pu = topo.pu(want)
        except KeyError:
            continue
        planned = {"socket": topo.packages[pu.package].os_index, "numa": pu.numa}
        for key, value in planned.items():
            got = meta.get(key)
            if got is not None and int(got) != value:
                raise PlacementError(
                    f"rank {meta.get('rank')} ran on CPU {want} of {meta.get('host')}, which "
                    f"the planned topology puts on {key} {value} but the node reports {key} "
                    f"{got}: the nodes are not the topology the plan used; refresh it "
                    "(`hpcscope topo --on slurm`) or correct --topology FILE"
                )


def observed_relation(ranks_meta: list[dict[str, Any]]) -> str:
    """Where ranks bound by the launcher (placement `default`) actually ran, in the class
    vocabulary, from what each rank read from inside: node, socket, numa, core, smt, or
    'unbound' when a rank may run on several cores (its core or socket is unknown)."""
    metas = sorted(ranks_meta, key=lambda m: int(m.get("rank", 0)))
    if not metas:
        return "unknown"
    if len({str(m.get("host")) for m in metas}) > 1:
        return "node"
    if any(m.get("core") is None or m.get("socket") is None for m in metas):
        return "unbound"
    if len({m["socket"] for m in metas}) > 1:
        return "socket"
    if len({m.get("numa") for m in metas}) > 1:
        return "numa"
    if len({(m["socket"], m["core"]) for m in metas}) > 1:
        return "core"
    cpus = {tuple(m.get("cpus") or ()) for m in metas}
    return "smt" if len(cpus) > 1 else "one CPU"
