"""Topology parsing against hwloc XML recorded from real and synthetic machines.

Fixtures live in tests/fixtures/topo (see make_fixtures.sh there for how each was made).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hpcscope.formatting import format_bytes
from hpcscope.machine import topology as topomod
from hpcscope.machine.topology import Topology, TopologyError, format_cpulist, parse_cpuset

FIXTURES = Path(__file__).parent / "fixtures" / "topo"
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def load(name: str) -> Topology:
    return Topology.from_file(str(FIXTURES / name))


# name: (packages, cores, PUs, NUMA nodes, memory bytes, cache sizes, LLC instances, summary)
EXPECTED = {
    "this_vm.xml": (
        1,
        2,
        2,
        1,
        5999722496,
        {"L1d": 32 * KiB, "L1i": 32 * KiB, "L2": 512 * KiB, "L3": 32 * MiB},
        1,
        "1 package x 2 cores x 1 hardware thread, 1 NUMA node, 5.59 GiB; "
        "L1d 32 KiB, L2 512 KiB per core, L3 32 MiB shared by 2 cores",
    ),
    "lcc3_2x6x2.xml": (
        2,
        12,
        24,
        2,
        48 * GiB,
        {"L1d": 32 * KiB, "L1i": 32 * KiB, "L2": 256 * KiB, "L3": 12 * MiB},
        2,
        "2 packages x 6 cores x 2 hardware threads, 2 NUMA nodes, 48 GiB; "
        "L1d 32 KiB, L2 256 KiB per core, L3 12 MiB shared by 6 cores",
    ),
    "lcc3_2x6x2_hwloc1.xml": (
        2,
        12,
        24,
        2,
        48 * GiB,
        {"L1d": 32 * KiB, "L1i": 32 * KiB, "L2": 256 * KiB, "L3": 12 * MiB},
        2,
        "2 packages x 6 cores x 2 hardware threads, 2 NUMA nodes, 48 GiB; "
        "L1d 32 KiB, L2 256 KiB per core, L3 12 MiB shared by 6 cores",
    ),
    "2x16_nosmt.xml": (
        2,
        32,
        32,
        2,
        128 * GiB,
        {"L1d": 32 * KiB, "L1i": 32 * KiB, "L2": 1 * MiB, "L3": 32 * MiB},
        4,
        "2 packages x 16 cores x 1 hardware thread, 2 NUMA nodes, 128 GiB; "
        "L1d 32 KiB, L2 1 MiB per core, L3 32 MiB shared by 8 cores",
    ),
    "snc2_1x16x2.xml": (
        1,
        16,
        32,
        2,
        128 * GiB,
        {"L1d": 48 * KiB, "L1i": 32 * KiB, "L2": 2 * MiB, "L3": 60 * MiB},
        1,
        "1 package x 16 cores x 2 hardware threads, 2 NUMA nodes, 128 GiB; "
        "L1d 48 KiB, L2 2 MiB per core, L3 60 MiB shared by 16 cores",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_memory_and_caches(name: str) -> None:
    npkg, ncores, npus, nnuma, mem, caches, nllc, summary = EXPECTED[name]
    t = load(name)
    assert len(t.packages) == npkg
    assert len(t.cores) == ncores
    assert len(t.pus) == npus
    assert len(t.numa_nodes) == nnuma
    assert t.total_memory == mem
    assert sum(n.memory for n in t.numa_nodes) == mem
    assert t.cache_sizes() == caches
    assert len(t.last_level_caches()) == nllc
    assert t.summary() == summary
    text = t.describe()
    assert text.splitlines()[0] == summary
    assert len(text.splitlines()) > ncores  # the tree lists every core


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_relations_are_consistent(name: str) -> None:
    """Every PU is in its core, package and NUMA node; cores partition the PUs."""
    t = load(name)
    assert sorted(c for core in t.cores for c in core.pus) == sorted(p.os_index for p in t.pus)
    assert [c.index for c in t.cores] == list(range(len(t.cores)))
    numa_cpus = {n.os_index: set(n.cpus) for n in t.numa_nodes}
    for p in t.pus:
        core = t.cores[p.core]
        assert core.pus[p.smt_index] == p.os_index
        assert p.os_index in t.packages[p.package].cpus
        assert p.os_index in numa_cpus[p.numa]
        assert core.package == p.package
    for cache in t.caches:
        assert cache.cpus and cache.size > 0 and cache.type in ("data", "unified", "instruction")


def test_lcc3_intel_interleaved_thread_numbering() -> None:
    """Linux on Intel numbers the second hardware thread of core 0 as P#12, not P#1."""
    t = load("lcc3_2x6x2.xml")
    assert t.cores[0].pus == [0, 12]
    assert t.cores[6].pus == [6, 18]
    assert t.pu(12).core == 0 and t.pu(12).smt_index == 1
    assert t.packages[0].cpus == [0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17]
    assert [n.os_index for n in t.numa_nodes] == [0, 1]
    assert t.pu(18).numa == 1 and t.pu(18).package == 1
    assert t.smt == 2
    assert t.cpu_range() == "0-23"


def test_hwloc1_and_hwloc2_exports_agree() -> None:
    """The 1.x format (NUMANode above Socket, type="Cache") parses to the same machine."""
    v1, v2 = load("lcc3_2x6x2_hwloc1.xml"), load("lcc3_2x6x2.xml")
    assert v1.pus == v2.pus
    assert v1.cores == v2.cores
    assert sorted((c.level, c.type, c.size, c.cpus) for c in v1.caches) == sorted(
        (c.level, c.type, c.size, c.cpus) for c in v2.caches
    )


