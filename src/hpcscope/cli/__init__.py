"""hpcscope command line: thin, parses arguments and calls the modules that do the work.

One module per command group: run (the suites), machine (topo, build), store (list, show,
export), analyse (report, compare, tune), slurm, sim (simulated clusters), demo; common and options hold what they
share. Conventions (docs/architecture.md): `hpcscope VERB [SUITE] [options]`; the store is
./hpcscope.db unless --db or HPCSCOPE_DB; a run is named by its id or `last`;
machine-readable output on stdout, human messages and progress on stderr; exit 0 success,
1 the measurement failed (results so far kept), 2 bad usage or input.
"""

from __future__ import annotations

import os

import click

from hpcscope.cli.analyse import compare, report, tune
from hpcscope.cli.demo import demo
from hpcscope.cli.machine import build, topo
from hpcscope.cli.run import run
from hpcscope.cli.sim import sim
from hpcscope.cli.slurm import slurm
from hpcscope.cli.store import export, list_runs, show


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
    Quick start:
      hpcscope topo                       the machine as hwloc sees it
      hpcscope run p2p --quick            latency/bandwidth at every placement
      hpcscope list; hpcscope show last   what is stored
      hpcscope export last --format osu   OSU-style text
    """
    ctx.obj = {"db": db or os.environ.get("HPCSCOPE_DB", "hpcscope.db")}


for command in (topo, build, run, tune, report, compare, demo, list_runs, show, export, slurm, sim):
    main.add_command(command)


if __name__ == "__main__":
    main()
