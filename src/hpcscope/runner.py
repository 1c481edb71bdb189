"""The fixed stages of every run (ReFrame): plan, build, run, check, store, outputs.

Bad input is found while planning, before anything is stored or launched (exit 2). Once
the run exists, every job's records are stored as they arrive; a failed job makes the run
'failed', Ctrl-C makes it 'interrupted', and in both cases what finished stays (exit 1).
Any other fault during the run (a full disk, a locked store, a bug) is caught by the
run's guard (run_jobs): the run is marked failed, the jobs not run are listed, one line
says what happened (exit 1; 2 when nothing ran).
"""

from __future__ import annotations

import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from hpcscope import build as build_mod
from hpcscope import safe_write
from hpcscope.formatting import markup_safe as S
from hpcscope.launch import backends, sim_probe
from hpcscope.launch.base import Backend, BackendError, fault_log, fault_text, progress_bar
from hpcscope.machine import environment, host_load
from hpcscope.machine import mpi as mpi_mod
from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.node_facts import NodeFacts
from hpcscope.machine.topology import Topology
from hpcscope.results import timing
from hpcscope.results.store import Store
from hpcscope.suites.base import PlanContext, SuitePlan
from hpcscope.suites.registry import SUITES, suite_for

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input: the message names the problem and the fix; nothing was run."""


@dataclass
class Outcome:
    run_id: int | None
    status: str
    exit_code: int
    out_dir: Path | None = None
    messages: list[str] = field(default_factory=list)


def prepare(
    suite: str, mpi_spec: str, console: Console, topology: Topology | None = None
) -> tuple[Topology, list[MpiSpec], dict]:
    """Topology, MPI libraries and their builds. Raises UsageError / BuildError.
    `topology`: the nodes the plan is for when they are not this machine (SLURM's compute
    nodes, launch/slurm_topology.py); None reads this machine with hwloc."""
    topology = topology or Topology.local()
    mpis: list[MpiSpec] = []
    builds: dict[str, Path] = {}
    try:
        needs_mpi = suite_for(suite).needs_mpi
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    # Every suite builds: the node programs are compiled with an MPI wrapper too.
    try:
        mpis = mpi_mod.discover(mpi_spec if needs_mpi else "auto")
    except mpi_mod.MpiNotFound as exc:
        raise UsageError(str(exc)) from exc
    for mpi in mpis:
        with console.status(f"checking the build against {mpi.label}"):
            builds[mpi.mpicc] = build_mod.build(mpi)
        compiled = build_mod.compiled_files(builds[mpi.mpicc])
        if compiled:  # an up-to-date build says nothing
            console.print(f"[dim]built the benchmarks against {mpi.label} ({compiled} files)[/dim]")
    return topology, (mpis if needs_mpi else []), builds


def make_context(
    topology: Topology,
    mpis: list[MpiSpec],
    builds: dict[str, Path],
    quick: bool,
    nodes_available: int = 1,
    cores_per_node: int | None = None,
    node_facts: NodeFacts | None = None,
    adds_rounds: bool = False,
) -> PlanContext:
    def binary(name: str, mpi: MpiSpec | None) -> Path:
        tree = builds[mpi.mpicc] if mpi else next(iter(builds.values()))
        return build_mod.find_program(tree, name)

    def catalog(mpi: MpiSpec) -> dict:
        program = binary("coll", mpi)
        if mpi.flavor == mpi_mod.SIMULATED:  # an smpicc program runs only under smpirun
            argv, env = sim_probe.probe_command(program, ["--list-algorithms"], mpi)
            return build_mod.algorithm_catalog(program, argv, env)
        return build_mod.algorithm_catalog(program)

    return PlanContext(
        catalog=catalog,
        topology=topology,
        mpis=mpis,
        binary=binary,
        quick=quick,
        nodes_available=nodes_available,
        cores_per_node=cores_per_node,
        node_facts=node_facts,
        adds_rounds=adds_rounds,
    )


def make_plan(suite: str, ctx: PlanContext, opts: dict) -> SuitePlan:
    try:
        plan = suite_for(suite).plan(ctx, opts)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if not plan.jobs:
        reasons = "; ".join(n.text for n in plan.notes if n.kind == "skipped") or "nothing selected"
        raise UsageError(f"nothing to run for {suite} on this machine: {reasons}")
    return plan


def record_run(
    store: Store,
    suite: str,
    opts: dict,
    topology: Topology,
    mpis: list[MpiSpec],
    plan: SuitePlan,
    backend: str,
    label: str | None,
) -> int:
    run_id = store.create_run(
        suite=suite,
        command=sys.argv,
        options=opts,
        # A probed or given node topology may carry no host name (synthetic XML): then
        # the machine hpcscope ran on.
        host=topology.hostname or socket.gethostname(),
        backend=backend,
        label=label or "",
        topology_xml=topology.xml,
        environment=environment.capture(),
        mpi=[
            {"flavor": m.flavor, "version": m.version, "mpicc": m.mpicc, "mpirun": m.mpirun}
            for m in mpis
        ],
    )
    try:
        for note in plan.notes:
            store.add_note(run_id, note.kind, note.text, note.data)
    except BaseException:  # a locked or full store: the run exists, say it did not run
        try:
            store.finish_run(run_id, "failed")
        except Exception:
            pass
        raise
    return run_id


def run_jobs(
    store: Store,
    run_id: int,
    plan: SuitePlan,
    backend_name: str,
    options: dict,
    topology: Topology,
    folder: Path,
    console: Console,
    chatter: Console | None = None,
) -> Outcome:
    """Hand the plan to the chosen backend. A blocking backend (this machine) runs every job
    now with a progress bar; a queueing one (SLURM) submits, then waits and collects only
    when asked (options["wait"]). Ctrl-C marks the run interrupted and keeps its results.

    The run's guard: any other exception (a full disk, a locked store, a backend's bug)
    ends here, never as a traceback: the job's processes were ended by its backend
    (launch/local.py run_job, lab, sim), the run is marked failed with what is stored,
    the jobs not run are listed in a note, and one line says what happened and what to
    do (run_fault); exit 1, or 2 when nothing ran. Space is set aside beside the
    store meanwhile (Store.reserve_space) so that a full disk can still take that."""
    seen = Seen()
    store.reserve_space()
    try:
        return _run_jobs(
            store, run_id, plan, backend_name, options, topology, folder, console, chatter, seen
        )
    except Exception as exc:
        return run_fault(store, run_id, plan, exc, folder, seen)
    finally:
        store.release_reserve()


def more_rounds(store, run_id, plan: SuitePlan, backend, started: float, progress, bar) -> None:
    """A suite that measures to a precision (its `follow_up`, e.g. suites/p2p_adaptive)
    gets to add launches after every round, on a backend that runs them now; the plan
    grows with them, so the run's guard knows them too."""
    suite = SUITES.get(plan_suite(plan))  # a plan of the tests' own toy jobs has none
    follow_up = suite.follow_up if suite else None
    while follow_up is not None:
        more = follow_up(store, run_id, plan.jobs, started)
        if not more:
            return
        plan.jobs.extend(more)
        progress.update(bar, total=len(plan.jobs))
        backend.submit(run_id, more)


