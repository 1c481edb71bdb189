"""`hpcscope demo`: the quick characterization of this machine, then the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hpcscope import build as build_mod
from hpcscope import runner
from hpcscope.cli.common import err, handle_errors, store_of
from hpcscope.cli.machine import topo
from hpcscope.cli.run import execute_command, run_coll, run_lanes, run_node, run_p2p
from hpcscope.formatting import markup_safe as S
from hpcscope.report import html


def _defaults(ctx: click.Context, command: click.Command, **overrides) -> dict:
    """A run subcommand's options as click parses an empty command line (its defaults)."""
    with command.make_context(command.name, [], parent=ctx) as sub:
        values = dict(sub.params)
    values.update(overrides)
    return values


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
    Each step is an ordinary stored run; a failing step does not stop the others.

    \b
    Example: hpcscope demo --out hpcscope-out/demo --mpi openmpi
    """
    folder = Path(out_dir)
    assert topo.callback is not None  # a @click.command function always has its callback
    topo.callback(as_xml=False, as_json=False)
    # Demo choices beyond --quick: validate data, and emulate two nodes of one rank so the
    # lane decompositions do real inter-"node" work on a one-machine laptop.
    steps: list[tuple[str, click.Command, dict[str, Any]]] = [
        ("p2p", run_p2p, {"validate": True}),
        ("coll", run_coll, {"node_size": 1, "interleave": True}),
        ("lanes", run_lanes, {"node_size": 1}),
        ("node", run_node, {}),
    ]
    run_ids: list[int] = []
    failed: list[str] = []
    for suite, command, extra in steps:
        err.rule(f"hpcscope demo: {suite}")
        kw = _defaults(
            ctx,
            command,
            quick=True,
            mpi=mpi,
            out_dir=str(folder / suite),
            label=f"demo {suite}",
            **extra,
        )
        try:
            outcome = execute_command(ctx, suite, kw)
        except (runner.UsageError, build_mod.BuildError) as exc:
            err.print(f"[red]{suite} not run:[/red] {S(exc)}")
            failed.append(suite)
            continue
        if outcome is not None:
            assert outcome.run_id is not None  # execute_command records every run it starts
            run_ids.append(outcome.run_id)
            if outcome.exit_code:
                failed.append(suite)
    if run_ids:
        page = html.write_report(store_of(ctx), run_ids, folder / "report")
        err.rule("hpcscope demo: report")
        err.print(f"runs {', '.join(map(str, run_ids))}; open this page in a browser:")
        click.echo(str(page.resolve()))
    if failed:
        err.print(f"[red]steps with failures: {', '.join(failed)}[/red] (see `hpcscope show RUN`)")
    sys.exit(runner.EXIT_FAILED if failed else runner.EXIT_OK)
