"""The results store: one SQLite file holding runs, launches and their raw records.

Why SQLite: one file the user can copy, query and keep next to their job scripts, no
server, and safe concurrent writers. Two `hpcscope run` processes (or a SLURM collector
and a report) may write the same file at once, so the database runs in WAL mode with a
busy timeout and every write is a short `BEGIN IMMEDIATE` transaction: writers queue for
the lock instead of failing, and readers never block them. Each record is committed on
its own, so a crash or Ctrl-C loses nothing that was already ingested.

All SQL of hpcscope lives in this file. Raw values are stored as JSON lists; statistics
are derived from them (hpcscope.results.stats), never stored in their place.

The schema version is kept in `PRAGMA user_version`; a database written by a newer
hpcscope is refused with a clear message rather than misread.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hpcscope.results.records import validate

SCHEMA_VERSION = 1
DEFAULT_DB = "hpcscope.db"
RUN_STATUSES = ("running", "ok", "failed", "interrupted", "partial")
BACKENDS = ("local", "slurm", "lab", "sim")
# Launch states follow hpcscope.launch.base.JobState (SLURM vocabulary) plus our own.
LAUNCH_STATUSES = (
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "TIMEOUT",
    "CANCELLED",
    "NODE_FAIL",
    "INTERRUPTED",
    "SKIPPED",
)
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    started       TEXT NOT NULL,              -- ISO 8601 UTC
    finished      TEXT,
    status        TEXT NOT NULL,              -- running/ok/failed/interrupted/partial
    suite         TEXT NOT NULL,
    command       TEXT NOT NULL DEFAULT '[]', -- JSON argv
    options       TEXT NOT NULL DEFAULT '{}', -- JSON
    host          TEXT NOT NULL DEFAULT '',
    backend       TEXT NOT NULL DEFAULT 'local',
    label         TEXT NOT NULL DEFAULT '',
    topology_xml  TEXT,
    environment   TEXT NOT NULL DEFAULT '{}', -- JSON: kernel, compiler, governor, env vars
    mpi           TEXT NOT NULL DEFAULT '[]', -- JSON list of MPI identities
    notes         TEXT NOT NULL DEFAULT '[]', -- JSON list of {kind, text, data, at}
    backend_data  TEXT NOT NULL DEFAULT '{}'  -- JSON: SLURM job ids, run directory, ...
);
CREATE TABLE launches (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    tags          TEXT NOT NULL DEFAULT '{}', -- JSON: mpi, placement, repeat, ...
    status        TEXT NOT NULL,              -- JobState vocabulary: RUNNING, COMPLETED, ...
    returncode    INTEGER,
    started       TEXT NOT NULL,
    finished      TEXT,
    stderr_tail   TEXT NOT NULL DEFAULT '',
    backend_id    TEXT NOT NULL DEFAULT '',   -- e.g. SLURM job id
    meta          TEXT                        -- JSON meta record, NULL until it arrives
);
CREATE INDEX launches_run ON launches(run_id);
CREATE TABLE samples (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    launch_id     INTEGER NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    unit          TEXT NOT NULL,
    params        TEXT NOT NULL,              -- JSON object, keys sorted
    "values"      TEXT NOT NULL,              -- JSON list of raw values
    warmups       INTEGER NOT NULL
);
CREATE INDEX samples_launch ON samples(launch_id);
CREATE TABLE summaries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    launch_id     INTEGER NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
    record        TEXT NOT NULL               -- JSON summary record as written
);
CREATE INDEX summaries_launch ON summaries(launch_id);
CREATE TABLE errors (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    launch_id     INTEGER NOT NULL REFERENCES launches(id) ON DELETE CASCADE,
    message       TEXT NOT NULL
);
CREATE INDEX errors_launch ON errors(launch_id);
"""

# Indexes for the queries of list, show, report and history (issue 19). They change no
# table, so a store that lacks them (written before they existed) is read correctly by
# every hpcscope; `_ensure_indexes` adds the missing ones at open, in one short write
# transaction, and a store that cannot be written (read-only file system, --read-only
# opens) is simply read without them: the same answers, found more slowly.
#   runs_suite_started: list/history filter by suite and order by start time;
#   runs_started, runs_label, runs_status: list --since/--label/--status;
#   samples_metric: history and report read one (benchmark, metric) across many runs.
_INDEXES = {
    "runs_suite_started": "runs(suite, started, id)",
    "runs_started": "runs(started, id)",
    "runs_label": "runs(label)",
    "runs_status": "runs(status)",
    "samples_metric": "samples(benchmark, metric, launch_id)",
}