@dataclass
class Seen:
    """The jobs a backend started and ended, as on_job reported them (the run's guard
    lists the others as not run)."""

    started: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)


def run_fault(
    store: Store, run_id: int, plan: SuitePlan, exc: Exception, folder: Path, seen: Seen
) -> Outcome:
    """What the run's guard does with an exception: the run marked failed, an `error` note
    with the cause, a `skipped` note listing the jobs not run, one line for the terminal.
    A cause outside hpcscope is named (base.fault_text); anything else is a bug: its
    traceback goes to a log file whose path the line gives."""
    cause = fault_text(exc, [folder, store.path.parent.absolute()])
    log = None
    if cause is None:
        log = fault_log(exc, folder)
        cause = (
            f"unexpected error ({type(exc).__name__}: {exc}); this is a bug in hpcscope, "
            f"please report it with the traceback in {log or '(the log could not be written)'}"
        )
    begun = set(seen.started)
    not_run = [job.name for job in plan.jobs if job.name not in begun]
    marked = f"run {run_id} marked failed"
    try:
        store.add_note(
            run_id,
            "error",
            f"the run stopped: {cause}",
            {"fault": type(exc).__name__, "log": str(log) if log else None},
        )
        if not_run:
            store.add_note(
                run_id,
                "skipped",
                f"not run, the run stopped before them: {', '.join(not_run)}",
                {"not_run": not_run},
            )
        store.finish_run(run_id, "failed")
    except Exception as second:
        why = fault_text(second, [store.path.parent.absolute()]) or str(second)
        marked = f"run {run_id} could not be marked failed ({why}); it lists as abandoned"
    done, stopped = len(seen.ended), len(seen.started) - len(seen.ended)
    line = (
        f"{cause}. {marked}: {done} of {len(plan.jobs)} job(s) finished, {stopped} "
        f"stopped, {len(not_run)} not run; what finished is kept (`hpcscope show {run_id}`)"
    )
    try:  # "nothing was run" (exit 2): no job ended and no program wrote a record
        ran = bool(seen.ended) or any(l.get("meta") for l in store.launches(run_id))
    except Exception:
        ran = bool(seen.started)
    return Outcome(run_id, "failed", EXIT_FAILED if ran else EXIT_USAGE, folder, [line])


