"""FLOP/s and op/s peaks at the measured clock (analysis/clock_peaks.py)."""

from pathlib import Path

import pytest

from hpcscope.analysis.clock_peaks import at_measured_clock, measured_clock
from hpcscope.analysis.node_table import efficiency_observations, node_table
from hpcscope.machine.peaks import compute_peaks

FIX = Path(__file__).parent / "fixtures" / "node"
# no clock in the model name: 'cpu MHz' 2000 is the clock the peaks are computed with
SPR = (FIX / "cpuinfo_sapphire_rapids_8480.txt").read_text()


def clock(threads: int, values: list[float]) -> dict:
    return {
        "benchmark": "cpu",
        "metric": "frequency",
        "unit": "GHz",
        "params": {"workload": "cpu_clock", "kernel": "dependent_add_chain", "threads": threads},
        "values": values,
    }


def fp64(threads: int, values: list[float]) -> dict:
    return {
        "benchmark": "cpu",
        "metric": "flops",
        "unit": "GFLOP/s",
        "params": {"workload": "cpu_peak", "op": "fma", "precision": "fp64", "threads": threads},
        "values": values,
    }


def test_the_clock_with_the_most_threads_is_used():
    samples = [clock(1, [3.0, 3.1, 3.2]), clock(2, [2.7, 2.8, 2.6]), fp64(2, [170.0])]
    assert measured_clock(samples) == (2.7, 2, 3)
    assert measured_clock([fp64(2, [1.0])]) is None


def test_peaks_scale_to_the_measured_clock_and_state_the_nominal():
    nominal = {p.name: p for p in compute_peaks(SPR, {"cores": 2}, {})}
    assert nominal["fp64"].clock_ghz == 2.0
    scaled = {p["name"]: p for p in at_measured_clock(nominal.values(), [clock(2, [2.5])])}
    for name in ("fp64", "fp32", "int8", "bf16_amx"):
        assert scaled[name]["value"] == pytest.approx(nominal[name].value * 2.5 / 2.0)
        assert scaled[name]["value_at_nominal_clock"] == nominal[name].value
    formula = scaled["fp64"]["formula"]
    assert formula.startswith("2 cores x 2.5 GHz (measured: dependent-add chain on 2 threads")
    assert "nominal 2 GHz gives 128 GFLOP/s" in formula and "32 FP64 FLOP/cycle" in formula
    # memory and device peaks have no clock: unchanged
    assert scaled["mem"] == {**vars(nominal["mem"])}


def test_a_clock_the_user_stated_is_kept():
    peaks = compute_peaks(SPR, {"cores": 2}, {"freq": "3GHz"})
    (fp,) = [p for p in at_measured_clock(peaks, [clock(2, [2.5])]) if p["name"] == "fp64"]
    assert fp["value"] == pytest.approx(2 * 3.0 * 32) and "measured" not in fp["formula"]


def test_efficiency_against_the_measured_clock_peak():
    peaks = compute_peaks(SPR, {"cores": 2}, {})
    samples = [clock(2, [2.7, 2.7, 2.7]), fp64(2, [168.0, 170.0])]
    (row,) = [r for r in node_table(samples, peaks) if r["workload"] == "cpu_peak"]
    # 170 / (2 x 2.7 x 32) = 98 %, not 133 % of the nominal 2.0 GHz peak
    assert row["eff_vs_peak"] == pytest.approx(170 / (2 * 2.7 * 32))
    assert not [o for o in efficiency_observations([row]) if o.severity == "warning"]
    # above the measured-clock peak: a finding named for what the formula assumed
    over = dict(row, measured_best=180.0)
    (o,) = efficiency_observations([over])
    assert o.severity == "warning" and "higher clock than the clock kernel measured" in o.text


def test_show_gives_the_peaks_at_the_measured_clock_in_a_line_or_two():
    from dataclasses import asdict

    from hpcscope.report.show import peak_lines

    peaks = compute_peaks(SPR, {"cores": 2}, {})
    notes = [{"kind": "info", "text": "x", "data": {}}]
    notes += [{"kind": "peak", "text": f"{p.name} old", "data": asdict(p)} for p in peaks]
    run = {"id": 7, "notes": notes}
    first, *rest = peak_lines(run, [clock(2, [2.5])])
    assert first.startswith("fp64 160, ") and " GFLOP/s" in first
    assert "(at the measured clock, 2.5 GHz; nominal " in first
    assert first.endswith("formulas: hpcscope report 7")
    assert len(rest) <= 1 and all(line.startswith("none known for ") for line in rest)
    (stated, *_) = peak_lines(run, [])  # no clock measured: the stated peaks
    assert "measured clock" not in stated and "fp64 " in stated
    assert peak_lines({"id": 1, "notes": []}, []) == []
    damaged = [dict(n, data=dict(n["data"], nominal_clock_ghz="x")) for n in notes[1:]]
    assert "measured clock" not in peak_lines({"id": 2, "notes": damaged}, [])[0]


def test_damaged_clock_or_peak_fields_leave_the_peaks_as_stored():
    """An imported store may hold anything: such a peak or clock sample is not used."""
    peaks = [dict(p, clock_ghz="fast") for p in at_measured_clock(compute_peaks(SPR, {}, {}), [])]
    assert at_measured_clock(peaks, [clock(2, [2.5])]) == peaks
    bad = [dict(clock(2, [2.5]), params={"workload": "cpu_clock", "threads": "x"})]
    bad += [clock(1, [float("nan"), -1.0]), dict(clock(1, [2.0]), params=None)]
    assert measured_clock(bad) is None
