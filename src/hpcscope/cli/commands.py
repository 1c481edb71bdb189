"""The `hpcscope` command group: every verb attached to one click group (see __init__)."""

from __future__ import annotations

import os

import click

from hpcscope.cli.analyse import compare, report, tune
from hpcscope.cli.demo import demo
from hpcscope.cli.lab import lab
from hpcscope.cli.machine import build, topo
from hpcscope.cli.run import run
from hpcscope.cli.sim import sim
from hpcscope.cli.slurm import slurm
from hpcscope.cli.store import export, import_runs, list_runs, show


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="SQLite store (default: $HPCSCOPE_DB or ./hpcscope.db).",
)
@click.version_option(package_name="hpcscope")
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """hpcscope: how fast this machine and its MPI really are.

    \b
    Example (quick start):
      hpcscope topo                       the machine as hwloc sees it
      hpcscope run p2p --quick            latency/bandwidth at every placement
      hpcscope list; hpcscope show last   what is stored
      hpcscope export last --format osu   OSU-style text
    """
    ctx.obj = {"db": db or os.environ.get("HPCSCOPE_DB", "hpcscope.db")}


for command in (
    topo,
    build,
    run,
    tune,
    report,
    compare,
    demo,
    list_runs,
    show,
    export,
    import_runs,
    slurm,
):
    main.add_command(command)
main.add_command(lab)
main.add_command(sim)
