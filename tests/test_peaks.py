"""Theoretical peaks from /proc/cpuinfo fixtures of known CPUs (formulas, not this machine)."""

from pathlib import Path

import pytest

from hpcscope.machine.peaks import (
    compute_peaks,
    identify_uarch,
    parse_cpuinfo,
    parse_dmidecode_memory,
)

FIX = Path(__file__).parent / "fixtures" / "node"


def text(name: str) -> str:
    return (FIX / f"cpuinfo_{name}.txt").read_text()


def by_name(peaks):
    return {p.name: p for p in peaks}


def test_skylake_gold_6130_has_two_avx512_fma_units():
    cpu = parse_cpuinfo(text("skylake_gold6130"))
    assert identify_uarch(cpu).dp_per_cycle == 32
    peaks = by_name(compute_peaks(text("skylake_gold6130"), {"cores": 32}, {}))
    # 32 cores x 2.1 GHz x 32 DP FLOP/cycle
    assert peaks["fp64"].value == pytest.approx(2150.4)
    assert peaks["fp32"].value == pytest.approx(4300.8)
    assert "32 cores x 2.1 GHz x 32 FP64 FLOP/cycle (AVX-512, 2 FMA units)" in peaks["fp64"].formula
    assert "nominal" in peaks["fp64"].source


def test_skylake_silver_has_one_fma_unit():
    t = text("skylake_gold6130").replace("Gold 6130", "Silver 4114")
    assert identify_uarch(parse_cpuinfo(t)).dp_per_cycle == 16


def test_haswell_16():
    peaks = by_name(compute_peaks(text("haswell_e5_2680v3"), None, {}))
    cpu = parse_cpuinfo(text("haswell_e5_2680v3"))
    assert cpu.cores == 4  # the fixture lists 2 cores on each of 2 sockets
    assert identify_uarch(cpu).dp_per_cycle == 16
    assert peaks["fp64"].value == pytest.approx(4 * 2.5 * 16)


def test_sandy_bridge_8_without_fma():
    peaks = by_name(compute_peaks(text("sandybridge_e5_2670"), {"cores": 16}, {}))
    assert peaks["fp64"].value == pytest.approx(16 * 2.6 * 8)
    assert "AVX without FMA" in peaks["fp64"].formula
    assert "fp16" not in peaks and "bf16" not in peaks


def test_sapphire_rapids_half_precision_and_amx():
    peaks = by_name(compute_peaks(text("sapphire_rapids_8480"), {"cores": 56}, {"freq": "2.0GHz"}))
    assert peaks["fp64"].value == pytest.approx(56 * 2.0 * 32)
    assert peaks["fp16"].value == pytest.approx(4 * peaks["fp64"].value)
    # VDPBF16PS: 4 FLOP per lane, but one instruction per 2 cycles (measured)
    assert peaks["bf16"].value == pytest.approx(peaks["fp64"].value)
    assert peaks["bf16_amx"].value == pytest.approx(56 * 2.0 * 1024)
    assert "user value" in peaks["fp64"].source


def test_zen5_bf16_issues_like_an_fma():
    # This project's AMD build machine (family 26): the BF16 kernel did 3.72x the FP64 FMA
    # kernel on one core, which the Intel rule (BF16 = the FP64 rate) put at 368 % of peak.
    peaks = by_name(compute_peaks(text("zen5_epyc_vm"), None, {"measured_ghz": 4.18}))
    assert identify_uarch(parse_cpuinfo(text("zen5_epyc_vm"))).name.startswith("Zen 5")
    assert peaks["fp64"].value == pytest.approx(2 * 4.18 * 32)
    assert peaks["bf16"].value == pytest.approx(4 * peaks["fp64"].value)
    assert "2 per cycle" in peaks["bf16"].formula
    assert 0.85 < 492.2 / (peaks["bf16"].value / 2) <= 1.0  # the 1-thread kernel measured


def test_this_vm_epyc_uses_cpu_mhz_and_says_so():
    cpu = parse_cpuinfo(text("this_vm_epyc"))
    u = identify_uarch(cpu)
    assert (u.name, u.dp_per_cycle) == ("Zen 3", 16)
    peaks = by_name(compute_peaks(text("this_vm_epyc"), None, {}))
    assert peaks["fp64"].value == pytest.approx(2 * cpu.mhz / 1000 * 16)
    assert "cpu MHz" in peaks["fp64"].source and "nominal not reported" in peaks["fp64"].source
    # A measured clock is preferred over 'cpu MHz' when the model name has none.
    measured = by_name(compute_peaks(text("this_vm_epyc"), None, {"measured_ghz": 3.2}))
    assert measured["fp64"].value == pytest.approx(2 * 3.2 * 16)
    assert "measured" in measured["fp64"].source


def test_unknown_model_assumed_from_isa_and_said():
    t = text("haswell_e5_2680v3").replace("model\t\t: 63", "model\t\t: 250")
    peaks = by_name(compute_peaks(t, None, {}))
    assert "assumed" in peaks["fp64"].formula and "assumed from the ISA" in peaks["fp64"].source


def test_memory_unknown_without_dmidecode_and_from_dimms():
    peaks = by_name(compute_peaks(text("this_vm_epyc"), None, {}))
    assert peaks["mem"].value is None and "measured" in peaks["mem"].formula
    dmi = "\n\n".join(
        f"Handle 0x00{i}, DMI type 17, 92 bytes\nMemory Device\n\tData Width: 64 bits\n"
        f"\tSize: 16 GB\n\tSpeed: 2666 MT/s\n\tConfigured Memory Speed: 2666 MT/s"
        for i in range(6)
    )
    dmi += "\n\nHandle 0x0099, DMI type 17\nMemory Device\n\tSize: No Module Installed\n"
    assert len(parse_dmidecode_memory(dmi)) == 6
    mem = by_name(compute_peaks(text("skylake_gold6130"), None, {}, dmidecode_text=dmi))["mem"]
    assert mem.value == pytest.approx(6 * 2666 * 8)  # MB/s
    assert mem.formula == "6 channels x 2666 MT/s x 8 bytes"


def test_user_overrides_for_devices():
    peaks = by_name(
        compute_peaks(
            text("this_vm_epyc"), None, {"disk": "2GB/s", "net": "100Gbit/s", "mem": 51200}
        )
    )
    assert peaks["disk"].value == pytest.approx(2000)
    assert peaks["net"].value == pytest.approx(100000)
    assert peaks["mem"].value == pytest.approx(51200)
    assert all(p.formula for p in peaks.values())
