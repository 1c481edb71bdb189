"""`run p2p --osu-dir DIR`: a user's own OSU Micro-Benchmarks build, run through the same
placement sweep as hpcscope's p2p, its text output parsed into records tagged tool=osu.

What is checked before anything is stored (bad input -> ValueError, exit 2):
  - DIR holds at least one of osu_latency, osu_bw, osu_bibw, osu_mbw_mr for the chosen
    tests (looked up in DIR, DIR/mpi/pt2pt and DIR/libexec/osu-micro-benchmarks/mpi/pt2pt);
  - each program's MPI library (from `ldd`: libmpi.so = Open MPI, libmpich = MPICH) is
    one of --mpi; it is launched with that library's mpirun only;
  - each program, launched once with one iteration at 1 byte (`-m 1:1 -i 1 -x 0`, about
    a second), prints OSU's format (results/parsers.parse_osu) as UTF-8 text, with the
    one size asked for, once. Only on this machine: with more nodes (SLURM, lab) a wrong
    program shows up as an error record instead.

In the run itself every OSU job's output is checked again (launch/ingest.py): bytes that
are not UTF-8 fail that job naming the program, a size printed twice or outside -m fails
it, a size of the range missing is a `warning` note of the run (show, report).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hpcscope.build import TreeGuard
from hpcscope.launch import command, launcher
from hpcscope.machine.mpi import MpiSpec, launch_env
from hpcscope.plan.job import Job
from hpcscope.results.parsers import check_osu_sizes, parse_osu

PROGRAMS = {"latency": "osu_latency", "bw": "osu_bw", "bibw": "osu_bibw", "mbw_mr": "osu_mbw_mr"}
PROGRAMS |= {t: f"osu_{t}" for t in ("latency_persistent", "bw_persistent", "bibw_persistent")}
PROGRAMS |= {"latency_mt": "osu_latency_mt", "latency_mp": "osu_latency_mp"}
SUBDIRS: tuple[str, ...] = ("", "mpi/pt2pt", "libexec/osu-micro-benchmarks/mpi/pt2pt")
# OSU 7.4 installs its persistent programs one folder down (and its sources say standard/)
SUBDIRS += tuple(f"{d}/persistent".lstrip("/") for d in SUBDIRS)
PROBE_TIMEOUT_S = 60.0
FIX = "give the folder holding OSU's built pt2pt programs, e.g. --osu-dir "
FIX += "/opt/osu/libexec/osu-micro-benchmarks/mpi/pt2pt"


def find_programs(osu_dir: str, tests: list[str]) -> dict[str, Path]:
    """{test: executable} for the chosen tests that DIR has; ValueError when it has none."""
    root = Path(osu_dir).expanduser()
    if not root.is_dir():
        raise ValueError(f"--osu-dir {osu_dir}: not a folder; {FIX}")
    found: dict[str, Path] = {}
    tests = [t for t in tests if t in PROGRAMS]  # unknown names: the suite refuses them
    for test in tests:
        for sub in SUBDIRS:
            path = root / sub / PROGRAMS[test]
            if path.is_file() and path.stat().st_mode & 0o111:
                found[test] = (
                    path.absolute()
                )  # not resolve(): OSU-like programs may dispatch on their name
                break
    if not found:
        names = ", ".join(PROGRAMS[t] for t in tests or PROGRAMS)
        raise ValueError(f"--osu-dir {osu_dir}: no executable {names} there; {FIX}")
    return found


def library_of(program: Path, mpis: list[MpiSpec]) -> MpiSpec:
    """The --mpi library the program was linked with (one --mpi library: that one)."""
    if len(mpis) == 1:
        return mpis[0]
    try:
        linked = subprocess.run(
            ["ldd", str(program)], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        linked = ""
    flavor = "mpich" if "libmpich" in linked else "openmpi" if "libmpi.so" in linked else None
    for mpi in mpis:
        if mpi.flavor == flavor:
            return mpi
    raise ValueError(
        f"--osu-dir: cannot tell which of --mpi {','.join(m.flavor for m in mpis)} "
        f"{program} was built with (ldd shows {flavor or 'no MPI library'}); "
        "name it, e.g. --mpi openmpi"
    )


def probe(program: Path, mpi: MpiSpec) -> None:
    """One tiny launch; ValueError naming the program unless it prints OSU's format."""
    job = Job(
        suite="p2p",
        name="osu-probe",
        program=[str(program), "-m", "1:1", "-i", "1", "-x", "0"],
        mpi=mpi,
        ranks=2,
    )
    with tempfile.TemporaryDirectory(prefix="hpcscope-osu-probe-") as tmp:
        proc = command.start(launcher.mpirun_argv(job, Path(tmp)), launch_env(mpi))
        try:
            with TreeGuard(proc.pid):  # a killed hpcscope takes the probe along
                out, errs = proc.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            command.kill_group(proc)
            raise ValueError(
                f"--osu-dir: {program} did not finish a 1-iteration run in "
                f"{PROBE_TIMEOUT_S:.0f} s with {mpi.label}; {FIX}"
            ) from None
        except UnicodeDecodeError as exc:
            command.kill_group(proc)
            raise ValueError(
                f"--osu-dir: {program} with {mpi.label} wrote bytes that are not UTF-8 "
                f"text (0x{bytes(exc.object[exc.start : exc.start + 1]).hex()}), not OSU's "
                f"output; {FIX}"
            ) from None
    records = parse_osu(out)
    problem = next((r["message"] for r in records if r["type"] == "error"), None)
    problem = problem or next(iter(check_osu_sizes(records, (1, 1), program.name)[0]), None)
    if proc.returncode != 0 and problem is None:
        tail = " ".join(errs.strip().splitlines()[-2:])[-200:]
        problem = f"exit code {proc.returncode} ({tail})"
    if problem:
        raise ValueError(f"--osu-dir: {program} with {mpi.label}: {problem}; {FIX}")


def programs(
    osu_dir: str, tests: list[str], mpis: list[MpiSpec], check: bool
) -> tuple[dict[str, tuple[Path, MpiSpec]], list[str]]:
    """({test: (program, its MPI)}, notes on the chosen tests DIR lacks). `check`: probe
    every program by launching it (this machine only)."""
    found = find_programs(osu_dir, tests)
    chosen = {test: (path, library_of(path, mpis)) for test, path in found.items()}
    if check:
        for path, mpi in chosen.values():
            probe(path, mpi)
    missing = [f"{PROGRAMS[t]} not in --osu-dir {osu_dir}" for t in tests if t not in found]
    return chosen, missing


def program_args(low: int, high: int) -> list[str]:
    """OSU's own loop with its defaults, only the size range set (OSU starts at 1 B)."""
    return ["-m", f"{max(low, 1)}:{high}"]
