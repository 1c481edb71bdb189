"""Command lines for SimGrid SMPI: building a benchmark with smpicc, running it with smpirun.

Pure functions: they compose argv and environment and touch nothing; the caller writes
the platform and hostfile (machine/sim_platform.py) and starts the command
(launch/command.py). Checked with SimGrid 3.32 (Debian libsimgrid-dev) and 4.1 (built by
`hpcscope build --mpi smpi`, machine/simgrid.py).

What the defaults are and why:
  --cfg=smpi/coll-selector:ompi      Open MPI's decision rules; SMPI's default allreduce
                                      is a naive reduce + bcast.
  --cfg=smpi/allgather:NTSLR         only on a SimGrid without hpcscope's allgather patches
                                      (Debian's 3.32, a 4.1 build before 4.1+hpcscope.3:
                                      simgrid.allgathers_fixed; default_overrides). Their
                                      allgathers mishandle lanecoll's derived datatypes,
                                      whose send and receive types differ (a block resized
                                      to a larger extent received from plain ints, a
                                      strided column resized to one block's extent): rdb,
                                      ring and pair place or describe blocks by the send
                                      type, bruck overruns its temporary buffer (crashes),
                                      ompi_neighborexchange falls back to that ring on odd
                                      sizes; mvapich2, spreading_simple and loosely_lr
                                      (no ompi rule picks them; unpatched) differ too.
                                      NTSLR (a logical ring) and SMPI's default are right
                                      (12 and 16 ranks, every coll algorithm, 1p..10000p),
                                      so there every MPI_Allgather, native too, is a
                                      p - 1 step ring, not Open MPI's size-based choice.
                                      4.1+hpcscope.3 fixes the five algorithms Open MPI's
                                      rules pick (machine/simgrid.py PATCHES) and keeps the
                                      ompi selector's choice. benchmarks/smpi_allgather
                                      (MPI_Allgather checked element by element with
                                      contiguous, in-place, spaced and column types on
                                      world, node and lane communicators, blocks of 1 to
                                      1000 ints; coll's allgather and allgatherv lane and
                                      hier validated against native at 1p..1000p): on
                                      4.1+hpcscope.3 rdb, bruck, ring, ompi_neighborexchange,
                                      pair (power-of-two sizes, the only ones SMPI allows
                                      it) and NTSLR forced at 3, 4 and 5 nodes x 4 ranks,
                                      and the ompi selector at 8, 12, 16, 20, 32 and 256
                                      ranks, all right; on 3.32 and 4.1+hpcscope.2 only
                                      NTSLR and even-size neighbor exchange were. On
                                      Hydra 8 x 32 (256 ranks) native MPI_Allgather of 1
                                      int per process took 336 us simulated with NTSLR
                                      forced, 9.5 us with the selector's rdb (lane 15.1
                                      and 8.3 us); the coll allgather launch (native,
                                      lane, hier at 1..1000, 3 repetitions) 14.3 s and
                                      6.2 s of simulator wall time.
  --cfg=smpi/gather:ompi_basic_linear only on a SimGrid without the linear_sync patch
                                      (before 4.1+hpcscope.4: simgrid.gather_fixed). Its
                                      gather__ompi_linear_sync, Open MPI's choice on 2-7
                                      ranks from 128-256 KiB per block, splits each block
                                      at a first segment counted in each side's own type;
                                      lanecoll's lane gather (the root receives a strided
                                      column, the others send ints) then aborts with
                                      MPI_ERR_TRUNCATE (coll gather lane at 5 x 4 from
                                      656p, 2 x 4 at 4096p). Open MPI 4.1 runs
                                      linear_sync unsplit; basic_linear is the same
                                      linear gather without the root's sync messages.
  --cfg=smpi/reduce_scatter:mpich    the ompi selector's MPI_Reduce_scatter gives wrong
                                      sums when some counts are 0 (lanecoll's full-lane
                                      reductions with count < processes per node: allreduce
                                      and reduce lane at count 2 and 3 on 4 x 4 differed
                                      from native); MPICH's choice (recursive halving,
                                      pairwise) is right there. Open MPI and MPICH
                                      themselves are right (lanecoll's matrix).
  --cfg=smpi/bw-factor:0:1           neutral piecewise factors (a plain ':1' crashes): the
  --cfg=smpi/lat-factor:0:1          platform's bandwidths and latencies are used as given
                                      instead of SMPI's built-in InfiniBand calibration.
                                      analysis/sim_calibrate.py writes fitted factor strings.
  --cfg=network/crosstraffic:0       no simulated acknowledgement traffic on the reverse
                                      path (with it, sendrecv rings lose bandwidth).
  --cfg=smpi/host-speed:<flop/s>     the speed of the machine running the simulation. SMPI
                                      turns measured CPU time between MPI calls into flops
                                      with it and replays them on the simulated core; set to
                                      the platform's core speed, one second of real compute
                                      becomes one simulated second (no faster/slower core).
  smpirun privatizes globals (each rank gets its own dlopen'ed copy of the binary) by
  default; lanecoll keeps per-process state in globals, so privatize must stay on (with
  -no-privatize lanecoll's algorithms abort: "Actor pid=-1 is gone??"). Only the binary
  is copied: a program linked against liblanecoll.so (the cmake build) crashes the same
  way unless the library is privatized too: privatize_libs=("liblanecoll.so.0",) and
  library_path=<dir with it> (SMPI finds the library through LD_LIBRARY_PATH only).
  LANECOLL_NODE_NAME_SEP='-'         SMPI's MPI_COMM_TYPE_SHARED groups ranks by simulated
                                      host, i.e. by socket on per-socket-lane platforms;
                                      lanecoll groups by processor name (= host name) up to
                                      the last '-' instead: n3-s0 and n3-s1 form node n3.

Cost options (see simulate_computation / shared_malloc_threshold): turning computation
simulation off makes local work free in simulated time, so timings are network-only;
shared malloc makes large buffers share memory between ranks, so their contents are
garbage (never validate results with it). Measured on the Hydra preset, 1152 ranks, one
MPI_Allreduce of 460800 bytes through bench/mpi/coll (2 shared, loaded cores):
  defaults                     54 s CPU, 1:15 wall, 2.57 GB peak RSS, 914.7 us simulated
  simulate-computation:no      54 s CPU (same), same simulated time: SMPI's own
                               collectives do their reductions inside the simulator
  host-speed = core speed      58 s CPU, 921.3 us simulated (benchmark code now costs)
  coll --validate=0            57 s CPU, 1.98 GB
  auto-shared-malloc 64 KiB    crashes (MPI_ERR_TRUNCATE, then SIGSEGV; 6.7 GB RSS): the
                               benchmark's metadata arrays above the threshold get shared
  count 1152 (4.6 KB)          42 s CPU, 0.59 GB: most of the cost is per-rank start-up
                               in the benchmark (hwloc topology load, ~12 ms per rank),
                               not the simulation (an MPI hello: 0.5 s CPU for 1152 ranks).

What makes allgathers slow to simulate: SimGrid 3.32 keeps every detached send (SMPI
sends messages under smpi/send-is-detached-thresh, 64 KiB, eagerly) in one std::list of
the maestro actor and removes each finished one by linear search (later SimGrid versions
keep a set). The cost per message is the number of small sends in flight in the whole
simulation. lanecoll's allgathers pass datatypes whose send and receive extents differ,
so where NTSLR is forced (no patches) it falls back to SMPI's default allgather, which
posts all its sends at once: on full Hydra 33371 sends were pending, the search took 80 % of
the simulator's time (perf and gdb on the running smpimain), and a lane allgather of 100
ints per process cost about 3 minutes of simulator per call (native, a ring with 1152
sends in flight: 45 s).
The lanes suite's k concurrent lane alltoalls meet the same search where SMPI's ompi rules
pick the basic linear alltoall, which also posts every send at once (blocks of 12.8 KB,
k = 32: 98 % of the simulator's time); its multi-collective job took 80 min on full Hydra.
smpi/send-is-detached-thresh:0 (no send detached) is 2.5x faster at 16 x 32 but changes
the model, every sender then waits until its message has arrived: on 8 x 32 native bcast
of 256 ints went from 2.16 to 3.86 us, lane allgather of 100 ints from 90.6 to 93.8 us.
So SMPI's default stays, and the cost is stated instead (docs/simulation.md, "Cost").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcscope.machine import simgrid
from hpcscope.machine.sim_platform import valid_factors

NODE_NAME_SEP = "-"
SHARED_MALLOC_BLOCK = 1 << 26  # bytes per folded block of shared malloc (see smpirun_command)

# SimGrid's INFO chatter (one line per rank and collective selection) costs time and
# drowns errors at thousands of ranks.
QUIET_LOGS = (
    "--log=smpi_colls.thres:warning",
    "--log=smpi_coll.thres:warning",
    "--log=xbt_cfg.thres:warning",
    "--log=smpi_config.thres:warning",
)


@dataclass(frozen=True)
class SmpiOptions:
    coll_selector: str = "ompi"
    bw_factor: str = "0:1"  # SMPI piecewise syntax "0:f0;S1:f1;..."
    lat_factor: str = "0:1"
    crosstraffic: bool = False
    host_speed: float | None = None  # flop/s of the simulating machine; None: omit
    simulate_computation: bool = True
    privatize: bool = True
    shared_malloc_threshold: int | None = None  # bytes; every malloc >= this is shared
    privatize_libs: tuple[str, ...] = ()  # shared libraries with globals, e.g. liblanecoll.so.0
    library_path: str | None = None  # LD_LIBRARY_PATH for privatize_libs
    quiet: bool = True
    # "collective:algorithm" overrides of the selector, passed as --cfg=smpi/<coll>:<alg>;
    # default_overrides(version) adds the allgather and gather ones a SimGrid without
    # hpcscope's patches needs
    algorithm_overrides: tuple[str, ...] = ("reduce_scatter:mpich",)
    extra_cfg: tuple[str, ...] = ()  # more "name:value" settings, passed as --cfg=...


UNFIXED_ALLGATHER = "allgather:NTSLR"  # the one allgather right on an unpatched SMPI
UNFIXED_GATHER = "gather:ompi_basic_linear"  # linear, as linear_sync, without its split


def default_overrides(simgrid_version: str) -> tuple[str, ...]:
    """SmpiOptions.algorithm_overrides for SimGrid `simgrid_version` (MpiSpec.version, e.g.
    '4.1+hpcscope.4' or '3.32'): the defaults, with allgather:NTSLR and
    gather:ompi_basic_linear in front where that SimGrid's allgathers or linear_sync
    gather mishandle lanecoll's datatypes (see the module docstring)."""
    unfixed = [
        *([] if simgrid.allgathers_fixed(simgrid_version) else [UNFIXED_ALLGATHER]),
        *([] if simgrid.gather_fixed(simgrid_version) else [UNFIXED_GATHER]),
    ]
    return (*unfixed, *SmpiOptions.algorithm_overrides)


