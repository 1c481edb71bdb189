"""Change detection over runs (analysis/history.py) and the grouping of comparable runs
(analysis/over_runs.py) on fixture records with known answers: a step is found at the run
where it starts, a single slow run gives a change and its return, pure noise gives none."""

from __future__ import annotations

import numpy as np
import pytest

from hpcscope.analysis import history as h
from hpcscope.analysis.over_runs import comparable_key, group_comparable, spread_over_runs
from hpcscope.results.cells import summarize_cell

LAUNCHES, VALUES = 3, 20


def fixture_runs(levels: list[float], noise: float = 0.02, seed: int = 1, sizes=(8,)):
    """One p2p latency run per level: LAUNCHES launches of VALUES values each, drawn
    around the level with relative `noise` (normal), every size at the same level."""
    rng = np.random.default_rng(seed)
    runs, samples = [], []
    launch_id = 0
    for i, level in enumerate(levels, start=1):
        runs.append({"id": i, "started": f"2026-11-{i:02d}T00:00:00.000+00:00", "label": ""})
        for repeat in range(1, LAUNCHES + 1):
            launch_id += 1
            for size in sizes:
                values = level * (1 + noise * rng.standard_normal(VALUES))
                samples.append(
                    {
                        "run_id": i,
                        "launch_id": launch_id,
                        "benchmark": "p2p",
                        "metric": "latency",
                        "unit": "us",
                        "tags": {
                            "mpi": "openmpi",
                            "mpi_version": "4.1.4" if i < 100 else "5.0",
                            "placement": "core",
                            "repeat": repeat,
                        },
                        "params": {"bytes": size, "test": "latency", "iterations": 1000},
                        "values": [float(v) for v in values],
                    }
                )
    return runs, samples


def only_series(levels, **kw) -> h.Series:
    runs, samples = fixture_runs(levels, **kw)
    [series] = h.history(samples, runs).series
    return series


def test_a_step_is_found_at_the_first_run_of_the_new_level():
    series = only_series([1.0] * 8 + [1.3] * 8)
    assert [(c.run_id, c.verdict) for c in series.changes] == [(9, "slower")]
    change = series.changes[0]
    assert change.before_runs == [4, 5, 6, 7, 8]  # the newest WINDOW runs of the level
    assert change.ratio == pytest.approx(1.3, rel=0.03)
    assert change.p_value < 0.05


def test_a_faster_step_for_a_rate_is_faster():
    runs, samples = fixture_runs([100.0] * 6 + [150.0] * 6)
    for s in samples:
        s["metric"], s["unit"] = "bandwidth", "MB/s"
    [series] = h.history(samples, runs).series
    assert [(c.run_id, c.verdict) for c in series.changes] == [(7, "faster")]


def test_one_slow_run_is_a_change_and_the_next_run_goes_back():
    series = only_series([1.0] * 6 + [2.5] + [1.0] * 5)
    assert [(c.run_id, c.verdict) for c in series.changes] == [(7, "slower"), (8, "faster")]
    assert series.changes[1].back_to_before == 7


@pytest.mark.parametrize("seed", range(5))
def test_no_change_in_pure_noise(seed):
    series = only_series([1.0] * 40, noise=0.03, seed=seed)
    assert series.changes == []


def test_a_shift_below_the_threshold_is_no_change():
    # 3 % with 0.5 % noise is significant but below the 5 % threshold of compare
    series = only_series([1.0] * 8 + [1.03] * 8, noise=0.005)
    assert series.changes == []
    runs, samples = fixture_runs([1.0] * 8 + [1.03] * 8, noise=0.005)
    found = h.history(samples, runs, threshold=0.02)
    assert [c.run_id for c in found.series[0].changes] == [9]


