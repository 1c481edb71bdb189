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
from hpcscope.machine.topology import TopologyError
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
        except (LookupError, ValueError, TopologyError) as exc:
            err.print(f"[red]error:[/red] {exc}")
            sys.exit(runner.EXIT_USAGE)
        except KeyboardInterrupt:
            err.print("interrupted (nothing was being measured)")
            sys.exit(runner.EXIT_FAILED)
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
    context = runner.make_context(topology, mpis, builds, bool(opts.get("quick")),
                                  nodes_available=nodes)
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


def execute_command(ctx: click.Context, suite: str, kw: dict) -> runner.Outcome | None:
    """A run subcommand's options -> the suite's opts (its *_opts builder) -> execute."""
    shared, own = split_options(kw)
    builder = {"p2p": p2p_opts, "coll": coll_opts, "lanes": lanes_opts, "node": node_opts}[suite]
    return execute(ctx, suite, builder(own, shared), shared)


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
    finish(execute_command(ctx, "p2p", kw))


def p2p_opts(own: dict, shared: dict) -> dict:
    return {"placements": _csv_list(own["placements"]), "cpus": _cpu_list(own["cpus"]),
            "sizes": own["sizes"], "tests": _csv_list(own["tests"]), "validate": own["validate"],
            "quick": shared["quick"], "repeat": shared["repeat"]}


def _count_list(text: str | None) -> list | None:
    """'8,1p,100p' -> [8, '1p', '100p'] (a count, or a multiple of the rank count)."""
    if not text:
        return None
    items: list = []
    for t in _csv_list(text) or []:
        if t.isdigit():
            items.append(int(t))
        elif t.endswith("p") and t[:-1].isdigit():
            items.append(t)
        else:
            raise runner.UsageError(f"--counts: '{t}' is neither a count (e.g. 1000) nor a "
                                    "multiple of the rank count (e.g. 10p)")
    return items


def coll_options(fn):
    for decorator in reversed([
        click.option("--ranks", type=int, default=None,
                     help="MPI ranks (default: the cores of this machine; on SLURM nodes x "
                          "--ntasks-per-node)."),
        click.option("--node-size", type=int, default=None,
                     help="Emulate nodes of K consecutive ranks on one machine (sets "
                          "LANECOLL_NODE_SIZE; such runs are marked as emulated)."),
        click.option("--repetitions", type=int, default=None,
                     help="Timed repetitions per count (default 100 like the paper; --quick 20)."),
        click.option("--regular-only", is_flag=True,
                     help="Refuse node sizes that do not divide the ranks."),
    ]):
        fn = decorator(fn)
    return fn


@run.command("coll")
@click.option("--collectives", default=None,
              help="Comma list of bcast, gather, scatter, allgather, alltoall, reduce, "
                   "allreduce, reduce_scatter_block, scan, exscan (default all).")
@click.option("--algorithms", default=None,
              help="Comma list of native, lane, hier, lane_v, tuned (default native,lane,hier,lane_v; "
                   "lane_v: lane with vector node collectives, where it exists).")
@click.option("--counts", default=None,
              help="Comma list of counts (MPI_INT elements) or multiples of p, e.g. 1p,10p,100p.")
@coll_options
@click.option("--no-validate", is_flag=True, help="Skip the untimed check against native.")
@click.option("--interleave", is_flag=True,
              help="Alternate the algorithms inside each repetition (fairer on a noisy machine).")
@common_run_options
@click.pass_context
@handle_errors
def run_coll(ctx, **kw) -> None:
    """Collectives: native vs lanecoll's full-lane and hierarchical decompositions.

    Each repetition starts after MPI_Barrier and its time is that of the slowest rank;
    warm-ups are discarded; a lane/hier result faster than native by a significant margin
    (Mann-Whitney p < 0.05) and at least 5% is a performance-guideline violation.

    \b
    Example: hpcscope run coll --quick --node-size 1
             hpcscope run coll --on slurm --nodes 4 --ntasks-per-node 8 --wait
    """
    finish(execute_command(ctx, "coll", kw))


