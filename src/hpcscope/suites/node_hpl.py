"""HPL through Debian's hpcc (HPC Challenge 1.5), beside our OpenBLAS DGEMM (seed 001).

The rule for the problem size N (stated in the run's notes):

  N_mem  = sqrt(0.8 x MemAvailable / 8)      HPL's usual rule: the matrix fills 80% of the
                                             memory; MemAvailable (not MemTotal) so a shared
                                             node is not pushed into swap
  N_time = cbrt(1.5 x budget x R)            the LU's 2/3 N^3 FLOPs take `budget` seconds at
                                             R = half the FP64 peak (what HPL reaches on a
                                             small N); budget 60 s, --quick 0.25 s
  N      = min(N_mem, N_time), rounded down to a multiple of NB = 128 (at least 2 x NB)

So on a large node the time budget decides (the result is HPL at that N, below what the
full-memory N would give: recorded as param n with the rule), on a small one memory does.
One MPI process per core, OpenBLAS single-threaded (HPL's usual MPI-only layout), grid
P x Q with P <= Q as square as the process count allows. hpcc also runs its other tests
(PTRANS, STREAM, RandomAccess, FFT, b_eff) and cannot skip them; they size themselves from
HPL's memory (8 N^2 bytes; RandomAccess at least 2^22 words, each MPI RandomAccess run
bounded at 60 s). Measured on a busy 2-core VM: N = 2048 took 24-45 s in all, N = 4992
took 4.5 min, so --quick keeps N near 2,500 and a full run's hpcc takes minutes.
"""

from __future__ import annotations

import math
import shlex
import shutil
import sys
from dataclasses import dataclass

from hpcscope.plan.job import Job

NB = 128


@dataclass
class HplPlan:
    n: int
    rule: str  # the N rule with its inputs, for the run's notes
    job: Job


def mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def choose_n(mem_bytes: int, peak_gflops: float | None, budget_s: float) -> tuple[int, str]:
    """(N, the rule with its numbers)."""
    rate = (peak_gflops or 10.0) * 0.5 * 1e9
    n_mem = int(math.sqrt(0.8 * mem_bytes / 8)) if mem_bytes else 10**9
    n_time = int((1.5 * budget_s * rate) ** (1 / 3))
    n = max(2 * NB, min(n_mem, n_time) // NB * NB)
    peak_text = f"{peak_gflops:.4g} GFLOP/s" if peak_gflops else "unknown (10 GFLOP/s assumed)"
    rule = (
        f"HPL N = {n}: min(N_mem = sqrt(0.8 x MemAvailable {mem_bytes / 2**30:.1f} GiB / 8) = "
        f"{n_mem}, N_time = cbrt(1.5 x {budget_s:g} s x half the FP64 peak {peak_text}) = "
        f"{n_time}), rounded down to a multiple of NB = {NB}"
    )
    return n, rule


def grid(procs: int) -> tuple[int, int]:
    p = max(d for d in range(1, int(math.sqrt(procs)) + 1) if procs % d == 0)
    return p, procs // p


def hpccinf(n: int, p: int, q: int) -> str:
    """hpcc's input: HPL.dat's 31 lines (one N, one NB, one P x Q grid, the usual
    right-looking Crout panel choices) and the PTRANS lines hpcc adds."""
    lines = [
        "HPLinpack benchmark input file",
        "hpcscope node suite",
        "HPL.out      output file name (if any)",
        "6            device out (6=stdout,7=stderr,file)",
        "1            # of problems sizes (N)",
        f"{n}         Ns",
        "1            # of NBs",
        f"{NB}        NBs",
        "0            PMAP process mapping (0=Row-,1=Column-major)",
        "1            # of process grids (P x Q)",
        f"{p}         Ps",
        f"{q}         Qs",
        "16.0         threshold",
        "1            # of panel fact",
        "2            PFACTs (0=left, 1=Crout, 2=Right)",
        "1            # of recursive stopping criterium",
        "4            NBMINs (>= 1)",
        "1            # of panels in recursion",
        "2            NDIVs",
        "1            # of recursive panel fact.",
        "1            RFACTs (0=left, 1=Crout, 2=Right)",
        "1            # of broadcast",
        "1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)",
        "1            # of lookahead depth",
        "1            DEPTHs (>=0)",
        "2            SWAP (0=bin-exch,1=long,2=mix)",
        "64           swapping threshold",
        "0            L1 in (0=transposed,1=no-transposed) form",
        "0            U  in (0=transposed,1=no-transposed) form",
        "1            Equilibration (0=no,1=yes)",
        "8            memory alignment in double (> 0)",
        "##### This line (no. 32) is ignored (it serves as a separator). ######",
        "0                               Number of additional problem sizes for PTRANS",
        "1200                            values of N",
        "0                               number of additional blocking sizes for PTRANS",
        "40                              values of NB",
    ]
    return "\n".join(lines) + "\n"


def mpirun() -> str:
    """Debian's hpcc is linked with Open MPI: its own mpirun, whatever mpirun points to."""
    return "mpirun.openmpi" if shutil.which("mpirun.openmpi") else "mpirun"


def hpl_job(n: int, procs: int, tags: dict) -> Job:
    p, q = grid(procs)
    inf = hpccinf(n, p, q).replace("'", "")
    script = (
        'd=$(mktemp -d) || exit 2; trap \'rm -rf "$d"\' EXIT INT TERM; cd "$d" || exit 2; '
        f"printf '%s' '{inf}' > hpccinf.txt; "
        # The BLAS hpcc links and the kernel it dispatches to, asked in this environment
        # (machine/blas_probe.py); one stdout line the parser reads, never fatal.
        f"{shlex.quote(sys.executable)} -m hpcscope.machine.blas_probe "
        '"$(command -v hpcc)" 2>/dev/null || true; '
        # Inside a SLURM step, Open MPI's mpirun would start its daemons with a nested
        # srun that waits for the CPUs this step holds: keep it on this node (plm, ras).
        f"{mpirun()} -np {procs} --bind-to core --mca plm ^slurm --mca ras ^slurm hpcc >&2 "
        "|| exit $?; cat hpccoutf.txt"
    )
    return Job(
        suite="node",
        name=f"ref/hpcc/hpl/n{n}/p{procs}",
        program=["sh", "-c", script],
        output="hpcc",
        env={
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        },
        tags={**tags, "reference": "hpcc"},
        timeout_s=600,
    )


def plan_hpl(quick: bool, procs: int, peak_gflops: float | None, tags: dict) -> HplPlan:
    n, rule = choose_n(mem_available(), peak_gflops, 0.25 if quick else 60)
    return HplPlan(n, rule, hpl_job(n, procs, tags))
