"""SimGrid platforms for simulating multi-lane clusters with SMPI.

A `PlatformSpec` describes a cluster the way Träff & Hunold's lane model sees it (N nodes,
S sockets of C cores, L lanes = NICs/rails per node); `platform_xml` turns it into a
SimGrid v4.1 platform file and `hostfile` places ranks on its hosts.

Why hosts per socket: SimGrid routes are per host pair, one fixed list of links, so one
host cannot send over two NICs. With lanes per socket (the Hydra/VSC-3 layout: each
socket has its own rail) every socket is a host `n{i}-s{j}` with its own NIC, and the
two sockets of a node are joined by an intra-node link. SMPI's MPI_COMM_TYPE_SHARED then
groups by socket, not node, so lanecoll must group by processor name instead:
LANECOLL_NODE_NAME_SEP='-' turns `n3-s1` into node `n3` (see smpi_command.py).

Links and routes (all explicit, zone routing "Full"):
  - each NIC is two SHARED links, `<host>-up` (sending) and `<host>-down` (receiving),
    so a node sends and receives at full rate at once (full-duplex, as IB/OmniPath);
    each carries half of the lane latency, so a host-to-host route has the lane latency;
  - traffic between nodes leaves on the sender's lane and, when the receiver sits on
    another socket, crosses the receiver's intra-node link (separate rails per socket
    cannot reach the other rail's NIC directly);
  - socket-to-socket inside a node: one SHARED link per ordered socket pair;
  - inside a host: a FATPIPE loopback (every flow gets the loopback bandwidth; memory
    bandwidth contention between cores is not modelled);
  - a tapered switch adds one SHARED core link per lane of N*bandwidth/taper (all nodes
    injecting at full rate fit only when taper == 1); non-blocking adds nothing.
Lanes per node (placement 'per-node') model one host per node whose single NIC has L
times the lane bandwidth: any one process can then use all lanes (rail striping), which
is a different machine from the per-socket one and says so in the XML comment.

Cost: the file has H*H routes for H = N*S hosts (Hydra preset: 72 hosts, 5184 routes,
0.7 MB; VSC-3 preset: 200 hosts, 40000 routes, 5.1 MB; Jupiter: 36 hosts, 0.2 MB; each
written in under 0.1 s). SimGrid keeps an H x H table for Full routing: fine for a few
hundred hosts, not for thousands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TypedDict
from xml.parsers import expat

PLACEMENTS = ("per-socket", "per-node")
SWITCHES = ("non-blocking", "tapered")
LAYOUTS = ("alternating", "block")


NEUTRAL_FACTORS = "0:1"  # SMPI's piecewise factor syntax for 'no factor' (a plain '1' crashes)


def valid_factors(text: str) -> bool:
    """SMPI factor strings: ';'-separated 'bytes:factor' pairs, the first at 0 bytes,
    sizes increasing, every factor a positive finite number."""
    try:
        pairs = [p.split(":") for p in text.split(";")]
        sizes = [int(size) for size, _ in pairs]
        factors = [float(f) for _, f in pairs]
    except (ValueError, AttributeError):
        return False
    return (
        bool(sizes)
        and sizes[0] == 0
        and sizes == sorted(set(sizes))
        and all(math.isfinite(f) and f > 0 for f in factors)
    )


class PlatformError(ValueError):
    """A platform parameter or file that cannot be simulated; the message names the fix."""


# The largest cluster hpcscope simulates: 100,000 ranks (cores) in all, and 1000 hosts
# (nodes, times sockets with per-socket lanes): the platform file has a route per pair of
# hosts (1000 hosts: a million routes, 130 MB, written in about 1.4 s), and SimGrid keeps
# an H x H table. Numbers past the others' bounds are typos, and their products (nodes x
# lanes x bandwidth) must stay finite.
MAX_RANKS = 100_000
MAX_HOSTS = 1000
MAX_LANES = 1000
MAX_BANDWIDTH = 1e18  # bytes/s: a million times a 200 Gbit/s lane
MAX_CORE_SPEED = 1e21  # flop/s
MAX_LATENCY = 1e3  # s
MAX_TAPER = 1e6


@dataclass(frozen=True)
class PlatformSpec:
    name: str
    nodes: int  # N
    sockets: int  # S per node
    cores_per_socket: int  # C
    lanes: int  # L physical lanes (NICs, rails) per node
    lane_placement: str  # 'per-socket' (L == S) or 'per-node'
    lane_bandwidth: float  # bytes/s, one lane, one direction
    lane_latency: float  # s, one way, node to node over one lane
    intra_bandwidth: float  # bytes/s, socket to socket inside a node
    intra_latency: float  # s
    loopback_bandwidth: float  # bytes/s, two ranks on the same host (socket)
    loopback_latency: float  # s
    core_speed: float = 1e9  # flop/s per core (only used when SMPI simulates computation)
    switch: str = "non-blocking"
    taper: float = 1.0  # tapered switch: injection/core bandwidth ratio (2.0 = 2:1)
    # SMPI's per-message-size factors on every route's latency and bandwidth, written
    # "bytes:factor;..." (SMPI's syntax); neutral by default, fitted by `sim calibrate`.
    lat_factor: str = NEUTRAL_FACTORS
    bw_factor: str = NEUTRAL_FACTORS
    source: str = ""  # where every number comes from
    # Made bad on purpose (issue 45): "n3-n5:0.25" the route between nodes 3 and 5 at 0.25
    # x the lane bandwidth; "n7:0.5" node 7's hosts at 0.5 x their speed and NIC
    # bandwidth. ';' between items. See degraded_links / degraded_hosts.
    slow_link: str = ""
    slow_host: str = ""

    def validate(self) -> None:
        """Raises PlatformError naming the first bad parameter and how to fix it."""
        self.degraded_links()
        self.degraded_hosts()
        if not self.name or any(c.isspace() or c in "<>&\"'" for c in self.name):
            raise PlatformError(
                f"name {self.name!r}: use a non-empty name without spaces or XML special characters"
            )
        for field_name in ("nodes", "sockets", "cores_per_socket", "lanes"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise PlatformError(f"{field_name}={value!r}: must be an integer >= 1")
            if value > MAX_RANKS:
                raise PlatformError(
                    f"{field_name}={value}: at most {MAX_RANKS} (hpcscope simulates at most "
                    f"{MAX_RANKS} ranks)"
                )
        if self.cores > MAX_RANKS:
            raise PlatformError(
                f"nodes={self.nodes} x sockets={self.sockets} x cores_per_socket="
                f"{self.cores_per_socket} = {self.cores} cores: hpcscope simulates at most "
                f"{MAX_RANKS} ranks (cores); lower nodes or cores_per_socket"
            )
        if self.lanes > MAX_LANES:
            raise PlatformError(f"lanes={self.lanes}: at most {MAX_LANES} lanes per node")
        for field_name, high in (
            ("lane_bandwidth", MAX_BANDWIDTH),
            ("intra_bandwidth", MAX_BANDWIDTH),
            ("loopback_bandwidth", MAX_BANDWIDTH),
            ("core_speed", MAX_CORE_SPEED),
        ):
            value = getattr(self, field_name)
            if not _finite(value) or not 0 < value <= high:
                raise PlatformError(
                    f"{field_name}={value!r}: must be a positive number up to {high:g} "
                    "(bytes/s for bandwidths, flop/s for core_speed)"
                )
        for field_name in ("lane_latency", "intra_latency", "loopback_latency"):
            value = getattr(self, field_name)
            # Zero latency is rejected too: SMPI's flow weights and the TCP-window bound
            # divide by route latency, and no real link has none.
            if not _finite(value) or not 0 < value <= MAX_LATENCY:
                raise PlatformError(
                    f"{field_name}={value!r}: must be a positive number of seconds up to "
                    f"{MAX_LATENCY:g} (e.g. 1e-6)"
                )
        if self.lane_placement not in PLACEMENTS:
            raise PlatformError(
                f"lane_placement={self.lane_placement!r}: use one of {', '.join(PLACEMENTS)}"
            )
        if self.lane_placement == "per-socket" and self.lanes != self.sockets:
            raise PlatformError(
                f"lanes={self.lanes} with lane_placement='per-socket' and sockets={self.sockets}:"
                " one NIC per socket needs lanes == sockets; set lanes="
                f"{self.sockets} or use lane_placement='per-node'"
            )
        if self.nodes * self.hosts_per_node > MAX_HOSTS:
            raise PlatformError(
                f"nodes={self.nodes} x {self.hosts_per_node} host(s) per node = "
                f"{self.nodes * self.hosts_per_node} hosts: hpcscope writes platforms of at "
                f"most {MAX_HOSTS} hosts (a route per pair of hosts); lower nodes"
            )
        for field_name in ("lat_factor", "bw_factor"):
            if not valid_factors(getattr(self, field_name)):
                raise PlatformError(
                    f"{field_name}={getattr(self, field_name)!r}: write 'bytes:factor' pairs "
                    "separated by ';', starting at 0 bytes, sizes increasing, factors > 0, "
                    "e.g. '0:1' or '0:0.9;65536:1'"
                )
        if self.switch not in SWITCHES:
            raise PlatformError(f"switch={self.switch!r}: use one of {', '.join(SWITCHES)}")
        if not _finite(self.taper) or not 1 <= self.taper <= MAX_TAPER:
            raise PlatformError(
                f"taper={self.taper!r}: must be >= 1 and at most {MAX_TAPER:g} (1 = full "
                "bisection, 2 = 2:1 oversubscribed)"
            )
        if self.switch == "non-blocking" and self.taper != 1:
            raise PlatformError(
                f"taper={self.taper} with switch='non-blocking': set switch='tapered' or taper=1"
            )

    @property
    def hosts_per_node(self) -> int:
        return self.sockets if self.lane_placement == "per-socket" else 1

    @property
    def cores_per_host(self) -> int:
        return self.cores_per_socket * (self.sockets // self.hosts_per_node)

    @property
    def cores(self) -> int:
        return self.nodes * self.sockets * self.cores_per_socket

    def host(self, node: int, index: int) -> str:
        """Host name; the node name is everything before the last '-'."""
        if self.lane_placement == "per-socket":
            return f"n{node}-s{index}"
        return f"n{node}-node"

    def hosts(self) -> list[str]:
        return [self.host(i, j) for i in range(self.nodes) for j in range(self.hosts_per_node)]

    def degraded_links(self) -> dict[frozenset[int], float]:
        """{frozenset({3, 5}): 0.25} from slow_link; PlatformError for a bad item."""
        out: dict[frozenset[int], float] = {}
        for item in _items(self.slow_link):
            pair, factor = _factor_item(item, "slow_link", "n3-n5:0.25")
            a, sep, b = pair.partition("-")
            nodes = (
                _node_index(a, self.nodes, "slow_link", item),
                _node_index(b, self.nodes, "slow_link", item),
            )
            if not sep or nodes[0] == nodes[1]:
                raise PlatformError(
                    f"slow_link={item!r}: name two different nodes, e.g. n3-n5:0.25"
                )
            out[frozenset(nodes)] = factor
        return out

    def degraded_hosts(self) -> dict[int, float]:
        """{7: 0.5} from slow_host; PlatformError for a bad item."""
        out: dict[int, float] = {}
        for item in _items(self.slow_host):
            node, factor = _factor_item(item, "slow_host", "n7:0.5")
            out[_node_index(node, self.nodes, "slow_host", item)] = factor
        return out

    def degraded_text(self) -> list[str]:
        """The degradations in words (XML comment, the run's platform note)."""
        lines = [
            f"link n{min(p)}-n{max(p)} at {_num(f)} x the lane bandwidth (both directions)"
            for p, f in self.degraded_links().items()
        ]
        lines += [
            f"node n{n} at {_num(f)} x its hosts' speed and NIC bandwidth"
            for n, f in self.degraded_hosts().items()
        ]
        return lines

    def with_(self, **changes) -> PlatformSpec:
        """A copy with some parameters changed (e.g. spec.with_(nodes=4))."""
        return replace(self, **changes)


def _items(text: str) -> list[str]:
    return [i.strip() for i in text.split(";") if i.strip()]


def _factor_item(item: str, name: str, example: str) -> tuple[str, float]:
    what, sep, raw = item.rpartition(":")
    try:
        factor = float(raw)
    except ValueError:
        factor = math.nan
    if not sep or not math.isfinite(factor) or not 0 < factor < 1:
        raise PlatformError(
            f"{name}={item!r}: write WHAT:FACTOR with a factor above 0 and below 1, e.g. "
            f"{example} (';' between several)"
        )
    return what.strip(), factor


def _node_index(text: str, nodes: int, name: str, item: str) -> int:
    digits = text.strip().removeprefix("n")
    if not digits.isascii() or not digits.isdigit() or not 0 <= int(digits) < nodes:
        raise PlatformError(
            f"{name}={item!r}: {text!r} is not a node of this platform (n0..n{nodes - 1})"
        )
    return int(digits)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _num(x: float) -> str:
    """Shortest exact text of a number for SimGrid's unit parser (strtod + unit)."""
    if float(x).is_integer() and abs(x) < 1e18:
        return str(int(x))
    return repr(float(x))


def _xml_comment(text: str) -> str:
    return text.replace("--", "- -")


def platform_xml(spec: PlatformSpec) -> str:
    """SimGrid v4.1 platform XML for spec (see the module docstring for the model)."""
    spec.validate()
    per_socket = spec.lane_placement == "per-socket"
    nic_bw = spec.lane_bandwidth * (1 if per_socket else spec.lanes)
    half_lat = spec.lane_latency / 2
    out = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        f"<!-- hpcscope PlatformSpec {spec.name}: N={spec.nodes} nodes x S={spec.sockets} "
        f"sockets x C={spec.cores_per_socket} cores, L={spec.lanes} lanes "
        f"{spec.lane_placement}, switch {spec.switch} (taper {_num(spec.taper)}) -->",
    ]
    if spec.source:
        out.append(f"<!-- source: {_xml_comment(spec.source)} -->")
    for line in spec.degraded_text():
        out.append(f"<!-- degraded on purpose: {_xml_comment(line)} -->")
    slow_links, slow_hosts = spec.degraded_links(), spec.degraded_hosts()
    if not per_socket:
        out.append(
            f"<!-- lanes per node: one NIC of {spec.lanes} x {_num(spec.lane_bandwidth)} "
            "Bps per node host; one process can use all lanes (rail striping) -->"
        )
    if (spec.lat_factor, spec.bw_factor) != (NEUTRAL_FACTORS, NEUTRAL_FACTORS):
        # Read back by load_platform_file and passed to smpirun by the sim backend: a
        # --cfg on smpirun's command line overrides a platform file's <config>.
        out.append('<config id="General">')
        out.append(f'  <prop id="smpi/lat-factor" value="{spec.lat_factor}"/>')
        out.append(f'  <prop id="smpi/bw-factor" value="{spec.bw_factor}"/>')
        out.append("</config>")
    out.append(f'<zone id="{spec.name}" routing="Full">')
    for h in spec.hosts():
        speed = _num(spec.core_speed * slow_hosts.get(_node_of(h), 1.0))
        out.append(f'  <host id="{h}" speed="{speed}f" core="{spec.cores_per_host}"/>')

    def link(name: str, bw: float, lat: float, policy: str = "SHARED") -> None:
        out.append(
            f'  <link id="{name}" bandwidth="{_num(bw)}Bps" latency="{_num(lat)}s" '
            f'sharing_policy="{policy}"/>'
        )

    for h in spec.hosts():
        nic = nic_bw * slow_hosts.get(_node_of(h), 1.0)
        link(f"{h}-up", nic, half_lat)
        link(f"{h}-down", nic, half_lat)
        link(f"{h}-loop", spec.loopback_bandwidth, spec.loopback_latency, "FATPIPE")
    # a slow link: the route between two nodes crosses one more link per direction and
    # lane, at the factor of the lane bandwidth (no latency of its own)
    for pair, factor in slow_links.items():
        first, second = sorted(pair)
        for one, other in ((first, second), (second, first)):
            for lane in range(spec.hosts_per_node):
                link(f"slow-n{one}-n{other}-l{lane}", nic_bw * factor, 0)
    if per_socket and spec.sockets > 1:
        for i in range(spec.nodes):
            for a in range(spec.sockets):
                for b in range(spec.sockets):
                    if a != b:
                        link(
                            f"n{i}-x{a}{b}" if spec.sockets <= 10 else f"n{i}-x{a}_{b}",
                            spec.intra_bandwidth,
                            spec.intra_latency,
                        )
    core_lanes = spec.hosts_per_node if per_socket else 1
    if spec.switch == "tapered":
        for lane in range(core_lanes):
            link(f"lane{lane}-core", spec.nodes * nic_bw / spec.taper, 0)

    def intra(node: int, a: int, b: int) -> str:
        return f"n{node}-x{a}{b}" if spec.sockets <= 10 else f"n{node}-x{a}_{b}"

    for i in range(spec.nodes):
        for a in range(spec.hosts_per_node):
            src = spec.host(i, a)
            for j in range(spec.nodes):
                for b in range(spec.hosts_per_node):
                    dst = spec.host(j, b)
                    if src == dst:
                        links = [f"{src}-loop"]
                    elif i == j:
                        links = [intra(i, a, b)]
                    else:
                        # Leave on the sender's lane a, arrive at the receiver's NIC of the
                        # same lane (socket a of node j), then cross to socket b if needed.
                        links = [f"{src}-up"]
                        if spec.switch == "tapered":
                            links.append(f"lane{a}-core")
                        links.append(f"{spec.host(j, a)}-down")
                        if frozenset((i, j)) in slow_links:
                            links.append(f"slow-n{i}-n{j}-l{a}")
                        if a != b:
                            links.append(intra(j, a, b))
                    ctn = "".join(f'<link_ctn id="{n}"/>' for n in links)
                    out.append(f'  <route src="{src}" dst="{dst}" symmetrical="NO">{ctn}</route>')
    out.append("</zone>")
    out.append("</platform>")
    return "\n".join(out) + "\n"


