"""Shared test helpers: run the real `hpcscope` CLI in a scratch folder with its own store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HPCSCOPE = [sys.executable, "-m", "hpcscope.cli"]


def have(program: str) -> bool:
    return shutil.which(program) is not None


requires_openmpi = pytest.mark.skipif(not have("mpirun.openmpi"), reason="Open MPI not installed")
requires_mpich = pytest.mark.skipif(not have("mpirun.mpich"), reason="MPICH not installed")


class Cli:
    """Runs `hpcscope` as a user would, with --db in a temporary folder."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.db = folder / "hpcscope.db"

    def argv(self, *args: str) -> list[str]:
        return [*HPCSCOPE, "--db", str(self.db), *args]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("HPCSCOPE_CACHE", str(REPO / ".cache"))
        env["COLUMNS"] = "160"
        return env

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(*args),
            cwd=self.folder,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, *args: str) -> subprocess.Popen:
        """The CLI in the background, taking Ctrl-C (SIGINT) as a terminal's foreground job
        does (interactive_sigint)."""
        return subprocess.Popen(
            self.argv(*args),
            cwd=self.folder,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interactive_sigint,
        )


def interactive_sigint() -> None:
    """SIGINT back to its default before exec. A CI runner may start the tests as a
    background job of a non-interactive shell, which ignores SIGINT; the child inherits
    that and Python then never turns SIGINT into KeyboardInterrupt ("if the parent has not
    changed it"), so the Ctrl-C tests would test the runner instead of hpcscope."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)
