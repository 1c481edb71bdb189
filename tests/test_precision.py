"""How precise a cell is and why it stopped (results/precision.py), on fixtures with known
launch structure; the run-level path (plan, extra launches, show) with real mpirun."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from conftest import requires_openmpi
from scipy.stats import t as t_dist
from test_store import META  # a p2p launch's meta record

from hpcscope.results import precision
from hpcscope.results.cells import canonical


@pytest.mark.parametrize(
    "text, value", [("1%", 0.01), ("0.5 %", 0.005), ("0.02", 0.02), ("0", 0.0), (".5%", 0.005)]
)
def test_precision_reads_percent_or_fraction(text, value):
    assert precision.parse_precision(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "100%", "1.5", "-1%", "1%%"])
def test_a_bad_precision_names_the_fix(text):
    with pytest.raises(ValueError, match="e.g. 1% or 0.01"):
        precision.parse_precision(text)


@pytest.mark.parametrize(
    "text, seconds", [("90s", 90), ("90", 90), ("10m", 600), ("1h30m", 5400), ("2m30s", 150)]
)
def test_budget_reads_hours_minutes_seconds(text, seconds):
    assert precision.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "0s", "soon", "10x", "-5m"])
def test_a_bad_budget_names_the_fix(text):
    with pytest.raises(ValueError, match="e.g. 90s, 10m or 1h30m"):
        precision.parse_budget(text)


def launches(*centres: float, n: int = 40, noise: float = 0.002, seed: int = 1) -> dict:
    """{launch id: values}: launch k's samples scattered by `noise` around centres[k]."""
    rng = np.random.default_rng(seed)
    return {k: list(c * (1 + noise * rng.standard_normal(n))) for k, c in enumerate(centres)}


def test_agreeing_launches_meet_a_target_their_spread_allows():
    cells = launches(1.0, 1.0005, 0.9995)
    cell = precision.cell_precision(cells, target=0.01)
    medians = [float(np.median(v)) for v in cells.values()]
    # t over 3 launch medians: t(0.975, 2) = 4.303, times their std over sqrt(3)
    expected = 4.303 * np.std(medians, ddof=1) / 3**0.5 / np.median(medians)
    assert cell.met and cell.half_width == pytest.approx(expected, rel=0.01)


def test_the_interval_is_the_launch_level_one_t_under_six_launches_order_statistics_from_six():
    three = precision.quoted_interval(launches(1.0, 1.05, 0.95))
    assert three.level == "launches" and three.method == "t over 3 launch medians"
    assert three.half_width == pytest.approx(4.303 * 0.05 / 3**0.5, rel=0.02)
    assert not precision.cell_precision(launches(1.0, 1.05, 0.95), target=0.01).met
    six = precision.quoted_interval(launches(1.0, 1.02, 0.98, 1.01, 0.99, 1.0))
    assert six.method == "order statistics of 6 launch medians"  # min..max: 96.9 %
    assert six.half_width == pytest.approx(0.02, rel=0.05)


def test_one_launch_has_its_samples_interval_and_noisy_samples_widen_few_launches():
    one = precision.quoted_interval(launches(1.0, noise=0.01))
    assert one.level == "samples" and one.method == "samples of one launch"
    assert 0 < one.half_width < 0.01
    # three launches with one median but samples scattered by 20 %: the samples' wider
    values = launches(1.0, n=31, noise=0.2)[0]
    noisy = precision.quoted_interval({1: values, 2: values, 3: values})
    assert noisy.level == "samples" and noisy.half_width > 0.02


def test_why_a_cell_stopped():
    met = precision.CellPrecision(0.004, "samples", 3, 0.001, True)
    spread = precision.CellPrecision(None, "launches", 3, 0.08, False)
    short = precision.CellPrecision(0.03, "samples", 3, 0.001, False)
    assert precision.stop_reason(met, ["budget"], "budget") == "met"
    assert precision.stop_reason(spread, ["met"] * 3, "launches") == "launch spread"
    assert precision.stop_reason(spread, ["met"] * 3, "budget") == "budget"
    assert precision.stop_reason(short, ["cap", "cap", "budget"], "launches") == "cap"
    assert precision.stop_reason(short, ["met", "budget"], None) == "budget"


