"""Coll and lanes ranks pinned as the paper did: rank i of a node on socket i mod S
(issue 18, part 4). Planning only: the CPUs come from the topology given."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcscope.launch import launcher
from hpcscope.launch.backends import backend_for
from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.topology import Topology
from hpcscope.plan.placement import rank_layout_cpus, verify_binding
from hpcscope.suites import coll
from hpcscope.suites.base import PlanContext

FIXTURES = Path(__file__).parent / "fixtures" / "topo"
MPI = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")


def load(name: str) -> Topology:
    return Topology.from_file(str(FIXTURES / name))


def context(topo: Topology, nodes: int = 1) -> PlanContext:
    return PlanContext(
        topology=topo, mpis=[MPI], binary=lambda n, m: Path(n), nodes_available=nodes
    )


def test_alternate_puts_rank_i_on_socket_i_mod_s() -> None:
    lcc3 = load("lcc3_2x6x2.xml")  # socket 0: cores on CPUs 0-5, socket 1: CPUs 6-11
    cpus = rank_layout_cpus(lcc3, 8, "alternate")
    assert cpus == [0, 6, 1, 7, 2, 8, 3, 9]
    assert [lcc3.pu(c).package for c in cpus] == [i % 2 for i in range(8)]
    assert rank_layout_cpus(lcc3, 8, "block") == [0, 1, 2, 3, 4, 5, 6, 7]
    assert rank_layout_cpus(lcc3, 13, "alternate") is None  # more ranks than cores
    assert rank_layout_cpus(lcc3, 4, "default") is None
    one = load("this_vm.xml")  # one socket: alternate is block
    assert rank_layout_cpus(one, 2, "alternate") == rank_layout_cpus(one, 2, "block") == [0, 1]


def test_coll_jobs_carry_the_layout_in_cpus_and_tags() -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    where = coll.layout(context(lcc3, nodes=2), {"ranks": 8}, "coll")
    job = where.job("coll", "coll", ["coll"], MPI, 1, True)
    assert job.tags["rank_layout"] == "alternate" and job.nodes == 2
    assert job.cpus == [0, 6, 1, 7] * 2 and not job.launcher_binding
    assert any("socket i mod 2" in n.text for n in where.notes)
    # the from-inside check accepts ranks that ran there and refuses a block layout
    metas = [
        {"rank": r, "host": f"n{r // 4 + 1}", "cpus": [c], "core": c, "socket": r % 2, "numa": 0}
        for r, c in enumerate(job.cpus)
    ]
    verify_binding(launcher.job_placement(job), metas, lcc3)
    metas[1]["cpus"] = [1]
    with pytest.raises(Exception, match="asked rank 1 on CPU 6 but it ran on CPUs \\[1\\]"):
        verify_binding(launcher.job_placement(job), metas, lcc3)
    block = coll.layout(context(lcc3, nodes=2), {"ranks": 8, "rank_layout": "block"}, "coll")
    assert block.cpus == [0, 1, 2, 3] * 2 and block.tags["rank_layout"] == "block"


def test_default_layout_leaves_binding_to_the_launcher(tmp_path: Path) -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    where = coll.layout(context(lcc3), {"ranks": 4, "rank_layout": "default"}, "coll")
    job = where.job("coll", "coll", ["coll"], MPI, 1, True)
    assert job.cpus is None and job.launcher_binding and job.tags["rank_layout"] == "default"
    argv = launcher.mpirun_argv(job, tmp_path)
    assert "--bind-to" not in argv and "--rankfile" not in argv
    assert "--cpu-bind" not in " ".join(launcher.slurm_argv(job, "srun"))


def test_ranks_that_cannot_be_pinned_are_tagged_unpinned() -> None:
    vm = load("this_vm.xml")  # 2 cores
    where = coll.layout(context(vm), {"ranks": 4}, "coll")  # oversubscribed
    assert where.cpus is None and where.tags["rank_layout"] == "unpinned"
    assert any("ranks not pinned" in n.text for n in where.notes)
    lab = backend_for("lab").plan_options("coll", {}, {"ranks": 2})[1]
    assert coll.layout(context(vm), lab, "coll").tags["rank_layout"] == "unpinned"


def test_bad_rank_layouts_are_refused_with_the_choices() -> None:
    lcc3 = load("lcc3_2x6x2.xml")
    with pytest.raises(ValueError, match="--rank-layout 'diagonal' is not a rank layout: choose"):
        coll.layout(context(lcc3), {"rank_layout": "diagonal"}, "coll")
    with pytest.raises(ValueError, match="--on lab does not pin ranks"):
        backend_for("lab").plan_options("lanes", {}, {"rank_layout": "block"})


def test_cli_refuses_an_unknown_rank_layout_before_building(cli) -> None:
    done = cli("run", "lanes", "--rank-layout", "diagonal", "--dry-run")
    assert done.returncode == 2
    assert "--rank-layout 'diagonal' is not a rank layout: choose alternate, block, default" in (
        " ".join(done.stderr.split())
    )
    assert "building" not in done.stderr
