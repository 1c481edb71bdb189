"""Run jobs in a simulated cluster: SimGrid SMPI (smpirun) on a platform model.

Blocking like the local backend and built on its launch loop (local.run_job): one job at a
time, records ingested line by line, a timeout kills the simulation's process group, a
failure or Ctrl-C keeps what was stored. What is different:

  - the run folder gets the platform (platform.xml) and every job its hostfile (one
    simulated host per rank, ranks consecutive over nodes, alternating over sockets);
  - the command line is smpirun's (launch/smpi_command.py), wrapped by child_usage.py so
    the simulation's own cost (wall time, CPU time, peak private memory and RSS) is
    recorded per launch as a note of kind "sim_cost" (docs/records.md section 6);
  - jobs and their records are tagged simulated=true and platform=<name>; the run gets a
    "banner" note (the report shows it as a label), a "platform" note with the model's
    parameters and their sources, and an "info" note per decomposition lanecoll saw.

Placement: every rank reports its simulated host (MPI_Get_processor_name), which the
placement check (launch/placement_check.py) compares with the planned host of that rank,
and coll's decomposition with the nodes those hosts form for lanecoll; the verdict says
that CPU binding is not checked (simulated ranks have no CPUs of this machine).

Times in these records are simulated seconds of the model, never hardware measurements.
Cost: one simulator process per launch holds every rank (about 2 MB per rank for the
benchmarks, plus buffers); the wall time grows with ranks x messages, not with simulated
time.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hpcscope import safe_write
from hpcscope.launch import child_usage, placement_check
from hpcscope.launch.base import JobState
from hpcscope.launch.local import LocalBackend, run_job
from hpcscope.launch.smpi_command import (
    NODE_NAME_SEP,
    SmpiOptions,
    default_overrides,
    options_for,
    privatize_lanecoll,
    smpirun_command,
)
from hpcscope.machine.sim_machine import SimMachine
from hpcscope.machine.sim_platform import PlatformError
from hpcscope.plan.job import Job
from hpcscope.results.store import Store


def machine_options(machine: SimMachine, program: str, **changes) -> SmpiOptions:
    """smpirun settings for `program` on `machine`: its SMPI factors, host-speed = the
    preset's core speed (one second of real compute is one simulated second), and
    liblanecoll privatized when the program links it."""
    changes = {
        **privatize_lanecoll(program),
        "lat_factor": machine.lat_factor,
        "bw_factor": machine.bw_factor,
        **changes,
    }
    spec = machine.spec
    return options_for(spec.core_speed, **changes) if spec else SmpiOptions(**changes)


def banner_text(machine: SimMachine, simgrid_version: str | None = None) -> str:
    which = f"SimGrid {simgrid_version}" if simgrid_version else "SimGrid"
    return f"simulated ({which}): times come from a model of {machine.label}, not from hardware"


def platform_text(machine: SimMachine, ppn: int) -> str:
    spec = machine.spec
    if spec is None:
        shape = f"{machine.nodes} nodes x {machine.cores_per_node} cores (lanes unknown)"
    else:
        shape = (
            f"{spec.nodes} nodes x {spec.sockets} sockets x {spec.cores_per_socket} cores, "
            f"{spec.lanes} lane(s) {spec.lane_placement} of {spec.lane_bandwidth / 1e9:g} GB/s "
            f"and {spec.lane_latency * 1e6:g} us, switch {spec.switch}"
        )
    return f"platform {machine.label}: {shape}; {ppn} ranks per node. Source: {machine.source}"


def _folder_name(job_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", job_name)


# What the sim's placement verdict cannot cover, said in every verdict.
NOT_CHECKED = (
    "CPU binding: simulated ranks are threads of one simulator process, without CPUs, "
    "cores, sockets or NUMA nodes of their own"
)


# Buffers of a job without validation at least this large are shared between the
# simulated ranks: one simulator process holds every rank's memory (full Hydra's lanes
# suite: 106 GB of own buffers), and SMPI times a message by its size, not its contents.
SHARED_MALLOC_BYTES = 1 << 20

# Suites whose simulated times are the network model's alone (smpi/simulate-computation:no).
# SMPI otherwise times the simulator's own CPU between two MPI calls of a rank and replays
# it on the simulated core. For coll and lanes that is bookkeeping (lanecoll's local work,
# reductions and copies, goes through MPI calls: PMPI_Reduce_local, datatypes, which are
# never timed), and at hundreds of ranks it measures the simulator instead: a lane
# allgather of 100 ints on 16 x 32 Hydra ranks took 165.2-166.6 us over 5 repetitions
# without, 249-3731 us with it (the 1152 rank stacks thrash this machine's caches, and
# other work on it is counted). p2p too: its loop has almost no code between calls, yet
# a preemption of the simulator there was replayed as well (a simulated 1.5 us lane read
# 1.7 us under a CI load of 10 on 2 cores, and a fitted bw-factor moved in its 6th digit).
NETWORK_ONLY_SUITES = ("p2p", "coll", "lanes", "links", "rma")


STALL = "Stalling SMPI instance"  # SimGrid's last words on a deadlocked simulation


class SimBackend(LocalBackend):
    """The Backend protocol (launch/base.py) on a simulated cluster. poll, wait, cancel and
    collect are the local backend's: everything is in the store when submit returns."""

    name = "sim"
    blocking = True

    def __init__(
        self,
        store: Store,
        workdir: Path,
        machine: SimMachine,
        ppn: int,
        on_job: Callable[[Job, JobState | None], None] | None = None,
        shared_malloc_threshold: int | None = None,
    ) -> None:
        """shared_malloc_threshold: every malloc of at least this many bytes is one
        memory shared by all ranks (SMPI shared malloc), for every job; None: only for
        jobs run with --validate=0, from SHARED_MALLOC_BYTES. Needed at paper scale (1152
        ranks x 2 x 46 MB of lane_pattern buffers would be 106 GB); buffer contents are
        then garbage, so the programs must run with --validate=0. Simulated times do not
        change: SMPI times a message by its size."""
        super().__init__(store, workdir, None, on_job)
        machine.check_ppn(ppn)
        self.machine = machine
        self.ppn = ppn
        self.shared_malloc_threshold = shared_malloc_threshold

    def submit(self, run_id: int, jobs: list[Job]) -> None:
        # <run folder>/sim and each job's folder in it: this user's own, never planted links
        safe_write.ensure_dir(self.workdir.parent, self.workdir.name)
        platform = self.workdir / "platform.xml"
        safe_write.write_text(platform, self.machine.xml)
        versions = sorted({job.mpi.version for job in jobs if job.mpi is not None})
        self.store.add_note(run_id, "banner", banner_text(self.machine, ", ".join(versions)))
        self.store.add_note(
            run_id,
            "platform",
            platform_text(self.machine, self.ppn),
            dict(self.machine.parameters(), ppn=self.ppn, file=str(platform)),
        )
        network_only = [job.name for job in jobs if job.suite in NETWORK_ONLY_SUITES]
        if network_only:
            self.store.add_note(
                run_id,
                "info",
                "simulated times are the network model's alone (smpi/simulate-computation:"
                "no): the simulator's own CPU time between MPI calls, which at hundreds of "
                "ranks measures cache misses and load of the machine running it, is not "
                "replayed; local work inside MPI calls (reductions, datatype packing) costs "
                "no simulated time either way",
                {"simulate_computation": False, "launches": network_only},
            )
        thresholds = {job.name: self._shared_threshold(job) for job in jobs}
        shared = [name for name, t in thresholds.items() if t is not None]
        if shared:
            threshold = thresholds[shared[0]]
            self.store.add_note(
                run_id,
                "info",
                f"{len(shared)} of {len(jobs)} launches run without validation, and their "
                f"buffers of {threshold} bytes or more are one memory shared by all simulated "
                "ranks (SMPI shared malloc): simulated times do not depend on their contents",
                {"shared_malloc_threshold": threshold, "launches": shared},
            )
        seen: set[tuple] = set()
        for job in jobs:
            self.on_job(job, None)
            state = self.run_one(run_id, job, platform)
            self._note_decomposition(run_id, job, seen)
            self.on_job(job, state)

    def command_line(self, job: Job, platform: Path, hostfile: Path) -> tuple[list[str], dict]:
        """(argv, env) of one simulated launch: smpirun inside the usage wrapper."""
        if job.mpi is None or job.mpi.flavor != "smpi":
            raise ValueError(
                f"{job.name}: the sim backend runs programs built with smpicc (--mpi smpi)"
            )
        program = job.program[0]
        # NTSLR allgather, basic linear gather only where this SimGrid's own mishandle
        # lanecoll's types (smpi_command.default_overrides)
        changes: dict = {"algorithm_overrides": default_overrides(job.mpi.version)}
        if job.suite in NETWORK_ONLY_SUITES:
            changes["simulate_computation"] = False
        threshold = self._shared_threshold(job)
        if threshold is not None:
            changes["shared_malloc_threshold"] = threshold
        options = machine_options(self.machine, program, **changes)
        cmd = smpirun_command(
            program,
            job.program[1:],
            platform=str(platform),
            hostfile=str(hostfile),
            np=job.ranks,
            options=options,
            smpirun=job.mpi.mpirun,
        )
        usage = hostfile.parent / "usage.json"
        # Run by path: the wrapper needs only the standard library, not hpcscope importable.
        wrapper = [sys.executable, str(Path(child_usage.__file__)), str(usage), "--"]
        return wrapper + cmd.argv, cmd.env

    def _shared_threshold(self, job: Job) -> int | None:
        """Shared-malloc threshold of a job: the constructor's, else SHARED_MALLOC_BYTES for
        a program run with --validate=0 (nothing reads its buffers' contents), else None."""
        if self.shared_malloc_threshold is not None:
            return self.shared_malloc_threshold
        return SHARED_MALLOC_BYTES if "--validate=0" in job.program[1:] else None

    def run_one(self, run_id: int, job: Job, platform: Path) -> JobState:
        folder = safe_write.ensure_dir(self.workdir, _folder_name(job.name))
        hostfile = folder / "hostfile"
        safe_write.write_text(hostfile, self.hostfile(job))
        usage = folder / "usage.json"
        usage.unlink(missing_ok=True)
        job = replace(job, tags=dict(job.tags, simulated=True, platform=self.machine.name))
        expected = placement_check.Expected(
            self.planned_hosts(job), NOT_CHECKED, node_sep=NODE_NAME_SEP
        )
        try:
            state = run_job(
                self.store,
                run_id,
                job,
                folder,
                None,
                self.command_line(job, platform, hostfile),
                expected,
            )
        finally:  # also after Ctrl-C: a killed simulation's cost is worth keeping
            self._note_cost(run_id, job, usage)
        return self._deadlock_failed(state)

    def _deadlock_failed(self, state: JobState) -> JobState:
        """A simulation SimGrid ended because every rank waited for a message no rank would
        send exits 0 like a finished one: mark it FAILED with the reason, keeping the
        records made before the deadlock (the counts after it are missing)."""
        if state.state != "COMPLETED" or STALL not in state.detail:
            return state
        detail = (
            'the simulation deadlocked: SimGrid stopped it ("Stalling SMPI instance": '
            "ranks wait for messages no rank sends, a defect of the simulated MPI or of the "
            "program); what was measured before is kept\n" + state.detail
        )
        self.store.finish_launch(int(state.backend_id), "FAILED", state.returncode, detail)
        return replace(state, state="FAILED", detail=detail)

    def planned_hosts(self, job: Job) -> list[str]:
        """The simulated host of every rank: consecutive over nodes, ppn per node; a
        two-rank p2p job by its placement tag instead: core = both on the first host, node
        = first host of two nodes. The placement check compares the ranks with this."""
        placement = job.tags.get("placement")
        if placement is not None:
            try:
                return list(self.machine.pair_hosts(str(placement)))
            except PlatformError as exc:
                raise ValueError(f"{job.name}: {exc}") from None
        if job.ranks % self.ppn:
            raise ValueError(f"{job.name}: {job.ranks} ranks are not a multiple of ppn {self.ppn}")
        return self.machine.rank_hosts(self.ppn, job.ranks // self.ppn)

    def hostfile(self, job: Job) -> str:
        """smpirun's hostfile: one line per rank, in rank order."""
        return "\n".join(self.planned_hosts(job)) + "\n"

    def _note_cost(self, run_id: int, job: Job, usage: Path) -> None:
        try:
            data = json.loads(usage.read_text())
        except (OSError, ValueError):
            return  # the wrapper did not finish (killed by SIGKILL): nothing measured
        data.update(launch=job.name, ranks=job.ranks, platform=self.machine.name)
        self.store.add_note(
            run_id,
            "sim_cost",
            f"{job.name}: simulating {job.ranks} ranks took {data['wall_time_s']:.1f} s wall, "
            f"{data['cpu_time_s']:.1f} s CPU, {data['peak_private_bytes'] / 2**20:.0f} MiB "
            f"peak private memory ({data['peak_rss_bytes'] / 2**20:.0f} MiB peak RSS, which "
            "counts shared-malloc blocks once per rank)",
            data,
        )

    def _note_decomposition(self, run_id: int, job: Job, seen: set[tuple]) -> None:
        """The node x lane decomposition lanecoll saw, once per distinct shape: from coll's
        'decomposition' summary, or from the lane benchmarks' sample params."""
        launches = self.store.launches(run_id)
        if not launches:
            return
        launch_id = launches[-1]["id"]
        found = [
            s
            for s in self.store.summaries(run_id)
            if s["launch_id"] == launch_id and s.get("metric") == "decomposition"
        ]
        if found:
            d = found[0]
            shape = (d.get("nodes"), d.get("ppn"), d.get("p"), d.get("regular"))
        else:
            params = [
                s["params"] for s in self.store.samples(run_id) if s["launch_id"] == launch_id
            ]
            if not params or "nodes" not in params[0]:
                return
            d = params[0]
            shape = (d.get("nodes"), d.get("ppn"), d.get("p"), d.get("regular", True))
        if shape in seen:
            return
        seen.add(shape)
        nodes, ppn, p, regular = shape
        self.store.add_note(
            run_id,
            "info",
            f"{job.suite}: lanecoll sees {nodes} nodes x {ppn} per node (p={p}"
            f"{'' if regular else ', irregular'}) on the simulated {self.machine.label}",
            {"nodes": nodes, "ppn": ppn, "p": p, "regular": regular, "launch": job.name},
        )

    def status_text(self, run_id: int) -> str:
        states = self.poll(run_id)
        done = sum(1 for s in states if s.state == "COMPLETED")
        return f"run {run_id}: {done} of {len(states)} launch(es) completed in simulation"
