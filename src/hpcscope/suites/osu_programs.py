"""`run p2p|coll|nbc|rma|startup --osu-dir DIR`: a user's own OSU Micro-Benchmarks build,
run through the same plan as the suite's own jobs (same ranks, binding, nodes), its text
output parsed (results/parsers.parse_osu) into records tagged tool=osu.

What is checked before anything is stored (bad input -> ValueError, exit 2):
  - DIR holds at least one of the OSU programs of the chosen tests or collectives, looked
    up by name in DIR and in the folders an OSU install or build tree puts them
    (SUBDIRS: DIR/mpi/<kind>, DIR/libexec/osu-micro-benchmarks/mpi/<kind>, DIR/c/mpi/<kind>
    and their standard/, persistent/, blocking/, ... subfolders); a chosen one DIR lacks
    is a `skipped` note of the run;
  - each program's MPI library (from `ldd`: libmpi.so = Open MPI, libmpich = MPICH) is
    one of --mpi; it is launched with that library's mpirun only;
  - each program, launched once on the suite's rank count with one iteration at 1 byte
    (`-m 1:1 -i 1 -x 0`, no -m for the barriers, nothing for osu_init/osu_hello; about a
    second), prints OSU's format as UTF-8 text, with the one size asked for, once. One that
    does not is a `skipped` note naming why (OSU's own limits, e.g. its neighbourhood
    programs' radius on few ranks); none passing is the error. Only on this machine: with
    more nodes (SLURM, lab) a wrong program shows up as an error record instead.

In the run itself every OSU job's output is checked again (launch/ingest.py): bytes that
are not UTF-8 fail that job naming the program, a size printed twice or outside -m fails
it, a size of the range missing is a `warning` note of the run (show, report).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from hpcscope.build import TreeGuard
from hpcscope.launch import command, launcher
from hpcscope.machine.mpi import MpiSpec, launch_env
from hpcscope.plan.job import Job
from hpcscope.results.nbc_names import osu_program
from hpcscope.results.parsers import check_osu_sizes, parse_osu
from hpcscope.results.rma_tests import RMA_TESTS
from hpcscope.suites.base import Note, PlanContext, SuitePlan

PROGRAMS = {"latency": "osu_latency", "bw": "osu_bw", "bibw": "osu_bibw", "mbw_mr": "osu_mbw_mr"}
PROGRAMS |= {t: f"osu_{t}" for t in ("latency_persistent", "bw_persistent", "bibw_persistent")}
PROGRAMS |= {"latency_mt": "osu_latency_mt", "latency_mp": "osu_latency_mp"}
PROGRAMS |= {"bw_fan_in": "osu_bw_fan_in", "bw_fan_out": "osu_bw_fan_out"}
STARTUP = {"init": "osu_init", "hello": "osu_hello"}  # startup's phases -> OSU's programs
SIZELESS = ("osu_barrier", "osu_ibarrier", "osu_barrier_persistent", *STARTUP.values())
# OSU's folders per kind of program, and the subfolders its sources (c/mpi/<kind>/...) and
# its install (persistent/) put them in
KINDS = {
    "pt2pt": ("standard", "persistent", "congestion"),
    "collective": ("blocking", "non_blocking", "persistent", "neighborhood"),
    "one-sided": (),
    "startup": (),
}
SUITE_KIND = {"p2p": "pt2pt", "coll": "collective", "nbc": "collective"}
SUITE_KIND |= {"rma": "one-sided", "startup": "startup"}
PROBE_TIMEOUT_S = 60.0


def subdirs(kind: str) -> tuple[str, ...]:
    bases = ("", kind, f"mpi/{kind}", f"libexec/osu-micro-benchmarks/mpi/{kind}", f"c/mpi/{kind}")
    # OSU's install puts the fan programs (c/mpi/pt2pt/congestion) in mpi/congestion
    beside = ("mpi/congestion", "libexec/osu-micro-benchmarks/mpi/congestion") * (kind == "pt2pt")
    return bases + tuple(f"{b}/{s}".lstrip("/") for b in bases for s in KINDS[kind]) + beside


def fix(kind: str) -> str:
    return (
        f"give the folder holding OSU's built {kind} programs, e.g. --osu-dir "
        f"/opt/osu/libexec/osu-micro-benchmarks/mpi/{kind} (or the install prefix /opt/osu)"
    )


def wanted(suite: str, names: Iterable[str]) -> dict[str, str]:
    """{name: OSU program} for a suite's tests, collectives or phases that OSU 7.4 has."""
    out: dict[str, str] = {}
    for name in names:
        if suite == "p2p":
            program = PROGRAMS.get(name)
        elif suite in ("coll", "nbc"):
            program = osu_program(name)
        elif suite == "rma":
            program = RMA_TESTS[name].program if name in RMA_TESTS else None
        else:
            program = STARTUP.get(name)
        if program:
            out[name] = program
    return out


