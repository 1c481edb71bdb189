"""Placement classes on recorded topologies, launcher arguments (golden), binding verification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hpcscope.launch.launcher import LaunchSpec, launcher_args
from hpcscope.machine.topology import Topology
from hpcscope.plan.placement import (
    CLASSES,
    Placement,
    PlacementError,
    explicit_placement,
    max_ranks_check,
    plan_placements,
    relation_of,
    verify_binding,
)

FIXTURES = Path(__file__).parent / "fixtures" / "topo"


def load(name: str) -> Topology:
    return Topology.from_file(str(FIXTURES / name))


NODE_SKIP = "one node: use --on slurm with --nodes 2 or the lab"
NO_SMT = "no SMT: each core has 1 hardware thread"
ONE_NUMA = "one NUMA node per package"

# fixture: {class: chosen CPUs or the skip reason}, with one node available
EXPECTED: dict[str, dict[str, list[int] | str]] = {
    "this_vm.xml": {
        "smt": NO_SMT,
        "core": [0, 1],
        "numa": ONE_NUMA,
        "socket": "1 package",
        "node": NODE_SKIP,
    },
    "lcc3_2x6x2.xml": {
        "smt": [0, 12],
        "core": [0, 1],
        "numa": ONE_NUMA,
        "socket": [0, 6],
        "node": NODE_SKIP,
    },
    "lcc3_2x6x2_hwloc1.xml": {
        "smt": [0, 12],
        "core": [0, 1],
        "numa": ONE_NUMA,
        "socket": [0, 6],
        "node": NODE_SKIP,
    },
    "2x16_nosmt.xml": {
        "smt": NO_SMT,
        "core": [0, 1],
        "numa": ONE_NUMA,
        "socket": [0, 16],
        "node": NODE_SKIP,
    },
    "snc2_1x16x2.xml": {
        "smt": [0, 1],
        "core": [0, 2],
        "numa": [0, 16],
        "socket": "1 package",
        "node": NODE_SKIP,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_classes_offered_or_skipped(name: str) -> None:
    t = load(name)
    placements = plan_placements(t, list(CLASSES))
    assert [p.name for p in placements] == list(CLASSES)
    for p in placements:
        want = EXPECTED[name][p.name]
        if isinstance(want, str):
            assert p.skipped == want, p
            assert p.cpus == [] and want in p.description
        else:
            assert p.skipped is None, p
            assert p.cpus == want
            assert p.nodes == 1 and p.relation == p.name and p.description


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chosen_cpus_satisfy_the_relation(name: str) -> None:
    """Checked against the topology itself, not against the planner's own reasoning."""
    t = load(name)
    for p in plan_placements(t, ["smt", "core", "numa", "socket"]):
        if p.skipped:
            continue
        a, b = (t.pu(c) for c in p.cpus)
        assert a.os_index != b.os_index
        if p.name == "smt":
            assert a.core == b.core
        elif p.name == "core":
            assert a.core != b.core and a.package == b.package and a.numa == b.numa
            assert a.smt_index == b.smt_index == 0
            assert any({a.os_index, b.os_index} <= set(c.cpus) for c in t.last_level_caches())
        elif p.name == "numa":
            assert a.package == b.package and a.numa != b.numa
        elif p.name == "socket":
            assert a.package != b.package
        assert relation_of(t, p.cpus) == p.name


def test_node_class_with_two_nodes() -> None:
    (p,) = plan_placements(load("lcc3_2x6x2.xml"), ["node"], nodes_available=2)
    assert p.skipped is None
    assert (p.cpus, p.nodes, p.relation) == ([0, 1], 2, "node")


def test_unknown_class_names_the_valid_ones() -> None:
    with pytest.raises(
        ValueError, match="unknown placement class 'cache'.*smt, core, numa, socket, node"
    ):
        plan_placements(load("this_vm.xml"), ["core", "cache"])


def test_explicit_cpus() -> None:
    t = load("lcc3_2x6x2.xml")
    placements = plan_placements(t, [], explicit_cpus=[0, 7])
    assert len(placements) == 1
    p = placements[0]
    assert (p.name, p.cpus, p.nodes, p.relation, p.skipped) == (
        "cpus:0,7",
        [0, 7],
        1,
        "socket",
        None,
    )
    assert "corresponds to class 'socket'" in p.description
    assert explicit_placement(t, [0, 12]).relation == "smt"
    assert explicit_placement(t, [12, 1]).relation == "core"
    assert explicit_placement(t, [3]).relation == "single"
    assert explicit_placement(load("snc2_1x16x2.xml"), [2, 17]).relation == "numa"
    # explicit CPUs come after the classes
    assert [x.name for x in plan_placements(t, ["smt"], explicit_cpus=[1, 2])] == [
        "smt",
        "cpus:1,2",
    ]


