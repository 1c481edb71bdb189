"""The lab made bad on purpose (issue 45 part 4) and the node suite on every lab node at
once (part 3): `lab up --degrade`, what status and each run record, `lab down` leaving
nothing, and `run node --on lab` naming exactly the degraded node, nothing on a healthy
lab. Needs root and network namespaces (skipped otherwise, like tests/test_lab.py);
3 nodes, --cpu --quick: about 15 s a run on 2 shared cores."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_lab import _why_not

from hpcscope.analysis import node_outliers
from hpcscope.launch import lab_degrade, lab_net
from hpcscope.results.store import Store

pytestmark = [pytest.mark.lab, pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))]

DEGRADED = lab_net.LabSpec(3, 1, "200mbit", degrade=["n3:cpu=25%", "n2:lane1=50mbit"])


def _qdisc(ns: str, dev: str) -> str:
    return subprocess.run(
        ["tc", "-n", ns, "qdisc", "show", "dev", dev], capture_output=True, text=True
    ).stdout


def _node_run(cli) -> tuple[Store, int]:
    done = cli("run", "node", "--on", "lab", "--cpu", "--quick", timeout=300)
    assert done.returncode == 0, done.stderr
    store = Store(cli.db)
    return store, 1  # a fresh store per test (cli fixture)


def test_bad_degrade_values_are_one_line_and_exit_2(cli):
    for bad, words in (
        ("n9:cpu=50%", "node n9 is not one of n1..n3"),
        ("n2:lane3=50mbit", "lane3 is not one of lane1..lane1"),
        ("n2:cpu=150%", "above 0 and below 100 %"),
        ("n2:disk=1", "write nK:laneL=RATE"),
        ("n2:lane1=fast", "not a rate tc understands"),
    ):
        done = cli("lab", "up", "--nodes", "3", "--lanes", "1", "--degrade", bad)
        assert done.returncode == 2, (bad, done.stderr)
        assert words in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr


def test_degraded_lab_names_the_slow_node_and_down_removes_everything(cli):
    state, built = lab_net.up(DEGRADED)
    try:
        assert built
        # the link: both ends of node 2's cable at 50 Mbit/s, the others at the lab's rate
        assert "rate 50Mbit" in _qdisc("hpcs-fabric", "n2l1")
        assert "rate 50Mbit" in _qdisc("hpcs-n2", "lane1")
        assert "rate 200Mbit" in _qdisc("hpcs-fabric", "n1l1")
        # the CPU: a cgroup of its own, weight and quota at 25 %
        folder = Path(state.cgroups["hpcs-n3"])
        version, _ = lab_degrade.controller()
        if version == "v1":
            assert (folder / "cpu.shares").read_text().strip() == "256"
            quota = int((folder / "cpu.cfs_quota_us").read_text())
            assert quota == lab_degrade.quota_us(25, 3)
        status = lab_net.status_text(lab_net.current())
        assert "degraded on purpose: hpcs-n3 CPU at 25 % of another node's" in status
        assert "degraded on purpose: hpcs-n2 lane1 at 50mbit" in status
        assert json.loads(lab_net.state_path().read_text())["spec"]["degrade"] == DEGRADED.degrade

        store, run_id = _node_run(cli)
        notes = [n for n in store.run(run_id)["notes"] if n["kind"] == "lab_degrade"]
        assert {n["data"]["node"] for n in notes} == {"hpcs-n2", "hpcs-n3"}
        launches = store.launches(run_id)
        assert sorted(x["name"] for x in launches) == [
            f"node/cpu/every-node/hpcs-n{i}" for i in (1, 2, 3)
        ]
        assert all(x["status"] == "COMPLETED" for x in launches)
        found = node_outliers.analyse(store.samples(run_id))
        assert found is not None and found.flagged_nodes == ["hpcs-n3"], found.to_dict()
        shown = cli("show", str(run_id))
        assert "node outliers: hpcs-n3" in shown.stdout
        csv = (cli.folder / "hpcscope-out" / f"run-{run_id}" / "node_outliers.csv").read_text()
        assert csv.splitlines()[0] == "rate,unit,hpcs-n1,hpcs-n2,hpcs-n3" and " !" in csv
        report = cli("report", str(run_id), "-o", str(cli.folder / "rep"))
        assert report.returncode == 0, report.stderr
        page = (cli.folder / "rep" / "index.html").read_text()
        assert "Nodes side by side" in page and "hpcs-n3: clock (1 thread)" in page
    finally:
        lab_net.down()
    assert not Path(state.cgroups["hpcs-n3"]).exists()
    assert "hpcscope-lab" not in subprocess.run(["findmnt"], capture_output=True, text=True).stdout


def test_healthy_lab_flags_no_node(cli):
    lab_net.up(lab_net.LabSpec(3, 1, "200mbit"))
    try:
        store, run_id = _node_run(cli)
        found = node_outliers.analyse(store.samples(run_id))
        assert found is not None and found.nodes == ["hpcs-n1", "hpcs-n2", "hpcs-n3"]
        assert found.flags == [], found.to_dict()
        history = cli("history", "--suite", "node")
        assert history.returncode == 0, history.stderr
        assert all(f"hpcs-n{i}" in history.stdout for i in (1, 2, 3))  # a series per node
    finally:
        lab_net.down()
