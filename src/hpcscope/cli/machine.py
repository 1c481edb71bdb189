"""`hpcscope topo` and `hpcscope build`: the machine and the compiled programs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hpcscope import build as build_mod
from hpcscope import runner
from hpcscope.cli.common import err, handle_errors
from hpcscope.formatting import markup_safe as S
from hpcscope.launch import slurm_topology
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.machine import mpi as mpi_mod
from hpcscope.machine.topology import Topology
from hpcscope.plan import placement


@click.command()
@click.option("--xml", "as_xml", is_flag=True, help="Print hwloc's XML instead of the summary.")
@click.option("--json", "as_json", is_flag=True, help="Print the parsed topology as JSON.")
@click.option(
    "--on",
    "on",
    type=click.Choice(["local", "slurm"]),
    default="local",
    show_default=True,
    help="local: this machine; slurm: a compute node, probed now with a short job "
    "(srun lstopo, or hwloc's library where the node has no lstopo) and cached for the "
    "plans of `run --on slurm`.",
)
@click.option("--partition", default=None, help="SLURM partition to probe (default: SLURM's).")
@click.option("--constraint", default=None, help="SLURM node features (--constraint).")
@click.option("--account", default=None, help="SLURM account for the probe job.")
@click.option("--qos", default=None, help="SLURM quality of service for the probe job.")
@click.option(
    "--measured",
    is_flag=True,
    help="Also the machine as this host's newest node run measured it, beside hwloc's view: "
    "usable cache sizes from the pointer chase, cores from the FP64 scaling, the clock "
    "(run `hpcscope run node --cpu --mem` first).",
)
@click.pass_context
@handle_errors
def topo(
    ctx: click.Context,
    as_xml: bool,
    as_json: bool,
    on: str,
    partition: str | None,
    constraint: str | None,
    account: str | None,
    qos: str | None,
    measured: bool,
) -> None:
    """Show the machine: packages, NUMA nodes, cores, hardware threads, caches, NICs.

    \b
    Example: hpcscope topo
             hpcscope topo --xml > node.xml     (hwloc XML, e.g. for another machine)
             hpcscope topo --on slurm --partition short   (probe a compute node, refresh
                                                          the cache `run --on slurm` plans with)
             hpcscope topo --measured           (beside what the newest node run measured)

    Read from hwloc (its library; lstopo where the library cannot be loaded). Every
    run stores this XML too.
    """
    if on == "slurm":
        options = SlurmOptions(partition=partition, account=account, qos=qos, constraint=constraint)
        found = slurm_topology.node_topology(options, refresh=True)
        err.print(S(found.text()))
        topology = found.topology
    else:
        if partition or constraint or account or qos:
            raise runner.UsageError(
                "--partition, --constraint, --account and --qos choose SLURM compute nodes: "
                "add --on slurm"
            )
        topology = Topology.local()
    if as_xml:
        click.echo(topology.xml)
        return
    if as_json:
        click.echo(json.dumps(topology.to_dict(), indent=2))
        return
    print_topology(topology)
    if measured:
        print_measured(ctx, topology)


def print_measured(ctx: click.Context, topology: Topology) -> None:
    """The newest node run of this host, as reported beside as measured (show's table)."""
    import socket

    from hpcscope.analysis import machine_measured
    from hpcscope.cli.common import out, store_of
    from hpcscope.report.show import print_machine_measured

    host = topology.hostname or socket.gethostname()
    hint = "run `hpcscope run node --cpu --mem --quick` first"
    if not Path(ctx.obj["db"]).exists():
        raise runner.UsageError(f"nothing measured yet ({ctx.obj['db']} does not exist): {hint}")
    with store_of(ctx) as store:
        found = machine_measured.newest_node_run(store, host)
        if found is None:
            raise runner.UsageError(
                f"no node run of {host} with CPU or memory results in {store.path}: {hint}"
            )
        run, samples = found
        out.print(f"\nAs measured by run {run['id']} ({(run.get('started') or '')[:16]}):")
        print_machine_measured(run, samples, out)


def print_topology(topology: Topology) -> None:
    """The machine and its placement classes, as `hpcscope topo` prints them (the demo's
    first step calls this plain function, never the click command)."""
    click.echo(topology.describe())
    click.echo("\nPlacement classes for two ranks:")
    for place in placement.plan_placements(topology, list(placement.PLACEMENTS)):
        if place.skipped:
            where = f"skipped: {place.skipped}"
        elif place.cpus:
            where = f"CPUs {','.join(map(str, place.cpus))} ({place.description})"
        else:
            where = place.description
        click.echo(f"  {place.name:<7} {where}")


@click.command()
@click.option(
    "--mpi",
    default="all",
    show_default=True,
    help="openmpi, mpich, auto, all, smpi (SimGrid's simulated MPI), or the path of an "
    "mpicc wrapper.",
)
@handle_errors
def build(mpi: str) -> None:
    """Compile the benchmarks and lanecoll against each chosen MPI library (cached).

    \b
    Example: hpcscope build --mpi openmpi
             hpcscope build --mpi /opt/mpich-4.2/bin/mpicc
             hpcscope build --mpi smpi     (first builds SimGrid 4.1 from its source,
                                            once: about 12 minutes on 2 cores)
    `run --on sim` then uses the newest SimGrid there is (Debian's 3.32 otherwise).
    """
    if mpi_mod.SIMULATED in [w.strip() for w in mpi.split(",")]:
        from hpcscope.machine import simgrid

        try:
            where = simgrid.build_release(say=lambda text: err.print(S(text)))
        except simgrid.SimGridBuildError as exc:
            raise runner.UsageError(
                f"{exc}\n`run --on sim` keeps using the SimGrid on PATH, if any"
            ) from exc
        err.print(f"SimGrid {simgrid.build_name(simgrid.NEWEST)}: {S(where)}")
    try:
        specs = mpi_mod.discover(mpi)
    except mpi_mod.MpiNotFound as exc:
        raise runner.UsageError(str(exc)) from exc
    for spec in specs:
        err.print(f"building against {S(spec.label)} ({S(spec.mpicc)})")
        err.print(f"  -> {S(build_mod.build(spec))}")
