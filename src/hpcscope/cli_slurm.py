"""The SLURM side of the command line: `run ... --on slurm` options and `hpcscope slurm`.

Kept apart from cli.py so the local path stays readable; both call the same runner stages.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from hpcscope import runner
from hpcscope.launch.slurm import SlurmBackend, SlurmError
from hpcscope.launch.slurm_script import ScriptError, SlurmOptions, group_jobs, render
from hpcscope.results.store import Store
from hpcscope.suites.base import SuitePlan

SLURM_KEYS = ("nodes", "ntasks_per_node", "partition", "time", "account", "qos", "constraint",
              "exclusive", "mail_type", "mail_user", "module", "prelude", "sbatch_arg",
              "launcher", "array_limit", "slurm_dir", "wait")


def slurm_run_options(fn):
    """Options of `hpcscope run SUITE --on slurm` (ignored with --on local)."""
    for decorator in reversed([
        click.option("--on", "on", type=click.Choice(["local", "slurm"]), default="local",
                     show_default=True, help="Where to run: this machine, or SLURM jobs."),
        click.option("--nodes", type=int, default=None,
                     help="SLURM: nodes available to the plan (2 enables the node placement)."),
        click.option("--ntasks-per-node", type=int, default=None,
                     help="SLURM: MPI ranks per node for coll/lanes."),
        click.option("--partition", default=None, help="SLURM partition (sbatch --partition)."),
        click.option("--time", default=None, help="SLURM time limit: minutes or [D-]HH:MM:SS."),
        click.option("--account", default=None, help="SLURM account to charge."),
        click.option("--qos", default=None, help="SLURM quality of service."),
        click.option("--constraint", default=None, help="SLURM node features (--constraint)."),
        click.option("--exclusive/--no-exclusive", default=True, show_default=True,
                     help="SLURM: own the nodes (performance runs should)."),
        click.option("--mail-type", default=None, help="SLURM notifications, e.g. END,FAIL."),
        click.option("--mail-user", default=None, help="Address for SLURM notifications."),
        click.option("--module", multiple=True, help="`module load` this in the job (repeatable)."),
        click.option("--prelude", multiple=True, help="Shell line run before the benchmark (repeatable)."),
        click.option("--sbatch-arg", multiple=True, help="Extra sbatch option, e.g. --gres=gpu:1."),
        click.option("--launcher", type=click.Choice(["srun", "mpirun"]), default="srun",
                     show_default=True, help="SLURM: start ranks with srun or the MPI's mpirun."),
        click.option("--array-limit", type=int, default=1, show_default=True,
                     help="SLURM: repeats (array tasks) running at the same time."),
        click.option("--slurm-dir", type=click.Path(file_okay=False), default=None,
                     help="SLURM: run directory on a shared file system (default OUT/slurm)."),
        click.option("--wait", is_flag=True, help="SLURM: wait for the jobs and collect them."),
    ]):
        fn = decorator(fn)
    return fn


def options_from(kw: dict) -> SlurmOptions:
    return SlurmOptions(partition=kw["partition"], account=kw["account"], time=kw["time"],
                        qos=kw["qos"], constraint=kw["constraint"], mail_type=kw["mail_type"],
                        mail_user=kw["mail_user"], exclusive=kw["exclusive"],
                        modules=list(kw["module"]), prelude=list(kw["prelude"]),
                        sbatch_args=list(kw["sbatch_arg"]), launcher=kw["launcher"],
                        array_limit=kw["array_limit"])


def print_scripts(plan: SuitePlan, kw: dict, out: Path) -> None:
    """Dry run on SLURM: the batch scripts that would be submitted."""
    rundir = Path(kw["slurm_dir"] or out / "slurm").absolute()
    options = options_from(kw)
    try:
        for group in group_jobs(plan.jobs):
            script = render(group, "DRYRUN", rundir, options)
            click.echo(f"# ---- job array {group.name}: {len(group.jobs)} task(s)")
            click.echo(script)
    except ScriptError as exc:
        raise runner.UsageError(str(exc)) from exc


def submit(store: Store, run_id: int, plan: SuitePlan, kw: dict, folder: Path,
           err: Console) -> runner.Outcome:
    """sbatch the plan; with --wait, wait, collect and finish like a local run."""
    rundir = Path(kw["slurm_dir"]) if kw["slurm_dir"] else folder / "slurm"
    backend = SlurmBackend(store, options_from(kw), rundir=rundir)
    try:
        backend.submit(run_id, plan.jobs)
    except (ScriptError, SlurmError) as exc:
        queued = bool(store.get_run_backend_data(run_id).get("slurm"))
        store.add_note(run_id, "error", f"SLURM submission failed: {exc}")
        store.finish_run(run_id, "failed")
        code = runner.EXIT_FAILED if queued else runner.EXIT_USAGE
        return runner.Outcome(run_id, "failed", code, folder, [f"SLURM: {exc}"])
    err.print(backend.status_text(run_id))
    if not kw["wait"]:
        return runner.Outcome(run_id, "submitted", runner.EXIT_OK, folder,
                              [f"submitted; follow with `hpcscope slurm status {run_id}` and "
                               f"ingest with `hpcscope slurm collect {run_id}`"])
    return wait_and_collect(store, backend, run_id, folder, err)


def wait_and_collect(store: Store, backend: SlurmBackend, run_id: int, folder: Path,
                     err: Console) -> runner.Outcome:
    try:
        backend.wait(run_id, console=err)
    except KeyboardInterrupt:
        return runner.Outcome(run_id, "submitted", runner.EXIT_FAILED, folder,
                              [f"stopped waiting; the jobs keep running. `hpcscope slurm "
                               f"collect {run_id}` ingests them later"])
    except SlurmError as exc:
        return runner.Outcome(run_id, "failed", runner.EXIT_FAILED, folder, [str(exc)])
    return collect(store, backend, run_id, folder, err)


def collect(store: Store, backend: SlurmBackend, run_id: int, folder: Path,
            err: Console) -> runner.Outcome:
    report = backend.collect_run(run_id)
    err.print(report.text())
    if report.pending == 0:
        suite = store.run(run_id)["suite"]
        if runner.write_outputs(store, run_id, suite, folder):
            err.print(f"figures and tables: {folder}/")
    status = store.run(run_id)["status"]
    code = runner.EXIT_FAILED if report.failed else runner.EXIT_OK
    return runner.Outcome(run_id, status, code, folder, [])


@click.group()
def slurm() -> None:
    """Follow, collect and cancel runs submitted with `hpcscope run SUITE --on slurm`."""


def _backend(ctx: click.Context) -> tuple[Store, SlurmBackend]:
    store = Store(ctx.obj["db"])
    return store, SlurmBackend(store)


def _guard(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SlurmError as exc:
            Console(stderr=True).print(f"[red]SLURM:[/red] {exc}")
            sys.exit(runner.EXIT_USAGE)
    return wrapper


@slurm.command()
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.pass_context
@_guard
def status(ctx, run_ref: str) -> None:
    """Jobs of a run with their SLURM state (queued, running, finished)."""
    store, backend = _backend(ctx)
    click.echo(backend.status_text(store.resolve(run_ref)))


@slurm.command("collect")
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for figures and tables (default hpcscope-out/run-ID).")
@click.pass_context
@_guard
def collect_cmd(ctx, run_ref: str, out_dir: str | None) -> None:
    """Ingest the records of finished jobs (safe to repeat: adds only what is new)."""
    store, backend = _backend(ctx)
    run_id = store.resolve(run_ref)
    folder = Path(out_dir) if out_dir else runner.default_out_dir(run_id)
    outcome = collect(store, backend, run_id, folder, Console(stderr=True))
    sys.exit(outcome.exit_code)


@slurm.command()
@click.argument("run_ref", metavar="RUN")
@click.pass_context
@_guard
def cancel(ctx, run_ref: str) -> None:
    """scancel the run's unfinished jobs, then collect what they wrote."""
    store, backend = _backend(ctx)
    run_id = store.resolve(run_ref)
    backend.cancel(run_id)
    err = Console(stderr=True)
    try:
        backend.wait(run_id, progress=False, console=err)
    except SlurmError as exc:
        err.print(str(exc))
    err.print(backend.collect_run(run_id).text())


@slurm.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("suite")
@click.pass_context
def script(ctx, suite: str) -> None:
    """Print the batch scripts `run SUITE --on slurm ...` would submit, submitting nothing.

    \b
    Example: hpcscope slurm script p2p --nodes 2 --partition short --time 10
    Same as: hpcscope run p2p --on slurm --nodes 2 ... --dry-run
    """
    from hpcscope.cli import run

    args = [suite, "--on", "slurm", "--dry-run", *ctx.args]
    run.main(args=args, prog_name="hpcscope run", obj=ctx.obj, standalone_mode=True)
