"""`hpcscope slurm status|collect|cancel|script`: runs submitted with `--on slurm`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hpcscope import runner
from hpcscope.cli.common import err, handle_errors
from hpcscope.cli.run import run
from hpcscope.formatting import markup_safe as S
from hpcscope.formatting import plain
from hpcscope.launch.slurm import SlurmBackend, SlurmError
from hpcscope.results.store import Store


@click.group()
def slurm() -> None:
    """Follow, collect and cancel runs submitted with `hpcscope run SUITE --on slurm`.

    The batch scripts a run would submit: `hpcscope run SUITE --on slurm --dry-run`.

    \b
    Example: hpcscope slurm status last; hpcscope slurm collect last
    """


def _backend(ctx: click.Context) -> tuple[Store, SlurmBackend]:
    store = Store(ctx.obj["db"])
    return store, SlurmBackend(store)


@slurm.command()
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.pass_context
@handle_errors
def status(ctx, run_ref: str) -> None:
    """Jobs of a run with their SLURM state (queued, running, finished).

    \b
    Example: hpcscope slurm status last
    """
    store, backend = _backend(ctx)
    click.echo(plain(backend.status_text(store.resolve(run_ref))))  # SLURM text, never escapes


@slurm.command("collect")
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for figures and tables (default hpcscope-out/run-ID).",
)
@click.pass_context
@handle_errors
def collect_cmd(ctx, run_ref: str, out_dir: str | None) -> None:
    """Ingest the records of finished jobs (safe to repeat: adds only what is new).

    \b
    Example: hpcscope slurm collect 7 --out hpcscope-out/run-7
    """
    store, backend = _backend(ctx)
    run_id = store.resolve(run_ref)
    folder = Path(out_dir) if out_dir else runner.default_out_dir(run_id, ctx.obj["db"])
    folder = runner.make_out_dir(folder, named=bool(out_dir))
    outcome = runner.collect(store, backend, run_id, folder, err)
    sys.exit(outcome.exit_code)


@slurm.command()
@click.argument("run_ref", metavar="RUN")
@click.pass_context
@handle_errors
def cancel(ctx, run_ref: str) -> None:
    """scancel the run's unfinished jobs, then collect what they wrote.

    \b
    Example: hpcscope slurm cancel last
    """
    store, backend = _backend(ctx)
    run_id = store.resolve(run_ref)
    backend.cancel(run_id)
    try:
        backend.wait(run_id, progress=False, console=err)
    except SlurmError as exc:
        err.print(S(exc))
    err.print(S(backend.collect(run_id).text()))


@slurm.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, hidden=True
)
@click.argument("suite")
@click.pass_context
def script(ctx, suite: str) -> None:
    """Print the batch scripts `run SUITE --on slurm ...` would submit, submitting nothing.

    \b
    Example: hpcscope slurm script p2p --nodes 2 --partition short --time 10
    Same as: hpcscope run p2p --on slurm --nodes 2 ... --dry-run
    """
    args = [suite, "--on", "slurm", "--dry-run", *ctx.args]
    run.main(args=args, prog_name="hpcscope run", obj=ctx.obj, standalone_mode=True)
