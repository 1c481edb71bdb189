"""SQLite store: round trip, 'last', crash safety, schema version, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from hpcscope.results.store import SCHEMA_VERSION, Store, StoreError, default_path

META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "0.1",
    "mpi": {"library": "Open MPI", "version": "4.1.4"},
    "ranks": [{"rank": 0, "host": "n1", "cpus": [0], "core": 0, "socket": 0, "numa": 0}],
    "timer": {"resolution_ns": 1, "overhead_ns": 20},
    "options": {},
}


def sample(nbytes: int, values: list[float], metric: str = "latency", unit: str = "us") -> dict:
    return {
        "type": "sample",
        "metric": metric,
        "unit": unit,
        "params": {"bytes": nbytes},
        "values": values,
        "warmups": 5,
    }


def test_default_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HPCSCOPE_DB", raising=False)
    assert default_path() == Path("hpcscope.db")
    monkeypatch.setenv("HPCSCOPE_DB", str(tmp_path / "env.db"))
    assert default_path() == tmp_path / "env.db"
    assert default_path(tmp_path / "arg.db") == tmp_path / "arg.db"
    with Store() as store:
        assert store.path == tmp_path / "env.db"
    assert (tmp_path / "env.db").exists()


def test_round_trip(tmp_path: Path) -> None:
    with Store(tmp_path / "h.db") as store:
        run = store.create_run(
            "p2p",
            command=["hpcscope", "run", "p2p"],
            options={"quick": True},
            host="n1",
            backend="local",
            label="laptop",
            topology_xml="<topology/>",
            environment={"kernel": "6.1"},
            mpi=[{"flavor": "openmpi", "version": "4.1.4"}],
        )
        store.add_note(run, "skipped", "placement numa: one NUMA node", {"placement": "numa"})
        store.add_note(run, "warning", "governor is powersave")
        tags = {"mpi": "openmpi", "placement": "core", "repeat": 1}
        launch = store.add_launch(run, "openmpi/core/r1", tags, backend_id="1234")
        store.add_record(launch, META)
        store.add_record(launch, sample(8, [0.16, 0.17]))
        store.add_record(launch, sample(8, [9.4, 9.5], "bandwidth", "MB/s"))
        store.add_record(launch, {"type": "summary", "metric": "latency", "median": 0.16})
        store.add_record(launch, {"type": "error", "message": "rank 1 bound to wrong CPU"})
        store.add_record(launch, {"type": "cpu_pair", "cacheline_ns": 60.5, "round_trips": 9})
        store.finish_launch(launch, "FAILED", 1, "stderr tail")
        store.set_run_backend_data(run, {"slurm_jobs": ["1234"]})
        store.set_run_backend_data(run, {"run_dir": "/scratch/r1"})
        store.finish_run(run, "failed")

    with Store(tmp_path / "h.db") as store:
        r = store.run(run)
        assert r["status"] == "failed" and r["finished"] and r["started"]
        assert r["command"] == ["hpcscope", "run", "p2p"] and r["options"] == {"quick": True}
        assert (r["host"], r["backend"], r["label"]) == ("n1", "local", "laptop")
        assert r["topology_xml"] == "<topology/>" and r["environment"] == {"kernel": "6.1"}
        assert r["mpi"] == [{"flavor": "openmpi", "version": "4.1.4"}]
        assert [(n["kind"], n["text"]) for n in r["notes"]] == [
            ("skipped", "placement numa: one NUMA node"),
            ("warning", "governor is powersave"),
        ]
        data = store.get_run_backend_data(run)
        assert data.pop("owner")["pid"] == os.getpid()  # who runs it: see 'abandoned'
        assert data == {"slurm_jobs": ["1234"], "run_dir": "/scratch/r1"}
        [l] = store.launches(run)
        assert l["tags"] == tags and l["status"] == "FAILED"
        pair = {"cacheline_ns": 60.5, "round_trips": 9}  # the last record, kept in meta
        assert l["meta"] == dict(META, cpu_pair=pair)
        assert (l["returncode"], l["stderr_tail"], l["backend_id"]) == (1, "stderr tail", "1234")
        assert l["errors"] == ["rank 1 bound to wrong CPU"]
        got = store.samples(run)
        assert len(got) == 2
        assert got[0]["tags"] == tags and got[0]["launch_id"] == launch
        assert got[0]["benchmark"] == "p2p" and got[0]["params"] == {"bytes": 8}
        assert got[0]["values"] == [0.16, 0.17] and got[0]["warmups"] == 5
        assert [s["metric"] for s in store.samples(run, metric="bandwidth")] == ["bandwidth"]
        assert store.samples(run, benchmark="coll") == []
        assert store.summaries(run) == [
            {"type": "summary", "metric": "latency", "median": 0.16, "launch_id": launch}
        ]
        [listed] = store.runs()
        assert listed["n_launches"] == 1 and listed["n_samples"] == 2


def test_resolve(tmp_path: Path) -> None:
    with Store(tmp_path / "h.db") as store:
        with pytest.raises(StoreError, match="no runs in .* yet"):
            store.resolve("last")
        first = store.create_run("p2p")
        second = store.create_run("coll")
        assert store.resolve("last") == second
        assert store.resolve(str(first)) == first and store.resolve(first) == first
        with pytest.raises(StoreError, match="no run 99 .*`hpcscope list` shows the runs"):
            store.resolve("99")
        with pytest.raises(StoreError, match="neither a run id nor 'last'"):
            store.resolve("latest")


def test_bad_values_are_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "h.db") as store:
        with pytest.raises(StoreError, match="unknown backend 'cloud'"):
            store.create_run("p2p", backend="cloud")
        run = store.create_run("p2p")
        with pytest.raises(StoreError, match="unknown run status 'done'; expected one of"):
            store.finish_run(run, "done")
        launch = store.add_launch(run, "a")
        pair = {"type": "cpu_pair", "cacheline_ns": 60.5, "round_trips": 9}
        with pytest.raises(StoreError, match="a cpu_pair record but no meta record"):
            store.add_record(launch, pair)
        store.add_record(launch, META)
        with pytest.raises(StoreError, match="already has a meta record"):
            store.add_record(launch, META)
        with pytest.raises(ValueError, match="launch .*: sample record has no 'values'"):
            store.add_record(
                launch, {"type": "sample", "metric": "x", "unit": "us", "params": {}, "warmups": 0}
            )
        with pytest.raises(StoreError, match="no launch 42"):
            store.add_record(42, META)
        with pytest.raises(StoreError, match="no run 42"):
            store.add_launch(42, "x")


def _write_forever(path: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    with Store(path) as store:
        run = store.create_run("p2p")
        launch = store.add_launch(run, "openmpi/core/r1", {"placement": "core"})
        store.add_record(launch, META)
        for i in range(10_000):
            store.add_record(launch, sample(i, [1.0]))
            if i == 49:
                ready.set()


def test_killed_writer_keeps_committed_records(tmp_path: Path) -> None:
    """A crash (SIGKILL, no cleanup) loses at most the record in flight."""
    path = str(tmp_path / "h.db")
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_write_forever, args=(path, ready))
    proc.start()
    assert ready.wait(60)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    with Store(path) as store:
        run = store.resolve("last")
        # Nobody finished it and its process is gone: shown as abandoned (issue 17).
        assert store.run(run)["status"] == "abandoned"
        assert [r["status"] for r in store.runs()] == ["abandoned"]
        got = store.samples(run)
        assert len(got) >= 50
        assert [s["params"]["bytes"] for s in got] == list(range(len(got)))
        store.finish_run(run, "interrupted")
        assert store.run(run)["status"] == "interrupted"
        assert store.launches(run)[0]["status"] == "RUNNING"
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(
        StoreError,
        match=r"written by a newer hpcscope \(store schema 2; "
        r"this hpcscope knows up to 1\): upgrade",
    ):
        Store(path)


def test_foreign_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not an hpcscope store"):
        Store(other)
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just some text that is long enough" * 20)
    with pytest.raises(StoreError, match="not a usable hpcscope store"):
        Store(text)
    with pytest.raises(StoreError, match="folder .* does not exist"):
        Store(tmp_path / "missing" / "h.db")


WRITERS, RECORDS = 4, 200


def _writer(path: str, index: int, start: multiprocessing.synchronize.Barrier) -> None:  # type: ignore[name-defined]
    start.wait()
    with Store(path) as store:  # every process also races to create the schema
        run = store.create_run("p2p", label=f"writer{index}")
        store.add_note(run, "info", f"writer {index}")
        launch = store.add_launch(run, f"w{index}", {"writer": index})
        store.add_record(launch, META)
        for i in range(RECORDS):
            store.add_record(launch, sample(i, [float(index), float(i)]))
        store.finish_launch(launch, "COMPLETED", 0)
        store.finish_run(run, "ok")


def test_concurrent_writers(tmp_path: Path) -> None:
    path = str(tmp_path / "h.db")
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=_writer, args=(path, i, start)) for i in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    with Store(path) as store:
        runs = store.runs()
        assert sorted(r["label"] for r in runs) == [f"writer{i}" for i in range(WRITERS)]
        for r in runs:
            assert r["status"] == "ok" and r["n_samples"] == RECORDS and len(r["notes"]) == 1
            got = store.samples(r["id"])
            index = got[0]["tags"]["writer"]
            assert r["label"] == f"writer{index}"
            assert [s["values"] for s in got] == [[float(index), float(i)] for i in range(RECORDS)]
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_reader_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    """Issue 17: opening a store took the write lock, so `show` waited for a long writer
    and then called the store not usable."""
    path = tmp_path / "h.db"
    with Store(path) as writer:
        run = writer.create_run("p2p")
        writer._db.execute("BEGIN IMMEDIATE")  # a writer in the middle of a transaction
        started = time.monotonic()
        with Store(path, create=False) as reader:
            assert reader.run(run)["suite"] == "p2p"
        assert time.monotonic() - started < 5
        writer._db.execute("ROLLBACK")
