"""The store's listing queries (filters, paging) and its indexes: added at open to a store
written without them, never written by a read-only open (results/store.py _INDEXES)."""

from __future__ import annotations

import sqlite3

import pytest

from hpcscope.results.store import _INDEXES, Store, StoreError


def _fill(path, n=7):
    with Store(path) as store:
        for i in range(n):
            rid = store.create_run(
                "p2p" if i % 2 == 0 else "coll", label="nightly" if i < 4 else "upgrade"
            )
            store.finish_run(rid, "ok" if i != 3 else "failed")
    # spread the start times over days, oldest first (create_run stamps "now")
    db = sqlite3.connect(path)
    for i in range(n):
        db.execute(
            "UPDATE runs SET started = ? WHERE id = ?",
            (f"2026-11-{10 + i:02d}T12:00:00.000+00:00", i + 1),
        )
    db.commit()
    db.close()


def test_filters_match_what_they_name(tmp_path):
    db = tmp_path / "s.db"
    _fill(db)
    with Store(db) as store:
        ids = lambda **kw: [r["id"] for r in store.list_runs(**kw)[0]]  # noqa: E731
        assert ids() == [1, 2, 3, 4, 5, 6, 7]
        assert ids(suite="p2p") == [1, 3, 5, 7]
        assert ids(label="nightly") == [1, 2, 3, 4]
        assert ids(label="up*") == [5, 6, 7]
        assert ids(status="failed") == [4]
        assert ids(since="2026-11-15T00:00:00.000+00:00") == [6, 7]
        assert ids(suite="p2p", label="nightly", status="ok") == [1, 3]
        assert store.run_ids(suite="coll") == [2, 4, 6]


def test_pages_count_from_the_newest(tmp_path):
    db = tmp_path / "s.db"
    _fill(db)
    with Store(db) as store:
        page, total = store.list_runs(limit=3)
        assert [r["id"] for r in page] == [5, 6, 7] and total == 7
        page, total = store.list_runs(limit=3, offset=3)
        assert [r["id"] for r in page] == [2, 3, 4]
        page, _ = store.list_runs(limit=3, offset=6)
        assert [r["id"] for r in page] == [1]
        assert "topology_xml" not in page[0] and "n_samples" in page[0]


def test_unknown_status_is_refused(tmp_path):
    db = tmp_path / "s.db"
    _fill(db, 1)
    with Store(db) as store, pytest.raises(StoreError, match="run status"):
        store.list_runs(status="done")


def _drop_indexes(path):
    db = sqlite3.connect(path)
    for name in _INDEXES:
        db.execute(f"DROP INDEX {name}")
    db.commit()
    db.close()


def test_a_store_without_the_indexes_gets_them_at_open(tmp_path):
    db = tmp_path / "old.db"
    _fill(db)
    _drop_indexes(db)
    with Store(db, read_only=True) as store:  # read-only: answered, nothing written
        assert store.missing_indexes() == list(_INDEXES)
        assert [r["id"] for r in store.list_runs(suite="p2p")[0]] == [1, 3, 5, 7]
    with Store(db, create=False) as store:
        assert store.missing_indexes() == []
        assert len(store.list_runs()[0]) == 7  # the data is as it was
    plan = sqlite3.connect(db).execute(
        "EXPLAIN QUERY PLAN SELECT id FROM runs r WHERE r.suite = 'p2p' ORDER BY started"
    )
    assert "runs_suite_started" in " ".join(str(row) for row in plan)


def test_read_only_open_writes_nothing(tmp_path):
    db = tmp_path / "s.db"
    _fill(db, 2)
    with Store(db, read_only=True) as store:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.create_run("p2p")
    with pytest.raises(StoreError, match="no store"):
        Store(tmp_path / "missing.db", read_only=True)


def test_samples_of_runs_reads_many_runs_at_once(tmp_path):
    db = tmp_path / "s.db"
    with Store(db) as store:
        runs = [store.create_run("p2p") for _ in range(3)]
        for rid in runs:
            lid = store.add_launch(rid, "p2p", {"placement": "core"})
            for metric in ("latency", "bandwidth"):
                store.add_record(
                    lid,
                    {
                        "type": "sample",
                        "benchmark": "p2p",
                        "metric": metric,
                        "unit": "us" if metric == "latency" else "MB/s",
                        "params": {"bytes": rid},
                        "values": [1.0, 2.0],
                        "warmups": 0,
                    },
                )
        got = store.samples_of_runs([runs[2], runs[0]], metric="latency")
    assert [(s["run_id"], s["params"]["bytes"]) for s in got] == [(runs[2], 3), (runs[0], 1)]
    assert got[0]["tags"] == {"placement": "core"} and got[0]["values"] == [1.0, 2.0]


def test_a_store_on_a_read_only_mount_is_read(tmp_path):
    """A read command on an archive mounted read-only: WAL's shared-memory file cannot be
    made there, so the store is opened read-only (then immutable), without its indexes."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    _fill(src / "old.db", 3)
    _drop_indexes(src / "old.db")
    db = sqlite3.connect(src / "old.db")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    mounted = subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"no bind mount here: {mounted.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mnt)], check=True)
        with Store(mnt / "old.db", create=False) as store:
            assert store.read_only
            assert [r["id"] for r in store.list_runs()[0]] == [1, 2, 3]
        with pytest.raises(StoreError):  # a command that writes still says it cannot
            Store(mnt / "old.db")
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
    assert sorted(p.name for p in src.iterdir()) == ["old.db"]  # nothing was written
