"""Observation detectors on synthetic curves with known answers and on the published LCC3
OSU tables (tests/fixtures/report, copied from /work/shared/data)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcscope.analysis import observations as obs

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import lcc3  # noqa: E402

SIZES = [0] + [2**k for k in range(0, 23)]


def _by_kind(found: list[obs.Observation], kind: str, subject: str | None = None):
    return [o for o in found if o.kind == kind and (subject is None or o.subject == subject)]


# ----------------------------------------------------------------- synthetic curves


def test_hockney_fit_recovers_alpha_beta():
    m = np.array(SIZES, dtype=float)
    t = 1.5 + m / 3000.0  # alpha 1.5 us, beta 3000 MB/s
    alpha, beta = obs.fit_hockney(m, t)
    assert alpha == pytest.approx(1.5, rel=1e-6)
    assert beta == pytest.approx(3000.0, rel=1e-6)


def test_segment_fit_finds_known_breakpoint():
    # eager up to 8 KiB (alpha 0.3, beta 6000), rendezvous from 16 KiB (alpha 2, beta 10000)
    m = np.array(SIZES, dtype=float)
    t = np.where(m <= 8192, 0.3 + m / 6000.0, 2.0 + m / 10000.0)
    noise = 1 + 0.01 * np.sin(np.arange(m.size))  # deterministic 1 % wiggle
    segs = obs.segment_fit(m, t * noise)
    assert len(segs) == 2
    assert segs[0].hi_size == 8192 and segs[1].lo_size == 16384
    assert segs[0].alpha == pytest.approx(0.3, rel=0.05)
    assert segs[1].beta == pytest.approx(10000, rel=0.05)
    found = obs.breakpoints(m, t * noise, subject="x core")
    bps = _by_kind(found, "breakpoint")
    assert [(b.numbers["lo_bytes"], b.numbers["hi_bytes"]) for b in bps] == [(8192, 16384)]
    assert "8 KiB" in bps[0].text and "16 KiB" in bps[0].text


def test_segment_fit_single_line_has_no_breakpoint():
    m = np.array(SIZES, dtype=float)
    t = (1.0 + m / 5000.0) * (1 + 0.02 * np.cos(np.arange(m.size)))
    assert len(obs.segment_fit(m, t)) == 1
    assert not _by_kind(obs.breakpoints(m, t), "breakpoint")


def test_flat_region_synthetic():
    m = [1, 2, 4, 8, 16, 32, 64, 128]
    t = [1.0, 1.02, 1.01, 1.05, 1.08, 1.4, 1.6, 2.0]
    flat = obs.flat_region(m, t)
    assert flat is not None and flat.numbers["up_to_bytes"] == 16
    assert "16 B" in flat.text
    assert obs.flat_region([1, 2], [1.0, 2.0]) is None


def test_dip_synthetic_and_noise_is_not_named():
    m = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    bw = [1000, 2000, 4000, 8000, 5000, 9000, 10000]
    dips = obs.bandwidth_dips(m, bw)
    assert [d.numbers["bytes"] for d in dips] == [16384]
    assert dips[0].numbers["drop"] == pytest.approx(1 - 5000 / 8000)
    # a 5 % shortfall is below the default 8 % and is not a dip
    smooth = [1000, 2000, 4000, 8000, 8500, 9500, 10000]
    assert obs.bandwidth_dips(m, smooth) == []
    # a wide CI swallows the dip
    half = [0, 0, 0, 0, 3000, 0, 0]
    assert obs.bandwidth_dips(m, bw, ci_halfwidth=half) == []


def test_pointer_chase_plateaus_named_after_caches():
    caches = {"L1d": 32 << 10, "L1i": 32 << 10, "L2": 256 << 10, "L3": 12 << 20}
    ws = [2**k for k in range(12, 29)]  # 4 KiB .. 256 MiB
    levels = []
    for w in ws:
        if w <= 32 << 10:
            levels.append(1.2)
        elif w <= 256 << 10:
            levels.append(4.0)
        elif w <= 12 << 20:
            levels.append(15.0)
        else:
            levels.append(85.0)
    lat = np.array(levels) * (1 + 0.02 * np.sin(np.arange(len(ws))))
    found = obs.cache_plateaus(ws, lat, caches)
    assert len(found) == 4
    assert [o.numbers["cache"] for o in found] == ["L1d", "L2", "L3", None]
    assert found[0].numbers["level"] == pytest.approx(1.2, rel=0.05)
    assert found[3].numbers["level"] == pytest.approx(85, rel=0.05)
    assert "L1d size of 32 KiB" in found[0].text


def test_efficiency():
    e = obs.efficiency("dgemm", 449.4, 448.0, "GFLOP/s", "fp64", "20 cores x 2.8 GHz x 8")
    assert e is not None and e.severity == "warning" and e.numbers["efficiency"] > 1
    assert "100.3%" in e.text
    assert obs.efficiency("x", 1.0, None, "MB/s") is None


def test_instability_flags_disagreeing_launches():
    rng = np.random.default_rng(2)
    stable = [rng.normal(10, 0.05, 20) for _ in range(3)]
    assert obs.instability("a", stable) == []
    shifted = [rng.normal(10, 0.05, 20), rng.normal(12, 0.05, 20), rng.normal(10, 0.05, 20)]
    found = obs.instability("b", shifted)
    assert any("launch medians differ" in o.text for o in found)
    assert all(o.severity == "warning" and o.numbers["launches"] == 3 for o in found)


# ----------------------------------------------------------------- LCC3 published tables


@pytest.fixture(scope="module")
def lcc3_obs():
    lat, bw = lcc3.curves()
    return obs.p2p_observations(lat, bw)


@pytest.mark.parametrize("place", ["core", "socket"])
def test_lcc3_16k_bandwidth_dip(lcc3_obs, place):
    dips = _by_kind(lcc3_obs, "dip", f"openmpi {place}")
    at16k = [d for d in dips if d.numbers["bytes"] == 16384]
    assert at16k, [d.text for d in dips]
    assert at16k[0].numbers["before_bytes"] == 8192
    assert "16 KiB" in at16k[0].text
    if place == "core":
        assert at16k[0].numbers["before_MBps"] == pytest.approx(10634.56)
        assert at16k[0].numbers["at_MBps"] == pytest.approx(6531.85)
        assert "10.6 GB/s" in at16k[0].text and "6.53 GB/s" in at16k[0].text


def test_lcc3_node_bandwidth_has_no_16k_dip(lcc3_obs):
    assert not [d for d in _by_kind(lcc3_obs, "dip", "openmpi node") if d.numbers["bytes"] == 16384]


def test_lcc3_node_core_latency_ratio(lcc3_obs):
    ratios = [
        r
        for r in _by_kind(lcc3_obs, "ratio")
        if r.numbers["metric"] == "latency" and r.numbers["label"] == "openmpi node"
    ]
    assert len(ratios) == 1
    r = ratios[0]
    assert r.numbers["base"] == "openmpi core" and r.numbers["bytes"] == 8
    assert r.numbers["ratio"] == pytest.approx(1.64 / 0.16)
    assert 9 < r.numbers["ratio"] < 11
    assert "10.2x" in r.text and "8 B" in r.text


@pytest.mark.parametrize("place", ["core", "socket"])
def test_lcc3_flat_latency_to_16_bytes(lcc3_obs, place):
    flat = _by_kind(lcc3_obs, "flat", f"openmpi {place}")
    assert len(flat) == 1
    assert flat[0].numbers["up_to_bytes"] == 16
    assert "up to 16 B" in flat[0].text


def test_lcc3_core_latency_breakpoint_at_eager_limit(lcc3_obs):
    bps = _by_kind(lcc3_obs, "breakpoint", "openmpi core")
    assert (8192, 16384) in [(b.numbers["lo_bytes"], b.numbers["hi_bytes"]) for b in bps]


def test_lcc3_node_bandwidth_plateau(lcc3_obs):
    plateau = _by_kind(lcc3_obs, "plateau", "openmpi node")[0]
    assert 3200 < plateau.numbers["median_MBps"] < 3400
    assert plateau.numbers["from_bytes"] <= 65536


def test_lcc3_4mib_core_outlier(lcc3_obs):
    inv = _by_kind(lcc3_obs, "inversion")
    assert [(o.numbers["bytes"], o.numbers["near"]) for o in inv] == [(4194304, "openmpi core")]


def test_every_observation_cites_finite_numbers(lcc3_obs):
    for o in lcc3_obs:
        assert o.numbers and o.text and o.severity in obs.SEVERITIES
        for v in o.numbers.values():
            if isinstance(v, float):
                assert not math.isnan(v)
