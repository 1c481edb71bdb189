"""How precise a cell is and why it stopped (results/precision.py), on fixtures with known
launch structure; the run-level path (plan, extra launches, show) with real mpirun."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from conftest import requires_openmpi
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


def test_agreeing_launches_are_judged_on_all_their_samples():
    cell = precision.cell_precision(launches(1.0, 1.0005, 0.9995), target=0.01)
    assert cell.level == "samples" and cell.met and cell.half_width < 0.002


def test_launches_that_differ_by_more_than_the_target_need_six_for_an_interval():
    three = precision.cell_precision(launches(1.0, 1.05, 0.95), target=0.01)
    assert three.level == "launches" and three.half_width is None and not three.met
    six = precision.cell_precision(launches(1.0, 1.02, 0.98, 1.01, 0.99, 1.0), target=0.05)
    assert six.level == "samples"  # 4 % spread, within a 5 % target: the samples count
    six = precision.cell_precision(launches(1.0, 1.02, 0.98, 1.01, 0.99, 1.0), target=0.01)
    assert six.level == "launches" and six.half_width == pytest.approx(0.02, rel=0.05)


def test_a_spread_the_samples_explain_is_no_launch_difference():
    """Launches 3 % apart, but so noisy (20 %) that their medians' CIs overlap."""
    cell = precision.cell_precision(launches(1.0, 1.03, n=30, noise=0.2), target=0.01)
    assert cell.level == "samples" and not cell.met


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
    assert row.achieved is None  # 3 launches that differ: no interval yet
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