@dataclass(frozen=True)
class SmpiCommand:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def options_for(core_speed: float, **changes) -> SmpiOptions:
    """SmpiOptions for a platform whose cores run at core_speed flop/s (PlatformSpec's
    core_speed): host-speed equal to it, so measured compute time is injected 1:1."""
    return SmpiOptions(host_speed=core_speed, **changes)


def smpirun_command(
    program: str,
    args: list[str] | tuple[str, ...] = (),
    *,
    platform: str,
    hostfile: str,
    np: int,
    options: SmpiOptions = SmpiOptions(),
    smpirun: str = "smpirun",
) -> SmpiCommand:
    """argv and env to run `program args` on np simulated ranks.

    platform: SimGrid XML path; hostfile: one host per rank (sim_platform.hostfile).
    Raises ValueError for impossible settings (np < 1, malformed factor strings)."""
    if not isinstance(np, int) or np < 1:
        raise ValueError(f"np={np!r}: needs at least one rank")
    for name in ("bw_factor", "lat_factor"):
        if not valid_factors(getattr(options, name)):
            raise ValueError(
                f"{name}={getattr(options, name)!r}: write 'bytes:factor' pairs "
                "separated by ';' starting at 0 bytes, e.g. '0:1' or '0:0.9;65536:1'"
            )
    argv = [smpirun, "-np", str(np), "-platform", str(platform), "-hostfile", str(hostfile)]
    if not options.privatize:
        argv.append("-no-privatize")
    cfg = [
        f"smpi/coll-selector:{options.coll_selector}",
        *(f"smpi/{o}" for o in options.algorithm_overrides),
        f"smpi/bw-factor:{options.bw_factor}",
        f"smpi/lat-factor:{options.lat_factor}",
        f"network/crosstraffic:{1 if options.crosstraffic else 0}",
    ]
    if options.host_speed is not None:
        if not options.host_speed > 0:
            raise ValueError(f"host_speed={options.host_speed!r}: flop/s, must be > 0")
        cfg.append(f"smpi/host-speed:{options.host_speed:g}f")
    if not options.simulate_computation:
        cfg.append("smpi/simulate-computation:no")
    if options.shared_malloc_threshold is not None:
        cfg.append("smpi/shared-malloc:global")
        cfg.append(f"smpi/auto-shared-malloc-thresh:{int(options.shared_malloc_threshold)}")
        # Shared buffers are folded onto one file block by block, one mapping per block:
        # with SMPI's 1 MiB blocks, 1152 ranks x 2 x 46 MB exceed vm.max_map_count (65530)
        # and the simulation aborts ("Could not map folded virtual memory"). 64 MiB blocks
        # make that 2304 mappings.
        cfg.append(f"smpi/shared-malloc-blocksize:{SHARED_MALLOC_BLOCK}")
    if options.privatize_libs:
        cfg.append(f"smpi/privatize-libs:{';'.join(options.privatize_libs)}")
    cfg.extend(options.extra_cfg)
    argv.extend(f"--cfg={c}" for c in cfg)
    if options.quiet:
        argv.extend(QUIET_LOGS)
    argv.append(str(program))
    argv.extend(str(a) for a in args)
    env = {"LANECOLL_NODE_NAME_SEP": NODE_NAME_SEP}
    if options.library_path:
        env["LD_LIBRARY_PATH"] = str(options.library_path)
    return SmpiCommand(argv=argv, env=env)


