"""`hpcscope import FILE`: runs measured elsewhere (a cluster) into this store (a laptop).

FILE is either a JSON export (`hpcscope export RUN --format json`, schema
`hpcscope.export/1`) or another hpcscope store file (SQLite; every run in it is taken).
Each run becomes a new run here with new run, launch and sample ids; everything else is
kept as it was stored, so `export` of the imported run equals `export` of the original
except for those ids (and the run's topology XML, which JSON exports leave out).

Bad input is refused before anything is written (a ValueError, exit 2), and the runs of
one file are stored in one transaction (Store.import_runs), so a failure leaves the
store unchanged. docs/records.md section 3 ("export schema").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpcscope.results.export import EXPORT_SCHEMA, EXPORT_SCHEMA_PREFIX, to_json
from hpcscope.results.records import RecordError, validate
from hpcscope.results.store import Store

SQLITE_MAGIC = b"SQLite format 3\x00"
SAMPLE_KEYS = ("benchmark", "metric", "unit", "params", "values", "warmups")


class TransferError(ValueError):
    """The file cannot be imported; the message names the value and the fix."""


def _schema_version(schema: Any, where: str) -> int:
    fix = "export it with `hpcscope export RUN --format json`"
    if not isinstance(schema, str) or not schema.startswith(EXPORT_SCHEMA_PREFIX):
        raise TransferError(
            f"{where}: not an hpcscope export (schema {schema!r}, expected "
            f"{EXPORT_SCHEMA!r}); {fix}, or pass an hpcscope store file"
        )
    try:
        version = int(schema[len(EXPORT_SCHEMA_PREFIX) :])
    except ValueError:
        raise TransferError(
            f"{where}: unknown export schema {schema!r} (expected {EXPORT_SCHEMA!r}); {fix}"
        ) from None
    current = int(EXPORT_SCHEMA[len(EXPORT_SCHEMA_PREFIX) :])
    if version > current:
        raise TransferError(
            f"{where}: export schema {schema!r} is newer than this hpcscope reads "
            f"({EXPORT_SCHEMA!r}); upgrade hpcscope to import it"
        )
    if version < 1:
        raise TransferError(f"{where}: unknown export schema {schema!r}; {fix}")
    return version


def check_export(doc: Any, where: str) -> dict[str, Any]:
    """An export document -> the run as Store.import_runs takes it, or TransferError."""
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
            f"{where}: 'run' is {run!r}, expected the run object; export from a store "
            "(`hpcscope export RUN --format json`), not from a list of samples"
        )
    for key in ("suite", "status", "started"):
        if not isinstance(run.get(key), str) or not run[key]:
            raise TransferError(f"{where}: run.{key} is {run.get(key)!r}, expected a string")
    launches = doc.get("launches")
    samples = doc.get("samples")
    if not isinstance(launches, list) or not isinstance(samples, list):
        raise TransferError(f"{where}: 'launches' and 'samples' must be lists")
    ids = set()
    for i, launch in enumerate(launches):
        at = f"{where}: launches[{i}]"
        if not isinstance(launch, dict) or not isinstance(launch.get("name"), str):
            raise TransferError(f"{at} needs a name")
        if not isinstance(launch.get("status"), str):
            raise TransferError(f"{at}.status is {launch.get('status')!r}, expected a string")
        if launch.get("id") in ids or launch.get("id") is None:
            raise TransferError(f"{at}.id {launch.get('id')!r} is missing or repeated")
        ids.add(launch["id"])
        if not isinstance(launch.get("tags", {}), dict):
            raise TransferError(f"{at}.tags must be an object")
        try:
            if launch.get("meta") is not None:
                validate(launch["meta"], at + ".meta")
            for j, summary in enumerate(launch.get("summaries") or []):
                validate(summary, f"{at}.summaries[{j}]")
        except RecordError as exc:
            raise TransferError(str(exc)) from None
        if not all(isinstance(e, str) for e in launch.get("errors") or []):
            raise TransferError(f"{at}.errors must be a list of strings")
    for i, s in enumerate(samples):
        at = f"{where}: samples[{i}]"
        if not isinstance(s, dict) or s.get("launch_id") not in ids:
            raise TransferError(
                f"{at}.launch_id {s.get('launch_id') if isinstance(s, dict) else s!r} "
                "names no launch of the file"
            )
        missing = [k for k in SAMPLE_KEYS if k not in s]
        if missing:
            raise TransferError(f"{at} lacks {', '.join(missing)}")
        try:
            validate({"type": "sample", **{k: s[k] for k in SAMPLE_KEYS if k != "benchmark"}}, at)
        except RecordError as exc:
            raise TransferError(str(exc)) from None
        if not isinstance(s["benchmark"], str):
            raise TransferError(f"{at}.benchmark must be a string")
    return {"run": run, "launches": launches, "samples": samples}


def read_file(path: str | Path) -> list[dict[str, Any]]:
    """The runs of FILE (a JSON export or an hpcscope store), checked; nothing stored."""
    path = Path(path)
    where = str(path)
    with open(path, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        with Store(path, create=False) as other:  # refuses newer or foreign databases
            docs = [json.loads(to_json(other, r["id"])) for r in other.runs()]
            for doc, r in zip(docs, other.runs(), strict=True):
                doc["run"]["topology_xml"] = other.run(r["id"]).get("topology_xml")
        if not docs:
            raise TransferError(f"{where}: the store holds no runs; nothing to import")
        return [check_export(d, f"{where} run {d['run']['id']}") for d in docs]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TransferError(
            f"{where}: not an hpcscope export (not JSON: {exc}); pass the output of "
            "`hpcscope export RUN --format json` or an hpcscope store file"
        ) from None
    return [check_export(doc, where)]


def import_file(store: Store, path: str | Path) -> list[tuple[int, int]]:
    """Import every run of FILE into `store` in one transaction; [(old id, new id)]."""
    runs = read_file(path)
    new = store.import_runs(runs)
    return [(int(r["run"].get("id") or 0), n) for r, n in zip(runs, new, strict=True)]
