"""One link or one node of the lab made bad on purpose (`lab up --degrade ...`), so that
`run links` and `run node --on lab` can be checked to name it.

    nK:laneL=RATE   lane L of node K at RATE (tc units) instead of the lab's rate: the tbf
                    on both ends of that node's cable (lab_net._degrade), so it sends and
                    receives at RATE: every pair with node K is slow on that lane
    nK:cpu=P%       node K's processes get P % of the CPU time the other nodes get

How the CPU limit works: the lab's nodes share this machine's CPUs, so a node can only be
slow relative to the others. Its processes join a cgroup of their own (the launch agent
and the per-node launches write their pid into it before anything starts, lab.py,
launcher.py) with two knobs:
  - a weight of P % of the default (cgroup v1 cpu.shares 1024 -> P% of it; v2 cpu.weight
    100 -> P% of it): when the CPUs are contended (every node measuring at once, or other
    work on the machine) the node gets P % of the CPU time of one other node's process;
  - a quota of P % of a node's fair share of the machine (CPUs / nodes; v1
    cpu.cfs_quota_us per cpu.cfs_period_us, v2 cpu.max): when they are not, it still
    gets no more than that.
The controller is cgroup v2's when its root offers `cpu` to its children, else cgroup
v1's `cpu` hierarchy (this project's VM: /sys/fs/cgroup/cpu, v1, with no controller in
the v2 tree); with neither, `--degrade nK:cpu=` is refused with the reason (exit 2).
A control file is written in place (O_WRONLY | O_NOFOLLOW, never created: the kernel
makes them with the folder); the folders are made by safe_write.ensure_dir and removed
by `lab down` (remove_cgroups) once the nodes' processes are killed.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.launch.base import BackendError

# A node's group is <root>/hpcscope-lab-<node>, right below the root: a weight counts
# against its siblings only, so a group inside a folder of ours would share the folder's
# default weight with nothing and not be slowed at all under contention.
GROUP = "hpcscope-lab"
PERIOD_US = 100_000
V1_SHARES, V2_WEIGHT = 1024, 100  # the kernel's defaults
MIN_QUOTA_US = 1000  # v1 and v2 refuse less
CGROUP_ROOT = Path("/sys/fs/cgroup")

_ITEM = re.compile(
    r"^(?:hpcs-)?n(\d+):(?:lane(\d+)=(\S+)|cpu=(\d+(?:\.\d+)?)%)$", re.IGNORECASE | re.ASCII
)


class DegradeError(BackendError):
    """A --degrade item that cannot be applied; the message names it and the fix."""


@dataclass(frozen=True)
class Degrade:
    node: int
    kind: str  # "lane" or "cpu"
    lane: int = 0
    rate: str | None = None
    cpu_percent: float = 0.0

    @property
    def text(self) -> str:
        if self.kind == "lane":
            return f"n{self.node}:lane{self.lane}={self.rate}"
        return f"n{self.node}:cpu={self.cpu_percent:g}%"


def parse(text: str, nodes: int, lanes: int) -> Degrade:
    match = _ITEM.match(text.strip())
    if not match:
        raise DegradeError(
            f"--degrade {text!r}: write nK:laneL=RATE (a lane of node K at RATE, e.g. "
            "n3:lane1=50mbit) or nK:cpu=P% (node K's CPU at P %, e.g. n2:cpu=50%)"
        )
    node = int(match.group(1))
    if not 1 <= node <= nodes:
        raise DegradeError(f"--degrade {text!r}: node n{node} is not one of n1..n{nodes}")
    if match.group(2) is not None:
        lane = int(match.group(2))
        if not 1 <= lane <= lanes:
            raise DegradeError(f"--degrade {text!r}: lane{lane} is not one of lane1..lane{lanes}")
        return Degrade(node, "lane", lane=lane, rate=match.group(3))
    percent = float(match.group(4))
    if not 0 < percent < 100:
        raise DegradeError(
            f"--degrade {text!r}: give a CPU share above 0 and below 100 %, e.g. cpu=50%"
        )
    return Degrade(node, "cpu", cpu_percent=percent)


def parse_all(items: list[str], nodes: int, lanes: int) -> list[Degrade]:
    """Each item parsed; one thing degraded once (a lane or a node's CPU named twice is
    refused: which value would count?)."""
    out: list[Degrade] = []
    seen: set[tuple] = set()
    for text in items:
        item = parse(text, nodes, lanes)
        key = (item.node, item.kind, item.lane)
        if key in seen:
            raise DegradeError(f"--degrade {text!r}: n{item.node} {item.kind} is degraded twice")
        seen.add(key)
        out.append(item)
    return out


# -- the CPU limit ----------------------------------------------------------------------


def controller() -> tuple[str, Path]:
    """("v2", folder) or ("v1", folder): where our group goes. DegradeError names what is
    missing when this kernel offers neither."""
    v2 = CGROUP_ROOT / "cgroup.controllers"
    if v2.exists():
        offered = (CGROUP_ROOT / "cgroup.subtree_control").read_text().split()
        if "cpu" in offered:
            return "v2", CGROUP_ROOT
    v1 = CGROUP_ROOT / "cpu"
    if (v1 / "cpu.cfs_quota_us").exists() and (v1 / "cpu.shares").exists():
        return "v1", v1
    raise DegradeError(
        "--degrade nK:cpu=P%: this kernel offers no cgroup CPU controller to write (no "
        f"`cpu` in {CGROUP_ROOT}/cgroup.subtree_control for cgroup v2, no {v1}/"
        "cpu.cfs_quota_us for cgroup v1); degrade a lane instead, or run on a host whose "
        "cgroup tree is writable"
    )


def cgroup_folder(node: str) -> Path:
    return controller()[1] / f"{GROUP}-{node}"


def quota_us(percent: float, nodes: int, cpus: int | None = None) -> int:
    """P % of one node's fair share of this machine's CPUs, per PERIOD_US."""
    share = (cpus or os.cpu_count() or 1) / max(nodes, 1)
    return max(MIN_QUOTA_US, round(percent / 100 * share * PERIOD_US))


def _write(path: Path, text: str) -> None:
    """A cgroup control file, written in place (it exists: the kernel made it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise DegradeError(
            f"--degrade: writing {text!r} to {path} failed ({exc.strerror}); the cgroup "
            "tree is not writable here: degrade a lane instead"
        ) from None


def limit_cpu(folder: Path, item: Degrade, nodes: int, mountpoint: Path) -> None:
    """The node's cgroup with its weight and quota, bind-mounted at `mountpoint` (below
    the lab's state folder): `ip netns exec` mounts a fresh /sys in the namespace, where
    /sys/fs/cgroup is not, so the launch agent inside node 1's namespace joins a remote
    node's group through /run."""
    version, root = controller()
    try:
        safe_write.ensure_dir(root, folder.relative_to(root))
    except OSError as exc:
        raise DegradeError(
            f"--degrade {item.text}: cannot make the cgroup {folder} ({exc}); degrade a "
            "lane instead"
        ) from None
    quota = quota_us(item.cpu_percent, nodes)
    if version == "v2":
        _write(folder / "cpu.weight", str(max(1, round(item.cpu_percent / 100 * V2_WEIGHT))))
        _write(folder / "cpu.max", f"{quota} {PERIOD_US}")
    else:
        _write(folder / "cpu.shares", str(max(2, round(item.cpu_percent / 100 * V1_SHARES))))
        _write(folder / "cpu.cfs_period_us", str(PERIOD_US))
        _write(folder / "cpu.cfs_quota_us", str(quota))
    try:
        subprocess.run(
            ["mount", "--bind", str(folder), str(mountpoint)],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        why = getattr(exc, "stderr", "") or str(exc)
        raise DegradeError(
            f"--degrade {item.text}: cannot bind-mount the cgroup {folder} at {mountpoint} "
            f"({why.strip()}); degrade a lane instead"
        ) from None


def procs_file(mountpoint: str | Path) -> str:
    """Where a process writes its pid to join the group (children follow it)."""
    return str(Path(mountpoint) / "cgroup.procs")


def remove_cgroups(cgroups: dict[str, str], mount_root: Path) -> None:
    """Unmounts and removes each node's group (its processes are gone: a cgroup folder
    with processes cannot be removed, and one left is harmless), then our folder."""
    for node, folder in cgroups.items():
        point = mount_root / node
        subprocess.run(["umount", str(point)], capture_output=True, timeout=30, check=False)
        for target in (point, Path(folder)):
            with contextlib.suppress(OSError):
                target.rmdir()
    with contextlib.suppress(OSError):
        mount_root.rmdir()


# -- what a run records -----------------------------------------------------------------


def facts(spec: Any, cgroups: dict[str, str]) -> list[dict[str, Any]]:
    """One dict per degraded thing with its words (`text`): the lab's state file, `lab
    status`, and every run's `lab_degrade` note."""
    out: list[dict[str, Any]] = []
    for item in parse_all(list(spec.degrade), spec.nodes, spec.lanes):
        node = f"hpcs-n{item.node}"
        if item.kind == "lane":
            out.append(
                {
                    "node": node,
                    "kind": "lane",
                    "lane": f"lane{item.lane}",
                    "rate": item.rate,
                    "lab_rate": spec.rate,
                    "text": (
                        f"{node} lane{item.lane} at {item.rate} (the other cables at "
                        f"{spec.rate}; tc tbf on both ends)"
                    ),
                }
            )
            continue
        folder = cgroups.get(node, "")
        cpus = os.cpu_count() or 1
        quota = quota_us(item.cpu_percent, spec.nodes, cpus)
        v1 = "/cpu/" in folder  # v1's hierarchy is mounted at <root>/cpu
        knobs = "v1 cpu.shares, cpu.cfs_quota_us" if v1 else "v2 cpu.weight, cpu.max"
        out.append(
            {
                "node": node,
                "kind": "cpu",
                "cpu_percent": item.cpu_percent,
                "quota_us": quota,
                "period_us": PERIOD_US,
                "cgroup": folder,
                "text": (
                    f"{node} CPU at {item.cpu_percent:g} % of another node's (cgroup {folder}"
                    f" [{knobs}]: weight {item.cpu_percent:g} % of the default; quota "
                    f"{quota / PERIOD_US:.3g} CPU = {item.cpu_percent:g} % of its fair share "
                    f"{cpus}/{spec.nodes} CPU)"
                ),
            }
        )
    return out
