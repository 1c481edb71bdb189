"""The results store: one SQLite file holding runs, launches and their raw records.

Why SQLite: one file the user can copy, query and keep next to their job scripts, no
server, and safe concurrent writers. Two `hpcscope run` processes (or a SLURM collector
and a report) may write the same file at once, so the database runs in WAL mode with a
busy timeout and every write is a short `BEGIN IMMEDIATE` transaction: writers queue for
the lock instead of failing, and readers never block them. Each record is committed on
its own, so a crash or Ctrl-C loses nothing that was already ingested.

Faults are named (issue 32): a writer that waits on another process's lock says so after
a few seconds (who holds it, from /proc/locks, and how long it will wait:
$HPCSCOPE_LOCK_TIMEOUT, default 60 s), then gives up with StoreLocked; a full disk is
StoreFull ("no space left on DIR"), and while a run writes, RESERVE_BYTES set aside beside
the store are given back at that moment so the run's failure can still be recorded; a
store that cannot be made names its read-only folder. Commands that only read still open
a store on a full disk (read-only).

All SQL of hpcscope lives in this file. Raw values are stored as JSON lists; statistics
are derived from them (hpcscope.results.stats), never stored in their place.

The schema version is kept in `PRAGMA user_version`; a database written by a newer
hpcscope is refused with a clear message rather than misread.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import stat
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hpcscope import safe_write
from hpcscope.results.export_schema import run_fields_problem
from hpcscope.results.records import RecordError, validate

SCHEMA_VERSION = 1
DEFAULT_DB = "hpcscope.db"
RUN_STATUSES = ("running", "ok", "failed", "interrupted", "partial")
BACKENDS = ("local", "slurm", "lab", "sim")
# The names of suites/registry.SUITES (a test keeps them equal), here so that `list
# --suite` can check a name without importing the suites (list < 1 s, issue 19).
SUITE_NAMES = ("p2p", "coll", "lanes", "node", "rma", "links", "nbc", "startup", "io")
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
BUSY_TIMEOUT_S = 60.0  # how long a write waits for another process's lock (default)
LOCK_NOTICE_S = 3.0  # after this long, one line says who holds the lock and how long we wait
# Set aside beside the store while a run writes (DB-reserve): when the disk fills, it is
# given back so that the run's failure (the launch's and the run's status, the notes)
# can still be stored. A few runs rows with their topology XML and notes.
RESERVE_BYTES = 512 << 10
SQLITE_FULL = 13
# Environment values (runs.environment) longer than this are cut when a run is recorded,
# ending in "[cut by hpcscope: N characters]", and named in environment["cut"]
# ({"variables.NAME": N}): a variable of 100 kB says nothing a view shows, and the import
# schema bounds every text (docs/records.md section 6).
ENV_VALUE_CHARS = 4096
# The import schema's bounds on the texts hpcscope writes from what programs print (a
# test keeps them equal to export.schema.json): a note's text, and any other text (a
# launch's stderr tail, an error record's message). Longer ones are cut where they are
# stored (_bounded), so every export of a run imports again.
NOTE_TEXT_CHARS = 16384
TEXT_CHARS = 65536


def lock_timeout_s() -> float:
    """How long a write waits for a store another process holds: $HPCSCOPE_LOCK_TIMEOUT
    seconds, else BUSY_TIMEOUT_S."""
    try:
        value = float(os.environ.get("HPCSCOPE_LOCK_TIMEOUT") or BUSY_TIMEOUT_S)
    except ValueError:
        return BUSY_TIMEOUT_S
    return value if value >= 0 else BUSY_TIMEOUT_S


def _first_wait_s() -> float:
    """How long a write waits on a lock before saying so: LOCK_NOTICE_S, or half the
    whole wait when that is shorter (the line comes before the giving up)."""
    return min(LOCK_NOTICE_S, lock_timeout_s() / 2)


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
_SAMPLE_JSON = ("tags", "params", "values")
# What each JSON column decodes to. Every read checks it (strictly: no NaN or Infinity),
# so a column edited by hand is a BadRun naming run and field, not a TypeError in a view.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "command": (list,),
    "options": (dict,),
    "environment": (dict,),
    "mpi": (list,),
    "notes": (list,),
    "backend_data": (dict,),
    "tags": (dict,),
    "meta": (dict, type(None)),
    "params": (dict,),
    "values": (list,),
    "record": (dict,),
}
_JSON_NAMES = {dict: "object", list: "list", str: "string", int: "number", float: "number"}


class StoreError(ValueError):
    """The store cannot do what was asked; the message says why and what to do.

    A ValueError: the cause is input (a wrong --db, an unknown run), exit code 2."""


class BadRun(StoreError):
    """A stored run whose field does not decode to what hpcscope wrote there (a store
    edited by hand, or imported before imports were checked). The message names the run,
    the field and how to delete the run; views over many runs skip it with that line."""

    def __init__(self, path: Path, run_id: int, field: str, problem: str):
        self.run_id, self.field = run_id, field
        super().__init__(
            f"run {run_id}: stored field {field} is malformed ({problem}); delete the run "
            f"with: sqlite3 {path} 'PRAGMA foreign_keys=ON; DELETE FROM runs WHERE id = "
            f"{run_id}'"
        )


class StoreLocked(StoreError):
    """Another process held the store's write lock for longer than lock_timeout_s()."""