def _node_of(host: str) -> int:
    """n3-s1 / n3-node -> 3."""
    return int(host.split("-", 1)[0].removeprefix("n"))


def rank_hosts(spec: PlatformSpec, ppn: int, layout: str = "alternating") -> list[str]:
    """The host of every rank: ranks consecutive over nodes (rank r on node r // ppn); on
    a node, local rank i on socket i mod S ('alternating', the paper's pinning) or on
    socket i // (ppn/S) ('block')."""
    spec.validate()
    if layout not in LAYOUTS:
        raise PlatformError(f"layout={layout!r}: use one of {', '.join(LAYOUTS)}")
    if not isinstance(ppn, int) or isinstance(ppn, bool) or ppn < 1:
        raise PlatformError(f"ppn={ppn!r}: processes per node must be an integer >= 1")
    per_node_cores = spec.sockets * spec.cores_per_socket
    if ppn > per_node_cores:
        raise PlatformError(
            f"ppn={ppn}: more ranks per node than the {per_node_cores} cores "
            f"of a node (S={spec.sockets} x C={spec.cores_per_socket}); lower "
            "ppn or raise cores_per_socket"
        )
    hpn = spec.hosts_per_node
    if hpn > 1 and ppn % hpn:
        raise PlatformError(
            f"ppn={ppn} is not divisible by sockets={spec.sockets}: every "
            "socket (host) needs the same number of ranks; use a multiple of "
            f"{spec.sockets}"
        )
    per_host = ppn // hpn
    hosts = []
    for node in range(spec.nodes):
        for i in range(ppn):
            j = i % hpn if layout == "alternating" else i // per_host
            hosts.append(spec.host(node, j))
    return hosts


