"""Theoretical peaks of a node, each with the formula and the inputs it used.

Hand-written reports get peaks wrong (e.g. "cores x 8 bytes x clock" for FLOP/s). Here a
FLOP/s peak is always cores x frequency x FLOPs per cycle, where FLOPs per cycle come from
the vector ISA the CPU reports and the number of FMA units of its microarchitecture (a
small table; unknown models are assumed from the ISA and the Peak says so). Memory, disk
and network peaks come from what the machine reports (dmidecode, sysfs link speed) or from
the user (`--peak disk=2GB/s`); when nothing is known the value is None and the formula
says that the measured best is used instead. Every efficiency names the Peak it divides by.

Units match the sample records: GFLOP/s for flops, MB/s (10^6 B/s) for memory and disk
bandwidth, Mbit/s for network throughput.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from hpcscope.machine.node_facts import NodeFacts


@dataclass
class Peak:
    name: str  # "fp64", "fp32", "fp16", "bf16", "bf16_amx", "int8".."int64", "mem", "disk",
    # "disk_iops", "net"
    value: float | None  # None: unknown (the formula says what is used instead)
    unit: str  # same unit as the samples it bounds
    formula: str  # shown to the user
    source: str  # where each input came from, and what was assumed
    metric: str = "flops"  # the sample metric it bounds
    match: dict[str, Any] = field(default_factory=dict)  # sample params/benchmark it bounds
    # FLOP/s and op/s peaks: the clock in the formula (value is proportional to it), so a
    # clock measured under load can replace it (analysis/clock_peaks.py); None elsewhere
    clock_ghz: float | None = None
    # FLOP/s and op/s peaks: the cores in the formula (value is proportional to them), so
    # a row of fewer threads gets the peak of as many cores; None elsewhere
    cores: int | None = None


# ---------------------------------------------------------------------------- cpuinfo


@dataclass
class CpuInfo:
    vendor: str = ""
    family: int = -1
    model: int = -1
    model_name: str = ""
    flags: set[str] = field(default_factory=set)
    mhz: float | None = None
    processors: int = 0
    cores: int = 0  # distinct (physical id, core id); 0 when not reported
    # False: the CPU's ISA flags are not known (an hwloc XML's infos only), so nothing that
    # depends on them is assumed: such peaks are unknown and say why
    flags_known: bool = True


# What a /proc/cpuinfo can say (sane ranges): x86 family and model numbers are bytes
# (extended family up to 0xff + 0xf), and no CPU clocks at 100 GHz. A value outside them
# is a damaged or forged file, never a CPU: --cpuinfo refuses it (strict), this machine's
# own cpuinfo leaves that fact unknown.
MAX_CPU_ID = 0xFFFF
MAX_GHZ = 100.0


def _positive(text: str, high: float) -> float | None:
    """A number from text, or None when it is not a finite number in (0, high]."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 < value <= high else None


def nominal_ghz(model_name: str) -> float | None:
    """The nominal clock a model name states ('... CPU @ 2.10GHz'), when it states a sane one."""
    m = re.search(r"@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz", model_name)
    return _positive(m.group(1), MAX_GHZ) if m else None


def parse_cpuinfo(text: str, strict: bool = False) -> CpuInfo:
    """Reads the first processor's identity and counts processors and distinct cores.

    A family or model that is not a number of 0..65535, a 'cpu MHz' that is not a clock
    above 0 and at most 100 GHz, or a model name stating such a clock ('@ 1e308GHz'):
    with `strict` (a file the user gave, --cpuinfo) ValueError naming the line; otherwise
    (this machine's /proc/cpuinfo, a probe's output) that fact stays unknown."""
    info = CpuInfo()
    cores: set[tuple[str, str]] = set()
    phys = core = None

    def bad(number: int, line: str, want: str) -> None:
        if strict:
            raise ValueError(f"line {number}: {line.strip()[:80]!r} is not {want}")

    def cpu_id(number: int, line: str, value: str, what: str) -> int:
        if value.isascii() and value.isdigit() and len(value) <= 5 and int(value) <= MAX_CPU_ID:
            return int(value)
        bad(number, line, f"a CPU {what} number (0..{MAX_CPU_ID})")
        return -1

    for number, line in enumerate(text.splitlines() + [""], start=1):
        if not line.strip():
            if phys is not None or core is not None:
                cores.add((phys or "0", core or str(len(cores))))
            phys = core = None
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            info.processors += 1
        elif key == "physical id":
            phys = value
        elif key == "core id":
            core = value
        elif info.processors > 1:
            continue  # identity is taken from the first processor
        elif key == "vendor_id":
            info.vendor = value
        elif key == "cpu family":
            info.family = cpu_id(number, line, value, "family")
        elif key == "model":
            info.model = cpu_id(number, line, value, "model")
        elif key == "model name":
            info.model_name = value
            if re.search(r"@.*GHz", value) and nominal_ghz(value) is None:
                bad(number, line, f"a model name with a clock of at most {MAX_GHZ:g} GHz")
        elif key == "flags":
            info.flags = set(value.split())
        elif key == "cpu MHz":
            info.mhz = _positive(value, MAX_GHZ * 1000)
            if info.mhz is None:
                bad(number, line, f"a clock in MHz above 0 and at most {MAX_GHZ * 1000:g}")
    info.cores = len(cores)
    return info


