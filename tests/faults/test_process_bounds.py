"""Every process a run starts dies with it; ranks beyond the machine are refused
(issue 43, finding 7 and part 4).

- iperf3's jobs run it under GNU timeout; plain `timeout` puts itself in a process group
  of its own, so killing the job's group (a time limit, Ctrl-C) left iperf3 running.
  Real iperf3 here: the job is started as the local backend starts it
  (launch/command.start), killed as it kills it (command.kill_group), and then nothing
  of its session is left.
- `run coll --ranks 100000` on this machine is refused at plan time with the numbers.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import have

from hpcscope.launch import command
from hpcscope.suites.node_refs import iperf3_jobs


def _session_members(sid: int) -> list[str]:
    """'pid comm' of every live process of session `sid` (zombies left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # field 6: session; 3: state
            found.append(f"{stat.parent.name} {comm}")
    return found


@pytest.mark.skipif(not have("iperf3") or not have("timeout"), reason="needs iperf3")
def test_a_killed_iperf3_job_leaves_no_process() -> None:
    (job,) = iperf3_jobs([("tcp", 131072, 1)], seconds=30, reps=1, tags={})
    proc = command.start(list(job.program), dict(job.env))
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            names = " ".join(_session_members(proc.pid))
            if names.count("iperf3") >= 2:  # server and client are up
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"iperf3 did not start: {_session_members(proc.pid)}")
        assert names.count("timeout") == 2, names
        command.kill_group(proc, grace_s=3.0)
        deadline = time.monotonic() + 5
        while _session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session_members(proc.pid) == [], "left running after the job was killed"
    finally:
        for line in _session_members(proc.pid):
            os.kill(int(line.split()[0]), 9)
        proc.wait(timeout=5)


def test_ranks_beyond_the_machine_are_refused_with_the_numbers(cli) -> None:
    done = cli("run", "coll", "--ranks", "100000", "--dry-run")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    cores = os.cpu_count()
    assert "--ranks 100000" in lines[0] and "cores" in lines[0], lines[0]
    assert "Traceback" not in done.stderr and "unexpected error" not in done.stderr
    assert cores is not None
