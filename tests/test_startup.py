"""The startup suite (issue 44): unit tests of its numbers on fixtures (OSU's integer
arithmetic, medians over launches, the harness stamp), and the suite end to end with real
Open MPI and MPICH: run, store, show, exports (OSU's own lines), report section."""

from __future__ import annotations

import json

import pytest
from conftest import have

from hpcscope.analysis import startup_rows
from hpcscope.launch import epoch
from hpcscope.results import startup_osu
from hpcscope.suites import startup as startup_suite


def sample(launch: int, phase: str, values: list[float], mpi="openmpi", ranks=2, **params):
    return {
        "launch_id": launch,
        "benchmark": "startup",
        "metric": "time",
        "unit": "us",
        "params": {"phase": phase, "ranks": ranks, **params},
        "values": values,
        "tags": {"mpi": mpi, "ranks": ranks},
    }


# two launches of 2 ranks: per-rank MPI_Init in us, hello and the harness's job time
FIXTURE = [
    sample(1, "init", [100_900.0, 102_999.9]),
    sample(1, "hello", [150_000.0], **{"from": "launch"}),
    sample(1, "job", [300_000.0], **{"from": "launch"}),
    sample(2, "init", [200_000.0, 203_500.0]),
    sample(2, "hello", [250_000.0], **{"from": "launch"}),
    sample(2, "job", [500_000.0], **{"from": "launch"}),
]


def test_rows_give_each_launchs_osu_numbers_and_their_median_and_spread():
    [row] = startup_rows.rows(FIXTURE)
    assert (row["mpi"], row["ranks"], row["launches"]) == ("openmpi", 2, 2)
    # launch means 101.95 and 201.75 ms: median of two = their mean; spread = both
    assert row["init_avg_ms"] == pytest.approx((101.95 + 201.75) / 2)
    assert row["init_avg_range"] == pytest.approx((101.95, 201.75))
    assert row["init_max_ms"] == pytest.approx((102.9999 + 203.5) / 2)
    assert row["hello_ms"] == pytest.approx(200.0) and row["job_ms"] == pytest.approx(400.0)
    assert row["note"] == ""


def test_osu_text_is_osu_inits_lines_with_its_integer_arithmetic():
    text = startup_osu.osu_text(FIXTURE)
    lines = text.splitlines()
    assert lines[0] == "# OSU MPI Init Test v7.4"
    # osu_init: each rank's ms truncated to a long; avg = integer sum / processes
    assert "nprocs: 2, min: 100 ms, max: 102 ms, avg: 101 ms" in lines
    assert "nprocs: 2, min: 200 ms, max: 203 ms, avg: 201 ms" in lines
    assert "# OSU MPI Hello World Test v7.4" in lines
    assert "This is a test with 2 processes" in lines


def test_rows_say_when_hello_is_not_from_the_launch_and_when_oversubscribed():
    samples = [
        sample(1, "init", [1000.0], ranks=8, **{"clock": "CLOCK_MONOTONIC"}),
        sample(1, "hello", [2000.0], ranks=8, **{"from": "first_process"}),
    ]
    samples[0]["tags"]["oversubscribed"] = True
    [row] = startup_rows.rows(samples)
    assert "oversubscribed" in row["note"]
    assert "hello from the first process" in row["note"]
    assert row["job_ms"] is None


def test_the_harness_stamps_only_jobs_that_ask_and_times_from_the_stamp():
    assert epoch.stamp({"A": "1"}) == {"A": "1"}
    stamped = epoch.stamp({epoch.VARIABLE: epoch.PENDING})
    began = float(stamped[epoch.VARIABLE])
    wall = epoch.harness_sample(stamped, began + 0.25, 4)
    assert wall is not None and wall["values"] == [pytest.approx(250_000.0, abs=1)]
    assert wall["params"] == {"phase": "job", "ranks": 4, "from": "launch", "clock": "harness"}
    assert epoch.harness_sample({epoch.VARIABLE: epoch.PENDING}, began, 4) is None
    assert epoch.shell_line({}) == []
    assert "date +%s.%N" in epoch.shell_line({epoch.VARIABLE: epoch.PENDING})[0]


def test_default_counts_are_powers_of_two_and_the_cores():
    assert startup_suite.default_counts(1) == [1]
    assert startup_suite.default_counts(8) == [1, 2, 4, 8]
    assert startup_suite.default_counts(12) == [1, 2, 4, 8, 12]


@pytest.mark.mpi
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_startup_end_to_end(cli, mpi):
    if not have(f"mpirun.{mpi}"):
        pytest.skip(f"{mpi} not installed")
    done = cli("run", "startup", "--mpi", mpi, "--ranks", "1,2", "--repeat", "1")
    assert done.returncode == 0, done.stderr
    records = json.loads(cli("export", "last", "--format", "json").stdout)
    samples = records["samples"]
    phases = sorted({(s["params"]["phase"], s["params"]["ranks"]) for s in samples})
    assert phases == [(p, r) for p in ("hello", "init", "job") for r in (1, 2)]
    for s in samples:
        assert all(v > 0 for v in s["values"]), s
        if s["params"]["phase"] == "init":
            assert len(s["values"]) == s["params"]["ranks"]  # one value per rank
            assert s["params"]["clock"] == "CLOCK_MONOTONIC"
    by_launch: dict = {}
    for s in samples:
        by_launch.setdefault(s["launch_id"], {})[s["params"]["phase"]] = s["values"]
    assert len(by_launch) == 2
    for got in by_launch.values():
        # launch -> hello contains MPI_Init; the harness's wall contains the hello
        assert max(got["init"]) < got["hello"][0] < got["job"][0]
    assert all(s["params"].get("from", "launch") == "launch" for s in samples)
    shown = cli("show", "last")
    assert shown.returncode == 0 and "launch to hello (ms)" in shown.stdout
    osu = cli("export", "last", "--format", "osu").stdout
    assert osu.startswith("# OSU MPI Init Test v7.4\n")
    assert osu.count("nprocs: 2, min: ") == 1 and "This is a test with 2 processes" in osu
    if mpi == "openmpi":  # the report's section and figure, once
        report = cli("report", "last", "-o", "rep")
        assert report.returncode == 0, report.stderr
        page = (cli.folder / "rep" / "index.html").read_text()
        assert "MPI start-up" in page and "startup_time" in page


def test_bad_ranks_are_usage_errors():
    from hpcscope.cli.run import rank_counts
    from hpcscope.runner import UsageError

    assert rank_counts("4,1,2", {"on": "slurm"}) == [1, 2, 4]
    with pytest.raises(UsageError, match="--ranks '1,x'"):
        rank_counts("1,x", {"on": "local"})


def test_a_slurm_task_stamps_the_launch_on_the_line_before_srun():
    from pathlib import Path

    from hpcscope.launch.slurm_script import SlurmOptions, group_jobs, render
    from hpcscope.machine.mpi import MpiSpec
    from hpcscope.plan.job import Job

    mpi = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")
    job = Job("startup", "openmpi/startup/np8/r1", ["/b/startup"], mpi, 8, None, 2)
    job.env = {epoch.VARIABLE: epoch.PENDING}
    (group,) = group_jobs([job])
    lines = render(group, "7", Path("/scratch/me/run-7"), SlurmOptions()).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("srun "))
    assert lines[at - 1].startswith(f"{epoch.VARIABLE}=$(date +%s.%N); export {epoch.VARIABLE}")
