"""The compute nodes' topology for SLURM plans: probed once, cached, or given as a file.

A SLURM run is planned for the nodes it will run on, not for the login node hpcscope
starts on (placements, CPU lists, oversubscription, peaks all read the Topology). Order:

1. `--topology FILE`: an hwloc XML the user recorded on a compute node (`lstopo --of xml`
   or `hpcscope topo --xml` there). No SLURM command is run for the topology itself.
2. The cache: one XML per (cluster, partition, constraint, node kinds sinfo reports),
   under <cache root>/slurm-topology (paths.cache_root: $HPCSCOPE_CACHE, else .cache in a
   checkout, else ~/.cache/hpcscope). The node kinds are part of the key, so nodes that
   change (another CPU, another layout in slurm.conf) are probed again by themselves.
3. A probe job: `srun -N1 -n1 [--exclusive] [--partition/--constraint/--account/--qos]
   lstopo-no-graphics --of xml` (or hwloc's library through Python) on one node of the
   partition. Costs one short job (and its queue wait); `hpcscope topo --on slurm` runs it
   again on purpose (refresh).

The probe job also prints the node's /proc/cpuinfo, `dmidecode -t memory`, NIC speeds and
disk models (machine/node_facts.PROBE_FACTS), cached beside the XML as <key>.facts.json:
the node suite's peaks come from the compute node too (a cache entry without them is
probed again). With --topology FILE the CPU facts are what the XML's hwloc infos say, or
a /proc/cpuinfo recorded on a node (--cpuinfo FILE); the peaks say which.

Before 2 and 3, sinfo lists the nodes of the partition (filtered by --constraint
features when the expression is a plain `a&b` or `a|b` list): nodes of different kinds
(CPUs, sockets:cores:threads) are refused with their names, because one plan cannot pin
ranks right on both. HWLOC_XMLFILE stays the low-level escape hatch for the local machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.launch.slurm import Runner, SlurmError, run_command
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.machine import hwloc_lib, node_facts
from hpcscope.machine.node_facts import NodeFacts
from hpcscope.machine.peaks import parse_cpuinfo
from hpcscope.machine.topology import Topology, TopologyError
from hpcscope.paths import cache_root

PROBE_TIMEOUT_S = 600.0  # queue wait plus lstopo; a busy partition: use --topology FILE
PROBE_TIME_LIMIT_MIN = 5
SINFO_NODES_FORMAT = "%N|%P|%c|%z|%f"
# One shell word for the node: hwloc's text-free lstopo where installed, else lstopo, else
# hwloc's library through machine/hwloc_lib.py (the nodes without the hwloc programs: it is
# found where the benchmark programs are, on the file system the cluster shares; this
# Python's path first, then the node's python3); then the facts the node suite's peaks
# need (after the XML, in marked sections).
_LIBRARY_SCRIPT = shlex.quote(str(Path(hwloc_lib.__file__).resolve()))
PROBE_COMMAND = (
    "if command -v lstopo-no-graphics >/dev/null; then lstopo-no-graphics --of xml; "
    "elif command -v lstopo >/dev/null; then lstopo --of xml; "
    f"elif {{ {shlex.quote(sys.executable)} -I {_LIBRARY_SCRIPT} || "
    f"python3 -I {_LIBRARY_SCRIPT}; }} 2>/dev/null; then :; "
    "else echo 'hpcscope topology probe: neither hwloc (lstopo) nor its library (through "
    "python3) works on this node' >&2; exit 127; fi || exit $?; " + node_facts.PROBE_FACTS
)


@dataclass
class NodeKind:
    """Nodes sinfo describes alike: same CPU count and sockets:cores:threads."""

    cpus: str
    layout: str  # S:C:T as sinfo's %z prints it
    nodes: list[str] = field(default_factory=list)
    features: set[str] = field(default_factory=set)

    def text(self) -> str:
        s, c, t = (self.layout.split(":") + ["?", "?", "?"])[:3]
        return (
            f"{','.join(self.nodes)} ({s} socket(s) x {c} core(s) x {t} thread(s), "
            f"{self.cpus} CPUs)"
        )


@dataclass
class NodeTopology:
    """The topology a SLURM plan uses and where it came from (stored as a run note)."""

    topology: Topology
    source: str  # "file", "cache" or "probe"
    path: str  # the file read or written
    sha256: str  # of the XML text: which topology exactly a plan used
    partition: str
    constraint: str
    kinds: list[NodeKind]
    facts: NodeFacts | None = None  # what the peaks read from the node; None: unknown

    def note(self) -> dict[str, Any]:
        return {
            "cpu_facts": self.facts.cpu_origin if self.facts else "",
            "device_facts": self.facts.device_origin if self.facts else "",
            "source": self.source,
            "path": self.path,
            "sha256": self.sha256,
            "partition": self.partition,
            "constraint": self.constraint,
            "summary": self.topology.summary(),
            "nodes": [n for k in self.kinds for n in k.nodes],
        }

    def text(self) -> str:
        where = f"partition {self.partition or '(default)'}" + (
            f", constraint {self.constraint}" if self.constraint else ""
        )
        how = {
            "file": f"from --topology {self.path}",
            "cache": f"cached probe {self.path} (refresh: hpcscope topo --on slurm)",
            "probe": f"probed with srun, cached in {self.path}",
        }[self.source]
        cpu = f"; CPU facts from {self.facts.cpu_origin}" if self.facts else ""
        return (
            f"compute nodes of {where}: {self.topology.summary()} ({how}; "
            f"sha256 {self.sha256[:12]}){cpu}"
        )


def parse_sinfo_nodes(
    text: str, partition: str | None, keep=lambda features: True
) -> tuple[str, dict[str, NodeKind]]:
    """sinfo -h -N -o '%N|%P|%c|%z|%f' -> (partition used, {S:C:T|CPUs: kind}) over the
    nodes whose features `keep` accepts. Without a partition the default one (marked '*')
    is used. A node appears once per partition."""
    default = ""
    rows: list[tuple[str, str, str, str, set[str]]] = []
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 5 or not parts[0]:
            continue
        node, part, cpus, layout, features = parts[:5]
        if part.endswith("*"):
            part = part[:-1]
            default = default or part
        feats = {f for f in features.split(",") if f and f != "(null)"}
        rows.append((node, part, cpus, layout, feats))
    chosen = partition or default
    kinds: dict[str, NodeKind] = {}
    for node, part, cpus, layout, feats in rows:
        if (chosen and part != chosen) or not keep(feats):
            continue
        kind = kinds.setdefault(f"{layout}|{cpus}", NodeKind(cpus, layout))
        if node not in kind.nodes:
            kind.nodes.append(node)
        kind.features |= feats
    return chosen, kinds


def _constraint_filter(constraint: str | None):
    """A predicate on a node's features for a plain `a`, `a&b` or `a|b` constraint; None
    for richer SLURM expressions (counts, brackets), which are then not filtered here."""
    if not constraint:
        return lambda feats: True
    if re.search(r"[\[\]()*!]", constraint) or ("&" in constraint and "|" in constraint):
        return None
    if "|" in constraint:
        wanted = {f.strip() for f in constraint.split("|")}
        return lambda feats: bool(wanted & feats)
    wanted = {f.strip() for f in constraint.split("&")}
    return lambda feats: wanted <= feats


def node_kinds(options: SlurmOptions, runner: Runner = run_command) -> tuple[str, list[NodeKind]]:
    """The node kinds of the chosen partition, restricted to the --constraint features when
    the expression is a plain list (richer ones: every node of the partition counts).
    Raises SlurmError for an unknown partition or when no node has the features."""
    proc = runner(["sinfo", "-h", "-N", "-o", SINFO_NODES_FORMAT], timeout=60.0)
    if proc.returncode != 0:
        raise SlurmError(f"sinfo failed ({proc.stderr.strip()}): check that `sinfo` works here")
    keep = _constraint_filter(options.constraint) or (lambda feats: True)
    partition, kinds = parse_sinfo_nodes(proc.stdout, options.partition)
    if options.partition and not kinds:
        raise SlurmError(
            f"partition {options.partition!r} has no nodes on this cluster "
            "(`sinfo -s` lists the partitions); pass --partition NAME"
        )
    partition, kinds = parse_sinfo_nodes(proc.stdout, options.partition, keep)
    if not kinds:
        raise SlurmError(
            f"no node of partition {partition!r} has the features --constraint "
            f"{options.constraint}: `sinfo -o '%N %f'` lists them"
        )
    return partition, list(kinds.values())


def check_one_kind(partition: str, kinds: list[NodeKind]) -> None:
    """Refuse a partition whose nodes differ: one plan pins ranks by one node's CPU numbers."""
    if len(kinds) > 1:
        listing = "; ".join(k.text() for k in kinds)
        raise SlurmError(
            f"partition {partition!r} has {len(kinds)} kinds of nodes: {listing}. One plan "
            "pins ranks by one node's CPU numbers: pick one kind with --constraint FEATURE "
            "or another --partition, or plan for one kind with --topology FILE and "
            "--sbatch-arg=--nodelist=NODES"
        )


