"""osu_multi_lat in the p2p suite: N pairs of ranks ping-ponging at once (`--tests
multi_lat --pairs N`), placed by the planner's classes.

Rank r < N pairs with rank r + N (OSU's layout), so a placement is N CPUs for the first
ranks and N for their partners:
  core     all 2N ranks on distinct cores of one package (N pairs inside a socket);
  socket   ranks 0..N-1 on package 0, their partners on package 1 (N pairs across sockets);
  node     ranks 0..N-1 on one node, their partners on another (N pairs across nodes);
  default  binding left to the launcher, as for the two-rank tests.
smt and numa have no pair layout here: skipped with that reason. A class the machine
cannot offer is skipped with the planner's own reason (plan/placement.py) or, where the
two-rank class exists but N pairs do not fit, with the cores it has. One launch of 2N
ranks per placement, tagged `pairs` so that --precision's added launches keep it apart
from the two-rank launches of the same placement.
"""

from __future__ import annotations

from hpcscope.plan import placement as placement_mod
from hpcscope.plan.placement import Placement

MULTI = "multi_lat"
DEFAULT_PAIRS = 2


def parse_pairs(value) -> int:
    """--pairs: N in 1..64 (ValueError naming the value otherwise)."""
    try:
        pairs = int(value) if value not in (None, "") else DEFAULT_PAIRS
    except (TypeError, ValueError):
        pairs = 0
    if not 1 <= pairs <= 64:
        raise ValueError(f"--pairs '{value}': give the number of pairs, 1..64 (e.g. --pairs 2)")
    return pairs


def class_plans(topo, classes: list[str], nodes_available: int, unsupported: str):
    """(class, its two-rank plan, why it is skipped or None) per requested class, for the
    launches of many ranks placed by class (multi_lat here, the fan tests in p2p_fan):
    they lay out core, socket, node and the launcher's default; smt and numa are skipped
    with `unsupported`, and a class this machine cannot offer with the planner's reason."""
    planned = {
        p.name: p for p in placement_mod.plan_placements(topo, classes, None, nodes_available)
    }
    for cls in classes:
        two = planned[cls]
        if cls == placement_mod.DEFAULT:
            yield cls, two, None
        elif cls not in ("core", "socket", "node"):
            yield cls, two, unsupported
        else:
            yield cls, two, two.skipped


def package_cores(topo) -> list[list[int]]:
    """The first hardware thread of every core, per package."""
    return [[c.pus[0] for c in topo.cores if c.package == p.index] for p in topo.packages]


def placements(topo, classes: list[str], pairs: int, nodes_available: int) -> list[Placement]:
    """One Placement of 2 x pairs ranks per requested class, or the class skipped with why."""
    per_package = package_cores(topo)
    out = []
    unsupported = "multi_lat places its pairs inside a socket (core), across sockets (socket) or across nodes (node)"  # fmt: skip
    for cls, two, why in class_plans(topo, classes, nodes_available, unsupported):
        if why:
            out.append(_skip(cls, why, two.nodes))
        elif cls == placement_mod.DEFAULT:
            out.append(two)
        elif cls == "core":
            best = max(per_package, key=len)
            if len(best) < 2 * pairs:
                out.append(_skip(cls, f"{pairs} pairs inside a socket need {2 * pairs} cores "
                                      f"in one package; the largest has {len(best)}"))  # fmt: skip
            else:
                out.append(_pinned(cls, best[: 2 * pairs], 1, pairs, "inside one package"))
        elif cls == "socket":
            low = min(len(cpus) for cpus in per_package[:2])
            if low < pairs:
                out.append(_skip(cls, f"{pairs} pairs across sockets need {pairs} cores in "
                                      f"each of two packages; one has {low}"))  # fmt: skip
            else:
                cpus = per_package[0][:pairs] + per_package[1][:pairs]
                out.append(_pinned(cls, cpus, 1, pairs, "first ranks on package 0, partners "
                                                        "on package 1"))  # fmt: skip
        else:  # node: N ranks per node, the partners' node second (block distribution)
            cores = [c.pus[0] for c in topo.cores]
            if len(cores) < pairs:
                out.append(_skip(cls, f"{pairs} pairs across nodes need {pairs} cores per "
                                      f"node; a node has {len(cores)}"))  # fmt: skip
            else:
                # a second node's partners on other cores where there are: the lab and
                # test clusters run several "nodes" on one host (as _plan_node does)
                cpus = cores[:pairs] + (
                    cores[pairs : 2 * pairs] if len(cores) >= 2 * pairs else cores[:pairs]
                )
                out.append(_pinned(cls, cpus, 2, pairs, "first ranks on one node, partners on "
                                                        "another"))  # fmt: skip
    return out


def _pinned(cls: str, cpus: list[int], nodes: int, pairs: int, where: str) -> Placement:
    return Placement(
        cls,
        cpus,
        nodes,
        f"{pairs} pairs ({where}): rank r on CPU {cpus[0]}.. pairs with rank r + {pairs}; "
        f"CPUs {', '.join(map(str, cpus))}",
        relation=cls,
    )


def _skip(cls: str, why: str, nodes: int = 1) -> Placement:
    return Placement(cls, [], nodes, f"{cls}: skipped ({why})", skipped=why, relation=cls)
