"""The blocking collectives lanecoll does not decompose (barrier, alltoallv, alltoallw,
reduce_scatter), the coll program's own guideline mock-ups (reduce_scatterv, alltoallv),
IMB's process-count sweep (--npmin) and OSU's protocol and text (--protocol osu, export
--format osu).

One real run per MPI library through the CLI (2 ranks, few counts and iterations):
Open MPI with the hpcscope protocol and --npmin 1 (both rank counts, the guideline checks,
show's table by rank count), MPICH with --protocol osu and its export parsed back. The
rest are unit tests on fixtures: OSU's exact lines, the verdict wording, the plans.
"""

from __future__ import annotations

import json

import pytest
from test_coll_bench import CATALOG, ctx

from hpcscope.analysis import verdicts
from hpcscope.results import osu_coll
from hpcscope.suites import coll as coll_suite

NEW = ("barrier", "alltoallv", "alltoallw", "reduce_scatter")
MPI_ARGS = [
    "run",
    "coll",
    "--ranks",
    "2",
    "--collectives",
    "barrier,alltoallv,alltoallw,reduce_scatter,alltoall,scan",
    "--counts",
    "1,64",
]


def _samples(cli, run: str = "last") -> list[dict]:
    done = cli("export", run, "--format", "json")
    assert done.returncode == 0, done.stderr
    return [s for s in json.loads(done.stdout)["samples"] if s["metric"] == "time"]


# ---- real MPI ---------------------------------------------------------------------------