_RECOVER = (
    "Recover what is readable with `sqlite3 DB .recover | sqlite3 recovered.db` "
    "and pass --db recovered.db"
)
_RUN_JSON = ("command", "options", "environment", "mpi", "notes", "backend_data")
_LAUNCH_JSON = ("tags", "meta")


class StoreError(ValueError):
    """The store cannot do what was asked; the message says why and what to do.

    A ValueError: the cause is input (a wrong --db, an unknown run), exit code 2."""


def default_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The database file: `path` if given (--db), else $HPCSCOPE_DB, else ./hpcscope.db."""
    if path:
        return Path(path)
    return Path(os.environ.get("HPCSCOPE_DB") or DEFAULT_DB)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Store:
    """Runs, launches and records in one SQLite file. Use as a context manager or close()."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        """create=False: a command that only reads refuses a missing store instead of
        leaving an empty one behind (a typo in --db). read_only=True opens the file with
        SQLite's mode=ro: nothing is written, not even the indexes of an older store
        (queries are then answered without them)."""
        self.path = default_path(path)
        self.read_only = read_only
        if (read_only or not create) and not self.path.exists():
            raise StoreError(
                f"no store at {self.path}: nothing has been measured into it; check --db "
                "or HPCSCOPE_DB (a run creates the store)"
            )
        if self.path.parent and not self.path.parent.exists():
            raise StoreError(
                f"cannot create the store {self.path}: folder "
                f"{self.path.parent} does not exist (create it or pass "
                "another --db)"
            )
        try:
            self._open(read_only, immutable=False)
        except StoreError:
            # A store on a read-only medium (a mounted archive, a read-only snapshot)
            # cannot take WAL's shared-memory file: a command that only reads opens it
            # read-only instead, then as immutable (nobody can write it there).
            if read_only or create or os.access(self.path.parent, os.W_OK):
                raise
            self.read_only = True
            try:
                self._open(True, immutable=False)
            except StoreError:
                self._open(True, immutable=True)

    def _open(self, read_only: bool, immutable: bool) -> None:
        target = (
            f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
            + ("&immutable=1" if immutable else "")
            if read_only
            else str(self.path)
        )
        self._db = sqlite3.connect(
            target, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=read_only
        )  # explicit transactions
        try:
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if not read_only:
                self._set_wal()
                self._db.execute("PRAGMA synchronous = NORMAL")  # WAL: safe against app crash
            self._db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()
            self._ensure_indexes()
            self._check_pages()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if "malformed" in str(exc):
                raise StoreError(f"{self.path} is damaged ({exc}). {_RECOVER}") from None
            raise StoreError(
                f"{self.path} is not a usable hpcscope store ({exc}); pass "
                "another file with --db or HPCSCOPE_DB"
            ) from None
        except BaseException:
            self._db.close()
            raise

    # -- connection and schema ------------------------------------------------------

    def _set_wal(self) -> None:
        """WAL lets readers and one writer work at once; switching needs a brief lock, and
        SQLite does not always apply the busy handler to it, so retry for a while."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if str(mode).lower() != "wal":
            raise StoreError(
                f"{self.path}: SQLite refused WAL mode (journal mode {mode}); "
                "the store must be on a local file system, not e.g. NFS"
            )

    def _check_pages(self) -> None:
        """PRAGMA quick_check: a damaged page (a disk error, a copy cut short) is named at
        open, so no command reads half a store without saying so. Costs one pass over
        the file (about 0.1 s per 100 MB)."""
        problems = [row[0] for row in self._db.execute("PRAGMA quick_check(5)").fetchall()]
        if problems != ["ok"]:
            raise StoreError(f"{self.path} is damaged: " + "; ".join(problems) + f". {_RECOVER}")

    def _init_schema(self) -> None:
        # An existing store is only read here: no write lock, so `show` never waits for a
        # long-running writer (WAL lets readers and one writer work at once).
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if self.read_only:
            raise StoreError(
                f"{self.path} has store schema {version}, this hpcscope reads "
                f"{SCHEMA_VERSION}: open it without read-only to "
                + ("create it" if version == 0 else "see why")
            )
        with self._write():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = self._db.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                ).fetchone()[0]
                if tables:
                    raise StoreError(
                        f"{self.path} is an SQLite database but not an "
                        "hpcscope store; pass another file with --db"
                    )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                for name, on in _INDEXES.items():
                    self._db.execute(f"CREATE INDEX {name} ON {on}")
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer hpcscope (store schema {version}; "
                    f"this hpcscope knows up to {SCHEMA_VERSION}): upgrade hpcscope, or "
                    "use another --db"
                )
            elif version < SCHEMA_VERSION:  # pragma: no cover - no older schema exists yet
                raise StoreError(
                    f"{self.path} has store schema {version}, older than "
                    f"{SCHEMA_VERSION}, and no migration exists"
                )

    def missing_indexes(self) -> list[str]:
        present = {
            row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='index'")
        }
        return [name for name in _INDEXES if name not in present]

    def _ensure_indexes(self) -> None:
        """The migration of a store written before the query indexes existed (see
        _INDEXES): a read of sqlite_master on every open, and only when one is missing a
        write transaction that builds it (CREATE INDEX IF NOT EXISTS, so two processes
        opening an old store at once both succeed). Cost: one pass over the indexed
        table, about 0.1 s per 100,000 samples, once. A store that cannot be written is
        left as it is and read without them."""
        if self.read_only or not self.missing_indexes():
            return
        try:
            with self._write() as db:
                for name, on in _INDEXES.items():
                    db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) and "read-only" not in str(exc):
                raise

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction. IMMEDIATE takes the write lock up front, so a
        concurrent writer waits in the busy handler instead of failing on lock upgrade."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------------------

    def create_run(
        self,
        suite: str,
        *,
        command: Sequence[str] = (),
        options: dict[str, Any] | None = None,
        host: str = "",
        backend: str = "local",
        label: str = "",
        topology_xml: str | None = None,
        environment: dict[str, Any] | None = None,
        mpi: list[Any] | None = None,
    ) -> int:
        """Start a run (status 'running'); returns its id."""
        _check(backend, BACKENDS, "backend")
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO runs (started, status, suite, command, options, host, backend,"
                " label, topology_xml, environment, mpi, backend_data)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    _now(),
                    "running",
                    suite,
                    _dumps(list(command)),
                    _dumps(options or {}),
                    host,
                    backend,
                    label,
                    topology_xml,
                    _dumps(environment or {}),
                    _dumps(mpi or []),
                    _dumps({"owner": _this_process()}),
                ),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def update_run(
        self,
        run_id: int,
        *,
        host: str | None = None,
        label: str | None = None,
        topology_xml: str | None = None,
        environment: dict[str, Any] | None = None,
        mpi: list[Any] | None = None,
    ) -> None:
        """Fill in run facts learnt after the run started (topology, environment, MPIs)."""
        fields = {
            "host": host,
            "label": label,
            "topology_xml": topology_xml,
            "environment": None if environment is None else _dumps(environment),
            "mpi": None if mpi is None else _dumps(mpi),
        }
        fields = {k: v for k, v in fields.items() if v is not None}
        if not fields:
            return
        with self._write() as db:
            self._need_run(run_id)
            db.execute(
                f"UPDATE runs SET {', '.join(k + ' = ?' for k in fields)} WHERE id = ?",
                (*fields.values(), run_id),
            )

    def add_note(
        self, run_id: int, kind: str, text: str, data: dict[str, Any] | None = None
    ) -> None:
        """Append a note (e.g. kind 'skipped': a placement this machine cannot offer)."""
        note = {"kind": kind, "text": text, "data": data or {}, "at": _now()}
        with self._write() as db:
            notes = json.loads(self._need_run(run_id)["notes"])
            notes.append(note)
            db.execute("UPDATE runs SET notes = ? WHERE id = ?", (_dumps(notes), run_id))

    def finish_run(self, run_id: int, status: str) -> None:
        _check(status, RUN_STATUSES, "run status")
        with self._write() as db:
            self._need_run(run_id)
            db.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, _now(), run_id)
            )

    def set_run_backend_data(self, run_id: int, data: dict[str, Any]) -> None:
        """Merge `data` into the run's backend bookkeeping (SLURM job ids, run dir...)."""
        with self._write() as db:
            current = json.loads(self._need_run(run_id)["backend_data"])
            current.update(data)
            db.execute("UPDATE runs SET backend_data = ? WHERE id = ?", (_dumps(current), run_id))

    def get_run_backend_data(self, run_id: int) -> dict[str, Any]:
        return json.loads(self._need_run(run_id)["backend_data"])

    def resolve(self, ref: int | str) -> int:
        """A run reference from the command line -> run id: an id, or 'last'."""
        text = str(ref).strip()
        if text == "last":
            row = self._db.execute("SELECT max(id) FROM runs").fetchone()
            if row[0] is None:
                raise StoreError(f"no runs in {self.path} yet: start one with `hpcscope run SUITE`")
            return int(row[0])
        try:
            run_id = int(text)
            if not 0 < run_id < 2**63:
                raise ValueError
        except ValueError:
            raise StoreError(
                f"run {text!r} is neither a run id nor 'last'; `hpcscope list` shows the runs"
            ) from None
        if self._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
            raise StoreError(
                f"no run {run_id} in {self.path}; `hpcscope list` shows the "
                "runs (or pass another --db)"
            )
        return run_id

    def run(self, run_id: int) -> dict[str, Any]:
        return _run_dict(self._need_run(run_id))

    def runs(self) -> list[dict[str, Any]]:
        """All runs, oldest first, with launch and sample counts (for `hpcscope list`)."""
        rows = self._db.execute(
            "SELECT r.*, "
            " (SELECT count(*) FROM launches l WHERE l.run_id = r.id) AS n_launches, "
            " (SELECT count(*) FROM samples s JOIN launches l ON s.launch_id = l.id "
            "   WHERE l.run_id = r.id) AS n_samples "
            "FROM runs r ORDER BY r.id"
        ).fetchall()
        return [_run_dict(row) for row in rows]

    def list_runs(
        self,
        *,
        suite: str | None = None,
        label: str | None = None,
        since: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        full: bool = False,
    ) -> tuple[list[dict[str, Any]], int]:
        """The runs that match, oldest first, and how many match in all (for paging).

        label is a GLOB pattern (an exact name matches itself); since an ISO 8601 UTC
        time, compared with `started`; status one of RUN_STATUSES or 'abandoned'. Paging
        counts from the newest: limit=50 gives the 50 newest matches, offset=50 the 50
        before them. Without `full`, the columns a listing shows (no topology XML,
        environment or notes: those are most of a run's bytes). Indexed (_INDEXES)."""
        where, args = self._run_filter(suite=suite, label=label, since=since, status=status)
        cols = (
            "r.id, r.started, r.finished, r.status, r.suite, r.command, r.options, r.host, "
            "r.backend, r.label, r.environment, r.mpi, r.notes, r.backend_data"
            if full
            else "r.id, r.started, r.finished, r.status, r.suite, r.host, r.backend, r.label, "
            "r.mpi, r.backend_data"
        )
        counts = (
            "(SELECT count(*) FROM launches l WHERE l.run_id = r.id) AS n_launches, "
            "(SELECT count(*) FROM samples s JOIN launches l ON s.launch_id = l.id "
            " WHERE l.run_id = r.id) AS n_samples"
        )
        sql = f"SELECT {cols}, {counts} FROM runs r {where} ORDER BY r.id DESC"
        liveness = status in ("running", "abandoned")  # decided per row, after the query
        if liveness:
            rows = [_run_dict(row) for row in self._db.execute(sql, args)]
            rows = [r for r in rows if r["status"] == status]
            total = len(rows)
            rows = rows[offset : None if limit is None else offset + limit]
        else:
            total = self._db.execute(f"SELECT count(*) FROM runs r {where}", args).fetchone()[0]
            page = f" LIMIT {int(limit) if limit is not None else -1} OFFSET {int(offset)}"
            rows = [_run_dict(row) for row in self._db.execute(sql + page, args)]
        return rows[::-1], int(total)

    def run_ids(
        self,
        *,
        suite: str | None = None,
        label: str | None = None,
        since: str | None = None,
        status: str | None = None,
    ) -> list[int]:
        """Ids of the matching runs in the order they started (ties: by id)."""
        where, args = self._run_filter(suite=suite, label=label, since=since, status=status)
        rows = self._db.execute(f"SELECT r.id FROM runs r {where} ORDER BY r.started, r.id", args)
        return [int(row[0]) for row in rows]

    def _run_filter(
        self,
        *,
        suite: str | None,
        label: str | None,
        since: str | None,
        status: str | None,
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if suite is not None:
            clauses.append("r.suite = ?")
            args.append(suite)
        if label is not None:
            clauses.append("r.label GLOB ?")
            args.append(label)
        if since is not None:
            clauses.append("r.started >= ?")
            args.append(since)
        if status is not None:
            _check(status, (*RUN_STATUSES, "abandoned"), "run status")
            clauses.append("r.status = ?")
            args.append("running" if status == "abandoned" else status)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    def samples_of_runs(
        self, run_ids: Sequence[int], benchmark: str | None = None, metric: str | None = None
    ) -> list[dict[str, Any]]:
        """Store.samples of many runs in a few queries (history and grouped reports read
        one metric over hundreds of runs), each sample with its `run_id`. Order: run ids
        as given, then launch and sample id."""
        order = {rid: i for i, rid in enumerate(run_ids)}
        out: list[dict[str, Any]] = []
        ids = list(order)
        for start in range(0, len(ids), 500):  # SQLite's bound on ? per statement
            chunk = ids[start : start + 500]
            sql = (
                "SELECT s.id, s.launch_id, l.run_id, l.name AS launch, l.tags, s.benchmark, "
                's.metric, s.unit, s.params, s."values", s.warmups FROM samples s '
                "JOIN launches l ON s.launch_id = l.id "
                f"WHERE l.run_id IN ({','.join('?' * len(chunk))})"
            )
            args: list[Any] = list(chunk)
            if benchmark is not None:
                sql += " AND s.benchmark = ?"
                args.append(benchmark)
            if metric is not None:
                sql += " AND s.metric = ?"
                args.append(metric)
            out += [
                _decode(row, ("tags", "params", "values")) for row in self._db.execute(sql, args)
            ]
        out.sort(key=lambda s: (order[s["run_id"]], s["launch_id"], s["id"]))
        return out

    def _need_run(self, run_id: int) -> sqlite3.Row:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id} in {self.path}; `hpcscope list` shows the runs")
        return row

    # -- launches and records ---------------------------------------------------------

    def add_launch(
        self,
        run_id: int,
        name: str,
        tags: dict[str, Any] | None = None,
        backend_id: str = "",
        status: str = "RUNNING",
    ) -> int:
        """One execution of a benchmark program; its `tags` go with every record of it."""
        status = _check(status.upper(), LAUNCH_STATUSES, "launch status")
        with self._write() as db:
            self._need_run(run_id)
            cur = db.execute(
                "INSERT INTO launches (run_id, name, tags, status, started, backend_id) "
                "VALUES (?,?,?,?,?,?)",
                (run_id, name, _dumps(tags or {}), status, _now(), backend_id),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def set_launch_backend_id(self, launch_id: int, backend_id: str) -> None:
        with self._write() as db:
            self._need_launch(launch_id)
            db.execute("UPDATE launches SET backend_id = ? WHERE id = ?", (backend_id, launch_id))

    def add_record(self, launch_id: int, record: dict[str, Any]) -> None:
        """Store one validated record and commit it at once (a crash loses nothing).

        The record is validated again here so nothing malformed ever enters the store.
        A sample's benchmark is its own 'benchmark' key, else the launch's meta record's,
        else '' (unknown: a reference tool's parser gave none).
        """
        validate(record, f"record for launch {launch_id}")
        kind = record["type"]
        with self._write() as db:
            launch = self._need_launch(launch_id)
            if kind == "meta":
                if launch["meta"] is not None:
                    raise StoreError(
                        f"launch {launch_id} already has a meta record; one "
                        "launch is one execution of one benchmark"
                    )
                db.execute("UPDATE launches SET meta = ? WHERE id = ?", (_dumps(record), launch_id))
            elif kind == "sample":
                benchmark = record.get("benchmark")
                if not benchmark and launch["meta"] is not None:
                    benchmark = json.loads(launch["meta"])["benchmark"]
                db.execute(
                    "INSERT INTO samples (launch_id, benchmark, metric, unit, params, "
                    '"values", warmups) VALUES (?,?,?,?,?,?,?)',
                    (
                        launch_id,
                        benchmark or "",
                        record["metric"],
                        record["unit"],
                        _dumps(record["params"]),
                        json.dumps(record["values"]),
                        record["warmups"],
                    ),
                )
            elif kind == "summary":
                db.execute(
                    "INSERT INTO summaries (launch_id, record) VALUES (?,?)",
                    (launch_id, _dumps(record)),
                )
            else:
                db.execute(
                    "INSERT INTO errors (launch_id, message) VALUES (?,?)",
                    (launch_id, record["message"]),
                )

    def reset_launch(self, launch_id: int) -> None:
        """Forget what a launch's output gave (meta, samples, summaries, errors), in one
        transaction: collection of a task whose ingestion was interrupted starts over."""
        with self._write() as db:
            self._need_launch(launch_id)
            for table in ("samples", "summaries", "errors"):
                db.execute(f"DELETE FROM {table} WHERE launch_id = ?", (launch_id,))
            db.execute("UPDATE launches SET meta = NULL WHERE id = ?", (launch_id,))

    def finish_launch(
        self, launch_id: int, status: str, returncode: int | None = None, stderr_tail: str = ""
    ) -> None:
        status = _check(status.upper(), LAUNCH_STATUSES, "launch status")
        with self._write() as db:
            self._need_launch(launch_id)
            db.execute(
                "UPDATE launches SET status = ?, returncode = ?, finished = ?, "
                "stderr_tail = ? WHERE id = ?",
                (status, returncode, _now(), stderr_tail, launch_id),
            )

    def launches(self, run_id: int) -> list[dict[str, Any]]:
        """The run's launches in order, with decoded tags/meta and their error messages."""
        self._need_run(run_id)
        rows = self._db.execute(
            "SELECT * FROM launches WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
        errors: dict[int, list[str]] = {}
        for row in self._db.execute(
            "SELECT e.launch_id, e.message FROM errors e JOIN launches l "
            "ON e.launch_id = l.id WHERE l.run_id = ? ORDER BY e.id",
            (run_id,),
        ):
            errors.setdefault(row[0], []).append(row[1])
        out = []
        for row in rows:
            launch = _decode(row, _LAUNCH_JSON)
            launch["errors"] = errors.get(launch["id"], [])
            out.append(launch)
        return out

    def samples(
        self, run_id: int, benchmark: str | None = None, metric: str | None = None
    ) -> list[dict[str, Any]]:
        """The run's samples, each merged with its launch: keys id, launch_id, launch (name),
        tags, benchmark, metric, unit, params, values, warmups. Callers group by
        tags['placement'], tags['mpi'], params['bytes']."""
        self._need_run(run_id)
        sql = (
            "SELECT s.id, s.launch_id, l.name AS launch, l.tags, s.benchmark, s.metric, "
            's.unit, s.params, s."values", s.warmups FROM samples s '
            "JOIN launches l ON s.launch_id = l.id WHERE l.run_id = ?"
        )
        args: list[Any] = [run_id]
        if benchmark is not None:
            sql += " AND s.benchmark = ?"
            args.append(benchmark)
        if metric is not None:
            sql += " AND s.metric = ?"
            args.append(metric)
        rows = self._db.execute(sql + " ORDER BY s.launch_id, s.id", args).fetchall()
        return [_decode(row, ("tags", "params", "values")) for row in rows]

    def summaries(self, run_id: int) -> list[dict[str, Any]]:
        """Summary records as the binaries wrote them (informative; stats recompute)."""
        rows = self._db.execute(
            "SELECT s.launch_id, s.record FROM summaries s JOIN launches l "
            "ON s.launch_id = l.id WHERE l.run_id = ? ORDER BY s.id",
            (run_id,),
        ).fetchall()
        return [dict(json.loads(row["record"]), launch_id=row["launch_id"]) for row in rows]

    # -- import ---------------------------------------------------------------------------

    def import_runs(self, runs: Sequence[dict[str, Any]]) -> list[int]:
        """Store whole runs (results/transfer.py builds and checks them) as new runs, all
        in ONE transaction: a bad record anywhere leaves the store as it was. Each run is
        {"run": {...row fields...}, "launches": [{"id": old id, ...row fields, "meta",
        "errors", "summaries"}], "samples": [{"launch_id": old id, benchmark, metric, unit,
        params, values, warmups}]}. Ids are new; returns the new run ids in order."""
        new_ids: list[int] = []
        with self._write() as db:
            for item in runs:
                run = item["run"]
                status = "running" if run["status"] == "abandoned" else run["status"]
                _check(status, RUN_STATUSES, "run status")
                _check(run.get("backend") or "local", BACKENDS, "backend")
                cur = db.execute(
                    "INSERT INTO runs (started, finished, status, suite, command, options, host,"
                    " backend, label, topology_xml, environment, mpi, notes, backend_data)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        run["started"],
                        run.get("finished"),
                        status,
                        run["suite"],
                        _dumps(run.get("command") or []),
                        _dumps(run.get("options") or {}),
                        run.get("host") or "",
                        run.get("backend") or "local",
                        run.get("label") or "",
                        run.get("topology_xml"),
                        _dumps(run.get("environment") or {}),
                        _dumps(run.get("mpi") or []),
                        _dumps(run.get("notes") or []),
                        _dumps(run.get("backend_data") or {}),
                    ),
                )
                run_id = int(cur.lastrowid)  # type: ignore[arg-type]
                launch_ids: dict[Any, int] = {}
                for launch in item["launches"]:
                    _check(launch["status"], LAUNCH_STATUSES, "launch status")
                    meta = launch.get("meta")
                    cur = db.execute(
                        "INSERT INTO launches (run_id, name, tags, status, returncode, started,"
                        " finished, stderr_tail, backend_id, meta) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (
                            run_id,
                            launch["name"],
                            _dumps(launch.get("tags") or {}),
                            launch["status"],
                            launch.get("returncode"),
                            launch.get("started") or run["started"],
                            launch.get("finished"),
                            launch.get("stderr_tail") or "",
                            launch.get("backend_id") or "",
                            None if meta is None else _dumps(meta),
                        ),
                    )
                    new = int(cur.lastrowid)  # type: ignore[arg-type]
                    launch_ids[launch["id"]] = new
                    for record in launch.get("summaries") or []:
                        db.execute(
                            "INSERT INTO summaries (launch_id, record) VALUES (?,?)",
                            (new, _dumps(record)),
                        )
                    for message in launch.get("errors") or []:
                        db.execute(
                            "INSERT INTO errors (launch_id, message) VALUES (?,?)",
                            (new, message),
                        )
                for s in item["samples"]:
                    db.execute(
                        "INSERT INTO samples (launch_id, benchmark, metric, unit, params, "
                        '"values", warmups) VALUES (?,?,?,?,?,?,?)',
                        (
                            launch_ids[s["launch_id"]],
                            s["benchmark"],
                            s["metric"],
                            s["unit"],
                            _dumps(s["params"]),
                            json.dumps(s["values"]),
                            s["warmups"],
                        ),
                    )
                new_ids.append(run_id)
        return new_ids

    def _need_launch(self, launch_id: int) -> sqlite3.Row:
        row = self._db.execute("SELECT * FROM launches WHERE id = ?", (launch_id,)).fetchone()
        if row is None:
            raise StoreError(f"no launch {launch_id} in {self.path}")
        return row


def _check(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise StoreError(f"unknown {what} {value!r}; expected one of " + ", ".join(allowed))
    return value


def _decode(row: sqlite3.Row, json_keys: Sequence[str]) -> dict[str, Any]:
    out = dict(row)
    for key in json_keys:
        if key in out and out[key] is not None:
            out[key] = json.loads(out[key])
    return out


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    """A run as a dict. A 'running' run whose owning process is gone (kill -9, a crash,
    a closed terminal) reads as 'abandoned': what it finished stays, nothing comes."""
    run = _decode(row, _RUN_JSON)
    if run["status"] == "running" and _owner_gone((run.get("backend_data") or {}).get("owner")):
        run["status"] = "abandoned"
    return run


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), which
    tells a live process from a later one that got the same pid; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _this_process() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid(), "start": _process_start(os.getpid())}


def _owner_gone(owner: dict[str, Any] | None) -> bool:
    """Only a process on this host can be checked; a run owned elsewhere is taken as alive."""
    if not owner or owner.get("host") != socket.gethostname():
        return False
    return _process_start(int(owner["pid"])) != owner.get("start")
