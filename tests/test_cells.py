"""One cell, one summary, one launch rule (results/cells.py) on synthetic launches with
known answers."""

from __future__ import annotations

import numpy as np
import pytest

from hpcscope.results.cells import compare_cells, group_cells, summarize_cell

RNG = np.random.default_rng(3)


def launch(center: float, n: int = 60) -> list[float]:
    return list(center * (1 + 0.01 * RNG.standard_normal(n)))


def test_a_violation_must_show_in_every_launch_of_a_paired_comparison():
    native = {1: launch(10.0), 2: launch(10.0)}
    steady = {1: launch(8.0), 2: launch(8.0)}
    flips = {1: launch(6.0), 2: launch(9.8)}  # pooled it looks faster, launch 2 says no
    assert (
        compare_cells(native, steady, 0.05, lower_is_better=True, paired=True).verdict == "faster"
    )
    said = compare_cells(native, flips, 0.05, lower_is_better=True, paired=True)
    assert said.verdict == "same" and "launches 2 do not show it" in said.warnings[-1]


def test_two_runs_differ_only_when_their_launch_medians_do_not_overlap():
    before = {1: launch(10.0), 2: launch(10.2), 3: launch(9.9)}
    after = {4: launch(8.0), 5: launch(8.1), 6: launch(7.9)}
    mixed = {4: launch(8.0), 5: launch(10.1), 6: launch(7.9)}
    assert compare_cells(before, after, 0.05, lower_is_better=True).verdict == "faster"
    said = compare_cells(before, mixed, 0.05, lower_is_better=True)
    assert said.verdict == "same" and "overlap" in said.warnings[-1]


def test_one_launch_per_side_keeps_the_pooled_verdict():
    assert compare_cells({1: launch(10)}, {2: launch(5)}, 0.05, lower_is_better=True).verdict == (
        "faster"
    )


def test_cells_pool_settings_and_launches_but_not_configurations():
    def sample(launch_id, placement, iterations, values):
        return {
            "benchmark": "p2p",
            "metric": "latency",
            "unit": "us",
            "launch_id": launch_id,
            "tags": {"placement": placement, "repeat": launch_id},
            "params": {"bytes": 8, "iterations": iterations},
            "values": values,
        }

    cells = group_cells(
        [
            sample(1, "core", 1000, [1.0, 1.1]),
            sample(2, "core", 500, [1.2]),
            sample(3, "socket", 1000, [2.0]),
        ]
    )
    assert sorted(len(per_launch) for per_launch in cells.values()) == [1, 2]
    core = next(c for k, c in cells.items() if '"core"' in k[3])
    cell = summarize_cell(core, "us")
    assert cell.launches == 2 and cell.all.n == 3 and cell.median == 1.1


def test_over_launches_is_the_seeds_view_one_number_per_launch() -> None:
    """Three launches of bandwidth blocks, one with a stalled block (about 1 MB/s among
    blocks at 1,415 MB/s): the seed view gives each launch OSU's number for its run (work
    over time), then the mean and sigma of those; the robust median stays at 1,415."""
    from hpcscope.results.cells import launch_value, over_launches
    from hpcscope.results.stats import summarize

    steady = [1415.0] * 29
    per_launch = {1: steady + [1415.0], 2: steady + [0.97], 3: steady + [1415.0]}
    pooled = summarize([v for vs in per_launch.values() for v in vs], rate=True)
    assert pooled.median == 1415.0 and pooled.mean is not None and pooled.mean < 100  # the trap
    over = over_launches(per_launch, "MB/s")
    assert over is not None
    stalled = 30 / (29 / 1415.0 + 1 / 0.97)  # bytes over time of launch 2
    assert over.values == pytest.approx([1415.0, stalled, 1415.0])
    assert over.mean == pytest.approx((2 * 1415.0 + stalled) / 3)
    assert over.std == pytest.approx(float(np.std(over.values, ddof=1)))
    # times: the launch's mean time per unit, as osu_latency prints it
    assert launch_value([1.0, 2.0, 3.0], "us") == 2.0
    assert over_launches({1: [5.0]}, "us").std is None  # one launch: no sigma
