"""`--osu-dir` for coll, nbc, rma and startup (suites/osu_programs.py) and parse_osu on
OSU 7.4's collective, non-blocking, one-sided and startup text.

OSU itself is not on this machine: DIR holds tests/fixtures/osu/fake_osu.sh under OSU's
program names, in the folders an OSU install uses (it prints OSU's format on rank 0).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import requires_openmpi

from hpcscope.results.parsers import check_osu_sizes, parse_osu

FAKE = Path(__file__).parent / "fixtures" / "osu" / "fake_osu.sh"
MPI = "libexec/osu-micro-benchmarks/mpi"


def fake_install(root: Path, *programs: str) -> Path:
    for program in programs:
        kind = {"osu_put_latency": "one-sided", "osu_init": "startup", "osu_hello": "startup"}
        folder = root / MPI / kind.get(program, "collective")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(FAKE, folder / program)
    return root


NBC = """
# OSU MPI Non-blocking Barrier Latency Test v7.4
# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait

# Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)
         3.21              2.23              1.89             48.05
"""
ALLTOALLW = """
# OSU MPI All-to-Allw Personalized Exchange Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       6.29
2                       3.23
"""


def test_parse_osu_reads_collective_nbc_rma_and_startup_titles():
    meta, *rows = parse_osu(NBC, "osu_ibarrier")
    assert meta["benchmark"] == "nbc" and meta["options"]["program"] == "osu_ibarrier"
    got = {r["metric"]: (r["params"], r["values"]) for r in rows}
    assert got["overlap"] == (
        {"collective": "ibarrier", "family": "nonblocking", "bytes": 0},
        [48.05],
    )
    assert got["pure_time"][1] == [1.89] and set(got) == {
        "overall_time",
        "compute_time",
        "pure_time",
        "overlap",
    }
    assert check_osu_sizes(parse_osu(NBC), None) == ([], [])  # four columns, one row
    # OSU 7.4 prints osu_alltoallw's title for osu_neighbor_alltoallw: the program decides
    assert parse_osu(ALLTOALLW)[1]["params"]["collective"] == "alltoallw"
    assert parse_osu(ALLTOALLW, "osu_alltoallw", "nbc")[0]["benchmark"] == "nbc"
    meta, first, _ = parse_osu(ALLTOALLW, "osu_neighbor_alltoallw")
    assert first["params"]["collective"] == "neighbor_alltoallw" and meta["benchmark"] == "nbc"
    assert (first["metric"], first["unit"], first["values"]) == ("time", "us", [6.29])


@requires_openmpi
def test_coll_and_startup_run_the_osu_build_beside_and_store_it(cli, tmp_path):
    osu = fake_install(tmp_path / "osu", "osu_allreduce", "osu_barrier", "osu_init", "osu_hello")
    done = cli(
        "run", "coll", "--mpi", "openmpi", "--osu-dir", str(osu), "--collectives",
        "allreduce,barrier,bcast", "--algorithms", "native", "--sizes", "4:16", "--ranks", "2",
        "--quick",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    theirs = [s for s in samples if s["tags"].get("tool") == "osu"]
    assert {(s["params"]["collective"], s["params"]["bytes"]) for s in theirs} == {
        ("allreduce", 4),
        ("allreduce", 8),
        ("allreduce", 16),
        ("barrier", 0),
    }  # OSU's -m 4:16 (the MPI_INT counts 1..4 in bytes); barrier without sizes
    assert all(s["tags"]["ranks"] == 2 and s["values"] in ([1.5], [2.16]) for s in theirs)
    assert "osu_bcast not in --osu-dir" in cli("show", "last").stdout
    assert "tool=osu" in cli("show", "last").stdout
    done = cli(
        "run", "startup", "--mpi", "openmpi", "--osu-dir", str(osu), "--ranks", "2", "--repeat", "1"
    )
    assert done.returncode == 0, done.stderr
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    theirs = [s for s in samples if s["tags"].get("tool") == "osu"]
    init = [s for s in theirs if s["params"]["phase"] == "init"]  # job: the harness's wall
    assert [(s["params"], s["values"]) for s in init] == [
        ({"phase": "init", "ranks": 2}, [245000.0])
    ]
    assert "openmpi [OSU build]" in cli("show", "last").stdout


@requires_openmpi
@pytest.mark.parametrize(
    "suite, args, program, words",
    [
        ("nbc", ["--collectives", "iallreduce", "--sizes", "1:64", "--ranks", "2"], "osu_iallreduce", ["-m 1:64"]),
        ("rma", ["--tests", "put_latency", "--sync", "lock", "--window", "create", "--sizes", "2:8",
                 "--placements", "core"], "osu_put_latency", ["-m 2:8 -w create -s lock"]),
    ],
)  # fmt: skip
def test_nbc_and_rma_plan_the_osu_build_like_their_own_jobs(
    cli, tmp_path, suite, args, program, words
):
    osu = fake_install(tmp_path / "osu", program)
    done = cli("run", suite, "--mpi", "openmpi", "--osu-dir", str(osu), "--dry-run", *args)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert f"osu/{args[1]}/" in text and f"{MPI}/" in text
    for word in words:
        assert word in text


@requires_openmpi
@pytest.mark.parametrize("suite", ["coll", "nbc", "rma", "startup"])
def test_a_folder_without_the_suites_osu_programs_is_refused_in_one_line(cli, tmp_path, suite):
    osu = fake_install(tmp_path / "osu", "osu_latency")  # a p2p program only
    done = cli("run", suite, "--mpi", "openmpi", "--osu-dir", str(osu))
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    assert done.stderr.count("error:") == 1 and "no executable osu_" in message
    assert {"rma": "one-sided", "startup": "startup"}.get(suite, "collective") in message
    assert "Traceback" not in done.stderr
