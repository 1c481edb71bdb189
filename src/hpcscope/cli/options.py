"""Options shared by the `run` commands, declared once (fio's rule: one table drives parsing
and help). The SLURM options apply with `--on slurm`, the simulation ones with `--on sim`;
each backend ignores the others'."""

from __future__ import annotations

import click
from click.core import ParameterSource

from hpcscope.launch.backends import BACKENDS
from hpcscope.machine.sim_platform import MAX_RANKS

# Knob ranges (docs/node.md lists them with the node suite's): 0 or less is a mistake,
# never "default"; above the bound is a typo that would plan, allocate or wait without end
# (`--repeat 100000000` grew to 1.35 GB before printing a plan).
MAX_REPEAT = 1000  # launches per configuration
MAX_REPETITIONS = 100_000  # timed calls per count inside a launch
MAX_ARRAY_LIMIT = 10_000  # SLURM array tasks at once


class Bounded(click.IntRange):
    """click.IntRange whose refusal also says what the number counts and why it is bounded."""

    def __init__(self, low: int, high: int, what: str) -> None:
        super().__init__(min=low, max=high)
        self.what = what

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            self.fail(f"{exc.message.rstrip('.')} ({self.what}).", param, ctx)


POSITIVE = Bounded(1, MAX_RANKS, f"at most {MAX_RANKS} ranks in all")
REPEAT = Bounded(1, MAX_REPEAT, f"launches per configuration, at most {MAX_REPEAT}")
REPETITIONS = Bounded(
    1, MAX_REPETITIONS, f"timed calls per count inside a launch, at most {MAX_REPETITIONS}"
)


