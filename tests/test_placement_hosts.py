"""The placement check of backends whose ranks have no CPUs of a planned node (issue 18,
part 2): sim (a rank's place is its simulated host) and lab (its namespace's host name and,
with per-process lanes, the lane its wrapper gave it). Unit level: the meta records are
written here, so each deliberately wrong mapping is exactly the one named. The live runs
are in test_sim_backend.py and test_lab.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hpcscope.launch import placement_check
from hpcscope.launch.lab import expected_places
from hpcscope.launch.sim import NOT_CHECKED
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job
from hpcscope.results import placement_proof
from hpcscope.results.records import RecordError, parse_line

SMPI = MpiSpec("smpi", "smpicc", "smpirun", "3.32")
LANES = ["lane1", "lane2"]


def _job(ranks: int, nodes: int, cpus: list[int] | None = None, **tags: Any) -> Job:
    return Job("coll", "smpi/coll/r1", ["coll"], SMPI, ranks, cpus or [], nodes, tags=tags)


def _meta(hosts: list[str], lanes: list[str] | None = None) -> dict[str, Any]:
    ranks = []
    for r, host in enumerate(hosts):
        rank: dict[str, Any] = {"rank": r, "host": host, "cpus": [], "core": None}
        rank.update(socket=None, numa=None)
        if lanes:
            rank["lane"] = lanes[r]
        ranks.append(rank)
    return {"mpi": {"library": "SMPI"}, "ranks": ranks}


SIM_HOSTS = ["n0-s0", "n0-s1", "n1-s0", "n1-s1"]  # two nodes of two per-socket hosts


def _sim(hosts: list[str] = SIM_HOSTS) -> placement_check.Expected:
    return placement_check.Expected(list(hosts), NOT_CHECKED, node_sep="-")


def test_sim_ranks_on_their_planned_hosts_are_verified_and_cpus_said_unchecked() -> None:
    decomposition = {"nodes": 2, "ppn": 2, "node_override": "LANECOLL_NODE_NAME_SEP=-"}
    verdict = placement_check.check(
        _job(4, 2, rank_layout="unpinned"), _meta(SIM_HOSTS), None, expected=_sim(),
        decomposition=decomposition,
    )  # fmt: skip
    assert verdict is not None and verdict.verdict == "verified"
    assert verdict.checked == "host per rank, lanecoll's nodes"
    assert verdict.not_checked.startswith("CPU binding: simulated ranks")
    assert "not checked: CPU binding" in verdict.text("smpi/coll/r1")


def test_sim_rank_on_another_host_is_wrong_naming_rank_and_hosts() -> None:
    swapped = ["n0-s0", "n1-s0", "n0-s1", "n1-s1"]
    verdict = placement_check.check(_job(4, 2), _meta(swapped), None, expected=_sim())
    assert verdict is not None and verdict.verdict == "wrong" and not verdict.ok
    assert "rank 1 ran on host n1-s0 but the plan put it on n0-s1" in verdict.reason
    fewer = placement_check.check(_job(4, 2), _meta(SIM_HOSTS[:2]), None, expected=_sim())
    assert fewer is not None and "2 rank(s) reported" in fewer.reason


def test_lanecoll_decomposition_other_than_the_planned_nodes_is_wrong() -> None:
    # lanecoll grouping by the whole host name (separator not honoured): 4 nodes x 1
    seen = {"nodes": 4, "ppn": 1, "node_override": ""}
    verdict = placement_check.check(
        _job(4, 2), _meta(SIM_HOSTS), None, expected=_sim(), decomposition=seen
    )
    assert verdict is not None and verdict.verdict == "wrong"
    assert "lanecoll saw 4 node(s) x 1 process(es) but the plan has 2 x 2" in verdict.reason
    # emulated nodes (LANECOLL_NODE_SIZE) are lanecoll's own choice: not compared
    seen["node_override"] = "LANECOLL_NODE_SIZE=1"
    emulated = placement_check.check(
        _job(4, 2), _meta(SIM_HOSTS), None, expected=_sim(), decomposition=seen
    )
    assert emulated is not None and emulated.verdict == "verified"


def test_lab_plans_blocks_of_ranks_per_node_and_per_process_lanes() -> None:
    hosts = ["hpcs-n1", "hpcs-n2"]
    expected = expected_places(_job(4, 2), hosts, LANES, "per-process")
    assert expected.hosts == ["hpcs-n1", "hpcs-n1", "hpcs-n2", "hpcs-n2"]
    assert expected.lanes == ["lane1", "lane2", "lane1", "lane2"]
    assert expected.not_checked.startswith("CPU binding: the lab starts unpinned ranks")
    striped = expected_places(_job(2, 2, cpus=[0, 1]), hosts, LANES, "striped")
    assert striped.lanes is None and striped.not_checked.startswith("lane per rank: striped")


def test_pinned_lab_job_is_checked_by_host_and_cpus_and_keeps_its_caveat() -> None:
    """A p2p `node` placement on the lab with striped lanes: hosts and CPUs are checked
    against this machine's topology, the lane per rank is still said unchecked."""
    from hpcscope.machine.topology import Topology

    topo = Topology.from_file(str(Path(__file__).parent / "fixtures" / "topo" / "this_vm.xml"))
    job = _job(2, 2, cpus=[0, 0], placement="node")
    expected = expected_places(job, ["hpcs-n1", "hpcs-n2"], LANES, "striped")
    meta = _meta(["hpcs-n1", "hpcs-n2"])
    for rank in meta["ranks"]:
        rank.update(cpus=[0], core=0, socket=0, numa=0)
    verdict = placement_check.check(job, meta, topo, expected=expected)
    assert verdict is not None and verdict.verdict == "verified", verdict
    assert verdict.checked == "host per rank, binding"
    assert verdict.not_checked.startswith("lane per rank: striped binding")
    meta["ranks"][1]["cpus"] = [1]  # rank 1 bound elsewhere than asked
    verdict = placement_check.check(job, meta, topo, expected=expected)
    assert verdict is not None and verdict.verdict == "wrong"
    assert "asked rank 1 on CPU 0" in verdict.reason


