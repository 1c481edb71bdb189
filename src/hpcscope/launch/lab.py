"""Run MPI jobs on the lab: real nodes and lanes made of network namespaces (lab_net.py).

A blocking backend like `local` (one job at a time, records ingested as they arrive,
launch/local.run_job), with three differences:

- the command line is launcher.lab_argv: the launcher runs in node 1's namespace and
  reaches the other nodes through an agent script, each node with its own host name, so
  MPI and lanecoll see real nodes (no LANECOLL_NODE_SIZE);
- every launch is tagged `emulated: true` plus the lab's shape (lab_nodes, lab_lanes,
  lab_rate, lab_binding), and the bytes each lane carried during the launch (read from the
  fabric's veth counters before and after) are recorded with it (a `lab_traffic` note and
  the launch's detail). A multi-node job after which no byte crossed the lanes failed:
  its library used something else than the network;
- MPICH is probed once (a 2-node p2p exchange under a short time limit: UCX across
  namespaces may hang in MPI_Finalize); when the probe fails its jobs are stored as
  SKIPPED with the reason, never run over shared memory instead.

The run gets a `banner` note (an emulated cluster) and an `info` note with the
decomposition lanecoll saw. Every MPI launch gets a placement verdict (`expected`): each
rank's host name (its namespace's) against the planned node, with per-process lanes the
lane its wrapper gave it, and lanecoll's nodes; CPU binding only for pinned jobs (p2p
placements on this machine's CPUs), and the verdict says when it was not checked.

Nothing of a job outlives it in the lab's nodes: a launch that fails, times out or hangs,
Ctrl-C and any fault of the run kill what runs inside the node namespaces (remote
orteds, hydra proxies, ranks), and if hpcscope itself is killed (SIGKILL) a watcher
does (build.TreeGuard, given the nodes through run_job's `namespaces`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.build import TreeGuard
from hpcscope.launch import every_node, lab_degrade, lab_net, launcher, placement_check
from hpcscope.launch.base import JobState
from hpcscope.launch.command import kill_group, start
from hpcscope.launch.local import LocalBackend, run_job
from hpcscope.machine.mpi import launch_env
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

PROBE_TIMEOUT_S = 60.0
DESCRIPTION = "the lab's network-namespace nodes and lanes (hpcscope lab up)"


def make(ctx: Any) -> LabBackend:
    """The BACKENDS entry's factory (ctx: backends.BackendContext)."""
    return LabBackend(ctx.store, ctx.folder / "launch", ctx.topology, ctx.on_job)


def lab_nodes(options: dict[str, Any]) -> int:
    """Nodes a plan may span on the lab (the BACKENDS entry's `nodes`)."""
    return require_lab().spec.nodes


def plan_options(suite: str, kw: dict, opts: dict) -> tuple[dict, dict, None]:
    """links: one rank per node and lane where each process has its lane (per-process
    binding), else one per node (striped: every process uses every lane)."""
    if suite == "links":
        spec = require_lab().spec
        lanes = spec.lanes if spec.binding == "per-process" else 1
        opts = {**opts, "lanes_per_node": lanes, "nodes_share_cpus": True}
    return kw, opts, None


def require_lab() -> lab_net.LabState:
    state = lab_net.current()
    if state is None:
        raise lab_net.LabError(
            "the lab is not up: build it first, e.g. "
            "`sudo hpcscope lab up --nodes 4 --lanes 2 --rate 200mbit`"
        )
    return state


def lab_tags(spec: lab_net.LabSpec) -> dict[str, Any]:
    return {
        "emulated": True,
        "lab_nodes": spec.nodes,
        "lab_lanes": spec.lanes,
        "lab_rate": spec.rate,
        "lab_binding": spec.binding,
    }


def banner(spec: lab_net.LabSpec) -> str:
    cores = os.cpu_count() or 1
    return (
        "emulated cluster: network namespaces with rate-limited links "
        f"({spec.nodes} nodes, {spec.lanes} lane(s) of {spec.rate} each, tc tbf on both "
        f"ends, lane binding {spec.binding}); all nodes share this machine's {cores} "
        "CPU(s) and memory, so only the network numbers are those of a cluster"
    )


