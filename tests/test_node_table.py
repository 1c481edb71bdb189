"""The node table's yardsticks and names (analysis/node_table.py), on synthetic samples."""

from __future__ import annotations

from hpcscope.analysis import node_table


def _mem(value: float, workload: str, **params) -> dict:
    return {
        "benchmark": "mem",
        "metric": "bandwidth",
        "unit": "MB/s",
        "params": dict(params, workload=workload, threads=params.get("threads", 2)),
        "values": [value, value * 0.98],
        "tags": {"suite": "node"},
    }


SAMPLES = [
    _mem(37000, "stream", op="copy"),
    _mem(27000, "stream", op="triad"),
    _mem(25000, "mem_block", op="read_write", pattern="seq", block=4096, bytes=2**27),
    _mem(24000, "mem_block", op="read_write", pattern="seq", block=2**20, bytes=2**27),
    _mem(459000, "mem_wss", op="copy", bytes=4096),
    _mem(186000, "mem_wss", op="copy", bytes=2**20),
]


def _row(rows: list[dict], name: str) -> dict:
    return next(r for r in rows if node_table.human_name(r) == name)


def test_dram_rows_are_not_measured_against_a_cache_resident_copy():
    """No DRAM peak known: STREAM stood against the best 4 KiB copy (in L1) at 6 %; now
    against the best array of DRAM size, and the working-set sweep against its own best."""
    rows = node_table.node_table(SAMPLES, [])
    triad = _row(rows, "STREAM triad, 2 threads")
    assert triad["peak_name"] == node_table.MEASURED_BEST and triad["peak"] == 37000
    assert 0.7 < triad["eff_vs_peak"] < 0.75
    wss = _row(rows, "memory copy, 2 threads, 1 MiB working set")
    assert wss["peak"] == 459000


def test_a_dram_peak_does_not_apply_to_the_caches():
    peak = {
        "name": "mem",
        "value": 50000.0,
        "unit": "MB/s",
        "formula": "8 ch x 6.4 GB/s",
        "metric": "bandwidth",
        "match": {"benchmark": "mem"},
    }
    rows = node_table.node_table(SAMPLES, [peak])
    assert _row(rows, "STREAM triad, 2 threads")["peak"] == 50000.0
    small = _row(rows, "memory copy, 2 threads, 4 KiB working set")
    assert small["peak_name"] == node_table.MEASURED_BEST and small["eff_vs_peak"] == 1.0


def test_block_copies_of_two_block_sizes_are_two_names():
    names = [node_table.human_name(r) for r in node_table.node_table(SAMPLES, [])]
    assert "memory seq read_write, 2 threads, 4 KiB blocks" in names
    assert "memory seq read_write, 2 threads, 1 MiB blocks" in names
