"""`hpcscope demo`: the quick characterization of this machine, then the report."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from hpcscope import build as build_mod
from hpcscope import runner, safe_write
from hpcscope.analysis import summary
from hpcscope.cli.common import err, handle_errors, nonempty, store_of
from hpcscope.cli.run import execute_command, run_coll, run_lanes, run_node, run_p2p
from hpcscope.formatting import markup_safe as S
from hpcscope.machine import environment
from hpcscope.machine.topology import Topology
from hpcscope.plan import placement
from hpcscope.report import html


def _defaults(ctx: click.Context, command: click.Command, **overrides) -> dict:
    """A run subcommand's options as click parses an empty command line (its defaults),
    with the demo's choices. A choice that is not one of the command's options (renamed
    or removed) stops the demo here instead of being ignored."""
    with command.make_context(command.name, [], parent=ctx) as sub:
        values = dict(sub.params)
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise TypeError(f"`run {command.name}` has no option {', '.join(unknown)}")
    values.update(overrides)
    return values


# The demo's coll step is lanecoll's check: the collectives lanecoll decomposes. `run coll`
# also measures the native-only ones (barrier, alltoallv, alltoallw, reduce_scatter) and
# their guideline mock-ups; in the demo they would add ~100 KB of figures to the report
# and time to the step without a lane or hier comparison.
LANECOLL_COLLECTIVES = (
    "bcast,gather,scatter,allgather,alltoall,reduce,allreduce,reduce_scatter_block,scan,"
    "exscan,allgatherv,gatherv,scatterv"
)


@click.command()
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="hpcscope-out/demo",
    show_default=True,
    help="Folder for the runs' files and the report.",
)
@click.option("--mpi", default="all", show_default=True, help="MPI libraries to characterize.")
@click.pass_context
@handle_errors
def demo(ctx, out_dir: str, mpi: str) -> None:
    """The quick characterization of this machine, then the report (what `make demo` runs).

    \b
    1. topology and placement classes      3. collectives: native vs lane vs hier
    2. p2p latency/bandwidth, both MPIs    4. lane pattern and multi-collective
                                           5. node: CPU, memory, disk, network
    Each step is an ordinary stored run; a failing step does not stop the others. Where
    step 4 has one process per node (no k > 1), the lane pattern also runs on a small
    simulated cluster (SimGrid, if found), labelled as simulated.

    \b
    Example: hpcscope demo --out hpcscope-out/demo --mpi openmpi
    """
    nonempty(out_dir, "-o/--out", "hpcscope-out/demo")
    folder = Path(out_dir)
    topology = Topology.local()
    machine = topology.summary(environment.total_memory())  # the OS's memory beside hwloc's
    err.print(f"[bold]hpcscope demo[/bold]: {S(machine)}", soft_wrap=True)
    err.print(f"  {S(placement_line(topology))}", soft_wrap=True)
    # Demo choices beyond --quick: validate data, and emulate two nodes of one rank so the
    # lane decompositions do real inter-"node" work on a one-machine laptop.
    steps: list[tuple[str, str, click.Command, dict[str, Any]]] = [
        ("p2p", "point-to-point latency and bandwidth", run_p2p, {"validate": True}),
        (
            "coll",
            "collectives vs lanecoll",
            run_coll,
            {"node_size": 1, "interleave": True, "collectives": LANECOLL_COLLECTIVES},
        ),
        ("lanes", "lane pattern, multi-collective", run_lanes, {"node_size": 1}),
        ("node", "CPU, memory, disk, network", run_node, {}),
    ]
    quiet = Console(stderr=True, quiet=True)  # each run's own chatter; one line per step here
    run_ids: list[int] = []
    failed: list[str] = []
    for suite, what, command, extra in steps:
        kw = _defaults(
            ctx,
            command,
            quick=True,
            mpi=mpi,
            out_dir=str(safe_write.ensure_dir(folder, suite)),  # never a planted link
            label=f"demo {suite}",
            **extra,
        )
        started = time.monotonic()
        try:
            outcome = execute_command(ctx, suite, kw, chatter=quiet)
        except (runner.UsageError, build_mod.BuildError) as exc:
            err.print(f"  {suite:<6} [red]not run[/red]: {S(exc)}", soft_wrap=True)
            failed.append(suite)
            continue
        took = time.monotonic() - started
        if outcome is None or outcome.run_id is None:
            continue
        run_ids.append(outcome.run_id)
        if outcome.exit_code:
            failed.append(suite)
        err.print(
            f"  {suite:<6} {what}: {S(_step_result(store_of(ctx), outcome, took))}", soft_wrap=True
        )
        if suite == "lanes":
            simulated = simulated_lanes(ctx, folder, outcome.run_id, quiet)
            run_ids += [simulated] if simulated is not None else []
    if not run_ids:
        err.print("[red]nothing was measured[/red]")
        sys.exit(runner.EXIT_FAILED)
    started = time.monotonic()
    page = html.write_report(store_of(ctx), run_ids, safe_write.ensure_dir(folder, "report"))
    err.print(
        f"  report {page.stat().st_size / 1e6:.1f} MB, runs {', '.join(map(str, run_ids))} "
        f"({time.monotonic() - started:.0f} s)"
    )
    store = store_of(ctx)
    found = summary.Summary()
    for rid in run_ids:
        found.extend(summary.summarize(store.run(rid), store.samples(rid), store.launches(rid)))
    err.print("\n[bold]How fast this machine and its MPI are[/bold] (the report's summary):")
    for line in found.headline_lines():
        err.print(f"  {S(line)}", soft_wrap=True)
    if failed:
        err.print(f"[red]steps with failures: {', '.join(failed)}[/red] (see `hpcscope show RUN`)")
    err.print("\nThe report (open it in a browser; `hpcscope show last`, `hpcscope list` next):")
    click.echo(str(page.resolve()))
    sys.exit(runner.EXIT_FAILED if failed else runner.EXIT_OK)


# Where the measured lane pattern has no k > 1 (one process per emulated node: nothing to
# split over lanes), the demo runs it on a small simulated cluster so a newcomer sees what
# lanes do: Hydra's model (2 lanes per node, one per socket) cut to 4 nodes of 2 sockets x
# 2 cores, 16 ranks, k = 1, 2, 4: two simulated launches of about 1.1 s CPU each, 4.5-5 s
# of wall time on the 2-vCPU guest it was measured on (12-14 s while other work loaded it
# to 18); the first time also builds the benchmarks against SMPI (~35 s there).
SIM_PLATFORM = "hydra:nodes=4,cores_per_socket=2"


def simulated_lanes(
    ctx: click.Context, folder: Path, measured: int | None, quiet: Console
) -> int | None:
    """The run id of the simulated lane pattern, or None where the measured run compared
    lanes already, SimGrid is not found, or the simulation did not run (one line says why;
    an extra step, so it never fails the demo)."""
    from hpcscope.machine import mpi as mpi_mod

    store = store_of(ctx)
    if measured is None or any(
        line.best_factor is not None
        for line in summary.lanes_lines(measured, store.samples(measured))
    ):
        return None
    label = f"lanes  simulated ({SIM_PLATFORM})"
    if not mpi_mod.smpi_installs():
        err.print(
            f"  {label}: skipped, SimGrid's smpicc/smpirun not found "
            "(scripts/install-deps installs it; `hpcscope build --mpi smpi` builds one)",
            soft_wrap=True,
        )
        return None
    kw = _defaults(
        ctx,
        run_lanes,
        quick=True,
        mpi="smpi",
        on="sim",
        platform=SIM_PLATFORM,
        out_dir=str(safe_write.ensure_dir(folder, "lanes-simulated")),
        label="demo lanes (simulated)",
    )
    started = time.monotonic()
    try:
        outcome = execute_command(ctx, "lanes", kw, chatter=quiet)
    except Exception as exc:  # an extra step: whatever stops it, the measured ones stand
        err.print(
            f"  {label}: [yellow]not run[/yellow] ({type(exc).__name__}: {S(exc)}); the "
            "measured steps are not affected",
            soft_wrap=True,
        )
        return None
    if outcome is None or outcome.run_id is None:
        return None
    took = time.monotonic() - started
    err.print(
        f"  {label}, what lanes do on a cluster: {S(_step_result(store_of(ctx), outcome, took))}",
        soft_wrap=True,
    )
    return outcome.run_id


def placement_line(topology: Topology) -> str:
    """'placements: core (CPUs 0,1), default; not here: smt (no SMT), ...' in one line."""
    offered, missing = [], []
    for place in placement.plan_placements(topology, list(placement.PLACEMENTS)):
        if place.skipped:
            missing.append(f"{place.name} ({place.skipped.split(':')[0]})")
        elif place.cpus:
            offered.append(f"{place.name} (CPUs {','.join(map(str, place.cpus))})")
        else:
            offered.append(place.name)
    text = f"placements: {', '.join(offered)}"
    return text + (f"; not on this machine: {', '.join(missing)}" if missing else "")


def _step_result(store, outcome: runner.Outcome, took: float) -> str:
    """'run 1 ok, 12 launches, 1128 samples, 48 s'."""
    assert outcome.run_id is not None
    launches = store.launches(outcome.run_id)
    samples = len(store.samples(outcome.run_id))
    return (
        f"run {outcome.run_id} {outcome.status}, {len(launches)} launches, {samples} samples, "
        f"{took:.0f} s"
    )
