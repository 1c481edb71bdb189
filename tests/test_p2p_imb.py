"""IMB-MPI1's PingPing, Sendrecv and Exchange in p2p (issue 44): the program run for real
with Open MPI and MPICH (records, IMB's byte counts, validation), and the suite end to end
(run, store, show, exports) with Open MPI. Correctness and plausibility, never speed."""

from __future__ import annotations

import json

import pytest
from conftest import requires_openmpi
from test_bench_p2p import flavor, launch, records  # noqa: F401 (flavor: the fixture)

pytestmark = pytest.mark.mpi

IMB = {"pingping": 1, "sendrecv": 2, "exchange": 4}  # IMB's scale_bw: messages counted
SIZES = [0, 64, 65536]
# bandwidth_mb_per_s is k * bytes / t computed from the same double the record prints as
# `value`; both are written with ~15 significant digits, so 1e-6 covers the printing only
TOLERANCE = 1e-6


def test_imb_patterns_write_time_per_iteration_and_imbs_bandwidth(flavor):  # noqa: F811
    done = launch(
        flavor,
        "--tests",
        "pingping,sendrecv,exchange",
        "--sizes",
        ",".join(map(str, SIZES)),
        "--iterations",
        "200",
        "--warmup",
        "5",
        "--validate",
        "--data",
        "varying",
    )
    assert done.returncode == 0, done.stderr
    recs = records(done.stdout)
    assert not [r for r in recs if r["type"] == "error"]
    for test, messages in IMB.items():
        samples = {
            r["params"]["bytes"]: r
            for r in recs
            if r["type"] == "sample" and r["params"]["test"] == test
        }
        summaries = {
            r["params"]["bytes"]: r
            for r in recs
            if r["type"] == "summary" and r["params"]["test"] == test
        }
        assert sorted(samples) == SIZES == sorted(summaries), test
        for n in SIZES:
            sample, summary = samples[n], summaries[n]
            assert (sample["metric"], sample["unit"]) == ("time", "us")
            # 200 iterations in blocks of 20: ten per-iteration times, all positive
            assert sample["params"]["block"] == 20 and len(sample["values"]) == 10
            assert all(0 < v < 100_000 for v in sample["values"]), (test, n)
            # equal blocks: the summary's t is their mean (one clock over the same loop)
            mean = sum(sample["values"]) / 10
            assert summary["value"] == pytest.approx(mean, rel=1e-6), (test, n)
            assert summary["method"].startswith("imb-mpi1")
            assert summary["bytes_per_iteration"] == messages * n
            expected = messages * n / summary["value"]  # bytes per us = MB/s (10^6)
            assert summary["bandwidth_mb_per_s"] == pytest.approx(expected, rel=TOLERANCE)
            assert "window" not in sample["params"]


def test_imb_patterns_validate_every_byte_on_both_ranks(flavor):  # noqa: F811
    """Both ranks receive in all three patterns, so validation checks both; a pattern
    whose message never arrived would leave the preset complement and fail."""
    done = launch(
        flavor,
        "--tests",
        "exchange,sendrecv,pingping",
        "--sizes",
        "1,4K,1M",
        "--iterations",
        "10",
        "--warmup",
        "1",
        "--validate",
        "--data",
        "varying",
    )
    assert done.returncode == 0, done.stderr
    recs = records(done.stdout)
    assert recs[0]["options"]["validate"] is True
    assert not [r for r in recs if r["type"] == "error"]
    assert len([r for r in recs if r["type"] == "summary"]) == 9


@pytest.mark.parametrize("extra", [["--format", "osu"], ["--protocol", "osu"]])
def test_imb_patterns_refuse_the_osu_forms(flavor, extra):  # noqa: F811
    done = launch(flavor, "--tests", "latency,sendrecv", "--max-size", "64", *extra)
    assert done.returncode != 0
    assert "sendrecv is IMB-MPI1's and has no OSU counterpart" in done.stderr


def test_default_tests_stay_osus_four(flavor):  # noqa: F811
    done = launch(flavor, "--max-size", "2", "--iterations", "10", "--warmup", "1")
    assert done.returncode == 0, done.stderr
    tests = {r["params"]["test"] for r in records(done.stdout) if r["type"] == "summary"}
    assert tests == {"latency", "bw", "bibw", "mbw_mr"}


