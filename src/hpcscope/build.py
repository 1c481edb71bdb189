"""Compile the C benchmarks and lanecoll against one MPI library, cached per MPI identity.

The build directory is named by the MPI flavor, its version and a hash of the wrapper's
real path, so Open MPI and MPICH builds (or two Open MPI installs) never mix objects.
CMake is re-run on every build: it is cheap when nothing changed and picks up new source
files; `cmake --build` then recompiles only what changed. A file lock serialises builds of
the same tree from concurrent hpcscope processes.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from hpcscope import safe_write
from hpcscope.machine.mpi import MpiSpec
from hpcscope.paths import SOURCE_ROOT, cache_root

BENCH_SOURCE = SOURCE_ROOT / "bench"


class BuildError(Exception):
    """The benchmarks did not compile; the message carries the compiler's last lines."""


def build_dir(mpi: MpiSpec) -> Path:
    real = os.path.realpath(mpi.mpicc)
    digest = hashlib.sha256(f"{real}\0{mpi.version}".encode()).hexdigest()[:10]
    return cache_root() / "build" / f"{mpi.flavor}-{mpi.version}-{digest}"


class BuildInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a build: its processes were ended; the message says so
    (the CLI prints it instead of "nothing was being measured")."""


def _run(argv: list[str], cwd: Path, log: Path) -> None:
    with safe_write.open_append(log) as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        returncode = _run_group(argv, cwd, out)
    if returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-25:])
        raise BuildError(
            f"building against {mpi_label_from(argv)} failed (full log: {log}):\n{tail}"
        )


# -- process groups that must not outlive hpcscope (builds here, jobs in launch/) ----------

# The watcher of one process tree: it waits on a pipe that only this hpcscope process
# holds open. "done" on it: the tree ended normally, nothing to do. End of file without
# "done": hpcscope died (SIGKILL, a crash, a closed terminal), the kernel closed the pipe,
# and the watcher ends the process group and every process inside the given network
# namespaces (the lab's nodes: orteds and ranks that are not in the group). It ignores the
# signals a terminal sends to hpcscope's group, so it outlives the Ctrl-C it must answer.
# `kill -SIG "-$group"`, without `--`: dash's kill (Debian's sh) refuses `--` ("Illegal
# number") and then signalled nothing, so a job that wrote no record for a while outlived
# a killed hpcscope (tests/faults/test_run_guard.py found it with the node net program).
_WATCHER = r"""
trap '' INT TERM HUP QUIT PIPE
IFS= read -r line
[ "$line" = done ] && exit 0
group=$1; shift
sweep() {
  for ns in "$@"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
}
kill -TERM "-$group" 2>/dev/null
sweep "$@"
sleep 1
kill -KILL "-$group" 2>/dev/null
sweep "$@"
exit 0
"""


class TreeGuard:
    """Ends a process group (and whatever runs inside `namespaces`) if this hpcscope
    process dies before calling release(), however it dies, SIGKILL included: a
    watcher (`sh`, in its own session) blocks on a pipe whose writing end only this
    process holds, and acts on end of file. Cost: one `sh` per guarded launch or build
    step (about a millisecond). Ending the tree for a timeout, a hang or Ctrl-C stays
    the caller's work (command.kill_group): the watcher covers the death of hpcscope."""

    def __init__(self, group: int, namespaces: Sequence[str] = ()) -> None:
        self._proc: subprocess.Popen[bytes] | None
        try:
            self._proc = subprocess.Popen(
                ["sh", "-c", _WATCHER, "hpcscope-watcher", str(group), *namespaces],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not in hpcscope's group: survives its Ctrl-C
            )
        except OSError:  # no sh (or no process left): the tree is unguarded, as before
            self._proc = None

    def release(self) -> None:
        """The tree ended (or was ended) while hpcscope lives: the watcher exits."""
        proc, self._proc = self._proc, None
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(b"done\n")
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()

    def __enter__(self) -> TreeGuard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn for subprocess.Popen: the child gets SIGKILL when the thread that
    started it dies (prctl PR_SET_PDEATHSIG). It covers that one process, not what it
    starts (a process group and TreeGuard cover those). libc is looked up here, in the
    parent: the child only makes the call."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None

    def child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)

    return child


def _run_group(argv: list[str], cwd: Path, out: IO[str]) -> int:
    """Runs argv (cmake) in a process group of its own, with everything it starts (make,
    mpicc, cc1, ld): Ctrl-C or any error while it runs ends the whole group before it is
    raised on; if hpcscope is killed outright, cmake gets SIGKILL from the kernel
    (PR_SET_PDEATHSIG) and a watcher ends the rest of the group (TreeGuard).
    Returns the exit status."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        process_group=0,
        preexec_fn=die_with_parent(),  # noqa: PLW1509 - one prctl call, libc resolved before
    )
    guard = TreeGuard(proc.pid)
    try:
        return proc.wait()
    except BaseException:
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        raise
    finally:
        guard.release()


def mpi_label_from(argv: list[str]) -> str:
    for arg in argv:
        if arg.startswith("-DCMAKE_C_COMPILER="):
            return arg.split("=", 1)[1]
    return "the MPI library"


def build(mpi: MpiSpec, jobs: int = 2) -> Path:
    """Configure and build; returns the build directory. Raises BuildError, and
    BuildInterrupted for Ctrl-C or SIGTERM anywhere in it: inside a step (_run_group has
    ended that step's processes) or between the steps."""
    try:
        return _build(mpi, jobs)
    except KeyboardInterrupt:
        raise BuildInterrupted(
            "the build was interrupted: its processes (cmake, the compilers) were "
            "stopped and nothing was measured; `hpcscope build` finishes it"
        ) from None


def _build(mpi: MpiSpec, jobs: int) -> Path:
    target = build_dir(mpi)
    safe_write.ensure_dir(cache_root(), target.relative_to(cache_root()))
    log = target / "build.log"
    with safe_write.open_lock(target / ".lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        safe_write.write_text(log, "")
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
