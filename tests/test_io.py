"""The io suite (issue 44): unit tests on fixtures (rows, the disk ceiling, size checks),
the mpiio program's files (a private folder, removed at the end and on SIGTERM), and the
suite end to end with real Open MPI and MPICH (tiny sizes): run, store, show, exports,
report section; bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, have

from hpcscope.analysis import io_rows
from hpcscope.suites import io as io_suite


def sample(launch, op, values, mode="collective", layout="shared", transfer=65536, **extra):
    return {
        "launch_id": launch,
        "benchmark": "mpiio",
        "metric": "bandwidth",
        "unit": "MB/s",
        "params": {
            "op": op,
            "mode": mode,
            "layout": layout,
            "transfer": transfer,
            "block": 1 << 20,
            "ranks": 2,
            "nodes": 1,
            **extra,
        },
        "values": values,
        "tags": {"mpi": "mpich"},
    }


def test_rows_pool_repetitions_and_give_the_launches_spread():
    rows = io_rows.rows(
        [
            sample(1, "write", [100.0, 110.0, 120.0]),
            sample(2, "write", [200.0, 210.0, 220.0]),
            sample(1, "read", [50.0], cache="kept"),
        ]
    )
    write, read = rows  # writes sort first
    assert (write["op"], write["launches"]) == ("write", 2)
    assert write["median_mbs"] == pytest.approx(160.0)  # median of the six: (120 + 200) / 2
    assert write["range"] == (110.0, 210.0)  # the launches' medians
    assert write["transfer_text"] == "64K" and write["block_text"] == "1M"
    assert "page cache not dropped" in read["note"]
    assert "measure memory" in " ".join(io_rows.caveats([sample(1, "read", [1.0], cache="kept")]))


class FakeStore:
    """Two node runs of host vm: the newer measured the disk at 1 MiB and 4 KiB."""

    def runs(self, _filters):
        return [
            {"id": 3, "suite": "node", "host": "vm"},
            {"id": 7, "suite": "node", "host": "vm"},
            {"id": 8, "suite": "p2p", "host": "vm"},
        ]

    def problem(self, _run_id):
        return None

    def samples(self, run_id, benchmark=None, metric=None):
        if run_id != 7:
            return []
        out = []
        for op, block, values in (
            ("write", 1 << 20, [400.0, 420.0, 410.0]),
            ("read", 1 << 20, [900.0, 950.0, 1000.0]),
            ("read", 4096, [50.0]),
        ):
            prm = {"workload": "disk", "op": op, "pattern": "seq", "block": block, "threads": 1}
            out.append({"params": prm, "values": values})
        return out


def test_the_ceiling_is_the_newest_node_runs_sequential_disk_rate():
    found = io_rows.disk_ceiling(FakeStore(), "vm")
    assert found == {"run": 7, "block_text": "block 1M", "write": 410.0, "read": 950.0}
    assert io_rows.disk_ceiling(FakeStore(), "other") is None


@pytest.mark.parametrize(
    ("sizes", "block", "words"),
    [
        ([3 << 20], 4 << 20, "does not divide"),
        ([8], 4 << 20, "outside 16 B"),
        ([1 << 20], 1 << 40, "--block-size"),
        ([8 << 20], 4 << 20, "outside 16 B"),
    ],
)
def test_sizes_out_of_range_are_named(sizes, block, words):
    assert words in io_suite.check_sizes(sizes, block)


def _built(flavor: str) -> Path:
    found = sorted(
        Path(os.environ.get("HPCSCOPE_CACHE", REPO / ".cache")).glob(f"build/{flavor}-*/mpi/mpiio")
    )
    if not found:
        pytest.skip(f"mpiio not built for {flavor} (hpcscope build --mpi {flavor})")
    return found[-1]


@pytest.mark.mpi
def test_files_are_removed_on_sigterm(tmp_path):
    """A singleton MPICH rank (no mpirun) killed while it writes leaves no file behind."""
    if not have("mpirun.mpich"):
        pytest.skip("MPICH not installed")
    program = _built("mpich")
    argv = [str(program), "--dir", str(tmp_path), "--block-size", "1G", "--transfer-sizes", "1M"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("hpcscope-mpiio-*/*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob("hpcscope-mpiio-*/*")), "the program made no file"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGTERM
    assert list(tmp_path.iterdir()) == []  # the file and the private folder are gone


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_io_end_to_end(cli, mpi, tmp_path):
    if not have(f"mpirun.{mpi}"):
        pytest.skip(f"{mpi} not installed")
    where = tmp_path / "files"
    where.mkdir()
    done = cli(
        "run", "io", "--mpi", mpi, "--ranks", "2", "--dir", str(where),
        "--transfer-sizes", "64K,256K", "--block-size", "256K", "--repetitions", "1", "--repeat", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(where.iterdir()) == []  # the private folder is removed
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    keys = {
        (s["params"]["op"], s["params"]["mode"], s["params"]["layout"], s["params"]["transfer"])
        for s in samples
    }
    assert keys == {
        (op, mode, layout, t)
        for op in ("write", "read")
        for mode in ("independent", "collective")
        for layout in ("shared", "per_process")
        for t in (65536, 262144)
    }
    for s in samples:
        assert (s["metric"], s["unit"]) == ("bandwidth", "MB/s") and s["values"][0] > 0
        if s["params"]["op"] == "read":  # another rank's block, the written pages dropped
            assert s["params"]["reorder"] == 1 and s["params"]["cache"] == "dropped"
    shown = cli("show", "last")
    assert "median (MB/s)" in shown.stdout and "ceiling" in shown.stdout
    if mpi == "mpich":
        report = cli("report", "last", "-o", "rep")
        assert report.returncode == 0, report.stderr
        assert "io_bandwidth" in (cli.folder / "rep" / "index.html").read_text()


def test_a_missing_dir_is_one_line_and_exit_2(cli):
    done = cli("run", "io", "--dir", "/no/such/folder")
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        == "error: --dir /no/such/folder: no such folder; give an existing folder"
    )


@pytest.mark.parametrize(
    ("own", "words"),
    [
        ({"transfer_sizes": "3M", "block_size": "4M"}, "does not divide"),
        ({"block_size": "1T"}, "--block-size '1T'"),
        ({"transfer_sizes": "8"}, "--transfer-sizes '8': outside"),
    ],
)
def test_bad_sizes_are_usage_errors(own, words):
    from hpcscope.cli.run import io_opts
    from hpcscope.runner import UsageError

    given = {"io_dir": None, "transfer_sizes": None, "block_size": None, "ranks": None}
    given |= {"repetitions": None, **own}
    shared = {"quick": False, "repeat": None, "on": "local", "dry_run": True}
    with pytest.raises(UsageError, match=words):
        io_opts(given, shared)


def test_a_folder_not_writable_is_refused(tmp_path):
    from hpcscope.cli.run import io_folder
    from hpcscope.runner import UsageError

    target = tmp_path / "ro"
    target.mkdir(mode=0o500)
    where = "/proc" if os.geteuid() == 0 else str(target)  # root writes any mode
    with pytest.raises(UsageError, match="not writable"):
        io_folder(where, {})
