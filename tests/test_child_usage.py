"""launch/child_usage.py: what a launch cost, with memory shared between mappings counted
once. The child maps one 64 MiB file 16 times (as SMPI's shared malloc maps one block
under every rank's buffers) and touches 64 MiB of private memory: RSS counts the file 16
times, the private peak only what the child owns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hpcscope.launch import child_usage

MIB = 1 << 20
CHILD = """
import mmap, tempfile, time
private = bytearray(64 * 2**20)
for i in range(0, len(private), 4096):
    private[i] = 1
with tempfile.TemporaryFile() as fh:
    fh.truncate(64 * 2**20)
    maps = [mmap.mmap(fh.fileno(), 64 * 2**20) for _ in range(16)]
    for m in maps:
        for i in range(0, len(m), 4096):
            m[i] = 1
    time.sleep(1.5)
"""


def test_private_peak_counts_shared_mappings_once(tmp_path: Path) -> None:
    out = tmp_path / "usage.json"
    code = child_usage.main([str(out), "--", sys.executable, "-c", CHILD])
    assert code == 0
    usage = json.loads(out.read_text())
    assert usage["peak_rss_bytes"] > 16 * 64 * MIB  # every mapping counted
    assert 64 * MIB <= usage["peak_private_bytes"] < 3 * 64 * MIB
    assert usage["wall_time_s"] >= 1.5 and usage["returncode"] == 0