# ------------------------------------------------------------ FLOPs per cycle by uarch


@dataclass
class Uarch:
    name: str
    dp_per_cycle: int  # FP64 FLOPs per cycle per core
    detail: str  # why, shown in the formula
    known: bool = True  # False: assumed from the ISA only


_INTEL_FAMILY6 = {
    # model -> (name, DP FLOPs/cycle, detail)
    42: ("Sandy Bridge", 8, "AVX without FMA: 4-wide add + 4-wide mul"),
    45: ("Sandy Bridge-EP", 8, "AVX without FMA: 4-wide add + 4-wide mul"),
    58: ("Ivy Bridge", 8, "AVX without FMA: 4-wide add + 4-wide mul"),
    62: ("Ivy Bridge-EP", 8, "AVX without FMA: 4-wide add + 4-wide mul"),
    60: ("Haswell", 16, "AVX2, 2 FMA units"),
    63: ("Haswell-EP", 16, "AVX2, 2 FMA units"),
    69: ("Haswell", 16, "AVX2, 2 FMA units"),
    70: ("Haswell", 16, "AVX2, 2 FMA units"),
    61: ("Broadwell", 16, "AVX2, 2 FMA units"),
    71: ("Broadwell", 16, "AVX2, 2 FMA units"),
    79: ("Broadwell-EP", 16, "AVX2, 2 FMA units"),
    86: ("Broadwell-DE", 16, "AVX2, 2 FMA units"),
    78: ("Skylake", 16, "AVX2, 2 FMA units"),
    94: ("Skylake", 16, "AVX2, 2 FMA units"),
    142: ("Kaby/Coffee Lake", 16, "AVX2, 2 FMA units"),
    158: ("Kaby/Coffee Lake", 16, "AVX2, 2 FMA units"),
    165: ("Comet Lake", 16, "AVX2, 2 FMA units"),
    126: ("Ice Lake client", 16, "AVX-512, 1 FMA unit"),
    140: ("Tiger Lake", 16, "AVX-512, 1 FMA unit"),
    106: ("Ice Lake-SP", 32, "AVX-512, 2 FMA units"),
    108: ("Ice Lake-SP", 32, "AVX-512, 2 FMA units"),
    143: ("Sapphire Rapids", 32, "AVX-512, 2 FMA units"),
    207: ("Emerald Rapids", 32, "AVX-512, 2 FMA units"),
    173: ("Granite Rapids", 32, "AVX-512, 2 FMA units"),
    87: ("Knights Landing", 32, "AVX-512, 2 FMA units"),
    133: ("Knights Mill", 32, "AVX-512, 2 FMA units"),
}


def _skylake_sp(model_name: str) -> Uarch:
    """Skylake-SP / Cascade Lake (family 6 model 85): the SKU decides 1 or 2 AVX-512 FMA
    units. Platinum, W and Gold 6xxx (and Gold 5122) have 2; other Gold 5xxx, Silver and
    Bronze have 1 (Intel ARK, '# of AVX-512 FMA Units')."""
    m = re.search(r"(Platinum|Gold|Silver|Bronze|W)[- ](\d{4})", model_name)
    if m:
        tier, number = m.group(1), m.group(2)
        two = tier in ("Platinum", "W") or (
            tier == "Gold" and (number[0] == "6" or number == "5122")
        )
        units = 2 if two else 1
        return Uarch(
            f"Skylake-SP/Cascade Lake ({tier} {number})",
            16 * units,
            f"AVX-512, {units} FMA unit{'s' if units > 1 else ''}",
        )
    return Uarch(
        "Skylake-SP/Cascade Lake (SKU unknown)",
        32,
        "AVX-512, 2 FMA units assumed (1 on Silver/Bronze/Gold 5xxx)",
        known=False,
    )