def coll_opts(own: dict, shared: dict) -> dict:
    return {"collectives": _csv_list(own["collectives"]), "algorithms": _csv_list(own["algorithms"]),
            "counts": _count_list(own["counts"]), "node_size": own["node_size"],
            "ranks": own["ranks"], "repetitions": own["repetitions"],
            "regular_only": own["regular_only"], "validate": not own["no_validate"],
            "interleave": own["interleave"], "quick": shared["quick"], "repeat": shared["repeat"]}


@run.command("lanes")
@coll_options
@common_run_options
@click.pass_context
@handle_errors
def run_lanes(ctx, **kw) -> None:
    """Lane-pattern and multi-collective benchmarks: can this system drive several lanes?

    Lane pattern: c elements per node per step, split over k = 1..ppn processes that
    exchange with the same process on the neighbouring nodes. Multi-collective: k lane
    communicators run MPI_Alltoall at once. A system with L physical lanes moves data
    about L times faster with k >= L.

    \b
    Example: hpcscope run lanes --quick --node-size 1
    """
    finish(execute_command(ctx, "lanes", kw))


def lanes_opts(own: dict, shared: dict) -> dict:
    return {"node_size": own["node_size"], "ranks": own["ranks"],
            "repetitions": own["repetitions"], "regular_only": own["regular_only"],
            "quick": shared["quick"], "repeat": shared["repeat"]}


