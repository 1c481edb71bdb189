"""A simulated ping-pong on a platform: how `hpcscope sim calibrate` checks its own fit.

Runs the p2p benchmark (built with smpicc, bench/mpi/p2p.c) as two simulated ranks placed
as a p2p placement class is (SimMachine.pair_hosts), latency test only, with the same
smpirun settings as `--on sim` runs (launch/sim.py machine_options), and returns the
median one-way time per message size. Cost: a few seconds of CPU for 0 B to 4 MiB.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from hpcscope import build, safe_write
from hpcscope.launch.sim import machine_options
from hpcscope.launch.smpi_command import smpirun_command
from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.sim_machine import SimMachine

ITERATIONS = 20  # per block; simulated times of one size barely vary


class PingPongError(RuntimeError):
    """The simulation did not give a latency per size; the message says why."""


def simulated_latency(
    machine: SimMachine, placement: str, smpi: MpiSpec, max_size: int, timeout_s: float = 600
) -> dict[int, float]:
    """{bytes: median one-way latency (s)} for 0 B and the powers of two up to max_size."""
    program = str(build.find_program(build.build(smpi), "p2p"))
    options = machine_options(machine, program)
    with tempfile.TemporaryDirectory(prefix="hpcscope-pingpong-") as tmp:
        folder = Path(tmp)
        safe_write.write_text(folder / "platform.xml", machine.xml)
        safe_write.write_text(folder / "hostfile", "\n".join(machine.pair_hosts(placement)) + "\n")
        args = ["--tests", "latency", "--max-size", str(max_size)]
        args += ["--iterations", str(ITERATIONS), "--warmup", "2"]
        cmd = smpirun_command(
            program,
            args,
            platform=str(folder / "platform.xml"),
            hostfile=str(folder / "hostfile"),
            np=2,
            options=options,
            smpirun=smpi.mpirun,
        )
        try:
            done = subprocess.run(
                cmd.argv,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                cwd=folder,
                env={**os.environ, **cmd.env},
            )
        except subprocess.TimeoutExpired:
            raise PingPongError(f"the simulated ping-pong took over {timeout_s:.0f} s") from None
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        raise PingPongError(f"the simulated ping-pong failed (exit {done.returncode}): {tail}")
    out: dict[int, float] = {}
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("type") == "sample" and record.get("metric") == "latency":
            out[int(record["params"]["bytes"])] = statistics.median(record["values"]) * 1e-6
    if not out:
        raise PingPongError("the simulated ping-pong printed no latency samples")
    return out
