"""One node program on every node of an allocation at once (`run node --on lab`, issue 45
part 3): one process per node, all started together, each node's records stored as a
launch of its own tagged `node: <host>` (the same run), so the analysis
(analysis/node_outliers.py) can put the nodes side by side.

Each node's process starts through `argv_of(host)` (the lab: `ip netns exec NODE unshare
--uts`, joining the node's CPU cgroup first when it is degraded). Their outputs are read
while they run (small: a node program writes some kB) and stored one node after another
when all have ended, so only this thread writes the store. The time limit is the job's,
for all of them together; a node past it is killed (its process group and what runs in
its namespace) and its launch is TIMEOUT with the records it wrote. Each launch gets a
placement note: the host name the program reported against the planned node.
"""

from __future__ import annotations

import io
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from hpcscope.build import TreeGuard
from hpcscope.launch import command, placement_check
from hpcscope.launch.base import JobState, kill_namespaces
from hpcscope.launch.ingest import IngestResult, ingest_lines
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

NODE_TAG = "node"


@dataclass
class _Running:
    host: str
    argv: list[str]
    proc: subprocess.Popen
    out: bytearray = field(default_factory=bytearray)
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)


def _read(stream, sink: bytearray) -> None:
    for chunk in iter(lambda: stream.read(65536), b""):
        sink.extend(chunk)


def _tail(stream, sink: list[str], limit: int = 30) -> None:
    for raw in stream:
        sink.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
        del sink[:-limit]


def launch_name(job: Job, host: str) -> str:
    return f"{job.name}/{host}"


def run_at_once(
    store: Store,
    run_id: int,
    job: Job,
    hosts: Sequence[str],
    argv_of: Callable[[str], list[str]],
    not_checked: str = "",
) -> list[JobState]:
    """Runs job's program on every host at once; one JobState per host, in host order."""
    running: list[_Running] = []
    guards: list[TreeGuard] = []
    try:
        for host in hosts:
            argv = argv_of(host)
            proc = command.start(argv, dict(job.env))
            guards.append(TreeGuard(proc.pid, [host]))  # a killed hpcscope ends them too
            item = _Running(host, argv, proc)
            stdout = getattr(proc.stdout, "buffer", proc.stdout)
            stderr = getattr(proc.stderr, "buffer", proc.stderr)
            item.readers = [
                threading.Thread(target=_read, args=(stdout, item.out), daemon=True),
                threading.Thread(target=_tail, args=(stderr, item.err), daemon=True),
            ]
            for reader in item.readers:
                reader.start()
            running.append(item)
        deadline = time.monotonic() + job.timeout_s
        timed_out: set[str] = set()
        for item in running:
            try:
                item.proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                timed_out.add(item.host)
                command.kill_group(item.proc)
                kill_namespaces([item.host])
    except BaseException:  # Ctrl-C or a fault: no node goes on measuring
        for item in running:
            command.kill_group(item.proc)
        kill_namespaces(list(hosts))
        raise
    finally:
        for guard in guards:
            guard.release()
    states = []
    for item in running:
        for reader in item.readers:
            reader.join(timeout=5)
        states.append(_store(store, run_id, job, item, item.host in timed_out, not_checked))
    return states


def _store(
    store: Store, run_id: int, job: Job, item: _Running, timed_out: bool, not_checked: str
) -> JobState:
    return store_node_output(
        store,
        run_id,
        job,
        item.host,
        io.BytesIO(bytes(item.out)),
        None if timed_out else item.proc.returncode,
        [f"command: {subprocess.list2cmdline(item.argv)}"],
        item.err,
        timed_out,
        not_checked,
    )


def store_node_output(
    store: Store,
    run_id: int,
    job: Job,
    host: str,
    stream: IO[Any],
    returncode: int | None,
    head: list[str],
    stderr_tail: list[str],
    timed_out: bool = False,
    not_checked: str = "",
    placed_by: str = "",
) -> JobState:
    """One node's output as a launch of its own tagged `node: host`, with the placement
    note of its host name (the lab's run_at_once, SLURM's collection of an every-node
    task). `head`: the detail's first lines (the command, the SLURM state). `placed_by`:
    what else proved the node (SLURM: the step's SLURMD_NODENAME check), so a program
    reporting another host name is not a wrong placement."""
    name = launch_name(job, host)
    launch_id = store.add_launch(run_id, name, {**job.tags, NODE_TAG: host})
    program = job.program[0].rsplit("/", 1)[-1] if job.program else job.name
    result = IngestResult()
    ingest_lines(store, launch_id, stream, name, result, program=program)
    state = "TIMEOUT" if timed_out else "COMPLETED" if returncode == 0 else "FAILED"
    lines = list(head)
    if timed_out:
        lines.append(f"killed after the time limit of {job.timeout_s:.0f} s")
    lines += [f"benchmark error: {e}" for e in result.errors]
    lines += [f"malformed output: {p}" for p in result.problems[:5]]
    if stderr_tail:
        lines += ["stderr:"] + stderr_tail
    if state == "COMPLETED" and (result.errors or result.problems):
        state = "FAILED"
    if state == "COMPLETED":
        verdict = host_verdict(job, result.meta, host, not_checked, placed_by)
        placement_check.record(store, run_id, launch_id, name, verdict)
        if not verdict.ok:
            state = "FAILED"
            lines.insert(0, verdict.reason)
    detail = "\n".join(lines)
    store.finish_launch(launch_id, state, returncode, detail)
    return JobState(job, state, returncode, detail, str(launch_id))


def host_verdict(
    job: Job, meta: dict | None, host: str, not_checked: str, placed_by: str = ""
) -> placement_check.Verdict:
    """The program's own host name (its meta record) against the node planned for it."""
    ranks = (meta or {}).get("ranks") or []
    seen = ranks[0].get("host") if ranks and isinstance(ranks[0], dict) else None
    if seen != host and placed_by and seen:
        # SLURM: the step checked SLURM's node name; a fake node, or a NodeHostname that
        # is not the node name, reports another host name
        return placement_check.Verdict(
            "verified",
            "",
            "node",
            [],
            1,
            "node",
            placed_by,
            f"host name: the program reported {seen!r}, not the SLURM node name {host}",
        )
    if seen != host:
        reason = (
            f"the program reported host {seen!r} but was planned on {host}"
            if seen
            else f"the program wrote no host name (no meta record): not proven to run on {host}"
        )
        return placement_check.Verdict("wrong", reason, "node", [], 1, "", "host", not_checked)
    checked = "host" + (f", {placed_by}" if placed_by else "")
    return placement_check.Verdict("verified", "", "node", [], 1, "node", checked, not_checked)
