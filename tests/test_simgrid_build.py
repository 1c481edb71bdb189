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
        (prefix / simgrid.DONE).write_text(version)
    return prefix


def test_versions_order_as_numbers():
    assert simgrid.version_key("3.32") < simgrid.version_key("4.1") < simgrid.version_key("4.10")
    assert simgrid.version_key("unknown") == ()


def test_discovery_takes_the_newest_complete_build(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    newest = fake_install(tmp_path, "4.1")
    fake_install(tmp_path, "9.0", complete=False)  # an interrupted build: not used
    assert [v for v, _ in simgrid.cached()] == ["4.1"]
    [spec] = mpi_mod.discover("smpi")
    assert spec.version == "4.1" and spec.mpicc == str(newest / "bin" / "smpicc")
    assert simgrid.build_release("4.1") == newest  # cached: nothing is built again


@pytest.mark.skipif(not shutil.which("smpirun"), reason="no SimGrid on PATH")
def test_an_older_cached_build_leaves_the_one_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    fake_install(tmp_path, "1.0")
    [spec] = mpi_mod.discover("smpi")
    assert spec.mpirun == shutil.which("smpirun") and spec.version != "1.0"
