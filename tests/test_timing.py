"""The timer check (results/timing.py, docs/records.md "timer"): intervals per benchmark
definition, thresholds, and the run note's findings."""

from __future__ import annotations

import pytest

from hpcscope.results import timing
from hpcscope.results.records import RecordError, validate

META = {"timer": {"resolution_ns": 20, "overhead_ns": 25, "wtick_s": 1e-9, "wtime_cost_ns": 30}}


def test_facts_take_the_coarser_tick_and_dearer_read():
    assert timing.clock_facts(META) == (20.0, 30.0)
    assert timing.clock_facts(
        {"timer": {"resolution_ns": 1, "overhead_ns": 40, "wtick_s": 1e-6, "wtime_cost_ns": 5}}
    ) == pytest.approx((1000.0, 40.0))
    assert timing.clock_facts({"timer": {"resolution_ns": 0, "overhead_ns": 0}}) is None
    assert timing.clock_facts(None) is None


def test_p2p_latency_intervals_follow_the_blocks():
    s = {
        "benchmark": "p2p",
        "metric": "latency",
        "values": [0.5, 0.5, 1.0],
        "params": {"bytes": 0, "iterations": 250, "block": 100},
    }
    # half round trip 0.5 us x 2 x 100 iterations = 100 us; the last block has 50
    assert timing.intervals_s(s) == pytest.approx([100e-6, 100e-6, 100e-6])


def test_p2p_osu_loop_intervals_are_single_iterations():
    """--protocol osu (and --timer iteration) time every iteration on its own: a block's
    value is the mean of single-iteration intervals, each with its own clock readings."""
    for params in ({"protocol": "osu"}, {"timer": "iteration"}):
        s = {
            "benchmark": "p2p",
            "metric": "latency",
            "values": [0.5, 0.25],
            "params": {"bytes": 1, "iterations": 200, "block": 100, **params},
        }
        assert timing.intervals_s(s) == pytest.approx([1e-6, 0.5e-6])


def test_p2p_bandwidth_and_message_rate_intervals():
    bw = {
        "benchmark": "p2p",
        "metric": "bandwidth",
        "values": [1000.0],
        "params": {"bytes": 1000, "iterations": 10, "block": 10, "window": 64},
    }
    assert timing.intervals_s(bw) == pytest.approx([1000 * 64 * 10 / 1e6 / 1000.0])
    mr = {
        "benchmark": "p2p",
        "metric": "message_rate",
        "values": [64e6],
        "params": {"bytes": 1, "iterations": 10, "block": 10, "window": 64},
    }
    assert timing.intervals_s(mr) == pytest.approx([1e-6])


def test_coll_thresholds():
    short = {"benchmark": "coll", "metric": "time", "values": [0.9, 5.0], "params": {}}
    check = timing.check_sample(short, (1.0, 30.0))
    assert check["short"] and check["read_heavy"]  # 900 ticks; 30 ns of 0.9 us = 3.3 %
    assert check["min_ticks"] == pytest.approx(900)
    assert check["max_read_share"] == pytest.approx(30 / 900)
    fine = {"benchmark": "coll", "metric": "time", "values": [10.0], "params": {}}
    check = timing.check_sample(fine, (1.0, 30.0))
    assert not check["short"] and not check["read_heavy"]


def test_node_benchmarks_have_no_rule():
    assert (
        timing.intervals_s(
            {"benchmark": "mem", "metric": "bandwidth", "values": [1.0], "params": {}}
        )
        is None
    )


def test_findings_group_by_benchmark_and_mpi_and_skip_simulated():
    launches = [
        {"id": 1, "tags": {"mpi": "mpich"}, "meta": META},
        {"id": 2, "tags": {"mpi": "smpi", "simulated": True}, "meta": META},
    ]
    samples = [
        {
            "launch_id": lid,
            "benchmark": "coll",
            "metric": "time",
            "values": [1.0],
            "params": {"collective": "bcast", "algorithm": "native", "bytes": 4},
            "tags": launches[lid - 1]["tags"],
        }
        for lid in (1, 2)
    ]
    found = timing.run_findings(launches, samples)
    assert [(f["benchmark"], f["mpi"], f["short"], f["read_heavy"]) for f in found] == [
        ("coll", "mpich", 1, 1)
    ]
    text = timing.finding_text(found[0])
    assert "coll (mpich)" in text and "1,000 ticks" in text and "collective=bcast" in text


def test_validator_checks_mpi_timer_fields():
    meta = {
        "type": "meta",
        "schema": "hpcscope.bench/1",
        "benchmark": "p2p",
        "version": "1",
        "mpi": None,
        "ranks": [],
        "options": {},
        "timer": {"resolution_ns": 1, "overhead_ns": 1, "wtick_s": -1, "wtime_cost_ns": 1},
    }
    with pytest.raises(RecordError, match="wtick_s"):
        validate(meta, "test")
    meta["timer"]["wtick_s"] = 1e-9
    validate(meta, "test")
