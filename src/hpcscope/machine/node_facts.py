"""What the node suite's peaks read from a node, and where each fact came from.

The peaks (machine/peaks.py) need the CPU's identity, ISA flags and clock (/proc/cpuinfo),
the memory modules (`dmidecode -t memory`), the NICs' link speeds (/sys/class/net/*/speed)
and the disks' models (/sys/block/*/device/model). A local run reads them on this machine
(`local()`). A SLURM run must read them on a compute node, never on the login node:

- the topology probe job (launch/slurm_topology.py) runs PROBE_FACTS after lstopo on the
  node, and `parse_probe_output` splits its output into the XML and these facts, which are
  cached beside the XML (`to_json`/`from_json`);
- with `--topology FILE` only what the hwloc XML carries is known (`from_hwloc`: CPUVendor,
  CPUFamilyNumber, CPUModelNumber, CPUModel; no ISA flags, clock, memory or devices), unless
  a /proc/cpuinfo recorded on a compute node is given (`--cpuinfo FILE`, `with_cpuinfo`).

`cpu_origin` and `device_origin` say where the facts came from; every peak's source
carries them (peaks.compute_peaks), so a reader never mistakes one machine's facts for
another's. Unknown facts stay unknown (empty), and the peaks built on them say so.
"""

from __future__ import annotations

import glob
import os
import subprocess
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# Shell run on the compute node after lstopo (one probe job, no hpcscope needed there).
# HPCSCOPE_PROBE_CPUINFO is a test hook: scripts/slurm-local --node-cpuinfo exports it
# through its TaskProlog so fake nodes can report another CPU than this machine's, the
# way HWLOC_XMLFILE gives them another topology. Nothing else sets it.
SECTION = "#hpcscope-facts "
PROBE_FACTS = (
    # the node SLURM named (fake nodes of a test cluster share one host name), as
    # bench/common/binding.c does
    f"echo '{SECTION}host'; echo \"${{SLURMD_NODENAME:-$(hostname)}}\"; "
    f"echo '{SECTION}cpuinfo'; cat \"${{HPCSCOPE_PROBE_CPUINFO:-/proc/cpuinfo}}\"; "
    f"echo '{SECTION}dmidecode'; dmidecode -t memory 2>/dev/null; "
    f"echo '{SECTION}links'; for f in /sys/class/net/*/speed; do d=${{f%/speed}}; "
    'echo "${d##*/} $(cat "$f" 2>/dev/null)"; done; '
    f"echo '{SECTION}disks'; cat /sys/block/*/device/model 2>/dev/null; true"
)


@dataclass
class NodeFacts:
    cpuinfo_text: str  # /proc/cpuinfo, or lines made from hwloc infos (flags_known False)
    dmidecode_text: str | None  # None: not known for this node
    link_mbit: dict[str, int] = field(default_factory=dict)
    disk_model: str | None = None
    cpu_origin: str = "this machine (/proc/cpuinfo)"
    device_origin: str = "this machine (dmidecode, sysfs)"
    flags_known: bool = True  # False: the ISA flags of the CPU are not known

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NodeFacts:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _links(lines: list[tuple[str, str]]) -> dict[str, int]:
    """(interface, speed text) -> Mbit/s; an interface without a speed (down) is -1."""
    links = {}
    for name, text in lines:
        try:
            links[name] = int(text.strip() or -1)
        except ValueError:
            pass
    return links


def local() -> NodeFacts:
    """This machine's facts (cheap, never fails)."""
    dmi = None
    try:
        dmi = subprocess.run(
            ["dmidecode", "-t", "memory"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pass
    speeds = [(p.split("/")[4], _read(p)) for p in glob.glob("/sys/class/net/*/speed")]
    models = [_read(p).strip() for p in glob.glob("/sys/block/*/device/model")]
    return NodeFacts(
        _read("/proc/cpuinfo"),
        dmi,
        _links(speeds),
        ", ".join(m for m in models if m) or None,
        f"this machine ({os.uname().nodename}, /proc/cpuinfo)",
        f"this machine ({os.uname().nodename}: dmidecode, sysfs)",
    )


def parse_probe_output(text: str, where: str) -> tuple[str, NodeFacts | None]:
    """The probe job's stdout -> (hwloc XML, the node's facts); facts None when the output
    has no sections (an older probe). `where` says how the output was obtained."""
    head, marker, rest = text.partition(SECTION)
    if not marker:
        return text, None
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in (marker + rest).splitlines():
        if line.startswith(SECTION):
            current = sections.setdefault(line[len(SECTION) :].strip(), [])
        else:
            current.append(line)
    host = " ".join(sections.get("host", [])).strip() or "?"
    dmi = "\n".join(sections.get("dmidecode", []))
    pairs = [tuple((line.split(None, 1) + [""])[:2]) for line in sections.get("links", [])]
    models = [line.strip() for line in sections.get("disks", []) if line.strip()]
    facts = NodeFacts(
        "\n".join(sections.get("cpuinfo", [])) + "\n",
        dmi if dmi.strip() else None,
        _links([(a, b) for a, b in pairs if a]),
        ", ".join(models) or None,
        f"compute node {host} (/proc/cpuinfo, {where})",
        f"compute node {host} (dmidecode, sysfs; {where})",
    )
    return head, facts


def from_hwloc(topology: Any, where: str) -> NodeFacts:
    """What an hwloc XML says of the CPU (first package's infos) as cpuinfo lines; no flags,
    no clock (unless the model name states it), no memory or device facts. `where` names
    the XML (e.g. '--topology node.xml')."""
    package = topology.packages[0] if topology.packages else None
    lines = []
    if package is not None:
        for key, value in (
            ("vendor_id", package.vendor),
            ("cpu family", package.family),
            ("model", package.model_number),
            ("model name", package.model),
        ):
            if value not in ("", None):
                lines.append(f"{key}\t: {value}")
    known = ", ".join(line.split("\t")[0] for line in lines) or "nothing"
    return NodeFacts(
        "processor\t: 0\n" + "\n".join(lines) + "\n",
        None,
        {},
        None,
        f"{where} (hwloc infos: {known}; ISA flags and clock not recorded there: pass "
        "--cpuinfo FILE recorded on a compute node)",
        f"not known for the compute nodes ({where} has no memory, NIC or disk facts)",
        flags_known=False,
    )


def with_cpuinfo(facts: NodeFacts | None, path: str) -> NodeFacts:
    """`--cpuinfo FILE`: the CPU facts from a /proc/cpuinfo recorded on a compute node;
    memory and devices stay as they were known. Raises ValueError naming the file: one
    that is not a regular file of at most 16 MiB (input_file.read_text) or has no
    'processor' line. Its values are checked where they are read (peaks.parse_cpuinfo,
    strict: launch/slurm_topology.node_topology), so this module needs nothing of peaks."""
    from hpcscope.machine.input_file import InputFileError, read_text

    fix = "give a copy of /proc/cpuinfo made on a compute node (`srun cat /proc/cpuinfo > node.cpuinfo`)"
    try:
        text = read_text(path)
    except InputFileError as exc:
        raise ValueError(f"--cpuinfo {path}: {exc}; {fix}") from None
    if "processor" not in text:
        raise ValueError(f"--cpuinfo {path}: not a /proc/cpuinfo (no 'processor' line); {fix}")
    base = facts or NodeFacts("", None, {}, None, "", "not known for the compute nodes")
    return replace(base, cpuinfo_text=text, cpu_origin=f"--cpuinfo {path}", flags_known=True)
