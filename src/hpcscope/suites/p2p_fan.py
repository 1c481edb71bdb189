"""osu_bw_fan_in and osu_bw_fan_out in the p2p suite: congestion into (out of) one group
of ranks (`--tests bw_fan_in,bw_fan_out --fan GROUPS:PPN`), placed by the planner's classes.

The program (bench/mpi/p2p.c) makes GROUPS groups of PPN consecutive ranks; group 0 is
the root, and local rank l of every other group streams to (from) the root's rank l.
OSU groups its ranks by MPI_Get_processor_name and needs two nodes or more; here the
placement says what a group is:
  node     one group per node, PPN ranks each (OSU's case; ranks in blocks per node);
           GROUPS defaults to the nodes of the allocation;
  socket   one group per package of this node (GROUPS defaults to the packages);
  core     all groups inside one package, PPN cores each (GROUPS defaults to as many as
           its cores hold): many senders into one receiver over shared memory;
  default  GROUPS x PPN ranks (GROUPS defaults to 2) bound by the launcher.
smt and numa have no group layout here: skipped with that reason. Each class that
cannot hold the groups is skipped with what it has. One launch of GROUPS x PPN ranks per
placement, tagged `fan` (GROUPSxPPN) so that its cells and --precision's added launches
stay apart from the two-rank launches of the same placement.
"""

from __future__ import annotations

from hpcscope.plan import placement as placement_mod
from hpcscope.plan.placement import Placement
from hpcscope.suites import p2p_pairs
from hpcscope.suites.base import Note

TESTS = ("bw_fan_in", "bw_fan_out")
MAX_GROUPS, MAX_PPN = 1024, 1024  # p2p.c's --fan-ppn limit


def parse_fan(value) -> tuple[int | None, int]:
    """--fan GROUPS[:PPN] or :PPN -> (GROUPS or None for each class's own, PPN default 1);
    ValueError naming the value otherwise."""
    text = str(value or "").strip()
    if not text:
        return None, 1
    head, _, tail = text.partition(":")
    try:
        groups = int(head) if head else None
        ppn = int(tail) if tail else 1
    except ValueError:
        groups, ppn = 0, 0
    if (groups is not None and not 2 <= groups <= MAX_GROUPS) or not 1 <= ppn <= MAX_PPN:
        raise ValueError(
            f"--fan '{value}': give GROUPS:PPN, at least 2 groups (the root and one sender) "
            "of 1 or more ranks each, e.g. --fan 3:1 (two groups into one), or :2 for each "
            "placement's own number of groups"
        )
    return groups, ppn


def placements(
    topo, classes: list[str], groups: int | None, ppn: int, nodes_available: int
) -> list[tuple[Placement, int]]:
    """(Placement, its number of groups) per requested class, the ranks in groups of ppn,
    or the class skipped with why (0 groups)."""
    per_package = p2p_pairs.package_cores(topo)
    cores = [c.pus[0] for c in topo.cores]
    out = []
    unsupported = "the fan tests place their groups on nodes (node), packages (socket) or cores of one package (core)"  # fmt: skip
    for cls, two, why in p2p_pairs.class_plans(topo, classes, nodes_available, unsupported):
        if why:
            out.append(_no(cls, why, two.nodes))
        elif cls == placement_mod.DEFAULT:
            out.append((_unbound(cls, groups or 2, ppn, two.nodes), groups or 2))
        elif cls == "core":
            best = max(per_package, key=len)
            want = groups or len(best) // ppn
            if want < 2 or len(best) < want * ppn:
                need = groups or 2  # the groups asked for, or the fewest a fan has
                out.append(_no(cls, f"{need} groups of {ppn} inside one package need "
                                      f"{need * ppn} cores; the largest package has "
                                      f"{len(best)}"))  # fmt: skip
            else:
                out.append(_pinned(cls, best[: want * ppn], 1, want, ppn, "cores of one package"))
        elif cls == "socket":
            want = groups or len(per_package)
            fit = [cpus for cpus in per_package if len(cpus) >= ppn]
            if len(fit) < want:
                out.append(_no(cls, f"{want} groups of {ppn} across packages need {want} "
                                      f"packages of {ppn} cores; this node has {len(fit)}"))  # fmt: skip
            else:
                cpus = [cpu for package in fit[:want] for cpu in package[:ppn]]
                out.append(_pinned(cls, cpus, 1, want, ppn, "one group per package"))
        else:  # node: ppn ranks per node, block distribution (rank r on node r // ppn)
            want = groups or nodes_available
            if want > nodes_available or want < 2:
                out.append(_no(cls, f"{want} groups on nodes need {want} nodes; the "
                                      f"allocation has {nodes_available} (give --nodes, or "
                                      f"--fan {nodes_available}:{ppn})", want))  # fmt: skip
            elif len(cores) < ppn:
                out.append(_no(cls, f"{ppn} ranks per node need {ppn} cores; a node has "
                                      f"{len(cores)}"))  # fmt: skip
            else:
                # the lab and test clusters run several "nodes" on one host: each node's
                # ranks on other cores where there are (as p2p_pairs' node class does)
                spread = len(cores) >= want * ppn
                cpus = [
                    cores[(g * ppn if spread else 0) + i] for g in range(want) for i in range(ppn)
                ]
                out.append(_pinned(cls, cpus, want, want, ppn, "one group per node"))
    return out


def _pinned(
    cls: str, cpus: list[int], nodes: int, groups: int, ppn: int, where: str
) -> tuple[Placement, int]:
    text = (
        f"{groups} groups of {ppn} ({where}), group 0 the root: rank r in group r // {ppn}; "
        f"CPUs {', '.join(map(str, cpus))}"
    )
    return Placement(cls, cpus, nodes, text, relation=cls), groups


def _unbound(cls: str, groups: int, ppn: int, nodes: int) -> Placement:
    text = f"{groups} groups of {ppn}, bound by the launcher"
    return Placement(cls, [], nodes, text, relation=cls)


def _no(cls: str, why: str, nodes: int = 1) -> tuple[Placement, int]:
    return Placement(cls, [], nodes, f"{cls}: skipped ({why})", skipped=why, relation=cls), 0


def launches(ctx, classes: list[str], tests: list[str], fan: str | None, osu_programs: dict):
    """The fan tests' launches of a p2p plan: [(placement, ranks, --tests and its options,
    tag)], OSU's own fan programs beside them at the node placement [(test, placement,
    ranks, tag)] (those `osu_programs` holds: --osu-dir), and the skipped notes. --on sim
    places a p2p launch's two ranks by its placement, so there only 2 ranks run."""
    groups, ppn = parse_fan(fan)
    sim = any(m.flavor == "smpi" for m in ctx.mpis)
    runs, osu, notes = [], [], []
    for place, count in placements(ctx.topology, classes, groups, ppn, ctx.nodes_available):
        ranks = count * ppn
        why = place.skipped
        if not why and sim and ranks > 2:
            why = (
                f"{ranks} ranks, and --on sim places a p2p launch's two ranks by its "
                "placement; --fan 2:1 runs there"
            )
        if why:
            text = f"{','.join(tests)} placement {place.name}: {why}"
            notes.append(Note("skipped", text, {"placement": place.name}))
            continue
        tag = {"fan": f"{count}x{ppn}"}
        runs.append((place, ranks, [",".join(tests), "--fan-ppn", str(ppn)], tag))
        if place.nodes > 1:  # OSU's fan programs group by host name: one group per node
            osu += [(t, place, ranks, tag) for t in tests if t in osu_programs]
    return runs, osu, notes