def _run_jobs(
    store: Store,
    run_id: int,
    plan: SuitePlan,
    backend_name: str,
    options: dict,
    topology: Topology,
    folder: Path,
    console: Console,
    chatter: Console | None,
    seen: Seen,
) -> Outcome:
    failed: list[str] = []
    folder = make_out_dir(folder, named=bool(options.get("out_dir")))  # before any job
    progress = progress_bar(console, transient=chatter is not None and chatter.quiet)
    bar = progress.add_task("starting", total=len(plan.jobs))

    loads = host_load.JobLoads(store, run_id, backend_name)  # steal, other processes

    def on_job(job, state) -> None:
        if state is None:
            seen.started.append(job.name)
            progress.update(bar, description=f"{job.suite} {job.name}")
            loads.started(job)
            return
        seen.ended.append(job.name)
        loads.ended(job)
        if state.state == "SKIPPED":  # a backend that cannot run it said why (lab: MPICH)
            console.print(f"[yellow]{job.name} skipped[/yellow]: {state.detail}")
        elif state.state != "COMPLETED":
            failed.append(f"{job.name}: {state.state}\n{state.detail}")
            console.print(
                f"[red]{S(job.name)} {state.state}[/red]: {S(_first_useful_line(state.detail))}"
            )
        progress.advance(bar)

    def on_step(job, text: str) -> None:
        """A step measured (local, lab): the progress line shows the job's last test and
        size (LocalBackend.stepper)."""
        progress.update(bar, description=f"{job.suite} {job.name}: {S(text)}")

    on_job.step = on_step  # type: ignore[attr-defined]
    backend = backends.backend_for(backend_name).make(
        backends.BackendContext(store, folder, topology, options, on_job)
    )
    try:
        if backend.blocking:
            with progress:
                started = time.monotonic()
                backend.submit(run_id, plan.jobs)
                more_rounds(store, run_id, plan, backend, started, progress, bar)
        else:
            backend.submit(run_id, plan.jobs)
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted")
        return Outcome(
            run_id,
            "interrupted",
            EXIT_FAILED,
            folder,
            [
                "interrupted: the results finished so far are kept in the store "
                f"(run {run_id}, marked interrupted)"
            ],
        )
    except BackendError as exc:
        started = bool(store.launches(run_id))
        store.add_note(run_id, "error", f"{backend.name} submission failed: {exc}")
        store.finish_run(run_id, "failed")
        return Outcome(
            run_id,
            "failed",
            EXIT_FAILED if started else EXIT_USAGE,
            folder,
            [f"{backend.name}: {exc}"],
        )
    if backend.blocking:
        status = "failed" if failed else "ok"
        store.finish_run(run_id, status)
        note_timer_findings(store, run_id)
        try:
            write_outputs(store, run_id, plan_suite(plan), folder, chatter or console)
        except KeyboardInterrupt:  # the measurement is complete and stored; only files lack
            return Outcome(
                run_id,
                status,
                EXIT_FAILED,
                folder,
                [
                    f"interrupted while writing figures and tables; every result is stored "
                    f"(run {run_id} {status}); `hpcscope report {run_id}` draws them later"
                ],
            )
        except Exception as exc:  # e.g. the output folder's disk is full: only files lack
            cause = fault_text(exc, [folder])
            if cause is None:
                log = fault_log(exc, None)
                cause = (
                    f"unexpected error ({type(exc).__name__}: {exc}), a bug in hpcscope: "
                    f"please report it with the traceback in {log or '(not written)'}"
                )
            try:
                store.add_note(run_id, "error", f"figures and tables not written: {cause}")
            except Exception:
                pass
            return Outcome(
                run_id,
                status,
                EXIT_FAILED,
                folder,
                [
                    f"figures and tables not written: {cause}. Every result is stored (run "
                    f"{run_id} {status}); `hpcscope report {run_id} -o DIR` draws them later"
                ],
            )
        messages = (
            [
                f"{len(failed)} of {len(plan.jobs)} jobs failed; finished results are "
                f"kept (run {run_id} marked failed). First failure:\n{failed[0]}"
            ]
            if failed
            else []
        )
        return Outcome(run_id, status, EXIT_FAILED if failed else EXIT_OK, folder, messages)
    # Queued jobs outlive this process: the run is not abandoned when it exits.
    store.set_run_backend_data(run_id, {"owner": None})
    console.print(S(backend.status_text(run_id)))
    if not options.get("wait"):
        return Outcome(
            run_id,
            "submitted",
            EXIT_OK,
            folder,
            [
                f"submitted; follow with `hpcscope slurm status {run_id}` and "
                f"ingest with `hpcscope slurm collect {run_id}`"
            ],
        )
    try:
        backend.wait(run_id, console=console)
    except KeyboardInterrupt:
        return Outcome(
            run_id,
            "submitted",
            EXIT_FAILED,
            folder,
            [
                f"stopped waiting; the jobs keep running. `hpcscope slurm "
                f"collect {run_id}` ingests them later"
            ],
        )
    except BackendError as exc:
        return Outcome(run_id, "failed", EXIT_FAILED, folder, [str(exc)])
    return collect(store, backend, run_id, folder, console)