def test_lab_rank_with_another_lane_or_node_is_wrong() -> None:
    hosts = ["hpcs-n1", "hpcs-n2"]
    job = _job(4, 2)
    expected = expected_places(job, hosts, LANES, "per-process")
    right = _meta(expected.hosts, ["lane1", "lane2", "lane1", "lane2"])
    verdict = placement_check.check(job, right, None, expected=expected)
    assert verdict is not None and verdict.verdict == "verified"
    assert verdict.checked == "host per rank, lane per rank"
    wrong_lane = _meta(expected.hosts, ["lane2", "lane1", "lane1", "lane2"])
    verdict = placement_check.check(job, wrong_lane, None, expected=expected)
    assert verdict is not None and verdict.verdict == "wrong"
    assert "rank 0 on hpcs-n1 was given lane lane2 but the plan gives it lane1" in verdict.reason
    no_lane = _meta(expected.hosts)  # the wrapper did not run at all
    verdict = placement_check.check(job, no_lane, None, expected=expected)
    assert verdict is not None and "given lane (none)" in verdict.reason
    one_node = _meta(["hpcs-n1"] * 4, ["lane1", "lane2", "lane1", "lane2"])
    verdict = placement_check.check(job, one_node, None, expected=expected)
    assert verdict is not None and "rank 2 ran on host hpcs-n1" in verdict.reason


def test_proof_line_says_what_was_and_was_not_checked() -> None:
    job = _job(4, 2, rank_layout="unpinned")
    verdict = placement_check.check(job, _meta(SIM_HOSTS), None, expected=_sim())
    assert verdict is not None
    notes = [{"kind": "placement", "data": verdict.data(1, job.name)}]
    launch = {"name": job.name, "tags": {"mpi": "smpi"}, "meta": _meta(SIM_HOSTS)}
    (line,) = placement_proof.proof_lines([launch], notes)
    text = line.text()
    assert "verified 1/1; checked: host per rank; not checked: CPU binding" in text
    assert "rank 0 on n0-s0, rank 1 on n0-s1" in text  # simulated ranks have no CPUs
    assert placement_proof.csv_verdict(verdict.data(1, job.name)).startswith(
        "verified (host per rank; not checked: CPU binding"
    )


def test_binding_record_lane_is_a_name_when_present() -> None:
    base = '{"type":"meta","schema":"hpcscope.bench/1","benchmark":"p2p","version":"0.1.0",'
    base += '"mpi":null,"timer":{"resolution_ns":1,"overhead_ns":1},"options":{},"ranks":'
    rank = '{"rank":0,"host":"hpcs-n1","cpus":[0],"core":0,"socket":0,"numa":0'
    assert parse_line(base + "[" + rank + ',"lane":"lane2"}]}', "t")["ranks"][0]["lane"] == "lane2"
    with pytest.raises(RecordError, match="'lane' .* must be a non-empty string"):
        parse_line(base + "[" + rank + ',"lane":2}]}', "t")
