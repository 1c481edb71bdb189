"""Export schema and `hpcscope import` (results/transfer.py, docs/records.md section 3):
the JSON export carries the placement proof of every launch, and export -> import ->
export gives the same document except for the ids, which are new in the importing store
(run.id, launches[].id, samples[].id, samples[].launch_id, pooled[].launch_ids)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from hpcscope.results import transfer
from hpcscope.results.export import EXPORT_SCHEMA, to_csv, to_json
from hpcscope.results.store import Store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402


@pytest.fixture
def source(tmp_path: Path) -> tuple[Store, list[int]]:
    store, runs = build_store.build(tmp_path / "cluster.db")
    yield store, runs
    store.close()


def normalized(text: str) -> dict:
    """The export with its ids replaced by their order of appearance."""
    doc = json.loads(text)
    launch_ids = {l["id"]: i for i, l in enumerate(doc["launches"])}
    doc["run"]["id"] = None
    for launch in doc["launches"]:
        launch["id"] = launch_ids[launch["id"]]
    for i, s in enumerate(doc["samples"]):
        s["id"] = i
        s["launch_id"] = launch_ids[s["launch_id"]]
    for p in doc["pooled"]:
        p["launch_ids"] = sorted(launch_ids[i] for i in p["launch_ids"])
    return doc


def test_json_export_has_schema_and_placement_proof(source) -> None:
    store, runs = source
    doc = json.loads(to_json(store, runs[0]))
    assert doc["schema"] == EXPORT_SCHEMA == "hpcscope.export/1"
    assert doc["run"]["command"][:3] == ["hpcscope", "run", "p2p"]
    launches = store.launches(runs[0])
    assert [l["id"] for l in doc["launches"]] == [l["id"] for l in launches]
    first = doc["launches"][0]
    assert set(first) >= {"id", "name", "tags", "status", "mpi", "timer", "ranks", "meta"}
    assert first["mpi"] == {"library": "Open MPI", "version": "3.1.6"}
    assert first["timer"] == {"resolution_ns": 1, "overhead_ns": 22}
    assert first["ranks"][0]["cpus"] == [0] and first["ranks"][0]["numa"] == 0
    assert first["ranks"][0]["host"].startswith("lcc3-n01")
    assert {s["launch_id"] for s in doc["samples"]} <= {l["id"] for l in doc["launches"]}


def test_csv_has_the_hosts_and_cpus_of_every_rank(source) -> None:
    store, runs = source
    rows = list(csv.DictReader(io.StringIO(to_csv(store, runs[0]))))
    assert rows and all(r["rank_hosts_cpus"].endswith(":0") for r in rows)
    assert rows[0]["rank_hosts_cpus"].startswith("lcc3-n01")


@pytest.mark.parametrize("which", [0, 1, 2])
def test_export_import_export_is_identical_but_for_ids(source, tmp_path, which) -> None:
    store, runs = source
    first = to_json(store, runs[which])
    path = tmp_path / "run.json"
    path.write_text(first)
    with Store(tmp_path / "laptop.db") as laptop:
        for _ in range(5):  # ids in the new store differ from the old ones
            laptop.create_run("p2p")
        [(old, new)] = transfer.import_file(laptop, path)
        assert old == runs[which] and new != old
        again = to_json(laptop, new)
    assert normalized(again) == normalized(first)
    assert json.loads(again)["run"]["id"] == new


def test_a_store_file_imports_all_its_runs_with_topology(source, tmp_path) -> None:
    store, runs = source
    with Store(tmp_path / "laptop.db") as laptop:
        pairs = transfer.import_file(laptop, store.path)
        assert [old for old, _ in pairs] == runs
        for old, new in pairs:
            assert normalized(to_json(laptop, new)) == normalized(to_json(store, old))
            assert laptop.run(new)["topology_xml"] == store.run(old)["topology_xml"]
            assert (
                laptop.summaries(new)
                and len(laptop.summaries(new)) == len(store.summaries(old))
                or not store.summaries(old)
            )


def _count(db: Path) -> list[int]:
    with sqlite3.connect(db) as con:
        return [
            con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("runs", "launches", "samples", "summaries", "errors")
        ]


def test_a_bad_run_late_in_a_file_leaves_the_store_unchanged(source, tmp_path) -> None:
    """One transaction: the second run fails inside the store, the first is rolled back."""
    store, runs = source
    docs = [transfer.check_export(json.loads(to_json(store, r)), "x") for r in runs[:2]]
    docs[1]["launches"][0]["status"] = "EXPLODED"
    with Store(tmp_path / "laptop.db") as laptop:
        before = _count(laptop.path)
        with pytest.raises(ValueError, match="EXPLODED"):
            laptop.import_runs(docs)
        assert _count(laptop.path) == before


@pytest.mark.parametrize(
    "content,said",
    [
        ("not json at all", "not an hpcscope export (not JSON"),
        ("[1, 2]", "not an hpcscope export (a JSON list"),
        ('{"run": {}, "samples": []}', "not an hpcscope export (schema None"),
        ('{"schema": "hpcscope.export/2"}', "newer than this hpcscope reads"),
        ('{"schema": "hpcscope.export/x"}', "unknown export schema"),
        ('{"schema": "hpcscope.export/1", "run": null}', "'run' is None"),
    ],
)
def test_bad_files_are_refused(tmp_path, content, said) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(transfer.TransferError, match=said.replace("(", r"\(")):
        transfer.read_file(path)


def test_a_bad_sample_is_named(source, tmp_path) -> None:
    store, runs = source
    doc = json.loads(to_json(store, runs[0]))
    doc["samples"][3]["values"] = []
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(transfer.TransferError, match=r"samples\[3\]"):
        transfer.read_file(path)
