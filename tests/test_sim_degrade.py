"""A simulated platform made bad on purpose (issue 45 part 4): `slow_link=nA-nB:F` and
`slow_host=nK:F` in the written SimGrid XML, in words in the platform's description, and
refused with one line when they name no node of the platform or a factor outside (0, 1)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import have

from hpcscope.machine import sim_machine
from hpcscope.machine.sim_platform import PRESETS, PlatformError, platform_xml
from hpcscope.results.store import Store

DEGRADED = "jupiter:nodes=6,slow_link=n3-n5:0.25,slow_host=n1:0.5"


def _route(xml: str, src: str, dst: str) -> list[str]:
    found = re.search(rf'<route src="{src}" dst="{dst}"[^>]*>(.*?)</route>', xml)
    assert found, (src, dst)
    return re.findall(r'link_ctn id="([^"]+)"', found.group(1))


def _bandwidth(xml: str, link: str) -> float:
    found = re.search(rf'<link id="{link}" bandwidth="([0-9.e+]+)Bps"', xml)
    assert found, link
    return float(found.group(1))


def test_degraded_platform_xml_carries_the_factors():
    machine = sim_machine.resolve(DEGRADED)
    xml, lane = machine.xml, PRESETS["jupiter"].lane_bandwidth
    # the slow link: both directions of the n3-n5 route cross it, no other route does
    assert _route(xml, "n3-node", "n5-node")[-1] == "slow-n3-n5-l0"
    assert _route(xml, "n5-node", "n3-node")[-1] == "slow-n5-n3-l0"
    assert _bandwidth(xml, "slow-n3-n5-l0") == pytest.approx(0.25 * lane)
    assert xml.count('<link_ctn id="slow-') == 2
    # the slow host: its speed and its NIC at half, the others untouched
    assert 'id="n1-node" speed="4600000000f"' in xml and 'id="n2-node" speed="9200000000f"' in xml
    assert _bandwidth(xml, "n1-node-up") == pytest.approx(0.5 * lane)
    assert _bandwidth(xml, "n1-node-down") == pytest.approx(0.5 * lane)
    assert _bandwidth(xml, "n2-node-up") == pytest.approx(lane)
    # said in the file and in what the run records
    assert "<!-- degraded on purpose: link n3-n5 at 0.25 x the lane bandwidth" in xml
    assert "<!-- degraded on purpose: node n1 at 0.5 x its hosts' speed and NIC" in xml
    params = machine.parameters()
    assert params["degraded"] == [
        "link n3-n5 at 0.25 x the lane bandwidth (both directions)",
        "node n1 at 0.5 x its hosts' speed and NIC bandwidth",
    ]
    assert "slow_link=n3-n5:0.25" in machine.label


def test_per_socket_platform_slows_every_lane_of_the_pair():
    xml = platform_xml(PRESETS["hydra"].with_(nodes=4, slow_link="n1-n2:0.5"))
    assert "slow-n1-n2-l0" in _route(xml, "n1-s0", "n2-s1")
    assert "slow-n2-n1-l1" in _route(xml, "n2-s1", "n1-s0")
    assert not any(x.startswith("slow") for x in _route(xml, "n0-s0", "n2-s0"))


def test_healthy_platform_has_no_degradation():
    xml = platform_xml(PRESETS["jupiter"].with_(nodes=4))
    assert "slow-" not in xml and "degraded on purpose" not in xml


@pytest.mark.parametrize(
    "platform, message",
    [
        ("jupiter:nodes=6,slow_link=n3-n9:0.25", "'n9' is not a node of this platform (n0..n5)"),
        ("jupiter:nodes=6,slow_link=n3-n3:0.25", "name two different nodes"),
        ("jupiter:nodes=6,slow_host=n2:1.5", "a factor above 0 and below 1"),
        ("jupiter:nodes=6,slow_host=n2", "write WHAT:FACTOR"),
    ],
)
def test_bad_degradations_are_refused(platform, message):
    with pytest.raises(PlatformError, match=re.escape(message)):
        sim_machine.resolve(platform)


def test_cli_refuses_a_bad_degradation_in_one_line(cli, tmp_path):
    bad = cli("sim", "platform", "jupiter:nodes=6,slow_host=n6:0.5", "-o", str(tmp_path / "x.xml"))
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "slow_host='n6:0.5'" in bad.stderr


@pytest.mark.sim
@pytest.mark.skipif(not (have("smpirun") and have("smpicc")), reason="SimGrid not installed")
def test_run_links_names_the_slow_link_of_a_degraded_platform(cli):
    """5 simulated nodes, the route n1-n3 at a quarter: exactly that pair is flagged, as a
    link (one pair alone), and the run's platform note says what was degraded."""
    platform = "jupiter:nodes=5,slow_link=n1-n3:0.25"
    done = cli("run", "links", "--on", "sim", "--platform", platform, "--quick",
               "--no-bisection", "--alltoall-bytes", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(cli("export", "last", "--format", "json").stdout)
    (found,) = doc["links"]
    assert {(f["cause"], f["culprit"]) for f in found["flags"]} == {("link", "n1-n3")}
    notes = {n["kind"]: n for n in Store(cli.db).run(1)["notes"]}
    assert notes["platform"]["data"]["degraded"] == [
        "link n1-n3 at 0.25 x the lane bandwidth (both directions)"
    ]
