"""Instability graded, not stamped (issue 47, analysis/p2p_curves.grade): a p2p point is
starred only where the quoted median's own 95 % interval over launches is wider than the
precision asked, and then says why: launches bimodal (with the CPU-pair move where the
probe saw one), budget ran out before the target, or noise above the target."""

from __future__ import annotations

import numpy as np
import pytest

from hpcscope.analysis import p2p_curves
from hpcscope.analysis.summary import p2p_lines

TAGS = {"mpi": "mpich", "placement": "core"}


def cell(centres: list[float], size: int = 8, noise: float = 0.001, seed: int = 3) -> list:
    """One latency sample per launch, launch k's values scattered around centres[k]."""
    rng = np.random.default_rng(seed)
    return [
        {
            "launch_id": k,
            "benchmark": "p2p",
            "metric": "latency",
            "unit": "us",
            "params": {"bytes": size, "test": "latency"},
            "tags": {**TAGS, "repeat": k},
            "values": list(c * (1 + noise * rng.standard_normal(40))),
        }
        for k, c in enumerate(centres, start=1)
    ]


def graded(samples, run=None, launches=None, size: int = 8):
    point = p2p_curves.curves(samples, "latency")["mpich core"][size]
    how = p2p_curves.grading(run, samples, launches)
    return point, p2p_curves.grade(point, "mpich core", "latency", size, how)


def fixed_run():
    return {"id": 1, "notes": []}


def run_to(target: float, stop: str) -> dict:
    return {
        "id": 1,
        "notes": [
            {"kind": "precision", "text": "", "data": {"target": target}},
            {"kind": "precision", "text": "", "data": {"precision_stop": stop}},
        ],
    }


def test_no_star_where_the_quoted_interval_is_within_the_target():
    point, cls = graded(cell([0.1110, 0.1112, 0.1108]), fixed_run())
    assert point["half_width"] < 0.05 and cls is None
    assert not p2p_curves.unstable_point(point)


def test_a_usable_number_short_of_the_target_is_noise_with_its_half_width():
    # MPICH's 8 B latency of issue 47: 0.1107 / 0.1117 / 0.1177 us over 3 launches
    point, cls = graded(cell([0.1107, 0.1117, 0.1177]), fixed_run())
    assert cls == p2p_curves.NOISE
    medians = sorted(point["launch_medians"].values())
    expected = 4.303 * np.std(medians, ddof=1) / 3**0.5 / point["center"]
    assert point["half_width"] == pytest.approx(expected, rel=0.01)
    assert p2p_curves.grade_text(point, cls) == f"±{expected:.0%} over 3 launches ({cls})"
    # the same launches in a run measured to 10 %: no star
    assert graded(cell([0.1107, 0.1117, 0.1177]), run_to(0.10, "met"))[1] is None


def test_the_budget_class_where_the_runs_budget_ended_it():
    _, cls = graded(cell([0.1107, 0.1117, 0.1177]), run_to(0.02, "budget"))
    assert cls == "budget ran out before the target"
    _, cls = graded(cell([0.1107, 0.1117, 0.1177]), run_to(0.02, "launches"))
    assert cls == p2p_curves.NOISE  # the most launches allowed ended it, not the budget


def test_launches_in_two_groups_are_bimodal_not_explained_without_a_probe():
    # Open MPI's 8 B latency of issue 47: 0.094 vs 0.349 us
    point, cls = graded(cell([0.094, 0.094, 0.349]), fixed_run())
    assert cls.startswith("launches bimodal (not explained")
    assert point["half_width"] > 1


def test_launches_bimodal_with_the_cpu_pair_move_that_explains_them():
    centres = [0.094, 0.349, 0.094]
    samples = [s for size in (0, 1, 2, 4, 8, 64) for s in cell(centres, size, seed=size)]
    launches = [
        {"id": k, "tags": {**TAGS, "repeat": k}, "meta": {"cpu_pair": {"cacheline_ns": ns}}}
        for k, ns in ((1, 55.0), (2, 250.0), (3, 60.0))
    ]
    _, cls = graded(samples, fixed_run(), launches)
    assert cls == (
        "launches bimodal: CPU pair moved, cache line 250 ns in launch 2, 55-60 ns in launches 1, 3"
    )
    (line,) = p2p_lines(1, samples, fixed_run(), launches)
    assert line.unstable == [
        f"latency ±{graded(samples)[0]['half_width']:.0%} over 3 launches ({cls})"
    ]


def test_summary_says_unstable_only_with_its_class():
    (calm,) = p2p_lines(1, cell([0.1110, 0.1112, 0.1108]), fixed_run(), [])
    assert calm.unstable == []
    (noisy,) = p2p_lines(1, cell([0.1107, 0.1117, 0.1177]), fixed_run(), [])
    assert len(noisy.unstable) == 1 and noisy.unstable[0].endswith(f"({p2p_curves.NOISE})")


def test_other_load_in_the_runs_notes_is_named_as_the_cause():
    """machine/host_load.py leaves a `load` note per job: a class names the other
    processes' cores beside the launches where they reached half a core."""
    launches = [
        {"id": k, "name": f"mpich/core/r{k}", "tags": {**TAGS, "repeat": k}} for k in (1, 2, 3)
    ]
    notes = [
        {"kind": "load", "text": "", "data": {"job": f"mpich/core/r{k}", "others_cores": c}}
        for k, c in ((1, 0.1), (2, 1.52), (3, 1.71))
    ]
    run = {"id": 1, "notes": notes}
    _, cls = graded(cell([0.094, 0.094, 0.349]), run, launches)
    assert cls == "launches bimodal; other processes used 1.5-1.7 cores during 2 of its launches"
    _, cls = graded(cell([0.1107, 0.1117, 0.1177]), run, launches)
    assert cls == f"{p2p_curves.NOISE}; other processes used 1.5-1.7 cores during 2 of its launches"
    quiet = {"id": 1, "notes": notes[:1]}  # 0.1 cores: not named
    assert graded(cell([0.094, 0.094, 0.349]), quiet, launches)[1] == p2p_curves.BIMODAL_UNEXPLAINED