def hostfile(spec: PlatformSpec, ppn: int, layout: str = "alternating") -> str:
    """smpirun hostfile: one line per rank, in rank order (N*ppn lines)."""
    return "\n".join(rank_hosts(spec, ppn, layout)) + "\n"


# --- presets --------------------------------------------------------------------------

_GBIT = 1e9 / 8  # bytes/s per Gbit/s


# Intra-node and loopback numbers are assumptions shared by the presets: a UPI/QPI-class
# socket link (~20 GB/s, 0.3 us) and an in-socket shared-memory copy (~10 GB/s, 0.2 us).
# Nobody measured them on these machines; replace them with a calibration when known.
class _IntraNumbers(TypedDict):
    intra_bandwidth: float
    intra_latency: float
    loopback_bandwidth: float
    loopback_latency: float


_INTRA = _IntraNumbers(
    intra_bandwidth=20e9, intra_latency=0.3e-6, loopback_bandwidth=10e9, loopback_latency=0.2e-6
)

PRESETS: dict[str, PlatformSpec] = {
    "hydra": PlatformSpec(
        name="hydra",
        nodes=36,
        sockets=2,
        cores_per_socket=16,
        lanes=2,
        lane_placement="per-socket",
        lane_bandwidth=100 * _GBIT,
        lane_latency=1.0e-6,
        core_speed=2.1e9 * 16,
        **_INTRA,
        source=(
            "Paper (Traff & Hunold, Table 1 and section 2): 36 nodes, 2 sockets x 16 cores "
            "(Xeon Gold 6130, 2.1 GHz), dual-rail OmniPath with one rail per socket on "
            "separate networks. Assumed: 100 Gbit/s per rail (OmniPath 100 Series line "
            "rate; the paper gives no rate), 1.0 us one-way lane latency, switch "
            "non-blocking, core speed 2.1 GHz x 16 flop/cycle, intra-node and loopback "
            "numbers (see _INTRA)."
        ),
    ),
    "vsc3": PlatformSpec(
        name="vsc3",
        nodes=100,
        sockets=2,
        cores_per_socket=8,
        lanes=2,
        lane_placement="per-socket",
        lane_bandwidth=32 * _GBIT,
        lane_latency=1.5e-6,
        core_speed=2.6e9 * 8,
        **_INTRA,
        source=(
            "Paper (Table 1, Table 3): VSC-3, 16 processes per node on 2 sockets (Xeon "
            "E5-2650v2, 2.6 GHz, 8 cores each), InfiniBand Intel QDR-80 dual rail; the "
            "machine has 2020 nodes, the lane-pattern run used N=100. Assumed: one rail "
            "per socket, QDR data rate 32 Gbit/s per rail (40 Gbit/s signalling, 8b/10b), "
            "1.5 us one-way latency, non-blocking switch, 8 flop/cycle, intra-node and "
            "loopback numbers (see _INTRA)."
        ),
    ),
    "jupiter": PlatformSpec(
        name="jupiter",
        nodes=36,
        sockets=2,
        cores_per_socket=8,
        lanes=1,
        lane_placement="per-node",
        lane_bandwidth=32 * _GBIT,
        lane_latency=1.5e-6,
        core_speed=2.3e9 * 4,
        **_INTRA,
        source=(
            "Paper (appendix D): 'Jupiter', 36 nodes of 2 x 8-core AMD Opteron 6134 at "
            "2.3 GHz, single-lane InfiniBand through a Mellanox MT4036 QDR switch, used "
            "as the single-lane sanity check. Assumed: QDR data rate 32 Gbit/s, 1.5 us "
            "one-way latency, non-blocking switch, 4 flop/cycle, intra-node and loopback "
            "numbers (see _INTRA)."
        ),
    ),
}