def find_programs(osu_dir: str, programs: dict[str, str], kind: str) -> dict[str, Path]:
    """{name: executable} of the wanted programs that DIR has; ValueError when it has none."""
    root = Path(osu_dir).expanduser()
    if not root.is_dir():
        raise ValueError(f"--osu-dir {osu_dir}: not a folder; {fix(kind)}")
    found: dict[str, Path] = {}
    for name, program in programs.items():
        for sub in subdirs(kind):
            path = root / sub / program
            if path.is_file() and path.stat().st_mode & 0o111:
                # not resolve(): OSU-like programs may dispatch on their name
                found[name] = path.absolute()
                break
    if not found:
        wanted = list(dict.fromkeys(programs.values()))
        names = ", ".join(wanted[:4]) or "(no OSU counterpart chosen)"
        names += f" or any of {len(wanted) - 4} more OSU {kind} programs" * (len(wanted) > 4)
        raise ValueError(f"--osu-dir {osu_dir}: no executable {names} there; {fix(kind)}")
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


def probe(program: Path, mpi: MpiSpec, kind: str = "pt2pt", ranks: int = 2) -> str | None:
    """One tiny launch on `ranks` ranks; what is wrong unless it prints OSU's format."""
    sized = program.name not in SIZELESS
    args = [] if kind == "startup" else ["-m", "1:1"] * sized + ["-i", "1", "-x", "0"]
    job = Job(suite="osu", name="osu-probe", program=[str(program), *args], mpi=mpi, ranks=ranks)
    job.oversubscribe = True  # one iteration checks the format, not the timing
    with tempfile.TemporaryDirectory(prefix="hpcscope-osu-probe-") as tmp:
        proc = command.start(launcher.mpirun_argv(job, Path(tmp)), launch_env(mpi))
        try:
            with TreeGuard(proc.pid):  # a killed hpcscope takes the probe along
                out, errs = proc.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            command.kill_group(proc)
            return f"did not finish a 1-iteration run in {PROBE_TIMEOUT_S:.0f} s"
        except UnicodeDecodeError as exc:
            command.kill_group(proc)
            bad = bytes(exc.object[exc.start : exc.start + 1]).hex()
            return f"wrote bytes that are not UTF-8 text (0x{bad}), not OSU's output"
    if proc.returncode != 0:  # OSU's own reason first (e.g. its fan programs on one host):
        # its error line comes before the launcher's notice about the exit code
        first = next((line.strip() for line in errs.splitlines() if line.strip()), "")
        return f"exit code {proc.returncode} ({first[:200]})"
    records = parse_osu(out, program.name)
    problem = next((r["message"] for r in records if r["type"] == "error"), None)
    if sized and kind != "startup":
        problem = problem or next(iter(check_osu_sizes(records, (1, 1), program.name)[0]), None)
    return problem


