"""Statistics over raw benchmark values, following Hoefler & Belli (SC15).

T. Hoefler and R. Belli, "Scientific Benchmarking of Parallel Computing Systems: Twelve
ways to tell the masses when reporting performance results", SC15. The rules used here:

- Performance data is rarely normal (long right tails, multiple modes), so the centre is
  the median and its uncertainty a *nonparametric* confidence interval from order
  statistics (their Rule 5 / Sec. 4.2.2; the method is in J.-Y. Le Boudec, "Performance
  Evaluation of Computer and Communication Systems", EPFL Press 2010, Thm. 2.1).
- Report min, max, mean, standard deviation and coefficient of variation too, and warn
  when the CV says the measurement is unstable.
- Means of rates are harmonic (their Rule 3): the arithmetic mean of bandwidths over
  equal amounts of work overstates the rate; the harmonic mean equals total work / total
  time.
- Several launches, not one: within-launch noise and between-launch variation are
  judged separately (`pooled`), because samples of different launches are not i.i.d.
- Comparisons are tested, not eyeballed (their Rule 7): Mann-Whitney U two-sided test,
  plus a minimum effect size so that a significant 0.1 % difference is not "faster". The
  effect size is the Hodges-Lehmann shift (the estimator that goes with Mann-Whitney),
  not the difference of medians: on bimodal timings (common from ~10 KB up) a few per
  cent more samples in the slower mode move a median by the whole gap between modes.

Nothing here smooths, drops or invents values: outliers stay in, and a statistic that
cannot be computed (CI from too few samples) is None with a warning saying why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats as sps

CI_LEVEL = 0.95
CV_LIMIT = 0.05  # above: "unstable" (Hoefler & Belli use 5 % as an example bound)
ALPHA = 0.05  # significance level for compare()
_TIME_UNITS = {"ns", "us", "ms", "s", "sec", "cycles"}


def is_rate(unit: str) -> bool:
    """Units per second (MB/s, GB/s, Gbit/s, FLOP/s, msg/s) are rates: harmonic means."""
    return unit.strip().endswith("/s") or unit.strip() in {"Hz", "MHz", "GHz", "IOPS"}


def lower_is_better(unit: str) -> bool:
    """Times: lower is better; rates: higher is better. Other units: the caller says."""
    if is_rate(unit):
        return False
    if unit.strip() in _TIME_UNITS:
        return True
    if unit.strip() == "%":  # nbc's overlap: the share of communication hidden
        return False
    raise ValueError(
        f"cannot tell whether a lower or a higher value in {unit!r} is "
        "better; pass lower_is_better explicitly"
    )


@lru_cache(maxsize=4096)  # pure in (n, level); scipy's binomial calls are slow
def median_ci_ranks(n: int, level: float = CI_LEVEL) -> tuple[int, int, float] | None:
    """1-based ranks (j, k) of the order statistics bounding the median, and the exact
    coverage, or None when n is too small for `level`.

    P(X_(j) <= median < X_(k)) = P(j <= B <= k-1) with B ~ Binomial(n, 1/2); with the
    symmetric choice k = n + 1 - j this is 1 - 2 P(B <= j-1). j is the largest rank with
    P(B <= j-1) <= (1-level)/2 (Le Boudec 2010, Thm. 2.1; Hoefler & Belli SC15 Sec. 4.2.2).
    For 95 %: n=6 -> (1, 6), n=10 -> (2, 9), n=20 -> (6, 15).
    """
    if n < 1:
        return None
    tail = (1.0 - level) / 2.0
    q = int(sps.binom.ppf(tail, n, 0.5))  # smallest q with cdf(q) >= tail
    if sps.binom.cdf(q, n, 0.5) > tail + 1e-12:
        q -= 1  # largest q with cdf(q) <= tail
    if q < 0:
        return None
    j = q + 1
    coverage = 1.0 - 2.0 * float(sps.binom.cdf(q, n, 0.5))
    return j, n + 1 - j, coverage


@lru_cache(maxsize=16)
def min_n_for_ci(level: float = CI_LEVEL) -> int:
    """Smallest sample count that has a nonparametric CI of the median at `level`."""
    n = 1
    while median_ci_ranks(n, level) is None:
        n += 1
    return n


@dataclass
class Summary:
    """Summary of one set of raw values (one launch's sample, or several pooled)."""

    n: int
    median: float
    ci_low: float | None  # nonparametric CI of the median; None when n is too small
    ci_high: float | None
    ci_coverage: float | None  # exact coverage of [ci_low, ci_high] (>= the level asked)
    min: float
    max: float
    mean: float | None  # harmonic when rate (None if a rate value is <= 0)
    std: float | None  # sample standard deviation (ddof=1); None for n=1
    cv: float | None  # std / arithmetic mean
    rate: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _as_array(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("summarize needs a non-empty list of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            "values contain NaN or Inf; the record validation should have rejected them"
        )
    return arr


def summarize(
    values: Sequence[float],
    rate: bool = False,
    *,
    level: float = CI_LEVEL,
    cv_limit: float = CV_LIMIT,
) -> Summary:
    """Median with its nonparametric CI, min, max, mean, std, CV, and stability warnings.

    rate=True: the values are rates (e.g. MB/s) and `mean` is the harmonic mean
    (Hoefler & Belli SC15, Rule 3). CV is std over the arithmetic mean in both cases,
    the usual definition, so that CV thresholds mean the same for times and rates.
    """
    arr = _as_array(values)
    n = int(arr.size)
    warnings: list[str] = []
    ordered = np.sort(arr)
    ranks = median_ci_ranks(n, level)
    if ranks is None:
        ci_low = ci_high = coverage = None
        warnings.append(
            f"n={n}: too few samples for a {level:.0%} CI of the median "
            f"(need >= {min_n_for_ci(level)})"
        )
    else:
        j, k, coverage = ranks
        ci_low, ci_high = float(ordered[j - 1]), float(ordered[k - 1])
    median = float(np.median(arr))
    arith = float(np.mean(arr))
    if rate:
        if np.all(arr > 0):
            mean: float | None = float(n / np.sum(1.0 / arr))
        else:
            mean = None
            warnings.append("harmonic mean undefined: a rate value is <= 0")
    else:
        mean = arith
    std = float(np.std(arr, ddof=1)) if n > 1 else None
    cv = std / abs(arith) if std is not None and arith != 0 else None
    if cv is not None and cv > cv_limit:
        warnings.append(f"CV {cv:.1%} above {cv_limit:.0%}: unstable")
    if ci_low is not None and ci_high is not None and median != 0:
        half = max(median - ci_low, ci_high - median) / abs(median)
        if half > cv_limit:
            warnings.append(
                f"{level:.0%} CI of the median reaches {half:.1%} from it "
                f"(more than {cv_limit:.0%}): take more samples"
            )
    return Summary(
        n=n,
        median=median,
        ci_low=ci_low,
        ci_high=ci_high,
        ci_coverage=coverage,
        min=float(ordered[0]),
        max=float(ordered[-1]),
        mean=mean,
        std=std,
        cv=cv,
        rate=rate,
        warnings=warnings,
    )


@dataclass
class Pooled:
    """One measurement (e.g. a message size) over several launches (repeats).

    `median`/`ci_*` are over the per-launch medians, so the CI reflects launch-to-launch
    variation, which is what a user re-running the job will see; `all` summarises every
    raw value pooled (its CI is too narrow when launches differ: samples of different
    launches are not i.i.d., Hoefler & Belli SC15 Sec. 4.2). `spread` is the relative
    range of the launch medians, (max - min) / median, and `cv` their CV.
    """

    launches: int
    per_launch: list[Summary]
    medians: list[float]
    median: float
    ci_low: float | None
    ci_high: float | None
    spread: float | None
    cv: float | None
    all: Summary
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pooled(
    groups: Sequence[Sequence[float]],
    rate: bool = False,
    *,
    level: float = CI_LEVEL,
    spread_limit: float = CV_LIMIT,
) -> Pooled:
    """Summarise one measurement over several launches: per-launch summaries, then the
    across-launch median/CI of the launch medians and their spread.

    Warns when launches differ more than within-launch noise explains: the launch
    medians' CIs do not overlap, or their relative spread exceeds `spread_limit`.
    """
    if not groups:
        raise ValueError("pooled needs at least one launch's values")
    per_launch = [summarize(g, rate, level=level, cv_limit=spread_limit) for g in groups]
    medians = [s.median for s in per_launch]
    across = summarize(medians, level=level, cv_limit=spread_limit)
    everything = summarize([v for g in groups for v in g], rate, level=level, cv_limit=spread_limit)
    k = len(groups)
    warnings: list[str] = []
    spread: float | None = None
    if k < 2:
        warnings.append(
            "1 launch: stability across launches cannot be judged (run several repeats)"
        )
    else:
        centre = float(np.median(medians))
        spread = (max(medians) - min(medians)) / abs(centre) if centre else None
        if spread is not None and spread > spread_limit:
            warnings.append(
                f"launch medians differ by {spread:.1%} (more than "
                f"{spread_limit:.0%}): not stable across launches"
            )
        with_ci = [
            (s.ci_low, s.ci_high)
            for s in per_launch
            if s.ci_low is not None and s.ci_high is not None
        ]
        if len(with_ci) >= 2:
            highest_low = max(low for low, _ in with_ci)
            lowest_high = min(high for _, high in with_ci)
            if highest_low > lowest_high:
                warnings.append(
                    "launch medians' CIs do not overlap: launches differ more "
                    "than within-launch noise explains"
                )
        if across.ci_low is None:
            warnings.append(
                f"{k} launches: too few for a {level:.0%} CI across launches "
                f"(need >= {min_n_for_ci(level)})"
            )
    return Pooled(
        launches=k,
        per_launch=per_launch,
        medians=medians,
        median=float(np.median(medians)),
        ci_low=across.ci_low,
        ci_high=across.ci_high,
        spread=spread,
        cv=across.cv if k > 1 else None,
        all=everything,
        warnings=warnings,
    )


@dataclass
class Comparison:
    """b relative to a. `ratio` = median(b) / median(a); `rel_diff` = ratio - 1; `shift`
    = how far b lies from a (Hodges-Lehmann), which decides `significant`."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float
    rel_diff: float
    p_value: float
    shift: float  # Hodges-Lehmann estimate of b - a (median pairwise difference)
    significant: bool
    verdict: str  # "faster", "slower" or "same": b relative to a
    lower_is_better: bool
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# Pairs for the Hodges-Lehmann shift: beyond this many, both samples are thinned evenly
# (every k-th sorted value, so the result is deterministic) to bound memory and time. At
# 250,000 two lognormal samples of 1,000 gave the shift within 3e-6 of the median of the
# exact one, in 2 ms instead of 26 (a report's verdicts compare hundreds of such cells).
_HL_MAX_PAIRS = 250_000


def hodges_lehmann_shift(a: np.ndarray, b: np.ndarray) -> float:
    """Median of all differences b_j - a_i: the shift of b against a that Mann-Whitney
    tests. Cost O(n_a n_b) (thinned above _HL_MAX_PAIRS pairs)."""
    thin = math.ceil(math.sqrt(a.size * b.size / _HL_MAX_PAIRS))
    if thin > 1:
        a, b = np.sort(a)[thin // 2 :: thin], np.sort(b)[thin // 2 :: thin]
    return float(np.median(np.subtract.outer(b, a)))


def compare(
    a: Sequence[float],
    b: Sequence[float],
    threshold: float = 0.05,
    *,
    lower_is_better: bool = True,
    alpha: float = ALPHA,
    resolution: float = 0.0,
) -> Comparison:
    """Is b faster or slower than a? Mann-Whitney U, two-sided (Hoefler & Belli SC15,
    Rule 7: compare distributions with a nonparametric test, not means by eye).

    Significant only when p < alpha AND the Hodges-Lehmann shift of b against a is more
    than `threshold` (relative to median(a)) AND more than `resolution` (the timer's
    tick, in the samples' unit: quantized samples shift in whole ticks, so a one-tick
    difference cannot be told from quantization): statistical significance without a
    relevant effect is "same".
    lower_is_better=True for times (latency), False for rates (bandwidth).
    """
    xa, xb = _as_array(a), _as_array(b)
    ma, mb = float(np.median(xa)), float(np.median(xb))
    if ma != 0:
        ratio = mb / ma
    else:
        ratio = 1.0 if mb == 0 else math.inf
    rel_diff = ratio - 1.0
    warnings: list[str] = []
    if np.all(xa == xa[0]) and np.all(xb == xa[0]):
        p = 1.0  # identical constants: scipy's tie correction divides by 0
    else:
        p = float(sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
        if math.isnan(p):
            p = 1.0
    # Smallest possible p (all of a below all of b) is 2 / C(n_a + n_b, n_a); compared as
    # exact integers, since the binomial overflows a float beyond ~1000 samples.
    arrangements = math.comb(xa.size + xb.size, xa.size)
    if arrangements <= 2 / alpha:
        warnings.append(
            f"n={xa.size} vs n={xb.size}: too few samples for any Mann-Whitney "
            f"p < {alpha} (smallest possible is {min(2 / arrangements, 1.0):.3f})"
        )
    shift = hodges_lehmann_shift(xa, xb)
    relevant = abs(shift) > threshold * abs(ma) if ma != 0 else shift != 0
    more_than_a_tick = abs(shift) > resolution * (1 + 1e-6)  # 1e-6: decimal rounding
    significant = p < alpha and relevant and more_than_a_tick
    if not significant:
        verdict = "same"
    elif (shift < 0) == lower_is_better:
        verdict = "faster"
    else:
        verdict = "slower"
    return Comparison(
        n_a=int(xa.size),
        n_b=int(xb.size),
        median_a=ma,
        median_b=mb,
        ratio=ratio,
        rel_diff=rel_diff,
        p_value=p,
        shift=shift,
        significant=significant,
        verdict=verdict,
        lower_is_better=lower_is_better,
        warnings=warnings,
    )
