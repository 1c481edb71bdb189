"""The MPI transport each launch ran with, as its benchmark read it (meta fields `mpi_t`
and `mpi_transport`, bench/common/transport_mpi.h; docs/records.md), in words, and the
protocol thresholds that may explain a step in a p2p curve.

Only recorded facts are used; nothing is inferred from the library's name:

- Open MPI: the PML in use is the one pml component open after MPI_Init
  (`components_open.pml`); the BTLs under ob1 likewise; `pml`, `btl`, `mtl` are what was
  requested (MCA settings, Debian's /etc/openmpi/openmpi-mca-params.conf included). An
  ob1 pair on one node is carried by the shared-memory BTL (vader, sm) where one is open
  (its exclusivity is above every network BTL's), otherwise by the open network BTLs; its
  protocol switch is `btl_<name>_eager_limit` (ob1 sends a message eagerly when it fits
  the eager limit with ob1's match header, so the switch lies between the last size below
  the limit and the limit itself).
- MPICH: the device is the "Device:" line of MPI_Get_library_version. MPICH lists the
  control variables of every device it knows (CH3 ones in a ch4 build), so a threshold
  counts only when its name belongs to the device that ran: on one node ch4's shared
  memory (names with CH4_SHM or POSIX), across nodes its netmod (CH4_OFI_ under ch4:ofi),
  CH3's for ch3. Negative values mean "the library's default" and are no threshold.
- UCX_RNDV_THRESH (environment of rank 0) where UCX carries the pair (Open MPI's pml ucx,
  MPICH ch4:ucx across nodes). Unset, UCX picks its own threshold: nothing to cite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hpcscope.formatting import format_bytes

SHARED_MEMORY_BTLS = ("vader", "sm", "smcuda")


@dataclass(frozen=True)
class Threshold:
    """One recorded protocol threshold: `bytes` from `name` = `raw` (source: MPI_T or the
    environment), described as `what` ("the eager limit of Open MPI's vader BTL")."""

    bytes: int
    name: str
    raw: str
    what: str
    source: str

    def cite(self) -> str:
        return f"{self.name} = {self.raw}"


def _facts(meta: Any) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """(mpi_t, mpi_transport, library) of a meta record, None where it has no transport
    record (older records, SimGrid, parsed tools) or a malformed one (imported files)."""
    if not isinstance(meta, Mapping):
        return None
    cvars, transport = meta.get("mpi_t"), meta.get("mpi_transport")
    if not isinstance(transport, Mapping):
        return None
    mpi = meta.get("mpi")
    library = str(mpi.get("library", "")) if isinstance(mpi, Mapping) else ""
    return (dict(cvars) if isinstance(cvars, Mapping) else {}), dict(transport), library


def _components(transport: Mapping[str, Any], framework: str) -> list[str]:
    comps = transport.get("components_open")
    if not isinstance(comps, Mapping):
        return []
    names = comps.get(framework)
    return [str(n) for n in names] if isinstance(names, list) else []


def same_node(meta: Any) -> bool | None:
    """Whether every rank of the launch ran on one host (meta `ranks`), None if unknown."""
    ranks = meta.get("ranks") if isinstance(meta, Mapping) else None
    if not isinstance(ranks, list) or not ranks:
        return None
    hosts = {r.get("host") for r in ranks if isinstance(r, Mapping)}
    return len(hosts) == 1 if hosts and None not in hosts else None


_UCX_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _ucx_bytes(text: str) -> int | None:
    """UCX's memory units ('8192', '8k', '8kb', '1M'); None for 'auto', 'inf' and others."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[bB]?\s*", text)
    return int(m.group(1)) * _UCX_UNITS[m.group(2).lower()] if m else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def thresholds(meta: Any) -> list[Threshold]:
    """The protocol thresholds of the transport that carried this launch's pair (module
    doc), from its recorded facts only; [] where none was recorded."""
    facts = _facts(meta)
    if facts is None:
        return []
    cvars, transport, library = facts
    local = same_node(meta)
    out: list[Threshold] = []
    pml = _components(transport, "pml")
    if "ob1" in pml:
        btls = [b for b in _components(transport, "btl") if b != "self"]
        shm = [b for b in btls if b in SHARED_MEMORY_BTLS]
        carriers = (shm or btls) if local else [b for b in btls if b not in SHARED_MEMORY_BTLS]
        for btl in carriers:
            name = f"btl_{btl}_eager_limit"
            value = _int(cvars.get(name))
            if value is not None and value > 0:
                what = f"the eager limit of {library or 'the MPI library'}'s {btl} BTL"
                out.append(Threshold(value, name, str(value), what, "MPI_T"))
    ucx = "ucx" in pml
    device = transport.get("device")
    if isinstance(device, str) and device:
        family, _, netmod = device.partition(":")
        if family == "ch4":
            ucx = ucx or (netmod == "ucx" and local is False)
            wanted = ("CH4_SHM", "POSIX") if local else (f"CH4_{netmod.upper()}_",)
        else:  # ch3: nemesis shared memory on one node, CH3 eager across nodes
            wanted = ("NEMESIS_SHM",) if local else ("CH3_",)
        for name, value in cvars.items():
            v = _int(value)
            if v is None or v <= 0 or "EAGER" not in name.upper():
                continue
            if any(w in name for w in wanted):
                what = f"the eager limit of {library or 'MPICH'}'s {device} device"
                out.append(Threshold(v, name, str(v), what, "MPI_T"))
    env = transport.get("env")
    rndv = env.get("UCX_RNDV_THRESH") if isinstance(env, Mapping) else None
    if ucx and isinstance(rndv, str) and _ucx_bytes(rndv) is not None:
        out.append(
            Threshold(
                int(_ucx_bytes(rndv) or 0),
                "UCX_RNDV_THRESH",
                rndv,
                "UCX's rendezvous threshold",
                "environment",
            )
        )
    return out


