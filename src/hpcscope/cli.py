"""hpcscope command line: thin, parses arguments and calls the modules that do the work.

Conventions (DESIGN 1): `hpcscope VERB [SUITE] [options]`; the store is ./hpcscope.db
unless --db or HPCSCOPE_DB; a run is named by its id or `last`; machine-readable output on
stdout, human messages and progress on stderr; exit 0 success, 1 the measurement failed
(results so far kept), 2 bad usage or input.
"""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from hpcscope import build as build_mod
from hpcscope import cli_slurm, runner
from hpcscope.results.store import Store

err = Console(stderr=True)
out = Console()


def _store(ctx: click.Context) -> Store:
    return Store(ctx.obj["db"])


def handle_errors(fn):
    """Maps known failures to the documented exit codes with one clear message."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except runner.UsageError as exc:
            err.print(f"[red]error:[/red] {exc}")
            sys.exit(runner.EXIT_USAGE)
        except build_mod.BuildError as exc:
            err.print(f"[red]build failed:[/red] {exc}")
            sys.exit(runner.EXIT_FAILED)
        except (LookupError, ValueError) as exc:
            err.print(f"[red]error:[/red] {exc}")
            sys.exit(runner.EXIT_USAGE)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help="SQLite store (default: $HPCSCOPE_DB or ./hpcscope.db).")
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


@main.command()
@click.option("--xml", "as_xml", is_flag=True, help="Print hwloc's XML instead of the summary.")
@click.option("--json", "as_json", is_flag=True, help="Print the parsed topology as JSON.")
@handle_errors
def topo(as_xml: bool, as_json: bool) -> None:
    """Show the machine: packages, NUMA nodes, cores, hardware threads, caches, NICs.

    Read from hwloc (lstopo). Every run stores this XML too.
    """
    from hpcscope.machine.topology import Topology
    from hpcscope.plan import placement

    topology = Topology.local()
    if as_xml:
        click.echo(topology.xml)
        return
    if as_json:
        click.echo(json.dumps(topology.to_dict(), indent=2))
        return
    click.echo(topology.describe())
    click.echo("\nPlacement classes for two ranks:")
    for place in placement.plan_placements(topology, list(placement.CLASSES)):
        where = f"skipped: {place.skipped}" if place.skipped else \
            f"CPUs {','.join(map(str, place.cpus))} ({place.description})"
        click.echo(f"  {place.name:<7} {where}")


@main.command()
@click.option("--mpi", default="all", show_default=True,
              help="openmpi, mpich, auto, all, or the path of an mpicc wrapper.")
@handle_errors
def build(mpi: str) -> None:
    """Compile the benchmarks and lanecoll against each chosen MPI library (cached)."""
    from hpcscope.machine import mpi as mpi_mod

    try:
        specs = mpi_mod.discover(mpi)
    except mpi_mod.MpiNotFound as exc:
        raise runner.UsageError(str(exc)) from exc
    for spec in specs:
        err.print(f"building against {spec.label} ({spec.mpicc})")
        err.print(f"  -> {build_mod.build(spec)}")


@main.group()
def run() -> None:
    """Measure: run a suite and store its results (see `hpcscope run SUITE --help`)."""


COMMON_KEYS = ("mpi", "quick", "repeat", "out_dir", "label", "dry_run")


def common_run_options(fn):
    """Options every suite shares, then the SLURM ones (listed in this order by --help)."""
    fn = cli_slurm.slurm_run_options(fn)
    for decorator in reversed([
        click.option("--mpi", default="all", show_default=True,
                     help="MPI libraries: openmpi, mpich, auto, all, a comma list, or a path to mpicc."),
        click.option("--quick", is_flag=True, help="Fewer repeats and iterations (a first look)."),
        click.option("--repeat", type=int, default=None,
                     help="Launches per configuration (default 5; --quick: 3)."),
        click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
                     help="Folder for figures and tables (default hpcscope-out/run-ID)."),
        click.option("--label", default=None, help="A name for this run, shown by list/report."),
        click.option("--dry-run", is_flag=True,
                     help="Print the plan (or with --on slurm the batch scripts) and exit."),
    ]):
        fn = decorator(fn)
    return fn


def execute(ctx: click.Context, suite: str, opts: dict, kw: dict) -> runner.Outcome | None:
    """Plan, then run locally or submit to SLURM, then write outputs. `kw` holds the
    common and SLURM options; `opts` the suite's own. Returns None for a dry run."""
    on_slurm = kw["on"] == "slurm"
    nodes = (kw["nodes"] or 1) if on_slurm else 1
    topology, mpis, builds = runner.prepare(suite, kw["mpi"], err)
    context = runner.make_context(topology, mpis, builds, Path("hpcscope-out"),
                                  bool(opts.get("quick")), nodes_available=nodes)
    if on_slurm and kw["ntasks_per_node"]:
        opts = {**opts, "ranks": nodes * kw["ntasks_per_node"], "nodes": nodes}
    plan = runner.make_plan(suite, context, opts)
    runner.print_notes(plan, err)
    if kw["dry_run"]:
        if on_slurm:
            cli_slurm.print_scripts(plan, kw, Path(kw["out_dir"] or "hpcscope-out/run-ID"))
        else:
            for job in plan.jobs:
                click.echo(f"{job.name}: ranks={job.ranks} cpus={job.cpus} {' '.join(job.program)}")
        return None
    store = _store(ctx)
    run_id = runner.record_run(store, suite, opts, topology, mpis, plan, kw["on"], kw["label"])
    folder = Path(kw["out_dir"]) if kw["out_dir"] else runner.default_out_dir(run_id)
    err.print(f"run {run_id}: {suite}, {len(plan.jobs)} jobs, results into {ctx.obj['db']}")
    if on_slurm:
        outcome = cli_slurm.submit(store, run_id, plan, kw, folder, err)
    else:
        outcome = runner.run_local(store, run_id, plan, topology, folder, err)
        if runner.write_outputs(store, run_id, suite, folder):
            err.print(f"figures and tables: {folder}/")
    for message in outcome.messages:
        err.print(f"[red]{message}[/red]" if outcome.exit_code else message)
    err.print(f"run {run_id} {outcome.status}; see `hpcscope show {run_id}`")
    return outcome


