"""The one-sided (RMA) tests of bench/mpi/rma.c, named once for every layer above: the
suite, show, the report, the exports. Each test is one OSU 7.4 program (docs/rma.md).

Their samples share metrics with p2p (latency, bandwidth, bibandwidth), so the test, the
sync and the window kind are part of what a sample measures (results/cells.identity keeps
them): put_latency never pools with get_latency, nor a lock run with a flush run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RmaTest:
    name: str
    program: str  # the OSU 7.4 program it reproduces
    title: str  # that program's title line, as it prints it (without " v7.4")
    metric: str
    unit: str
    syncs: tuple[str, ...]  # the syncs rma.c offers for it (OSU's)
    default_sync: str  # OSU's default
    pairs: bool = False  # runs over P = ranks/2 pairs
    default_window: str = "allocate"  # OSU's


ALL_SYNCS = ("lock", "flush", "flush_local", "lock_all", "fence", "pscw")
SYNC_TEXT = {  # OSU's "# Synchronization:" words
    "lock": "MPI_Win_lock/unlock",
    "pscw": "MPI_Win_post/start/complete/wait",
    "fence": "MPI_Win_fence",
    "flush": "MPI_Win_flush",
    "flush_local": "MPI_Win_flush_local",
    "lock_all": "MPI_Win_lock_all/unlock_all",
}
WINDOW_KINDS = ("auto", "create", "allocate", "dynamic")
WINDOW_TEXT = {
    "create": "MPI_Win_create",
    "allocate": "MPI_Win_allocate",
    "dynamic": "MPI_Win_create_dynamic",
}

_LAT, _BW = ("latency", "us"), ("bandwidth", "MB/s")
RMA_TESTS: dict[str, RmaTest] = {
    t.name: t
    for t in (
        RmaTest(
            "put_latency", "osu_put_latency", "OSU MPI_Put Latency Test", *_LAT, ALL_SYNCS, "flush"
        ),
        RmaTest(
            "get_latency", "osu_get_latency", "OSU MPI_Get latency Test", *_LAT, ALL_SYNCS, "flush"
        ),
        RmaTest("put_bw", "osu_put_bw", "OSU MPI_Put Bandwidth Test", *_BW, ALL_SYNCS, "flush"),
        RmaTest("get_bw", "osu_get_bw", "OSU MPI_Get Bandwidth Test", *_BW, ALL_SYNCS, "flush"),
        RmaTest(
            "put_bibw",
            "osu_put_bibw",
            "OSU MPI_Put Bi-directional Bandwidth Test",
            "bibandwidth",
            "MB/s",
            ("fence", "pscw"),
            "pscw",
        ),
        RmaTest(
            "acc_latency",
            "osu_acc_latency",
            "OSU MPI_Accumulate latency Test",
            *_LAT,
            ALL_SYNCS,
            "flush",
        ),
        RmaTest(  # its main sets no window or sync: OSU's first enum values apply
            "get_acc_latency",
            "osu_get_acc_latency",
            "OSU MPI_Get_accumulate latency Test",
            *_LAT,
            ALL_SYNCS,
            "lock",
            default_window="create",
        ),
        RmaTest(
            "fop_latency",
            "osu_fop_latency",
            "OSU MPI_Fetch_and_op latency Test",
            *_LAT,
            ALL_SYNCS,
            "flush",
        ),
        RmaTest(
            "cas_latency",
            "osu_cas_latency",
            "OSU MPI_Compare_and_swap latency Test",
            *_LAT,
            ALL_SYNCS,
            "flush",
        ),
        RmaTest(
            "get_mbw",
            "osu_get_mbw",
            "OSU MPI_Get Multiple Bandwidth Bandwidth Test",
            *_BW,
            ("flush", "pscw"),
            "flush",
            pairs=True,
        ),
        RmaTest(
            "get_multi_lat",
            "osu_get_multi_lat",
            "OSU MPI_Get Multi Latency Test",
            *_LAT,
            ("pscw",),
            "pscw",
            pairs=True,
        ),
    )
}
TEST_NAMES = tuple(RMA_TESTS)
IDENTITY_PARAMS = ("test", "sync", "window_kind")  # kept in a cell's identity


def is_rma(params: dict) -> bool:
    return params.get("test") in RMA_TESTS


def label(params: dict) -> str:
    """'put_latency (flush, allocate)': a curve family of the rma suite."""
    return f"{params.get('test')} ({params.get('sync')}, {params.get('window_kind')})"