def explain_step(
    before_bytes: float, at_bytes: float, found: Sequence[Threshold]
) -> Threshold | None:
    """The recorded threshold within the step from `before_bytes` to `at_bytes` (both
    ends included: the switch happens between the two measured sizes), None if none."""
    lo, hi = sorted((before_bytes, at_bytes))
    inside = [t for t in found if lo <= t.bytes <= hi]
    return min(inside, key=lambda t: abs(t.bytes - hi)) if inside else None


def step_text(before_bytes: float, at_bytes: float, found: Sequence[Threshold] | None) -> str:
    """The cause of a bandwidth step from recorded thresholds, or 'not explained' and
    what to check. `found`: every threshold recorded for the curve; None when its
    launches recorded no transport (measured before hpcscope read it)."""
    hit = explain_step(before_bytes, at_bytes, found or [])
    if hit is not None:
        return (
            f"{hit.what} is {format_bytes(hit.bytes)} ({hit.cite()}): the step at "
            f"{format_bytes(at_bytes)} is the protocol switch"
        )
    if found is None:
        recorded = " (these launches recorded no MPI transport: measure again to record it)"
    elif found:
        recorded = f" (recorded: {', '.join(t.cite() for t in found)})"
    else:
        recorded = " (none recorded for this transport)"
    return (
        f"not explained: no recorded protocol threshold lies between "
        f"{format_bytes(before_bytes)} and {format_bytes(at_bytes)}{recorded}; check the "
        "library's eager limit (MPI_T control variables: ompi_info --all | grep eager, or "
        "MPICH's MPIR_CVAR_*EAGER*) and the caches the buffers outgrow"
    )


def curve_thresholds(
    samples: Iterable[dict], launches: Iterable[dict], label_of
) -> dict[str, list[Threshold]]:
    """{curve label: the thresholds recorded by its launches} (`label_of(sample)` names a
    sample's curve, analysis/p2p_curves.curve_label). A curve whose launches recorded no
    transport is absent; launches that recorded different values contribute each."""
    meta = {l["id"]: l.get("meta") for l in launches}
    out: dict[str, list[Threshold]] = {}
    seen: set[tuple[str, Any]] = set()
    for s in samples:
        lid = s.get("launch_id")
        if (label_of(s), lid) in seen or _facts(meta.get(lid)) is None:
            continue
        seen.add((label_of(s), lid))
        found = out.setdefault(label_of(s), [])
        found.extend(t for t in thresholds(meta[lid]) if t not in found)
    return out


# ------------------------------------------------------------------------ in words


def _requested(cvars: Mapping[str, Any], names: Sequence[str]) -> str:
    parts = [f"{n}={cvars[n] or '(default)'}" for n in names if isinstance(cvars.get(n), str)]
    return ", ".join(parts)


