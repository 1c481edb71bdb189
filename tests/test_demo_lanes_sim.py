"""The demo's simulated lane step (cli/demo.simulated_lanes): where the measured lane
pattern has only k = 1 (one process per emulated node), the demo runs it on a small
simulated cluster, labelled as simulated; a SimGrid that is missing or a simulation that
fails is one line, never a failed demo."""

from __future__ import annotations

import shutil

import click
import pytest
from rich.console import Console

from hpcscope.analysis import summary
from hpcscope.cli import demo

QUIET = Console(stderr=True, quiet=True)


def lane_samples(ks: tuple[int, ...]) -> list[dict]:
    return [
        {
            "benchmark": "lane_pattern",
            "metric": "time_per_step",
            "unit": "us",
            "tags": {"mpi": "openmpi", "emulated_nodes": True, "node_size": 1, "ranks": 2},
            "values": [10.0 / k, 10.1 / k, 9.9 / k],
            "params": {"pattern": "lane", "lanes": k, "count": 2000, "nodes": 2, "ppn": max(ks)},
        }
        for k in ks
    ]


class FakeStore:
    def __init__(self, samples: list[dict]) -> None:
        self._samples = samples

    def samples(self, run_id: int) -> list[dict]:
        return self._samples


@pytest.fixture
def ctx(monkeypatch: pytest.MonkeyPatch):
    def run(samples: list[dict]) -> click.Context:
        monkeypatch.setattr(demo, "store_of", lambda ctx: FakeStore(samples))
        return click.Context(click.Command("hpcscope"), obj={"db": "unused.db"})

    return run


def test_missing_simgrid_is_one_line_not_a_failure(ctx, monkeypatch, capsys, tmp_path):
    from hpcscope.machine import mpi

    monkeypatch.setattr(mpi, "smpi_installs", lambda: [])
    ran = []
    monkeypatch.setattr(demo, "execute_command", lambda *a, **k: ran.append(a))
    assert demo.simulated_lanes(ctx(lane_samples((1,))), tmp_path, 1, QUIET) is None
    err = capsys.readouterr().err
    assert "lanes  simulated (hydra:nodes=4,cores_per_socket=2): skipped" in err
    assert "SimGrid's smpicc/smpirun not found" in err and ran == []


def test_a_simulation_that_fails_does_not_fail_the_demo(ctx, monkeypatch, capsys, tmp_path):
    from hpcscope.machine import mpi

    monkeypatch.setattr(mpi, "smpi_installs", lambda: ["found"])

    def broken(*args, **kwargs):
        raise RuntimeError("smpirun crashed")

    monkeypatch.setattr(demo, "execute_command", broken)
    assert demo.simulated_lanes(ctx(lane_samples((1,))), tmp_path, 1, QUIET) is None
    err = capsys.readouterr().err
    assert "not run (RuntimeError: smpirun crashed); the measured steps are not affected" in err


def test_measured_lanes_need_no_simulation(ctx, monkeypatch, tmp_path):
    monkeypatch.setattr(demo, "execute_command", lambda *a, **k: pytest.fail("simulated"))
    assert demo.simulated_lanes(ctx(lane_samples((1, 2))), tmp_path, 1, QUIET) is None
    assert demo.simulated_lanes(ctx(lane_samples((1,))), tmp_path, None, QUIET) is None


def test_the_demo_sets_only_options_run_lanes_has():
    from hpcscope.cli.run import run_lanes

    c = click.Context(click.Command("hpcscope"), obj={"db": "unused.db"})
    kw = demo._defaults(c, run_lanes, quick=True, mpi="smpi", on="sim", platform=demo.SIM_PLATFORM)
    assert (kw["on"], kw["platform"], kw["mpi"]) == ("sim", demo.SIM_PLATFORM, "smpi")


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid's smpirun not installed")
def test_the_simulated_step_shows_a_lane_factor_labelled_as_simulated(tmp_path, capsys):
    """Real SimGrid: the step stores a run whose summary line says simulated, names the
    model and shows a lane factor above 1 (Hydra's two lanes per node)."""
    from hpcscope.results.store import Store

    db = tmp_path / "demo.db"
    c = click.Context(click.Command("hpcscope"), obj={"db": str(db)})
    measured = lane_samples((1,))
    with c:
        real_store_of = demo.store_of
        demo.store_of = lambda ctx: (  # the measured run: k = 1 only; then the real store
            FakeStore(measured) if not db.exists() else real_store_of(ctx)
        )
        try:
            run_id = demo.simulated_lanes(c, tmp_path / "out", 1, QUIET)
        finally:
            demo.store_of = real_store_of
    assert run_id is not None, capsys.readouterr().err
    store = Store(db)
    try:
        (line,) = summary.lanes_lines(run_id, store.samples(run_id))
        text = line.text()
    finally:
        store.close()
    assert text.startswith("simulated on a model of hydra, 4 nodes x 4 ranks (SimGrid;")
    assert line.best_factor is not None and line.best_factor > 1.2 and line.k in (2, 4)
    assert ", what lanes do on a cluster: run " in capsys.readouterr().err
