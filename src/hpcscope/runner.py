"""The fixed stages of every run (ReFrame): plan, build, run, check, store, outputs.

Bad input is found while planning, before anything is stored or launched (exit 2). Once
the run exists, every job's records are stored as they arrive; a failed job makes the run
'failed', Ctrl-C makes it 'interrupted', and in both cases what finished stays (exit 1).
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hpcscope import build as build_mod
from hpcscope.launch import local
from hpcscope.machine import environment, mpi as mpi_mod
from hpcscope.machine.topology import Topology
from hpcscope.machine.mpi import MpiSpec
from hpcscope.results.store import Store
from hpcscope.suites.base import PlanContext, SuitePlan

SUITES = ("p2p", "coll", "lanes", "node")
NEEDS_MPI = {"p2p", "coll", "lanes"}
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


def suite_module(name: str):
    if name not in SUITES:
        raise UsageError(f"unknown suite '{name}'; choose one of {', '.join(SUITES)}")
    return importlib.import_module(f"hpcscope.suites.{name}")


def prepare(suite: str, mpi_spec: str, console: Console) -> tuple[Topology, list[MpiSpec], dict]:
    """Topology, MPI libraries and their builds. Raises UsageError / BuildError."""
    topology = Topology.local()
    mpis: list[MpiSpec] = []
    builds: dict[str, Path] = {}
    if suite in NEEDS_MPI or suite == "node":
        try:
            mpis = mpi_mod.discover(mpi_spec if suite in NEEDS_MPI else "auto")
        except mpi_mod.MpiNotFound as exc:
            raise UsageError(str(exc)) from exc
        for mpi in mpis:
            console.print(f"[dim]building benchmarks against {mpi.label} ...[/dim]")
            builds[mpi.mpicc] = build_mod.build(mpi)
    return topology, (mpis if suite in NEEDS_MPI else []), builds


def make_context(topology: Topology, mpis: list[MpiSpec], builds: dict[str, Path],
                 quick: bool, nodes_available: int = 1) -> PlanContext:
    def binary(name: str, mpi: MpiSpec | None) -> Path:
        tree = builds[mpi.mpicc] if mpi else next(iter(builds.values()))
        return build_mod.find_program(tree, name)

    return PlanContext(topology=topology, mpis=mpis, binary=binary, quick=quick,
                       nodes_available=nodes_available)


def make_plan(suite: str, ctx: PlanContext, opts: dict) -> SuitePlan:
    try:
        plan = suite_module(suite).plan(ctx, opts)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if not plan.jobs:
        reasons = "; ".join(n.text for n in plan.notes if n.kind == "skipped") or "nothing selected"
        raise UsageError(f"nothing to run for {suite} on this machine: {reasons}")
    return plan


def record_run(store: Store, suite: str, opts: dict, topology: Topology, mpis: list[MpiSpec],
               plan: SuitePlan, backend: str, label: str | None) -> int:
    run_id = store.create_run(
        suite=suite, command=sys.argv, options=opts, host=topology.hostname, backend=backend,
        label=label or "", topology_xml=topology.xml, environment=environment.capture(),
        mpi=[{"flavor": m.flavor, "version": m.version, "mpicc": m.mpicc, "mpirun": m.mpirun}
             for m in mpis])
    for note in plan.notes:
        store.add_note(run_id, note.kind, note.text, note.data)
    return run_id


def run_local(store: Store, run_id: int, plan: SuitePlan, topology: Topology, out_dir: Path,
              console: Console) -> Outcome:
    failed: list[str] = []
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=not console.is_terminal)
    try:
        with progress:
            task = progress.add_task("starting", total=len(plan.jobs))

            def on_job(job, state) -> None:
                if state is None:
                    progress.update(task, description=f"{job.suite} {job.name}")
                    return
                if state.state != "COMPLETED":
                    failed.append(f"{job.name}: {state.state}\n{state.detail}")
                    console.print(f"[red]{job.name} {state.state}[/red]: "
                                  f"{_first_useful_line(state.detail)}")
                progress.advance(task)

            local.LocalBackend(store, out_dir / "launch", topology, on_job).submit(run_id, plan.jobs)
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted")
        return Outcome(run_id, "interrupted", EXIT_FAILED, out_dir,
                       ["interrupted: the results finished so far are kept in the store "
                        f"(run {run_id}, marked interrupted)"])
    status = "failed" if failed else "ok"
    store.finish_run(run_id, status)
    messages = [f"{len(failed)} of {len(plan.jobs)} jobs failed; finished results are kept "
                f"(run {run_id} marked failed). First failure:\n{failed[0]}"] if failed else []
    return Outcome(run_id, status, EXIT_FAILED if failed else EXIT_OK, out_dir, messages)


def _first_useful_line(detail: str) -> str:
    for line in detail.splitlines():
        if not line.startswith("command:"):
            return line
    return detail.splitlines()[0] if detail else ""


def write_outputs(store: Store, run_id: int, suite: str, out_dir: Path) -> list[Path]:
    """Figures and tables of the run into its folder (suite modules may define outputs)."""
    module = suite_module(suite)
    writer = getattr(module, "outputs", None)
    if writer is None:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    return writer(store, run_id, out_dir)


def print_notes(plan: SuitePlan, console: Console) -> None:
    for note in plan.notes:
        if note.kind in ("skipped", "warning"):
            console.print(f"[yellow]{note.kind}[/yellow]: {note.text}")


def default_out_dir(run_id: int) -> Path:
    return Path("hpcscope-out") / f"run-{run_id}"