def programs(
    osu_dir: str,
    names: Iterable[str],
    mpis: list[MpiSpec],
    check: bool,
    suite: str = "p2p",
    ranks: int = 2,
) -> tuple[dict[str, tuple[Path, MpiSpec]], list[Note]]:
    """({name: (program, its MPI)}, skipped notes on the chosen ones DIR lacks or whose
    probe failed). `check`: probe every program by launching it (this machine only)."""
    kind = SUITE_KIND[suite]
    want = wanted(suite, names)
    found = find_programs(osu_dir, want, kind)
    chosen = {name: (path, library_of(path, mpis)) for name, path in found.items()}
    notes = [
        Note("skipped", f"{program} not in --osu-dir {osu_dir}", {"osu_program": program})
        for name, program in want.items()
        if name not in found
    ]
    failed: list[str] = []
    for name, (path, mpi) in list(chosen.items()) if check else []:
        problem = probe(path, mpi, kind, ranks)
        if problem:
            failed.append(f"--osu-dir: {path} with {mpi.label}: {problem}")
            del chosen[name]
    if failed and not chosen:
        raise ValueError(f"{failed[0]}; {fix(kind)}")
    notes += [Note("skipped", f"{why}; left out", {}) for why in failed]
    return chosen, notes


def program_args(low: int, high: int, program: Path | str = "") -> list[str]:
    """OSU's own loop with its defaults, only the size range set (OSU starts at 1 B)."""
    if Path(program).name in SIZELESS:
        return []
    return ["-m", f"{max(low, 1)}:{high}"]


def beside(
    jobs: list[Job],
    chosen: dict[str, tuple[Path, MpiSpec]],
    args: Callable[[str, Path], list[str]],
    which: Callable[[Job], Iterable[str]] | None = None,
) -> list[Job]:
    """The OSU jobs planned like the suite's own `jobs`: for each distinct launch shape
    (MPI, repeat, placement, ranks) each chosen program `which` allows, with the same
    ranks, CPUs, nodes, env and binding, tagged tool=osu. `args(name, path)`: its options."""
    out: list[Job] = []
    seen: set[tuple] = set()
    for job in jobs:
        tags = job.tags
        shape = (job.mpi and job.mpi.flavor, tags.get("repeat"), tags.get("placement"), job.ranks)
        allowed = set(which(job) if which else chosen)
        for name, (path, mpi) in chosen.items():
            if name not in allowed or job.mpi is None or mpi.flavor != job.mpi.flavor:
                continue
            if (*shape, name) in seen:
                continue
            seen.add((*shape, name))
            own = {k: v for k, v in tags.items() if k != "protocol"}
            out.append(
                dataclasses.replace(
                    job,
                    name=f"osu/{name}/{job.name}",
                    program=[str(path), *args(name, path)],
                    mpi=mpi,
                    env=dict(job.env),
                    tags={**own, "tool": "osu"},
                    output="osu",
                )
            )
    return out


def add(
    ctx: PlanContext,
    opts: dict,
    suite: str,
    names: Iterable[str],
    result: SuitePlan,
    args: Callable[[str, Path], list[str]],
    which: Callable[[Job], Iterable[str]] | None = None,
) -> None:
    """`--osu-dir`'s jobs beside the suite's own in `result` (nothing without it): the
    programs of `names` found and probed (on the suite's largest rank count), their notes."""
    if not opts.get("osu_dir"):
        return
    if any(m.flavor == "smpi" for m in ctx.mpis):
        raise ValueError("--osu-dir runs your OSU build on a real MPI; drop it with --on sim")
    ranks = max((j.ranks for j in result.jobs), default=2)
    chosen, notes = programs(
        opts["osu_dir"], names, ctx.mpis, ctx.nodes_available == 1, suite, ranks
    )
    result.notes += notes
    result.jobs += beside(result.jobs, chosen, args, which)


def count_range(counts: str | None, element: int = 4) -> tuple[int, int] | None:
    """The bytes (MIN, MAX) of a coll count spec ('1:1024:2' or '1,64,4096'; counts with a
    p suffix left out) in MPI_INT elements; None: none given (OSU's own default sizes)."""
    if not counts:
        return None
    sweep = re.fullmatch(r"(\d+):(\d+)(?::\d+)?", counts)
    plain = [int(c) for c in counts.split(",") if c.strip().isdigit()]
    low, high = (int(sweep[1]), int(sweep[2])) if sweep else (min(plain or [0]), max(plain or [0]))
    return (low * element, high * element) if high else None