def finish(outcome: runner.Outcome | None) -> None:
    sys.exit(outcome.exit_code if outcome else runner.EXIT_OK)


def split_options(kw: dict) -> tuple[dict, dict]:
    """(common + SLURM options, the suite's own options)."""
    shared = set(COMMON_KEYS) | set(cli_slurm.SLURM_KEYS) | {"on"}
    return ({k: v for k, v in kw.items() if k in shared},
            {k: v for k, v in kw.items() if k not in shared})


def _csv_list(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _cpu_list(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise runner.UsageError(f"--cpus '{text}': give OS CPU numbers separated by commas, "
                                "e.g. --cpus 0,7") from None


@run.command("p2p")
@click.option("--placements", default=None,
              help="Comma list of smt, core, numa, socket, node (default: all this machine offers).")
@click.option("--cpus", default=None, help="Explicit CPUs for rank 0 and 1, e.g. 0,7.")
@click.option("--sizes", default="0:4M", show_default=True, help="Message size range MIN:MAX.")
@click.option("--tests", default=None, help="Comma list of latency, bw, bibw, mbw_mr (default all).")
@click.option("--validate", is_flag=True, help="Untimed pass that checks every received byte.")
@common_run_options
@click.pass_context
@handle_errors
def run_p2p(ctx, **kw) -> None:
    """MPI point-to-point latency and bandwidth at each placement (OSU definitions).

    \b
    Example: hpcscope run p2p --mpi openmpi,mpich --placements core,socket --repeat 5
             hpcscope run p2p --on slurm --nodes 2 --partition short --wait
    Placements are derived from hwloc's topology; classes this machine cannot
    offer are reported as skipped with the reason.
    """
    shared, own = split_options(kw)
    opts = {"placements": _csv_list(own["placements"]), "cpus": _cpu_list(own["cpus"]),
            "sizes": own["sizes"], "tests": _csv_list(own["tests"]), "validate": own["validate"],
            "quick": shared["quick"], "repeat": shared["repeat"]}
    finish(execute(ctx, "p2p", opts, shared))


@main.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_context
@handle_errors
def list_runs(ctx, fmt: str) -> None:
    """List stored runs, newest last."""
    runs = _store(ctx).runs()
    if fmt == "json":
        click.echo(json.dumps(runs, indent=2, default=str))
        return
    table = Table("id", "started", "suite", "status", "host", "backend", "label")
    for r in runs:
        table.add_row(str(r["id"]), str(r["started"])[:19], r["suite"], r["status"],
                      r.get("host") or "", r.get("backend") or "", r.get("label") or "")
    out.print(table)


@main.command()
@click.argument("run_ref", metavar="RUN")
@click.pass_context
@handle_errors
def show(ctx, run_ref: str) -> None:
    """Show one run: what ran, where, notes, failures and a summary per measurement."""
    from hpcscope.report import show as show_mod

    store = _store(ctx)
    show_mod.print_run(store, store.resolve(run_ref), out)


@main.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "markdown", "osu"]),
              default="csv", show_default=True)
@click.pass_context
@handle_errors
def export(ctx, run_ref: str, fmt: str) -> None:
    """Write a run's measurements to stdout as CSV, JSON (raw samples), Markdown or OSU text."""
    from hpcscope.results import export as export_mod

    store = _store(ctx)
    run_id = store.resolve(run_ref)
    click.echo(getattr(export_mod, f"to_{fmt}")(store, run_id), nl=False)


main.add_command(cli_slurm.slurm)


if __name__ == "__main__":
    main()