class StoreFull(StoreError):
    """The disk holding the store is full: the write was not stored (the message names
    the folder); what was committed before stays."""


def _notify(message: str) -> None:
    print(f"hpcscope: {message}", file=sys.stderr, flush=True)


def _is_full(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(exc)
    )


def _is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "database is locked" in str(exc) or "database table is locked" in str(exc)
    )


def _command_of(pid: int) -> str:
    """': COMMAND' of a process (its command line, shortened), '' if unreadable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except OSError:
        return ""
    text = " ".join(w.decode(errors="replace") for w in words if w)[:80]
    text = "".join(c if c.isprintable() else "?" for c in text)  # shown on a terminal
    return f": {text}" if text else ""


def _no_space(folder: Path) -> bool:
    """Whether the file system of `folder` has (next to) no space left."""
    try:
        st = os.statvfs(folder.absolute())
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def _unwritable(folder: Path) -> str | None:
    """Why a store cannot be made or written in `folder`, if that is the reason: a
    read-only file system, or a folder this user cannot write."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"the folder {folder} is on a read-only file system"
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable by this user"
    return None


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
        # Where the lock-wait line goes (the CLI's stderr); a caller may replace it.
        self.notify: Callable[[str], None] = _notify
        self._reserve: Path | None = None  # reserve_space(): the file set aside
        self._gave_up = False  # a write gave up on a lock (StoreLocked) since the last one
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
        except StoreError as exc:
            # A store on a read-only medium (a mounted archive, a read-only snapshot)
            # cannot take WAL's shared-memory file: a command that only reads opens it
            # read-only instead, then as immutable (nobody can write it there). The same
            # on a full disk: list, show, export and report still read it.
            writable = os.access(self.path.parent, os.W_OK) and not isinstance(exc, StoreFull)
            if read_only or create or writable:
                raise
            self.read_only = True
            try:
                self._open(True, immutable=False)
            except StoreError:
                self._open(True, immutable=True)

    def _refuse_planted_companions(self) -> None:
        """SQLite creates and opens the store's -wal, -shm and -journal files beside it
        itself, following a symbolic link (no O_NOFOLLOW): one planted under such a name in
        a shared folder would take the store's pages into another file. Refused here with
        the entry named; checked at open, not on every write (someone who can replace
        entries in that folder later controls the store file itself anyway)."""
        for suffix in ("-wal", "-shm", "-journal"):
            companion = Path(f"{self.path}{suffix}")
            try:
                mode = companion.lstat().st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(f"cannot check {companion}: {exc.strerror}") from None
            if not stat.S_ISREG(mode):
                kind = "a symbolic link (planted?)" if stat.S_ISLNK(mode) else "not a file"
                raise StoreError(
                    f"refusing the store {self.path}: {companion} is {kind}; SQLite would "
                    "write the store's pages through it. Remove it, or pass another --db"
                )

    def _open(self, read_only: bool, immutable: bool) -> None:
        if not read_only:
            self._refuse_planted_companions()
        target = (
            f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
            + ("&immutable=1" if immutable else "")
            if read_only
            else str(self.path)
        )
        # SQLite's busy handler waits at most LOCK_NOTICE_S at a time; _write waits on in
        # rounds, saying once who holds the lock (see _begin).
        busy_s = _first_wait_s()
        try:
            self._db = sqlite3.connect(
                target, timeout=busy_s, isolation_level=None, uri=read_only
            )  # explicit transactions
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc, read_only) from None
        try:
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_s * 1000)}")
            if not read_only:
                self._set_wal()
                self._db.execute("PRAGMA synchronous = NORMAL")  # WAL: safe against app crash
            self._db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()
            self._ensure_indexes()
            self._check_pages()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise self._unusable(exc, read_only) from None
        except BaseException:
            self._db.close()
            raise

    def _unusable(self, exc: sqlite3.DatabaseError, read_only: bool) -> StoreError:
        """The StoreError for a store SQLite could not open: named for its cause (a full
        disk, a read-only folder, a lock held too long, a damaged file) when known."""
        if "malformed" in str(exc):
            return StoreError(f"{self.path} is damaged ({exc}). {_RECOVER}")
        if _is_full(exc) or ("disk I/O error" in str(exc) and _no_space(self.path.parent)):
            return self._full(exc)  # SQLite names a -shm it cannot grow an I/O error
        if _is_locked(exc):
            return self._locked(lock_timeout_s())
        why = None if read_only else _unwritable(self.path.parent.absolute())
        if why and ("open" in str(exc) or "readonly" in str(exc) or "read-only" in str(exc)):
            return StoreError(
                f"cannot write the store {self.path}: {why}; pass --db (or HPCSCOPE_DB) "
                "naming a file in a folder you can write"
            )
        return StoreError(
            f"{self.path} is not a usable hpcscope store ({exc}); pass "
            "another file with --db or HPCSCOPE_DB"
        )

    # -- connection and schema ------------------------------------------------------

    def _set_wal(self) -> None:
        """WAL lets readers and one writer work at once; switching needs a brief lock, and
        SQLite does not always apply the busy handler to it, so retry for a while."""
        limit = lock_timeout_s()
        start = time.monotonic()
        noticed = False
        while True:
            try:
                mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):
                    raise
                waited = time.monotonic() - start
                if waited > limit:
                    raise self._locked(limit) from None
                if waited > LOCK_NOTICE_S and not noticed:
                    noticed = True
                    self.notify(self._lock_notice(limit))
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
        concurrent writer waits in the busy handler instead of failing on lock upgrade.

        Faults are named (StoreError subclasses, never a bare sqlite3 error): a lock held
        by another process past lock_timeout_s() is StoreLocked (after one line saying who
        holds it, see _begin); a full disk is StoreFull, and gives back the space set
        aside by reserve_space so that the failure itself can still be stored."""
        self._begin()
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:  # SQLite may have rolled back already (SQLITE_FULL)
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if _is_full(exc):
                raise self._full(exc) from None
            if _is_locked(exc):
                raise self._locked(lock_timeout_s()) from None
            raise

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, waiting up to lock_timeout_s() for another process's write lock:
        SQLite's busy handler waits LOCK_NOTICE_S, then one line names the holder and the
        wait, then rounds of the busy handler until the limit (StoreLocked)."""
        limit = lock_timeout_s()
        if self._gave_up:  # the run is recording its failure: no second long wait
            limit = min(limit, LOCK_NOTICE_S)
        start = time.monotonic()
        rounds = 0
        try:
            while True:
                try:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._gave_up = False
                    return
                except sqlite3.OperationalError as exc:
                    if _is_full(exc):
                        raise self._full(exc) from None
                    if not _is_locked(exc):
                        raise
                waited = time.monotonic() - start
                if waited >= limit:
                    raise self._locked(lock_timeout_s())
                if rounds == 0 and not self._gave_up:
                    self.notify(self._lock_notice(limit))
                rounds += 1
                # the next round of the busy handler ends at the limit, not past it
                round_ms = int(min(LOCK_NOTICE_S, limit - waited) * 1000) + 1
                self._db.execute(f"PRAGMA busy_timeout = {round_ms}")
        finally:
            if rounds:
                self._db.execute(f"PRAGMA busy_timeout = {int(_first_wait_s() * 1000)}")

    def lock_holder(self) -> str:
        """'pid N (command)' of the process holding the store's write lock, from
        /proc/locks (WAL: byte 120 of the -shm file; rollback journal: SQLite's lock
        bytes of the file itself); '' when it cannot be told. Read-only: opening and
        closing the store's files here would drop this process's own SQLite locks."""
        targets = []
        for path, low, high in (
            (Path(f"{self.path}-shm"), 120, 120),
            (self.path, 0x40000000, 0x400001FF),
        ):
            try:
                st = os.stat(path)
            except OSError:
                continue
            device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
            targets.append((device, low, high))
        try:
            with open("/proc/locks") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return ""
        for line in lines:
            words = line.split()
            if len(words) < 8 or words[1] == "->" or words[3] != "WRITE":
                continue
            try:
                pid, start = int(words[4]), int(words[6])
                end = int(words[7]) if words[7] != "EOF" else 1 << 62
            except ValueError:
                continue
            if pid == os.getpid():
                continue
            for device, low, high in targets:
                if words[5] == device and start <= high and end >= low:
                    return f"pid {pid}" + _command_of(pid)
        return ""

    def _lock_notice(self, limit: float) -> str:
        holder = self.lock_holder() or "pid not known"
        return (
            f"the store {self.path} is locked by another process ({holder}); "
            f"waiting up to {limit:.0f} s"
        )

    def _locked(self, limit: float) -> StoreLocked:
        self._gave_up = True
        holder = self.lock_holder()
        return StoreLocked(
            f"the store {self.path} stayed locked by another process "
            f"({holder or 'pid not known'}) for {limit:.0f} s, so nothing more could be "
            "written: let that process finish (or end it) and run again, or raise "
            "HPCSCOPE_LOCK_TIMEOUT (seconds)"
        )

    def _full(self, exc: BaseException) -> StoreFull:
        """StoreFull naming the store's folder; the reserve (reserve_space) is given back
        so the writes that record this failure fit."""
        self.release_reserve()
        folder = self.path.parent.absolute()
        return StoreFull(
            f"no space left on {folder}: the store {self.path.name} could not be written "
            f"({exc}); free space there or pass another --db"
        )

    def reserve_space(self, size: int = RESERVE_BYTES) -> None:
        """Set aside `size` bytes beside the store (the file DB-reserve) while a run
        writes; StoreFull gives them back, release_reserve removes them. A disk that
        cannot even hold the reserve sets nothing aside (the next write says it is full)."""
        if self.read_only:
            return
        path = Path(f"{self.path}-reserve")
        try:
            safe_write.write_bytes(path, b"\0" * size)
        except OSError:
            path.unlink(missing_ok=True)
            return
        self._reserve = path

    def release_reserve(self) -> None:
        if self._reserve is not None:
            self._reserve.unlink(missing_ok=True)
            self._reserve = None

    def close(self) -> None:
        self.release_reserve()
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
        """Start a run (status 'running'); returns its id. Its fields get the import
        schema's bounds here, at the source (StoreError naming the field): every run an
        export writes can be imported again. Environment values are cut (cut_environment)."""
        _check(backend, BACKENDS, "backend")
        environment = cut_environment(environment or {})
        _check_fields(
            label=label,
            host=host,
            command=list(command),
            options=options or {},
            environment=environment,
            mpi=mpi or [],
        )
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
        """Fill in run facts learnt after the run started (topology, environment, MPIs),
        bounded as in create_run."""
        if environment is not None:
            environment = cut_environment(environment)
        given = {"label": label, "host": host, "environment": environment, "mpi": mpi}
        _check_fields(**{k: v for k, v in given.items() if v is not None})
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
        note = {"kind": kind, "text": _bounded(text, NOTE_TEXT_CHARS), "data": data or {}}
        note["at"] = _now()
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
        """The run with its JSON columns decoded. A column that is not JSON of its type
        (a store edited by hand, or imported before imports were checked) is a BadRun
        naming it, rather than a TypeError deep inside a view."""
        return self._run_dict(self._need_run(run_id))

    def runs(self, problems: list[str] | None = None) -> list[dict[str, Any]]:
        """All runs, oldest first, with launch and sample counts. A run that does not
        decode raises BadRun, or with `problems` is left out and described there."""
        rows = self._db.execute(
            "SELECT r.*, "
            " (SELECT count(*) FROM launches l WHERE l.run_id = r.id) AS n_launches, "
            " (SELECT count(*) FROM samples s JOIN launches l ON s.launch_id = l.id "
            "   WHERE l.run_id = r.id) AS n_samples "
            "FROM runs r ORDER BY r.id"
        ).fetchall()
        return self._run_dicts(rows, problems)

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
        problems: list[str] | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """The runs that match, oldest first, and how many match in all (for paging).

        label is a GLOB pattern (an exact name matches itself); since an ISO 8601 UTC
        time, compared with `started`; status one of RUN_STATUSES or 'abandoned'. Paging
        counts from the newest: limit=50 gives the 50 newest matches, offset=50 the 50
        before them. Without `full`, the columns a listing shows (no topology XML,
        environment or notes: those are most of a run's bytes). Indexed (_INDEXES).
        A run whose columns do not decode (BadRun) is left out and its line appended to
        `problems` (raised when `problems` is None)."""
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
            rows = self._run_dicts(self._db.execute(sql, args), problems)
            rows = [r for r in rows if r["status"] == status]
            total = len(rows)
            rows = rows[offset : None if limit is None else offset + limit]
        else:
            total = self._db.execute(f"SELECT count(*) FROM runs r {where}", args).fetchone()[0]
            page = f" LIMIT {int(limit) if limit is not None else -1} OFFSET {int(offset)}"
            rows = self._run_dicts(self._db.execute(sql + page, args), problems)
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
                self._decode(row, _SAMPLE_JSON, row["run_id"], f"sample {row['id']}")
                for row in self._db.execute(sql, args)
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
            elif kind == "cpu_pair":  # measured last, kept where the launch's facts are
                if launch["meta"] is None:
                    raise StoreError(
                        f"launch {launch_id} has a cpu_pair record but no meta record to "
                        "hold it; the benchmark writes meta first"
                    )
                meta = json.loads(launch["meta"])
                meta["cpu_pair"] = {k: record[k] for k in ("cacheline_ns", "round_trips")}
                db.execute("UPDATE launches SET meta = ? WHERE id = ?", (_dumps(meta), launch_id))
            else:
                db.execute(
                    "INSERT INTO errors (launch_id, message) VALUES (?,?)",
                    (launch_id, _bounded(record["message"], TEXT_CHARS)),
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
                (
                    status,
                    returncode,
                    _now(),
                    _bounded(stderr_tail, TEXT_CHARS, tail=True),
                    launch_id,
                ),
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
            launch = self._decode(row, _LAUNCH_JSON, run_id, f"launch {row['id']}")
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
        return [self._decode(row, _SAMPLE_JSON, run_id, f"sample {row['id']}") for row in rows]

    def summaries(self, run_id: int) -> list[dict[str, Any]]:
        """Summary records as the binaries wrote them (informative; stats recompute)."""
        rows = self._db.execute(
            "SELECT s.id, s.launch_id, s.record FROM summaries s JOIN launches l "
            "ON s.launch_id = l.id WHERE l.run_id = ? ORDER BY s.id",
            (run_id,),
        ).fetchall()
        return [
            dict(
                self._decode(row, ("record",), run_id, f"summary {row['id']}")["record"],
                launch_id=row["launch_id"],
            )
            for row in rows
        ]

    def problem(self, run_id: int) -> str | None:
        """What makes a stored run unusable by the views (BadRun's line), or None: every
        JSON column of the run, its launches, samples and summaries decoded and checked
        as the views read them."""
        try:
            self.run(run_id)
            self.launches(run_id)
            self.samples(run_id)
            self.summaries(run_id)
        except BadRun as exc:
            return str(exc)
        return None

    def usable(self, run_ids: Sequence[int], skipped: Callable[[str], None]) -> list[int]:
        """The runs of `run_ids` the views can read; each other one is told to `skipped`
        as one line ("skipped run N: ... delete the run with ...") and left out, so one bad
        run does not hide the others."""
        good = []
        for run_id in run_ids:
            problem = self.problem(run_id)
            if problem is None:
                good.append(run_id)
            else:
                skipped(f"skipped {problem}")
        return good

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

    def stored_runs(self) -> list[dict[str, Any]]:
        """Every run as it is stored, oldest first, for `hpcscope import` of this file into
        another store (results/transfer.py decodes and checks it like a JSON export):
        {"run": the row, "launches": [the row with "errors" (messages) and "summaries"
        (record texts)], "samples": [the row]}. JSON columns stay text and nothing is
        interpreted, so a damaged row is named by the check, never trips this reader."""
        out = []
        for (run_id,) in self._db.execute("SELECT id FROM runs ORDER BY id").fetchall():
            run = dict(self._need_run(run_id))
            launches = [
                dict(row)
                for row in self._db.execute(
                    "SELECT * FROM launches WHERE run_id = ? ORDER BY id", (run_id,)
                )
            ]
            extra: dict[str, dict[Any, list[Any]]] = {"errors": {}, "summaries": {}}
            for name, sql in (
                ("errors", "SELECT e.launch_id, e.message FROM errors e"),
                ("summaries", "SELECT e.launch_id, e.record FROM summaries e"),
            ):
                for row in self._db.execute(
                    f"{sql} JOIN launches l ON e.launch_id = l.id WHERE l.run_id = ? ORDER BY e.id",
                    (run_id,),
                ):
                    extra[name].setdefault(row[0], []).append(row[1])
            for launch in launches:
                launch.pop("run_id", None)
                launch["errors"] = extra["errors"].get(launch["id"], [])
                launch["summaries"] = extra["summaries"].get(launch["id"], [])
            samples = [
                dict(row)
                for row in self._db.execute(
                    "SELECT s.* FROM samples s JOIN launches l ON s.launch_id = l.id "
                    "WHERE l.run_id = ? ORDER BY s.launch_id, s.id",
                    (run_id,),
                )
            ]
            out.append({"run": run, "launches": launches, "samples": samples})
        return out

    def _decode(
        self, row: sqlite3.Row, json_keys: Sequence[str], run_id: int, owner: str
    ) -> dict[str, Any]:
        """The row with its JSON columns decoded and checked (_problem); BadRun naming
        the run and `owner`'s field ("launch 12 meta") if one is not what we write."""
        out = dict(row)
        for key in json_keys:
            if key not in out or (out[key] is None and key == "meta"):
                continue
            field = f"{owner} {key}".strip()
            if key == "tags" and "launch_id" in out:  # a sample's tags are its launch's
                field = f"launch {out['launch_id']} tags"
            try:
                out[key] = json.loads(out[key], parse_constant=_no_constant)
            except (TypeError, ValueError, RecursionError) as exc:
                problem: str | None = f"not JSON: {str(exc)[:80]}"
            else:
                problem = _problem(key, out[key])
            if problem:
                raise BadRun(self.path, run_id, field, problem) from None
        return out

    def _run_dict(self, row: sqlite3.Row) -> dict[str, Any]:
        """A run as a dict, its JSON columns checked (BadRun). A 'running' run whose
        owning process is gone (kill -9, a crash, a closed terminal) reads as 'abandoned':
        what it finished stays, nothing comes."""
        run = self._decode(row, [k for k in _RUN_JSON if k in row.keys()], int(row["id"]), "")
        if run["status"] == "running" and _owner_gone((run.get("backend_data") or {}).get("owner")):
            run["status"] = "abandoned"
        return run

    def _run_dicts(
        self, rows: Iterable[sqlite3.Row], problems: list[str] | None
    ) -> list[dict[str, Any]]:
        """_run_dict of each row; a bad one raises, or with `problems` is left out and
        described there."""
        out = []
        for row in rows:
            try:
                out.append(self._run_dict(row))
            except BadRun as exc:
                if problems is None:
                    raise
                problems.append(f"skipped {exc}")
        return out

    def _need_launch(self, launch_id: int) -> sqlite3.Row:
        row = self._db.execute("SELECT * FROM launches WHERE id = ?", (launch_id,)).fetchone()
        if row is None:
            raise StoreError(f"no launch {launch_id} in {self.path}")
        return row


def _check(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise StoreError(f"unknown {what} {value!r}; expected one of " + ", ".join(allowed))
    return value


def _bounded(text: str, limit: int, tail: bool = False) -> str:
    """`text` within `limit` characters: cut, with "[cut by hpcscope: N characters]" (N the
    whole length) at the end, or at the start where the end is what counts (`tail`: a
    stderr tail keeps its last lines)."""
    if len(text) <= limit:
        return text
    mark = f"[cut by hpcscope: {len(text)} characters]"
    keep = limit - len(mark) - 1
    return f"{mark} {text[-keep:]}" if tail else f"{text[:keep]} {mark}"


def cut_environment(environment: dict[str, Any]) -> dict[str, Any]:
    """`environment` with every text longer than ENV_VALUE_CHARS cut there and marked
    "[cut by hpcscope: N characters]" (N: the whole length), and "cut" naming each
    ({"variables.NAME": N}); nested objects are walked (the variables)."""
    cut: dict[str, int] = {}

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, str) and len(value) > ENV_VALUE_CHARS:
            cut[path] = len(value)
            return value[:ENV_VALUE_CHARS] + f" [cut by hpcscope: {len(value)} characters]"
        if isinstance(value, dict):
            return {k: walk(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        return value

    out = walk(environment, "")
    if cut:
        out["cut"] = cut
    return out


def _check_fields(**fields: Any) -> None:
    """StoreError naming the first run field the import schema refuses."""
    problem = run_fields_problem(fields)
    if problem:
        raise StoreError(
            f"{problem}: a run is stored only with fields an export of it can import again"
        )


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number JSON knows")


def _problem(key: str, value: Any) -> str | None:
    """Why a decoded JSON column is not what hpcscope writes there, or None."""
    kinds = _JSON_TYPES[key]
    if not isinstance(value, kinds):
        names = " or ".join("null" if k is type(None) else _JSON_NAMES[k] for k in kinds)
        return f"a JSON {_JSON_NAMES.get(type(value), type(value).__name__)}, expected {names}"
    data: Any = value  # of the type just checked
    if key == "values":  # the raw values every statistic reads
        if not data:
            return "an empty list, expected the raw values"
        if not all(type(v) in (int, float) for v in data):
            return "holds an item that is not a number"
        if not all(map(math.isfinite, data)) or min(data) < 0:
            return "holds a number that is not finite or is negative"
    if key == "meta" and data is not None:
        try:
            validate(data, "meta")
        except RecordError as exc:
            return str(exc)[:200]
    return None


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
