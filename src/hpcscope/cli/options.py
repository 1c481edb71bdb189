"""Options shared by the `run` commands, declared once (fio's rule: one table drives parsing
and help). The SLURM options apply with `--on slurm`, the simulation ones with `--on sim`;
each backend ignores the others'."""

from __future__ import annotations

import click

from hpcscope.launch.backends import BACKENDS

# Counts of launches, ranks, nodes, repetitions: 0 or less is a mistake, never "default".
POSITIVE = click.IntRange(min=1)

COMMON_KEYS = ("mpi", "quick", "repeat", "out_dir", "label", "dry_run")


def common_run_options(fn):
    """Options every suite shares, then the SLURM and the simulation ones (listed in this
    order by --help)."""
    fn = sim_run_options(fn)
    fn = slurm_run_options(fn)
    for decorator in reversed(
        [
            click.option(
                "--mpi",
                default="all",
                show_default=True,
                help="MPI libraries: openmpi, mpich, auto, all, a comma list, or a path to mpicc.",
            ),
            click.option(
                "--quick", is_flag=True, help="Fewer repeats and iterations (a first look)."
            ),
            click.option(
                "--repeat",
                type=POSITIVE,
                default=None,
                help="Launches per configuration: separate mpirun executions (p2p: default 5, --quick 3; coll and lanes: 1).",
            ),
            click.option(
                "-o",
                "--out",
                "out_dir",
                type=click.Path(file_okay=False),
                default=None,
                help="Folder for figures and tables (default hpcscope-out/run-ID).",
            ),
            click.option(
                "--label", default=None, help="A name for this run, shown by list/report."
            ),
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
            click.option(
                "--on",
                "on",
                type=click.Choice(list(BACKENDS)),
                default="local",
                show_default=True,
                help="Where to run: "
                + "; ".join(f"{b.name}: {b.description}" for b in BACKENDS.values())
                + ".",
            ),
            click.option(
                "--nodes",
                type=POSITIVE,
                default=None,
                help="SLURM: nodes available to the plan (2 enables the node placement).",
            ),
            click.option(
                "--ntasks-per-node",
                type=POSITIVE,
                default=None,
                help="SLURM: MPI ranks per node for coll/lanes.",
            ),
            click.option("--partition", default=None, help="SLURM partition (sbatch --partition)."),
            click.option(
                "--time",
                default=None,
                help="Time limit of each job, in SLURM's forms: minutes or [D-]HH:MM:SS "
                "(default: the suite's, e.g. 1 h per coll job; --on sim 4 h). A job over "
                "it is killed, marked TIMEOUT, and its finished records are kept.",
            ),
            click.option("--account", default=None, help="SLURM account to charge."),
            click.option("--qos", default=None, help="SLURM quality of service."),
            click.option("--constraint", default=None, help="SLURM node features (--constraint)."),
            click.option(
                "--exclusive/--no-exclusive",
                default=True,
                show_default=True,
                help="SLURM: own the nodes (performance runs should).",
            ),
            click.option("--mail-type", default=None, help="SLURM notifications, e.g. END,FAIL."),
            click.option("--mail-user", default=None, help="Address for SLURM notifications."),
            click.option(
                "--module", multiple=True, help="`module load` this in the job (repeatable)."
            ),
            click.option(
                "--prelude", multiple=True, help="Shell line run before the benchmark (repeatable)."
            ),
            click.option(
                "--sbatch-arg", multiple=True, help="Extra sbatch option, e.g. --gres=gpu:1."
            ),
            click.option(
                "--launcher",
                type=click.Choice(["srun", "mpirun"]),
                default="srun",
                show_default=True,
                help="SLURM: start ranks with srun or the MPI's mpirun.",
            ),
            click.option(
                "--array-limit",
                type=POSITIVE,
                default=1,
                show_default=True,
                help="SLURM: repeats (array tasks) running at the same time.",
            ),
            click.option(
                "--slurm-dir",
                type=click.Path(file_okay=False),
                default=None,
                help="SLURM: run directory on a shared file system (default OUT/slurm).",
            ),
            click.option("--wait", is_flag=True, help="SLURM: wait for the jobs and collect them."),
            click.option(
                "--topology",
                "topology",
                type=click.Path(dir_okay=False),
                default=None,
                help="SLURM: plan for the compute nodes described by this hwloc XML (`lstopo "
                "--of xml` on a node) instead of probing them with a short job (cached; "
                "`hpcscope topo --on slurm` refreshes).",
            ),
            click.option(
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
            click.option(
                "--platform",
                default=None,
                help="sim: the simulated cluster: a preset (hydra, vsc3, jupiter; default "
                "hydra), a preset with changes (hydra:nodes=4,cores_per_socket=2) or a "
                "SimGrid platform .xml file. `hpcscope sim platforms` lists the presets.",
            ),
            click.option(
                "--ppn",
                type=int,
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
            click.option(
                "--ranks",
                type=POSITIVE,
                default=None,
                help="MPI ranks (default: the cores of this machine; on SLURM nodes x "
                "--ntasks-per-node).",
            ),
            click.option(
                "--node-size",
                type=POSITIVE,
                default=None,
                help="Emulate nodes of K consecutive ranks on one machine (sets "
                "LANECOLL_NODE_SIZE; such runs are marked as emulated).",
            ),
            click.option(
                "--repetitions",
                type=POSITIVE,
                default=None,
                help="Timed calls per count inside each launch (the paper's repetitions; default 100, --quick 20, --on sim 3). Not --repeat, which counts launches.",
            ),
            click.option(
                "--regular-only",
                is_flag=True,
                help="Refuse node sizes that do not divide the ranks.",
            ),
            click.option(
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