@requires_openmpi
def test_suite_runs_stores_shows_and_exports_the_imb_patterns(cli):
    done = cli(
        "run",
        "p2p",
        "--tests",
        "pingping,sendrecv,exchange",
        "--quick",
        "--mpi",
        "openmpi",
        "--placements",
        "core",
        "--sizes",
        "0:64K",
        "--out",
        str(cli.folder / "out"),
    )
    assert done.returncode == 0, done.stderr
    shown = cli("show", "last")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # rich wraps titles
    for name in ("PingPing", "Sendrecv", "Exchange"):
        assert f"p2p {name} time per iteration" in text and f"as IMB-MPI1 {name}" in text
        assert f"p2p IMB-MPI1 {name} bandwidth" in text
    exported = cli("export", "last", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    samples = json.loads(exported.stdout)["samples"]
    by_test: dict[str, set] = {}
    for s in samples:
        by_test.setdefault(s["params"]["test"], set()).add(s["params"]["bytes"])
    sizes = {0} | {1 << k for k in range(17)}
    assert by_test == {t: sizes for t in IMB}  # the three tests never pool into one cell
    csv = cli("export", "last", "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.count(",pingping,") >= len(sizes)
    markdown = cli("export", "last", "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    for test in IMB:
        assert f"{test} core median (us)" in markdown.stdout
    osu = cli("export", "last", "--format", "osu")
    assert osu.returncode == 0, osu.stderr
    assert "have no OSU counterpart" in osu.stdout and "# OSU MPI" not in osu.stdout
    cells = cli("show", "last", "--cells")
    assert cells.returncode == 0 and "test=exchange" in cells.stdout
    report = cli("report", "last", "--out", str(cli.folder / "report"))
    assert report.returncode == 0, report.stderr
    page = (cli.folder / "report" / "index.html").read_text()
    for name in ("PingPing", "Sendrecv", "Exchange"):
        assert f"IMB-MPI1 {name} time per iteration" in page


@requires_openmpi
@pytest.mark.parametrize(
    "args, words",
    [
        (["--tests", "pingping", "--protocol", "osu"], ["pingping", "--protocol osu"]),
        (["--tests", "exchange,psychic"], ["psychic", "exchange"]),
    ],
)
def test_suite_refuses_imb_patterns_with_the_osu_protocol(cli, args, words):
    done = cli("run", "p2p", "--mpi", "openmpi", "--placements", "core", *args)
    assert done.returncode == 2, done.stderr
    for word in words:
        assert word in done.stderr
    assert "Traceback" not in done.stderr


@requires_openmpi
@pytest.mark.parametrize(
    "tests, expected",
    [
        ([], "latency,bw,bibw,mbw_mr"),  # the default (and the demo's time) unchanged
        (
            ["--tests", "all"],
            "latency,bw,bibw,mbw_mr,pingping,sendrecv,exchange,latency_persistent,"
            "bw_persistent,bibw_persistent,latency_mt,latency_mp",  # multi_lat: its own launch
        ),
    ],
)
def test_default_tests_stay_osus_and_all_adds_imbs(cli, tests, expected):
    args = ["run", "p2p", "--dry-run", "--mpi", "openmpi", "--placements", "core"]
    done = cli(*args, *tests)
    assert done.returncode == 0, done.stderr
    assert f"--tests {expected} " in done.stdout + done.stderr


def test_show_gives_imbs_bandwidth_from_the_median_time():
    """4 x 1000 B in a median 2 us is 2000 MB/s = 2 GB/s (Exchange counts 4 messages);
    0 B has no bandwidth row and a missing point shows '-'."""
    from rich.console import Console

    from hpcscope.report import show

    console = Console(width=100, record=True)
    rows = [(0, [{"center": 1.0}]), (1000, [{"center": 2.0}]), (4096, [None])]
    show._print_imb_bandwidth(console, "exchange", ["openmpi core"], rows, ["openmpi"])
    lines = console.export_text().splitlines()
    assert "p2p IMB-MPI1 Exchange bandwidth (GB/s): 4 x bytes / median time" in lines[1]
    body = [line.split() for line in lines[5:]]
    assert body == [["1000", "B", "2"], ["4", "KiB", "-"]]
