"""SimGrid for `--on sim`: the newest one found; a newer release built once from its source.

Debian ships SimGrid 3.32, whose SMPI finds each finished eager send by a linear search
(98 % of the simulator at paper scale, docs/simulation.md). Release NEWEST is built from
its published source (the `simgrid` source distribution on PyPI: C++ with SMPI, CMake,
Boost from Debian) into <cache root>/simgrid/<version>/ by `hpcscope build --mpi smpi`,
once per machine (about 12 minutes on 2 cores; the log beside it). Discovery
(machine/mpi.py) takes the newest SimGrid among that cache and PATH, so Debian's stays
the fallback and nothing else builds SimGrid: `run --on sim` and the tests use whichever
is there. The benchmark build cache is keyed by the SimGrid version (build.build_dir),
and every simulated launch is tagged with it (mpi_version) and the report's banner names it.

Changes to the release are kept here, upstream style (PATCHES: the file, the release's
text, ours and why), applied to the extracted source before CMake. A build records its
name, <version>+<PATCH_LEVEL>, in its marker; that name is the version discovery reports,
so records say which simulator ran, and a build made before the patches is brought up to
date by the next `hpcscope build --mpi smpi` (an incremental build: about 1 minute when
the build folder is still there).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hpcscope import safe_write
from hpcscope.paths import cache_root

NEWEST = "4.1"
# SMPI only: no Python bindings, model checker, sthread, Fortran or documentation, and no
# link-time optimisation (it doubles the link time of libsimgrid on 2 cores).
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-Denable_smpi=ON",
    "-Denable_python=OFF",
    "-Denable_model-checking=OFF",
    "-Denable_sthread=OFF",
    "-Denable_fortran=OFF",
    "-Denable_lto=OFF",
    "-Denable_documentation=OFF",
)
DONE = ".installed"  # written last, holding the build's name: without it, interrupted


@dataclass(frozen=True)
class Patch:
    path: str  # in the source tree
    release: str  # the release's text, replaced once
    ours: str
    why: str


PATCHES = (
    Patch(
        "src/smpi/mpi/smpi_comm.cpp",
        "allgather__ring(&leader, 1, MPI_INT , leaders_map, 1, MPI_INT, this);",
        "allgather__bruck(&leader, 1, MPI_INT, leaders_map, 1, MPI_INT, this);",
        # Comm::init_smp runs once per communicator, inside its first collective whose
        # algorithm is SMP-aware: Open MPI's small-message bcast (knomial intra-node) at
        # 16+ ranks, the MPICH selector's. Its exchange of each rank's node leader was a
        # ring: p(p-1) messages, 16 s of simulator CPU at 1152 ranks for one MPI_Bcast of
        # an int (0.1 s with SMPI's default selector). Bruck's allgather exchanges the
        # same p ints in p log2(p) messages: 0.6 s. What init_smp computes is the same.
        "init_smp's leader exchange in O(p log p) messages instead of a ring's O(p^2)",
    ),
    Patch(
        "src/smpi/colls/scatter/scatter-ompi.cpp",
        "int i, rank, size, err = MPI_ERR_OTHER, line, nreqs;",
        "int i, rank, size, err = MPI_SUCCESS, line, nreqs;",
        # scatter__ompi_linear_nb, Open MPI's choice for many mid-size scatters (e.g. 4-7
        # ranks from 32 KiB to 1 MiB), leaves its error code at MPI_ERR_OTHER until the
        # root copies its own block: with MPI_IN_PLACE (lanecoll's lane bcast) or a root
        # other than 0 the root gives up after its first block, sends nothing, and the
        # other ranks wait for ever (SimGrid: "Stalling SMPI instance"). The lane bcast
        # of the default `run coll --on sim` lost every count from 100p on.
        "scatter__ompi_linear_nb's root no longer stops before sending",
    ),
    # The allgathers Open MPI's rules pick (allgather__ompi: pair at 2 ranks, rdb, bruck,
    # neighbor exchange, ring) and derived datatypes whose send and receive sides differ,
    # as lanecoll passes them (a block resized to a larger extent received from plain
    # ints; a strided column resized to one block's extent, in place). What each must
    # deliver is checked by benchmarks/smpi_allgather.
    Patch(
        "src/smpi/colls/allgather/allgather-rdb.cpp",
        """    send_offset = rank_tree_root * send_chunk;
    recv_offset = dst_tree_root * recv_chunk;

    if (dst < num_procs) {
      Request::sendrecv(recv_ptr + send_offset, curr_count, send_type, dst,""",
        """    send_offset = rank_tree_root * recv_chunk;
    recv_offset = dst_tree_root * recv_chunk;

    if (dst < num_procs) {
      Request::sendrecv(recv_ptr + send_offset, curr_count, recv_type, dst,""",
        # After the local copy every block rdb forwards lies in the receive buffer, as
        # recv_type elements (curr_count counts them; MPICH's recursive doubling works in
        # recvtype units throughout). 4.1 placed the blocks it sends at rank_tree_root
        # send extents and described them with send_type: wrong data as soon as the two
        # types differ (lanecoll's lane allgather at 12 and 16 ranks).
        "allgather__rdb forwards receive-buffer blocks by recv_type, at recv_type offsets",
    ),
    Patch(
        "src/smpi/colls/allgather/allgather-ring.cpp",
        "  extent = send_type->get_extent();",
        "  extent = recv_type->get_extent();",
        # The extent places block src of the receive buffer, a recv_type quantity: with
        # send_type's, every block but rank 0's landed at the wrong offset when the types'
        # extents differ. ompi_neighborexchange falls back to this ring on odd sizes.
        "allgather__ring places received blocks by recv_type's extent, not send_type's",
    ),
    Patch(
        "src/smpi/colls/allgather/allgather-pair.cpp",
        "  extent = send_type->get_extent();",
        "  extent = recv_type->get_extent();",
        # The same defect as the ring's: Open MPI's choice for two ranks.
        "allgather__pair places received blocks by recv_type's extent, not send_type's",
    ),
    Patch(
        "src/smpi/colls/allgather/allgather-bruck.cpp",
        """  recv_extent = recv_type->get_extent();

  count = recv_count;

  unsigned char* tmp_buff = smpi_get_tmp_sendbuffer(num_procs * recv_count * recv_extent);

  // perform a local copy
  Datatype::copy(send_ptr, send_count, send_type, tmp_buff, recv_count, recv_type);
  while (pof2 <= (num_procs / 2)) {
    src = (rank + pof2) % num_procs;
    dst = (rank - pof2 + num_procs) % num_procs;

    Request::sendrecv(tmp_buff, count, recv_type, dst, tag,
                  tmp_buff + count * recv_extent, count, recv_type,
                  src, tag, comm, &status);
    count *= 2;
    pof2 *= 2;
  }

  remainder = num_procs - pof2;
  if (remainder) {
    src = (rank + pof2) % num_procs;
    dst = (rank - pof2 + num_procs) % num_procs;

    Request::sendrecv(tmp_buff, remainder * recv_count, recv_type, dst, tag,
                  tmp_buff + count * recv_extent, remainder * recv_count,
                  recv_type, src, tag, comm, &status);
  }

  Request::sendrecv(tmp_buff, (num_procs - rank) * recv_count, recv_type, rank,
                tag, recv_ptr + rank * recv_count * recv_extent,
                (num_procs - rank) * recv_count, recv_type, rank, tag, comm,
                &status);

  if (rank)
    Request::sendrecv(tmp_buff + (num_procs - rank) * recv_count * recv_extent,
                  rank * recv_count, recv_type, rank, tag, recv_ptr,
                  rank * recv_count, recv_type, rank, tag, comm, &status);""",
        """  recv_extent = recv_type->get_extent();
  // tmp_buff holds the blocks packed, recv_size bytes per recv_type element: recv_type's
  // data may reach beyond count * extent (a strided column resized to one block's
  // extent), and SMPI has no true extent to size a buffer of recv_type elements by.
  const MPI_Aint recv_size = recv_type->size();

  count = recv_count;

  unsigned char* tmp_buff = smpi_get_tmp_sendbuffer(num_procs * recv_count * recv_size);

  // perform a local copy
  Datatype::copy(send_ptr, send_count, send_type, tmp_buff, recv_count * recv_size, MPI_BYTE);
  while (pof2 <= (num_procs / 2)) {
    src = (rank + pof2) % num_procs;
    dst = (rank - pof2 + num_procs) % num_procs;

    Request::sendrecv(tmp_buff, count * recv_size, MPI_BYTE, dst, tag,
                  tmp_buff + count * recv_size, count * recv_size, MPI_BYTE,
                  src, tag, comm, &status);
    count *= 2;
    pof2 *= 2;
  }

  remainder = num_procs - pof2;
  if (remainder) {
    src = (rank + pof2) % num_procs;
    dst = (rank - pof2 + num_procs) % num_procs;

    Request::sendrecv(tmp_buff, remainder * recv_count * recv_size, MPI_BYTE, dst, tag,
                  tmp_buff + count * recv_size, remainder * recv_count * recv_size,
                  MPI_BYTE, src, tag, comm, &status);
  }

  Request::sendrecv(tmp_buff, (num_procs - rank) * recv_count * recv_size, MPI_BYTE, rank,
                tag, recv_ptr + rank * recv_count * recv_extent,
                (num_procs - rank) * recv_count, recv_type, rank, tag, comm,
                &status);

  if (rank)
    Request::sendrecv(tmp_buff + (num_procs - rank) * recv_count * recv_size,
                  rank * recv_count * recv_size, MPI_BYTE, rank, tag, recv_ptr,
                  rank * recv_count, recv_type, rank, tag, comm, &status);""",
        # 4.1 sized its temporary buffer as num_procs * recv_count extents of recv_type and
        # exchanged recv_type elements in it: a type whose data reaches beyond its extent
        # (lanecoll's strided column) wrote past the buffer (segfault, or a corrupted heap:
        # "munmap_chunk(): invalid pointer"). MPICH sizes such a buffer by the true extent
        # (true_extent + (n - 1) * extent); SMPI's MPI_Type_get_true_extent is the extent,
        # so the blocks travel packed instead: the same bytes, so the same simulated
        # messages, unpacked into recv_type by the final copies.
        "allgather__bruck's temporary buffer holds packed bytes, not recv_type elements it overran",
    ),
    Patch(
        "src/smpi/colls/gather/gather-ompi.cpp",
        """    size_t dsize, block_size;
    if (rank == root) {
        dsize= rdtype->size();
        block_size = dsize * rcount;
    } else {
        dsize=sdtype->size();
        block_size = dsize * scount;
    }

     if (block_size > 92160){
     first_segment_size = 32768;
     }else{
     first_segment_size = 1024;
     }
""",
        """    // No first segment: every block travels whole after the root's zero-byte message,
    // as Open MPI's rules run linear_sync (segment size 0).
""",
        # gather__ompi_linear_sync, Open MPI's choice for 4-7 ranks from 256 KiB per block
        # (2-3 ranks from 128 KiB), split each block in two: a first segment of 1 KiB or
        # 32 KiB counted in each side's own type (the root's rdtype elements, a sender's
        # sdtype elements), then the rest. When the two types differ but carry the same data
        # (lanecoll's lane gather: the root receives one strided column of N blocks, the
        # others send N blocks of ints), the root's first segment is its one whole element
        # and its second receive has 0 elements, while each sender sends 32 KiB and then
        # the rest: MPI_ERR_TRUNCATE (coll gather lane from 656p at 5 x 4). The segment
        # sizes come from Open MPI's old decision function (before 4.1); 4.1's rules pass
        # segment size 0, so Open MPI 4.1 does not split (forcing linear_sync with
        # coll_tuned_gather_algorithm_segmentsize 32768 truncates the same: open-mpi/ompi
        # issue 134, "won't fix": pipelined collectives need equal type signatures per
        # message).
        "gather__ompi_linear_sync sends each block whole, as Open MPI 4.1's rules run it",
    ),
)
PATCH_LEVEL = "hpcscope.4"  # raise it when PATCHES change: older builds are rebuilt
ALLGATHERS_FIXED = 3  # the first patch level with the allgather patches above
GATHER_FIXED = 4  # the first with gather__ompi_linear_sync's (lane gather from 256 KiB)


def patch_level(version: str) -> int:
    """'4.1+hpcscope.3' -> 3: the PATCHES a build carries; 0 for a SimGrid built elsewhere
    ('3.32', Debian's) or before the patches ('4.1')."""
    match = re.search(r"\+hpcscope\.(\d+)$", version)
    return int(match.group(1)) if match else 0


def allgathers_fixed(version: str) -> bool:
    """Whether SimGrid `version` (as discovery reports it) delivers the right data from
    every allgather Open MPI's rules pick when send and receive types differ (lanecoll's
    decompositions); the launch keeps forcing NTSLR where not (launch/smpi_command.py)."""
    return patch_level(version) >= ALLGATHERS_FIXED


def gather_fixed(version: str) -> bool:
    """Whether SimGrid `version`'s gather__ompi_linear_sync sends each block whole, as Open
    MPI 4.1 runs it; the launch forces another linear gather where not (smpi_command.py)."""
    return patch_level(version) >= GATHER_FIXED


class SimGridBuildError(Exception):
    """Fetching or building SimGrid failed; the message names the step and the log."""


def version_key(version: str) -> tuple[int, ...]:
    """'3.32' -> (3, 32); '4.1' -> (4, 1); unknown -> ()."""
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def build_name(version: str) -> str:
    return f"{version}+{PATCH_LEVEL}"


def root() -> Path:
    return cache_root() / "simgrid"


def prefix(version: str) -> Path:
    return root() / version


def cached() -> list[tuple[str, Path]]:
    """(build name, install prefix) of every complete SimGrid built here, newest first. The
    name is the marker's: "4.1+hpcscope.2", or a bare "4.1" for a build without patches."""
    if not root().is_dir():
        return []
    found = []
    for p in root().iterdir():
        if (p / DONE).exists() and (p / "bin" / "smpirun").exists() and version_key(p.name):
            name = (p / DONE).read_text(errors="replace").strip()
            found.append((name if name.startswith(p.name) else p.name, p))
    return sorted(found, key=lambda vp: version_key(vp[0]), reverse=True)


def apply_patches(source: Path) -> None:
    """PATCHES on an extracted source tree; one already applied is left as it is. Raises
    SimGridBuildError when a file no longer holds the release's text (another release)."""
    for patch in PATCHES:
        path = source / patch.path
        text = path.read_text()
        if patch.ours in text:
            continue
        if text.count(patch.release) != 1:
            raise SimGridBuildError(
                f"{patch.path} of this SimGrid does not hold the text hpcscope changes "
                f"({patch.why}): PATCHES in machine/simgrid.py are for release {NEWEST}"
            )
        safe_write.write_text(path, text.replace(patch.release, patch.ours))


def _run(argv: list[str], log: Path, step: str, cwd: Path | None = None) -> None:
    with safe_write.open_append(log) as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise SimGridBuildError(
            f"SimGrid {step} failed (exit {done.returncode}); the last lines of {log}:\n"
            + "\n".join(tail)
        )


def build_release(
    version: str = NEWEST, jobs: int = 2, say: Callable[[str], None] = lambda _: None
) -> Path:
    """The install prefix of SimGrid `version`, built from its source distribution when it
    is not cached yet (download with pip, CMake configure, build, install). Raises
    SimGridBuildError."""
    target = prefix(version)
    if (target / DONE).exists() and (target / DONE).read_text().strip() == build_name(version):
        return target
    if not shutil.which("cmake"):
        raise SimGridBuildError("cmake is not installed: apt-get install cmake")
    work = safe_write.ensure_dir(cache_root(), f"simgrid/build-{version}")
    log = root() / f"build-{version}.log"
    safe_write.write_text(log, "")
    say(
        f"building SimGrid {build_name(version)} from its source, once (about 12 minutes on "
        f"2 cores, 1 when updating an earlier build; log: {log})"
    )
    archive = next(work.glob(f"simgrid-{version}.tar.gz"), None)
    if archive is None:
        _run(
            [sys.executable, "-m", "pip", "download", f"simgrid=={version}", "--no-deps",
             "--no-binary", ":all:", "-d", str(work)],
            log,
            "download (pip download simgrid, the source distribution)",
        )  # fmt: skip
        archive = next(work.glob(f"simgrid-{version}.tar.gz"), None)
    if archive is None:
        raise SimGridBuildError(f"pip gave no simgrid-{version}.tar.gz; see {log}")
    source = work / f"simgrid-{version}"
    if not source.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
    apply_patches(source)
    (target / DONE).unlink(missing_ok=True)  # the prefix is being replaced
    objects = safe_write.ensure_dir(work, "build")
    # cwd: SimGrid's configure copies its stack-growth probe to "test_stackgrowth" relative
    # to the working directory and removes it from the build folder only.
    _run(
        ["cmake", "-S", str(source), "-B", str(objects), f"-DCMAKE_INSTALL_PREFIX={target}",
         *CMAKE_OPTIONS],
        log,
        "configure (cmake)",
        cwd=objects,
    )  # fmt: skip
    _run(["cmake", "--build", str(objects), "-j", str(jobs)], log, "build")
    _run(["cmake", "--install", str(objects)], log, "install")
    safe_write.write_text(target / DONE, build_name(version) + "\n")
    return target
