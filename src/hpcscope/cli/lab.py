"""`hpcscope lab up|status|down`: the lab, a multi-node, multi-lane cluster on this machine
made of network namespaces (launch/lab_net.py); `hpcscope run SUITE --on lab` runs on it."""

from __future__ import annotations

import json

import click

from hpcscope.cli.common import err, handle_errors
from hpcscope.launch import lab_net


def _waiting(line: str) -> None:
    """What `lab up`/`lab down` say while another one holds the lab's lock."""
    err.print(line, markup=False, highlight=False)


@click.group()
def lab() -> None:
    """A real multi-node, multi-lane cluster on this machine (network namespaces, root).

    Nodes hpcs-n1..N are network namespaces with their own host names; lane l is a bridge
    (subnet 198.18.l.0/24) that every node reaches through a rate-limited veth; nothing
    routes out. Measure on it with `hpcscope run SUITE --on lab`.

    \b
    Example: sudo hpcscope lab up --nodes 4 --lanes 2 --rate 200mbit
             sudo hpcscope run lanes --on lab --mpi openmpi --quick
             sudo hpcscope lab down
    """


@lab.command()
@click.option("--nodes", type=int, default=4, show_default=True, help="Nodes (namespaces).")
@click.option("--lanes", type=int, default=2, show_default=True, help="Lanes per node.")
@click.option(
    "--rate",
    default="200mbit",
    show_default=True,
    help="Rate of every lane in each direction (tc units: 200mbit, 1gbit).",
)
@click.option(
    "--lane-binding",
    "binding",
    type=click.Choice(list(lab_net.BINDINGS)),
    default="per-process",
    show_default=True,
    help="per-process: process r of a node uses lane r mod L only; striped: every "
    "process may use every lane (the MPI library stripes).",
)
@click.option(
    "--degrade",
    "degrade",
    multiple=True,
    metavar="nK:laneL=RATE|nK:cpu=P%",
    help="Make one link or node bad on purpose (repeatable): n3:lane1=50mbit puts node 3's "
    "lane 1 at 50mbit; n2:cpu=50% gives node 2's processes half the CPU time of another "
    "node's (a cgroup). Shown by `lab status` and recorded in every run.",
)
@handle_errors
def up(nodes: int, lanes: int, rate: str, binding: str, degrade: tuple[str, ...]) -> None:
    """Build the lab (nothing happens when the same lab is up already).

    \b
    Example: sudo hpcscope lab up --nodes 4 --lanes 2 --rate 200mbit --lane-binding striped
             sudo hpcscope lab up --nodes 6 --lanes 1 --degrade n3:lane1=50mbit
    """
    spec = lab_net.LabSpec(nodes, lanes, rate, binding, list(degrade))
    state, built = lab_net.up(spec, on_wait=_waiting)
    err.print(("lab built: " if built else "lab already up: ") + state.spec.describe())
    click.echo(lab_net.status_text(state))


@lab.command()
@click.option("--json", "as_json", is_flag=True, help="The state file's content on stdout.")
@handle_errors
def status(as_json: bool) -> None:
    """Is the lab up; its nodes, lanes, addresses and the bytes each lane carried.

    \b
    Example: hpcscope lab status --json
    """
    lab_net.preflight()
    state = lab_net.current()
    if as_json:
        click.echo(json.dumps(state.to_json() if state else {"status": "down"}, indent=2))
    else:
        click.echo(lab_net.status_text(state))


@lab.command()
@handle_errors
def down() -> None:
    """Remove the lab: its namespaces (also those of a crashed `up`), hosts files, the
    session folders Open MPI left for its nodes, and its state.

    \b
    Example: sudo hpcscope lab down
    """
    lab_net.preflight()
    removed = lab_net.down(on_wait=_waiting)
    err.print(
        f"lab down: removed {', '.join(removed)}" if removed else "lab down: nothing to remove"
    )