class Once(click.Option):
    """A single-value option that may be given once: click keeps the last of
    `--mpi openmpi --mpi mpich` silently, so the first never runs. The parser collects
    every occurrence (as for multiple=True) and a second one is refused with `hint`."""

    def __init__(self, *args, hint: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hint = hint

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        if self.multiple or self.count or self.nargs != 1:
            return super().add_to_parser(parser, ctx)
        if not self.is_flag:
            parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append")
        elif self.is_bool_flag and self.secondary_opts:  # --exclusive/--no-exclusive
            for opts, const in ((self.opts, True), (self.secondary_opts, False)):
                parser.add_option(
                    obj=self, opts=opts, dest=self.name, action="append_const", const=const
                )
        else:  # a plain flag said twice means the same: let click take it
            super().add_to_parser(parser, ctx)

    def consume_value(self, ctx: click.Context, opts):
        value, source = super().consume_value(ctx, opts)
        if source == ParameterSource.COMMANDLINE and isinstance(value, list):
            if len(value) > 1:
                given = ", ".join(_spelled(self, v) for v in value)
                raise click.BadParameter(
                    f"given {len(value)} times ({given}), of which only the last would "
                    f"count; {self.hint or 'give it once'}",
                    ctx=ctx,
                    param=self,
                )
            value = value[0]
        return value, source


def _spelled(option: click.Option, value: object) -> str:
    if value is True:
        return option.opts[0]
    if value is False:
        return option.secondary_opts[0]
    return repr(value)


def once(*names: str, hint: str = "", **kwargs):
    """click.option for a single-value option that refuses being given twice (Once)."""
    return click.option(*names, cls=Once, hint=hint, **kwargs)


def once_list(name: str, example: str, **kwargs):
    """once() for a comma-list option: the hint shows the list."""
    return once(name, hint=f"give several as one comma list: {name} {example}", **kwargs)


COMMON_KEYS = ("mpi", "quick", "repeat", "out_dir", "label", "dry_run")


def common_run_options(fn):
    """Options every suite shares, then the SLURM and the simulation ones (listed in this
    order by --help)."""
    fn = sim_run_options(fn)
    fn = slurm_run_options(fn)
    for decorator in reversed(
        [
            once(
                "--mpi",
                hint="give several libraries as --mpi openmpi,mpich",
                default="all",
                show_default=True,
                help="MPI libraries: openmpi, mpich, auto, all, a comma list, or a path to mpicc.",
            ),
            click.option(
                "--quick", is_flag=True, help="Fewer repeats and iterations (a first look)."
            ),
            once(
                "--repeat",
                type=REPEAT,
                default=None,
                help="Launches per configuration: separate mpirun executions (p2p: default 5, --quick 3; coll and lanes: 1).",
            ),
            once(
                "-o",
                "--out",
                "out_dir",
                type=click.Path(file_okay=False),
                default=None,
                help="Folder for figures and tables (default hpcscope-out/run-ID).",
            ),
            once("--label", default=None, help="A name for this run, shown by list/report."),
            click.option(
                "--dry-run",
                is_flag=True,
                help="Print the plan (or with --on slurm the batch scripts) and exit.",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


SLURM_KEYS = (
    "nodes",
    "ntasks_per_node",
    "partition",
    "time",
    "account",
    "qos",
    "constraint",
    "exclusive",
    "mail_type",
    "mail_user",
    "module",
    "prelude",
    "sbatch_arg",
    "launcher",
    "array_limit",
    "slurm_dir",
    "wait",
    "topology",
    "cpuinfo",
)


def slurm_run_options(fn):
    """Options of `hpcscope run SUITE --on slurm` (ignored with --on local)."""
    for decorator in reversed(
        [
            once(
                "--on",
                "on",
                type=click.Choice(list(BACKENDS)),
                default="local",
                show_default=True,
                help="Where to run: "
                + "; ".join(f"{b.name}: {b.description}" for b in BACKENDS.values())
                + ".",
            ),
            once(
                "--nodes",
                type=POSITIVE,
                default=None,
                help="SLURM: nodes available to the plan (2 enables the node placement).",
            ),
            once(
                "--ntasks-per-node",
                type=POSITIVE,
                default=None,
                help="SLURM: MPI ranks per node for coll/lanes.",
            ),
            once("--partition", default=None, help="SLURM partition (sbatch --partition)."),
            once(
                "--time",
                default=None,
                help="Time limit of each job, in SLURM's forms: minutes or [D-]HH:MM:SS "
                "(default: the suite's, e.g. 1 h per coll job; --on sim 4 h). A job over "
                "it is killed, marked TIMEOUT, and its finished records are kept.",
            ),
            once("--account", default=None, help="SLURM account to charge."),
            once("--qos", default=None, help="SLURM quality of service."),
            once("--constraint", default=None, help="SLURM node features (--constraint)."),
            once(
                "--exclusive/--no-exclusive",
                default=True,
                show_default=True,
                help="SLURM: own the nodes (performance runs should).",
            ),
            once("--mail-type", default=None, help="SLURM notifications, e.g. END,FAIL."),
            once("--mail-user", default=None, help="Address for SLURM notifications."),
            click.option(
                "--module", multiple=True, help="`module load` this in the job (repeatable)."
            ),
            click.option(
                "--prelude", multiple=True, help="Shell line run before the benchmark (repeatable)."
            ),
            click.option(
                "--sbatch-arg", multiple=True, help="Extra sbatch option, e.g. --gres=gpu:1."
            ),
            once(
                "--launcher",
                type=click.Choice(["srun", "mpirun"]),
                default="srun",
                show_default=True,
                help="SLURM: start ranks with srun or the MPI's mpirun.",
            ),
            once(
                "--array-limit",
                type=Bounded(1, MAX_ARRAY_LIMIT, f"array tasks at once, at most {MAX_ARRAY_LIMIT}"),
                default=1,
                show_default=True,
                help="SLURM: repeats (array tasks) running at the same time.",
            ),
            once(
                "--slurm-dir",
                type=click.Path(file_okay=False),
                default=None,
                help="SLURM: run directory on a shared file system (default OUT/slurm).",
            ),
            click.option("--wait", is_flag=True, help="SLURM: wait for the jobs and collect them."),
            once(
                "--topology",
                "topology",
                type=click.Path(dir_okay=False),
                default=None,
                help="SLURM: plan for the compute nodes described by this hwloc XML (`lstopo "
                "--of xml` on a node) instead of probing them with a short job (cached; "
                "`hpcscope topo --on slurm` refreshes).",
            ),
            once(
                "--cpuinfo",
                "cpuinfo",
                type=click.Path(dir_okay=False),
                default=None,
                help="SLURM, node suite: the compute nodes' CPU facts for the peaks (model, "
                "clock, ISA flags) from this copy of a node's /proc/cpuinfo (`srun cat "
                "/proc/cpuinfo > node.cpuinfo`), e.g. beside --topology FILE, whose hwloc "
                "XML has no ISA flags.",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


SIM_KEYS = ("platform", "ppn")


def sim_run_options(fn):
    """Options of `hpcscope run SUITE --on sim` (ignored by the other backends)."""
    for decorator in reversed(
        [
            once(
                "--platform",
                default=None,
                help="sim: the simulated cluster: a preset (hydra, vsc3, jupiter; default "
                "hydra), a preset with changes (hydra:nodes=4,cores_per_socket=2) or a "
                "SimGrid platform .xml file. `hpcscope sim platforms` lists the presets.",
            ),
            once(
                "--ppn",
                type=POSITIVE,
                default=None,
                help="sim: MPI ranks per simulated node (default: all its cores); ranks = "
                "nodes x ppn.",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


def coll_options(fn):
    for decorator in reversed(
        [
            once(
                "--ranks",
                type=POSITIVE,
                default=None,
                help="MPI ranks (default: the cores of this machine; on SLURM nodes x "
                "--ntasks-per-node).",
            ),
            once(
                "--node-size",
                type=POSITIVE,
                default=None,
                help="Emulate nodes of K consecutive ranks on one machine (sets "
                "LANECOLL_NODE_SIZE; such runs are marked as emulated).",
            ),
            once(
                "--repetitions",
                type=REPETITIONS,
                default=None,
                help="Timed calls per count inside each launch, exactly (the paper's "
                "repetitions; --on sim 3); with --precision the most (default 10x 100, "
                "--quick 10x 20). Not --repeat, which counts launches.",
            ),
            once(
                "--precision",
                default=None,
                help="Repeat each count until the 95% CI of its median is within this of "
                "it, e.g. 1% (default 1%, --quick 2%; 0: exactly --repetitions, as does "
                "--repetitions alone).",
            ),
            once(
                "--budget",
                default=None,
                help="Wall time for the whole run, e.g. 90s, 5m (default 5m, --quick "
                "10s); counts still short of the precision then say so.",
            ),
            click.option(
                "--regular-only",
                is_flag=True,
                help="Refuse node sizes that do not divide the ranks.",
            ),
            once(
                "--rank-layout",
                default=None,
                help="Where the ranks of a node are pinned: alternate (rank i on socket "
                "i mod S, the paper's layout; default), block (socket 0 fills first) or "
                "default (no binding options: the launcher decides; reported from inside).",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


def split_options(kw: dict) -> tuple[dict, dict]:
    """(common + backend options, the suite's own options)."""
    shared = set(COMMON_KEYS) | set(SLURM_KEYS) | set(SIM_KEYS) | {"on"}
    return (
        {k: v for k, v in kw.items() if k in shared},
        {k: v for k, v in kw.items() if k not in shared},
    )