def _amd(family: int, model: int, flags: set[str], known_flags: bool = True) -> Uarch | None:
    if family == 23:  # Zen, Zen+ (128-bit FMA pipes), Zen 2 (256-bit)
        if model >= 0x30:
            return Uarch("Zen 2", 16, "AVX2, 2 FMA units (256-bit)")
        return Uarch("Zen/Zen+", 8, "AVX2, 2 FMA units of 128 bits")
    if family == 25:  # Zen 3 and Zen 4; Zen 4 runs AVX-512 on 256-bit units
        if not known_flags:
            return None  # Zen 3 and Zen 4 differ only in their flags here
        if "avx512f" in flags:
            return Uarch("Zen 4", 16, "AVX-512 on 2 FMA units of 256 bits")
        return Uarch("Zen 3", 16, "AVX2, 2 FMA units (256-bit)")
    if family == 26:
        return Uarch("Zen 5", 32, "AVX-512, 2 FMA units of 512 bits (server parts)")
    return None


def _from_isa(flags: set[str], known_flags: bool = True) -> Uarch:
    if not known_flags:
        return Uarch("unknown (ISA flags not known)", 0, "ISA flags not known", known=False)
    if "avx512f" in flags:
        return Uarch("unknown (AVX-512)", 32, "AVX-512, 2 FMA units assumed", known=False)
    if "fma" in flags and "avx2" in flags:
        return Uarch("unknown (AVX2+FMA)", 16, "AVX2, 2 FMA units assumed", known=False)
    if "avx" in flags:
        return Uarch("unknown (AVX)", 8, "AVX, add + mul assumed", known=False)
    if "sse2" in flags:
        return Uarch("unknown (SSE2)", 4, "SSE2, add + mul assumed", known=False)
    return Uarch("unknown (scalar)", 2, "scalar add + mul assumed", known=False)


def identify_uarch(cpu: CpuInfo) -> Uarch:
    if cpu.vendor == "GenuineIntel" and cpu.family == 6:
        if cpu.model == 85:
            return _skylake_sp(cpu.model_name)
        if cpu.model in _INTEL_FAMILY6:
            name, dp, detail = _INTEL_FAMILY6[cpu.model]
            return Uarch(name, dp, detail)
    if cpu.vendor in ("AuthenticAMD", "HygonGenuine"):
        u = _amd(cpu.family, cpu.model, cpu.flags, cpu.flags_known)
        if u:
            return u
    return _from_isa(cpu.flags, cpu.flags_known)


# ------------------------------------------------- integer vector adds per cycle by uarch


def int_add_bytes_per_cycle(cpu: CpuInfo, u: Uarch) -> tuple[int, str, bool]:
    """(bytes of vector integer adds per cycle per core, why, known). Our int kernels are
    vector adds (vpaddb/w/d/q), so the bound is the vector ALU ports that execute them
    times their width (Intel optimization manual port tables; AMD software optimization
    guides: 4 vector ALU pipes on Zen). Ops/cycle of intN = bytes / (N / 8). 0 when the
    ISA flags are not known: the vector width decides."""
    flags = cpu.flags
    if not cpu.flags_known:
        return 0, "ISA flags not known: the vector width decides", False
    if cpu.vendor == "GenuineIntel" and cpu.family == 6 and u.known:
        if "avx512f" in flags:
            return 128, "vpadd on 2 vector ALU ports x 512 bits (ports 0 and 5)", True
        if "avx2" in flags:
            return 96, "vpadd on 3 vector ALU ports x 256 bits (ports 0, 1, 5)", True
        return 32, "integer SIMD is 128 bits without AVX2: 2 ports x 128 bits", True
    if cpu.vendor in ("AuthenticAMD", "HygonGenuine") and u.known:
        if u.name == "Zen/Zen+":
            return 64, "4 vector ALU pipes x 128 bits", True
        if u.name in ("Zen 2", "Zen 3"):
            return 128, "4 vector ALU pipes x 256 bits", True
        if u.name == "Zen 4":
            return 128, "4 vector ALU pipes x 256 bits; a 512-bit add takes two", True
        if u.name.startswith("Zen 5"):
            return 256, "4 vector ALU pipes x 512 bits", True
    if "avx512f" in flags:
        return 128, "2 vector ALU ports x 512 bits assumed", False
    if "avx2" in flags:
        return 64, "2 vector ALU ports x 256 bits assumed", False
    return 32, "2 vector ALU ports x 128 bits assumed", False


