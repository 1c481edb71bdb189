"""`hpcscope run SUITE`: plan, build, launch on the chosen backend, store, write outputs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
from rich.console import Console

from hpcscope import runner, safe_write
from hpcscope.cli.common import (
    count_list,
    cpu_list,
    csv_list,
    err,
    handle_errors,
    nonempty,
    peak_overrides,
    store_of,
    usage_error,
)
from hpcscope.cli.node_knobs import node_knob_options, node_knobs
from hpcscope.cli.options import POSITIVE as POSITIVE_TYPE
from hpcscope.cli.options import REPETITIONS as REPETITIONS_TYPE
from hpcscope.cli.options import (
    coll_options,
    common_run_options,
    once,
    once_list,
    split_options,
)
from hpcscope.formatting import markup_safe as S
from hpcscope.launch.backends import backend_for
from hpcscope.launch.base import BackendError
from hpcscope.launch.slurm_script import (
    ScriptError,
    SlurmOptions,
    group_jobs,
    render,
    time_limit_seconds,
)
from hpcscope.machine.sim_platform import MAX_RANKS
from hpcscope.plan.placement import RANK_LAYOUTS
from hpcscope.results.precision import parse_budget, parse_precision
from hpcscope.suites import osu_programs, p2p_fan
from hpcscope.suites import p2p as p2p_suite
from hpcscope.suites.registry import suite_for


@click.group()
def run() -> None:
    """Measure: run a suite and store its results (see `hpcscope run SUITE --help`).

    \b
    Example: hpcscope run p2p --quick
             hpcscope run coll --on slurm --nodes 4 --ntasks-per-node 8 --wait
    """


def execute(
    ctx: click.Context, suite: str, opts: dict, kw: dict, chatter: Console = err
) -> runner.Outcome | None:
    """Plan, then hand the jobs to the backend (--on), then write outputs. `kw` holds the
    common and backend options; `opts` the suite's own. Returns None for a dry run.
    `chatter`: where the plan's notes and the run's first and last lines go (the demo
    passes a quiet console and prints one line per step itself); the progress bar and
    failures always go to stderr."""
    backend = backend_for(kw["on"])
    if kw["on"] in ("local", "lab") and opts.get("ranks"):
        check_ranks(int(opts["ranks"]))
    if kw.get("topology") and backend.node_topology is None:
        raise runner.UsageError(
            f"--topology {kw['topology']} describes SLURM compute nodes (--on slurm); "
            f"--on {kw['on']} plans for this machine as hwloc reads it (HWLOC_XMLFILE=FILE "
            "is hwloc's own override)"
        )
    if kw.get("cpuinfo") and backend.node_topology is None:
        raise runner.UsageError(
            f"--cpuinfo {kw['cpuinfo']} describes SLURM compute nodes (--on slurm); "
            f"--on {kw['on']} reads this machine's /proc/cpuinfo"
        )
    time_limit = job_time_limit(kw.get("time")) or backend.job_time_limit_s
    kw, opts, cores_per_node = backend.plan_options(suite, kw, opts)
    nodes = backend.nodes(kw)
    node_topo = None
    if backend.node_topology:
        try:
            node_topo = backend.node_topology(kw)
        except BackendError as exc:
            if not kw["dry_run"]:
                raise
            # A dry run only prints scripts: it may be made away from the cluster.
            ignored = (
                f"; --cpuinfo {kw['cpuinfo']} is not used (it goes with the compute nodes' "
                "topology: give --topology FILE too)"
                if kw.get("cpuinfo")
                else ""
            )
            err.print(
                f"[yellow]warning[/yellow]: {S(exc)}; this dry run plans for this machine's "
                f"topology instead (--topology FILE plans for the compute nodes){S(ignored)}"
            )
    if node_topo is not None:
        chatter.print(f"planning for the {S(node_topo.text())}")
    topology, mpis, builds = runner.prepare(
        suite, kw["mpi"], chatter, node_topo.topology if node_topo else None
    )
    if suite == "io":  # the node suite's disk rate as the ceiling (analysis/io_rows.py)
        opts = {**opts, "disk_ceiling": disk_ceiling(ctx, topology)}
    if suite == "node" and kw["on"] == "local":
        opts = {**opts, "usable_llc": usable_llc(ctx, topology)}
    context = runner.make_context(
        topology,
        mpis,
        builds,
        bool(opts.get("quick")),
        nodes_available=nodes,
        cores_per_node=cores_per_node,
        node_facts=node_topo.facts if node_topo else None,
        adds_rounds=backend.adds_rounds,
    )
    plan = runner.make_plan(suite, context, opts)
    if time_limit is not None:
        for job in plan.jobs:
            job.timeout_s = time_limit
    runner.print_notes(plan, chatter)
    if kw["dry_run"]:
        if kw["on"] == "slurm":
            print_scripts(plan, kw, Path(kw["out_dir"] or "hpcscope-out/run-ID"))
        else:
            for job in plan.jobs:
                click.echo(
                    f"{job.name}: ranks={job.ranks} cpus={job.cpus} "
                    f"limit={job.timeout_s:.0f}s {' '.join(job.program)}"
                )
        describe = suite_for(suite).describe
        for line in describe(plan) if describe else []:
            click.echo(line)
        return None
    if kw["out_dir"]:
        runner.check_writable(Path(kw["out_dir"]))
    store = store_of(ctx, create=True)
    run_id = runner.record_run(store, suite, opts, topology, mpis, plan, kw["on"], kw["label"])
    if node_topo is not None:
        store.add_note(run_id, "topology", node_topo.text(), node_topo.note())
    folder = Path(kw["out_dir"]) if kw["out_dir"] else runner.default_out_dir(run_id, ctx.obj["db"])
    chatter.print(f"run {run_id}: {suite}, {len(plan.jobs)} jobs, results into {S(ctx.obj['db'])}")
    outcome = runner.run_jobs(store, run_id, plan, kw["on"], kw, topology, folder, err, chatter)
    for message in outcome.messages:
        if outcome.exit_code:
            err.print(f"[red]{S(message)}[/red]")
        else:
            chatter.print(S(message))
    chatter.print(f"run {run_id} {outcome.status}; see `hpcscope show {run_id}`")
    return outcome


def usable_llc(ctx: click.Context, topology) -> dict | None:
    """The last-level cache this host's newest node run measured, where it disagrees with
    hwloc (analysis/machine_measured.usable_llc): the node plan sizes STREAM from it."""
    import socket

    from hpcscope.analysis import machine_measured

    if not Path(ctx.obj["db"]).exists():
        return None
    with store_of(ctx) as store:
        found = machine_measured.newest_node_run(store, topology.hostname or socket.gethostname())
        return machine_measured.usable_llc(*found) if found else None


def job_time_limit(value: str | None) -> int | None:
    """--time: every job's time limit in seconds, on every backend (SLURM: the array's
    --time too); checked before anything is built. None: the backend's or each suite's
    own limit."""
    if value is None:
        return None
    try:
        return time_limit_seconds(value)
    except ScriptError as exc:
        raise runner.UsageError(str(exc)) from exc


def print_scripts(plan, kw: dict, out: Path) -> None:
    """Dry run on SLURM: the batch scripts that would be submitted."""
    # a submitted run writes into a new folder of its own there (SlurmBackend.fresh_rundir)
    rundir = Path(kw["slurm_dir"] or out / "slurm").absolute() / "run-DRYRUN.XXXXXXXX"
    options = SlurmOptions.from_options(kw)
    try:
        for group in group_jobs(plan.jobs):
            script = render(group, "DRYRUN", rundir, options)
            click.echo(f"# ---- job array {group.name}: {len(group.jobs)} task(s)")
            click.echo(script)
    except ScriptError as exc:
        raise runner.UsageError(str(exc)) from exc


def rank_layout(value: str | None) -> str | None:
    """--rank-layout, checked before anything is built."""
    if value is not None and value not in RANK_LAYOUTS:
        raise runner.UsageError(
            f"--rank-layout {value!r} is not a rank layout: choose {', '.join(RANK_LAYOUTS)}"
        )
    return value


def finish(outcome: runner.Outcome | None) -> None:
    raise SystemExit(outcome.exit_code if outcome else runner.EXIT_OK)


def execute_command(
    ctx: click.Context, suite: str, kw: dict, chatter: Console = err
) -> runner.Outcome | None:
    """A run subcommand's options -> the suite's opts (its *_opts builder) -> execute."""
    shared, own = split_options(kw)
    builder = {
        "p2p": p2p_opts,
        "coll": coll_opts,
        "lanes": lanes_opts,
        "node": node_opts,
        "rma": rma_opts,
        "links": links_opts,
        "nbc": nbc_opts,
        "startup": startup_opts,
        "io": io_opts,
    }[suite]
    return execute(ctx, suite, builder(own, shared), shared, chatter)


# --osu-dir of coll, nbc, rma and startup (p2p's has its own help): suites/osu_programs
OSU_DIR_OPTION = once(
    "--osu-dir",
    default=None,
    help="Also run your OSU 7.4 build's counterparts from this folder (its install prefix "
    "or libexec/osu-micro-benchmarks/mpi/...), tagged tool=osu.",
)


def placement_options(command):
    """--placements and --cpus, as the two-rank suites (p2p, rma) take them."""
    command = once_list(
        "--cpus", "0,7", default=None, help="Explicit CPUs for rank 0 and 1, e.g. 0,7."
    )(command)
    return once_list(
        "--placements",
        "core,socket",
        default=None,
        help="Comma list of smt, core, numa, socket, node (default: all this machine offers).",
    )(command)


@run.command("p2p")
@placement_options
@once("--sizes", default="0:4M", show_default=True, help="Message size range MIN:MAX.")
@once_list(
    "--tests",
    "latency,bw",
    default=None,
    help="Comma list of latency, bw, bibw, mbw_mr (the default), IMB-MPI1's pingping, "
    "sendrecv, exchange and OSU's latency_persistent, bw_persistent, bibw_persistent, "
    "latency_mt, latency_mp, multi_lat (--pairs), bw_fan_in, bw_fan_out (--fan); all = the "
    "fifteen.",
)
@once(
    "--threads",
    default=None,
    help="latency_mt: receiver threads N or sender:receiver M:N, as OSU's -t (default 1:2).",
)
@once(
    "--processes",
    default=None,
    help="latency_mp: forked processes N or sender:receiver M:N, as OSU's -t (default 2:2).",
)
@once("--pairs", default=None, help="multi_lat: pairs of ranks at once (default 2).")
@once(
    "--fan",
    default=None,
    help="bw_fan_in/out: GROUPS:PPN, groups of PPN ranks (one per node, package or core "
    "set by placement), group 0 the root (default: as many groups as the placement "
    "offers, 1 rank each).",
)
@click.option("--validate", is_flag=True, help="Untimed pass that checks every received byte.")
@once(
    "--protocol",
    default="hpcscope",
    show_default=True,
    help="hpcscope (blocks, random size order per launch) or osu (OSU 7.4's loops).",
)
@once("--osu-dir", default=None, help="Also run your OSU build's osu_* from this folder.")
@once(
    "--precision",
    default=None,
    help="Measure each size until the 95% interval of its median over launches is within "
    "this of it, e.g. 1% (default: OSU's fixed counts and --repeat launches, which reached "
    "a given precision sooner here; with --budget alone 1%, --quick 2%).",
)
@once(
    "--budget",
    default=None,
    help="Wall time for a run to a precision, e.g. 90s, 10m (default 10m, --quick 25s); "
    "cells still short of the precision then say so.",
)
@common_run_options
@click.pass_context
@handle_errors
def run_p2p(ctx, **kw) -> None:
    """MPI point-to-point latency and bandwidth at each placement (OSU definitions).

    \b
    Example: hpcscope run p2p --mpi openmpi,mpich --placements core,socket --repeat 5
             hpcscope run p2p --precision 1% --budget 5m
             hpcscope run p2p --on slurm --nodes 2 --partition short --wait
    By default OSU's counts in --repeat launches (5, --quick 3); `show` states the
    precision achieved and stars the numbers whose 95% interval over launches is
    wider than 5%. With --precision each size is measured until its median is as
    precise as asked, and launches are added where launches differ, within --budget.
    Placements are derived from hwloc's topology; classes this machine cannot
    offer are reported as skipped with the reason.
    """
    finish(execute_command(ctx, "p2p", kw))


def p2p_opts(own: dict, shared: dict) -> dict:
    check_shared(shared)
    sizes = nonempty(own["sizes"], "--sizes", "0:4M")
    try:
        p2p_suite.parse_size_range(sizes or "0:4M")  # refused before anything is built
    except ValueError as exc:
        raise usage_error(f"--sizes: {exc}") from None
    fan = nonempty(own["fan"], "--fan", "3:1")
    try:
        p2p_fan.parse_fan(fan)  # likewise
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    osu_dir = nonempty(own["osu_dir"], "--osu-dir", "~/osu/c/mpi/pt2pt/standard")
    precision, budget_s = precision_opts(own)
    protocol = p2p_suite.check_protocol(nonempty(own["protocol"], "--protocol", "osu"))
    osu_keeps_counts(protocol, precision, budget_s)
    return {
        "placements": csv_list(own["placements"], "--placements", "core,socket"),
        "cpus": cpu_list(own["cpus"]),
        "sizes": sizes,
        "tests": csv_list(own["tests"], "--tests", "latency,bw"),
        "validate": own["validate"],
        "protocol": protocol,
        "osu_dir": osu_dir
        and check_osu_dir(
            osu_dir, csv_list(own["tests"], "--tests") or list(p2p_suite.DEFAULT_TESTS)
        ),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
        "precision": precision,
        "budget_s": budget_s,
        "threads": nonempty(own["threads"], "--threads", "1:2"),
        "processes": nonempty(own["processes"], "--processes", "2:2"),
        "pairs": nonempty(own["pairs"], "--pairs", "2"),
        "fan": fan,
    }


@run.command("rma")
@placement_options
@once("--sizes", default="1:4M", show_default=True, help="Message size range MIN:MAX.")
@once_list(
    "--tests",
    "put_latency,get_bw",
    default=None,
    help="Comma list of put_latency, get_latency, put_bw, get_bw, put_bibw, acc_latency, "
    "get_acc_latency, fop_latency, cas_latency, get_mbw, get_multi_lat (default: all).",
)
@once(
    "--sync",
    default="auto",
    show_default=True,
    help="lock, flush, flush_local, lock_all, fence, pscw; auto = each OSU program's default.",
)
@once(
    "--window",
    default="auto",
    show_default=True,
    help="create, allocate or dynamic; auto = each OSU program's default.",
)
@click.option(
    "--pairs",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Pairs of get_mbw and get_multi_lat (a launch of 2 x PAIRS ranks when above 1).",
)
@once(
    "--protocol",
    default="hpcscope",
    show_default=True,
    help="hpcscope (blocks, random size order per launch) or osu (OSU 7.4's loops).",
)
@once(
    "--precision",
    default=None,
    help="Add blocks at each size until the 95% CI of their median is within this of it, "
    "e.g. 1% (default: OSU's fixed counts in --repeat launches, as p2p; with --budget "
    "alone 1%, --quick 2%). Not with --protocol osu.",
)
@once(
    "--budget",
    default=None,
    help="Wall time for a run to a precision, e.g. 90s, 10m (default 10m, --quick 25s), "
    "shared out as each size's time for its blocks; sizes still short of the precision "
    "then say so.",
)
@OSU_DIR_OPTION
@common_run_options
@click.pass_context
@handle_errors
def run_rma(ctx, **kw) -> None:
    """MPI one-sided latency and bandwidth at each placement (OSU 7.4's one-sided tests).

    \b
    Example: hpcscope run rma --tests put_latency,get_bw --sync lock --placements core
             hpcscope run rma --protocol osu --window dynamic --sizes 1:64K
             hpcscope run rma --tests put_latency --precision 1% --budget 5m
    """
    finish(execute_command(ctx, "rma", kw))


def rma_opts(own: dict, shared: dict) -> dict:
    from hpcscope.suites import rma as rma_suite

    check_shared(shared)
    sizes = nonempty(own["sizes"], "--sizes", "1:4M")
    tests = csv_list(own["tests"], "--tests", "put_latency,get_bw")
    try:  # refused before anything is built
        p2p_suite.parse_size_range(sizes or "1:4M")
        checked = rma_suite.check_tests(tests)
        sync = rma_suite.check_sync(nonempty(own["sync"], "--sync", "flush"), checked)
        window = rma_suite.check_window(nonempty(own["window"], "--window", "create"))
        protocol = p2p_suite.check_protocol(nonempty(own["protocol"], "--protocol", "osu"))
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    precision, budget_s = precision_opts(own)
    osu_keeps_counts(protocol, precision, budget_s)
    return {
        "placements": csv_list(own["placements"], "--placements", "core,socket"),
        "cpus": cpu_list(own["cpus"]),
        "sizes": sizes,
        "tests": tests,
        "sync": sync,
        "window": window,
        "pairs": own["pairs"],
        "protocol": protocol,
        "osu_dir": osu_dir_of(own, "rma"),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
        "precision": precision,
        "budget_s": budget_s,
    }


def precision_opts(own: dict) -> tuple[float | None, float | None]:
    """--precision and --budget as numbers (None: not given); bad text is a usage error."""
    try:
        precision = None if own["precision"] is None else parse_precision(own["precision"])
        budget_s = None if own["budget"] is None else parse_budget(own["budget"])
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    return precision, budget_s


def osu_keeps_counts(protocol: str, precision: float | None, budget_s: float | None) -> None:
    """--precision/--budget with --protocol osu: one usage line (p2p, rma, nbc)."""
    from hpcscope.suites import p2p_adaptive

    try:
        p2p_adaptive.refuse_with_osu(protocol, precision, budget_s)
    except ValueError as exc:
        raise usage_error(str(exc)) from None


def check_shared(shared: dict) -> None:
    """The common options' texts, checked before anything is built: none given empty
    (`--mpi ''` is not "all", `--time ''` not "the suite's"), at most MAX_RANKS ranks
    over the SLURM nodes."""
    for key, option, example in (
        ("mpi", "--mpi", "openmpi,mpich"),
        ("time", "--time", "1:00:00"),
        ("platform", "--platform", "hydra:nodes=4"),
        ("out_dir", "-o/--out", "results"),
        ("slurm_dir", "--slurm-dir", "/scratch/me/hpcscope"),
        ("topology", "--topology", "node.xml"),
        ("cpuinfo", "--cpuinfo", "node.cpuinfo"),
        ("partition", "--partition", "short"),
        ("account", "--account", "project1"),
        ("qos", "--qos", "normal"),
        ("constraint", "--constraint", "ib"),
        ("mail_type", "--mail-type", "END,FAIL"),
        ("mail_user", "--mail-user", "me@example.org"),
    ):
        nonempty(shared.get(key), option, example)
    label = shared.get("label")
    if label is not None:
        from hpcscope.results.export_schema import max_length

        # the import schema's bound: what is stored must import again (issue 43)
        limit = max_length("label")
        if len(label) > limit:
            raise usage_error(
                f"--label: {len(label)} characters, at most {limit} are stored (the bound "
                "import takes); give a shorter label"
            )
    nodes, per_node = shared.get("nodes"), shared.get("ntasks_per_node")
    if nodes and per_node and nodes * per_node > MAX_RANKS:
        raise usage_error(
            f"--nodes {nodes} x --ntasks-per-node {per_node} = {nodes * per_node} ranks: "
            f"hpcscope runs at most {MAX_RANKS} ranks; lower one of them"
        )


# What this machine can start (--on local and lab: every rank is a process here). Above
# RANKS_PER_CORE per core a run measures the scheduler, not MPI, and its start-up alone
# takes minutes; RANK_BYTES is a low bound of one MPI rank's resident memory (Open MPI and
# MPICH ranks hold 20-60 MiB after MPI_Init here), so a count refused for memory could
# never have started. Oversubscription below the bounds stays a warning of the plan.
RANKS_PER_CORE = 64
RANK_BYTES = 16 << 20


def check_ranks(ranks: int) -> None:
    """--ranks above what this machine can start is refused with the numbers."""
    from hpcscope.machine.environment import available_memory

    cores = len(os.sched_getaffinity(0))
    most = RANKS_PER_CORE * cores
    if ranks > most:
        raise usage_error(
            f"--ranks {ranks}: this machine can start at most {most} ranks ({RANKS_PER_CORE} "
            f"per core x {cores} cores hpcscope may use); give fewer, or run on more "
            "nodes (--on slurm, or --on sim to simulate them)"
        )
    memory = available_memory()
    if memory is not None and ranks * RANK_BYTES > memory:
        raise usage_error(
            f"--ranks {ranks}: needs at least {ranks * RANK_BYTES >> 20} MiB ({RANK_BYTES >> 20} "
            f"MiB per rank), {memory >> 20} MiB are available; give at most "
            f"{memory // RANK_BYTES} ranks"
        )


def check_osu_dir(osu_dir: str, names: list[str], suite: str = "p2p") -> str:
    """Refuses a folder without OSU programs before anything is built or launched."""
    kind = osu_programs.SUITE_KIND[suite]
    osu_programs.find_programs(osu_dir, osu_programs.wanted(suite, names), kind)
    return osu_dir


def osu_dir_of(own: dict, suite: str) -> str | None:
    """--osu-dir, refused early unless it holds one of the suite's OSU programs."""
    from hpcscope.results.nbc_names import NAMES
    from hpcscope.results.rma_tests import TEST_NAMES

    osu_dir = nonempty(own["osu_dir"], "--osu-dir", "~/osu")
    names = {"rma": TEST_NAMES, "startup": tuple(osu_programs.STARTUP)}.get(suite, NAMES)
    return osu_dir and check_osu_dir(osu_dir, list(names), suite)


@run.command("coll")
@once_list(
    "--collectives",
    "bcast,allreduce",
    default=None,
    help="Comma list of bcast, gather, scatter, allgather, alltoall, reduce, "
    "allreduce, reduce_scatter_block, scan, exscan, allgatherv, gatherv, scatterv and the "
    "native-only barrier, alltoallv, alltoallw, reduce_scatter "
    "(default all; --on sim: the paper's bcast, allgather, allreduce; the vector ones "
    "use irregular counts around the mean block COUNT).",
)
@once_list(
    "--algorithms",
    "native,lane",
    default=None,
    help="Comma list of algorithms (default: every one the build has, as its "
    "`coll --list-algorithms` lists them: native, lane, hier, lane_v, kported, pipeline, "
    "pipeline1 and the guideline mock-ups reduce_scatterv, alltoallv; --on sim: the paper's "
    "native, lane, lane_v, hier; tuned = MPI_<Coll> "
    "under an interposition library).",
)
@once_list(
    "--counts",
    "1p,10p",
    default=None,
    help="Comma list of counts (MPI_INT elements) or multiples of p, e.g. 1p,10p,100p.",
)
@coll_options
@click.option("--no-validate", is_flag=True, help="Skip the untimed check against native.")
@click.option(
    "--interleave",
    is_flag=True,
    help="Alternate the algorithms inside each repetition (fairer on a noisy machine).",
)
@once(
    "--sizes",
    default=None,
    help="Sizes MIN:MAX in bytes instead of --counts, as OSU's -m: the powers of two "
    "between them, as MPI_INT counts (e.g. 4:64K = counts 1, 2, ..., 16384).",
)
@once(
    "--npmin",
    type=POSITIVE_TYPE,
    default=None,
    help="IMB-MPI1's -npmin K: every collective on K, 2K, 4K, ... ranks and finally all, "
    "in one run (tables and a figure by rank count).",
)
@once(
    "--protocol",
    default="hpcscope",
    show_default=True,
    help="hpcscope (slowest rank per repetition) or osu (OSU 7.4's collective loop: every "
    "rank's mean over 1000 iterations, 100 above 8 KiB; algorithms default to native).",
)
@OSU_DIR_OPTION
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
    check_shared(shared)
    precision, budget_s = precision_opts(own)
    return {
        "collectives": csv_list(own["collectives"], "--collectives", "bcast,allreduce"),
        "algorithms": csv_list(own["algorithms"], "--algorithms", "native,lane"),
        "counts": coll_counts(own),
        "node_size": own["node_size"],
        "ranks": own["ranks"],
        "repetitions": own["repetitions"],
        "precision": precision,
        "budget_s": budget_s,
        "regular_only": own["regular_only"],
        "rank_layout": rank_layout(own["rank_layout"]),
        "validate": not own["no_validate"],
        "interleave": own["interleave"],
        "protocol": nonempty(own["protocol"], "--protocol", "osu"),
        "npmin": own["npmin"],
        "osu_dir": osu_dir_of(own, "coll"),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


@run.command("nbc")
@once_list(
    "--collectives",
    "ibcast,iallreduce",
    default=None,
    help="Comma list: nonblocking, persistent, neighborhood, all (default), or names: "
    "i<coll>, <coll>_persistent, <coll> for allgather(v), allreduce, alltoall(v,w), barrier, "
    "bcast, gather(v), reduce, reduce_scatter(_block), scatter(v); neighbor_<c> and "
    "ineighbor_<c> for allgather(v), alltoall(v,w); alltoallv_neighbors. The blocking "
    "counterparts of the variants are added.",
)
@once(
    "--sizes",
    default=None,
    help="Message sizes MIN:MAX in bytes (default 1:1M, OSU's; --quick 1:4K).",
)
@once(
    "--iterations",
    type=REPETITIONS_TYPE,
    default=None,
    help="Timed calls per size (default OSU's 1000, 100 above 8 KiB; --quick 100); with "
    "--precision the most.",
)
@once(
    "--protocol",
    default="hpcscope",
    show_default=True,
    help="hpcscope (barrier before each call, random size order per launch) or osu (OSU "
    "7.4's loops).",
)
@once(
    "--probes",
    type=click.IntRange(0, 10000),
    default=None,
    help="MPI_Test calls inside the compute of the overlap loop (OSU's -t; default 0, OSU's).",
)
@once(
    "--neighbor-dims",
    type=click.IntRange(1, 8),
    default=None,
    help="Dimensions of OSU's Cartesian neighbourhood (default 1).",
)
@once(
    "--neighbor-radius",
    type=click.IntRange(1, 1000),
    default=None,
    help="Its radius (default 1: 3 ranks or more in 1 dimension).",
)
@once(
    "--ranks",
    type=POSITIVE_TYPE,
    default=None,
    help="MPI ranks (default: the cores of this machine, at least 2).",
)
@once("--rank-layout", default=None, help="alternate (default), block or default, as for coll.")
@click.option(
    "--no-validate", is_flag=True, help="Skip the untimed check against the blocking collective."
)
@once(
    "--precision",
    default=None,
    help="Repeat each size's calls until the 95% CI of their median (pure or blocking time; "
    "in the overlap loop the overall time) is within this of it, e.g. 1% (default: OSU's "
    "fixed counts; with --budget alone 1%, --quick 2%). Not with --protocol osu.",
)
@once(
    "--budget",
    default=None,
    help="Wall time for a run to a precision, e.g. 90s, 5m (default 5m, --quick 10s); sizes "
    "still short of the precision then say so.",
)
@OSU_DIR_OPTION
@common_run_options
@click.pass_context
@handle_errors
def run_nbc(ctx, **kw) -> None:
    """Non-blocking, persistent and neighbourhood collectives (OSU 7.4's definitions).

    Non-blocking: pure I<coll> + MPI_Wait, then a compute calibrated to it between post
    and wait: overall, compute and overlap % as OSU defines them. Each variant is
    checked against its blocking collective (Holm-corrected guideline verdicts).

    \b
    Example: hpcscope run nbc --quick --collectives ibcast,iallreduce
             hpcscope run nbc --collectives neighborhood --ranks 4
             hpcscope run nbc --protocol osu --sizes 1:64K
             hpcscope run nbc --collectives ibcast --precision 1% --budget 2m
    """
    finish(execute_command(ctx, "nbc", kw))


def nbc_opts(own: dict, shared: dict) -> dict:
    check_shared(shared)
    sizes = nonempty(own["sizes"], "--sizes", "1:64K")
    if sizes:
        try:
            p2p_suite.parse_size_range(sizes)
        except ValueError as exc:
            raise usage_error(f"--sizes: {exc}") from None
    protocol = p2p_suite.check_protocol(nonempty(own["protocol"], "--protocol", "osu"))
    precision, budget_s = precision_opts(own)
    osu_keeps_counts(protocol, precision, budget_s)
    return {
        "collectives": csv_list(own["collectives"], "--collectives", "ibcast,iallreduce"),
        "precision": precision,
        "budget_s": budget_s,
        "sizes": sizes,
        "iterations": own["iterations"],
        "protocol": protocol,
        "probes": own["probes"],
        "neighbor_dims": own["neighbor_dims"],
        "neighbor_radius": own["neighbor_radius"],
        "ranks": own["ranks"],
        "rank_layout": rank_layout(own["rank_layout"]),
        "validate": not own["no_validate"],
        "osu_dir": osu_dir_of(own, "nbc"),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


def coll_counts(own: dict) -> list | None:
    """--counts, or --sizes in bytes as counts (suites/coll_osu); not both."""
    sizes = nonempty(own["sizes"], "--sizes", "4:64K")
    if sizes is None:
        return count_list(own["counts"])
    if own["counts"] is not None:
        raise usage_error("--sizes and --counts both say what to measure: give one")
    from hpcscope.suites import coll_osu

    try:
        return coll_osu.counts_of_sizes(sizes)
    except ValueError as exc:
        raise usage_error(f"--sizes: {exc}") from None


@run.command("lanes")
@coll_options
@once_list(
    "--lanes",
    "1,2,4",
    default=None,
    help="Virtual lanes k to measure, e.g. 1,2,4 (default every k from 1 to the ranks per "
    "node; --on sim: 1, 2, 4, ... up to the ranks per node, as the paper).",
)
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
    check_shared(shared)
    precision, budget_s = precision_opts(own)
    return {
        "node_size": own["node_size"],
        "ranks": own["ranks"],
        "repetitions": own["repetitions"],
        "precision": precision,
        "budget_s": budget_s,
        "regular_only": own["regular_only"],
        "rank_layout": rank_layout(own["rank_layout"]),
        "lanes": lane_list(own["lanes"]),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


def lane_list(text: str | None) -> list[int] | None:
    """'1,2,4' -> [1, 2, 4]; each a positive integer (the plan checks it against ppn)."""
    items = csv_list(text, "--lanes", "1,2,4")
    if items is None:
        return None
    if not all(
        t.isascii() and t.isdigit() and len(t) < 7 and 1 <= int(t) <= MAX_RANKS for t in items
    ):
        raise usage_error(f"--lanes '{text}': give positive integers up to {MAX_RANKS}, e.g. 1,2,4")
    return [int(t) for t in items]


@run.command("node")
@click.option(
    "--cpu", is_flag=True, help="CPU: operations/s per precision and thread count, DGEMM."
)
@click.option(
    "--mem",
    is_flag=True,
    help="Memory: STREAM, block and working-set sweeps, pointer-chase latency, NUMA matrix.",
)
@click.option(
    "--disk", is_flag=True, help="Disk: O_DIRECT sequential/random throughput, IOPS, latency."
)
@click.option(
    "--net",
    is_flag=True,
    help="Network: TCP/UDP throughput and latency on 127.0.0.1 (and between two nodes with "
    "--on slurm --nodes 2, or on the lab).",
)
@once_list(
    "--threads", "1,2,4", default=None, help="Comma list of thread counts (default 1..cores)."
)
@once(
    "--disk-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Directory for the disk test files (default: a fresh one in /var/tmp).",
)
@click.option(
    "--peak",
    multiple=True,
    help="Override a theoretical peak, e.g. --peak disk=2GB/s --peak net=100Gbit/s "
    "--peak disk_iops=500000.",
)
@once(
    "--precision",
    default=None,
    help="Repeat each point of our programs until the 95% CI of its median is within "
    "this of it, e.g. 1% (default 1%, --quick 2%; 0: the fixed counts). The reference "
    "tools keep their fixed counts.",
)
@once(
    "--budget",
    default=None,
    help="Wall time for our programs' repetitions, e.g. 90s, 10m (default 10m, --quick "
    "30s); points still short of the precision then say so.",
)
@node_knob_options
@common_run_options
@click.pass_context
@handle_errors
def run_node(ctx, **kw) -> None:
    """The node itself: CPU, memory, disk and network, each next to its theoretical peak
    and the standard tool (likwid-bench, OpenBLAS DGEMM, HPL via hpcc, fio, iperf3) as
    efficiency.

    Without --cpu/--mem/--disk/--net all four run.

    \b
    Example: hpcscope run node --quick
             hpcscope run node --disk --disk-dir /scratch/me --peak disk=2GB/s
             hpcscope run node --disk --disk-blocks 1K,4K,1M,100M --disk-depths 1,8,128
             hpcscope run node --net --net-streams 1,2,4,8 --net-blocks 1K,128K
    """
    finish(execute_command(ctx, "node", kw))


# Threads of one node: as many as the hardware threads hpcscope plans for (slurm_topology)
MAX_THREADS = 16384


def node_opts(own: dict, shared: dict) -> dict:
    check_shared(shared)
    parts = {k: own[k] for k in ("cpu", "mem", "disk", "net")}
    if not any(parts.values()):
        parts = {k: True for k in parts}
    threads = csv_list(own["threads"], "--threads", "1,2,4")
    if threads and not all(
        t.isascii() and t.isdigit() and len(t) < 7 and 1 <= int(t) <= MAX_THREADS for t in threads
    ):
        raise runner.UsageError(
            f"--threads '{own['threads']}': give whole numbers 1..{MAX_THREADS}, e.g. 1,2,4"
        )
    thread_list = [int(t) for t in threads] if threads else None
    nonempty(own["disk_dir"], "--disk-dir", "/scratch/me")
    precision, budget_s = precision_opts(own)
    return {
        **parts,
        "threads": thread_list,
        "disk_dir": own["disk_dir"],
        "peaks": peak_overrides(own["peak"]),
        "precision": precision,
        "budget_s": budget_s,
        "quick": shared["quick"],
        **node_knobs(own),
    }


# ---- links (docs/links.md)


@run.command("links")
@once(
    "--ranks",
    type=int,
    default=None,
    help="--on local only: emulated nodes of one rank each (default 4).",
)
@once("--bw-bytes", default=None, help="Bandwidth ping-pong size, e.g. 1M (--quick 256K).")
@once("--lat-bytes", default=None, help="Latency ping-pong size (default 8).")
@once("--bw-iterations", type=int, default=None, help="Bandwidth values per pair (default 5).")
@once("--k", "k", type=float, default=None, help="Flag rule: MADs beyond the median (default 3).")
@once("--floor", type=float, default=None, help="Flag rule: and this share of the median (0.2).")
@once("--retest-max", type=int, default=None, help="At most this many pairs re-tested alone (64).")
@once("--alltoall-bytes", default=None, help="MPI_Alltoall block (default 64K; 0: none).")
@click.option("--no-bisection", is_flag=True, help="Skip the bisection phase.")
@click.option(
    "--sequential",
    is_flag=True,
    help="The rounds' pairs one after another, each alone: what the parallel rounds save.",
)
@common_run_options
@click.pass_context
@handle_errors
def run_links(ctx, **kw) -> None:
    """Every pair of nodes of an allocation, in parallel rounds, in one launch.

    One rank per node (and lane). A 1-factorization pairs every node with every other in
    N-1 rounds (N odd: N rounds, one idle); each pair's latency and bandwidth is measured
    beside the other pairs of its round. The slowest pairs are re-measured alone, then
    half of the nodes send to the other half at once (bisection), and an all-to-all runs.
    `show` names the flagged pairs and whether a node or the link is at fault.
    With --dry-run the schedule is printed, a line per round.

    \b
    Example: hpcscope run links --on lab
             hpcscope run links --on sim --platform jupiter:nodes=16
             hpcscope run links --on slurm --nodes 64 --dry-run
    """
    finish(execute_command(ctx, "links", kw))


def links_opts(own: dict, shared: dict) -> dict:
    check_shared(shared)
    if own["ranks"] is not None and own["ranks"] < 2:
        raise usage_error(
            f"--ranks {own['ranks']}: links needs 2 or more nodes: use --on lab, --on sim or "
            "--on slurm, or --ranks N >= 2 emulated nodes on this machine"
        )
    for key in ("bw_bytes", "lat_bytes", "alltoall_bytes"):
        value = own[key]
        if value is not None and not re.fullmatch(r"\d+[KMG]?", value):
            raise usage_error(f"--{key.replace('_', '-')} {value!r}: give bytes, e.g. 4096 or 1M")
    for key in ("bw_iterations", "retest_max"):
        if own[key] is not None and not 0 <= own[key] <= 10000:
            raise usage_error(f"--{key.replace('_', '-')} {own[key]}: give 0 to 10000")
    if own["k"] is not None and not own["k"] > 0:
        raise usage_error(f"--k {own['k']}: give a number of MADs above 0, e.g. 3")
    if own["floor"] is not None and not 0 <= own["floor"] < 1:
        raise usage_error(f"--floor {own['floor']}: give a share from 0 to below 1, e.g. 0.2")
    return {
        "ranks": own["ranks"],
        "bw_bytes": own["bw_bytes"],
        "lat_bytes": own["lat_bytes"],
        "bw_iterations": own["bw_iterations"],
        "k": own["k"],
        "floor": own["floor"],
        "retest_max": own["retest_max"],
        "alltoall_bytes": own["alltoall_bytes"],
        "bisection": not own["no_bisection"],
        "sequential": own["sequential"],
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


# ---- startup and io (suites/startup.py, suites/io.py; docs/startup-and-io.md)


def rank_counts(text: str | None, shared: dict) -> list[int] | None:
    """--ranks '1,2,4' -> [1, 2, 4]; each 1..MAX_RANKS and, on this machine, startable."""
    items = csv_list(text, "--ranks", "1,2,4")
    if items is None:
        return None
    if not all(
        t.isascii() and t.isdigit() and len(t) < 7 and 1 <= int(t) <= MAX_RANKS for t in items
    ):
        raise usage_error(f"--ranks '{text}': give whole numbers 1..{MAX_RANKS}, e.g. 1,2,4")
    counts = sorted({int(t) for t in items})
    if shared.get("on") in ("local", "lab"):
        check_ranks(counts[-1])
    return counts


@run.command("startup")
@once_list(
    "--ranks",
    "1,2,4",
    default=None,
    help="Rank counts, e.g. 1,2,4,8 (default powers of two up to the cores, and the cores; "
    "counts above them run oversubscribed and are marked so).",
)
@OSU_DIR_OPTION
@common_run_options
@click.pass_context
@handle_errors
def run_startup(ctx, **kw) -> None:
    """MPI start-up: MPI_Init per rank and the time from the launch to every rank's hello
    (OSU 7.4 osu_init and osu_hello), at each rank count, over --repeat launches.

    \b
    Example: hpcscope run startup --ranks 1,2,4 --repeat 10
             hpcscope run startup --on slurm --nodes 8 --ranks 8,64,512 --wait
    """
    finish(execute_command(ctx, "startup", kw))


def startup_opts(own: dict, shared: dict) -> dict:
    check_shared(shared)
    return {
        "rank_counts": rank_counts(own["ranks"], shared),
        "osu_dir": osu_dir_of(own, "startup"),
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


@run.command("io")
@once_list("--ranks", "1,2,4", default=None, help="Rank counts, e.g. 1,4 (default: the cores).")
@once(
    "--dir",
    "io_dir",
    default=None,
    help="Existing folder for the files (a node-local disk or a shared file system; "
    "default the output folder). A private folder is made in it and removed.",
)
@once_list(
    "--transfer-sizes",
    "64K,1M,4M",
    default=None,
    help="Bytes per MPI-IO call, e.g. 64K,1M,4M (default those; --quick 1M), each dividing "
    "--block-size.",
)
@once(
    "--block-size", default=None, help="Bytes each rank writes and reads (default 16M, --quick 4M)."
)
@once(
    "--repetitions",
    type=REPETITIONS_TYPE,
    default=None,
    help="Timed write+read pairs per point inside each launch (default 3, --quick 1).",
)
@common_run_options
@click.pass_context
@handle_errors
def run_io(ctx, **kw) -> None:
    """MPI-IO bandwidth: independent and collective writes and reads (write_at,
    write_at_all, read_at, read_at_all) to one shared file and a file per process.

    Timed from open to close, the write with a sync before close; reads follow a
    page-cache drop of the written file and read another rank's block (IOR's -C).

    \b
    Example: hpcscope run io --dir /scratch/me --transfer-sizes 64K,1M,4M --block-size 64M
             hpcscope run io --quick
    """
    finish(execute_command(ctx, "io", kw))


def io_opts(own: dict, shared: dict) -> dict:
    from hpcscope.cli.node_knobs import parse_size, size_list
    from hpcscope.suites import io as io_suite

    check_shared(shared)
    block_text = nonempty(own["block_size"], "--block-size", "16M")
    block = parse_size(block_text) if block_text else None
    if block_text and (block is None or not io_suite.MIN_BLOCK <= block <= io_suite.MAX_BLOCK):
        raise usage_error(f"--block-size '{block_text}': give a size from 16 to 64G, e.g. 16M")
    sizes = size_list(
        own["transfer_sizes"], "--transfer-sizes", io_suite.MIN_TRANSFER, io_suite.MAX_TRANSFER
    )
    problem = sizes and io_suite.check_sizes(
        sizes, block or (io_suite.QUICK_BLOCK if shared["quick"] else io_suite.BLOCK)
    )
    if problem:
        raise usage_error(problem)
    return {
        "dir": io_folder(nonempty(own["io_dir"], "--dir", "/scratch/me"), shared),
        "transfer_sizes": sizes,
        "block": block,
        "rank_counts": rank_counts(own["ranks"], shared),
        "repetitions": own["repetitions"],
        "quick": shared["quick"],
        "repeat": shared["repeat"],
    }


def io_folder(given: str | None, shared: dict) -> str:
    """--dir as an absolute path: an existing folder this user can write (one line and
    exit 2 otherwise); without it the output folder (-o, else hpcscope-out), made now."""
    if given is None:
        folder = Path(shared.get("out_dir") or "hpcscope-out")
        if shared.get("on") != "slurm" and not shared.get("dry_run"):
            runner.check_writable(folder)
        return str(folder.absolute())
    folder = Path(given)
    if not folder.is_dir():
        raise usage_error(f"--dir {given}: no such folder; give an existing folder")
    try:
        safe_write.probe_writable(folder)  # a new random name: no existing file is touched
    except OSError as exc:
        raise usage_error(
            f"--dir {given}: not writable ({exc.strerror}); give a folder you can write"
        ) from None
    return str(folder.absolute())


def disk_ceiling(ctx: click.Context, topology) -> dict | None:
    """The newest node run of this host's disk rate (analysis/io_rows.disk_ceiling)."""
    import socket

    from hpcscope.analysis import io_rows

    if not Path(ctx.obj["db"]).exists():
        return None
    with store_of(ctx) as store:
        return io_rows.disk_ceiling(store, topology.hostname or socket.gethostname())
