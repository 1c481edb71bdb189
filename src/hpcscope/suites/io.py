"""The io suite: MPI-IO bandwidth (IMB-IO's and IOR's MPI-IO questions; docs/startup-and-io.md).

Per MPI library and rank count, `--repeat` launches of bench/mpi/mpiio, interleaved
(repeats outermost): independent and collective writes and reads, to one shared file and
to a file per process, at each transfer size, each rank moving `block` bytes. The
program times open to close (sync before the write clock stops), drops the written file
from the page cache before reading it and reads another rank's block (IOR's -C); it
makes its files in a new private folder under `dir` and removes them.

Beside the numbers the plan states the file system under `dir` (machine/disk_facts.py)
and the ceiling: the disk rate the newest node run of this host measured (its seq
write/read at 1 MiB, `disk_ceiling`, looked up by `run io`), or that none is measured.

plan opts: dir (str, an existing writable folder; `run io` checks it), transfer_sizes
(list[int]), block (int), rank_counts (list[int]; default the cores), repetitions (per
launch, default 3, --quick 1), repeat (launches, default 3, --quick 1), quick,
disk_ceiling ({op: MB/s, run: id} or None).
"""

from __future__ import annotations

from pathlib import Path

from hpcscope.machine import disk_facts
from hpcscope.suites import coll as coll_suite
from hpcscope.suites import rank_sweep
from hpcscope.suites.base import Note, PlanContext, SuitePlan

TRANSFER_SIZES = [64 << 10, 1 << 20, 4 << 20]
QUICK_TRANSFER_SIZES = [1 << 20]
BLOCK, QUICK_BLOCK = 16 << 20, 4 << 20
MIN_TRANSFER, MAX_TRANSFER = 16, 1 << 30  # the program's bounds (bench/mpi/mpiio.c)
MIN_BLOCK, MAX_BLOCK = 16, 64 << 30
JOB_LIMIT_S = 3600


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    if any(m.flavor == "smpi" for m in ctx.mpis):
        raise ValueError(
            "--on sim: SimGrid's SMPI has no file system model for MPI-IO on hpcscope's "
            "platforms; run io on this machine, the lab or SLURM"
        )
    quick = bool(opts.get("quick"))
    sizes = opts.get("transfer_sizes") or (QUICK_TRANSFER_SIZES if quick else TRANSFER_SIZES)
    block = opts.get("block") or (QUICK_BLOCK if quick else BLOCK)
    problem = check_sizes(sizes, block)
    if problem:
        raise ValueError(problem)
    nodes = max(1, int(ctx.nodes_available or 1))
    cores = coll_suite.cores(ctx) * nodes
    counts = opts.get("rank_counts") or [cores]
    reps = opts.get("repetitions") or (1 if quick else 3)
    repeat = opts.get("repeat") or (1 if quick else 3)
    folder = str(Path(opts.get("dir") or ".").absolute())
    result = SuitePlan(notes=notes(folder, opts.get("disk_ceiling"), max(counts) * block))
    result.notes += rank_sweep.oversubscribed("io", counts, cores, "")
    args = [
        "--dir",
        folder,
        "--transfer-sizes",
        ",".join(map(str, sizes)),
        "--block-size",
        str(block),
        "--repetitions",
        str(reps),
    ]
    result.jobs = rank_sweep.jobs(
        ctx, "io", "mpiio", args, counts, cores, repeat, lambda n: min(nodes, n), JOB_LIMIT_S
    )
    return result


def check_sizes(sizes: list[int], block: int) -> str | None:
    """One line naming what is wrong with the sizes, or None."""
    if not MIN_BLOCK <= block <= MAX_BLOCK:
        return f"--block-size {block}: give 16 bytes to 64G, e.g. 16M"
    for t in sizes:
        if not MIN_TRANSFER <= t <= min(MAX_TRANSFER, block):
            return (
                f"--transfer-sizes: {t} bytes is outside 16 B..{min(MAX_TRANSFER, block)} B "
                "(at most --block-size and 1G)"
            )
        if block % t:
            return f"--transfer-sizes: {t} does not divide --block-size {block}; e.g. 64K,1M"
    return None


def notes(folder: str, ceiling: dict | None, file_bytes: int) -> list[Note]:
    """The file system under the folder, what reads measure there, and the disk ceiling."""
    facts = disk_facts.facts(folder)
    out = [Note("info", "io: files under " + disk_facts.text(facts), {"disk_facts": facts})]
    if facts.get("fstype") in ("tmpfs", "ramfs"):
        out.append(
            Note(
                "warning",
                f"io: {folder} is on {facts['fstype']}: its files are memory, so writes and "
                "reads measure memory copies, not a disk",
                {"fstype": facts["fstype"]},
            )
        )
    free = facts.get("free_bytes")
    if free is not None and free < file_bytes:
        raise ValueError(
            f"--dir {folder}: {free >> 20} MiB free, the files need {file_bytes >> 20} MiB "
            "(ranks x --block-size); free space or lower --block-size"
        )
    if ceiling:
        said = ", ".join(
            f"{op} {ceiling[op]:.0f} MB/s" for op in ("write", "read") if op in ceiling
        )
        out.append(
            Note(
                "info",
                f"io: ceiling: the node suite's disk rate (run {ceiling['run']}, sequential, "
                f"1 thread, O_DIRECT, {ceiling.get('block_text', '')}): {said}",
                {"disk_ceiling": ceiling},
            )
        )
    else:
        out.append(
            Note(
                "info",
                "io: ceiling: no node run of this host measured the disk (hpcscope run node "
                "--disk), so no disk rate stands beside these numbers",
                {"disk_ceiling": None},
            )
        )
    return out


def outputs(store, run_id: int, out_dir: Path) -> list[Path]:
    """io_table.{csv,md,txt} and the figure io_bandwidth.{png,svg}."""
    from hpcscope.analysis import io_rows
    from hpcscope.figures import startup_io

    rows = io_rows.rows(store.samples(run_id, benchmark="mpiio"))
    return rank_sweep.write_outputs(
        rows, io_rows.COLUMNS, startup_io.io_drawing, out_dir, "io_table"
    )