# ---------------------------------------------------------------------- frequency


def _frequency(cpu: CpuInfo, overrides: dict) -> tuple[float | None, str]:
    """GHz and where it came from: the user's value, the nominal clock in the model name,
    a measured clock, or the 'cpu MHz' line (what the kernel last saw: on VMs the host's
    TSC rate; turbo can make sustained clocks higher)."""
    if "freq" in overrides:
        return _parse_value(overrides["freq"], "GHz"), "user value (--peak freq=...)"
    nominal = nominal_ghz(cpu.model_name)
    if nominal:
        return nominal, f"nominal, from the model name '{cpu.model_name}'"
    if "measured_ghz" in overrides:
        return float(
            overrides["measured_ghz"]
        ), "measured (dependent-add chain), nominal not reported"
    if cpu.mhz:
        return cpu.mhz / 1000.0, (
            "nominal not reported; /proc/cpuinfo 'cpu MHz' used (turbo may run above it)"
        )
    return None, "no frequency known"


# --------------------------------------------------------------------- overrides

_SCALE = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def _parse_value(text: Any, unit: str) -> float:
    """'2GB/s' -> MB/s, '100Gbit/s' -> Mbit/s, '2.6GHz' -> GHz, '500' -> as is."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([\d.eE+-]+)\s*([kKmMgGtT]?)(.*?)\s*", str(text))
    if not m:
        raise ValueError(f"cannot read peak value {text!r} (examples: 2GB/s, 100Gbit/s, 2.6GHz)")
    value = float(m.group(1)) * _SCALE[m.group(2).lower()]
    base = {"GHz": 1e9, "MB/s": 1e6, "Mbit/s": 1e6, "GFLOP/s": 1e9}[unit]
    if not m.group(2) and not m.group(3):
        return float(m.group(1))  # a bare number is already in the peak's unit
    return value / base


def _parse_iops(text: Any) -> float:
    return float(str(text).replace("k", "e3").replace("K", "e3"))


# The peaks `--peak NAME=VALUE` may state: name -> (its unit, how a value is read, the
# largest sane value in that unit, an example). Above the largest is a typo (1 EFLOP/s,
# 1 PB/s, 1 Pbit/s or 10^9 IOPS for one node; 100 GHz), and would overflow the HPL
# sizing and the efficiencies built on it.
STATED: dict[str, tuple[str, Any, float, str]] = {
    **{
        name: ("GFLOP/s", lambda t: _parse_value(t, "GFLOP/s"), 1e9, f"{name}=1200")
        for name in ("fp64", "fp32", "fp16", "bf16")
    },
    **{
        f"int{bits}": ("GOP/s", lambda t: _parse_value(t, "GFLOP/s"), 1e9, f"int{bits}=5000")
        for bits in (8, 16, 32, 64)
    },
    "freq": ("GHz", lambda t: _parse_value(t, "GHz"), MAX_GHZ, "freq=2.6GHz"),
    "mem": ("MB/s", lambda t: _parse_value(t, "MB/s"), 1e9, "mem=200GB/s"),
    "disk": ("MB/s", lambda t: _parse_value(t, "MB/s"), 1e9, "disk=2GB/s"),
    "disk_iops": ("IOPS", _parse_iops, 1e9, "disk_iops=500000"),
    "net": ("Mbit/s", lambda t: _parse_value(t, "Mbit/s"), 1e9, "net=100Gbit/s"),
}


def stated_peak(name: str, text: str) -> float:
    """The value of `--peak NAME=TEXT` in the peak's unit. ValueError naming the option
    and the fix for an unknown name, or a value that is not a positive finite number up
    to the peak's largest sane value."""
    if name not in STATED:
        raise ValueError(
            f"--peak {name}={text}: no peak is called {name!r}; state one of "
            f"{', '.join(STATED)}, e.g. --peak disk=2GB/s"
        )
    unit, parse, high, example = STATED[name]
    try:
        value = parse(text)
    except (ValueError, OverflowError):
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= high):
        raise ValueError(
            f"--peak {name}={text}: give a positive number of {unit} up to {high:g} "
            f"(a unit prefix k/M/G/T may stand before it), e.g. --peak {example}"
        )
    return value


