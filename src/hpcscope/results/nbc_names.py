"""The nbc program's collectives (bench/mpi/nbc_calls.h) by name, which blocking collective
each variant is compared with, and the title OSU 7.4's own program for it prints, so that
the suite, the analysis and the OSU text export share one list (docs/nbc.md)."""

from __future__ import annotations

OPS = (
    "allgather",
    "allgatherv",
    "allreduce",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "barrier",
    "bcast",
    "gather",
    "gatherv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_block",
    "scatter",
    "scatterv",
)
NEIGHBOR_OPS = ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw")
NONBLOCKING = tuple(f"i{op}" for op in OPS)
PERSISTENT = tuple(f"{op}_persistent" for op in OPS)
NEIGHBORHOOD = (
    *(f"neighbor_{op}" for op in NEIGHBOR_OPS),
    *(f"ineighbor_{op}" for op in NEIGHBOR_OPS),
    "alltoallv_neighbors",
)
FAMILIES = {"nonblocking": NONBLOCKING, "persistent": PERSISTENT, "neighborhood": NEIGHBORHOOD}
NAMES = (*OPS, *NONBLOCKING, *PERSISTENT, *NEIGHBORHOOD)


def blocking_of(name: str) -> str | None:
    """The blocking collective a variant is compared with (and validated against)."""
    if name in NONBLOCKING:
        return name[1:]
    if name in PERSISTENT:
        return name[: -len("_persistent")]
    if name.startswith("ineighbor_"):
        return name[1:]
    if name == "alltoallv_neighbors":
        return "neighbor_alltoall"
    return None


# The words of OSU 7.4's BENCHMARK titles ("OSU MPI%s <words> v7.4"), per collective.
_WORDS = {
    "allgather": "Allgather",
    "allgatherv": "Allgatherv",
    "allreduce": "Allreduce",
    "alltoall": "All-to-All Personalized Exchange",
    "alltoallv": "All-to-Allv Personalized Exchange",
    "alltoallw": "All-to-Allw Personalized Exchange",
    "barrier": "Barrier",
    "bcast": "Broadcast",
    "gather": "Gather",
    "gatherv": "Gatherv",
    "reduce": "Reduce",
    "reduce_scatter": "Reduce_scatter",
    "reduce_scatter_block": "Reduce_scatter_block",
    "scatter": "Scatter",
    "scatterv": "Scatterv",
}
# OSU's non-blocking titles differ from "Non-blocking " + the blocking words here:
_NONBLOCKING_WORDS = {
    "ibcast": "Non-Blocking Broadcast",
    "ialltoall": "Non-blocking All-to-All",
}
_NEIGHBOR_WORDS = {
    "neighbor_allgather": "Neighborhood Allgather",
    "neighbor_allgatherv": "Neighborhood Allgatherv",
    "neighbor_alltoall": "Neighborhood Alltoall",
    "neighbor_alltoallv": "Neighborhood All-to-Allv",
    "neighbor_alltoallw": "All-to-Allw Personalized Exchange",  # sic, OSU 7.4's title
    "ineighbor_allgather": "Non-blocking Neighborhood Allgather",
    "ineighbor_allgatherv": "Non-blocking Neighborhood Allgatherv",
    "ineighbor_alltoall": "Non-blocking Neighborhood Alltoall",
    "ineighbor_alltoallv": "Non-blocking Neighborhood Alltoallv",
    "ineighbor_alltoallw": "Non-blocking Neighborhood Alltoallw",
}


def osu_program(name: str) -> str | None:
    """OSU 7.4's program measuring this collective (osu_ibcast, osu_bcast_persistent, ...);
    None for alltoallv_neighbors and reduce_scatter_block_persistent, which OSU 7.4 does
    not have."""
    if name in ("alltoallv_neighbors", "reduce_scatter_block_persistent"):
        return None
    return f"osu_{name}"


def osu_title(name: str) -> str | None:
    """'# OSU MPI Non-Blocking Broadcast Latency Test v7.4' for ibcast; None without an
    OSU counterpart."""
    if osu_program(name) is None:
        return None
    if name in _NEIGHBOR_WORDS:
        words = _NEIGHBOR_WORDS[name]
    elif name in _NONBLOCKING_WORDS:
        words = _NONBLOCKING_WORDS[name]
    elif name in NONBLOCKING:
        words = f"Non-blocking {_WORDS[name[1:]]}"
    elif name in PERSISTENT:
        words = f"{_WORDS[name[: -len('_persistent')]]} Persistent"
    elif name in _WORDS:
        words = _WORDS[name]
    else:
        return None
    return f"# OSU MPI {words} Latency Test v7.4"


def overlap_measured(name: str) -> bool:
    """Whether OSU prints the overlap columns for it (the non-blocking ones)."""
    return name in NONBLOCKING or name.startswith("ineighbor_")
