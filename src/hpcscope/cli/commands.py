"""The `hpcscope` command group: every verb attached to one click group (see __init__).

Commands are imported when they are used, not all at start: `run`, `report` and the
others load every suite, numpy, scipy and matplotlib (about 1.5 s of CPU), which `list`
does not need (issue 19: list < 1 s). `hpcscope --help` still imports them all to show
their one-line help.
"""

from __future__ import annotations

import importlib
import os

import click

from hpcscope.cli import sigint_held

# name -> "module:attribute", in the order --help lists them.
COMMANDS = {
    "topo": "hpcscope.cli.machine:topo",
    "build": "hpcscope.cli.machine:build",
    "run": "hpcscope.cli.run:run",
    "tune": "hpcscope.cli.analyse:tune",
    "report": "hpcscope.cli.analyse:report",
    "compare": "hpcscope.cli.analyse:compare",
    "history": "hpcscope.cli.history:history",
    "demo": "hpcscope.cli.demo:demo",
    "list": "hpcscope.cli.store:list_runs",
    "show": "hpcscope.cli.store:show",
    "export": "hpcscope.cli.store:export",
    "import": "hpcscope.cli.store:import_runs",
    "slurm": "hpcscope.cli.slurm:slurm",
    "lab": "hpcscope.cli.lab:lab",
    "sim": "hpcscope.cli.sim:sim",
}


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use (click's documented
    pattern for large CLIs)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        with sigint_held():  # Ctrl-C while numpy/scipy load: the documented exit, no traceback
            command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
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
      hpcscope history --suite p2p        the runs where a measurement changed
      hpcscope export last --format osu   OSU-style text
    """
    from hpcscope.cli.common import EXIT_USAGE, check_environment, err
    from hpcscope.formatting import markup_safe

    problem = check_environment()
    if problem is None and db is not None and not db.strip():
        problem = "--db '': empty; leave --db out for $HPCSCOPE_DB or ./hpcscope.db, or give a file"
    if problem is not None:  # before any command runs: one line, exit 2
        err.print(f"[red]error:[/red] {markup_safe(problem)}", soft_wrap=True)
        ctx.exit(EXIT_USAGE)
    ctx.obj = {"db": db or os.environ.get("HPCSCOPE_DB", "hpcscope.db")}