def test_explicit_cpus_bad_input() -> None:
    t = load("this_vm.xml")
    with pytest.raises(
        ValueError, match=r"CPU 7 does not exist on this machine: valid CPUs are 0-1"
    ):
        explicit_placement(t, [0, 7])
    with pytest.raises(ValueError, match="CPU 1 given more than once"):
        explicit_placement(t, [1, 1])
    with pytest.raises(ValueError, match="empty"):
        explicit_placement(t, [])


def test_max_ranks_check() -> None:
    t = load("this_vm.xml")
    assert max_ranks_check(t, 2) is None
    assert max_ranks_check(t, 4, nodes=2) is None
    with pytest.raises(
        PlacementError, match="3 ranks but this node has 2 hardware threads.*--oversubscribe"
    ):
        max_ranks_check(t, 3)
    warning = max_ranks_check(t, 3, oversubscribe=True)
    assert warning is not None and "correctness only" in warning


# ----- launcher arguments (golden) --------------------------------------------------------


def _placement(name: str, cpus: list[int], nodes: int = 1) -> Placement:
    return Placement(name, cpus, nodes, description="", relation=name)


def test_openmpi_rankfile_golden(tmp_path: Path) -> None:
    spec = launcher_args("openmpi", _placement("smt", [0, 12]), ["lcc3-n01"])
    assert spec.args == ["--rankfile", "{rankfile}", "--mca", "rmaps_rank_file_physical", "1"]
    assert spec.files == {"rankfile": "rank 0=lcc3-n01 slot=0\nrank 1=lcc3-n01 slot=12\n"}
    args = spec.materialize(tmp_path / "run")
    assert args[1] == str(tmp_path / "run" / "rankfile")
    assert (tmp_path / "run" / "rankfile").read_text() == spec.files["rankfile"]


def test_openmpi_default_host_and_two_nodes() -> None:
    assert (
        launcher_args("openmpi", _placement("core", [1, 0])).files["rankfile"]
        == "rank 0=localhost slot=1\nrank 1=localhost slot=0\n"
    )
    spec = launcher_args("openmpi", _placement("node", [0, 0], nodes=2), ["n1", "n2"])
    assert spec.files["rankfile"] == "rank 0=n1 slot=0\nrank 1=n2 slot=0\n"


def test_mpich_golden() -> None:
    assert launcher_args("mpich", _placement("socket", [0, 6])) == LaunchSpec(
        ["-bind-to", "user:0,6"]
    )
    assert launcher_args("mpich", _placement("node", [0, 0], nodes=2), ["n1", "n2"]).args == [
        "-hosts",
        "n1,n2",
        "-ppn",
        "1",
        "-bind-to",
        "user:0",
    ]


def test_srun_golden() -> None:
    assert launcher_args("srun", _placement("smt", [0, 12])).args == [
        "--nodes=1",
        "--ntasks-per-node=2",
        "--cpu-bind=map_cpu:0,12",
    ]
    assert launcher_args("srun", _placement("node", [0, 0], nodes=2)).args == [
        "--nodes=2",
        "--ntasks-per-node=1",
        "--cpu-bind=map_cpu:0",
    ]


def test_launcher_args_errors() -> None:
    skipped = plan_placements(load("this_vm.xml"), ["smt"])[0]
    with pytest.raises(ValueError, match="skipped"):
        launcher_args("openmpi", skipped)
    with pytest.raises(
        ValueError, match="unknown launcher flavor 'intelmpi'.*openmpi, mpich, srun"
    ):
        launcher_args("intelmpi", _placement("core", [0, 1]))
    with pytest.raises(ValueError, match="spans 2 nodes but 1 host name"):
        launcher_args("mpich", _placement("node", [0, 0], nodes=2), ["n1"])
    with pytest.raises(ValueError, match="different CPUs on different nodes"):
        launcher_args("srun", _placement("node", [0, 1], nodes=2))


# ----- binding verification ---------------------------------------------------------------