def smpicc_command(
    repo: str | Path, program: str, output: str | Path, *, smpicc: str = "smpicc"
) -> list[str]:
    """argv building bench/mpi/<program>.c with lanecoll and bench/common into one binary.

    One compile-and-link line rather than cmake: lanecoll is compiled in statically (no
    liblanecoll.so to find at run time, and smpirun's privatization copies one binary per
    rank). The interposition layer (lanecoll/src/pmpi.c) is left out: the benchmarks call
    LC_* and PMPI_* directly. Needs hwloc headers (bench/common/binding.c)."""
    repo = Path(repo)
    lanecoll_src = sorted(p for p in (repo / "lanecoll" / "src").rglob("*.c") if p.name != "pmpi.c")
    common = sorted((repo / "bench" / "common").glob("*.c"))  # what hs_common(_mpi) build
    return [
        smpicc,
        "-std=c11",
        "-O2",
        "-Wall",
        "-Wextra",
        f"-I{repo / 'lanecoll' / 'include'}",
        f"-I{repo / 'lanecoll' / 'src'}",
        f"-I{repo / 'bench' / 'common'}",
        f"-I{repo / 'bench' / 'mpi'}",
        "-o",
        str(output),
        str(repo / "bench" / "mpi" / f"{program}.c"),
        *map(str, common),
        *map(str, lanecoll_src),
        "-lhwloc",
        "-lm",
        "-lpthread",
    ]


LANECOLL_SONAME = "liblanecoll.so.0"


def privatize_lanecoll(program: str | Path) -> dict[str, Any]:
    """SmpiOptions changes for a program of the cmake build (build.py): it links
    <build>/lanecoll/liblanecoll.so.0, whose globals must be privatized per rank (see the
    module docstring). {} when the program has no such library beside its build tree (a
    static smpicc_command build)."""
    libdir = Path(program).resolve().parents[1] / "lanecoll"
    if not (libdir / LANECOLL_SONAME).exists():
        return {}
    return {"privatize_libs": (LANECOLL_SONAME,), "library_path": str(libdir)}


def single_rank_command(
    program: str | Path, args: list[str], *, platform: str, hostfile: str, smpirun: str
) -> SmpiCommand:
    """One rank on a one-host platform (the caller writes a PlatformSpec of 1 node x 1
    core): how a build's questions are asked, e.g. `coll --list-algorithms`. An smpicc
    program cannot run without smpirun (it crashes before main)."""
    return smpirun_command(
        str(program),
        args,
        platform=platform,
        hostfile=hostfile,
        np=1,
        options=SmpiOptions(**privatize_lanecoll(program)),
        smpirun=smpirun,
    )
