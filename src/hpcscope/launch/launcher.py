"""Every launcher command line hpcscope composes: mpirun (Open MPI), mpiexec/mpirun (MPICH
hydra) and srun, for this machine and inside a SLURM allocation.

Backends own *where* a job runs; this module owns *how its ranks are started and bound*,
so that one placement gives the same binding whatever the backend:

    launcher_args   binding arguments for one placement (rankfile, -bind-to user, map_cpu)
    mpirun_argv     a job on this machine (local backend)
    lab_argv        a job across the lab's network namespaces (lab backend)
    slurm_argv      a job inside an allocation (srun, or mpirun inside the allocation)

A new launcher (e.g. SimGrid's smpirun) is one more function here.
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass, field
from pathlib import Path

from hpcscope import safe_write
from hpcscope.plan.job import Job
from hpcscope.plan.placement import Placement

FLAVORS: tuple[str, ...] = ("openmpi", "mpich", "srun")
SLURM_LAUNCHERS = ("srun", "mpirun")
# srun's PMI plugin per MPI library; overridable where a site builds Open MPI with PMI2.
SRUN_MPI = {"openmpi": "pmix", "mpich": "pmi2"}


@dataclass
class LaunchSpec:
    """Launcher arguments for one placement, plus files the launcher needs (Open MPI's rankfile).

    `files` maps a file name to its content; an argument refers to a file as "{name}"
    (e.g. "{rankfile}"). `materialize(dir)` writes the files and returns the arguments with
    the placeholders replaced by the paths, so planning stays free of file-system effects
    and the launch backend decides where run files live.
    """

    args: list[str]
    files: dict[str, str] = field(default_factory=dict)

    def materialize(self, directory: str | Path) -> list[str]:
        # <workdir>/<job>: made here, or this user's own folder already; never a planted
        # link (DIR/launch/openmpi_core_r1 -> elsewhere would put the rankfile there)
        directory = safe_write.ensure_dir(Path(directory).parent, Path(directory).name)
        args = list(self.args)
        for name, content in self.files.items():
            path = directory / name
            # a script the launcher executes (the lab's agent) is made executable
            perms = 0o755 if content.startswith("#!") else 0o666
            safe_write.write_text(path, content, perms=perms)
            args = [a.replace("{" + name + "}", str(path)) for a in args]
        return args


def launcher_args(
    flavor: str, placement: Placement, hostnames: list[str] | None = None
) -> LaunchSpec:
    """Binding arguments for `mpirun` (Open MPI), `mpiexec` (MPICH hydra) or `srun`.

    The rank count (-np / -n) is the caller's; these arguments only pin rank i to
    placement.cpus[i] and spread the ranks over placement.nodes nodes (ranks in blocks:
    rank 0 on the first host). `hostnames` names the nodes for Open MPI and MPICH (default:
    localhost); srun takes its nodes from the SLURM allocation, which must include the CPUs
    (e.g. an exclusive allocation), or SLURM refuses or remaps the binding.

    Open MPI: a rankfile with physical (OS) slot numbers. `--cpu-list 1,0 --bind-to
    cpu-list:ordered` was tried and does not keep the order in Open MPI 4.1.4.
    """
    if placement.skipped:
        raise ValueError(
            f"placement '{placement.name}' was skipped ({placement.skipped}): "
            "it has no CPUs to bind"
        )
    if flavor not in FLAVORS:
        raise ValueError(f"unknown launcher flavor {flavor!r}: valid are {', '.join(FLAVORS)}")
    nodes = max(placement.nodes, 1)
    ranks = placement.ranks
    if ranks % nodes:
        raise ValueError(
            f"placement '{placement.name}': {ranks} ranks do not divide evenly over {nodes} nodes"
        )
    per_node = ranks // nodes
    hosts = list(hostnames) if hostnames else []
    if flavor != "srun":
        if not hosts and nodes == 1:
            hosts = ["localhost"]
        if len(hosts) < nodes:
            raise ValueError(
                f"placement '{placement.name}' spans {nodes} nodes but "
                f"{len(hosts)} host name(s) were given: {hosts}"
            )
    node_cpus = [placement.cpus[n * per_node : (n + 1) * per_node] for n in range(nodes)]
    cpulist = ",".join(map(str, node_cpus[0]))

    if flavor == "openmpi":
        lines = [
            f"rank {r}={hosts[r // per_node]} slot={cpu}" for r, cpu in enumerate(placement.cpus)
        ]
        return LaunchSpec(
            args=["--rankfile", "{rankfile}", "--mca", "rmaps_rank_file_physical", "1"],
            files={"rankfile": "\n".join(lines) + "\n"},
        )

    # Hydra's user binding and srun's map_cpu give one list for the local ranks of every node.
    if any(c != node_cpus[0] for c in node_cpus):
        raise ValueError(
            f"placement '{placement.name}' uses different CPUs on different nodes; "
            f"{flavor} binds every node with the same list"
        )
    if flavor == "mpich":
        args = ["-bind-to", f"user:{cpulist}"]
        if nodes > 1:
            args = ["-hosts", ",".join(hosts[:nodes]), "-ppn", str(per_node)] + args
        return LaunchSpec(args=args)
    return LaunchSpec(
        args=[f"--nodes={nodes}", f"--ntasks-per-node={per_node}", f"--cpu-bind=map_cpu:{cpulist}"]
    )


def job_placement(job: Job) -> Placement:
    """The placement a pinned job asked for (its CPUs; the class name from its tags, or
    its rank layout for coll and lanes jobs)."""
    layout = job.tags.get("rank_layout")
    return Placement(
        name=str(job.tags.get("placement") or (f"rank layout {layout}" if layout else "cpus")),
        cpus=list(job.cpus or []),
        nodes=job.nodes,
        description="",
        skipped=None,
    )


def mpirun_argv(job: Job, workdir: Path) -> list[str]:
    """mpirun arguments for a local job. Pinned jobs use the placement module's launcher
    arguments (rankfile for Open MPI, -bind-to user for MPICH); others bind to cores."""
    mpi = job.mpi
    assert mpi is not None
    argv = [mpi.mpirun]
    if mpi.flavor == "openmpi":
        argv += ["-np", str(job.ranks)]
    else:
        argv += ["-n", str(job.ranks)]
    if job.cpus:
        spec = launcher_args(mpi.flavor, job_placement(job), [socket.gethostname()])
        argv += spec.materialize(workdir / job.name.replace("/", "_"))
    elif job.launcher_binding:  # placement `default`: mpirun binds as it does by itself
        if job.oversubscribe and mpi.flavor == "openmpi":
            argv.append("--oversubscribe")
    elif mpi.flavor == "openmpi":
        argv += (
            ["--oversubscribe", "--bind-to", "none"]
            if job.oversubscribe
            else ["--bind-to", "core", "--map-by", "core"]
        )
    else:
        argv += ["-bind-to", "none" if job.oversubscribe else "core"]
    return argv + job.program


def per_node(job: Job) -> int | None:
    """Ranks per node when they divide evenly over the job's nodes, else None."""
    return job.ranks // job.nodes if job.nodes and job.ranks % job.nodes == 0 else None


def _local_cpus(job: Job) -> list[int] | None:
    """CPUs of the ranks on one node (block distribution: node 0 holds ranks 0..k-1)."""
    if not job.cpus:
        return None
    node_ranks = per_node(job) or job.ranks
    return list(job.cpus[:node_ranks])


def slurm_argv(
    job: Job, how: str, *, exclusive: bool = True, srun_mpi: str | None = None
) -> list[str]:
    """Shell words that start the job's ranks inside a SLURM allocation, with `srun` or the
    MPI library's own mpirun (`how`); the program follows, every word shell-quoted."""
    q = shlex.quote
    node_ranks = per_node(job)
    cpus = _local_cpus(job) if exclusive else None
    if how == "mpirun" and job.mpi is not None:
        argv = [q(job.mpi.mpirun)]
        if job.mpi.flavor == "mpich":
            # Hydra starts its proxies with srun, which already carries the job's
            # environment; forwarding mpirun's own (-genvall, the default) would
            # overwrite what slurmstepd sets per node (SLURMD_NODENAME, SLURM_NODEID...).
            argv += ["-genvnone", "-n", str(job.ranks)]
            if node_ranks:
                argv += ["-ppn", str(node_ranks)]
            if cpus:
                argv += ["-bind-to", "user:" + ",".join(map(str, cpus))]
        else:
            argv += ["-np", str(job.ranks)]
            if cpus:
                # Written at run time: hostnames are only known inside the allocation.
                argv += ["--rankfile", '"$rankfile"', "--mca", "rmaps_rank_file_physical", "1"]
            elif node_ranks:
                argv += ["--map-by", f"ppr:{node_ranks}:node"]
            if job.oversubscribe:
                argv += ["--oversubscribe"]
        return argv + [q(a) for a in job.program]
    argv = ["srun"]
    if job.mpi is not None:
        argv.append("--mpi=" + (srun_mpi or SRUN_MPI.get(job.mpi.flavor, "pmix")))
    argv += [f"--nodes={job.nodes}", f"--ntasks={job.ranks}"]
    if job.mpi is None and job.ranks == 1:
        # A plain one-task step (the node programs, hpcc's own mpirun) gets one CPU by
        # default (cpus-per-task=1); these threaded programs need the node's CPUs.
        argv.append('--cpus-per-task="${SLURM_CPUS_ON_NODE:-1}"')
    if node_ranks:
        argv.append(f"--ntasks-per-node={node_ranks}")
    by_rank = _rank_cpus(job) if exclusive else None
    if by_rank:
        argv.append("--cpu-bind=none")
    elif cpus:
        argv.append("--cpu-bind=map_cpu:" + ",".join(map(str, cpus)))
    if job.oversubscribe:
        argv.append("--overcommit")
    argv.append("--kill-on-bad-exit=1")
    if by_rank:
        # map_cpu is indexed by the task's id on its node, so it cannot put rank 1 (alone
        # on node 2) on another CPU than rank 0 (alone on node 1). Bind by global rank
        # instead; exec keeps the PMI environment the MPI library needs.
        table = " ".join(map(str, by_rank))
        argv += [
            "bash",
            "-c",
            q(f'c=({table}); exec taskset -c "${{c[$SLURM_PROCID]}}" "$@"'),
            "hpcscope-bind",
        ]
    return argv + [q(a) for a in job.program]


def _rank_cpus(job: Job) -> list[int] | None:
    """The per-rank CPU list when nodes must bind their ranks to different CPUs."""
    node_ranks = per_node(job)
    if not job.cpus or not node_ranks or job.nodes < 2:
        return None
    slices = {tuple(job.cpus[i : i + node_ranks]) for i in range(0, len(job.cpus), node_ranks)}
    return list(job.cpus) if len(slices) > 1 else None


def rankfile_script(job: Job) -> list[str]:
    """Bash that writes an Open MPI rankfile from the allocation's hostnames, as a new
    file (`new` and noclobber: slurm_script.render)."""
    node_ranks = per_node(job) or job.ranks
    cpus = " ".join(str(c) for c in (job.cpus or []))
    return [
        'rankfile="$group/task-$task.rankfile"',
        'new "$rankfile"',
        'mapfile -t hosts < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
        f"cpus=({cpus})",
        f"for ((r = 0; r < {job.ranks}; r++)); do",
        f'  echo "rank $r=${{hosts[r / {node_ranks}]}} slot=${{cpus[r]}}"',
        'done >"$rankfile" || exit 2',
    ]


# -- the lab: nodes are network namespaces on this machine (launch/lab_net.py) -----------

LAB_AGENT = """#!/bin/sh
# hpcscope lab launch agent, used as ssh by mpirun (plm_rsh_agent) and by hydra
# (-launcher-exec): `agent [ssh options] HOST COMMAND...` runs COMMAND in the node's
# network namespace, in a private UTS namespace carrying the node's host name.
while [ $# -gt 0 ] && [ "${{1#-}}" != "$1" ]; do shift; done
host=$1; shift
case " {hosts} " in
*" $host "*) ;;
*) echo "hpcscope lab agent: $host is not a node of the lab ({hosts})" >&2; exit 255 ;;
esac
{join}exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
"""

LAB_LANE_WRAPPER = """#!/bin/sh
# hpcscope lab, per-process lanes: process r of a node uses lane r mod {count} only.
r=${{OMPI_COMM_WORLD_LOCAL_RANK:-${{MPI_LOCALRANKID:-0}}}}
lane=lane$(( r % {count} + 1 ))
export OMPI_MCA_btl_tcp_if_include=$lane UCX_NET_DEVICES=$lane HPCSCOPE_LAB_LANE=$lane
exec "$@"
"""


def _cgroup_join(cgroups: dict[str, str] | None) -> str:
    """The agent's lines that put a CPU-degraded node's processes into its cgroup
    (launch/lab_degrade.py) before anything of the job starts there."""
    if not cgroups:
        return ""
    cases = "".join(
        f'{host}) echo $$ >"{procs}" || exit 255 ;;\n' for host, procs in cgroups.items()
    )
    return f'case "$host" in\n{cases}esac\n'


def lab_argv(
    job: Job,
    workdir: Path,
    hosts: list[str],
    lanes: list[str],
    binding: str,
    cgroups: dict[str, str] | None = None,
) -> list[str]:
    """mpirun (Open MPI) or mpiexec (MPICH hydra) across the lab's node namespaces.

    The launcher itself runs in the first node's namespace with that node's host name
    (`ip netns exec NODE unshare --uts`); the other nodes are reached through an agent
    script that does the same per node (Open MPI's plm_rsh_agent, hydra's -launcher-exec).
    Ranks go in blocks of ranks/nodes per node. Transport: Open MPI ob1 with the TCP BTL on
    the lane interfaces (vader between the ranks of one node: they are one node), MPICH
    with UCX_TLS=tcp,self (UCX would otherwise take shared memory between namespaces of
    one machine and bypass the lanes). `binding`: "striped", every process may use every
    lane (the library stripes); "per-process", a wrapper gives process r of a node only
    lane r mod L (btl_tcp_if_include / UCX_NET_DEVICES). `cgroups`: node -> the
    cgroup.procs file a CPU-degraded node's processes join (lab up --degrade nK:cpu=P%).
    """
    mpi = job.mpi
    assert mpi is not None
    nodes = max(job.nodes, 1)
    if nodes > len(hosts):
        raise ValueError(f"{job.name} spans {nodes} nodes but the lab has {len(hosts)}")
    if job.ranks % nodes:
        raise ValueError(f"{job.name}: {job.ranks} ranks do not divide over {nodes} lab nodes")
    per = job.ranks // nodes
    used = hosts[:nodes]
    files = {"agent.sh": LAB_AGENT.format(hosts=" ".join(hosts), join=_cgroup_join(cgroups))}
    wrapper: list[str] = []
    if binding == "per-process":
        files["lanes.sh"] = LAB_LANE_WRAPPER.format(count=len(lanes))
        wrapper = ["{lanes.sh}"]
    argv = ["ip", "netns", "exec", used[0], "unshare", "--uts", "sh", "-c"]
    first = (cgroups or {}).get(used[0])
    join = f'echo $$ >"{first}" || exit 3; ' if first else ""
    argv += [f'hostname "$0"; {join}exec "$@"', used[0], mpi.mpirun]
    if mpi.flavor == "openmpi":
        files["hostfile"] = "".join(f"{h} slots={per}\n" for h in used)
        argv += ["-np", str(job.ranks), "--hostfile", "{hostfile}"]
        mca = {
            "plm_rsh_agent": "{agent.sh}",
            "plm_rsh_no_tree_spawn": "1",
            "pml": "ob1",
            "btl": "tcp,vader,self",
            "btl_tcp_if_include": ",".join(lanes),
            "oob_tcp_if_include": lanes[0],
            "mpi_yield_when_idle": "1",  # the nodes share this machine's cores
        }
        for key, value in mca.items():
            argv += ["--mca", key, value]
        if job.cpus:
            spec = launcher_args("openmpi", job_placement(job), used)
            argv += spec.args
            files.update(spec.files)
        else:
            argv += ["--bind-to", "none", "--map-by", f"ppr:{per}:node"]
            if job.oversubscribe:
                argv.append("--oversubscribe")
    else:
        argv += ["-launcher", "ssh", "-launcher-exec", "{agent.sh}"]
        argv += ["-hosts", ",".join(f"{h}:{per}" for h in used), "-n", str(job.ranks)]
        argv += ["-ppn", str(per), "-genv", "UCX_TLS", "tcp,self"]
        argv += ["-genv", "UCX_NET_DEVICES", ",".join(lanes)]
        argv += ["-bind-to", "none"]
        if job.cpus:
            # Hydra binds every node with one list, but the lab's nodes share this
            # machine's CPUs and a placement may give each node its own (p2p `node`).
            table = " ".join(map(str, job.cpus))
            wrapper = [
                "bash",
                "-c",
                f'c=({table}); exec taskset -c "${{c[$PMI_RANK]}}" "$@"',
                "hpcscope-bind",
            ] + wrapper
    spec = LaunchSpec(argv + wrapper + list(job.program), files)
    return spec.materialize(workdir / job.name.replace("/", "_"))
