"""Ask an smpicc-built program a question (e.g. `coll --list-algorithms`) under smpirun.

Such a program crashes when started on its own (SMPI replaces main), so questions that
need no MPI still go through smpirun: one rank on a one-host platform, written once into
the build directory. Costs about 50 ms.
"""

from __future__ import annotations

from pathlib import Path

from hpcscope import build as build_mod
from hpcscope import safe_write
from hpcscope.launch.smpi_command import single_rank_command
from hpcscope.machine.mpi import MpiSpec
from hpcscope.machine.sim_platform import PlatformSpec, hostfile, platform_xml

# Any valid platform does: the question is answered before (or without) MPI traffic.
PROBE_PLATFORM = PlatformSpec(
    name="probe",
    nodes=1,
    sockets=1,
    cores_per_socket=1,
    lanes=1,
    lane_placement="per-node",
    lane_bandwidth=1e9,
    lane_latency=1e-6,
    intra_bandwidth=1e9,
    intra_latency=1e-6,
    loopback_bandwidth=1e9,
    loopback_latency=1e-6,
    source="a one-core host to run single-rank questions; its numbers are never measured",
)


def probe_command(
    program: str | Path, args: list[str], mpi: MpiSpec
) -> tuple[list[str], dict[str, str]]:
    """(argv, env) running `program args` as one simulated rank."""
    folder = safe_write.ensure_dir(build_mod.build_dir(mpi), "sim-probe")
    platform, hosts = folder / "platform.xml", folder / "hostfile"
    if not platform.exists():
        safe_write.write_text(platform, platform_xml(PROBE_PLATFORM))
        safe_write.write_text(hosts, hostfile(PROBE_PLATFORM, 1))
    cmd = single_rank_command(
        program, args, platform=str(platform), hostfile=str(hosts), smpirun=mpi.mpirun
    )
    return cmd.argv, cmd.env
