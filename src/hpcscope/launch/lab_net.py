"""The lab's network: N nodes and L lanes on one machine, built from network namespaces.

    hpcs-n1 .. hpcs-nN   one namespace per node; interface `lane<l>` with 198.18.<l>.<n>/24
    hpcs-fabric          one bridge `br<l>` per lane; veth `n<n>l<l>` is node n's cable
                         on lane l (its other end is `lane<l>` inside hpcs-n<n>)

Every veth end carries a tbf qdisc at the lane rate (both directions are shaped: tbf shapes
egress only), burst 64kb, so ping-pong does not overshoot the rate (PLATFORM.md). Addresses
come from 198.18.0.0/15 (RFC 2544, benchmarking); no namespace has a default route, and the
host namespace gets nothing but the /run/netns entries and /etc/netns/<ns>/hosts (the file
`ip netns exec` bind-mounts over /etc/hosts, so the node names resolve inside the lab only).

Ours vs not ours: every namespace we make has its loopback's alias set to MARKER, and the
state file (a journal, written before each namespace is made) lists them. `up` refuses
names that exist and are neither; `down` removes both, so a crashed `up` is cleaned too.
Bad input (not root, missing tools, a name clash, a rate tc refuses) raises LabError with
what to do; whatever `up` made before the failure is removed first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.launch import lab_degrade
from hpcscope.launch.base import BackendError, kill_namespaces

PREFIX = "hpcs-"
FABRIC = PREFIX + "fabric"
MARKER = "hpcscope-lab"
BINDINGS = ("per-process", "striped")
BURST = "64kb"
MAX_NODES, MAX_LANES = 254, 32
NETNS_ETC = Path("/etc/netns")


class LabError(BackendError):
    """The lab cannot be built or used; the message names the problem and the fix."""


def state_dir() -> Path:
    return Path(os.environ.get("HPCSCOPE_LAB_DIR", "/run/hpcscope-lab"))


def state_path() -> Path:
    return state_dir() / "state.json"


_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps)\s*$", re.I)
_RATE_SCALE = {
    "bit": 1,
    "kbit": 1e3,
    "mbit": 1e6,
    "gbit": 1e9,
    "tbit": 1e12,
    "bps": 8,
    "kbps": 8e3,
    "mbps": 8e6,
    "gbps": 8e9,
}


def rate_bits(rate: str) -> float:
    """'200mbit' -> 2e8 bit/s (tc's units: bit, kbit, mbit, gbit; bps = bytes/s)."""
    match = _RATE.match(rate)
    if not match:
        raise LabError(
            f"rate {rate!r} is not a rate tc understands; write e.g. 200mbit, 1gbit or 500kbit"
        )
    bits = float(match.group(1)) * _RATE_SCALE[match.group(2).lower()]
    if bits <= 0:
        raise LabError(f"rate {rate!r} must be above zero")
    return bits


def node_name(n: int) -> str:
    return f"{PREFIX}n{n}"


def lane_if(lane: int) -> str:
    return f"lane{lane}"


def address(lane: int, node: int) -> str:
    return f"198.18.{lane}.{node}"


def subnet(lane: int) -> str:
    return f"198.18.{lane}.0/24"


@dataclass
class LabSpec:
    nodes: int
    lanes: int
    rate: str
    binding: str = "per-process"
    # one node or link made bad on purpose (lab_degrade.py): "n3:lane1=50mbit", "n2:cpu=50%"
    degrade: list[str] = field(default_factory=list)

    def check(self) -> None:
        if not 2 <= self.nodes <= MAX_NODES:
            raise LabError(f"--nodes {self.nodes}: give 2 to {MAX_NODES} nodes")
        if not 1 <= self.lanes <= MAX_LANES:
            raise LabError(f"--lanes {self.lanes}: give 1 to {MAX_LANES} lanes")
        if self.binding not in BINDINGS:
            raise LabError(f"--lane-binding {self.binding!r}: choose {' or '.join(BINDINGS)}")
        rate_bits(self.rate)
        for item in lab_degrade.parse_all(self.degrade, self.nodes, self.lanes):
            if item.rate is not None:
                rate_bits(item.rate)

    @property
    def hosts(self) -> list[str]:
        return [node_name(n) for n in range(1, self.nodes + 1)]

    def describe(self) -> str:
        text = (
            f"{self.nodes} nodes x {self.lanes} lane(s) at {self.rate} each, "
            f"lane binding {self.binding}"
        )
        return text + (f", degraded: {', '.join(self.degrade)}" if self.degrade else "")


@dataclass
class LabState:
    spec: LabSpec
    status: str = "building"  # building (a journal) or up
    namespaces: list[str] = field(default_factory=list)  # made by us, in order
    # node -> the cgroup folder limiting its CPU (--degrade nK:cpu=P%), journalled like
    # the namespaces so `down` removes a crashed `up`'s too
    cgroups: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": asdict(self.spec),
            "status": self.status,
            "namespaces": self.namespaces,
            "fabric": FABRIC,
            "hosts": self.spec.hosts,
            "addresses": {
                node_name(n): {lane_if(l): address(l, n) for l in range(1, self.spec.lanes + 1)}
                for n in range(1, self.spec.nodes + 1)
            },
            "rate_bits": rate_bits(self.spec.rate),
            "cgroups": self.cgroups,
            "degraded": lab_degrade.facts(self.spec, self.cgroups),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LabState:
        return cls(
            LabSpec(**data["spec"]),
            data.get("status", "building"),
            data["namespaces"],
            dict(data.get("cgroups") or {}),
        )


def load_state() -> LabState | None:
    try:
        return LabState.from_json(json.loads(state_path().read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save(state: LabState) -> None:
    path = state_path()
    safe_write.ensure_dir(path.parent)  # /run/hpcscope-lab or HPCSCOPE_LAB_DIR, as named
    safe_write.write_text(path, json.dumps(state.to_json(), indent=2) + "\n")


# -- commands ---------------------------------------------------------------------------


def _run(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except FileNotFoundError as exc:
        raise LabError(f"{what}: {argv[0]} not found (install iproute2)") from exc
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"{what}: `{' '.join(argv)}` did not finish in 30 s") from exc
    if done.returncode != 0:
        raise LabError(f"{what}: `{' '.join(argv)}` failed: {done.stderr.strip()}")
    return done.stdout


def namespaces() -> list[str]:
    """Names in `ip netns list` (first word of each line)."""
    out = _run(["ip", "netns", "list"], "listing network namespaces")
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _is_marked(ns: str) -> bool:
    done = subprocess.run(
        ["ip", "-n", ns, "-j", "link", "show", "dev", "lo"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        return False
    try:
        return any(link.get("ifalias") == MARKER for link in json.loads(done.stdout or "[]"))
    except ValueError:
        return False


def ours() -> list[str]:
    """Our namespaces that exist: listed in the state file or marked, with our prefix."""
    state = load_state()
    listed = set(state.namespaces) if state else set()
    return [ns for ns in namespaces() if ns in listed or (ns.startswith(PREFIX) and _is_marked(ns))]


def preflight() -> None:
    """Root, iproute2 with netns, tc and unshare; LabError otherwise."""
    if os.geteuid() != 0:
        raise LabError(
            "the lab needs root (network namespaces, veth, bridges, tc): run it with sudo"
        )
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("unshare", "util-linux")):
        if not shutil.which(tool):
            raise LabError(f"the lab needs `{tool}`: install {package}")
    if not Path("/proc/self/ns/net").exists():
        raise LabError("this kernel has no network namespaces (CONFIG_NET_NS)")
    namespaces()  # `ip netns` itself works


# -- up / down --------------------------------------------------------------------------


def lock_path() -> Path:
    return state_dir() / "lock"


@contextlib.contextmanager
def locked(on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """One `lab up` or `lab down` at a time on this machine: an exclusive flock on
    state_dir()/lock (opened with O_CREAT | O_NOFOLLOW, never truncated: safe_write.
    open_lock), held for the whole build or removal. Another holder makes this wait;
    `on_wait` gets one line naming it (its pid, written into the lock file) first."""
    safe_write.ensure_dir(state_dir())
    with safe_write.open_lock(lock_path()) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                try:
                    holder = lock_path().read_text().strip() or "pid not known"
                except OSError:
                    holder = "pid not known"
                on_wait(
                    f"another `hpcscope lab up` or `lab down` is at work ({holder}); "
                    "waiting for it to finish"
                )
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            os.ftruncate(lock.fileno(), 0)  # ours now: say who holds it
            lock.write(f"pid {os.getpid()}\n")
            lock.flush()
        except OSError:
            pass
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(lock.fileno(), 0)
            fcntl.flock(lock, fcntl.LOCK_UN)


def up(spec: LabSpec, on_wait: Callable[[str], None] | None = None) -> tuple[LabState, bool]:
    """Builds the lab; (state, False) when an identical lab was already up (idempotent).
    Under the lab's lock (locked): a second `lab up` at the same time waits, then finds
    this one's lab."""
    spec.check()
    preflight()
    with locked(on_wait):
        return _up(spec)


def _up(spec: LabSpec) -> tuple[LabState, bool]:
    state = load_state()
    if state and state.status == "up" and _intact(state):
        if state.spec == spec:
            return state, False
        raise LabError(
            f"a lab is already up ({state.spec.describe()}); run `hpcscope lab down` "
            "first to build a different one"
        )
    leftovers = ours()
    if leftovers:
        _down()  # a crashed or partial lab: start clean
    existing = set(namespaces())
    clash = [ns for ns in [FABRIC, *spec.hosts] if ns in existing]
    if clash:
        raise LabError(
            f"network namespace(s) {', '.join(clash)} exist and are not the lab's (no "
            f"{MARKER!r} mark); remove them (`ip netns del NAME`) or leave them and do not "
            "build the lab here"
        )
    state = LabState(spec)
    try:
        _build(state)
    except BaseException:
        _down()
        raise
    state.status = "up"
    _save(state)
    return state, True


def _new_namespace(state: LabState, ns: str) -> None:
    state.namespaces.append(ns)
    _save(state)  # journal first: a crash right after `add` still knows the name
    _run(["ip", "netns", "add", ns], f"creating namespace {ns}")
    _run(["ip", "-n", ns, "link", "set", "dev", "lo", "up"], f"bringing up lo in {ns}")
    _run(["ip", "-n", ns, "link", "set", "dev", "lo", "alias", MARKER], f"marking {ns}")
    for key in ("all", "default"):
        # Lanes answer for each other's addresses (per-process lanes, see lab.py); no IPv6,
        # so the lane counters hold only the jobs' traffic (no router solicitations).
        _sysctl(ns, f"net.ipv4.conf.{key}.rp_filter", "0")
        _sysctl(ns, f"net.ipv6.conf.{key}.disable_ipv6", "1")


def _sysctl(ns: str, key: str, value: str) -> None:
    _run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}"], f"setting {key} in {ns}")


def _shape(ns: str, dev: str, rate: str) -> None:
    try:
        _run(
            ["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate]
            + ["burst", BURST, "latency", "100ms"],
            f"rate-limiting {dev} in {ns}",
        )
    except LabError as exc:
        raise LabError(
            f"the kernel refused the rate {rate!r} (tc tbf on {dev}): {exc}; give a rate "
            "such as 200mbit (and check that the sch_tbf module is available)"
        ) from None


def _build(state: LabState) -> None:
    spec = state.spec
    _new_namespace(state, FABRIC)
    for lane in range(1, spec.lanes + 1):
        br = f"br{lane}"
        try:
            _run(["ip", "-n", FABRIC, "link", "add", br, "type", "bridge"], f"creating {br}")
        except LabError as exc:
            raise LabError(f"{exc}; this kernel needs bridge support (CONFIG_BRIDGE)") from None
        _run(["ip", "-n", FABRIC, "link", "set", br, "up"], f"bringing up {br}")
    hosts = _hosts_file(spec)
    for n in range(1, spec.nodes + 1):
        ns = node_name(n)
        _new_namespace(state, ns)
        etc = safe_write.ensure_dir(NETNS_ETC, ns)  # /etc/netns/<node>: never a planted link
        safe_write.write_text(etc / "hosts", hosts)
        for lane in range(1, spec.lanes + 1):
            cable, dev = f"n{n}l{lane}", lane_if(lane)
            _run(
                ["ip", "-n", FABRIC, "link", "add", cable, "type", "veth"]
                + ["peer", "name", dev, "netns", ns],
                f"creating the cable of {ns} on lane {lane}",
            )
            _run(
                ["ip", "-n", FABRIC, "link", "set", cable, "master", f"br{lane}", "up"],
                f"plugging {cable} into br{lane}",
            )
            _run(
                ["ip", "-n", ns, "addr", "add", f"{address(lane, n)}/24", "dev", dev],
                f"addressing {dev} in {ns}",
            )
            _run(["ip", "-n", ns, "link", "set", dev, "up"], f"bringing up {dev} in {ns}")
            _shape(FABRIC, cable, spec.rate)
            _shape(ns, dev, spec.rate)
    _degrade(state)


def _degrade(state: LabState) -> None:
    """The --degrade items: a lane's tbf at the lower rate on both ends of its cable, a
    node's CPU through a cgroup (lab_degrade.limit_cpu, journalled in the state first)."""
    for item in lab_degrade.parse_all(state.spec.degrade, state.spec.nodes, state.spec.lanes):
        ns = node_name(item.node)
        if item.kind == "lane":
            assert item.rate is not None
            _shape(FABRIC, f"n{item.node}l{item.lane}", item.rate)
            _shape(ns, lane_if(item.lane), item.rate)
        else:
            folder = lab_degrade.cgroup_folder(ns)
            state.cgroups[ns] = str(folder)
            _save(state)  # journal first, like a namespace
            point = safe_write.ensure_dir(state_dir(), f"cgroup/{ns}")
            lab_degrade.limit_cpu(folder, item, state.spec.nodes, point)


def cgroup_join(node: str) -> str:
    """The file a process writes its pid into to join a CPU-degraded node's cgroup: the
    group's bind mount below the state folder, visible inside the namespaces too."""
    return lab_degrade.procs_file(state_dir() / "cgroup" / node)


def _hosts_file(spec: LabSpec) -> str:
    """The lab's /etc/hosts (inside its namespaces only): a node's name is its lane-1
    address; `hpcs-nN-lL` names every lane address."""
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    for n in range(1, spec.nodes + 1):
        lines.append(f"{address(1, n)}\t{node_name(n)}")
        for lane in range(1, spec.lanes + 1):
            lines.append(f"{address(lane, n)}\t{node_name(n)}-l{lane}")
    return "\n".join(lines) + "\n"


def down(on_wait: Callable[[str], None] | None = None) -> list[str]:
    """Removes every namespace of the lab (listed or marked), their /etc/netns folders,
    the session folders Open MPI left for the lab's nodes and the state file; returns the
    namespaces removed. Processes still inside are killed (they can only be the lab's
    jobs). Under the lab's lock, like up."""
    with locked(on_wait):
        return _down()


def session_dirs() -> list[Path]:
    """Open MPI's session folders of the lab's nodes: ompi.<node>.<uid> in the temporary
    folder (mpirun and each orted make one under the host name they see, which on the lab
    is the node's). A launch that is killed never removes its own."""
    found: list[Path] = []
    uid = os.getuid()
    for tmp in {Path(tempfile.gettempdir()), Path("/tmp")}:
        try:
            entries = list(tmp.iterdir())
        except OSError:
            continue
        for entry in entries:
            match = re.fullmatch(rf"ompi\.{re.escape(PREFIX)}n\d+\.(\d+)", entry.name)
            if match and int(match.group(1)) == uid and entry.is_dir() and not entry.is_symlink():
                found.append(entry)
    return sorted(found)


def _down() -> list[str]:
    state = load_state()
    removed = []
    gone = ours()
    for ns in gone:
        _kill_inside(ns)
        _run(["ip", "netns", "del", ns], f"removing namespace {ns}")
        removed.append(ns)
    names = set(gone) | (set(state.namespaces) if state else set())
    for ns in names:
        shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)
    if NETNS_ETC.is_dir() and not any(NETNS_ETC.iterdir()):
        NETNS_ETC.rmdir()  # we made it: nothing else was there
    for folder in session_dirs():  # no job of the lab runs any more (killed above)
        shutil.rmtree(folder, ignore_errors=True)
    lab_degrade.remove_cgroups(state.cgroups if state else {}, state_dir() / "cgroup")
    state_path().unlink(missing_ok=True)
    return removed


def _kill_inside(ns: str) -> None:
    kill_namespaces([ns])


def kill_jobs(state: LabState) -> None:
    """Kills what still runs inside the node namespaces (after a failed or timed-out
    launch: remote orteds or hydra proxies the launcher's process group did not hold)."""
    for ns in state.spec.hosts:
        _kill_inside(ns)


def _intact(state: LabState) -> bool:
    existing = set(namespaces())
    return all(ns in existing for ns in state.namespaces)


# -- status and counters ----------------------------------------------------------------


def current() -> LabState | None:
    """The lab when it is up and intact, else None."""
    state = load_state()
    if state and state.status == "up" and _intact(state):
        return state
    return None


def lane_bytes(state: LabState) -> dict[str, dict[str, int]]:
    """Bytes each node sent on each lane so far: {"hpcs-n1": {"lane1": N, ...}}, read in
    one call from the fabric ends (a cable's rx is what its node transmitted)."""
    out = _run(["ip", "-n", FABRIC, "-s", "-j", "link", "show"], "reading lane counters")
    counts: dict[str, dict[str, int]] = {}
    for link in json.loads(out or "[]"):
        match = re.fullmatch(r"n(\d+)l(\d+)", link.get("ifname", ""))
        if not match:
            continue
        rx = link.get("stats64", {}).get("rx", {}).get("bytes", 0)
        counts.setdefault(node_name(int(match.group(1))), {})[lane_if(int(match.group(2)))] = rx
    return counts


def traffic(before: dict, after: dict) -> dict[str, int]:
    """Bytes per lane between two lane_bytes readings, summed over the nodes."""
    per_lane: dict[str, int] = {}
    for node, lanes in after.items():
        for lane, value in lanes.items():
            delta = value - before.get(node, {}).get(lane, 0)
            per_lane[lane] = per_lane.get(lane, 0) + max(delta, 0)
    return dict(sorted(per_lane.items()))


def status_text(state: LabState | None) -> str:
    if state is None:
        stale = ours()
        if stale:
            return (
                f"lab: down, but namespaces of an earlier lab remain ({', '.join(stale)}); "
                "`hpcscope lab down` removes them"
            )
        return "lab: down (build one with `hpcscope lab up --nodes 4 --lanes 2 --rate 200mbit`)"
    spec = state.spec
    lines = [
        f"lab: up, {spec.describe()}",
        f"fabric namespace {FABRIC}: bridges "
        + ", ".join(f"br{l} ({subnet(l)})" for l in range(1, spec.lanes + 1)),
    ]
    counts = lane_bytes(state)
    for n in range(1, spec.nodes + 1):
        ns = node_name(n)
        lanes = ", ".join(
            f"{lane_if(l)} {address(l, n)} (sent {counts.get(ns, {}).get(lane_if(l), 0)} B)"
            for l in range(1, spec.lanes + 1)
        )
        lines.append(f"{ns}: {lanes}")
    lines += [f"degraded on purpose: {f['text']}" for f in lab_degrade.facts(spec, state.cgroups)]
    lines.append(f"state: {state_path()}")
    return "\n".join(lines)
