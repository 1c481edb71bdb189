"""Run a command and write what it cost: wall time, CPU time and peak memory.

    python -m hpcscope.launch.child_usage OUT.json -- argv...

Why a wrapper: the launch loop (local.run_job) waits for its process itself, and
getrusage(RUSAGE_CHILDREN) in the parent gives the largest RSS of *any* child so far, not
of this launch. Here os.wait4 returns the child's own usage, which on Linux includes the
processes it waited for (smpirun is a shell script that runs the simulator as its child).
stdin/stdout/stderr are inherited, so records still stream through the caller's pipe; the
exit code is the child's (128 + signal when it was killed). Cost: one Python start-up
(about 50 ms) per launch.

Peak RSS counts a page once per mapping: SMPI's shared malloc maps one 64 MiB block under
every rank's buffers, so a 1152-rank simulation showed 48 GB of RSS on a 23 GB machine
with 2 GB in use. The peak of private (anonymous) memory, RssAnon summed over the child
and its descendants and sampled every SAMPLE_S, is what the simulation itself needed;
shared-malloc blocks come on top, once each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hpcscope import safe_write

SAMPLE_S = 0.5


def process_tree(pid: int) -> list[int]:
    """pid and its descendants (Linux /proc/PID/task/TID/children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in children.read_text().split())
            except (OSError, ValueError):
                continue  # the thread or process ended meanwhile
    return found


def private_bytes(pid: int) -> int:
    """RssAnon of pid and its descendants, in bytes (0 for processes already gone)."""
    total = 0
    for member in process_tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("RssAnon:"):
                total += int(line.split()[1]) * 1024  # kB
    return total


class PrivatePeak(threading.Thread):
    """Samples private_bytes(pid) every SAMPLE_S until stopped; .peak is the largest."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak = pid, 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.peak = max(self.peak, private_bytes(self.pid))
            self.stopped.wait(SAMPLE_S)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m hpcscope.launch.child_usage OUT.json -- argv...", file=sys.stderr)
        return 2
    out, command = argv[0], argv[2:]
    start = time.monotonic()
    proc = subprocess.Popen(command)
    sampler = PrivatePeak(proc.pid)
    sampler.start()
    # A SIGTERM to the process group reaches the child too; do not die before it does,
    # so the usage of a killed launch is written as well.
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, lambda *_: None)
    while True:
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - start
    sampler.stopped.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    returncode = code if code >= 0 else 128 - code
    with safe_write.open_for_write(out) as fh:
        json.dump(
            {
                "wall_time_s": wall,
                "cpu_time_s": usage.ru_utime + usage.ru_stime,
                "peak_rss_bytes": usage.ru_maxrss * 1024,  # Linux reports KiB
                "peak_private_bytes": sampler.peak,
                "returncode": returncode,
            },
            fh,
        )
    return returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