# The two-node network test on the lab: server in the first node's namespace on lane 1's
# address, client in the second's; veth lanes state no real speed (-1), the lab's rate is
# in the run's banner. The server ends on the client's quit message (--stop-server).
NET2_LAB = r"""
server=$1 client=$2 bin=$3 addr=$4; shift 4
ip netns exec "$server" "$bin" --role=server --host="$addr" --port=5301 >/dev/null & srv=$!
mbit=$(ip netns exec "$client" sh -c \
  '[ -e /sys/class/net/lane1/device ] && cat /sys/class/net/lane1/speed' 2>/dev/null) || mbit=-1
ip netns exec "$client" "$bin" --role=client --host="$addr" --port=5301 --connect-wait=20 \
  --stop-server --server-node="$server" --client-node="$client" --link-dev=lane1 \
  --link-mbit="${mbit:--1}" "$@"
rc=$?; kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; exit $rc
"""


def net2_argv(binary: str, args: list[str], server: str, client: str) -> list[str]:
    addr = lab_net.address(1, 1)  # the first node's address on lane 1
    return ["sh", "-c", NET2_LAB, "hpcscope-net2", server, client, binary, addr, *args]


def expected_places(
    job: Job, hosts: list[str], lanes: list[str], binding: str
) -> placement_check.Expected:
    """Where lab_argv puts each rank: blocks of ranks/nodes per node in host order, and with
    per-process binding local rank r on lane r mod L (LAB_LANE_WRAPPER)."""
    nodes = max(job.nodes, 1)
    per = max(job.ranks // nodes, 1)
    planned = [hosts[min(r // per, len(hosts) - 1)] for r in range(job.ranks)]
    per_process = binding == "per-process"
    unchecked = []
    if not job.cpus:
        unchecked.append(
            "CPU binding: the lab starts unpinned ranks with --bind-to none (its nodes share "
            "this machine's CPUs)"
        )
    if not per_process:
        unchecked.append(
            "lane per rank: striped binding lets every process use every lane (the "
            "lab_traffic note shows what each lane carried)"
        )
    return placement_check.Expected(
        planned,
        "; ".join(unchecked),
        [lanes[(r % per) % len(lanes)] for r in range(job.ranks)] if per_process else None,
    )


def format_traffic(per_lane: dict[str, int]) -> str:
    return ", ".join(f"{lane} {count / 1e6:.2f} MB" for lane, count in per_lane.items())


class LabBackend(LocalBackend):
    """The Backend protocol (launch/base.py) on the lab: blocking like LocalBackend, whose
    poll, cancel, wait and collect it keeps (records are stored as they arrive)."""

    name = "lab"

    def __init__(
        self,
        store: Store,
        workdir: Path,
        topology=None,
        on_job: Callable[[Job, JobState | None], None] | None = None,
    ) -> None:
        super().__init__(store, workdir, topology, on_job)
        self.lab = require_lab()
        self.probed: dict[str, str | None] = {}  # flavor -> None (works) or why not
        self.decomposition_noted = False

    @property
    def hosts(self) -> list[str]:
        return self.lab.spec.hosts

    @property
    def cgroup_procs(self) -> dict[str, str]:
        """node -> the cgroup.procs file its processes join (a CPU-degraded node)."""
        return {h: lab_net.cgroup_join(h) for h in self.lab.cgroups}

    @property
    def lanes(self) -> list[str]:
        return [lab_net.lane_if(l) for l in range(1, self.lab.spec.lanes + 1)]

    def submit(self, run_id: int, jobs: list[Job]) -> None:
        spec = self.lab.spec
        self.store.add_note(run_id, "banner", banner(spec), {"lab": asdict(spec)})
        # a link or node degraded on purpose (lab up --degrade): said in every run
        for fact in lab_degrade.facts(spec, self.lab.cgroups):
            self.store.add_note(run_id, "lab_degrade", f"degraded on purpose: {fact['text']}", fact)
        self.store.set_run_backend_data(run_id, {"lab": self.lab.to_json()})
        try:
            for job in jobs:
                self.on_job(job, None)
                self.on_job(job, self.run(run_id, job))
        except BaseException:
            # Ctrl-C or a fault (a full disk, a locked store, a bug): nothing of the job
            # may go on in the lab's nodes (remote orteds, hydra proxies, ranks).
            lab_net.kill_jobs(self.lab)
            raise

    def run(self, run_id: int, job: Job) -> JobState:
        job = replace(job, tags={**job.tags, **lab_tags(self.lab.spec)})
        if job.mpi is None and job.tags.get("net2"):
            return self._net2(run_id, job)
        if job.mpi is None and job.tags.get("every_node"):
            return self._every_node(run_id, job)
        if job.mpi is None:
            return self._skip(
                run_id,
                job,
                "the lab emulates a network; programs without MPI (the node suite) "
                "measure this machine: run them with --on local",
            )
        if job.mpi.flavor == "mpich":
            why = self._probe(job)
            if why:
                return self._skip(run_id, job, why)
        return self._launch(run_id, job)

    def _skip(self, run_id: int, job: Job, why: str) -> JobState:
        launch_id = self.store.add_launch(run_id, job.name, job.tags, status="SKIPPED")
        self.store.finish_launch(launch_id, "SKIPPED", None, f"skipped on the lab: {why}")
        self.store.add_note(run_id, "skipped", f"{job.name}: {why}", {"launch": job.name})
        return JobState(job, "SKIPPED", None, why, str(launch_id))

    def _launch(
        self,
        run_id: int,
        job: Job,
        workdir: Path | None = None,
        command_line: tuple[list[str], dict[str, str]] | None = None,
    ) -> JobState:
        workdir = workdir or self.workdir
        try:
            argv = (
                command_line[0]
                if command_line
                else launcher.lab_argv(
                    job,
                    workdir,
                    self.hosts,
                    self.lanes,
                    self.lab.spec.binding,
                    self.cgroup_procs,
                )
            )
        except ValueError as exc:
            return self._skip(run_id, job, str(exc))
        before = lab_net.lane_bytes(self.lab)
        state = run_job(
            self.store,
            run_id,
            job,
            workdir,
            self.topology,
            (
                argv,
                launch_env(job.mpi) if job.mpi else dict(command_line[1] if command_line else {}),
            ),
            expected_places(job, self.hosts, self.lanes, self.lab.spec.binding),
            # the lab's nodes hold the job's remote processes: they end with it, also when
            # hpcscope itself is killed (build.TreeGuard)
            namespaces=self.hosts,
            on_step=self.stepper(job),
        )
        if state.state != "COMPLETED":
            lab_net.kill_jobs(self.lab)  # orphans of a killed or failed launcher
        per_lane = lab_net.traffic(before, lab_net.lane_bytes(self.lab))
        launch_id = int(state.backend_id)
        text = f"lane traffic: {format_traffic(per_lane)}"
        if state.state == "COMPLETED" and job.nodes > 1 and sum(per_lane.values()) == 0:
            state.state = "FAILED"
            text = (
                "no byte crossed the lab's lanes although the job spans "
                f"{job.nodes} nodes: its MPI library did not use the network"
            )
        state.detail = text + "\n" + state.detail
        self.store.finish_launch(launch_id, state.state, state.returncode, state.detail)
        self.store.add_note(
            run_id,
            "lab_traffic",
            f"{job.name}: {format_traffic(per_lane)}",
            {"launch_id": launch_id, "launch": job.name, "lanes": per_lane},
        )
        if state.state == "COMPLETED" and not self.decomposition_noted:
            self._note_decomposition(run_id, launch_id, job)
        return state

    def _net2(self, run_id: int, job: Job) -> JobState:
        """The node suite's two-node network test (suites/node_net2.py) on the lab: the
        server in node 1's namespace, the client in node 2's, over lane 1; the lane check
        of _launch then proves that the bytes crossed the lab's links."""
        net2 = job.tags["net2"]
        hosts = self.hosts
        if len(hosts) < 2:
            return self._skip(run_id, job, "the network test needs 2 lab nodes")
        argv = net2_argv(net2["binary"], net2["args"], hosts[0], hosts[1])
        return self._launch(run_id, job, command_line=(argv, {}))

    def node_argv(self, host: str) -> list[str]:
        """A program in one node's namespace with the node's host name, in the node's CPU
        cgroup first when it is degraded (lab_degrade.py)."""
        procs = self.cgroup_procs.get(host)
        join = f'echo $$ >"{procs}" || exit 3; ' if procs else ""
        script = f'hostname "$0"; {join}exec "$@"'
        return ["ip", "netns", "exec", host, "unshare", "--uts", "sh", "-c", script, host]

    def _every_node(self, run_id: int, job: Job) -> JobState:
        """A node program on every lab node at once (issue 45 part 3, every_node.py): one
        launch per node, tagged with it. The JobState returned is the worst of them."""
        states = every_node.run_at_once(
            self.store,
            run_id,
            job,
            self.hosts,
            lambda host: self.node_argv(host) + list(job.program),
            not_checked="CPU binding: the lab's nodes share this machine's CPUs",
        )
        bad = [s for s in states if s.state != "COMPLETED"]
        if bad:
            lab_net.kill_jobs(self.lab)
        worst = bad[0] if bad else states[0]
        detail = "; ".join(f"{h}: {s.state}" for h, s in zip(self.hosts, states, strict=True))
        return JobState(job, worst.state, worst.returncode, detail, worst.backend_id)

    def _note_decomposition(self, run_id: int, launch_id: int, job: Job) -> None:
        """What lanecoll saw (the coll program's decomposition summary, or the nodes and ppn
        of a lanes sample): nodes come from the namespaces' host names."""
        found: dict[str, Any] | None = None
        most = -1  # coll --npmin adds one per rank count: the launch's is all its ranks'
        for s in self.store.summaries(run_id):
            if s.get("launch_id") == launch_id and s.get("metric") == "decomposition":
                if (s.get("p") or 0) >= most:
                    most = s.get("p") or 0
                    found = {k: s.get(k) for k in ("nodes", "ppn", "regular", "node_override")}
        if found is None:
            for s in self.store.samples(run_id):
                if s["launch_id"] == launch_id and "ppn" in s["params"]:
                    prm = s["params"]
                    found = {k: prm.get(k) for k in ("nodes", "ppn", "regular", "node_override")}
                    break
        if not found:
            return
        self.decomposition_noted = True
        hosts = ", ".join(self.hosts[: max(job.nodes, 1)])
        self.store.add_note(
            run_id,
            "info",
            f"lanecoll decomposition on the lab: {found['nodes']} node(s) x {found['ppn']} "
            f"process(es), nodes from the namespaces' host names ({hosts}); no "
            "LANECOLL_NODE_SIZE",
            {**found, "hosts": self.hosts[: max(job.nodes, 1)]},
        )

    def _probe(self, job: Job) -> str | None:
        """Once per MPI flavor: can it run a 2-node exchange on the lab and finish?"""
        assert job.mpi is not None
        flavor = job.mpi.flavor
        if flavor in self.probed:
            return self.probed[flavor]
        program = Path(job.program[0]).parent / "p2p"
        if not program.exists():
            self.probed[flavor] = None  # nothing to probe with: let the job tell
            return None
        probe = Job(
            suite="probe",
            name=f"{flavor}/lab-probe",
            program=[str(program), "--tests", "latency", "--max-size", "1024"]
            + ["--iterations", "20", "--warmup", "2"],
            mpi=job.mpi,
            ranks=2,
            nodes=2,
            timeout_s=PROBE_TIMEOUT_S,
        )
        folder = safe_write.ensure_dir(self.workdir.parent, f"{self.workdir.name}/probe")
        argv = launcher.lab_argv(probe, folder, self.hosts, self.lanes, self.lab.spec.binding)
        proc = start(argv, launch_env(job.mpi))
        try:
            with TreeGuard(proc.pid, self.hosts):  # a killed hpcscope ends the probe too
                out, err = proc.communicate(timeout=PROBE_TIMEOUT_S)
            ok = proc.returncode == 0 and '"type":"sample"' in out
            why = (
                None
                if ok
                else f"{job.mpi.label} failed a 2-node probe on the lab (exit "
                f"{proc.returncode}): {(err.strip().splitlines() or [''])[-1][:200]}"
            )
        except subprocess.TimeoutExpired:
            kill_group(proc)
            lab_net.kill_jobs(self.lab)
            why = (
                f"{job.mpi.label} did not finish a 2-node probe on the lab within "
                f"{PROBE_TIMEOUT_S:.0f} s (UCX across namespaces can hang in MPI_Finalize)"
            )
        except UnicodeDecodeError:
            kill_group(proc)
            lab_net.kill_jobs(self.lab)
            why = f"{job.mpi.label}'s 2-node probe on the lab wrote output that is not UTF-8"
        except BaseException:  # Ctrl-C or a fault: the probe ends with it
            kill_group(proc)
            lab_net.kill_jobs(self.lab)
            raise
        self.probed[flavor] = why
        return why

    def status_text(self, run_id: int) -> str:
        states = self.poll(run_id)
        done = sum(1 for s in states if s.state == "COMPLETED")
        return f"run {run_id}: {done} of {len(states)} launch(es) completed on the lab"
