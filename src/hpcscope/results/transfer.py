"""`hpcscope import FILE`: runs measured elsewhere (a cluster) into this store (a laptop).

FILE is either a JSON export (`hpcscope export RUN --format json`, schema
`hpcscope.export/1`) or another hpcscope store file (SQLite; every run in it is taken).
Each run becomes a new run here with new run, launch and sample ids; everything else is
kept as it was stored, so `export` of the imported run equals `export` of the original
except for those ids (and the run's topology XML, which JSON exports leave out).

Every run is checked before anything is written, in this order, the first problem
refused as one line that names the file, the run and the field (its JSON path):

1. parsing: JSON without NaN, Infinity or numbers that overflow to them, nested at
   most MAX_DEPTH levels (a deeper file is refused, never a RecursionError);
2. `_plain_data`: every text valid Unicode without NUL characters, every integer within
   64 bits, every number finite (store files: SQLite REAL columns may hold Inf);
3. the JSON Schema export.schema.json (draft 2020-12, shipped in this package and
   published as docs/export.schema.json): types, enums, string lengths, date-times;
4. what a schema cannot say: unique launch ids, samples naming a launch of the run, the
   meta and summary records as at ingestion (records.validate), a parsable topology.

A store file's rows are read as they are stored (Store.stored_runs, no view code runs
on them), decoded into the same shape as a JSON export and checked the same way. The
runs of one file are then stored in one transaction (Store.import_runs), so a failure
leaves the store unchanged. docs/records.md section 3 ("export schema").
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hpcscope.results.export_schema import (
    _SHOW,
    EXPORT_SCHEMA,
    EXPORT_SCHEMA_PREFIX,
    _plain_data,
    _schema_problem,
    loads,
)
from hpcscope.results.records import INT_LIMIT, RecordError, shorten, validate
from hpcscope.results.store import Store

SQLITE_MAGIC = b"SQLite format 3\x00"
SAMPLE_KEYS = ("benchmark", "metric", "unit", "params", "values", "warmups")
# An import file's size cap: the file is read whole and decoded (about 10x its size in
# memory), so a bigger one is refused in one line before it is read. An export of one run
# is a few MB; a store file of many runs can be moved run by run (export RUN --format json).
MAX_IMPORT_BYTES = 256 << 20
_RUN_JSON = ("command", "options", "environment", "mpi", "notes", "backend_data")
_LAUNCH_JSON = ("tags", "meta")
_SAMPLE_JSON = ("params", "values")
_VERSION = re.compile(r"[1-9][0-9]{0,8}")  # ASCII digits only: no ' 1', no Arabic-Indic


class TransferError(ValueError):
    """The file cannot be imported; the message names the value and the fix."""


def _schema_version(schema_tag: Any, where: str) -> int:
    fix = "export it with `hpcscope export RUN --format json`"
    if not isinstance(schema_tag, str) or not schema_tag.startswith(EXPORT_SCHEMA_PREFIX):
        raise TransferError(
            f"{where}: not an hpcscope export (schema {shorten(repr(schema_tag), 60)}, "
            f"expected {EXPORT_SCHEMA!r}); {fix}, or pass an hpcscope store file"
        )
    number = schema_tag[len(EXPORT_SCHEMA_PREFIX) :]
    if not _VERSION.fullmatch(number):
        raise TransferError(
            f"{where}: unknown export schema {shorten(repr(schema_tag), 60)} (expected "
            f"{EXPORT_SCHEMA!r}); {fix}"
        )
    version = int(number)
    current = int(EXPORT_SCHEMA[len(EXPORT_SCHEMA_PREFIX) :])
    if version > current:
        raise TransferError(
            f"{where}: export schema {schema_tag!r} is newer than this hpcscope reads "
            f"({EXPORT_SCHEMA!r}); upgrade hpcscope to import it"
        )
    return version


def _run_name(doc: dict[str, Any], index: int) -> str:
    """How a refusal names the run: its id in the file, else its place (1-based)."""
    run = doc.get("run")
    run_id = run.get("id") if isinstance(run, dict) else None
    if isinstance(run_id, int) and not isinstance(run_id, bool) and 0 <= run_id < INT_LIMIT:
        return f"run {run_id}"
    return f"run #{index}"


def check_export(doc: Any, where: str, index: int = 1) -> dict[str, Any]:
    """An export document -> the run as Store.import_runs takes it, or TransferError
    "WHERE: run N: PATH: problem". `index`: the run's place in its file (1-based)."""
    if not isinstance(doc, dict):
        raise TransferError(
            f"{where}: not an hpcscope export (a JSON {type(doc).__name__}, expected an object "
            f'with "schema": {EXPORT_SCHEMA!r}); export it with `hpcscope export RUN '
            "--format json`"
        )
    _schema_version(doc.get("schema"), where)
    run = doc.get("run")
    if not isinstance(run, dict):
        raise TransferError(
            f"{where}: 'run' is {shorten(repr(run), 60)}, expected the run object; export "
            "from a store (`hpcscope export RUN --format json`), not from a list of samples"
        )
    here = f"{where}: {_run_name(doc, index)}"
    found = _plain_data(doc) or _schema_problem(doc)
    if found:
        raise TransferError(f"{here}: {found[0]}: {found[1]}")

    def refuse(path: str, problem: str) -> TransferError:
        return TransferError(f"{here}: {path}: {shorten(problem, _SHOW)}")

    launches, samples = doc["launches"], doc["samples"]
    ids = set()
    for i, launch in enumerate(launches):
        at = f"launches[{i}]"
        if launch["id"] in ids:
            raise refuse(f"{at}.id", f"{launch['id']} is repeated: launch ids are unique")
        ids.add(launch["id"])
        try:
            if launch.get("meta") is not None:
                _record(launch["meta"], "meta", at + ".meta")
            for j, summary in enumerate(launch.get("summaries") or []):
                _record(summary, "summary", f"{at}.summaries[{j}]")
        except RecordError as exc:
            raise TransferError(f"{here}: {exc}") from None
    for i, s in enumerate(samples):
        at = f"samples[{i}]"
        if s["launch_id"] not in ids:
            raise refuse(f"{at}.launch_id", f"{s['launch_id']} names no launch of the file")
        try:
            validate({"type": "sample", **{k: s[k] for k in SAMPLE_KEYS if k != "benchmark"}}, at)
        except RecordError as exc:
            raise TransferError(f"{here}: {exc}") from None
    xml = run.get("topology_xml")
    if xml:
        from hpcscope.machine.topology import Topology

        try:
            Topology.from_xml(xml)
        except Exception as exc:  # whatever the parser trips on, the XML is not usable
            raise refuse("run.topology_xml", f"not an hwloc topology ({exc})") from None
    return {"run": run, "launches": launches, "samples": samples}