def meta(
    rank: int, cpus: list[int], core: int, socket: int = 0, numa: int = 0, host: str = "vm"
) -> dict[str, Any]:
    return {"rank": rank, "host": host, "cpus": cpus, "core": core, "socket": socket, "numa": numa}


def test_verify_accepts_correct_bindings() -> None:
    vm = load("this_vm.xml")
    core = plan_placements(vm, ["core"])[0]
    verify_binding(core, [meta(1, [1], 1), meta(0, [0], 0)], vm)  # order of ranks does not matter

    lcc3 = load("lcc3_2x6x2.xml")
    smt, sock = plan_placements(lcc3, ["smt", "socket"])
    verify_binding(smt, [meta(0, [0], 0), meta(1, [12], 0)], lcc3)
    verify_binding(sock, [meta(0, [0], 0), meta(1, [6], 6, socket=1, numa=1)], lcc3)
    node = plan_placements(lcc3, ["node"], nodes_available=2)[0]
    verify_binding(node, [meta(0, [0], 0, host="n1"), meta(1, [1], 1, host="n2")], lcc3)
    snc = load("snc2_1x16x2.xml")
    numa = plan_placements(snc, ["numa"])[0]
    verify_binding(numa, [meta(0, [0], 0), meta(1, [16], 8, numa=1)], snc)


def test_verify_rejects_unbound_rank_with_message() -> None:
    vm = load("this_vm.xml")
    core = plan_placements(vm, ["core"])[0]
    with pytest.raises(PlacementError) as err:
        verify_binding(core, [meta(0, [0], 0), meta(1, [0, 1], 0)], vm)
    msg = str(err.value)
    assert msg.startswith(
        "placement 'core' asked rank 1 on CPU 1 but it ran on CPUs [0, 1] (unbound): "
        "the launcher ignored the binding"
    )
    assert "rmaps_rank_file_physical" in msg


def test_verify_rejects_rank_bound_elsewhere() -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    smt = plan_placements(lcc3, ["smt"])[0]
    with pytest.raises(
        PlacementError, match=r"asked rank 1 on CPU 12 but it ran on CPUs \[1\] \(bound elsewhere\)"
    ):
        verify_binding(smt, [meta(0, [0], 0), meta(1, [1], 1)], lcc3)


def test_verify_rejects_wrong_relation_and_counts() -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    sock = plan_placements(lcc3, ["socket"])[0]
    # CPUs as asked, but the ranks report one socket: the plan's topology is not where they ran
    with pytest.raises(PlacementError, match="needs different packages but they ran on one socket"):
        verify_binding(sock, [meta(0, [0], 0), meta(1, [6], 6)], lcc3)
    with pytest.raises(PlacementError, match="ran on hosts"):
        verify_binding(sock, [meta(0, [0], 0, host="a"), meta(1, [6], 6, socket=1, host="b")], lcc3)
    node = plan_placements(lcc3, ["node"], nodes_available=2)[0]
    with pytest.raises(
        PlacementError, match="needs different nodes but the ranks ran on 1 distinct host"
    ):
        verify_binding(node, [meta(0, [0], 0), meta(1, [1], 1)], lcc3)
    with pytest.raises(PlacementError, match="plans 2 ranks but 1 reported"):
        verify_binding(sock, [meta(0, [0], 0)], lcc3)
    smt = plan_placements(lcc3, ["smt"])[0]
    # Linux core ids repeat per package: core 0 of socket 1 is not core 0 of socket 0
    with pytest.raises(
        PlacementError, match="needs hardware threads of one core but they ran on different cores"
    ):
        verify_binding(smt, [meta(0, [0], 0), meta(1, [12], 0, socket=1)], lcc3)
    with pytest.raises(PlacementError, match="did not report its 'core'"):
        verify_binding(
            smt,
            [
                {"rank": 0, "host": "vm", "cpus": [0], "socket": 0, "numa": 0},
                {"rank": 1, "host": "vm", "cpus": [12], "socket": 0, "numa": 0},
            ],
            lcc3,
        )


def test_verify_explicit_placement_uses_its_relation() -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    p = explicit_placement(lcc3, [0, 7])
    verify_binding(p, [meta(0, [0], 0), meta(1, [7], 7, socket=1, numa=1)], lcc3)
    with pytest.raises(PlacementError, match="placement 'cpus:0,7' needs different packages"):
        verify_binding(p, [meta(0, [0], 0), meta(1, [7], 7)], lcc3)