def collect(store: Store, backend: Backend, run_id: int, folder: Path, console: Console) -> Outcome:
    """Ingest what a queueing backend's jobs wrote; outputs once nothing is pending."""
    report = backend.collect(run_id)
    console.print(S(report.text()))
    if report.pending == 0:
        note_timer_findings(store, run_id)
        write_outputs(store, run_id, store.run(run_id)["suite"], folder, console)
    status = store.run(run_id)["status"]
    return Outcome(run_id, status, EXIT_FAILED if report.failed else EXIT_OK, folder, [])


def plan_suite(plan: SuitePlan) -> str:
    return plan.jobs[0].suite if plan.jobs else ""


_DETAIL_HEADERS = ("command:", "stderr:", "stdout (not records):")


def _first_useful_line(detail: str) -> str:
    """The line of a failed launch's detail that says what went wrong (not a header)."""
    for line in detail.splitlines():
        if line.strip() and not line.startswith(_DETAIL_HEADERS):
            return line
    return detail.splitlines()[0] if detail else ""


def note_timer_findings(store: Store, run_id: int) -> None:
    """A `warning` note per (benchmark, MPI) whose timed intervals were too short for the
    clock (results/timing.py), once per run: `show` and the report list warning notes."""
    if any("timer_check" in (n.get("data") or {}) for n in store.run(run_id).get("notes") or []):
        return
    for finding in timing.run_findings(store.launches(run_id), store.samples(run_id)):
        store.add_note(run_id, "warning", timing.finding_text(finding), {"timer_check": finding})


def write_outputs(
    store: Store, run_id: int, suite: str, out_dir: Path, console: Console | None = None
) -> list[Path]:
    """Figures and tables of the run into its folder (the suite's output writer); the
    folder as make_out_dir made it."""
    safe_write.ensure_dir(out_dir)
    written = suite_for(suite).outputs(store, run_id, out_dir)
    if written and console is not None:
        console.print(f"figures and tables: {S(out_dir)}/")
    return written


def print_notes(plan: SuitePlan, console: Console) -> None:
    for note in plan.notes:
        if note.kind in ("skipped", "warning", "precision", "info"):
            console.print(f"[yellow]{note.kind}[/yellow]: {S(note.text)}")


def default_out_dir(run_id: int, db: str | Path = "hpcscope.db") -> Path:
    """hpcscope-out/run-ID for the default store; other stores in the same folder get
    their name in front (hpcscope-out/other-run-ID), so their runs never share a folder."""
    stem = Path(db).stem
    prefix = "" if stem == "hpcscope" else f"{stem}-"
    return Path("hpcscope-out") / f"{prefix}run-{run_id}"


def make_out_dir(folder: Path, named: bool) -> Path:
    """The run's output folder, made: as the user named it (`named`, -o/--out: it may be
    a symbolic link), else the default hpcscope-out/[<db>-]run-ID, whose last part must
    be this user's own folder, never a link planted in a shared hpcscope-out
    (safe_write.ensure_dir raises UnsafeFolder, one line naming it)."""
    if named:
        return safe_write.ensure_dir(folder)
    return safe_write.ensure_dir(folder.parent, folder.name)


def check_writable(folder: Path) -> None:
    """Refuse an output folder that cannot be made or written, before a run exists."""
    try:
        safe_write.ensure_dir(folder)
        safe_write.probe_writable(folder)  # a new random name: no existing file is touched
    except OSError as exc:
        raise UsageError(
            f"--out {folder}: cannot write there ({exc.strerror}); choose a folder you can write"
        ) from None