# ------------------------------------------------------------------------- peaks


def _cores(topology: Any, cpu: CpuInfo) -> tuple[int, str]:
    for attr in ("cores", "n_cores", "core_count"):
        v = topology.get(attr) if isinstance(topology, dict) else getattr(topology, attr, None)
        if v is not None:
            if callable(v):
                v = v()
            return (len(v) if not isinstance(v, int) else v), "hwloc topology"
    if cpu.cores:
        return cpu.cores, "/proc/cpuinfo (physical id, core id)"
    return cpu.processors, "/proc/cpuinfo processor count (SMT not distinguishable)"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _bf16_per_cycle(u: Uarch) -> tuple[float, str]:
    """BF16 FLOP/cycle through AVX512-BF16, and the detail for its formula.
    VDPBF16PS does 4 FLOP per FP32 lane (two BF16 products and their sum into the
    accumulator). Intel's cores with 2 FMA units issue one every 2 cycles, not 2 per cycle
    as for VFMADD: 0.46 per cycle measured with 6, 12 and 24 independent chains alike on
    Sapphire and Emerald Rapids (a throughput limit, not latency), so there BF16 peaks at
    the FP64 FMA rate in FLOP/cycle. AMD's Zen 4 and Zen 5 issue it on both FMA pipes like
    an FMA, 4 times the FP64 rate: measured on a 2-vCPU Zen 5 guest (family 26, November
    2026) at 3.72x the FP64 FMA kernel on the same core (492 against 132 GFLOP/s at 4.18
    GHz), 92 % of this peak; Zen 4 is assumed alike (not measured). Other
    microarchitectures are assumed to do as Intel's until measured."""
    if u.name.startswith(("Zen 4", "Zen 5")):
        return 4 * u.dp_per_cycle, "; VDPBF16PS: 4 FLOP per FP32 lane, 2 per cycle"
    return (
        u.dp_per_cycle,
        "; VDPBF16PS: 4 FLOP per FP32 lane, one instruction per 2 cycles on 2 FMA units",
    )


def flops_peaks(cpu: CpuInfo, cores: int, cores_src: str, overrides: dict) -> list[Peak]:
    u = identify_uarch(cpu)
    ghz, freq_src = _frequency(cpu, overrides)
    clock = None if "freq" in overrides else ghz  # a clock the user stated stays
    assumed = "" if u.known else "; FMA units not known for this model: assumed from the ISA"
    src = (
        f"{cpu.model_name or 'CPU'} identified as {u.name}{assumed}; cores from {cores_src}; "
        f"frequency {freq_src}"
    )
    out = []

    def add(name: str, per_cycle: float, what: str, extra: str = "") -> None:
        if f"{name}" in overrides:
            v = _parse_value(overrides[name], "GFLOP/s")
            out.append(
                Peak(
                    name,
                    v,
                    "GFLOP/s",
                    f"user value {v:g} GFLOP/s",
                    "--peak " + name,
                    "flops",
                    {"precision": name},
                )
            )
            return
        value = cores * ghz * per_cycle if ghz and per_cycle else None
        formula = (
            f"{cores} cores x {_fmt(ghz) if ghz else '?'} GHz x "
            f"{f'{per_cycle:g}' if per_cycle else '?'} {what} FLOP/cycle ({u.detail}{extra})"
        )
        out.append(
            Peak(name, value, "GFLOP/s", formula, src, "flops", {"precision": name}, clock, cores)
        )

    add("fp64", u.dp_per_cycle, "FP64")
    add("fp32", 2 * u.dp_per_cycle, "FP32")
    if "avx512_fp16" in cpu.flags:
        add("fp16", 4 * u.dp_per_cycle, "FP16", "; AVX512-FP16 FMA")
    if "avx512_bf16" in cpu.flags:
        per_cycle, detail = _bf16_per_cycle(u)
        add("bf16", per_cycle, "BF16", detail)
    if "amx_bf16" in cpu.flags:
        # TDPBF16PS: 16x16x32 multiply-adds every 16 cycles per core (Intel optimization manual).
        value = cores * ghz * 1024 if ghz else None
        out.append(
            Peak(
                "bf16_amx",
                value,
                "GFLOP/s",
                f"{cores} cores x {_fmt(ghz) if ghz else '?'} GHz x 1024 BF16 FLOP/cycle "
                "(AMX TDPBF16PS, one tile unit)",
                src,
                "flops",
                {"precision": "bf16_amx"},
                clock,
                cores,
            )
        )
    return out


