"""The local backend runs plain processes too (node benchmarks, reference tools) and
stores their records as they arrive; poll/collect read the outcome back."""

from __future__ import annotations

import json
import sys

from hpcscope.launch.local import LocalBackend
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "toy",
    "version": "1",
    "mpi": None,
    "ranks": [],
    "timer": {"resolution_ns": 1, "overhead_ns": 1},
    "options": {},
}
SAMPLE = {
    "type": "sample",
    "metric": "latency",
    "unit": "us",
    "params": {"bytes": 8},
    "values": [1.5, 1.6],
    "warmups": 0,
}


def _job(name: str, code: str) -> Job:
    return Job(
        suite="toy",
        name=name,
        program=[sys.executable, "-c", code],
        tags={"repeat": 1},
        timeout_s=30,
    )


def test_submit_poll_collect_and_failure_keeps_records(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("toy")
    emit = f"import json; print(json.dumps({META!r})); print(json.dumps({SAMPLE!r}))"
    seen = []
    backend = LocalBackend(
        store,
        tmp_path / "launch",
        on_job=lambda job, state: seen.append((job.name, state and state.state)),
    )
    backend.submit(run_id, [_job("ok", emit), _job("dies", emit + "; raise SystemExit(3)")])
    assert seen == [("ok", None), ("ok", "COMPLETED"), ("dies", None), ("dies", "FAILED")]
    states = backend.collect(run_id).states
    assert [(s.state, s.returncode) for s in states] == [("COMPLETED", 0), ("FAILED", 3)]
    assert len(store.samples(run_id)) == 2  # the failed job's sample is kept
    assert json.loads(json.dumps(store.samples(run_id)[1]["values"])) == [1.5, 1.6]


def test_timeout_is_reported_as_timeout(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("toy")
    job = _job("slow", "import time; time.sleep(30)")
    job.timeout_s = 0.5
    LocalBackend(store, tmp_path / "launch").submit(run_id, [job])
    (state,) = LocalBackend(store, tmp_path / "launch").poll(run_id)
    assert state.state == "TIMEOUT" and "time limit" in state.detail


def test_ctrl_c_while_figures_are_drawn_keeps_the_finished_run(tmp_path, monkeypatch):
    """Issue 17: Ctrl-C after the last job, while figures are written: the run keeps its
    status and results, and the message says how to draw the figures later."""
    from rich.console import Console

    from hpcscope import runner
    from hpcscope.suites.base import SuitePlan

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "write_outputs", interrupted)
    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("p2p")
    emit = f"import json; print(json.dumps({META!r})); print(json.dumps({SAMPLE!r}))"
    plan = SuitePlan(jobs=[_job("ok", emit)])
    outcome = runner.run_jobs(
        store,
        run_id,
        plan,
        "local",
        {},
        None,
        tmp_path / "out",
        Console(file=open(tmp_path / "log", "w")),
    )
    assert outcome.exit_code == 1 and "hpcscope report" in outcome.messages[0]
    assert store.run(run_id)["status"] == "ok" and len(store.samples(run_id)) == 1
