"""What else shaped the numbers: kernel, compiler, CPU model, frequency policy, SMT state,
and the environment variables MPI libraries and schedulers read. Stored with every run."""

from __future__ import annotations

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


def capture() -> dict:
    """Every value that cannot be read is None, never guessed."""
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq"
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": _read("/etc/debian_version") and f"Debian {_read('/etc/debian_version')}",
        "cpu_model": cpu_model(),
        "compiler": _first_line(["cc", "--version"]),
        "governor": _read(f"{cpufreq}/scaling_governor"),
        "max_freq_khz": _read(f"{cpufreq}/cpuinfo_max_freq"),
        "turbo_disabled": _read("/sys/devices/system/cpu/intel_pstate/no_turbo"),
        "smt": _read("/sys/devices/system/cpu/smt/control"),
        "python": platform.python_version(),
        "hpcscope": hpcscope.__version__,
        "variables": {
            k: v for k, v in sorted(os.environ.items()) if k.startswith(_VARIABLE_PREFIXES)
        },
    }


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