def int_peaks(cpu: CpuInfo, cores: int, cores_src: str, overrides: dict) -> list[Peak]:
    """int8..int64 vector add peaks in GOP/s, the same way as the FLOP/s peaks: cores x
    frequency x ops per cycle, ops per cycle from the ISA and the uarch's vector ALUs."""
    u = identify_uarch(cpu)
    ghz, freq_src = _frequency(cpu, overrides)
    clock = None if "freq" in overrides else ghz  # a clock the user stated stays
    per_cycle_bytes, why, known = int_add_bytes_per_cycle(cpu, u)
    src = (
        f"{cpu.model_name or 'CPU'} identified as {u.name}"
        f"{'' if known else '; vector ALUs not known for this model: assumed from the ISA'}; "
        f"cores from {cores_src}; frequency {freq_src}"
    )
    out = []
    for bits in (8, 16, 32, 64):
        name = f"int{bits}"
        match = {"precision": name}
        if name in overrides:
            v = _parse_value(overrides[name], "GFLOP/s")
            out.append(
                Peak(
                    name,
                    v,
                    "GOP/s",
                    f"user value {v:g} GOP/s",
                    "--peak " + name,
                    "throughput",
                    match,
                )
            )
            continue
        ops = per_cycle_bytes * 8 // bits
        value = cores * ghz * ops if ghz and ops else None
        formula = (
            f"{cores} cores x {_fmt(ghz) if ghz else '?'} GHz x {ops or '?'} {name.upper()} "
            f"ops/cycle ({why})"
        )
        out.append(Peak(name, value, "GOP/s", formula, src, "throughput", match, clock, cores))
    return out


def memory_peak(dmidecode_text: str | None, overrides: dict) -> Peak:
    match = {"benchmark": "mem"}
    if "mem" in overrides:
        v = _parse_value(overrides["mem"], "MB/s")
        return Peak(
            "mem", v, "MB/s", f"user value {v:g} MB/s", "--peak mem=...", "bandwidth", match
        )
    dimms = parse_dmidecode_memory(dmidecode_text or "")
    if dimms:
        rate = min(d[0] for d in dimms)
        width = min(d[1] for d in dimms)
        n = len(dimms)
        value = n * rate * width / 8  # MT/s x bytes per transfer = MB/s
        return Peak(
            "mem",
            value,
            "MB/s",
            f"{n} channels x {rate:g} MT/s x {width // 8} bytes",
            "dmidecode -t memory (configured speed, data width); one populated DIMM per "
            "channel assumed",
            "bandwidth",
            match,
        )
    return Peak(
        "mem",
        None,
        "MB/s",
        "unknown: channels and transfer rate not reported (no dmidecode data); the "
        "best measured bandwidth is used instead, labelled 'measured best'",
        "dmidecode unavailable or not permitted (VMs usually hide DIMMs)",
        "bandwidth",
        match,
    )


def parse_dmidecode_memory(text: str) -> list[tuple[float, int]]:
    """(MT/s, data width bits) of each populated memory device."""
    out = []
    for block in text.split("\n\n"):
        if "Memory Device" not in block or "No Module Installed" in block:
            continue
        speed = re.search(r"Configured (?:Memory|Clock) Speed:\s*(\d+)\s*MT/s", block) or re.search(
            r"\n\s*Speed:\s*(\d+)\s*MT/s", block
        )
        width = re.search(r"Data Width:\s*(\d+)\s*bits", block)
        if speed and width:
            out.append((float(speed.group(1)), int(width.group(1))))
    return out


