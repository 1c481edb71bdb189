"""`hpcscope run nbc` end to end under real Open MPI and MPICH: run, show, export (OSU
text and JSON), report; the program's records against OSU's overlap formula. Few sizes and
iterations (oversubscribed on a 2-core machine: correctness, not timings). ~25 s quiet."""

from __future__ import annotations

import json

import pytest
from conftest import requires_mpich, requires_openmpi

from hpcscope.results.store import Store

NBC_HEADER = "# Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)"


def osu_overlap(s: dict) -> float:
    """OSU 7.4's print_stats_nbc on the summary's own numbers (compute without MPI_Test)."""
    return max(0.0, 100 - (s["overall_us"] - s["compute_us"]) / s["pure_us"] * 100)


@requires_openmpi
@requires_mpich
def test_nbc_end_to_end_under_openmpi_and_mpich(cli) -> None:
    """One run of both libraries at 3 ranks (the neighbourhood's least), then every view."""
    done = cli(
        "run", "nbc", "--mpi", "openmpi,mpich", "--ranks", "3", "--sizes", "1:4",
        "--iterations", "10", "--collectives",
        "ibcast,iallreduce,bcast_persistent,ineighbor_alltoall,alltoallv_neighbors", "-o", "out",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    store = Store(cli.db)
    run_id = 1  # the only run of this fresh store
    samples = store.samples(run_id, benchmark="nbc")
    for flavor in ("openmpi", "mpich"):
        metrics = {
            (s["params"]["collective"], s["metric"]) for s in samples if s["tags"]["mpi"] == flavor
        }
        for name in ("ibcast", "iallreduce", "ineighbor_alltoall"):
            assert {
                (name, m) for m in ("pure_time", "overall_time", "compute_time", "overlap")
            } <= metrics
        for name in ("bcast", "bcast_persistent", "neighbor_alltoall", "alltoallv_neighbors"):
            assert (name, "time") in metrics, (flavor, name)
    for s in samples:
        assert len(s["values"]) == 10 and s["warmups"] == 1
        if s["metric"] == "overlap":
            assert all(0 <= v <= 100 for v in s["values"]) and s["unit"] == "%"
    summaries = store.summaries(run_id)
    osu = [x for x in summaries if x.get("metric") == "osu" and "overlap" in x]
    assert len(osu) == 2 * 3 * 3  # libraries x non-blocking collectives x sizes
    assert all(x["overlap"] == pytest.approx(osu_overlap(x), abs=1e-6) for x in osu)
    apis = {x["persistent_api"].split(" ")[0] for x in summaries if x.get("metric") == "nbc_build"}
    assert apis == {"MPIX_<Coll>_init", "MPI_<Coll>_init"}  # Open MPI 4.1's extension, MPI 4
    grids = [x for x in summaries if x.get("metric") == "nbc_build" and x.get("neighbors")]
    assert grids and all(x["neighbors"] == 2 and x["grid"] == [3] for x in grids)
    # placement proof from inside every rank, the transport facts, the options
    launches = store.launches(run_id)
    assert len(launches) == 6 and all(lc["meta"].get("mpi_transport") for lc in launches)
    assert all(len(lc["meta"]["ranks"]) == 3 for lc in launches)
    assert all(lc["meta"]["options"]["order"] == "random" for lc in launches)

    shown = cli("show", str(run_id))
    assert shown.returncode == 0 and "overlap (%)" in shown.stdout, shown.stderr
    text = cli("export", str(run_id), "--format", "osu").stdout
    for title in (
        "# OSU MPI Non-Blocking Broadcast Latency Test v7.4",
        "# OSU MPI Broadcast Persistent Latency Test v7.4",
        "# OSU MPI Non-blocking Neighborhood Alltoall Latency Test v7.4",
        NBC_HEADER,
        "# not exported: nbc alltoallv_neighbors",
    ):
        assert title in text, title
    exported = json.loads(cli("export", str(run_id), "--format", "json").stdout)
    assert any(e.get("metric") == "overlap" for e in exported["samples"])
    report = cli("report", str(run_id), "-o", "rep")
    assert report.returncode == 0, report.stderr
    html = (cli.folder / "rep" / "index.html").read_text()
    assert (
        "Guideline checks" in html and "nbc_overlap_openmpi" in html and "nbc_times_mpich" in html
    )
    guideline = (cli.folder / "out" / "nbc_guidelines.csv").read_text()
    for words in (
        "ibcast + MPI_Wait not slower than bcast",
        "bcast_persistent (MPI_Start + MPI_Wait) not slower than bcast",
        "neighbor_alltoall not slower than MPI_Alltoallv on the same neighbours",
    ):
        assert words in guideline