def _other_device(name: str, device: str) -> bool:
    """An MPICH control variable of a device (or ch4 netmod) other than the one that ran:
    CH3_/NEMESIS_ under ch4, CH4_ under ch3, CH4_OFI_ under ch4:ucx and CH4_UCX_ under
    ch4:ofi."""
    family, _, netmod = device.partition(":")
    if family == "ch4":
        if "_CH3_" in name or "_NEMESIS_" in name:
            return True
        other = {"ucx": "_CH4_OFI_", "ofi": "_CH4_UCX_"}.get(netmod)
        return other is not None and other in name
    if family == "ch3":
        return "_CH4_" in name
    return False


def facts_rows(meta: Any) -> list[tuple[str, str, str]]:
    """(fact, value, source) rows of one launch's transport: what the report's table and
    `show` print. [] without a transport record."""
    facts = _facts(meta)
    if facts is None:
        return []
    cvars, transport, _ = facts
    rows: list[tuple[str, str, str]] = []
    device = transport.get("device")
    if isinstance(device, str) and device:
        rows.append(("device", device, "MPI_Get_library_version"))
    pml = _components(transport, "pml")
    if pml:
        rows.append(("PML in use", ", ".join(pml), "MPI_T: pml components open after MPI_Init"))
    for fw, what in (("btl", "BTLs open"), ("mtl", "MTLs open")):
        names = _components(transport, fw)
        if names:
            rows.append((what, ", ".join(names), f"MPI_T: {fw} components open after MPI_Init"))
    asked = _requested(cvars, ("pml", "btl", "mtl")) or _requested(
        cvars, ("MPIR_CVAR_CH4_NETMOD", "MPIR_CVAR_CH4_SHM", "MPIR_CVAR_NEMESIS_NETMOD")
    )
    if asked:
        rows.append(("requested", asked, "MPI_T control variables (requests, not choices)"))
    others = 0
    for name, value in cvars.items():
        if name in ("pml", "btl", "mtl") or name.endswith(("_NETMOD", "CH4_SHM")):
            continue
        if isinstance(device, str) and _other_device(name, device):
            others += 1
            continue
        text = "(default)" if value == "" else str(value)  # an empty request: the default
        rows.append((name, text, "MPI_T control variable"))
    if others:
        rows.append(
            (
                "other devices",
                f"{others} variables of devices this launch did not use (not shown)",
                "MPI_T: MPICH lists every device's variables",
            )
        )
    env = transport.get("env")
    env = env if isinstance(env, Mapping) else {}
    for name, value in sorted(env.items()):
        rows.append((name, str(value), "environment of rank 0"))
    uses_ucx = "ucx" in pml or (isinstance(device, str) and device.endswith(":ucx"))
    if uses_ucx and "UCX_RNDV_THRESH" not in env:
        rows.append(("UCX_RNDV_THRESH", "unset: UCX picks its own threshold", "environment"))
    if transport.get("mpi_t_error"):
        rows.append(("MPI_T", str(transport["mpi_t_error"]), "bench/common/transport_mpi.c"))
    more = _int(transport.get("mpi_t_more"))
    if more:
        rows.append(("MPI_T", f"{more} more matching variables not recorded", "cap of 64"))
    return rows


def summary_line(meta: Any) -> str | None:
    """One line for `show`: the components in use, the requests and the thresholds."""
    rows = facts_rows(meta)
    if not rows:
        return None
    key = ("device", "PML in use", "BTLs open", "MTLs open", "requested")
    head = "; ".join(f"{fact} {value}" for fact, value, _ in rows if fact in key)
    limits = [
        f"{fact} {value}"
        for fact, value, _ in rows
        if fact not in key and re.search(r"eager_limit|EAGER|RNDV|single_copy", fact)
    ]
    return head + (f"; {', '.join(limits)}" if limits else "")


def by_library(launches: Iterable[dict]) -> list[tuple[str, dict, int]]:
    """Distinct transports over launches: (library label, one meta record, launches), in
    first-seen order. The label is the launch's mpi tag and version."""
    out: dict[str, tuple[str, dict, int]] = {}
    for l in launches:
        meta = l.get("meta")
        facts = _facts(meta)
        if facts is None or not isinstance(meta, dict):
            continue
        key = json.dumps([facts[0], facts[1]], sort_keys=True, default=str)
        tags = l.get("tags") or {}
        label = " ".join(
            str(x) for x in (tags.get("mpi") or facts[2], tags.get("mpi_version")) if x
        )
        before = out.get(label + key)
        out[label + key] = (label, meta, (before[2] if before else 0) + 1)
    return list(out.values())
