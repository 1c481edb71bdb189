"""lanecoll's C tests under real mpirun, for Open MPI and MPICH.

Each case runs lanecoll/tests/run-matrix, which builds lanecoll against one MPI library,
compares every lane and hier algorithm bit for bit with the native collective over many
(process count, node layout) pairs, runs one configuration under AddressSanitizer (Open
MPI), and drives the interposition library on an unmodified MPI program. Both libraries
get the full matrix; MPICH, which busy-polls when oversubscribed, with a preloaded
library that yields on idle polls (lanecoll/tests/yield_when_idle.c). Each takes about
1.5 minutes on a 2-core machine.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

RUN_MATRIX = Path(__file__).resolve().parent.parent / "lanecoll" / "tests" / "run-matrix"

# Minimum configurations each run must check, so a shrinking matrix cannot pass silently.
MIN_CONFIGS = {"openmpi": 200_000, "mpich": 200_000}
COMPILERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_lanecoll_matrix(mpi, tmp_path):
    for tool in (COMPILERS[mpi], "cmake"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    proc = subprocess.run(
        [str(RUN_MATRIX), mpi, str(tmp_path / "build")],
        capture_output=True,
        text=True,
        timeout=1200,  # about 1.5 min each on 2 cores
    )
    summary = re.search(
        rf"^run-matrix {mpi}: configurations=(\d+) failures=(\d+)", proc.stdout, re.M
    )
    assert summary, (
        f"no summary line\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )
    configs, failures = int(summary.group(1)), int(summary.group(2))
    assert failures == 0, f"{failures} failures\n{proc.stderr[-5000:]}"
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert configs >= MIN_CONFIGS[mpi], f"only {configs} configurations checked"
    matrix_lines = [line for line in proc.stdout.splitlines() if line.startswith("matrix:")]
    # every launch ran some configurations through lanecoll's own algorithms
    assert matrix_lines and all(int(re.search(r"ran=(\d+)", l).group(1)) > 0 for l in matrix_lines)
    # the vector collectives (allgatherv, gatherv, scatterv) ran through lanecoll's own
    # algorithms in every launch too (hier runs on every layout)
    assert all(int(re.search(r"vector_ran=(\d+)", l).group(1)) > 0 for l in matrix_lines)
