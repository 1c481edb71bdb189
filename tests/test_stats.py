"""Statistics against known answers (Le Boudec's order-statistic table, exact binomials)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcscope.results.stats import (
    compare,
    is_rate,
    lower_is_better,
    median_ci_ranks,
    min_n_for_ci,
    pooled,
    summarize,
)


@pytest.mark.parametrize(
    "n, j, k, coverage",
    [
        (6, 1, 6, 1 - 2 / 64),
        (10, 2, 9, 1 - 2 * 11 / 1024),
        (20, 6, 15, 1 - 2 * (1 + 20 + 190 + 1140 + 4845 + 15504) / 2**20),
        (100, 40, 61, None),  # Le Boudec (2010), Table A.1
    ],
)
def test_median_ci_ranks_match_the_tables(n: int, j: int, k: int, coverage: float | None) -> None:
    got = median_ci_ranks(n)
    assert got is not None and got[:2] == (j, k)
    assert got[2] >= 0.95
    if coverage is not None:
        assert got[2] == pytest.approx(coverage)


def test_no_ci_below_six_samples() -> None:
    assert [median_ci_ranks(n) for n in range(0, 6)] == [None] * 6
    assert min_n_for_ci() == 6


def test_summarize_n10_uses_2nd_and_9th_order_statistics() -> None:
    values = [7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 4.0, 6.0]
    s = summarize(values)
    assert (s.n, s.median, s.ci_low, s.ci_high) == (10, 5.5, 2.0, 9.0)
    assert (s.min, s.max, s.mean) == (1.0, 10.0, 5.5)
    assert s.std == pytest.approx(np.std(np.arange(1, 11), ddof=1))
    assert s.cv == pytest.approx(s.std / 5.5)


def test_summarize_n20() -> None:
    rng = np.random.default_rng(1)
    values = rng.permutation(np.arange(101.0, 121.0))
    s = summarize(values)
    assert (s.ci_low, s.ci_high) == (106.0, 115.0)
    assert s.median == 110.5


def test_small_n_says_which_n_is_needed() -> None:
    s = summarize([1.0, 1.0, 1.0, 1.0])
    assert s.ci_low is None and s.ci_high is None and s.ci_coverage is None
    assert "n=4: too few samples for a 95% CI of the median (need >= 6)" in s.warnings
    one = summarize([2.5])
    assert one.std is None and one.cv is None and one.median == 2.5


def test_harmonic_mean_for_rates() -> None:
    s = summarize([1.0, 2.0, 4.0], rate=True)
    assert s.mean == pytest.approx(12 / 7)  # 3 / (1 + 1/2 + 1/4)
    assert summarize([1.0, 2.0, 4.0]).mean == pytest.approx(7 / 3)
    # harmonic mean of rates over equal work = total work / total time
    times = np.array([1.0, 2.0, 5.0])
    assert summarize(100 / times, rate=True).mean == pytest.approx(300 / times.sum())
    bad = summarize([0.0, 1.0], rate=True)
    assert bad.mean is None
    assert "harmonic mean undefined: a rate value is <= 0" in bad.warnings


def test_cv_warning() -> None:
    stable = summarize([100.0, 101.0, 99.0, 100.0, 100.5, 99.5])
    assert not any("CV" in w for w in stable.warnings)
    noisy = summarize([100.0, 110.0, 90.0, 100.0, 120.0, 80.0])
    assert noisy.cv == pytest.approx(np.std([100, 110, 90, 100, 120, 80], ddof=1) / 100)
    assert f"CV {noisy.cv:.1%} above 5%: unstable" in noisy.warnings
    assert "CV 14.1% above 5%: unstable" in noisy.warnings


def test_outliers_are_kept() -> None:
    s = summarize([1.0] * 9 + [1000.0])
    assert s.max == 1000.0 and s.median == 1.0 and s.mean == pytest.approx(100.9)


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(ValueError, match="NaN or Inf"):
        summarize([1.0, math.nan])
    with pytest.raises(ValueError, match="non-empty"):
        summarize([])


def test_pooled_separates_within_and_between_launch_variation() -> None:
    rng = np.random.default_rng(7)
    launches = [list(10.0 + rng.normal(0, 0.01, 50)) for _ in range(6)]
    p = pooled(launches)
    assert p.launches == 6 and len(p.per_launch) == 6 and p.all.n == 300
    assert p.ci_low is not None and p.ci_low <= p.median <= p.ci_high
    assert p.median == pytest.approx(float(np.median([np.median(x) for x in launches])))
    assert p.ci_low == min(p.medians) and p.ci_high == max(p.medians)  # n=6: (1, 6)
    assert p.spread is not None and p.spread < 0.01 and p.warnings == []

    shifted = [
        list(10.0 + rng.normal(0, 0.01, 50)),
        list(12.0 + rng.normal(0, 0.01, 50)),
        list(10.0 + rng.normal(0, 0.01, 50)),
    ]
    q = pooled(shifted)
    assert q.spread == pytest.approx((max(q.medians) - min(q.medians)) / np.median(q.medians))
    assert any("launch medians differ by" in w for w in q.warnings)
    assert any("CIs do not overlap" in w for w in q.warnings)
    assert any(
        "3 launches: too few for a 95% CI across launches (need >= 6)" in w for w in q.warnings
    )
    assert q.ci_low is None
    assert all(not any("CV" in w for w in s.warnings) for s in q.per_launch)  # each is calm
    single = pooled([[1.0, 2.0]])
    assert single.spread is None and "1 launch" in single.warnings[0]


def test_pooled_rates_use_harmonic_means() -> None:
    p = pooled([[1.0, 2.0], [4.0]], rate=True)
    assert p.all.mean == pytest.approx(12 / 7)
    assert p.per_launch[1].mean == 4.0


def test_compare_clearly_different() -> None:
    rng = np.random.default_rng(3)
    a = 1.0 + rng.normal(0, 0.02, 30)
    b = 1.5 + rng.normal(0, 0.02, 30)
    c = compare(a, b)
    assert c.p_value < 1e-6 and c.significant and c.verdict == "slower"
    assert c.ratio == pytest.approx(np.median(b) / np.median(a))
    assert compare(b, a).verdict == "faster"
    # bandwidth: higher is better, so the larger b is faster
    assert compare(a, b, lower_is_better=False).verdict == "faster"


def test_compare_identical() -> None:
    c = compare([2.0] * 10, [2.0] * 10)
    assert (c.p_value, c.significant, c.verdict, c.ratio) == (1.0, False, "same", 1.0)
    d = compare([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert d.verdict == "same" and d.p_value == pytest.approx(1.0)


def test_compare_noisy_tie() -> None:
    rng = np.random.default_rng(11)
    a = rng.lognormal(0.0, 0.3, 40)
    b = rng.lognormal(0.0, 0.3, 40)
    c = compare(a, b)
    assert c.p_value > 0.05 and c.verdict == "same"


def test_compare_needs_a_relevant_effect() -> None:
    """1 % slower, measured very precisely: significant p, but below the 5 % threshold."""
    rng = np.random.default_rng(5)
    a = 1.0 + rng.normal(0, 0.0005, 50)
    b = 1.01 + rng.normal(0, 0.0005, 50)
    c = compare(a, b)
    assert c.p_value < 1e-6 and not c.significant and c.verdict == "same"
    assert compare(a, b, threshold=0.005).verdict == "slower"


def test_compare_warns_when_n_cannot_reach_significance() -> None:
    c = compare([1.0, 1.1, 1.2], [5.0, 5.1, 5.2])
    assert c.verdict == "same" and c.p_value == pytest.approx(0.1)
    assert "too few samples for any Mann-Whitney p < 0.05" in c.warnings[0]


def test_compare_ignores_one_timer_tick() -> None:
    # 0.22 vs 0.23 us is 4.5 % but a single 10 ns tick of the timer: not a difference.
    a, b = [0.22] * 60 + [0.23] * 40, [0.23] * 60 + [0.24] * 40
    assert compare(a, b, threshold=0.01).verdict == "slower"
    assert compare(a, b, threshold=0.01, resolution=0.01).verdict == "same"
    assert compare(a, [v + 0.02 for v in a], threshold=0.01, resolution=0.01).verdict == "slower"


def test_compare_bimodal_mix_is_not_a_shift() -> None:
    # Two modes, 13 and 14.4 us; b has 8 % more samples in the slow mode. The medians
    # land in different modes (9 % apart) and Mann-Whitney notices the mix, but b is not
    # shifted against a: the Hodges-Lehmann shift is 0 and the verdict is "same".
    rng = np.random.default_rng(3)

    def mix(slow_fraction):
        slow = rng.random(2000) < slow_fraction
        return np.where(slow, 14.4, 13.0) + rng.normal(0, 0.05, 2000)

    a, b = mix(0.46), mix(0.54)
    c = compare(a, b)
    assert c.ratio > 1.05 and c.p_value < 0.05
    assert abs(c.shift) < 0.1 and c.verdict == "same"
    assert compare(a, a + 1.0).verdict == "slower"  # a real shift still counts


def test_compare_many_samples() -> None:
    # C(4000, 2000) has ~1200 digits: the smallest-p bound must not go through a float.
    rng = np.random.default_rng(7)
    a, b = rng.normal(1.0, 0.01, 2000), rng.normal(1.2, 0.01, 2000)
    c = compare(a, b)
    assert c.verdict == "slower" and c.warnings == []


def test_units() -> None:
    assert is_rate("MB/s") and is_rate("GFLOP/s") and not is_rate("us")
    assert lower_is_better("us") and not lower_is_better("MB/s")
    with pytest.raises(ValueError, match="pass lower_is_better explicitly"):
        lower_is_better("bytes")
