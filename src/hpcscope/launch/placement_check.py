"""The from-inside placement check every backend runs after an MPI launch (local and SLURM).

Each rank of our benchmarks reports where it ran (meta record, `ranks`: host, CPU set,
core, socket, NUMA node; bench/common/binding.c). This module compares that with what the
job asked for and writes the verdict as a run note of kind `placement` (docs/records.md,
section 6), which `show`, the report and the JSON export read:

    verified   every rank on its CPU, the class relation holds, and the node reports the
               sockets and NUMA nodes the planned topology gives those CPUs
    wrong      something differs; the launch is then marked FAILED with the reason
    reported   nothing was asked (placement `default`, rank layout `default`): the binding
               the launcher chose is recorded with the class it amounts to

Plain processes (node suite, reference tools) have no placement and get no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hpcscope.launch import launcher
from hpcscope.plan import placement as placement_mod
from hpcscope.plan.job import Job
from hpcscope.results.store import Store


@dataclass
class Verdict:
    verdict: str  # verified | wrong | reported
    reason: str  # why wrong; "" otherwise
    placement: str  # what was asked: class name, rank layout or "default"
    cpus: list[int]  # the CPU asked per rank ([] when nothing was asked)
    nodes: int
    observed: str  # the class the ranks' reported binding amounts to

    @property
    def ok(self) -> bool:
        return self.verdict != "wrong"

    def data(self, launch_id: int, launch: str) -> dict[str, Any]:
        return {
            "launch_id": launch_id,
            "launch": launch,
            "verdict": self.verdict,
            "reason": self.reason,
            "placement": self.placement,
            "cpus": self.cpus,
            "nodes": self.nodes,
            "observed": self.observed,
        }

    def text(self, launch: str) -> str:
        if self.verdict == "wrong":
            return f"{launch}: placement {self.placement} NOT as asked: {self.reason}"
        if self.verdict == "reported":
            return (
                f"{launch}: placement {self.placement} left to the launcher; the ranks ran "
                f"as class {self.observed}"
            )
        return f"{launch}: placement {self.placement} verified from inside"


def check(
    job: Job, meta: dict[str, Any] | None, topology, cpus_bound: bool = True
) -> Verdict | None:
    """The verdict for one finished launch; None for jobs without MPI ranks or without a
    meta record (the launch failed before saying where it ran). `cpus_bound` False: the
    launcher was not given the CPUs (SLURM --no-exclusive: SLURM picks the cores), so only
    the class the ranks ran as is compared with the class asked for."""
    if job.mpi is None or not meta:
        return None
    ranks = meta.get("ranks") or []
    observed = placement_mod.observed_relation(ranks)
    asked = launcher.job_placement(job)
    if not job.cpus:
        name = asked.name if (job.launcher_binding or "rank_layout" in job.tags) else "none"
        return Verdict("reported", "", name, [], job.nodes, observed)
    if not cpus_bound:
        if asked.name not in placement_mod.CLASSES:
            return Verdict("reported", "", asked.name, [], job.nodes, observed)
        if observed != asked.name:
            reason = (
                f"placement '{asked.name}' asked for {asked.name} but the ranks ran as "
                f"{observed} (CPUs chosen by SLURM without --exclusive); run with --exclusive"
            )
            return Verdict("wrong", reason, asked.name, [], job.nodes, observed)
        return Verdict("verified", "", asked.name, [], job.nodes, observed)
    try:
        placement_mod.verify_binding(asked, ranks, topology)
        placement_mod.verify_node_topology(list(job.cpus), ranks, topology)
    except placement_mod.PlacementError as exc:
        return Verdict("wrong", str(exc), asked.name, list(job.cpus), job.nodes, observed)
    return Verdict("verified", "", asked.name, list(job.cpus), job.nodes, observed)


def record(store: Store, run_id: int, launch_id: int, launch: str, verdict: Verdict) -> None:
    store.add_note(run_id, "placement", verdict.text(launch), verdict.data(launch_id, launch))