def cache_dir() -> Path:
    return cache_root() / "slurm-topology"


def cache_key(options: SlurmOptions, partition: str, kinds: list[NodeKind]) -> str:
    """File stem for the cached XML: cluster (SLURM_CONF), partition, constraint and the
    node kinds, so that changed nodes are probed again."""
    described = json.dumps(
        {
            "conf": os.environ.get("SLURM_CONF", ""),
            "partition": partition,
            "constraint": options.constraint or "",
            "kinds": sorted(f"{k.layout}|{k.cpus}|{','.join(sorted(k.features))}" for k in kinds),
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(described.encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", partition or "default")
    return f"{safe}-{digest}"


def probe_argv(options: SlurmOptions) -> list[str]:
    argv = ["srun", "-N1", "-n1", f"--time={PROBE_TIME_LIMIT_MIN}", "--job-name=hpcscope-topology"]
    if options.exclusive:
        argv.append("--exclusive")  # the whole node: a cgroup would hide CPUs from lstopo
    for flag, value in (
        ("--partition", options.partition),
        ("--constraint", options.constraint),
        ("--account", options.account),
        ("--qos", options.qos),
    ):
        if value:
            argv.append(f"{flag}={value}")
    return argv + ["sh", "-c", PROBE_COMMAND]


def probe(options: SlurmOptions, runner: Runner = run_command) -> str:
    """Run the probe job; its stdout: the node's hwloc XML, then its facts' sections."""
    proc = runner(probe_argv(options), timeout=PROBE_TIMEOUT_S)
    if proc.returncode != 0 or "<topology" not in proc.stdout:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise SlurmError(
            f"the topology probe job (srun ... lstopo --of xml, or libhwloc) failed: {last}. "
            "Record the compute node's topology yourself (`lstopo --of xml > node.xml` on a node) and "
            "pass --topology node.xml"
        )
    return proc.stdout[proc.stdout.index("<?xml") if "<?xml" in proc.stdout else 0 :]


def read_file(path: str) -> Topology:
    """--topology FILE, or a refusal naming the file and the fix (exit 2)."""
    from hpcscope.machine.input_file import InputFileError, read_text

    fix = "give an hwloc XML written by `lstopo --of xml` (or `hpcscope topo --xml`) on a compute node"
    try:
        text = read_text(path)  # a regular file of at most 16 MiB
    except InputFileError as exc:
        raise TopologyError(f"--topology {path}: {exc}; {fix}") from None
    pus = len(re.findall(r"""type\s*=\s*["']PU["']""", text))
    if pus > MAX_NODE_PUS:
        raise TopologyError(
            f"--topology {path}: {pus} hardware threads (PU objects) in one node, more than "
            f"the {MAX_NODE_PUS} hpcscope plans for; {fix}"
        )
    try:
        return Topology.from_xml(text)
    except (ValueError, OverflowError) as exc:  # a number hwloc never writes
        raise TopologyError(
            f"--topology {path}: a value hwloc does not write ({exc}); {fix}"
        ) from None
    except TopologyError as exc:
        raise TopologyError(f"--topology {path}: {exc}; {fix}") from None


# Hardware threads of one node: the largest shared-memory machines have a few thousand;
# the parser relates every PU to its core and package by list scans (quadratic).
MAX_NODE_PUS = 16384


def node_topology(
    options: SlurmOptions,
    topology_file: str | None = None,
    refresh: bool = False,
    runner: Runner = run_command,
    cpuinfo_file: str | None = None,
) -> NodeTopology:
    """The compute nodes' topology and facts for a plan (module docstring: file, cache,
    probe). `cpuinfo_file` (--cpuinfo FILE) replaces the CPU facts, whatever the source."""
    found = _node_topology(options, topology_file, refresh, runner)
    if cpuinfo_file:
        try:
            found.facts = node_facts.with_cpuinfo(found.facts, cpuinfo_file)
        except ValueError as exc:
            raise TopologyError(str(exc)) from None
        try:
            parse_cpuinfo(found.facts.cpuinfo_text, strict=True)  # a value no CPU has
        except ValueError as exc:
            raise TopologyError(
                f"--cpuinfo {cpuinfo_file}: {exc}; give a copy of /proc/cpuinfo made on a "
                "compute node (`srun cat /proc/cpuinfo > node.cpuinfo`)"
            ) from None
    return found


def _node_topology(
    options: SlurmOptions, topology_file: str | None, refresh: bool, runner: Runner
) -> NodeTopology:
    if topology_file:
        topo = read_file(topology_file)
        return NodeTopology(
            topo,
            "file",
            str(topology_file),
            _sha(topo.xml),
            options.partition or "",
            options.constraint or "",
            [],
            node_facts.from_hwloc(topo, f"--topology {topology_file}"),
        )
    partition, kinds = node_kinds(options, runner)
    check_one_kind(partition, kinds)
    path = cache_dir() / f"{cache_key(options, partition, kinds)}.xml"
    facts_path = path.with_suffix(".facts.json")
    if path.exists() and facts_path.exists() and not refresh:
        try:
            topo = Topology.from_file(str(path))
            facts = NodeFacts.from_json(json.loads(facts_path.read_text(encoding="utf-8")))
            return NodeTopology(
                topo,
                "cache",
                str(path),
                _sha(topo.xml),
                partition,
                options.constraint or "",
                kinds,
                facts,
            )
        except (OSError, TopologyError, ValueError, TypeError):
            pass  # a damaged cache entry is probed again; so is one without the facts
    xml, probed = node_facts.parse_probe_output(
        probe(options, runner), f"topology probe job, cached in {facts_path}"
    )
    try:
        topo = Topology.from_xml(xml)
    except TopologyError as exc:
        raise SlurmError(
            f"the topology probe returned XML hpcscope cannot use ({exc}); pass --topology FILE"
        ) from None
    # the node's shell printed no sections: what the XML says, labelled as such
    facts = probed or node_facts.from_hwloc(topo, "the probed XML (the probe printed no cpuinfo)")
    safe_write.ensure_dir(path.parent)  # the cache's folder (the user's own)
    _write_atomic(path, xml)
    _write_atomic(facts_path, json.dumps(facts.to_json(), indent=1))
    return NodeTopology(
        topo, "probe", str(path), _sha(xml), partition, options.constraint or "", kinds, facts
    )


def _write_atomic(path: Path, text: str) -> None:
    safe_write.write_text(path, text)  # atomic: a concurrent plan never reads half a file


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