# --- user platform files --------------------------------------------------------------


@dataclass
class PlatformFile:
    path: str
    hosts: dict[str, int] = field(default_factory=dict)  # host name -> cores
    links: list[str] = field(default_factory=list)
    # SMPI settings of its <config> that hpcscope passes on: smpi/lat-factor, smpi/bw-factor
    factors: dict[str, str] = field(default_factory=dict)
    xml: str = ""  # the file's text, as checked


def _radical(text: str, where: str) -> list[int]:
    """SimGrid cluster radical '0-3,8' -> [0, 1, 2, 3, 8]; at most MAX_HOSTS numbers."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise PlatformError(f"{where}: radical {text!r} is not like '0-15,20'") from None
        if len(out) + max(0, last - first + 1) > MAX_HOSTS:
            raise PlatformError(
                f"{where}: radical {text[:40]!r} names more than {MAX_HOSTS} hosts, the most "
                "hpcscope simulates"
            )
        out.extend(range(first, last + 1))
    return out


FACTOR_PROPS = ("smpi/lat-factor", "smpi/bw-factor")


def load_platform_file(path: str) -> PlatformFile:
    """Checks a user's SimGrid platform file and lists its hosts and links.

    Well-formed XML with a <platform> root, at least one host and one link (a <cluster>
    counts as both and its hosts are expanded), host ids unique. Raises PlatformError
    naming the file and line. Does not check routes: SimGrid itself does that at start.
    """
    from hpcscope.machine.input_file import MAX_PLATFORM_BYTES, InputFileError, read_bytes

    try:
        data = read_bytes(path, MAX_PLATFORM_BYTES)
    except InputFileError as exc:
        raise PlatformError(f"{path}: {exc}; give a SimGrid platform .xml file") from None
    info = PlatformFile(path=path, xml=data.decode("utf-8", "replace"))
    parser = expat.ParserCreate()
    root: list[str] = []
    problems: list[str] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        where = f"{path}:{parser.CurrentLineNumber}"
        if not root:
            root.append(tag)
            if tag != "platform":
                problems.append(f"{where}: root element is <{tag}>, expected <platform>")
            return
        if problems:
            return
        if tag == "host":
            name = attrs.get("id")
            if not name:
                problems.append(f"{where}: <host> without id")
                return
            if name in info.hosts:
                problems.append(f"{where}: host {name!r} defined twice")
                return
            try:
                cores = int(attrs.get("core", "1"))
            except ValueError:
                problems.append(
                    f"{where}: host {name!r} core={attrs.get('core')!r} is not an integer"
                )
                return
            if not 1 <= cores <= MAX_RANKS:
                problems.append(f"{where}: host {name!r} core={cores}: must be 1..{MAX_RANKS}")
                return
            if len(info.hosts) >= MAX_HOSTS:
                problems.append(
                    f"{where}: more than {MAX_HOSTS} hosts, the most hpcscope simulates"
                )
                return
            info.hosts[name] = cores
        elif tag == "prop" and attrs.get("id") in FACTOR_PROPS:
            value = attrs.get("value", "")
            if not valid_factors(value):
                problems.append(
                    f"{where}: {attrs['id']}={value!r} is not SMPI's 'bytes:factor;...' "
                    "list starting at 0 bytes with factors > 0"
                )
                return
            info.factors[attrs["id"]] = value
        elif tag in ("link", "backbone"):
            if not attrs.get("id"):
                problems.append(f"{where}: <{tag}> without id")
                return
            info.links.append(attrs["id"])
        elif tag == "cluster":
            missing = [a for a in ("id", "prefix", "suffix", "radical") if a not in attrs]
            if missing:
                problems.append(f"{where}: <cluster> lacks {', '.join(missing)}")
                return
            core = attrs.get("core", "1")
            cores = int(core) if core.isascii() and core.isdigit() and len(core) < 7 else 0
            if not 1 <= cores <= MAX_RANKS:
                problems.append(f"{where}: cluster core={core!r}: integer 1..{MAX_RANKS}")
                return
            try:
                numbers = _radical(attrs["radical"], where)
            except PlatformError as exc:
                problems.append(str(exc))
                return
            if len(info.hosts) + len(numbers) > MAX_HOSTS:
                problems.append(
                    f"{where}: more than {MAX_HOSTS} hosts, the most hpcscope simulates"
                )
                return
            for k in numbers:
                info.hosts[f"{attrs['prefix']}{k}{attrs['suffix']}"] = cores
            info.links.append(attrs["id"])

    parser.StartElementHandler = start
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise PlatformError(
            f"{path}:{exc.lineno}: not well-formed XML "
            f"({expat.ErrorString(exc.code)}, column {exc.offset + 1})"
        ) from None
    if problems:
        raise PlatformError(problems[0])
    if not info.hosts:
        raise PlatformError(f"{path}: no <host> or <cluster>: SMPI needs hosts to place ranks")
    if sum(info.hosts.values()) > MAX_RANKS:
        raise PlatformError(
            f"{path}: {sum(info.hosts.values())} cores in all; hpcscope simulates at most "
            f"{MAX_RANKS} ranks"
        )
    if not info.links:
        raise PlatformError(
            f"{path}: no <link>, <backbone> or <cluster>: ranks on different "
            "hosts could not communicate"
        )
    return info
