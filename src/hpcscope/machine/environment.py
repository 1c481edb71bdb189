"""What else shaped the numbers: kernel, compiler, CPU model, frequency policy, SMT state,
the environment variables MPI libraries, BLAS libraries and schedulers read, and the
virtual machine (hypervisor, steal time, load, hardware counters). Stored with every run
(docs/records.md, "runs.environment")."""

from __future__ import annotations

import ctypes
import os
import platform
import socket
import subprocess
from pathlib import Path

import hpcscope

_VARIABLE_PREFIXES = (
    "OMPI_",
    "MPICH_",
    "MPIR_",
    "UCX_",
    "I_MPI_",
    "SLURM_",
    "OMP_",
    "HPCSCOPE_",
    "LANECOLL_",
    "HYDRA_",
    "PMIX_",
    # BLAS: OPENBLAS_CORETYPE picks OpenBLAS's kernel, *_NUM_THREADS its threads
    "OPENBLAS_",
    "GOTO_",
    "MKL_",
    "BLIS_",
)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _first_line(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (done.stdout or done.stderr).splitlines()
    return lines[0] if lines else None


def cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def _lscpu_hypervisor() -> str | None:
    try:
        done = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        if line.startswith("Hypervisor vendor:"):
            return line.split(":", 1)[1].strip() or None
    return None


# perf_event_open's system call number (x86_64, aarch64); elsewhere not probed
_PERF_SYSCALL = {"x86_64": 298, "aarch64": 241}


def _perf_cycles() -> str:
    """Whether this process may count CPU cycles: "yes", or why not ("no PMU": the
    hypervisor exposes none; "not permitted": perf_event_paranoid or seccomp; "not
    probed"). One perf_event_open of PERF_TYPE_HARDWARE / CPU_CYCLES on itself, closed at
    once."""
    number = _PERF_SYSCALL.get(platform.machine())
    if number is None:
        return "not probed"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return "not probed"
    attr = (ctypes.c_uint8 * 128)()  # struct perf_event_attr, PERF_ATTR_SIZE_VER7
    ctypes.c_uint32.from_buffer(attr, 0).value = 0  # type PERF_TYPE_HARDWARE
    ctypes.c_uint32.from_buffer(attr, 4).value = 128  # size
    ctypes.c_uint64.from_buffer(attr, 8).value = 0  # config PERF_COUNT_HW_CPU_CYCLES
    # flags: disabled (bit 0), exclude_kernel (bit 5), exclude_hv (bit 6)
    ctypes.c_uint64.from_buffer(attr, 40).value = 1 | 1 << 5 | 1 << 6
    fd = libc.syscall(number, ctypes.byref(attr), 0, -1, -1, 0)
    if fd >= 0:
        os.close(fd)
        return "yes"
    err = ctypes.get_errno()
    if err in (2, 19, 95):  # ENOENT, ENODEV, EOPNOTSUPP: no such counter here
        return "no PMU"
    if err in (1, 13):  # EPERM, EACCES
        return "not permitted"
    return f"no ({os.strerror(err)})"


def steal_since_boot() -> float | None:
    """Steal time's share of all CPU time since boot, in %, from /proc/stat."""
    line = (_read("/proc/stat") or "").splitlines()[:1]
    fields = line[0].split() if line else []
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    numbers = [int(x) for x in fields[1:9]]
    return round(100.0 * numbers[7] / sum(numbers), 2) if sum(numbers) else None


def virtualization() -> dict:
    """The virtual machine this runs in, where it says: hypervisor (lscpu's vendor, from
    CPUID leaf 0x40000000), the cpuinfo `hypervisor` flag, /sys/hypervisor/type, DMI's
    vendor and product, steal time since boot, the load average, and whether hardware
    counters can be read (perf_event_paranoid, a cpu PMU in sysfs, a perf_event_open
    probe). Each value None where it cannot be read."""
    flags = next(
        (
            line.split(":", 1)[1].split()
            for line in (_read("/proc/cpuinfo") or "").splitlines()
            if line.startswith("flags")
        ),
        [],
    )
    paranoid = _read("/proc/sys/kernel/perf_event_paranoid")
    load = (_read("/proc/loadavg") or "").split()
    return {
        "hypervisor": _lscpu_hypervisor(),
        "hypervisor_flag": "hypervisor" in flags if flags else None,
        "sys_hypervisor": _read("/sys/hypervisor/type"),
        "dmi_vendor": _read("/sys/class/dmi/id/sys_vendor"),
        "dmi_product": _read("/sys/class/dmi/id/product_name"),
        "steal_since_boot_pct": steal_since_boot(),
        "loadavg": " ".join(load[:3]) or None,
        "perf_event_paranoid": int(paranoid)
        if paranoid and paranoid.lstrip("-").isdigit()
        else None,
        "cpu_pmu": Path("/sys/bus/event_source/devices/cpu").exists(),
        "hw_counters": _perf_cycles(),
    }


def capture() -> dict:
    """Every value that cannot be read is None, never guessed."""
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq"
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": _read("/etc/debian_version") and f"Debian {_read('/etc/debian_version')}",
        "cpu_model": cpu_model(),
        # the memory the OS has; the NUMA nodes hwloc reports can count less (a KVM guest
        # whose memory grew after boot), so the report's machine line shows both
        "mem_total_bytes": total_memory(),
        "numa_mem_total_bytes": numa_memory(),
        "compiler": _first_line(["cc", "--version"]),
        "governor": _read(f"{cpufreq}/scaling_governor"),
        "max_freq_khz": _read(f"{cpufreq}/cpuinfo_max_freq"),
        "turbo_disabled": _read("/sys/devices/system/cpu/intel_pstate/no_turbo"),
        "smt": _read("/sys/devices/system/cpu/smt/control"),
        "python": platform.python_version(),
        "hpcscope": hpcscope.__version__,
        "virtualization": virtualization(),
        "variables": {
            k: v for k, v in sorted(os.environ.items()) if k.startswith(_VARIABLE_PREFIXES)
        },
    }


