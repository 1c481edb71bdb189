"""The coll plan refuses counts whose buffers cannot fit before anything runs (issue 4)."""

from __future__ import annotations

import pytest

from hpcscope.suites.coll import MAX_BYTES_PER_PROCESS, buffer_bytes, check_memory


def test_buffer_sizes_follow_the_programs_layout():
    # alltoall: count x p sent and received; validation keeps a second receive buffer
    assert buffer_bytes("alltoall", 10, 4, validate=True) == (40 + 2 * 40) * 4
    assert buffer_bytes("bcast", 10, 4, validate=False) == 10 * 4
    assert buffer_bytes("gather", 10, 4, validate=False) == (10 + 40) * 4
    assert buffer_bytes("allreduce", 10, 4, validate=True) == (10 + 20) * 4


def test_counts_over_the_limit_are_refused_with_the_numbers():
    with pytest.raises(ValueError, match=r"alltoall count 100000000p on 2 ranks needs 4578 MiB"):
        check_memory(["alltoall"], "1p,100000000p", 2, validate=True)
    check_memory(["alltoall"], "1p,1000p", 2, validate=True)  # fits: no error
    check_memory(["alltoall"], None, 2, validate=True)  # the program's sweep
    check_memory(["alltoall"], "1p:1000p:10", 2, validate=True)  # a sweep: its end
    with pytest.raises(ValueError, match="alltoall count 100000000p"):
        check_memory(["alltoall"], "1p:100000000p:10", 2, validate=True)
    assert MAX_BYTES_PER_PROCESS == 1 << 30
