"""Every subprocess hpcscope starts for a measurement goes through here (ReFrame rule).

One place decides process groups (so a timeout or Ctrl-C kills mpirun *and* its ranks),
environment merging and how failures are reported.
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import IO


def start(argv: list[str], env: dict[str, str], cwd: str | None = None) -> subprocess.Popen:
    """Starts argv in its own session with stdout/stderr as pipes (text, line-buffered)."""
    full_env = dict(os.environ)
    full_env.update(env)
    try:
        return subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=full_env,
            cwd=cwd,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"cannot start {argv[0]}: not found; is it installed "
            "(scripts/install-deps) and built (hpcscope build)?"
        ) from exc


def kill_group(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """SIGTERM to the whole process group, SIGKILL after a grace period."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def drain(stream: IO[str], sink: list[str], limit: int = 200) -> None:
    """Reads a pipe to the end, keeping the last `limit` lines (stderr tails)."""
    for line in stream:
        sink.append(line.rstrip("\n"))
        if len(sink) > limit:
            del sink[0]
