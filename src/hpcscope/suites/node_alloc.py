"""The node suite over every node of an allocation at once (issue 45 part 3).

`run node --on lab` (every lab node) and `--on slurm --nodes N` (N >= 2: one allocation,
a job step per node, launch/slurm_script.every_node_lines) plan this instead of the one-node suite: our cpu and
mem programs, each one Job tagged `every_node`, which the backend runs on every node at
the same time (launch/every_node.py: one launch per node, tagged `node`), so that the
nodes are measured under the same conditions and can be compared with each other
(analysis/node_outliers.py flags the one that is slow).

What is measured per node, kept cheap (the lab's nodes share this machine's CPUs):
  - cpu: the core clock alone and under FP64 FMA load, FP64 FMA FLOP/s (--threads, on the
    lab 1 per node), repetitions of --seconds (0.2 s, 0.1 s with --quick);
  - mem: STREAM copy/scale/add/triad at the same threads, arrays of 128 MiB (64 MiB with
    --quick): long enough that one repetition spans many scheduler slices when the nodes
    share CPUs, so a repetition's rate is the node's share, not the luck of one slice.
No reference tools (likwid-bench, hpcc, fio, iperf3: one node's comparison, `run node`
on one node), no disk (the lab's nodes share one disk); the network between nodes is
`run links`' (the two-node test still runs with --net, as before).
"""

from __future__ import annotations

from pathlib import Path

from hpcscope import safe_write
from hpcscope.analysis import node_outliers
from hpcscope.plan.job import Job
from hpcscope.suites import node_net2, node_parts
from hpcscope.suites.base import Note, PlanContext, SuitePlan

ARRAY_BYTES = {True: 64 << 20, False: 128 << 20}  # by --quick
REPS = {True: 5, False: 7}
SECONDS = {True: 0.1, False: 0.2}


def plan(ctx: PlanContext, opts: dict, parts: dict[str, bool], quick: bool) -> SuitePlan:
    nodes = ctx.nodes_available
    out = SuitePlan()
    # the lab asks for 1 (backends: its nodes share this machine); else 1 and all cores
    cores = len(getattr(ctx.topology, "cores", None) or []) or 1
    threads = sorted({int(t) for t in opts.get("threads") or {1, cores}})
    tl = ",".join(map(str, threads))
    tags = {"suite": "node", "quick": quick, "every_node": True}
    if opts.get("shared_cpus"):  # the lab: every node runs on this machine's CPUs
        tags["shared_cpus"] = True

    def job(prog: str, args: list[str]) -> Job:
        return Job(
            suite="node",
            name=f"node/{prog}/every-node",
            program=[str(ctx.binary(prog, None)), *args],
            tags={**tags, "part": prog},
            timeout_s=300 + 60 * nodes,  # the nodes share the machine on the lab
            # SLURM: an allocation of every node, one task each (a step per node)
            nodes=nodes,
            ranks=nodes,
        )

    if parts["cpu"]:
        out.jobs.append(
            job(
                "cpu",
                [
                    "--kernels=clock,fp64",
                    f"--threads={tl}",
                    f"--seconds={SECONDS[quick]}",
                    f"--reps={REPS[quick]}",
                ],
            )
        )
    if parts["mem"]:
        out.jobs.append(
            job(
                "mem",
                [
                    "--tests=stream",
                    f"--threads={tl}",
                    f"--array-bytes={ARRAY_BYTES[quick]}",
                    f"--reps={REPS[quick] + 1}",
                ],
            )
        )
    measured = [p for p in ("cpu", "mem") if parts[p]]
    out.notes.append(
        Note(
            "info",
            f"every node at once: {', '.join(measured) or 'nothing'} on each of {nodes} "
            f"nodes at the same time, {tl} thread(s) per node; each rate is compared "
            "across the nodes (node outliers: median and MAD over the others)",
            {"every_node": nodes, "threads": threads, "parts": measured},
        )
    )
    named = not all(parts.values())  # the CLI turns every part on when none is named
    if parts["disk"] and named:
        out.notes.append(
            Note("skipped", "disk: not measured per node in an every-node run (run node --disk)")
        )
    if parts["net"] and named and nodes >= 2:  # asked for by name (--net), as before
        binary = str(ctx.binary("net", None))
        args = node_parts.net_args(node_parts.net_plan(opts, quick, 1))
        out.jobs.append(node_net2.slurm_job(binary, args, {"suite": "node", "quick": quick}))
        out.notes.append(
            Note(
                "info",
                "network: between the first two nodes only (every pair: hpcscope run links)",
            )
        )
    return out


def write_outputs(samples: list[dict], out_dir: Path) -> list[Path]:
    """node_outliers.csv (rate, unit, one column per node, '!' on an outlier) and
    node_outliers.json (the medians, the flags with their numbers and the rule) of an
    every-node run; nothing for a one-node run."""
    import csv
    import json

    found = node_outliers.analyse(samples)
    if found is None:
        return []
    table = out_dir / "node_outliers.csv"
    with safe_write.open_for_write(table, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["rate", "unit", *found.nodes])
        writer.writeheader()
        writer.writerows(node_outliers.table_rows(found))
    facts = out_dir / "node_outliers.json"
    safe_write.write_text(facts, json.dumps(found.to_dict(), indent=2) + "\n")
    return [table, facts]