def device_peaks(
    overrides: dict, link_mbit: dict[str, int] | None = None, disk_model: str | None = None
) -> list[Peak]:
    out = []
    if "disk" in overrides:
        v = _parse_value(overrides["disk"], "MB/s")
        out.append(
            Peak(
                "disk",
                v,
                "MB/s",
                f"user value {v:g} MB/s",
                "--peak disk=...",
                "bandwidth",
                {"benchmark": "disk"},
            )
        )
    else:
        out.append(
            Peak(
                "disk",
                None,
                "MB/s",
                "unknown: the device does not report a rated bandwidth, and the best "
                "measured one is a write a cache above the device may take: no peak; give "
                "it with --peak disk=2GB/s",
                f"device model: {disk_model or 'not reported'}",
                "bandwidth",
                {"benchmark": "disk"},
            )
        )
    if "disk_iops" in overrides:
        v = float(str(overrides["disk_iops"]).replace("k", "e3").replace("K", "e3"))
        out.append(
            Peak(
                "disk_iops",
                v,
                "IOPS",
                f"user value {v:g} IOPS",
                "--peak disk_iops=...",
                "iops",
                {"benchmark": "disk"},
            )
        )
    else:
        out.append(
            Peak(
                "disk_iops",
                None,
                "IOPS",
                "not stated: the device reports no rated IOPS (Linux sysfs has none, nor "
                "has the NVMe identify data); give the datasheet's with --peak disk_iops=N",
                f"device model: {disk_model or 'not reported'}",
                "iops",
                {"benchmark": "disk"},
            )
        )
    if "net" in overrides:
        v = _parse_value(overrides["net"], "Mbit/s")
        out.append(
            Peak(
                "net",
                v,
                "Mbit/s",
                f"user value {v:g} Mbit/s",
                "--peak net=...",
                "throughput",
                {"benchmark": "net"},
            )
        )
    else:
        # Loopback has no link: the node suite measures 127.0.0.1, so a NIC speed would be
        # the wrong bound; it is shown for two-node runs.
        nics = {k: v for k, v in (link_mbit or {}).items() if v and v > 0}
        text = ", ".join(f"{k} {v} Mbit/s" for k, v in sorted(nics.items())) or "none reported"
        out.append(
            Peak(
                "net",
                None,
                "Mbit/s",
                "unknown for loopback (127.0.0.1 has no link speed; memory-copy bound); "
                "the best measured throughput is used instead",
                f"NIC link speeds (sysfs): {text}",
                "throughput",
                {"benchmark": "net"},
            )
        )
    return out


def compute_peaks(
    cpuinfo_text: str,
    topology: Any = None,
    overrides: dict | None = None,
    *,
    dmidecode_text: str | None = None,
    link_mbit: dict[str, int] | None = None,
    disk_model: str | None = None,
    flags_known: bool = True,
) -> list[Peak]:
    """All peaks of the node. `overrides` keys: fp64/fp32/fp16/bf16 (GFLOP/s), int8..int64
    (GOP/s), freq (GHz), measured_ghz, mem/disk (MB/s or '2GB/s'), disk_iops (IOPS),
    net (Mbit/s or '100Gbit/s'). `flags_known` False: the cpuinfo text has no ISA flags
    (made from an hwloc XML), so no flag is taken as absent."""
    overrides = dict(overrides or {})
    cpu = parse_cpuinfo(cpuinfo_text)
    cpu.flags_known = flags_known
    cores, cores_src = _cores(topology, cpu)
    return (
        flops_peaks(cpu, cores, cores_src, overrides)
        + int_peaks(cpu, cores, cores_src, overrides)
        + [memory_peak(dmidecode_text, overrides)]
        + device_peaks(overrides, link_mbit, disk_model)
    )


def node_peaks(facts: NodeFacts, topology: Any = None, overrides: dict | None = None) -> list[Peak]:
    """compute_peaks on one node's facts (machine/node_facts.py); every peak not given by
    the user names where its facts came from (this machine, a compute node's probe, an hwloc
    file, --cpuinfo), so a login node's CPU is never passed off as a compute node's."""
    peaks = compute_peaks(
        facts.cpuinfo_text,
        topology,
        overrides,
        dmidecode_text=facts.dmidecode_text,
        link_mbit=facts.link_mbit,
        disk_model=facts.disk_model,
        flags_known=facts.flags_known,
    )
    for peak in peaks:
        if peak.source.startswith("--peak"):
            continue
        cpu = peak.metric == "flops" or peak.name.startswith("int")
        origin = facts.cpu_origin if cpu else facts.device_origin
        peak.source = f"{peak.source}; facts from {origin}"
    return peaks
