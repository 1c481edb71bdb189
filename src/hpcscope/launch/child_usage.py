"""Run a command and write what it cost: wall time, CPU time and peak memory (RSS).

    python -m hpcscope.launch.child_usage OUT.json -- argv...

Why a wrapper: the launch loop (local.run_job) waits for its process itself, and
getrusage(RUSAGE_CHILDREN) in the parent gives the largest RSS of *any* child so far, not
of this launch. Here os.wait4 returns the child's own usage, which on Linux includes the
processes it waited for (smpirun is a shell script that runs the simulator as its child).
stdin/stdout/stderr are inherited, so records still stream through the caller's pipe; the
exit code is the child's (128 + signal when it was killed). Cost: one Python start-up
(about 50 ms) per launch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m hpcscope.launch.child_usage OUT.json -- argv...", file=sys.stderr)
        return 2
    out, command = argv[0], argv[2:]
    start = time.monotonic()
    proc = subprocess.Popen(command)
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
    code = os.waitstatus_to_exitcode(status)
    returncode = code if code >= 0 else 128 - code
    with open(out, "w") as fh:
        json.dump(
            {
                "wall_time_s": wall,
                "cpu_time_s": usage.ru_utime + usage.ru_stime,
                "peak_rss_bytes": usage.ru_maxrss * 1024,  # Linux reports KiB
                "returncode": returncode,
            },
            fh,
        )
    return returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
