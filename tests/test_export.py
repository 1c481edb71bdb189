"""Exports from a store filled with synthetic records shaped like the published LCC3 OSU
tables (tests/fixtures/records/, copies of shared/data): the Markdown table must give the
published numbers back, the OSU text the published columns."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hpcscope.results.export import export, p2p_table, to_csv, to_json, to_markdown, to_osu
from hpcscope.results.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "records"
PLACEMENTS = ("core", "socket", "node")
META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "0.1",
    "mpi": {"library": "Open MPI", "version": "3.1.6"},
    "ranks": [
        {"rank": 0, "host": "n1", "cpus": [0], "core": 0, "socket": 0, "numa": 0},
        {"rank": 1, "host": "n1", "cpus": [1], "core": 1, "socket": 0, "numa": 0},
    ],
    "timer": {"resolution_ns": 1, "overhead_ns": 20},
    "options": {},
}


def read_tsv(name: str) -> list[dict[str, float | None]]:
    lines = [l for l in (FIXTURES / name).read_text().splitlines() if not l.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    return [{k: (float(v) if v else None) for k, v in row.items()} for row in rows]


def sample(metric: str, unit: str, nbytes: int, values: list[float], **settings) -> dict:
    return {
        "type": "sample",
        "metric": metric,
        "unit": unit,
        "params": {"bytes": nbytes, **settings},
        "values": values,
        "warmups": 10,
    }


def p2p_sample(metric: str, nbytes: int, values: list[float]) -> dict:
    """Params as bench/mpi/p2p.c writes them: settings that vary with the size."""
    iterations = 10000 if nbytes <= 8192 else 1000
    if metric == "latency":
        return sample(
            "latency",
            "us",
            nbytes,
            values,
            test="latency",
            iterations=iterations,
            block=iterations // 10,
        )
    return sample(
        "bandwidth",
        "MB/s",
        nbytes,
        values,
        test="bw",
        iterations=iterations,
        block=iterations // 10,
        window=64,
    )


@pytest.fixture
def placement_store(tmp_path: Path) -> tuple[Store, int, list[dict]]:
    """One launch per placement; every size measured 3 times with the published value."""
    table = read_tsv("lcc3_osu_placement.tsv")
    store = Store(tmp_path / "h.db")
    run = store.create_run("p2p")
    for placement in PLACEMENTS:
        launch = store.add_launch(
            run, f"openmpi/{placement}/r1", {"mpi": "openmpi", "placement": placement, "repeat": 1}
        )
        store.add_record(launch, META)
        for row in table:
            nbytes = int(row["bytes"])
            lat, bw = row[f"lat_{placement}_us"], row[f"bw_{placement}_MBps"]
            if lat is not None:
                store.add_record(launch, p2p_sample("latency", nbytes, [lat] * 3))
            if bw is not None:
                store.add_record(launch, p2p_sample("bandwidth", nbytes, [bw] * 3))
        store.finish_launch(launch, "COMPLETED", 0)
    store.finish_run(run, "ok")
    yield store, run, table
    store.close()


def markdown_rows(text: str, which: int = 0) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the `which`-th table (0: the seed-style table, 1: per-launch)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    table = tables[which]
    cells = [[c.strip() for c in l.strip("|").split("|")] for l in table]
    return cells[0], cells[2:]


def test_markdown_reproduces_the_published_placement_table(placement_store) -> None:
    store, run, table = placement_store
    text = to_markdown(store, run)
    assert text.startswith("### p2p mpi=openmpi\n")
    head, rows = markdown_rows(text)
    columns = ("median ({unit})", "95% CI", "mean", "σ")
    assert head == [
        "bytes",
        *(f"latency {p} " + c.format(unit="us") for p in PLACEMENTS for c in columns),
        *(f"bandwidth {p} " + c.format(unit="MB/s") for p in PLACEMENTS for c in columns),
    ]
    assert len(rows) == len(table) == 24
    for row, published in zip(rows, table):
        assert int(row[0]) == published["bytes"]
        got = dict(zip(head, row))
        for p in PLACEMENTS:
            assert float(got[f"latency {p} median (us)"]) == published[f"lat_{p}_us"]
            assert float(got[f"latency {p} mean"]) == published[f"lat_{p}_us"]
            assert got[f"latency {p} σ"] == ""  # one launch: no sigma over launches
            bw = published[f"bw_{p}_MBps"]
            if bw is None:  # 0 bytes: bandwidth not measured
                assert got[f"bandwidth {p} median (MB/s)"] == "" == got[f"bandwidth {p} mean"]
            else:
                assert float(got[f"bandwidth {p} median (MB/s)"]) == bw
    # the shapes the published data shows survive the round trip
    by_size = {int(r[0]): dict(zip(head, r)) for r in rows}
    assert float(by_size[16384]["bandwidth core median (MB/s)"]) < float(
        by_size[8192]["bandwidth core median (MB/s)"]
    )
    assert float(by_size[4194304]["latency core median (us)"]) == 739.75
    assert "Per-launch values (one per launch, in launch order):" in text


def test_markdown_reproduces_mean_and_std_over_ten_executions(tmp_path: Path) -> None:
    """10 launches per placement, one value each, built to have the published mean and
    sample std: the seeds' view (mean and sigma over one number per launch) gives both
    back, for bandwidths too (the mean over launches is arithmetic, as the LCC3 exercises
    computed it; within a launch a rate is work over time)."""
    table = read_tsv("lcc3_osu_stability.tsv")
    z = np.array([1.0, -1.0] * 5) * math.sqrt(0.9)  # mean 0, sample std 1
    with Store(tmp_path / "h.db") as store:
        run = store.create_run("p2p")
        for p in PLACEMENTS:
            for r in range(10):
                launch = store.add_launch(
                    run,
                    f"openmpi/{p}/r{r + 1}",
                    {"mpi": "openmpi", "placement": p, "repeat": r + 1},
                )
                store.add_record(launch, META)
                for row in table:
                    nbytes = int(row["bytes"])
                    lat = row[f"lat_{p}_mean"] + row[f"lat_{p}_std"] * z[r]
                    store.add_record(launch, sample("latency", "us", nbytes, [lat]))
                    if row[f"bw_{p}_mean"] is not None:
                        bws = row[f"bw_{p}_mean"] + row[f"bw_{p}_std"] * z
                        store.add_record(
                            launch, sample("bandwidth", "MB/s", nbytes, [float(bws[r])])
                        )
        text = to_markdown(store, run)
    assert "over the 30 launch(es) of one number per launch" in text
    head, rows = markdown_rows(text)
    _, per_launch = markdown_rows(text, 1)
    assert len(per_launch[0][1].split(", ")) == 10  # 0 bytes, latency core: 10 launches
    for row, published in zip(rows, table):
        got = dict(zip(head, row))
        for p in PLACEMENTS:
            for metric, short in (("latency", "lat"), ("bandwidth", "bw")):
                if published[f"{short}_{p}_mean"] is None:
                    continue
                assert float(got[f"{metric} {p} mean"]) == pytest.approx(
                    published[f"{short}_{p}_mean"], abs=0.005
                )
                assert float(got[f"{metric} {p} σ"]) == pytest.approx(
                    published[f"{short}_{p}_std"], abs=0.005
                )


def test_osu_text_gives_the_published_columns(placement_store) -> None:
    store, run, table = placement_store
    text = to_osu(store, run)
    blocks = text.strip().split("\n\n")
    assert len(blocks) == 6  # latency, bandwidth x 3 placements
    assert (
        blocks[0].splitlines()[0]
        == "# OSU MPI Latency Test (hpcscope: p2p, mpi=openmpi, placement=core)"
    )
    assert blocks[0].splitlines()[2] == "# Size          Latency (us)"
    assert blocks[0].splitlines()[3] == "0                       0.16"
    assert blocks[3].startswith(
        "# OSU MPI Bandwidth Test (hpcscope: p2p, mpi=openmpi, placement=core)"
    )
    assert blocks[3].splitlines()[2] == "# Size      Bandwidth (MB/s)"
    for block, (metric, p) in zip(
        blocks, [("lat", p) for p in PLACEMENTS] + [("bw", p) for p in PLACEMENTS]
    ):
        data = [l.split() for l in block.splitlines() if not l.startswith("#")]
        column = "us" if metric == "lat" else "MBps"
        published = [
            (int(r["bytes"]), r[f"{metric}_{p}_{column}"])
            for r in table
            if r[f"{metric}_{p}_{column}"] is not None
        ]
        assert [(int(a), float(b)) for a, b in data] == published
        assert all(len(l) == 28 for l in block.splitlines()[2:])  # OSU widths 10 + 18


def test_p2p_table_rows(placement_store) -> None:
    store, run, table = placement_store
    rows = p2p_table(store.samples(run), "latency")
    assert [r["bytes"] for r in rows] == [int(r["bytes"]) for r in table]
    row = rows[-1]
    assert list(row["placements"]) == ["core", "socket", "node"]
    core = row["placements"]["core"]
    assert (core["median"], core["launch_mean"], core["launch_std"], core["n"]) == (
        739.75,
        739.75,
        None,
        3,
    )
    assert core["launches"] == 1 and core["launch_values"] == [739.75]
    assert core["ci_low"] is None and core["across"] is None
    bw = p2p_table(store.samples(run), "bandwidth")
    assert bw[0]["bytes"] == 1
    assert bw[0]["placements"]["node"]["launch_mean"] == pytest.approx(3.43)


def test_p2p_table_refuses_to_mix_mpis(tmp_path: Path) -> None:
    with Store(tmp_path / "h.db") as store:
        run = store.create_run("p2p")
        for mpi, value in (("openmpi", 1.0), ("mpich", 2.0)):
            for repeat in (1, 2):
                launch = store.add_launch(
                    run,
                    f"{mpi}/core/r{repeat}",
                    {"mpi": mpi, "placement": "core", "repeat": repeat},
                )
                store.add_record(launch, META)
                store.add_record(launch, sample("latency", "us", 8, [value + 0.2 * repeat] * 6))
        samples = store.samples(run)
        with pytest.raises(ValueError, match="2 MPI libraries .*choose one with mpi="):
            p2p_table(samples)
        [row] = p2p_table(samples, mpi="mpich")
        cell = row["placements"]["core"]
        assert cell["launches"] == 2 and cell["n"] == 12
        assert cell["across"]["medians"] == [2.2, 2.4]
        assert any("launch medians differ by" in w for w in cell["warnings"])
        text = to_markdown(samples)
        assert "### p2p mpi=mpich" in text and "### p2p mpi=openmpi" in text
        assert "Warnings:" in text


def test_csv_one_row_per_launch_metric_params(placement_store) -> None:
    store, run, table = placement_store
    rows = list(csv.DictReader(io.StringIO(to_csv(store, run))))
    measured = sum(
        1
        for r in table
        for m in ("lat", "bw")
        for p in PLACEMENTS
        if r[f"{m}_{p}_{'us' if m == 'lat' else 'MBps'}"] is not None
    )
    assert len(rows) == measured == 3 * 24 + 3 * 23
    first = rows[0]
    assert list(first)[:15] == [
        "launch_id",
        "launch",
        "mpi",
        "placement",
        "repeat",
        "rank_hosts_cpus",
        "placement_verdict",
        "benchmark",
        "metric",
        "unit",
        "block",
        "bytes",
        "iterations",
        "test",
        "window",
    ]
    assert (
        first["mpi"],
        first["placement"],
        first["repeat"],
        first["metric"],
        first["bytes"],
        first["test"],
        first["window"],
        first["n"],
        first["median"],
        first["std"],
    ) == ("openmpi", "core", "1", "latency", "0", "latency", "", "3", "0.16", "0.0")
    assert first["ci_low"] == "" and "need >= 6" in first["warnings"]
    node_bw = [r for r in rows if r["placement"] == "node" and r["metric"] == "bandwidth"]
    assert float(node_bw[-1]["mean"]) == 3396.35


def test_json_keeps_all_raw_values(placement_store) -> None:
    store, run, table = placement_store
    data = json.loads(to_json(store, run))
    assert data["run"]["id"] == run and data["run"]["status"] == "ok"
    assert len(data["samples"]) == 3 * 24 + 3 * 23
    s = data["samples"][0]
    assert s["values"] == [0.16, 0.16, 0.16] and s["tags"]["placement"] == "core"
    assert s["summary"]["median"] == 0.16 and s["summary"]["n"] == 3
    assert len(data["pooled"]) == len(data["samples"])  # one launch per placement
    assert data["pooled"][0]["tags"] == {"mpi": "openmpi", "placement": "core"}
    assert data["pooled"][0]["params"] == {"bytes": 0}  # settings are pooled


def test_export_dispatch(placement_store) -> None:
    store, run, _ = placement_store
    assert export(store, run, "osu") == to_osu(store, run)
    with pytest.raises(ValueError, match="unknown export format 'xml'; choose one of json"):
        export(store, run, "xml")


def test_in_launch_repetitions_and_settings_are_pooled(tmp_path: Path) -> None:
    """p2p --repeat R writes R samples per size in one launch (params.repeat), with
    iterations/block varying by size: one cell per size, one OSU line per size."""
    with Store(tmp_path / "h.db") as store:
        run = store.create_run("p2p")
        launch = store.add_launch(run, "openmpi/core/r1", {"mpi": "openmpi", "placement": "core"})
        store.add_record(launch, META)
        for nbytes, block in ((8, 1000), (65536, 100)):
            for rep in (1, 2):
                store.add_record(
                    launch,
                    sample(
                        "latency",
                        "us",
                        nbytes,
                        [1.0 * rep + nbytes / 65536] * 3,
                        test="latency",
                        iterations=block * 10,
                        block=block,
                        repeat=rep,
                    ),
                )
        samples = store.samples(run)
        rows = p2p_table(samples)
        assert [r["bytes"] for r in rows] == [8, 65536]
        cell = rows[0]["placements"]["core"]
        assert (
            cell["n"] == 6
            and cell["launches"] == 1
            and cell["median"] == pytest.approx(1.5 + 8 / 65536)
        )
        osu = to_osu(samples).splitlines()
        assert osu[0] == "# OSU MPI Latency Test (hpcscope: p2p, mpi=openmpi, placement=core)"
        assert [l.split()[0] for l in osu[3:]] == ["8", "65536"]
        _, md_rows = markdown_rows(to_markdown(samples))
        assert [r[0] for r in md_rows] == ["8", "65536"]
        other = [dict(s, params=dict(s["params"], algorithm="x")) for s in samples[:1]]
        with pytest.raises(ValueError, match="differ in params other than bytes"):
            p2p_table(samples + other)


def test_osu_text_of_mbw_mr_has_osus_two_columns(tmp_path: Path) -> None:
    """osu_mbw_mr prints MB/s, then Messages/s: the export does too (the rate times the
    size), so a parser or a script reading OSU's first column reads the same quantity."""
    with Store(tmp_path / "h.db") as store:
        run = store.create_run("p2p")
        launch = store.add_launch(run, "openmpi/core/r1", {"mpi": "openmpi", "placement": "core"})
        store.add_record(launch, META)
        store.add_record(launch, sample("message_rate", "msg/s", 64, [2e6, 4e6, 3e6]))
        lines = to_osu(store, run).splitlines()
    assert lines[0].startswith("# OSU MPI Multiple Bandwidth / Message Rate Test (hpcscope")
    assert lines[2].split() == ["#", "Size", "MB/s", "Messages/s"]
    assert lines[3].split() == ["64", "192.00", "3000000.00"]  # 64 B x 3e6 / 1e6
