"""The simulated cluster of a `--on sim` run, from what the user wrote after `--platform`.

Three spellings:
  hydra                                   a preset of sim_platform.PRESETS
  hydra:nodes=4,cores_per_socket=2        a preset with some PlatformSpec fields changed
  cluster.xml                             a SimGrid platform file of the user's own

A preset gives everything (nodes, sockets, lanes, the sources of its numbers). A file
gives hosts only: its nodes are its host names up to the last '-' (the rule lanecoll
uses with LANECOLL_NODE_NAME_SEP='-', so n3-s0 and n3-s1 form node n3; a name without
'-' is a node of its own), in the order the file lists them; its lanes are unknown.
Every problem raises PlatformError naming the parameter, before anything runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

from hpcscope.machine.sim_platform import (
    NEUTRAL_FACTORS,
    PRESETS,
    PlatformError,
    PlatformSpec,
    load_platform_file,
    platform_xml,
    rank_hosts,
)

_INT_FIELDS = ("nodes", "sockets", "cores_per_socket", "lanes")
_TEXT_FIELDS = ("lane_placement", "switch", "lat_factor", "bw_factor", "slow_link", "slow_host")
_NOT_OVERRIDABLE = ("name", "source")


@dataclass(frozen=True)
class SimMachine:
    name: str  # the preset's name or the file's path
    label: str  # e.g. "hydra (nodes=4, cores_per_socket=2)"
    nodes: int
    cores_per_node: int
    hosts_per_node: int  # 2 on per-socket-lane platforms: every socket is a host
    lanes: int | None  # None: a user file does not say
    spec: PlatformSpec | None  # None for a user file
    xml: str
    node_hosts: tuple[tuple[str, ...], ...]  # host names of each node (file platforms)
    source: str  # where the numbers come from
    # SMPI's per-size factors (sim_platform.PlatformSpec.lat_factor); a file's <config>
    lat_factor: str = NEUTRAL_FACTORS
    bw_factor: str = NEUTRAL_FACTORS

    def check_ppn(self, ppn: int) -> None:
        """Raises PlatformError naming --ppn when ppn ranks cannot go on one node."""
        if not isinstance(ppn, int) or isinstance(ppn, bool) or ppn < 1:
            raise PlatformError(f"--ppn {ppn!r}: processes per node must be an integer >= 1")
        if ppn > self.cores_per_node:
            raise PlatformError(
                f"--ppn {ppn}: more ranks per node than the {self.cores_per_node} cores of a "
                f"{self.label} node; lower --ppn"
            )
        if ppn % self.hosts_per_node:
            raise PlatformError(
                f"--ppn {ppn} is not divisible by the {self.hosts_per_node} sockets of a "
                f"{self.label} node: per-socket lanes need the same number of ranks on "
                f"every socket; use a multiple of {self.hosts_per_node}"
            )

    def rank_hosts(self, ppn: int, nodes: int | None = None) -> list[str]:
        """The simulated host of every rank: consecutive over nodes, alternating over a
        node's sockets (the paper's pinning)."""
        self.check_ppn(ppn)
        nodes = self.nodes if nodes is None else nodes
        if not 1 <= nodes <= self.nodes:
            raise PlatformError(f"nodes={nodes}: {self.label} has {self.nodes} node(s)")
        if self.spec is not None:
            return rank_hosts(self.spec.with_(nodes=nodes), ppn)
        return [hosts[i % len(hosts)] for hosts in self.node_hosts[:nodes] for i in range(ppn)]

    def pair_hosts(self, placement: str) -> tuple[str, str]:
        """The hosts of a two-rank p2p job: core = both on the first host (its loopback
        link), node = the first hosts of two nodes (one lane)."""
        first = self.node_hosts[0][0]
        if placement == "core":
            return first, first
        if placement == "node" and self.nodes > 1:
            return first, self.node_hosts[1][0]
        raise PlatformError(
            f"placement {placement!r} is not simulated on {self.label}: use core, or node "
            "on a platform of two or more nodes"
        )

    def hostfile(self, ppn: int, nodes: int | None = None) -> str:
        return "\n".join(self.rank_hosts(ppn, nodes)) + "\n"

    def parameters(self) -> dict[str, Any]:
        """What a run stores about the platform (a note's data)."""
        base: dict[str, Any] = {
            "platform": self.name,
            "label": self.label,
            "nodes": self.nodes,
            "cores_per_node": self.cores_per_node,
            "hosts_per_node": self.hosts_per_node,
            "lanes": self.lanes,
            "source": self.source,
            "lat_factor": self.lat_factor,
            "bw_factor": self.bw_factor,
        }
        if self.spec is not None:
            base["spec"] = {f.name: getattr(self.spec, f.name) for f in fields(self.spec)}
            base["degraded"] = self.spec.degraded_text()  # made bad on purpose (issue 45)
        return base


@functools.lru_cache(maxsize=8)  # planner, backend and CLI all ask; Hydra's XML is 0.7 MB
def resolve(value: str) -> SimMachine:
    """`--platform VALUE` -> SimMachine. Raises PlatformError."""
    text = (value or "").strip()
    if not text:
        raise PlatformError(
            f"--platform: give a preset ({', '.join(PRESETS)}), a preset with changes "
            "(hydra:nodes=4) or a SimGrid platform file"
        )
    name, _, changes = text.partition(":")
    if name in PRESETS:
        return from_spec(PRESETS[name], _overrides(name, changes))
    if text.endswith(".xml") or "/" in text:
        return from_file(text)
    raise PlatformError(
        f"--platform {text!r}: unknown preset; choose one of {', '.join(PRESETS)} "
        "(`hpcscope sim platforms` lists them) or give a SimGrid .xml file"
    )


def _overrides(name: str, changes: str) -> dict[str, Any]:
    allowed = [f.name for f in fields(PlatformSpec) if f.name not in _NOT_OVERRIDABLE]
    out: dict[str, Any] = {}
    for item in filter(None, (c.strip() for c in changes.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in allowed:
            raise PlatformError(
                f"--platform {name}:{changes}: {item!r} is not FIELD=VALUE with FIELD one of "
                f"{', '.join(allowed)}"
            )
        try:
            out[key] = (
                int(raw) if key in _INT_FIELDS else raw if key in _TEXT_FIELDS else float(raw)
            )
        except ValueError:
            raise PlatformError(
                f"--platform {name}:{changes}: {key}={raw!r} is not a number"
            ) from None
    return out


def from_spec(spec: PlatformSpec, changes: dict[str, Any] | None = None) -> SimMachine:
    changes = changes or {}
    spec = spec.with_(**changes)
    spec.validate()
    label = spec.name + (
        f" ({', '.join(f'{k}={v}' for k, v in changes.items())})" if changes else ""
    )
    source = spec.source + (
        f" Changed for this run: {', '.join(f'{k}={v}' for k, v in changes.items())}."
        if changes
        else ""
    )
    hosts = spec.hosts()
    per_node = spec.hosts_per_node
    return SimMachine(
        name=spec.name,
        label=label,
        nodes=spec.nodes,
        cores_per_node=spec.sockets * spec.cores_per_socket,
        hosts_per_node=per_node,
        lanes=spec.lanes,
        spec=spec,
        xml=platform_xml(spec),
        node_hosts=tuple(tuple(hosts[i : i + per_node]) for i in range(0, len(hosts), per_node)),
        source=source,
        lat_factor=spec.lat_factor,
        bw_factor=spec.bw_factor,
    )


def from_file(path: str) -> SimMachine:
    info = load_platform_file(path)
    groups: dict[str, list[str]] = {}
    for host in info.hosts:
        node = host.rsplit("-", 1)[0] if "-" in host else host
        groups.setdefault(node, []).append(host)
    shapes = {(len(h), tuple(info.hosts[x] for x in h)) for h in groups.values()}
    if len(shapes) != 1:
        raise PlatformError(
            f"{path}: nodes (host names up to the last '-') differ in hosts or cores; "
            "hpcscope places the same number of ranks on every node, so give every node "
            "the same hosts and cores"
        )
    ((per_node, cores),) = shapes
    xml = info.xml  # the text load_platform_file checked (a regular file, bounded)
    return SimMachine(
        name=path,
        label=path,
        nodes=len(groups),
        cores_per_node=sum(cores),
        hosts_per_node=per_node,
        lanes=None,
        spec=None,
        xml=xml,
        node_hosts=tuple(tuple(h) for h in groups.values()),
        source=f"user platform file {path} (lanes and link numbers as written there)",
        lat_factor=info.factors.get("smpi/lat-factor", NEUTRAL_FACTORS),
        bw_factor=info.factors.get("smpi/bw-factor", NEUTRAL_FACTORS),
    )
