"""Where each launch's ranks ran, as proof: one line per launch class (like mpirun's
--display-map), for `show`, the report and the exports.

Inputs are what the store keeps: each launch's meta record (`ranks`: host, CPUs, core,
socket, NUMA node, read from inside every rank; docs/records.md section 2) and the run's
`placement` notes (the verdict of launch/placement_check.py, section 6). A class is the
launch tags without `repeat` and `mpi_version` (results/cells.config_tags): the launches
that repeat one configuration. Their bindings are listed once when they agree, each with
its count when they do not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpcscope.machine.topology import format_cpulist
from hpcscope.results.cells import config_tags

MAX_RANKS_SHOWN = 8  # a 72-rank coll launch: the first ranks, then a count; export has all


@dataclass
class ProofLine:
    label: str  # the launch class, e.g. "openmpi socket" or "openmpi ranks=8 rank_layout=alternate"
    launches: int
    verdicts: dict[str, int]  # verified / wrong / reported / not checked -> launches
    observed: dict[str, int]  # class the bindings amount to -> launches
    bindings: list[tuple[str, int]] = field(default_factory=list)  # text -> launches
    reasons: list[str] = field(default_factory=list)  # why a launch was wrong
    # what the verdicts compared (binding; host per rank on sim and lab) and what they
    # could not, so a host check never reads as a CPU check
    checked: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)

    def verdict_text(self) -> str:
        parts = [f"{v} {n}/{self.launches}" for v, n in self.verdicts.items()]
        if self.verdicts.get("reported"):
            parts.append("ran as " + ", ".join(f"{o} ({n})" for o, n in self.observed.items()))
        if self.checked and self.checked != ["binding"]:
            parts.append("checked: " + " | ".join(self.checked))
        if self.not_checked:
            parts.append("not checked: " + " | ".join(self.not_checked))
        return "; ".join(parts)

    def text(self) -> str:
        if len(self.bindings) == 1:
            where = self.bindings[0][0]
        else:
            where = " | ".join(f"{n}x: {b}" for b, n in self.bindings)
        return f"{self.label}: {self.verdict_text()}: {where}"


def verdicts_by_launch(notes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{launch name: the placement note's data}; the last note of a launch wins (a task
    collected again after an interrupted collection)."""
    return {
        str(n["data"].get("launch")): n["data"]
        for n in notes
        if n.get("kind") == "placement" and (n.get("data") or {}).get("launch")
    }


def rank_text(rank: dict[str, Any], detail: bool = True) -> str:
    """'rank 1 on n2 CPU 1 (socket 1, NUMA 1)'; several CPUs as a list ('CPUs 0-1'); a
    simulated rank has no CPUs ('rank 1 on n1-node'); a lab rank with a lane of its own
    names it ('rank 1 on lab2 CPUs 0-1 (lane lane2)'). detail=False: without the
    parenthesis ('rank 1 on n2 CPU 1')."""
    cpus = [int(c) for c in rank.get("cpus") or []]
    where = (
        f" CPU {cpus[0]}" if len(cpus) == 1 else (f" CPUs {format_cpulist(cpus)}" if cpus else "")
    )
    inside = ", ".join(
        f"{name} {rank[key]}"
        for key, name in (
            ("socket", "socket"),
            ("numa", "NUMA"),
            ("core", "core"),
            ("lane", "lane"),
        )
        if rank.get(key) is not None
    )
    return f"rank {rank.get('rank')} on {rank.get('host', '?')}{where}" + (
        f" ({inside})" if inside and detail else ""
    )


def binding_text(ranks: list[dict[str, Any]]) -> str:
    ordered = sorted(ranks, key=lambda r: int(r.get("rank", 0)))
    shown = [rank_text(r) for r in ordered[:MAX_RANKS_SHOWN]]
    if len(ordered) > MAX_RANKS_SHOWN:
        shown.append(f"... {len(ordered)} ranks in all")
    return ", ".join(shown) if shown else "no rank reported where it ran"


def tag_value(key: str, value: Any) -> str:
    """A launch tag's value in words: a flag that is on reads as its name ('emulated
    nodes'), one that is off or unset as '' (left out), a list as 'a, b'; so no Python
    value such as 'emulated_nodes=True' reaches the reader."""
    if value is True:
        return key.replace("_", " ")
    if value is None or value is False or value in ("", [], {}):
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def tag_pair(key: str, value: Any) -> str:
    """'ranks=2', 'emulated nodes' (a flag that is on), '' (off or unset)."""
    shown = tag_value(key, value)
    return shown if value is True or not shown else f"{key}={shown}"


def class_label(tags: dict[str, Any]) -> str:
    """'openmpi core', 'mpich, emulated nodes, node size 1, ranks 2': the launch class
    in words (tag_value)."""
    config = {k: v for k, v in config_tags(tags).items() if k != "mpi_version"}
    head = [str(config.pop(k)) for k in ("mpi", "placement") if k in config]
    rest = []
    for k, v in sorted(config.items()):
        shown = tag_value(k, v)
        if shown:
            rest.append(shown if v is True else f"{k.replace('_', ' ')} {shown}")
    return ", ".join(filter(None, [" ".join(head), *rest])) or "(no tags)"


def proof_lines(launches: list[dict[str, Any]], notes: list[dict[str, Any]]) -> list[ProofLine]:
    """One ProofLine per launch class of the MPI launches (those whose meta lists ranks
    with MPI), in order of first launch."""
    verdicts = verdicts_by_launch(notes)
    lines: dict[str, ProofLine] = {}
    for launch in launches:
        meta = launch.get("meta") or {}
        if not meta.get("mpi") or not meta.get("ranks"):
            continue  # plain processes and launches that never said where they ran
        label = class_label(launch.get("tags") or {})
        line = lines.setdefault(label, ProofLine(label, 0, {}, {}))
        line.launches += 1
        data = verdicts.get(launch["name"], {})
        verdict = data.get("verdict", "not checked")
        line.verdicts[verdict] = line.verdicts.get(verdict, 0) + 1
        if data.get("observed"):
            line.observed[data["observed"]] = line.observed.get(data["observed"], 0) + 1
        for key, seen in (("checked", line.checked), ("not_checked", line.not_checked)):
            if data.get(key) and data[key] not in seen:
                seen.append(data[key])
        if verdict == "wrong" and data.get("reason"):
            line.reasons.append(f"{launch['name']}: {data['reason']}")
        text = binding_text(meta["ranks"])
        for i, (known, n) in enumerate(line.bindings):
            if known == text:
                line.bindings[i] = (known, n + 1)
                break
        else:
            line.bindings.append((text, 1))
    return list(lines.values())


def launch_placement(launch: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> dict | None:
    """The verdict of one launch for the JSON export (None: not checked)."""
    data = verdicts.get(launch["name"])
    if not data:
        return None
    return {k: v for k, v in data.items() if k not in ("launch_id", "launch")}


def csv_verdict(data: dict[str, Any] | None) -> str:
    if not data:
        return ""
    verdict = str(data.get("verdict", ""))
    if verdict == "reported":
        return f"reported: ran as {data.get('observed')}"
    if data.get("not_checked"):
        return f"{verdict} ({data.get('checked')}; not checked: {data['not_checked']})"
    return verdict
