"""The from-inside placement check every backend runs after an MPI launch.

Each rank of our benchmarks reports where it ran (meta record, `ranks`: host, CPU set,
core, socket, NUMA node; bench/common/binding.c). This module compares that with what the
job asked for and writes the verdict as a run note of kind `placement` (docs/records.md,
section 6), which `show`, the report and the JSON export read:

    verified   every rank on its CPU, the class relation holds, and the node reports the
               sockets and NUMA nodes the planned topology gives those CPUs
    wrong      something differs; the launch is then marked FAILED with the reason
    reported   nothing was asked (placement `default`, rank layout `default`): the binding
               the launcher chose is recorded with the class it amounts to

Local and SLURM launches are checked against the topology (CPUs, sockets, NUMA nodes).
Backends whose ranks have no CPUs of a planned node give an `Expected` instead: the sim
backend (a rank's place is its simulated host) and the lab (a rank's host is its
namespace's host name; with per-process lane binding, the lane its wrapper gave it). Then
each rank's reported host (and lane) is compared with the plan, and lanecoll's node
decomposition with the nodes the plan gives, and the verdict says what it could not
check (`not_checked`), so a host check is never passed off as a CPU check.

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
class Expected:
    """Where a backend without CPUs of a planned node put each rank (sim, lab)."""

    hosts: list[str]  # the planned host of every rank, in rank order
    not_checked: str  # what the backend cannot check (said in the verdict); "" if nothing
    lanes: list[str] | None = None  # the planned lane of every rank (lab, per-process)
    node_sep: str | None = None  # lanecoll's node = host name up to the last node_sep

    def node_of(self, host: str) -> str:
        return host.rsplit(self.node_sep, 1)[0] if self.node_sep else host


@dataclass
class Verdict:
    verdict: str  # verified | wrong | reported
    reason: str  # why wrong; "" otherwise
    placement: str  # what was asked: class name, rank layout or "default"
    cpus: list[int]  # the CPU asked per rank ([] when nothing was asked)
    nodes: int
    observed: str  # the class the ranks' reported binding amounts to
    checked: str = "binding"  # what was compared: binding (CPUs, class, topology) or hosts
    not_checked: str = ""  # what could not be checked on this backend, and why

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
            "checked": self.checked,
            "not_checked": self.not_checked,
        }

    def text(self, launch: str) -> str:
        if self.verdict == "wrong":
            return f"{launch}: placement {self.placement} NOT as asked: {self.reason}"
        if self.verdict == "reported":
            return (
                f"{launch}: placement {self.placement} left to the launcher; the ranks ran "
                f"as class {self.observed}"
            )
        caveat = f"; not checked: {self.not_checked}" if self.not_checked else ""
        return f"{launch}: placement {self.placement} verified from inside ({self.checked}){caveat}"


def check(
    job: Job,
    meta: dict[str, Any] | None,
    topology,
    cpus_bound: bool = True,
    expected: Expected | None = None,
    decomposition: dict[str, Any] | None = None,
) -> Verdict | None:
    """The verdict for one finished launch; None for jobs without MPI ranks or without a
    meta record (the launch failed before saying where it ran). `cpus_bound` False: the
    launcher was not given the CPUs (SLURM --no-exclusive: SLURM picks the cores), so only
    the class the ranks ran as is compared with the class asked for. `expected` (sim, lab):
    the planned host (and lane) per rank, checked first; `decomposition` is coll's
    summary of the nodes lanecoll saw. The CPU checks follow only for a pinned job with a
    topology (lab p2p placements on this machine's CPUs)."""
    if job.mpi is None or not meta:
        return None
    ranks = meta.get("ranks") or []
    observed = placement_mod.observed_relation(ranks)
    asked = launcher.job_placement(job)
    if expected is not None:
        checked = "host per rank" + (", lane per rank" if expected.lanes else "")
        if compares_decomposition(decomposition):
            checked += ", lanecoll's nodes"
        named = job.cpus or job.tags.get("placement") or "rank_layout" in job.tags
        name = asked.name if named else "none"
        cpus = list(job.cpus or [])
        problem = wrong_host(expected, ranks, decomposition)
        if problem:
            return Verdict(
                "wrong", problem, name, cpus, job.nodes, observed, checked, expected.not_checked
            )
        if topology is None or not job.cpus:
            return Verdict(
                "verified", "", name, cpus, job.nodes, observed, checked, expected.not_checked
            )
        found = check(job, meta, topology, cpus_bound)
        if found is not None:  # a pinned job: its CPUs are checked, the rest still is not
            found.checked = f"{checked}, binding"
            found.not_checked = expected.not_checked
        return found
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


def compares_decomposition(decomposition: dict[str, Any] | None) -> bool:
    """Whether lanecoll's nodes (coll's decomposition summary) are the planned ones to
    compare: not when LANECOLL_NODE_SIZE(S) emulated nodes on purpose. A name separator
    (LANECOLL_NODE_NAME_SEP, the sim's) is part of the plan: Expected.node_sep."""
    if not decomposition:
        return False
    return not str(decomposition.get("node_override") or "").startswith("LANECOLL_NODE_SIZE")


def wrong_host(
    expected: Expected, ranks: list[dict[str, Any]], decomposition: dict[str, Any] | None
) -> str:
    """Why the ranks did not run where `expected` planned them; "" when they did."""
    metas = sorted(ranks, key=lambda m: int(m.get("rank", 0)))
    if len(metas) != len(expected.hosts):
        return (
            f"{len(metas)} rank(s) reported where they ran but {len(expected.hosts)} were "
            "planned; the launcher started another number of ranks"
        )
    for want, meta in zip(expected.hosts, metas):
        if str(meta.get("host")) != want:
            return (
                f"rank {meta.get('rank')} ran on host {meta.get('host')} but the plan put it "
                f"on {want}; the launcher's host list (hostfile) differs from the plan"
            )
    for want, meta in zip(expected.lanes or [], metas):
        if meta.get("lane") != want:
            return (
                f"rank {meta.get('rank')} on {meta.get('host')} was given lane "
                f"{meta.get('lane') or '(none)'} but the plan gives it {want}; the lab's "
                "per-process lane wrapper did not run as planned"
            )
    if compares_decomposition(decomposition):
        assert decomposition is not None
        nodes = list(dict.fromkeys(expected.node_of(h) for h in expected.hosts))
        ppn = len(expected.hosts) // len(nodes)
        seen = (decomposition.get("nodes"), decomposition.get("ppn"))
        if seen != (len(nodes), ppn):
            return (
                f"lanecoll saw {seen[0]} node(s) x {seen[1]} process(es) but the plan has "
                f"{len(nodes)} x {ppn} ({', '.join(nodes[:4])}{', ...' if len(nodes) > 4 else ''}); "
                "lanecoll groups ranks by host name, so the host names do not form the "
                "planned nodes"
            )
    return ""


def record(store: Store, run_id: int, launch_id: int, launch: str, verdict: Verdict) -> None:
    store.add_note(run_id, "placement", verdict.text(launch), verdict.data(launch_id, launch))
