"""Signals at the worst moments, through the real CLI and real MPI: whatever finished stays
in the store and the run says what happened to it (issue 17)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from conftest import requires_mpich, requires_openmpi
from test_run_p2p import _alive, _p2p_pids, _samples, _wait_for_samples


def _last_run(cli) -> dict:
    return json.loads(cli("list", "--format", "json").stdout)[-1]


@requires_openmpi
def test_sigkill_of_the_cli_leaves_an_abandoned_run_with_its_results(cli):
    proc = cli.start("run", "p2p", "--mpi", "openmpi", "--repeat", "2", "--sizes", "0:4M")
    _wait_for_samples(cli, 5)
    ranks = _p2p_pids(proc.pid)
    proc.send_signal(signal.SIGKILL)  # no handler runs, nothing is marked
    proc.wait(timeout=30)
    assert _last_run(cli)["status"] == "abandoned"
    assert len(_samples(cli)) >= 5
    assert "abandoned" in cli("show", "last").stdout
    for pid in ranks:  # mpirun lost its parent; do not leave ranks to the next test
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@requires_mpich
def test_sigkill_of_one_mpich_rank_fails_the_run_and_keeps_what_finished(cli):
    proc = cli.start("run", "p2p", "--mpi", "mpich", "--repeat", "1", "--sizes", "0:4M")
    _wait_for_samples(cli, 5)
    pids = _p2p_pids(proc.pid)
    assert pids, "no p2p rank found to kill"
    os.kill(max(pids), signal.SIGKILL)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, err
    assert _last_run(cli)["status"] == "failed"
    assert len(_samples(cli)) >= 5


def test_ctrl_c_while_planning_stores_nothing(cli):
    proc = cli.start("run", "node", "--cpu", "--threads", "1")
    time.sleep(1.0)  # importing, discovering the MPI, building: nothing measured yet
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert proc.returncode == 1 and "Traceback" not in err, err
    runs = json.loads(cli("list", "--format", "json").stdout or "[]")
    assert all(r["status"] != "running" for r in runs)


def test_ctrl_c_during_the_disk_test_removes_its_files(cli, tmp_path):
    disk_dir = tmp_path / "disk"
    disk_dir.mkdir()
    proc = cli.start("run", "node", "--disk", "--quick", "--disk-dir", str(disk_dir))
    deadline = time.time() + 120
    while time.time() < deadline and not any(disk_dir.rglob("hpcscope-*")):
        time.sleep(0.1)
    assert any(disk_dir.rglob("hpcscope-*")), "the disk test never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted" in err, err
    assert _last_run(cli)["status"] == "interrupted"
    time.sleep(0.5)
    assert list(disk_dir.rglob("hpcscope-*")) == []
