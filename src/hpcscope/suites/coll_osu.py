"""`run coll --protocol osu`: OSU 7.4's collective loop instead of hpcscope's (the program
side is bench/mpi/coll.c measure_osu; docs/collectives.md "OSU's protocol").

OSU's programs (osu_allreduce.c and the others) time every call on every rank between two
MPI_Wtime reads, with an MPI_Barrier after it outside the timer, over 1000 iterations after
100 untimed ones (100 and 10 above 8 KiB), and print the mean, min and max over the ranks
of each rank's mean. The coll program does the same and stores every rank's mean (one
value per rank), so `export --format osu` prints OSU's three columns from them. What stays
hpcscope's: MPI_INT elements (OSU's default is MPI_CHAR), so the sizes run from 4 B; the
untimed validation pass before the timing; the irregular counts of the vector
collectives (OSU's are regular).
"""

from __future__ import annotations

from hpcscope.suites.base import Note

PROTOCOLS = ("hpcscope", "osu")
# OSU's default sizes 1 B .. 1 MiB (MAX_MSG_SIZE_COLL), doubling: in MPI_INT 4 B .. 1 MiB
COUNTS = "1:262144:2"
QUICK_COUNTS = "1:1024:2"  # 4 B .. 4 KiB


def counts_of_sizes(text: str) -> list[int]:
    """--sizes MIN:MAX in bytes (OSU's -m MIN:MAX, e.g. 4:64K) as MPI_INT counts: the
    powers of two from MIN to MAX, as OSU doubles its sizes, divided by 4 (a size below
    4 bytes is no whole MPI_INT: left out). ValueError for a bad range or one without a
    size of at least 4 bytes."""
    from hpcscope.suites.p2p import parse_size_range

    low, high = parse_size_range(text)
    size, counts = 1, []
    while size <= high:
        if size >= max(low, 4):
            counts.append(size // 4)
        size *= 2
    if not counts:
        raise ValueError(
            f"size range '{text}' holds no power of two from 4 bytes (one MPI_INT) up to "
            "its MAX; give e.g. 4:64K"
        )
    return counts


def protocol(opts: dict) -> str:
    """hpcscope (default) or osu; ValueError for another value or for options OSU's fixed
    loop cannot honour."""
    value = opts.get("protocol") or "hpcscope"
    if value not in PROTOCOLS:
        raise ValueError(
            f"--protocol '{value}': choose hpcscope (the slowest rank per repetition, the "
            "default) or osu (OSU 7.4's collective loop)"
        )
    if value == "osu" and (opts.get("precision") or opts.get("budget_s")):
        raise ValueError(
            "--protocol osu keeps OSU's fixed counts; drop --precision/--budget, or use "
            "the hpcscope protocol"
        )
    if value == "osu" and opts.get("interleave"):
        raise ValueError(
            "--protocol osu times one algorithm after the other, as OSU does; drop "
            "--interleave or use the hpcscope protocol"
        )
    return value


def program_args(opts: dict) -> list[str]:
    """The coll program's options for OSU's loop; --repetitions becomes OSU's -i (the
    timed iterations of every size)."""
    args = ["--protocol", "osu"]
    if opts.get("repetitions"):
        args += ["--osu-iterations", str(opts["repetitions"])]
    return args


def plan_note(counts: str | None) -> Note:
    return Note(
        "info",
        "coll: OSU 7.4's loop (--protocol osu): every call timed on every rank with "
        "MPI_Wtime, MPI_Barrier after it, 1000 iterations after 100 untimed (100 after 10 "
        "above 8 KiB); each rank's mean is stored, export --format osu prints their mean, "
        f"min and max as OSU does; counts {counts or COUNTS} (MPI_INT)",
        {"protocol": "osu", "counts": counts or COUNTS},
    )
