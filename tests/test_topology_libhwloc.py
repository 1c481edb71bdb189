"""Topology from hwloc's library (ctypes), so a machine with an MPI but without the hwloc
tools works (issue 33): the library and lstopo give the same topology, every local command
works with lstopo hidden from PATH, and with neither the error names the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Cli, requires_openmpi

from hpcscope.cli.commands import main as hpcscope
from hpcscope.figures import common as figcommon
from hpcscope.machine import hwloc_lib
from hpcscope.machine import topology as topomod
from hpcscope.machine.topology import Topology, TopologyError

FIXTURES = Path(__file__).parent / "fixtures" / "topo"


def _library_loads() -> bool:
    try:
        hwloc_lib.load_library()
    except hwloc_lib.HwlocLibraryError:
        return False
    return True


HAVE_LSTOPO = bool(shutil.which("lstopo-no-graphics") or shutil.which("lstopo"))
requires_library = pytest.mark.skipif(not _library_loads(), reason="libhwloc not loadable")
requires_lstopo = pytest.mark.skipif(not HAVE_LSTOPO, reason="hwloc's lstopo not installed")


def _no_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(timeout_s: float = 0) -> str:
        raise hwloc_lib.HwlocLibraryError("the hwloc library (libhwloc) could not be loaded (test)")

    monkeypatch.setattr(hwloc_lib, "topology_xml", fail)


def _lstopo_topology(monkeypatch: pytest.MonkeyPatch) -> Topology:
    with monkeypatch.context() as m:
        _no_library(m)
        return Topology.local()


def _object_types(xml: str) -> Counter[str]:
    return Counter(e.get("type", "") for e in ET.fromstring(xml).iter("object"))


def _same(a: Topology, b: Topology) -> None:
    assert a.summary() == b.summary()
    assert a.describe() == b.describe()
    assert a.to_dict() == b.to_dict()


@pytest.fixture(scope="module")
def path_without_lstopo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH like this machine's, less lstopo*: a folder of symlinks to every program in
    the usual places except hwloc's lstopo, lstopo-no-graphics, lstopo-*."""
    folder = tmp_path_factory.mktemp("bin-without-lstopo")
    dirs = [str(Path(sys.executable).parent)]  # the venv's bin (hpcscope, python)
    dirs += [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    dirs += ["/usr/local/bin", "/usr/bin", "/bin"]
    for d in dirs:
        try:
            entries = sorted(Path(d).iterdir())
        except OSError:
            continue
        for entry in entries:
            link = folder / entry.name
            if entry.name.startswith("lstopo") or link.exists() or link.is_symlink():
                continue
            link.symlink_to(entry)
    return str(folder)


# ----- (a) the library and lstopo give the same topology ------------------------------


@requires_library
@requires_lstopo
def test_library_and_lstopo_give_the_same_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    from_library = Topology.from_xml(hwloc_lib.topology_xml())
    from_lstopo = _lstopo_topology(monkeypatch)
    _same(from_library, from_lstopo)
    assert from_library.pus and from_library.cores and from_library.packages
    assert from_library.numa_nodes and from_library.caches
    # The same hwloc objects, I/O included (PCI devices, bridges, OS devices: the NICs).
    assert _object_types(from_library.xml) == _object_types(from_lstopo.xml)


@requires_library
def test_local_uses_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_lstopo(library_problem: str) -> str:
        raise AssertionError(f"lstopo was run although the library loads: {library_problem}")

    monkeypatch.setattr(topomod, "_lstopo_xml", no_lstopo)
    t = Topology.local()
    assert t.pus and t.total_memory > 0
    assert t.xml.lstrip().startswith("<?xml")


@requires_library
def test_child_and_in_process_discovery_agree() -> None:
    """The child process writes what the library exports in this process."""
    child = Topology.from_xml(hwloc_lib.topology_xml())
    here = Topology.from_xml(hwloc_lib.discover_in_process())
    _same(child, here)


@requires_lstopo
def test_failing_child_falls_back_to_lstopo(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library child that dies (a crashing plugin, say) costs only the child."""
    monkeypatch.setattr(hwloc_lib.sys, "executable", shutil.which("false") or "/bin/false")
    with pytest.raises(hwloc_lib.HwlocLibraryError, match="failed"):
        hwloc_lib.topology_xml()
    t = Topology.local()
    assert t.pus and "lstopo" in t.xml


@requires_library
def test_library_honours_hwloc_xmlfile(monkeypatch: pytest.MonkeyPatch) -> None:
    path = FIXTURES / "lcc3_2x6x2.xml"
    monkeypatch.setenv("HWLOC_XMLFILE", str(path))
    t = Topology.from_xml(hwloc_lib.topology_xml())
    assert (len(t.packages), len(t.cores), len(t.pus)) == (2, 12, 24)
    assert t.summary() == Topology.from_file(str(path)).summary()


@requires_lstopo
def test_lstopo_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    t = _lstopo_topology(monkeypatch)
    assert t.pus and t.cores
    assert "lstopo" in t.xml  # ProcessName: the program wrote it


# ----- (b), (c) the CLI with lstopo hidden ------------------------------------------------


@requires_library
@requires_lstopo
def test_topo_without_lstopo_is_the_same(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, path_without_lstopo: str
) -> None:
    with_lstopo = cli("topo"), cli("topo", "--json")
    monkeypatch.setenv("PATH", path_without_lstopo)
    assert shutil.which("lstopo") is None and shutil.which("lstopo-no-graphics") is None
    without = cli("topo"), cli("topo", "--json")
    for a, b in zip(with_lstopo, without, strict=True):
        assert a.returncode == 0, a.stderr
        assert b.returncode == 0, b.stderr
        assert "lstopo" not in b.stderr
    assert without[0].stdout == with_lstopo[0].stdout
    assert "Placement classes for two ranks" in without[0].stdout
    assert json.loads(without[1].stdout) == json.loads(with_lstopo[1].stdout)


@requires_library
@requires_openmpi
def test_run_p2p_dry_run_without_lstopo(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, path_without_lstopo: str
) -> None:
    wrapper = shutil.which("mpicc.openmpi")
    assert wrapper is not None
    monkeypatch.setenv("PATH", path_without_lstopo)
    # The wrapper by its real path: found through the PATH of symlinks, CMake would see
    # another compiler than the shared build cache's, configure it afresh and cache make
    # and cmake from that temporary folder, breaking every later build.
    done = cli("run", "p2p", "--dry-run", "--quick", "--mpi", wrapper)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "openmpi/core/r1" in done.stdout + done.stderr
    assert "lstopo" not in done.stderr


def test_drawing_is_skipped_without_lstopo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figcommon.shutil, "which", lambda name: None)
    xml = (FIXTURES / "this_vm.xml").read_text(encoding="utf-8")
    assert figcommon.lstopo_svg(xml) is None


# ----- (d) neither the library nor lstopo: the error names the fix ------------------------


def test_neither_library_nor_lstopo_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_library(monkeypatch)
    monkeypatch.setattr(topomod.shutil, "which", lambda name: None)
    with pytest.raises(TopologyError) as info:
        Topology.local()
    text = str(info.value)
    assert "libhwloc" in text and "lstopo" in text
    assert "apt-get install libhwloc15" in text and "apt-get install hwloc" in text


def test_topo_exits_2_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # rich wraps at the terminal's width
    _no_library(monkeypatch)
    monkeypatch.setattr(topomod.shutil, "which", lambda name: None)
    result = CliRunner().invoke(hpcscope, ["--db", str(tmp_path / "s.db"), "topo"])
    assert result.exit_code == 2, result.output
    assert "apt-get install libhwloc15" in result.output
    assert "apt-get install hwloc" in result.output


def test_unloadable_library_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """No library under any name: the loader says which names it tried."""
    hwloc_lib.load_library.cache_clear()
    monkeypatch.setattr(hwloc_lib.ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(hwloc_lib, "SONAMES", ("libhwloc-does-not-exist.so.99",))
    try:
        with pytest.raises(hwloc_lib.HwlocLibraryError, match="libhwloc-does-not-exist"):
            hwloc_lib.load_library()
    finally:
        hwloc_lib.load_library.cache_clear()


@requires_library
def test_slurm_probe_command_uses_the_library_on_a_node_without_lstopo(
    path_without_lstopo: str,
) -> None:
    """The SLURM topology probe's shell, run here as a compute node would run it: without
    lstopo it prints the library's XML, then the node's facts (issue 33)."""
    from hpcscope.launch import slurm_topology
    from hpcscope.machine import node_facts

    env = dict(os.environ, PATH=path_without_lstopo)
    env.pop("HWLOC_XMLFILE", None)
    proc = subprocess.run(
        ["sh", "-c", slurm_topology.PROBE_COMMAND],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    xml, facts = node_facts.parse_probe_output(proc.stdout, "probe job")
    _same(Topology.from_xml(xml), Topology.from_xml(hwloc_lib.topology_xml()))
    assert facts is not None and "processor" in facts.cpuinfo_text