def test_snc_numa_nodes_inside_one_package() -> None:
    t = load("snc2_1x16x2.xml")
    assert [n.cpus for n in t.numa_nodes] == [list(range(16)), list(range(16, 32))]
    assert {p.package for p in t.pus} == {0}
    assert t.cores[0].pus == [0, 1]  # sequential SMT numbering (hwloc synthetic default)
    assert t.last_level_caches()[0].cpus == list(range(32))


def test_this_vm_host_nic_and_model() -> None:
    t = load("this_vm.xml")
    assert t.hostname == "vm"
    assert t.packages[0].model == "AMD EPYC"
    assert len(t.nics) == 1
    nic = t.nics[0]
    assert (nic.name, nic.type, nic.pci_busid, nic.address) == (
        "eth0",
        "network",
        "0000:00:03.0",
        "02:fc:00:00:00:01",
    )
    assert nic.link_speed_gbs is None  # virtio reports 0 GB/s: unknown, not zero
    assert "NIC eth0" in t.describe()
    assert "Machine vm" in t.describe()
    assert not any(n for n in load("lcc3_2x6x2.xml").nics)  # synthetic: no I/O


def test_nic_link_speed_and_openfabrics() -> None:
    """A PCI link speed, an InfiniBand netdev and its OpenFabrics device (hwloc 2.x attributes)."""
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0x00000001">
  <object type="Package" os_index="0" cpuset="0x00000001">
   <object type="NUMANode" os_index="0" cpuset="0x00000001" local_memory="1073741824"/>
   <object type="Core" os_index="0" cpuset="0x00000001">
    <object type="PU" os_index="0" cpuset="0x00000001"/>
   </object>
  </object>
  <object type="Bridge" bridge_type="0-1" depth="0">
   <object type="PCIDev" pci_busid="0000:3b:00.0" pci_type="0207 [15b3:1017] [15b3:0020] 00" pci_link_speed="15.753846">
    <object type="OSDev" name="ib0" osdev_type="2"><info name="Address" value="00:00:10:87"/></object>
    <object type="OSDev" name="mlx5_0" osdev_type="3"><info name="NodeGUID" value="b859:9f03:00d6:1234"/></object>
    <object type="OSDev" name="sda" osdev_type="0"/>
   </object>
  </object>
 </object>
</topology>"""
    t = Topology.from_xml(xml)
    assert [(n.name, n.type) for n in t.nics] == [("ib0", "network"), ("mlx5_0", "openfabrics")]
    assert t.nics[0].link_speed_gbs == pytest.approx(15.753846)
    assert t.nics[1].address == "b859:9f03:00d6:1234"
    assert t.cache_sizes() == {}
    assert t.summary() == "1 package x 1 core x 1 hardware thread, 1 NUMA node, 1 GiB"


def test_minimal_xml_without_packages_cores_or_numa() -> None:
    """Some platforms report only PUs: each PU becomes its own core in one package."""
    xml = """<topology><object type="Machine" os_index="0" cpuset="0x00000003" local_memory="2147483648">
      <object type="PU" os_index="0" cpuset="0x00000001"/><object type="PU" os_index="1" cpuset="0x00000002"/>
    </object></topology>"""
    t = Topology.from_xml(xml)
    assert len(t.packages) == 1 and len(t.cores) == 2 and len(t.numa_nodes) == 1
    assert t.total_memory == 2 * GiB
    assert t.hostname == ""


def test_bad_xml_errors() -> None:
    with pytest.raises(TopologyError, match="does not parse"):
        Topology.from_xml("<topology><object")
    with pytest.raises(TopologyError, match="not an hwloc topology"):
        Topology.from_xml("<html/>")
    with pytest.raises(TopologyError, match="no PU objects"):
        Topology.from_xml('<topology><object type="Machine" cpuset="0x0"/></topology>')


def test_to_dict_is_json() -> None:
    t = load("lcc3_2x6x2.xml")
    d = json.loads(json.dumps(t.to_dict()))
    assert "xml" not in d
    assert d["cache_sizes"]["L3"] == 12 * MiB
    assert d["pus"][1] == {"os_index": 12, "core": 0, "package": 0, "numa": 0, "smt_index": 1}
    assert d["summary"].startswith("2 packages x 6 cores")
    assert t.to_dict(include_xml=True)["xml"].startswith("<?xml")


def test_helpers() -> None:
    assert parse_cpuset("0x00000003") == [0, 1]
    assert parse_cpuset("0x00000001,0x80000000") == [31, 32]
    assert parse_cpuset("0xf...f,0x00000001") == [0]
    assert parse_cpuset("") == []
    assert format_cpulist([5, 0, 1, 2, 12, 13]) == "0-2,5,12-13"
    assert format_bytes(32768) == "32 KiB"
    assert format_bytes(5999722496) == "5.59 GiB"
    assert format_bytes(512) == "512 B"


def test_local_without_hwloc_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(*args, **kwargs) -> str:
        raise topomod.hwloc_lib.HwlocLibraryError("libhwloc.so.15: cannot open shared object")

    monkeypatch.setattr(topomod.hwloc_lib, "topology_xml", no_library)
    monkeypatch.setattr(topomod.shutil, "which", lambda name: None)
    with pytest.raises(TopologyError, match="apt-get install hwloc"):
        Topology.local()


@pytest.mark.skipif(
    shutil.which("lstopo-no-graphics") is None and shutil.which("lstopo") is None,
    reason="hwloc not installed",
)
def test_local_runs_lstopo() -> None:
    t = Topology.local()
    assert t.pus and t.cores and t.packages and t.numa_nodes
    assert t.total_memory > 0
    assert t.xml.lstrip().startswith("<?xml")