def run_with(target: float | None, notes: list[dict] | None = None) -> dict:
    plan = [{"kind": "precision", "text": "", "data": {"target": target}}] if target else []
    return {"notes": plan + (notes or [])}


def sample(launch: int, size: int, values: list[float], tags: dict) -> dict:
    return {
        "launch_id": launch,
        "benchmark": "p2p",
        "metric": "latency",
        "unit": "us",
        "params": {"bytes": size, "test": "latency", "iterations": 100, "block": 10},
        "values": values,
        "tags": {**tags, "repeat": launch},
    }


def test_judge_lists_the_cells_that_missed_in_one_row_per_reason():
    tags = {"mpi": "openmpi", "placement": "core"}
    runs = [
        {"id": k, "tags": {**tags, "repeat": k}} for k in (1, 2, 3)
    ]  # three launches of one configuration
    good, bad = launches(1.0, 1.0, 1.0), launches(1.0, 1.1, 0.9)
    samples = [sample(k + 1, 8, good[k], tags) for k in range(3)]
    samples += [sample(k + 1, 64, bad[k], tags) for k in range(3)]
    samples += [sample(k + 1, 128, bad[k], tags) for k in range(3)]
    summaries = [
        {"launch_id": k, "metric": "latency", "params": {"bytes": b, "test": "latency"},
         "precision": {"stop": "met"}}
        for k in (1, 2, 3) for b in (8, 64, 128)
    ]  # fmt: skip
    stop = {"kind": "precision", "text": "", "data": {"precision_stop": "launches"}}
    judged = precision.judge(run_with(0.01, [stop]), samples, summaries, runs)
    assert sorted((json.loads(r.key[4])["bytes"], r.reason) for r in judged) == [
        (8, "met"),
        (64, "launch spread"),
        (128, "launch spread"),
    ]
    [row] = precision.missed_rows(judged)
    assert (row.metric, row.configuration, row.sizes, row.reason) == (
        "latency",
        "openmpi core",
        [64, 128],
        "launch spread",
    )
    # 3 launches 10 % apart: t over their medians, t(0.975, 2) x 0.1 / sqrt(3) = 24.8 %
    assert row.achieved == (pytest.approx(0.248, abs=0.01),) * 2
    assert precision.judge(run_with(None), samples, summaries, runs) == []


def test_missed_coll_and_lane_cells_name_what_they_measure():
    """One launch of coll and of lane_pattern (bench/mpi/coll_repeat.h's summaries): a row
    per collective and algorithm, or lane benchmark and k; flags and the MPI version are
    not part of the configuration's words."""
    tags = {"mpi": "openmpi", "mpi_version": "4.1", "emulated_nodes": True, "ranks": 2}
    runs = [{"id": 1, "tags": tags}]
    noisy = launches(1.0, noise=0.3)[0]
    cells = [
        ("coll", "time", {"collective": "bcast", "algorithm": "lane", "count": 2, "bytes": 8}),
        ("lane_pattern", "time_per_step", {"pattern": "lane", "lanes": 2, "bytes": 80}),
    ]
    samples = [
        {"launch_id": 1, "benchmark": b, "metric": m, "unit": "us", "params": p, "values": noisy,
         "tags": tags}
        for b, m, p in cells
    ]  # fmt: skip
    summaries = [
        {"launch_id": 1, "metric": m, "params": p, "precision": {"stop": "cap"}}
        for _, m, p in cells
    ]
    judged = precision.judge(run_with(0.01), samples, summaries, runs)
    rows = precision.missed_rows(judged)
    assert [(r.what, r.configuration, r.sizes, r.reason) for r in rows] == [
        ("bcast lane", "openmpi ranks=2", [8], "cap"),
        ("lane k=2", "openmpi ranks=2", [80], "cap"),
    ]


