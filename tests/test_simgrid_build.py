"""Which SimGrid `--on sim` uses (issue 30): the newest of the cached builds and PATH's.

The cached builds here are stand-ins (an smpirun that prints its version), so nothing is
downloaded or compiled; the real build is `hpcscope build --mpi smpi`
(machine/simgrid.py), measured in docs/simulation.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hpcscope.machine import mpi as mpi_mod
from hpcscope.machine import simgrid


def fake_install(cache: Path, version: str, complete: bool = True) -> Path:
    prefix = cache / "simgrid" / version
    (prefix / "bin").mkdir(parents=True)
    for name in ("smpicc", "smpirun"):
        tool = prefix / "bin" / name
        tool.write_text(f"#!/bin/sh\necho 'SimGrid version {version}'\n")
        tool.chmod(0o755)
    if complete:
        (prefix / simgrid.DONE).write_text(simgrid.build_name(version))
    return prefix


def test_versions_order_as_numbers():
    assert simgrid.version_key("3.32") < simgrid.version_key("4.1") < simgrid.version_key("4.10")
    assert simgrid.version_key("unknown") == ()


def test_discovery_takes_the_newest_complete_build(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    newest = fake_install(tmp_path, "4.1")
    fake_install(tmp_path, "9.0", complete=False)  # an interrupted build: not used
    assert [v for v, _ in simgrid.cached()] == [simgrid.build_name("4.1")]
    [spec] = mpi_mod.discover("smpi")
    assert spec.version == simgrid.build_name("4.1")
    assert spec.mpicc == str(newest / "bin" / "smpicc")
    assert simgrid.build_release("4.1") == newest  # cached: nothing is built again


@pytest.mark.skipif(not shutil.which("smpirun"), reason="no SimGrid on PATH")
def test_an_older_cached_build_leaves_the_one_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    fake_install(tmp_path, "1.0")
    [spec] = mpi_mod.discover("smpi")
    assert spec.mpirun == shutil.which("smpirun") and spec.version != "1.0"


def test_a_build_names_its_patch_level_and_an_unpatched_one_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    prefix = fake_install(tmp_path, "4.1")
    [spec] = mpi_mod.discover("smpi")
    assert spec.version == f"4.1+{simgrid.PATCH_LEVEL}"  # what the records are tagged with
    assert simgrid.version_key(spec.version) > simgrid.version_key("4.1")
    assert simgrid.build_release("4.1") == prefix  # up to date: nothing is built
    # a build from before the patches ("4.1" in its marker) is still found and used ...
    (prefix / simgrid.DONE).write_text("4.1\n")
    [spec] = mpi_mod.discover("smpi")
    assert spec.version == "4.1"
    # ... and `hpcscope build --mpi smpi` builds it again (here: stopped before cmake)
    monkeypatch.setattr(simgrid.shutil, "which", lambda name: None)
    with pytest.raises(simgrid.SimGridBuildError, match="cmake is not installed"):
        simgrid.build_release("4.1")


def test_the_patch_level_says_whether_the_allgathers_are_fixed():
    """What launch/smpi_command.default_overrides asks: NTSLR stays forced on SimGrids
    without the allgather patches (Debian's, and builds from before them)."""
    assert simgrid.patch_level(simgrid.build_name("4.1")) == int(simgrid.PATCH_LEVEL.split(".")[1])
    assert [simgrid.patch_level(v) for v in ("3.32", "4.1", "4.1+hpcscope.2", "unknown")] == [
        0, 0, 2, 0
    ]  # fmt: skip
    assert simgrid.allgathers_fixed(simgrid.build_name(simgrid.NEWEST))
    assert not simgrid.allgathers_fixed("4.1+hpcscope.2") and not simgrid.allgathers_fixed("3.32")


def test_patches_apply_once_and_refuse_another_release(tmp_path):
    # each file below holds one patch's text: one patch per file (several changes to one
    # file are one patch, as the allgather ones are)
    assert len({p.path for p in simgrid.PATCHES}) == len(simgrid.PATCHES)
    for patch in simgrid.PATCHES:
        (tmp_path / patch.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / patch.path).write_text(f"before\n  {patch.release}\nafter\n")
    simgrid.apply_patches(tmp_path)
    simgrid.apply_patches(tmp_path)  # applied already: unchanged
    for patch in simgrid.PATCHES:
        assert (tmp_path / patch.path).read_text() == f"before\n  {patch.ours}\nafter\n"
        (tmp_path / patch.path).write_text("another release\n")
    with pytest.raises(simgrid.SimGridBuildError, match="for release 4.1"):
        simgrid.apply_patches(tmp_path)


@pytest.mark.skipif(
    not (simgrid.root() / f"build-{simgrid.NEWEST}" / f"simgrid-{simgrid.NEWEST}").is_dir(),
    reason="SimGrid's source is not extracted here (hpcscope build --mpi smpi)",
)
def test_the_patches_match_the_release_source():
    """The release's own source holds each text PATCHES changes, or our change."""
    source = simgrid.root() / f"build-{simgrid.NEWEST}" / f"simgrid-{simgrid.NEWEST}"
    for patch in simgrid.PATCHES:
        text = (source / patch.path).read_text()
        assert text.count(patch.release) + text.count(patch.ours) == 1