@pytest.mark.mpi
def test_openmpi_new_collectives_mockups_and_rank_sweep(cli):
    from conftest import have

    if not have("mpirun.openmpi"):
        pytest.skip("Open MPI not installed")
    done = cli(
        *MPI_ARGS,
        "--mpi",
        "openmpi",
        "--algorithms",
        "native,alltoallv,reduce_scatterv",
        "--repetitions",
        "10",
        "--npmin",
        "1",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    samples = _samples(cli)
    seen = {
        (s["params"]["collective"], s["params"]["algorithm"], s["params"]["p"]) for s in samples
    }
    for p in (1, 2):  # --npmin 1 on 2 ranks: 1, then all 2
        assert {(c, "native", p) for c in NEW} <= seen
        assert ("reduce_scatter", "reduce_scatterv", p) in seen
        assert ("alltoall", "alltoallv", p) in seen
    barrier = [s for s in samples if s["params"]["collective"] == "barrier"]
    assert {s["params"]["count"] for s in barrier} == {0}
    assert all(len(s["values"]) == 10 for s in samples)
    # every mock-up is a guideline check against native, with a verdict
    rows = verdicts.coll_table(samples)
    checked = [r for r in rows if r["collective"] == "reduce_scatter"]
    assert checked and all(r["reduce_scatterv_verdict"] for r in checked)
    shown = cli("show", "last")
    assert "by rank count" in shown.stdout and "MPI_Reduce_scatter" in shown.stdout
    assert "p=1" in shown.stdout and "p=2" in shown.stdout
    out = sorted(p.name for p in (cli.folder / "hpcscope-out").glob("run-*/coll_*"))
    assert "coll_by_ranks.csv" in out and "coll_ranks_openmpi.svg" in out


@pytest.mark.mpi
def test_mpich_osu_protocol_and_its_text(cli):
    from conftest import have

    if not have("mpirun.mpich"):
        pytest.skip("MPICH not installed")
    done = cli(*MPI_ARGS, "--mpi", "mpich", "--protocol", "osu", "--repetitions", "20")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    samples = _samples(cli)
    assert {s["params"]["algorithm"] for s in samples} == {"native"}  # OSU's default
    for s in samples:  # one value per rank: its mean over OSU's (here -i 20) iterations
        assert len(s["values"]) == 2 and s["params"]["iterations"] == 20
        assert s["tags"]["protocol"] == "osu" and s["params"]["protocol"] == "osu"
        vector = s["params"]["collective"] in ("alltoallv", "alltoallw", "reduce_scatter")
        assert s["params"].get("blocks") == ("regular" if vector else None)  # OSU's blocks
    rows = verdicts.coll_table(samples)
    assert all(r["verdict"].startswith("not judged") for r in rows)
    text = cli("export", "last", "--format", "osu").stdout
    blocks = _parse_osu(text)
    assert set(blocks) == {osu_coll.title(c) for c in (*NEW, "alltoall")}
    by_coll = {s["params"]["collective"]: s for s in samples}
    for title, (header, rows) in blocks.items():
        assert header.endswith("Min Latency(us)   Max Latency(us)  Iterations")
        for row in rows:
            avg, low, high, iters = row[-4:]
            assert low <= avg <= high and iters == 20
        if "Barrier" in title:
            assert header.startswith("# Avg Latency(us)") and len(rows[0]) == 4
            vals = by_coll["barrier"]["values"]
            assert rows[0][0] == pytest.approx(sum(vals) / 2, abs=0.006)
        else:
            assert [r[0] for r in rows][:1] in ([4], [8])  # reduce_scatter: p blocks
    assert "no OSU program" in text and "MPI_Scan" in text


def _parse_osu(text: str) -> dict[str, tuple[str, list[list[float]]]]:
    """{title line: (column header, numeric rows)} of OSU collective text."""
    blocks: dict[str, tuple[str, list[list[float]]]] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("# OSU MPI"):
            title = line
            blocks[title] = ("", [])
        elif title and (line.startswith("# Size") or line.startswith("# Avg")):
            blocks[title] = (line, blocks[title][1])
        elif title and line and not line.startswith("#"):
            blocks[title][1].append([float(x) for x in line.split()])
    return blocks


# ---- OSU's lines, exactly (captured from OSU 7.4's osu_allreduce -f and osu_barrier -f)


def test_osu_titles_headers_and_rows_match_osu_74():
    assert osu_coll.title("allreduce") == "# OSU MPI Allreduce Latency Test v7.4"
    assert osu_coll.title("alltoallw") == (
        "# OSU MPI All-to-Allw Personalized Exchange Latency Test v7.4"
    )
    assert osu_coll.title("bcast") == "# OSU MPI Broadcast Latency Test v7.4"
    assert len(osu_coll.OSU_COLLECTIVES) == 15  # OSU 7.4's blocking collective programs
    assert osu_coll.header("allreduce") == (
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations"
    )
    assert osu_coll.row("allreduce", 1, 0.49, 0.47, 0.50, 1000) == (
        "1                       0.49              0.47              0.50        1000"
    )
    assert osu_coll.header("barrier") == (
        "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations"
    )
    assert osu_coll.row("barrier", 0, 0.38, 0.38, 0.38, 1000) == (
        "             0.38              0.38              0.38        1000"
    )


def _sample(coll, alg, count, values, p=2, n=None, protocol=None, launch=1):
    params = {"collective": coll, "algorithm": alg, "count": count, "bytes": 4 * count}
    params.update({"nodes": p // (n or p), "ppn": n or p, "p": p, "regular": True})
    tags = {"mpi": "openmpi"}
    if protocol:
        params.update({"protocol": "osu", "iterations": 1000})
        tags["protocol"] = "osu"
    return {
        "benchmark": "coll",
        "metric": "time",
        "unit": "us",
        "params": params,
        "tags": tags,
        "values": values,
        "launch_id": launch,
    }


def test_osu_text_of_both_protocols_and_what_it_leaves_out():
    samples = [
        _sample("reduce_scatter", "native", 16, [1.0, 3.0], protocol="osu"),
        _sample("allreduce", "native", 4, [2.0, 4.0, 9.0]),
        _sample("allreduce", "lane", 4, [1.0]),
        _sample("scan", "native", 4, [1.0]),
    ]
    text = "\n".join(osu_coll.to_osu_coll(samples))
    lines = text.splitlines()
    rs = lines.index("# OSU MPI Reduce_scatter Latency Test v7.4")
    assert "protocol osu" in lines[rs + 2]
    assert lines[rs + 4].split() == ["128", "2.00", "1.00", "3.00", "1000"]  # 16 x 4 B x p 2
    ar = lines.index("# OSU MPI Allreduce Latency Test v7.4")
    assert "protocol hpcscope" in lines[ar + 2]
    assert lines[ar + 4].split() == ["16", "5.00", "2.00", "9.00", "3"]
    assert "allreduce lane" in lines[-1] and "MPI_Scan (no OSU program)" in lines[-1]


# ---- the guideline verdict of the program's own mock-ups ---------------------------------


def test_reduce_scatter_slower_than_reduce_plus_scatterv_is_a_finding():
    slow = [10.0 + 0.01 * i for i in range(40)]
    fast = [5.0 + 0.01 * i for i in range(40)]
    samples = []
    for launch in (1, 2):
        for count in (1, 100):
            samples += [
                _sample("reduce_scatter", "native", count, slow, p=4, n=2, launch=launch),
                _sample("reduce_scatter", "reduce_scatterv", count, fast, p=4, n=2, launch=launch),
                _sample("alltoall", "native", count, fast, p=4, n=2, launch=launch),
                _sample("alltoall", "alltoallv", count, slow, p=4, n=2, launch=launch),
            ]
    rows = verdicts.coll_table(samples)
    by = {(r["collective"], r["count"]): r for r in rows}
    assert by[("reduce_scatter", 100)]["reduce_scatterv_verdict"] == "violation"
    assert by[("alltoall", 100)]["alltoallv_verdict"] == "slower"  # the guideline holds
    assert rows[0]["checks_in_run"] == 4
    found = verdicts.findings(rows)
    assert len(found) == 1
    text = found[0].text()
    assert "MPI_Reduce_scatter takes 1.96x the time of its own MPI_Reduce plus " in text
    assert "MPI_Scatterv of the same data at 2 of 2 counts" in text
    assert "lanecoll" not in text and "guideline violated" in text


def test_ranks_table_keys_by_bytes_over_rank_counts():
    rows = verdicts.coll_table(
        [_sample("barrier", "native", 0, [float(p)], p=p) for p in (1, 2, 4)]
        + [_sample("bcast", "native", 8, [1.0], p=4)]
    )
    table = verdicts.ranks_table(rows)
    assert [(r["collective"], r["ranks"]) for r in table] == [("barrier", {1: 1.0, 2: 2.0, 4: 4.0})]
    flat = verdicts.flat_ranks(table)
    assert [k for k, _ in verdicts.ranks_columns(table)][-3:] == ["p1", "p2", "p4"]
    assert flat[0]["p4"] == 4.0


# ---- plans ---------------------------------------------------------------------------------


def test_plan_osu_protocol_and_npmin():
    plan = coll_suite.plan(ctx(cores=4), {"protocol": "osu", "npmin": 1})
    job = plan.jobs[0]
    prog = job.program
    assert prog[prog.index("--algorithms") + 1] == "native"
    assert prog[prog.index("--counts") + 1] == "1:262144:2"  # OSU's 1 B..1 MiB in MPI_INT
    assert prog[prog.index("--protocol") + 1] == "osu" and "--precision" not in prog
    assert prog[prog.index("--npmin") + 1] == "1"
    assert job.tags["protocol"] == "osu"
    sweep = [n for n in plan.notes if "npmin" in n.data]
    assert sweep and sweep[0].data["rank_counts"] == [1, 2, 4]
    with pytest.raises(ValueError, match="npmin 5"):
        coll_suite.plan(ctx(cores=4), {"npmin": 5})
    for bad in ({"precision": 0.01}, {"interleave": True}, {"protocol": "imb"}):
        with pytest.raises(ValueError, match="protocol"):
            coll_suite.plan(ctx(), {"protocol": bad.pop("protocol", "osu"), **bad})
    hpcscope = coll_suite.plan(ctx(), {"node_size": 1}).jobs[0]
    assert "--protocol" not in hpcscope.program and "protocol" not in hpcscope.tags


def test_catalogue_and_buffers_of_the_new_collectives():
    by_name = {c["name"]: c for c in CATALOG["collectives"]}
    for name in NEW:
        assert by_name[name]["native_only"]
    assert [a["variant"] for a in by_name["reduce_scatter"]["algorithms"]] == [
        "native",
        "reduce_scatterv",
    ]
    assert "alltoallv" in [a["variant"] for a in by_name["alltoall"]["algorithms"]]
    assert coll_suite.buffer_bytes("barrier", 100, 4, True) == 0
    # p x count each way (irregular blocks), twice the receive buffer when validating
    assert coll_suite.buffer_bytes("alltoallw", 10, 4, True) == (40 + 80) * 4
