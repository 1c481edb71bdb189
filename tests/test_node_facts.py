"""The node suite's peaks from the compute node, not the login node (issue 18, part 1):
the probe's facts sections, their cache beside the topology, an hwloc file's CPU infos,
--cpuinfo FILE, and the origin every peak names. sinfo and srun are canned (FakeSlurm of
test_slurm_topology); the live run against slurm-local is in test_slurm_nodes.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_slurm_topology import FIXTURES, LCC3, SINFO_ONE_KIND, FakeSlurm

from hpcscope.launch import slurm_topology as st
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.machine import node_facts
from hpcscope.machine.peaks import node_peaks
from hpcscope.machine.topology import Topology, TopologyError

NODE = Path(__file__).parent / "fixtures" / "node"
HASWELL = (NODE / "cpuinfo_haswell_e5_2680v3.txt").read_text()
S = node_facts.SECTION


def probe_output(cpuinfo: str = HASWELL) -> str:
    """What PROBE_COMMAND prints on a node: the XML, then the facts' sections."""
    return (
        f"{LCC3}{S}host\nn7\n{S}cpuinfo\n{cpuinfo}{S}dmidecode\n{S}links\nib0 100000\n"
        f"lo \neth0 25000\n{S}disks\nSAMSUNG MZ7LH\n"
    )


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLURM_CONF", "/etc/slurm/test.conf")
    return tmp_path / "cache"


def by_name(peaks):
    return {p.name: p for p in peaks}


def test_probe_output_splits_into_xml_and_the_node_s_facts() -> None:
    xml, facts = node_facts.parse_probe_output(probe_output(), "probe job")
    assert xml == LCC3 and Topology.from_xml(xml).packages
    assert facts is not None and "E5-2680 v3" in facts.cpuinfo_text
    assert facts.link_mbit == {"ib0": 100000, "lo": -1, "eth0": 25000}
    assert facts.disk_model == "SAMSUNG MZ7LH" and facts.dmidecode_text is None
    assert facts.cpu_origin == "compute node n7 (/proc/cpuinfo, probe job)"
    assert node_facts.parse_probe_output(LCC3, "probe job") == (LCC3, None)


def test_probe_command_reads_the_node_s_facts_after_lstopo() -> None:
    command = st.PROBE_COMMAND
    assert command.index("lstopo-no-graphics --of xml") < command.index("/proc/cpuinfo")
    assert "dmidecode -t memory" in command and "/sys/class/net/*/speed" in command


def test_probed_facts_are_cached_beside_the_topology_and_give_the_node_s_peaks() -> None:
    fake = FakeSlurm(SINFO_ONE_KIND, xml=probe_output())
    first = st.node_topology(SlurmOptions(), runner=fake)
    facts_file = Path(first.path).with_suffix(".facts.json")
    assert json.loads(facts_file.read_text())["cpu_origin"].startswith("compute node n7")
    again = st.node_topology(SlurmOptions(), runner=fake)
    assert again.source == "cache" and fake.probes == 1 and again.facts == first.facts
    assert "CPU facts from compute node n7" in again.text()
    assert again.note()["cpu_facts"].startswith("compute node n7")
    peaks = by_name(node_peaks(again.facts, again.topology, {}))
    # the LCC3 XML's 12 cores x the Haswell's 2.5 GHz x 16 (AVX2, 2 FMA units)
    assert peaks["fp64"].value == pytest.approx(12 * 2.5 * 16)
    assert "facts from compute node n7 (/proc/cpuinfo" in peaks["fp64"].source
    assert "fp16" not in peaks  # the node has no AVX512-FP16, whatever this machine has
    assert "facts from compute node n7 (dmidecode, sysfs" in peaks["net"].source
    # a cache entry from before the facts (XML only) is probed again, not used half
    facts_file.unlink()
    assert st.node_topology(SlurmOptions(), runner=fake).source == "probe" and fake.probes == 2


def test_topology_file_gives_its_hwloc_cpu_infos_and_says_what_is_missing() -> None:
    path = str(FIXTURES / "this_vm.xml")  # AuthenticAMD family 25 model 1 "AMD EPYC"
    found = st.node_topology(SlurmOptions(), path, runner=FakeSlurm(SINFO_ONE_KIND))
    facts = found.facts
    assert facts is not None and not facts.flags_known
    assert "vendor_id\t: AuthenticAMD" in facts.cpuinfo_text and "model\t: 1" in facts.cpuinfo_text
    assert facts.cpu_origin.startswith(f"--topology {path} (hwloc infos: vendor_id, cpu family")
    assert "pass --cpuinfo FILE" in facts.cpu_origin
    peaks = by_name(node_peaks(facts, found.topology, {}))
    # Zen 3 and Zen 4 differ in their flags only, and there is no clock: unknown, not guessed
    assert peaks["fp64"].value is None and "ISA flags not known" in peaks["fp64"].formula
    assert peaks["int8"].value is None and "? INT8 ops/cycle" in peaks["int8"].formula
    assert peaks["mem"].value is None
    assert "not known for the compute nodes" in peaks["mem"].source


def test_cpuinfo_file_replaces_the_cpu_facts_and_bad_files_name_the_fix(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "node.cpuinfo"
    cpuinfo.write_text(HASWELL)
    path = str(FIXTURES / "lcc3_2x6x2.xml")
    found = st.node_topology(SlurmOptions(), path, cpuinfo_file=str(cpuinfo))
    assert found.facts is not None and found.facts.flags_known
    assert found.facts.cpu_origin == f"--cpuinfo {cpuinfo}"
    peaks = by_name(node_peaks(found.facts, found.topology, {"fp32": 1000}))
    assert peaks["fp64"].value == pytest.approx(12 * 2.5 * 16)
    assert peaks["fp64"].source.endswith(f"facts from --cpuinfo {cpuinfo}")
    assert peaks["fp32"].source == "--peak fp32"  # a user value has no machine facts
    with pytest.raises(TopologyError, match=r"--cpuinfo .*nope: cannot read it.*srun cat"):
        st.node_topology(SlurmOptions(), path, cpuinfo_file=str(tmp_path / "nope"))
    (tmp_path / "junk").write_text("hello\n")
    with pytest.raises(TopologyError, match=r"junk: not a /proc/cpuinfo"):
        st.node_topology(SlurmOptions(), path, cpuinfo_file=str(tmp_path / "junk"))


def test_local_facts_name_this_machine() -> None:
    facts = node_facts.local()
    assert facts.flags_known and facts.cpu_origin.startswith("this machine (")
    assert "processor" in facts.cpuinfo_text


def test_cli_refuses_cpuinfo_off_slurm_and_bad_cpuinfo_files(cli, tmp_path: Path) -> None:
    done = cli("run", "node", "--cpuinfo", str(NODE / "cpuinfo_haswell_e5_2680v3.txt"), "--dry-run")
    assert done.returncode == 2 and "(--on slurm)" in done.stderr
    xml = str(FIXTURES / "lcc3_2x6x2.xml")
    bad = tmp_path / "node.cpuinfo"
    bad.write_text("not cpuinfo")
    done = cli(
        "run", "node", "--on", "slurm", "--topology", xml, "--cpuinfo", str(bad), "--dry-run"
    )
    assert done.returncode == 2
    assert f"--cpuinfo {bad}: not a /proc/cpuinfo" in " ".join(done.stderr.split())
    assert not cli.db.exists()