def test_launches_that_disagree_are_no_change():
    # two launches of the new run are 50 % slower, the third measured what a launch of
    # the level measured: the launch medians overlap, so no change (records.md 7.3a)
    runs, samples = fixture_runs([1.0] * 6 + [1.5], noise=0.01)
    level_launch = next(s["values"] for s in samples if s["run_id"] == 6)
    for s in samples:
        if s["run_id"] == 7 and s["tags"]["repeat"] == 1:
            s["values"] = list(level_launch)
    [series] = h.history(samples, runs).series
    assert series.changes == []


def test_points_are_the_cells_of_show():
    runs, samples = fixture_runs([1.0, 1.1])
    [series] = h.history(samples, runs).series
    cell = summarize_cell({s["launch_id"]: s["values"] for s in samples if s["run_id"] == 2}, "us")
    point = series.points[1]
    assert (point.median, point.ci_low, point.ci_high, point.n) == (
        cell.median,
        cell.all.ci_low,
        cell.all.ci_high,
        cell.all.n,
    )


def test_the_mpi_version_is_part_of_the_point_not_of_the_series():
    runs, samples = fixture_runs([1.0] * 3)
    for s in samples:
        if s["run_id"] == 3:
            s["tags"]["mpi_version"] = "5.0.0"
    [series] = h.history(samples, runs).series
    assert [p.software["mpi_version"] for p in series.points] == ["4.1.4", "4.1.4", "5.0.0"]


def test_key_sizes_are_smallest_nonzero_middle_and_largest():
    runs, samples = fixture_runs([1.0, 1.0], sizes=(0, 1, 8, 64, 1024))
    result = h.history(samples, runs)
    keys = h.key_sizes(result.series)
    shown = sorted(int(s.params["bytes"]) for s in result.series if h.is_key(s, keys))
    assert shown == [1, 64, 1024]


def test_threshold_must_be_a_fraction():
    with pytest.raises(ValueError, match="fraction"):
        h.history([], [], threshold=float("nan"))


# -- comparable runs -----------------------------------------------------------------------


def _run(run_id, suite="p2p", host="vm"):
    return {"id": run_id, "suite": suite, "host": host, "label": f"l{run_id}"}


def _sample(placement="core", mpi="openmpi", version="4.1.4", repeat=1):
    return {"tags": {"mpi": mpi, "mpi_version": version, "placement": placement, "repeat": repeat}}


def test_runs_differing_in_label_repeat_and_mpi_version_are_comparable():
    a = (_run(1), [_sample(repeat=1), _sample(repeat=2)])
    b = (_run(2), [_sample(version="5.0.0")])
    assert comparable_key(*a) == comparable_key(*b)
    assert group_comparable([a, b]) == [[1, 2]]


def test_runs_of_other_placements_hosts_suites_or_libraries_are_not():
    base = (_run(1), [_sample()])
    others = [
        (_run(2), [_sample(placement="socket")]),
        (_run(3, host="other"), [_sample()]),
        (_run(4, suite="coll"), [_sample()]),
        (_run(5), [_sample(mpi="mpich")]),
        (_run(6), [_sample(), _sample(placement="socket")]),
        (_run(7), []),  # nothing measured: a group of its own
        (_run(8), [_sample(repeat=3)]),
    ]
    assert group_comparable([base, *others]) == [[1, 8], [2], [3], [4], [5], [6], [7]]


def test_spread_over_runs_is_mean_and_std_of_the_run_medians():
    runs, samples = fixture_runs([1.0, 1.2, 0.9, 1.1, 1.0, 1.05])
    [spread] = spread_over_runs(h.history(samples, runs).series)
    medians = list(spread.values.values())
    assert len(medians) == 6 and spread.summary is not None
    assert spread.summary.mean == pytest.approx(np.mean(medians))
    assert spread.summary.std == pytest.approx(np.std(medians, ddof=1))
    assert spread.summary.median == pytest.approx(np.median(medians))
    assert spread.summary.ci_low is not None  # 6 runs: a 95% CI of the median exists


def test_the_fast_median_is_numpys():
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 10, 11, 20):
        values = [float(v) for v in rng.lognormal(size=n)]
        assert h._median(values) == float(np.median(values))
