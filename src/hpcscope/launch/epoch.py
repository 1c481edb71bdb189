"""The launch's start as a program can read it: HPCSCOPE_LAUNCH_EPOCH.

The startup benchmark (bench/mpi/startup.c) times "launch to every rank's hello" from the
moment the harness starts mpirun or srun. A job asks for that moment by carrying the
variable in its env with the value PENDING; the local backend (and the lab and sim, which
use its launch loop) replaces it with time.time() just before it starts the process, and
a SLURM task sets it with `date +%s.%N` on the line before its srun (slurm_script). The
value is CLOCK_REALTIME seconds with microseconds, the clock the program compares it to.
"""

from __future__ import annotations

import time

VARIABLE = "HPCSCOPE_LAUNCH_EPOCH"
PENDING = "at-launch"  # the planned value: stamped when the launch starts


def stamp(env: dict[str, str]) -> dict[str, str]:
    """env with the variable set to now, where the job asked for it; else env unchanged."""
    if env.get(VARIABLE) != PENDING:
        return env
    return {**env, VARIABLE: f"{time.time():.6f}"}


def shell_line(env: dict[str, str]) -> list[str]:
    """The SLURM script's line that stamps the variable right before the launch line."""
    if env.get(VARIABLE) != PENDING:
        return []
    return [f"{VARIABLE}=$(date +%s.%N); export {VARIABLE}  # the launch's start (startup)"]


def harness_sample(env: dict[str, str], ended: float, ranks: int) -> dict | None:
    """The launch's wall time as the harness saw it, from the stamp in `env` (stamp's
    result) to `ended` (time.time() when mpirun or srun had exited): the sample
    {phase: "job", from: "launch"} of the startup benchmark, or None for a job that did
    not ask for the stamp. It includes the program's own meta record (bindings, timer
    probe: tens of ms) and MPI_Finalize, which the in-program hello does not."""
    if env.get(VARIABLE) in (None, PENDING):
        return None
    try:
        began = float(env[VARIABLE])
    except ValueError:
        return None
    return {
        "type": "sample",
        "benchmark": "startup",
        "metric": "time",
        "unit": "us",
        "params": {"phase": "job", "ranks": ranks, "from": "launch", "clock": "harness"},
        "values": [round(1e6 * (ended - began), 3)],
        "warmups": 0,
    }
