"""The stopping rule of measuring to a precision (bench/common/precision.c), on synthetic
data with a known distribution: the C code itself, loaded with ctypes.

Stopping as soon as an interval is narrow enough favours lucky streaks (optional
stopping); the rule bounds that by looking first at 6 samples, declaring "met" only from
10 on, and looking at counts growing by half. The test measures what that costs: over
many simulated runs the true median must lie inside the interval the rule stopped with
(median +- half-width) nearly as often as the fixed-n 95 % interval promises.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hpcscope.results.precision import half_width

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rule(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    lib = tmp_path_factory.mktemp("precision") / "libprecision.so"
    common = REPO / "bench" / "common"
    # precision.c writes its summary object with the record writer (jsonl.c), as hs_common
    sources = [str(common / "precision.c"), str(common / "jsonl.c")]
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib), *sources, "-lm"], check=True)
    c = ctypes.CDLL(str(lib))
    c.hs_median_half_width.restype = ctypes.c_double
    c.hs_median_half_width.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_size_t]
    c.hs_precision_next.restype = ctypes.c_size_t
    c.hs_precision_next.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    return c


def c_half_width(rule, values: np.ndarray) -> float:
    arr = np.ascontiguousarray(values, dtype=np.float64)
    return rule.hs_median_half_width(arr.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), arr.size)


def test_c_and_python_give_the_same_half_width(rule):
    rng = np.random.default_rng(1)
    for n in (6, 7, 10, 11, 50, 333, 2000):
        values = rng.lognormal(0.0, 0.3, n)
        assert c_half_width(rule, values) == pytest.approx(half_width(list(values)), rel=1e-12)
    assert np.isinf(c_half_width(rule, np.ones(5)))  # no 95 % interval below 6 samples


def test_looks_grow_by_half_from_at_least_ten_up_to_the_cap(rule):
    assert [rule.hs_precision_next(n, 1000) for n in (6, 10, 15, 22)] == [10, 15, 22, 33]
    assert rule.hs_precision_next(900, 1000) == 1000


def stop(rule, draw, target: float, cap: int = 4000) -> tuple[float, float, int]:
    """One run of the rule as p2p.c applies it: (median, half-width, samples)."""
    values = draw(6)
    while True:
        n = values.size
        half = c_half_width(rule, values)
        if (half <= target and n >= 10) or n >= cap:
            return float(np.median(values)), half, n
        values = np.concatenate([values, draw(rule.hs_precision_next(n, cap) - n)])


@pytest.mark.parametrize(
    "name, draw_with, true_median",
    [
        # a latency-like right tail: lognormal around 1, sigma 0.2
        ("lognormal", lambda rng, k: rng.lognormal(0.0, 0.2, k), 1.0),
        # two modes (70 % fast, 30 % slow), as bandwidth blocks often are
        (
            "bimodal",
            lambda rng, k: np.where(
                rng.random(k) < 0.7, rng.normal(10, 0.3, k), rng.normal(12, 0.3, k)
            ),
            None,
        ),
    ],
)
@pytest.mark.parametrize("target", [0.02, 0.1])
def test_stopping_at_the_target_keeps_the_intervals_coverage(
    rule, name, draw_with, true_median, target
):
    """Measured here (1000-2000 runs, lognormal): 96-98 % at targets 2-20 % (stops after
    15-820 samples), where looking after every sample from 6 on gives 94-97 %: the
    half-width (the farther CI end) keeps even that above the 95 % promise."""
    rng = np.random.default_rng(7)
    if true_median is None:  # the bimodal mixture's median, from a very large sample
        true_median = float(np.median(draw_with(np.random.default_rng(99), 2_000_000)))
    covered, sizes = 0, []
    runs = 300
    for _ in range(runs):
        median, half, n = stop(rule, lambda k: draw_with(rng, k), target)
        covered += abs(median - true_median) <= half * abs(median)
        sizes.append(n)
    assert covered / runs >= 0.93, (name, covered / runs, np.median(sizes))
    assert min(sizes) >= 10