def _record(record: dict[str, Any], kind: str, where: str) -> None:
    if record.get("type") != kind:
        raise RecordError(f'{where}: a {kind} record must have "type": {kind!r}')
    validate(record, where)


# -- files --------------------------------------------------------------------------------


def _decoded(text: Any, where: str, path: str) -> Any:
    """A JSON column of a store file, decoded strictly; TransferError if it does not."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TransferError(
            f"{where}: {path}: stored as {type(text).__name__}, not JSON text: not a store "
            "hpcscope wrote"
        )
    try:
        return loads(text)
    except ValueError as exc:
        raise TransferError(
            f"{where}: {path}: stored JSON does not decode ({shorten(str(exc), _SHOW)})"
        ) from None


def _store_docs(path: Path) -> Iterator[dict[str, Any]]:
    """The runs of another store file as export documents (only the keys import reads)."""
    where = str(path)
    try:
        with Store(path, create=False) as other:  # refuses newer or foreign databases
            stored = other.stored_runs()
    except sqlite3.Error as exc:  # tables of another shape: not a store hpcscope wrote
        raise TransferError(f"{where}: not a readable hpcscope store ({exc})") from None
    if not stored:
        raise TransferError(f"{where}: the store holds no runs; nothing to import")
    for item in stored:
        run = dict(item["run"])
        here = f"{where}: run {run.get('id')}"
        for key in _RUN_JSON:
            run[key] = _decoded(run.get(key), here, f"run.{key}")
        launches = []
        for i, row in enumerate(item["launches"]):
            launch = dict(row)
            for key in _LAUNCH_JSON:
                launch[key] = _decoded(launch.get(key), here, f"launches[{i}].{key}")
            launch["summaries"] = [
                _decoded(text, here, f"launches[{i}].summaries[{j}]")
                for j, text in enumerate(launch.get("summaries") or [])
            ]
            launches.append(launch)
        samples = []
        for i, row in enumerate(item["samples"]):
            sample = dict(row)
            for key in _SAMPLE_JSON:
                sample[key] = _decoded(sample.get(key), here, f"samples[{i}].{key}")
            samples.append(sample)
        yield {"schema": EXPORT_SCHEMA, "run": run, "launches": launches, "samples": samples}


def read_file(path: str | Path) -> list[dict[str, Any]]:
    """The runs of FILE (a JSON export or an hpcscope store), checked; nothing stored."""
    path = Path(path)
    where = str(path)
    if not path.exists():
        raise TransferError(f"{where}: no such file; check the path")
    too_big = (
        f"more than the cap of {MAX_IMPORT_BYTES} bytes ({MAX_IMPORT_BYTES >> 20} MiB) an "
        "import file may have; export and import its runs one by one (`hpcscope --db FILE "
        "export RUN --format json`)"
    )
    # One open file, read up to the cap: a pipe (/dev/stdin) has no size to check first
    # and cannot be opened twice.
    with open(path, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_IMPORT_BYTES:
            raise TransferError(f"{where}: {size} bytes, {too_big}")
        data = b"" if head == SQLITE_MAGIC else head + fh.read(MAX_IMPORT_BYTES + 1 - len(head))
    if len(data) > MAX_IMPORT_BYTES:
        raise TransferError(f"{where}: {too_big}")
    if head == SQLITE_MAGIC:
        return [check_export(d, where, i) for i, d in enumerate(_store_docs(path), start=1)]
    try:
        doc = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TransferError(
            f"{where}: not an hpcscope export (not JSON: {shorten(str(exc), _SHOW)}); pass "
            "the output of `hpcscope export RUN --format json` or an hpcscope store file"
        ) from None
    return [check_export(doc, where)]


def refuse_self(store: Store | str | Path, path: str | Path) -> None:
    """TransferError if FILE is the store itself: importing it would double every run."""
    target = store.path if isinstance(store, Store) else Path(store)
    try:
        same = os.path.samefile(target, path)
    except OSError:  # one of them does not exist (yet): not the same file
        return
    if same:
        raise TransferError(
            f"{path} is this store itself (--db {target}): importing it would store every "
            "run a second time; import another file, or pass another --db"
        )


def import_file(store: Store, path: str | Path) -> list[tuple[int, int]]:
    """Import every run of FILE into `store` in one transaction; [(old id, new id)]."""
    refuse_self(store, path)
    runs = read_file(path)
    new = store.import_runs(runs)
    return [(int(r["run"].get("id") or 0), n) for r, n in zip(runs, new, strict=True)]