def test_judge_ignores_hostile_precision_records():
    tags = {"mpi": "openmpi", "placement": "core"}
    samples = [sample(1, 8, [1.0] * 12, tags)]
    for found in (None, "met", {"stop": 3}, {"stop": "sometimes"}, [1, 2]):
        summaries = [
            {"launch_id": 1, "metric": "latency", "params": {"bytes": 8}, "precision": found}
        ]
        assert precision.judge(run_with(0.01), samples, summaries, [{"id": 1, "tags": tags}]) == []
    broken = run_with(None, [{"kind": "precision", "text": "", "data": {"target": "1%"}}])
    assert precision.target_of(broken["notes"]) is None
    assert canonical({"b": 1, "a": 2}) == '{"a":2,"b":1}'


@requires_openmpi
def test_run_to_a_precision_adds_launches_within_its_budget_and_says_why(cli):
    """One configuration, a few sizes: the first launch, then launches the runner adds
    (full ones up to the minimum, then only the cells still short), inside the budget; a
    note says how it ended, `show` lists what missed and `export` has every cell's
    precision."""
    started = time.monotonic()
    done = cli(
        "run", "p2p", "--mpi", "openmpi", "--placements", "core", "--tests", "latency,bw",
        "--sizes", "0:4K", "--precision", "0.5%", "--budget", "9s",
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "precision: target 0.5%" in done.stderr  # said before the run
    assert took < 9 + 10  # the budget, plus start-up and the build check
    runs = json.loads(cli("list", "--format", "json").stdout)
    exported = json.loads(cli("export", "last", "--format", "json").stdout)
    names = [l["name"] for l in exported["launches"]]
    assert names[:3] == ["openmpi/core/r1", "openmpi/core/r2", "openmpi/core/r3"]
    for launch in exported["launches"][3:]:  # added: only sizes still short before it
        before = {}
        for s in exported["samples"]:
            if s["launch_id"] < launch["id"]:
                cell = (s["metric"], s["params"]["bytes"])
                before.setdefault(cell, {}).setdefault(s["launch_id"], []).extend(s["values"])
        short = {b for (m, b), g in before.items() if not precision.cell_precision(g, 0.005).met}
        assert {x["params"]["bytes"] for x in launch["summaries"]} <= short
    notes = (
        runs[-1].get("notes")
        or json.loads(cli("export", "last", "--format", "json").stdout)["run"]["notes"]
    )
    stops = [n["data"]["precision_stop"] for n in notes if "precision_stop" in (n["data"] or {})]
    assert len(stops) == 1 and stops[0] in ("met", "budget", "launches")
    cells = [p["precision"] for p in exported["pooled"]]
    assert len(cells) == 2 * 13 + 1  # latency 0 B-4 KiB and bw 1 B-4 KiB
    assert all(c["target"] == 0.005 and c["stop"] in precision_reasons() for c in cells)
    assert all(c["met"] == (c["stop"] == "met") for c in cells)
    shown = cli("show", "last").stdout
    assert "precision target 0.5%" in shown
    assert ("cells short of the precision target" in shown) == (stops[0] != "met")


def precision_reasons() -> tuple[str, ...]:
    # a real run on a VM can see its CPU pair move mid-run (results/cpu_pair.py)
    return ("met", "budget", "launch spread", "cap", precision.CPU_PAIR_MOVED)


def adaptive_store(tmp_path, centres: dict[int, tuple[float, ...]], noise=0.002, **options):
    """A store with one p2p run measured to 1 %: per message size, one launch per centre
    (launch k's latency samples scattered by `noise` around centres[size][k]); the jobs
    that ran them."""
    from hpcscope.plan.job import Job
    from hpcscope.results.store import Store

    tmp_path.mkdir(exist_ok=True)
    store = Store(tmp_path / "h.db")
    run = store.create_run("p2p", options={"precision": 0.01, "budget_s": 60.0, **options})
    tags = {"mpi": "openmpi", "mpi_version": "4.1.4", "placement": "core"}
    program = ["p2p", "--tests", "latency,bw", "--precision", "0.01", "--size-budget-ms", "30"]
    jobs = []
    for k in range(len(next(iter(centres.values())))):
        name = f"openmpi/core/r{k + 1}"
        jobs.append(Job("p2p", name, program, tags={**tags, "repeat": k + 1}))
        launch = store.add_launch(run, name, {**tags, "repeat": k + 1})
        store.add_record(launch, META)
        for size, per_launch in centres.items():
            values = launches(per_launch[k], n=40, noise=noise, seed=k + size)[0]
            store.add_record(launch, p2p_sample(size, values))
        store.finish_launch(launch, "COMPLETED", 0)
    return store, run, jobs


def p2p_sample(size: int, values: list[float]) -> dict:
    return {
        "type": "sample",
        "metric": "latency",
        "unit": "us",
        "params": {"bytes": size, "test": "latency", "block": 100, "iterations": 4000},
        "values": values,
        "warmups": 100,
    }


def test_the_runner_adds_a_launch_of_just_the_cells_still_short(tmp_path):
    from hpcscope.suites import p2p_adaptive

    # 8 B: three launches agree; 64 B: they differ by 10 %: only 64 B needs more launches
    store, run, jobs = adaptive_store(tmp_path, {8: (1.0, 1.0, 1.0), 64: (1.0, 1.1, 0.9)})
    [more] = p2p_adaptive.follow_up(store, run, jobs, time.monotonic())
    assert more.name == "openmpi/core/r4" and more.tags["repeat"] == 4
    # launches that differ: another launch median counts, not a longer launch (6 blocks)
    assert more.program == [
        "p2p", "--tests", "latency", "--precision", "0.01", "--size-budget-ms", "0.001",
        "--sizes", "64",
    ]  # fmt: skip
    assert not [n for n in store.run(run)["notes"] if n["kind"] == "precision"]
    # launches that agree but samples too noisy for 1 %: more blocks per size help
    # (where most cells still short are so; here the only one)
    store, run, jobs = adaptive_store(tmp_path / "n", {8: (1.0, 1.0, 1.0)}, noise=0.1)
    [more] = p2p_adaptive.follow_up(store, run, jobs, time.monotonic())
    assert more.program[more.program.index("--size-budget-ms") + 1] == "30"


def test_the_runner_stops_at_the_budget_or_the_most_launches_and_says_so(tmp_path):
    from hpcscope.suites import p2p_adaptive

    store, run, jobs = adaptive_store(tmp_path, {64: (1.0, 1.1, 0.9)})
    long_ago = time.monotonic() - 61  # the 60 s budget is spent
    assert p2p_adaptive.follow_up(store, run, jobs, long_ago) == []
    [note] = [n for n in store.run(run)["notes"] if n["kind"] == "precision"]
    assert note["data"] == {"precision_stop": "budget", "cells_missed": 1}
    assert "1 cell(s) below the target when the budget ran out" in note["text"]

    store, run, jobs = adaptive_store(tmp_path / "b", {64: (1.0, 1.1, 0.9)}, repeat=3)
    assert p2p_adaptive.follow_up(store, run, jobs, time.monotonic()) == []  # --repeat 3: all
    [note] = [n for n in store.run(run)["notes"] if n["kind"] == "precision"]
    assert note["data"]["precision_stop"] == "launches"

    store, run, jobs = adaptive_store(tmp_path / "c", {8: (1.0, 1.0, 1.0)})
    assert p2p_adaptive.follow_up(store, run, jobs, time.monotonic()) == []
    [note] = [n for n in store.run(run)["notes"] if n["kind"] == "precision"]
    assert note["data"]["precision_stop"] == "met"


def test_the_first_rounds_are_full_launches_up_to_the_minimum(tmp_path):
    from hpcscope.suites import p2p_adaptive

    store, run, jobs = adaptive_store(tmp_path, {8: (1.0,), 64: (1.0,)})  # one launch so far
    [more] = p2p_adaptive.follow_up(store, run, jobs, time.monotonic())
    assert more.name == "openmpi/core/r2" and "--sizes" not in more.program


def test_a_full_round_runs_for_every_configuration_or_for_none(tmp_path):
    """Two configurations at one launch each and budget for one more launch only: no
    configuration gets a second launch the other lacks; the note says budget."""
    from hpcscope.plan.job import Job
    from hpcscope.suites import p2p_adaptive

    store, run, jobs = adaptive_store(tmp_path, {8: (1.0,)})
    other = Job(
        "p2p",
        "mpich/core/r1",
        jobs[0].program,
        tags={"mpi": "mpich", "placement": "core", "repeat": 1},
    )
    launch = store.add_launch(run, other.name, other.tags)
    store.add_record(launch, META)
    store.add_record(launch, p2p_sample(8, launches(1.0)[0]))
    store.finish_launch(launch, "COMPLETED", 0)
    full, _ = p2p_adaptive._costs(store, run, recent=2)
    budget = p2p_adaptive.RESERVE_S + 1.5 * full  # room for one full launch, not two
    store.set_run_backend_data(run, {})
    started = time.monotonic() - (60.0 - budget)  # the run's 60 s budget has `budget` left
    assert p2p_adaptive.follow_up(store, run, [*jobs, other], started) == []
    [note] = [n for n in store.run(run)["notes"] if n["kind"] == "precision"]
    assert note["data"]["precision_stop"] == "budget"


def test_a_size_gets_its_share_of_the_budget_at_most_a_second():
    from hpcscope.suites import p2p_adaptive

    adaptive = {"target": 0.01, "budget_s": 600.0, "min_launches": 3, "max_launches": 30}
    assert p2p_adaptive.size_budget_ms(adaptive, 4, 94) == pytest.approx(
        (0.3 * 600 - 12 * 0.5) * 1e3 / (12 * 94)
    )
    assert p2p_adaptive.size_budget_ms(adaptive, 1, 1) == 1000.0  # one size: capped
    assert p2p_adaptive.sizes_per_launch(["latency", "bw"], 0, 4096) == 2 * 13 + 1


@requires_openmpi
def test_the_exports_interval_is_the_launch_level_one_on_a_real_run(cli):
    """Issue 47: `pooled[].cell.ci_low/ci_high` is the interval the precision claim refers
    to (over launches, around the median of the launch medians), the samples' interval is
    `sample_ci_low/high`, and the CSV's precision column is that interval's half-width."""
    done = cli(
        "run", "p2p", "--mpi", "openmpi", "--placements", "core", "--tests", "latency",
        "--sizes", "8:64", "--precision", "0", "--repeat", "3", "--quick",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    exported = json.loads(cli("export", "last", "--format", "json").stdout)
    cells = [p for p in exported["pooled"] if p["benchmark"] == "p2p"]
    assert len(cells) == 4  # 8, 16, 32, 64 B
    for p in cells:
        per_launch: dict[int, list[float]] = {}
        for s in exported["samples"]:
            if s["metric"] == p["metric"] and s["params"]["bytes"] == p["params"]["bytes"]:
                per_launch.setdefault(s["launch_id"], []).extend(s["values"])
        assert len(per_launch) == 3
        medians = [float(np.median(v)) for v in per_launch.values()]
        centre = float(np.median(medians))
        t_half = t_dist.ppf(0.975, 2) * float(np.std(medians, ddof=1)) / 3**0.5
        cell = p["cell"]
        assert cell["ci_of"] == pytest.approx(centre)
        assert cell["ci_method"] == "t over 3 launch medians"
        half = max(centre - cell["ci_low"], cell["ci_high"] - centre)
        samples_half = max(
            cell["median"] - cell["sample_ci_low"], cell["sample_ci_high"] - cell["median"]
        )
        # the wider of the launch-level t-interval and the samples' interval
        assert half == pytest.approx(max(t_half, samples_half), rel=1e-6, abs=1e-12)
