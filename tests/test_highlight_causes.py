"""One highlight per cause (issue 46 part 5): bandwidth dips of several curves that one
recorded protocol threshold explains, or that sit at the same unexplained size step,
read as one line naming the curves and sizes; different causes stay separate lines."""

from __future__ import annotations

from hpcscope.analysis import highlights, mpi_transport
from hpcscope.analysis.observations import bandwidth_dips

KIB = 1024.0
SIZES = [KIB * 2**i for i in range(8)]  # 1 KiB ... 128 KiB


def _curve(step_at: float, drop: float) -> list[float]:
    """A bandwidth curve rising with size that falls by `drop` at `step_at` and
    recovers two sizes later: the eager-to-rendezvous step."""
    out = []
    for s in SIZES:
        rate = 1000.0 * (s / KIB) ** 0.5
        if step_at <= s < step_at * 4:
            rate *= 1 - drop
        out.append(rate)
    return out


def _eager(name: str, limit: int) -> list[mpi_transport.Threshold]:
    return [mpi_transport.Threshold(limit, name, str(limit), "the eager limit", "MPI_T")]


def _dips(label: str, step_at: float, drop: float, thresholds) -> list:
    found = bandwidth_dips(
        SIZES,
        _curve(step_at, drop),
        subject=label,
        explain=True,
        thresholds=thresholds,
    )
    assert found, label  # the fixture curve must dip, or the test proves nothing
    return highlights.group_dips(found)


def test_one_recorded_threshold_on_several_curves_is_one_line():
    vader = _eager("btl_vader_eager_limit", 4096)
    found = [
        (o, "run1-p2p")
        for label, drop in (("openmpi default", 0.85), ("openmpi core", 0.64))
        for o in _dips(label, 4 * KIB, drop, vader)
    ]
    dips = [h for h in highlights.rank(found) if h.tier == 5]
    assert len(dips) == 1, [h.text for h in dips]
    text = dips[0].text
    assert "protocol switch (btl_vader_eager_limit = 4096)" in text
    assert "openmpi default and core at 4-8 KiB" in text
    assert dips[0].anchor == "run1-p2p"


def test_different_causes_stay_separate_lines():
    vader = _eager("btl_vader_eager_limit", 4096)
    ch4 = _eager("MPIR_CVAR_CH4_EAGER_LIMIT", 16384)
    found = [
        (o, "run1-p2p")
        for label, at, thr in (
            ("openmpi default", 4 * KIB, vader),
            ("openmpi core", 4 * KIB, vader),
            ("mpich default", 16 * KIB, ch4),
            ("mpich core", 16 * KIB, ch4),
        )
        for o in _dips(label, at, 0.7, thr)
    ]
    texts = sorted(h.text for h in highlights.rank(found) if h.tier == 5)
    assert len(texts) == 2, texts
    assert "MPIR_CVAR_CH4_EAGER_LIMIT = 16384" in texts[0] and "mpich default and core" in texts[0]
    assert "btl_vader_eager_limit = 4096" in texts[1] and "openmpi default and core" in texts[1]


def test_the_same_unexplained_step_is_one_line_that_says_not_explained():
    found = [
        (o, "run1-p2p")
        for label in ("mpich default", "mpich core", "openmpi numa")
        for o in _dips(label, 16 * KIB, 0.6, [])
    ]
    (line,) = [h.text for h in highlights.rank(found) if h.tier == 5]
    # the step down at 16 KiB and the low point at 32 KiB are one step of each curve
    assert "same size step, not explained" in line
    assert line.endswith("mpich default, mpich core and openmpi numa at 16-32 KiB.")


def test_one_curve_alone_keeps_its_own_sentence_and_other_runs_are_not_merged():
    vader = _eager("btl_vader_eager_limit", 4096)
    (o,) = _dips("openmpi core", 4 * KIB, 0.8, vader)
    (alone,) = highlights.rank([(o, "run1-p2p")])
    assert alone.text == o.text
    (p,) = _dips("openmpi core", 4 * KIB, 0.8, vader)
    two_runs = highlights.rank([(o, "run1-p2p"), (p, "run2-p2p")])
    assert [h.anchor for h in two_runs] == ["run1-p2p", "run2-p2p"]


def test_shallow_dips_are_still_no_highlight():
    found = [(o, "a") for label in ("x a", "x b") for o in _dips(label, 4 * KIB, 0.3, [])]
    assert highlights.rank(found) == []
