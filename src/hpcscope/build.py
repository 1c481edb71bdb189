"""Compile the C benchmarks and lanecoll against one MPI library, cached per MPI identity.

The build directory is named by the MPI flavor, its version and a hash of the wrapper's
real path, so Open MPI and MPICH builds (or two Open MPI installs) never mix objects.
CMake is re-run on every build: it is cheap when nothing changed and picks up new source
files; `cmake --build` then recompiles only what changed. A file lock serialises builds of
the same tree from concurrent hpcscope processes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
from pathlib import Path

from hpcscope.machine.mpi import MpiSpec

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parents[1]


def _source_root() -> Path:
    """Where bench/ and lanecoll/ are: beside the package in a checkout (and an editable
    install), or inside it (hpcscope/csrc, copied there by setup.py) when installed."""
    shipped = _PACKAGE / "csrc"
    return shipped if (shipped / "bench").is_dir() else _CHECKOUT


SOURCE_ROOT = _source_root()
BENCH_SOURCE = SOURCE_ROOT / "bench"


class BuildError(Exception):
    """The benchmarks did not compile; the message carries the compiler's last lines."""


def cache_root() -> Path:
    """$HPCSCOPE_CACHE, else .cache in the checkout, else ~/.cache/hpcscope (installed)."""
    if os.environ.get("HPCSCOPE_CACHE"):
        return Path(os.environ["HPCSCOPE_CACHE"]).resolve()
    if SOURCE_ROOT == _CHECKOUT:
        return (_CHECKOUT / ".cache").resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(xdg) / "hpcscope").resolve()


def build_dir(mpi: MpiSpec) -> Path:
    real = os.path.realpath(mpi.mpicc)
    digest = hashlib.sha256(f"{real}\0{mpi.version}".encode()).hexdigest()[:10]
    return cache_root() / "build" / f"{mpi.flavor}-{mpi.version}-{digest}"


def _run(argv: list[str], cwd: Path, log: Path) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-25:])
        raise BuildError(
            f"building against {mpi_label_from(argv)} failed (full log: {log}):\n{tail}"
        )


def mpi_label_from(argv: list[str]) -> str:
    for arg in argv:
        if arg.startswith("-DCMAKE_C_COMPILER="):
            return arg.split("=", 1)[1]
    return "the MPI library"


def build(mpi: MpiSpec, jobs: int = 2) -> Path:
    """Configure and build; returns the build directory. Raises BuildError."""
    target = build_dir(mpi)
    target.mkdir(parents=True, exist_ok=True)
    log = target / "build.log"
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        log.write_text("")
        _run(
            [
                "cmake",
                "-S",
                str(BENCH_SOURCE),
                "-B",
                str(target),
                "-Wno-dev",
                f"-DCMAKE_C_COMPILER={mpi.mpicc}",
                "-DCMAKE_BUILD_TYPE=Release",
            ],
            target,
            log,
        )
        _run(["cmake", "--build", str(target), "-j", str(jobs)], target, log)
    return target


def find_program(build: Path, name: str) -> Path:
    """The executable `name` inside a build tree (bench/mpi/p2p.c -> <build>/mpi/p2p)."""
    for folder in ("mpi", "node", "lanecoll", "lanecoll/tests", "."):
        candidate = build / folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BuildError(
        f"no program '{name}' in {build}; run `hpcscope build` (or `make build`) "
        "and check its log for errors"
    )


def algorithm_catalog(
    program: Path, argv: list[str] | None = None, env: dict[str, str] | None = None
) -> dict:
    """The collectives and algorithms a built `coll` program has, as it prints them with
    --list-algorithms (generated from lanecoll's catalogue; docs/architecture.md). The one
    source of these names on the Python side.

    `argv`/`env`: how to start it when it cannot run on its own (an smpicc build only runs
    under smpirun; the caller composes that line), default `program --list-algorithms`."""
    argv = argv or [str(program), "--list-algorithms"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, **env} if env else None,
        )
        catalog = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        raise BuildError(
            f"{program} --list-algorithms did not answer ({exc}); rebuild with `hpcscope build`"
        ) from exc
    if catalog.get("schema") != "hpcscope.algorithms/1":
        raise BuildError(
            f"{program} --list-algorithms printed schema "
            f"{catalog.get('schema')!r}, expected hpcscope.algorithms/1"
        )
    return catalog


def compiled_files(build: Path) -> int:
    """How many C files the last build of this tree compiled (0: it was up to date), from
    its log: cmake prints one 'Building C object' line per compiled file."""
    try:
        return (build / "build.log").read_text(errors="replace").count("Building C object")
    except OSError:
        return 0