def _peak_overrides(items: tuple[str, ...]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value:
            raise runner.UsageError(f"--peak '{item}': write NAME=VALUE, e.g. --peak disk=2GB/s "
                                    "or --peak fp64=1200")
        out[name.strip()] = value.strip()
    return out


@run.command("node")
@click.option("--cpu", is_flag=True, help="CPU: operations/s per precision and thread count, DGEMM.")
@click.option("--mem", is_flag=True, help="Memory: STREAM, block sweep, pointer-chase latency.")
@click.option("--disk", is_flag=True, help="Disk: O_DIRECT sequential/random throughput, IOPS, latency.")
@click.option("--net", is_flag=True, help="Network: TCP/UDP throughput and latency on 127.0.0.1.")
@click.option("--threads", default=None, help="Comma list of thread counts (default 1..cores).")
@click.option("--disk-dir", type=click.Path(file_okay=False), default=None,
              help="Directory for the disk test files (default: a fresh one in /var/tmp).")
@click.option("--peak", multiple=True,
              help="Override a theoretical peak, e.g. --peak disk=2GB/s --peak net=100Gbit/s.")
@common_run_options
@click.pass_context
@handle_errors
def run_node(ctx, **kw) -> None:
    """The node itself: CPU, memory, disk and network, each next to its theoretical peak
    and the standard tool (likwid-bench, OpenBLAS DGEMM, fio, iperf3) as efficiency.

    Without --cpu/--mem/--disk/--net all four run.

    \b
    Example: hpcscope run node --quick
             hpcscope run node --disk --disk-dir /scratch/me --peak disk=2GB/s
    """
    finish(execute_command(ctx, "node", kw))


def node_opts(own: dict, shared: dict) -> dict:
    parts = {k: own[k] for k in ("cpu", "mem", "disk", "net")}
    if not any(parts.values()):
        parts = {k: True for k in parts}
    threads = _csv_list(own["threads"])
    try:
        thread_list = [int(t) for t in threads] if threads else None
    except ValueError:
        raise runner.UsageError(f"--threads '{own['threads']}': give whole numbers, e.g. 1,2,4") from None
    return {**parts, "threads": thread_list, "disk_dir": own["disk_dir"],
            "peaks": _peak_overrides(own["peak"]), "quick": shared["quick"]}


@main.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Tuning file to write (JSON, schema lanecoll.tuning/1).")
@click.option("--mpi", default=None, help="Which MPI library's measurements (when runs hold several).")
@click.pass_context
@handle_errors
def tune(ctx, run_refs: tuple[str, ...], output: str, mpi: str | None) -> None:
    """Write lanecoll's tuning table from stored coll runs.

    Per collective, nodes and processes per node: the fastest significantly-better
    algorithm per message-size range, native where nothing is better, neighbouring
    sizes merged. Use it with LANECOLL_TUNING=FILE and liblanecoll_pmpi.so.

    \b
    Example: hpcscope tune last -o tuning.json --mpi openmpi
    """
    from hpcscope.analysis import tune as tune_mod

    store = _store(ctx)
    samples = [store.samples(store.resolve(r), benchmark="coll") for r in run_refs]
    if not any(samples):
        raise runner.UsageError("no coll measurements in those runs; run `hpcscope run coll` first")
    table = tune_mod.make_tuning(samples, mpi=mpi)
    path = tune_mod.write_tuning(output, table)
    changed = sum(1 for r in table["rules"] if r["algorithm"] != "native")
    err.print(f"{path}: {len(table['rules'])} rules, {changed} choose lane or hier")


@main.command()
@click.argument("run_refs", metavar="[RUN...]", nargs=-1)
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for index.html and its CSV tables (default hpcscope-out/report).")
@click.pass_context
@handle_errors
def report(ctx, run_refs: tuple[str, ...], out_dir: str | None) -> None:
    """One self-contained HTML page (DIR/index.html) from stored runs (default: last).

    Figures are inline SVG, no external requests, no JavaScript; observations
    (fits, breakpoints, dips, placement ratios, instability) cite their numbers.
    """
    from hpcscope.report import html

    store = _store(ctx)
    run_ids = [store.resolve(r) for r in (run_refs or ("last",))]
    page = html.write_report(store, run_ids, Path(out_dir or "hpcscope-out/report"))
    err.print("report written:")
    click.echo(str(page.resolve()))


@main.command()
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option("--threshold", type=float, default=0.05, show_default=True,
              help="Smallest relative difference that counts (with Mann-Whitney p < 0.05).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the comparison as a standalone HTML page.")
@click.pass_context
@handle_errors
def compare(ctx, run_a: str, run_b: str, threshold: float, html_path: str | None) -> None:
    """What changed from RUN_A to RUN_B (two MPI libraries, machines, before/after).

    Each matching measurement is tested on its raw samples (Mann-Whitney) and marked
    faster, slower or same; geometric means of ratios are given per metric.
    """
    from hpcscope.report import compare as compare_mod

    store = _store(ctx)
    a, b = store.resolve(run_a), store.resolve(run_b)
    rows = compare_mod.compare_runs(store, a, b, threshold)
    compare_mod.print_comparison(rows, out, title=f"run {b} relative to run {a}")
    if html_path:
        err.print(f"written {compare_mod.write_comparison_html(rows, Path(html_path))}")


def _defaults(ctx: click.Context, command: click.Command, **overrides) -> dict:
    """A run subcommand's options as click parses an empty command line (its defaults)."""
    with command.make_context(command.name, [], parent=ctx) as sub:
        values = dict(sub.params)
    values.update(overrides)
    return values


@main.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="hpcscope-out/demo",
              show_default=True, help="Folder for the runs' files and the report.")
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
    """
    folder = Path(out_dir)
    topo.callback(as_xml=False, as_json=False)
    # Demo choices beyond --quick: validate data, and emulate two nodes of one rank so the
    # lane decompositions do real inter-"node" work on a one-machine laptop.
    steps = [("p2p", run_p2p, {"validate": True}),
             ("coll", run_coll, {"node_size": 1, "interleave": True}),
             ("lanes", run_lanes, {"node_size": 1}),
             ("node", run_node, {})]
    run_ids, failed = [], []
    for suite, command, extra in steps:
        err.rule(f"hpcscope demo: {suite}")
        kw = _defaults(ctx, command, quick=True, mpi=mpi, out_dir=str(folder / suite),
                       label=f"demo {suite}", **extra)
        try:
            outcome = execute_command(ctx, suite, kw)
        except (runner.UsageError, build_mod.BuildError) as exc:
            err.print(f"[red]{suite} not run:[/red] {exc}")
            failed.append(suite)
            continue
        if outcome is not None:
            run_ids.append(outcome.run_id)
            if outcome.exit_code:
                failed.append(suite)
    if run_ids:
        from hpcscope.report import html

        page = html.write_report(_store(ctx), run_ids, folder / "report")
        err.rule("hpcscope demo: report")
        err.print(f"runs {', '.join(map(str, run_ids))}; open this page in a browser:")
        click.echo(str(page.resolve()))
    if failed:
        err.print(f"[red]steps with failures: {', '.join(failed)}[/red] (see `hpcscope show RUN`)")
    sys.exit(runner.EXIT_FAILED if failed else runner.EXIT_OK)


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