def _meminfo_bytes(field: str) -> int | None:
    """One /proc/meminfo field (kB) in bytes; None where it cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def numa_memory() -> int | None:
    """The memory the kernel counts in its NUMA nodes (the sum of
    /sys/devices/system/node/node*/meminfo MemTotal), in bytes: what hwloc reports as
    NUMA memory. Below MemTotal where memory lies in no node's count (seen in a KVM guest
    whose memory grew after boot). None where sysfs has no node."""
    total, found = 0, False
    for meminfo in sorted(Path("/sys/devices/system/node").glob("node[0-9]*/meminfo")):
        for line in (_read(str(meminfo)) or "").splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[2] == "MemTotal:" and fields[3].isdigit():
                total, found = total + int(fields[3]) * 1024, True
    return total if found else None


def total_memory() -> int | None:
    """MemTotal of /proc/meminfo in bytes: the memory the OS has (None where unreadable)."""
    return _meminfo_bytes("MemTotal")


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where it cannot be read)."""
    return _meminfo_bytes("MemAvailable")


def virtualization_text(env: dict) -> str | None:
    """One line of a run's virtualization facts for the views; None without them."""
    v = env.get("virtualization")
    if not isinstance(v, dict):
        return None
    where = v.get("hypervisor") or v.get("sys_hypervisor") or v.get("dmi_vendor")
    if where:
        guest = f"{where} guest"
    elif v.get("hypervisor_flag"):
        guest = "a virtual machine (cpuinfo flag hypervisor; vendor not stated)"
    else:
        guest = "no hypervisor reported"
    parts = [guest]
    if v.get("dmi_product"):
        parts.append(f"product {v['dmi_product']}")
    if v.get("steal_since_boot_pct") is not None:
        parts.append(f"steal time since boot {v['steal_since_boot_pct']:g} %")
    if v.get("loadavg"):
        parts.append(f"load average at the start {v['loadavg']}")
    counters = v.get("hw_counters")
    if counters:
        paranoid = v.get("perf_event_paranoid")
        extra = f", perf_event_paranoid {paranoid}" if paranoid is not None else ""
        parts.append(f"hardware counters: {counters}{extra}")
    return "; ".join(parts)


def blas_of(launches: list[dict]) -> list[dict]:
    """The BLAS each program of a run linked, from its launch's meta `blas` (our cpu
    program; hpcc's from machine/blas_probe.py): {program, library, version, core,
    threads, env}, one per distinct (program, library, core)."""
    seen: dict[tuple, dict] = {}
    for launch in launches:
        meta = launch.get("meta") or {}
        blas = meta.get("blas")
        if not isinstance(blas, dict):
            continue
        row: dict = {
            "program": str(meta.get("benchmark") or launch.get("name")),
            "library": blas.get("library"),
            "version": blas.get("version"),
            "core": blas.get("core"),
            "threads": blas.get("threads"),
            "env": blas.get("env") if isinstance(blas.get("env"), dict) else {},
        }
        seen.setdefault((row["program"], row["library"], row["core"]), row)
    return list(seen.values())


def blas_text(b: dict) -> str:
    """'cpu: OpenBLAS 0.3.21, kernel Haswell, 2 threads (/usr/lib/.../libopenblas.so;
    OPENBLAS_CORETYPE=Haswell)'."""
    version = f"OpenBLAS {b['version']}" if b.get("version") else "BLAS"
    core = f", kernel {b['core']}" if b.get("core") else ""
    n = b.get("threads")
    threads = f", {n} thread{'' if n == 1 else 's'}" if n is not None else ""
    env = "; ".join(f"{k}={v}" for k, v in sorted((b.get("env") or {}).items()))
    where = "; ".join(x for x in (str(b.get("library") or "library not found"), env) if x)
    return f"{b['program']}: {version}{core}{threads} ({where})"
