"""Hostile files for `hpcscope import` (issue 32, part 5): every file is checked against
the export schema (docs/export.schema.json, results/transfer.py) before a row is
written. A bad file exits 2 with one line on stderr that names the run and the field,
never a traceback, and leaves the store as it was; what is accepted can be shown and
exported. The hand-found cases first, then Hypothesis fuzzing of a real export and of
a real store file."""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import sqlite3
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from hpcscope.cli.commands import main
from hpcscope.report.show import print_run
from hpcscope.results import export_schema, transfer
from hpcscope.results.export import to_csv, to_json, to_markdown, to_osu
from hpcscope.results.store import BACKENDS, LAUNCH_STATUSES, RUN_STATUSES, Store
from hpcscope.suites.registry import SUITES

REPO = Path(__file__).resolve().parents[2]
TABLES = ("runs", "launches", "samples", "summaries", "errors")
TOPO = REPO / "tests" / "fixtures" / "topo" / "lcc3_2x6x2.xml"


# -- a small real run ---------------------------------------------------------------------


def _meta(benchmark: str, mpi: bool = True) -> dict[str, Any]:
    return {
        "type": "meta",
        "schema": "hpcscope.bench/1",
        "benchmark": benchmark,
        "version": "0.1",
        "mpi": {"library": "Open MPI", "version": "4.1.4"} if mpi else None,
        "ranks": [
            {"rank": r, "host": "n1", "cpus": [r], "core": r, "socket": 0, "numa": 0}
            for r in range(2 if mpi else 1)
        ],
        "timer": {"resolution_ns": 1, "overhead_ns": 20},
        "options": {},
        **({"cpu_pair": {"cacheline_ns": 60.5, "round_trips": 1000}} if mpi else {}),
    }


def _sample(benchmark: str, metric: str, unit: str, params: dict, base: float) -> dict:
    values = [base * (1 + 0.01 * i) for i in range(6)]
    return {
        "type": "sample",
        "benchmark": benchmark,
        "metric": metric,
        "unit": unit,
        "params": params,
        "values": values,
        "warmups": 2,
    }


def build_store(path: Path) -> tuple[Store, int]:
    """One p2p run as the local backend records it, small enough to fuzz thousands of
    times: two placements (one wrong, FAILED, with an error and stderr), placement and
    peak notes, summaries, a node sample its peak bounds and a generic sample."""
    store = Store(path)
    run = store.create_run(
        "p2p",
        command=["hpcscope", "run", "p2p", "--label", "small"],
        options={"repeat": 1, "placements": ["core", "node"]},
        host="n1",
        label="small",
        topology_xml=TOPO.read_text(),
        environment={"kernel": "6.1.0", "governor": None, "variables": {"OMP": "1"}},
        mpi=[{"flavor": "openmpi", "version": "4.1.4", "mpicc": "mpicc", "mpirun": "mpirun"}],
    )
    store.add_note(run, "skipped", "placement smt: SMT is off", {"placement": "smt"})
    store.add_note(run, "warning", "frequency governor not readable")
    peak = {
        "name": "mem",
        "value": 20000.0,
        "unit": "MB/s",
        "formula": "2 channels x 1250 MT/s x 8 bytes",
        "source": "facts from this machine",
        "metric": "bandwidth",
        "match": {"benchmark": "mem"},
    }
    store.add_note(run, "peak", "mem peak: 20000 MB/s", peak)
    for placement, status in (("core", "COMPLETED"), ("node", "FAILED")):
        name = f"openmpi/{placement}/r1"
        tags = {"mpi": "openmpi", "mpi_version": "4.1.4", "placement": placement, "repeat": 1}
        launch = store.add_launch(run, name, tags)
        store.add_record(launch, _meta("p2p"))
        for size in (0, 8):
            params = {"bytes": size, "test": "latency", "iterations": 100, "block": 10}
            store.add_record(launch, _sample("p2p", "latency", "us", params, 1.5 + size))
        params = {"bytes": 8, "test": "bw", "iterations": 100, "block": 10, "window": 64}
        store.add_record(launch, _sample("p2p", "bandwidth", "MB/s", params, 800.0))
        store.add_record(launch, {"type": "summary", "metric": "latency", "median": 1.5})
        verdict = "verified" if status == "COMPLETED" else "wrong"
        data = {
            "launch_id": launch,
            "launch": name,
            "verdict": verdict,
            "reason": "" if verdict == "verified" else "rank 1 ran on CPU 7",
            "placement": placement,
            "cpus": [0, 1],
            "nodes": 1,
            "observed": placement,
            "checked": "binding",
            "not_checked": "",
        }
        store.add_note(run, "placement", f"{name}: placement {placement} {verdict}", data)
        if status == "FAILED":
            store.add_record(launch, {"type": "error", "message": "rank 1 ran on CPU 7"})
        store.finish_launch(launch, status, 0 if status == "COMPLETED" else 3, "stderr tail\n")
    node = store.add_launch(run, "node/r1", {"repeat": 1, "suite": "node", "part": "mem"})
    store.add_record(node, _meta("mem", mpi=False))
    params = {"kernel": "triad", "threads": 2, "bytes": 1 << 24}
    store.add_record(node, _sample("mem", "bandwidth", "MB/s", params, 15000.0))
    store.add_record(node, _sample("mem", "latency", "ns", {"x": "y"}, 3.0))
    store.finish_launch(node, "COMPLETED", 0)
    store.finish_run(run, "ok")
    return store, run


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The small run's JSON export, and the store it came from (its path)."""
    folder = tmp_path_factory.mktemp("source")
    store, run = build_store(folder / "source.db")
    with store:
        doc = json.loads(to_json(store, run))
    doc["source_db"] = str(folder / "source.db")
    return doc


def _export(exported: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in exported.items() if k != "source_db"})


# -- running the CLI in-process -----------------------------------------------------------

RUNNER = CliRunner()


def _state(db: Path) -> tuple[list[int], int]:
    """Row counts of every table and the bytes of the store's files (with its WAL)."""
    with sqlite3.connect(db) as con:
        counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES]
    con.close()
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    return counts, size


def hpcscope(db: Path, *args: str) -> Any:
    return RUNNER.invoke(main, ["--db", str(db), *args])


def assert_refused(result: Any, *said: str) -> str:
    """Exit 2, no traceback, exactly one line on stderr containing `said`; the line."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for text in said:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def db(tmp_path: Path, exported: dict[str, Any]) -> Path:
    """A store that holds one good imported run (so "unchanged" means something)."""
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_export(exported)))
    store = tmp_path / "store.db"
    result = hpcscope(store, "import", str(path))
    assert result.exit_code == 0, result.output
    return store


def refuse_import(db: Path, text: str, *said: str, name: str = "bad.json") -> str:
    path = db.parent / name
    path.write_text(text)
    before = _state(db)
    line = assert_refused(hpcscope(db, "import", str(path)), "import: ", *said)
    assert _state(db) == before
    return line


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation: the value at 'run.label' or 'launches.0.returncode' becomes `value`."""

    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return apply


# -- the findings of issue 32, one test each -------------------------------------------------


@pytest.mark.parametrize(
    "path,value,said",
    [
        ("run.host", {"a": 1}, "run.host: {'a': 1} is not of type 'string'"),
        ("run.label", {"a": 1}, "run.label: {'a': 1} is not of type 'string'"),
        ("run.notes", "a note", "run.notes: 'a note' is not of type 'array'"),
        ("run.mpi", {"flavor": "openmpi"}, "run.mpi: {'flavor': 'openmpi'} is not of type"),
        ("run.environment", ["x"], "run.environment: ['x'] is not of type 'object'"),
        ("run.options", [1], "run.options: [1] is not of type 'object'"),
        ("run.started", "not-a-date", "run.started: 'not-a-date' is not a 'date-time'"),
        ("run.finished", "2026-13-01T00:00:00+00:00", "run.finished: "),
        ("run.command", "hpcscope run p2p", "run.command: 'hpcscope run p2p' is not of type"),
        ("run.suite", "../../etc", "run.suite: '../../etc' is not one of"),
        ("run.status", "done", "run.status: 'done' is not one of"),
        ("run.backend", "cloud", "run.backend: 'cloud' is not one of"),
        ("launches.0.returncode", "abc", "launches[0].returncode: 'abc' is not of type"),
        ("launches.0.returncode", 2**40, "launches[0].returncode: 1099511627776 is greater"),
        ("launches.1.status", "EXPLODED", "launches[1].status: 'EXPLODED' is not one of"),
        ("launches.0.meta", [1, 2], "launches[0].meta: [1, 2] is not of type 'object', 'null'"),
        ("launches.0.tags", {"mpi": ["a"]}, "launches[0].tags.mpi: ['a'] is not of type"),
        ("run.notes.0.data", "x", "run.notes[0].data: 'x' is not of type 'object'"),
        ("run.notes.2.data.value", "big", "run.notes[2].data.value: 'big' is not of type"),
        ("run.backend_data", {"owner": {"host": "n1", "pid": "x"}}, "owner.pid: 'x' is not"),
        ("run.topology_xml", "<not xml", "run.topology_xml: not an hwloc topology"),
        ("samples.0.values", [], "samples[0].values: [] should be non-empty"),
        ("samples.0.launch_id", 999, "samples[0].launch_id: 999 names no launch of the file"),
        ("launches.1.id", 1, "launches[1].id: 1 is repeated"),
    ],
)
def test_a_wrong_type_or_value_is_refused_naming_run_and_field(
    db: Path, exported: dict[str, Any], path: str, value: Any, said: str
) -> None:
    doc = _export(exported)
    if path == "launches.1.id":
        value = doc["launches"][0]["id"]
    _set(path, value)(doc)
    run_id = doc["run"]["id"]
    refuse_import(db, json.dumps(doc), f"bad.json: run {run_id}: ", said)
    assert _plain_validator().is_valid(doc) == export_schema._validator().is_valid(doc)


def _plain_validator() -> Any:
    """The schema file as it is, without the "$ref"s transfer inlines for speed."""
    from jsonschema import Draft202012Validator

    checker = export_schema._validator().format_checker
    return Draft202012Validator(export_schema.schema(), format_checker=checker)


@pytest.mark.parametrize(
    "summary",
    [
        '{"type": "summary", "metric": "latency", "median": NaN}',
        '{"type": "summary", "metric": "latency", "median": Infinity}',
        '{"type": "summary", "metric": "latency", "median": -Infinity}',
        '{"type": "summary", "metric": "latency", "median": 1e400}',
    ],
)
def test_nan_and_infinity_are_refused_at_parse_time(
    db: Path, exported: dict[str, Any], summary: str
) -> None:
    doc = _export(exported)
    doc["launches"][0]["summaries"] = ["@SUMMARY@"]
    text = json.dumps(doc).replace('"@SUMMARY@"', summary)
    refuse_import(db, text, "bad.json: not an hpcscope export (not JSON: ")


def test_a_file_nested_200000_deep_is_one_line(db: Path) -> None:
    refuse_import(db, "[" * 200_000 + "]" * 200_000, "nested more than 32 levels deep")
    refuse_import(db, '{"a":' * 200_000 + "1" + "}" * 200_000, "nested more than 32")


def test_the_real_command_says_one_line(cli: Any, exported: dict[str, Any]) -> None:
    """The same through a real `hpcscope` process (its own stack depth, its own stderr)."""
    (cli.folder / "good.json").write_text(json.dumps(_export(exported)))
    assert cli("import", "good.json").returncode == 0
    (cli.folder / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    doc = _export(exported)
    doc["run"]["label"] = {"a": 1}
    (cli.folder / "label.json").write_text(json.dumps(doc))
    for name, said in (
        ("deep.json", "import: deep.json: not an hpcscope export (not JSON: nested more"),
        ("label.json", "import: label.json: run 1: run.label: {'a': 1} is not of type"),
        ("missing.json", "import: missing.json: no such file"),
        ("hpcscope.db", "import: hpcscope.db is this store itself"),
    ):
        done = cli("import", name)
        assert done.returncode == 2, (name, done.stderr)
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert cli("list").stdout.count("\n") == 2  # the header and the one good run


def test_nesting_within_the_parser_but_beyond_the_bound_is_named(
    db: Path, exported: dict[str, Any]
) -> None:
    doc = _export(exported)
    doc["run"]["options"] = {"x": "@DEEP@"}
    text = json.dumps(doc).replace('"@DEEP@"', "[" * 500 + "]" * 500)
    refuse_import(db, text, "run.options.x", "nested more than 32 levels deep")


@pytest.mark.parametrize(
    "value,said",
    [
        ("a\x00b", "run.label: contains a NUL character"),
        ("\ud800", "run.label: is not valid Unicode (a lone surrogate)"),
        (10**30, "run.label: an integer beyond 64 bits"),
    ],
)
def test_values_no_store_may_hold_are_named(
    db: Path, exported: dict[str, Any], value: Any, said: str
) -> None:
    doc = _export(exported)
    doc["run"]["label"] = value
    refuse_import(db, json.dumps(doc), said)


@pytest.mark.parametrize(
    "tag",
    ["hpcscope.export/ 1", "hpcscope.export/\u0661", "hpcscope.export/1\n", "hpcscope.export/01"],
)
def test_the_schema_tag_takes_ascii_digits_only(
    db: Path, exported: dict[str, Any], tag: str
) -> None:
    doc = _export(exported)
    doc["schema"] = tag
    refuse_import(db, json.dumps(doc), "unknown export schema")


def test_a_two_million_character_label_is_refused_at_once(
    db: Path, exported: dict[str, Any]
) -> None:
    doc = _export(exported)
    doc["run"]["label"] = "x" * 2_000_000
    started = time.monotonic()
    line = refuse_import(db, json.dumps(doc), "run.label: 2000000 characters, more than the 200")
    assert time.monotonic() - started < 10
    assert len(line) < 400  # the value itself is not repeated


@pytest.mark.parametrize(
    "path,limit",
    [
        ("run.label", 200),
        ("run.host", 255),
        ("launches.0.name", 255),
        ("launches.0.stderr_tail", 65536),
        ("run.notes.0.text", 16384),
        ("samples.0.benchmark", 200),
        ("run.environment.kernel", 65536),
    ],
)
def test_string_lengths_are_bounded(
    db: Path, exported: dict[str, Any], path: str, limit: int
) -> None:
    ok = _export(exported)
    _set(path, "y" * limit)(ok)
    assert transfer.check_export(ok, "ok")  # the limit itself is allowed
    doc = _export(exported)
    _set(path, "y" * (limit + 1))(doc)
    refuse_import(db, json.dumps(doc), f"{limit + 1} characters, more than the {limit}")


def test_a_missing_file_is_said_to_be_missing(db: Path) -> None:
    before = _state(db)
    line = assert_refused(hpcscope(db, "import", str(db.parent / "missing.json")))
    assert "missing.json: no such file" in line
    assert "choose another place" not in line
    assert _state(db) == before


def test_a_missing_file_creates_no_store(tmp_path: Path) -> None:
    result = hpcscope(tmp_path / "new.db", "import", str(tmp_path / "missing.json"))
    assert_refused(result, "no such file")
    assert not (tmp_path / "new.db").exists()


def test_importing_the_store_into_itself_is_refused(db: Path) -> None:
    before = _state(db)
    assert_refused(hpcscope(db, "import", str(db)), "is this store itself")
    assert _state(db) == before
    (db.parent / "link.db").symlink_to(db)  # the same file by another name
    assert_refused(hpcscope(db, "import", str(db.parent / "link.db")), "is this store itself")
    assert _state(db) == before


def _other_store(exported: dict[str, Any], tmp_path: Path, sql: str, *args: Any) -> Path:
    """A copy of the source store with one row changed by hand."""
    other = tmp_path / "other.db"
    with sqlite3.connect(exported["source_db"]) as src, sqlite3.connect(other) as dst:
        src.backup(dst)
        dst.execute(sql, args)
    src.close()
    dst.close()
    return other


@pytest.mark.parametrize(
    "sql,args,said",
    [
        ("UPDATE launches SET meta = ? WHERE id = 1", ("[1,2]",), "launches[0].meta: [1, 2]"),
        ("UPDATE launches SET meta = ? WHERE id = 1", ("{",), "launches[0].meta: stored JSON"),
        ("UPDATE runs SET notes = ?", ('"str"',), "run.notes: 'str' is not of type 'array'"),
        ("UPDATE runs SET mpi = ?", ("[" * 100_000 + "]" * 100_000,), "run.mpi: stored JSON"),
        ("UPDATE runs SET label = ?", (b"\xff",), "run.label: b'\\xff' is not of type"),
        ("UPDATE samples SET warmups = ? WHERE id = 1", (1.5,), "samples[0].warmups: 1.5"),
        ('UPDATE samples SET "values" = ? WHERE id = 1', ("[NaN]",), "samples[0].values: stored"),
        ("UPDATE runs SET started = ?", ("yesterday",), "run.started: 'yesterday' is not a"),
        ("DROP TABLE errors", (), "not a readable hpcscope store"),
    ],
)
def test_another_store_file_is_checked_like_an_export(
    db: Path, exported: dict[str, Any], tmp_path: Path, sql: str, args: tuple, said: str
) -> None:
    other = _other_store(exported, tmp_path, sql, *args)
    before = _state(db)
    assert_refused(hpcscope(db, "import", str(other)), "import: ", said)
    assert _state(db) == before


def test_a_good_store_file_imports_and_reads_back(
    db: Path, exported: dict[str, Any], tmp_path: Path
) -> None:
    other = tmp_path / "copy.db"
    shutil.copy(exported["source_db"], other)
    result = hpcscope(db, "import", str(other))
    assert result.exit_code == 0, result.output
    new = int(result.stdout.split()[-1])
    _views_work(db, new)


def test_a_run_stored_malformed_reads_as_one_clear_error(db: Path) -> None:
    """Poison can no longer come in through import; a store edited by hand (or imported
    by an older hpcscope) makes show, export and report fail with a message that says
    how to delete the run, not a TypeError in a view."""
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET notes = '\"a string\"'")
    con.close()
    for args in (("show", "last"), ("export", "last", "--format", "json"), ("report", "last")):
        result = hpcscope(db, *args, *(["-o", str(db.parent / "r")] if args[0] == "report" else []))
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert isinstance(result.exception, SystemExit)
        text = " ".join(result.stderr.split())
        assert "stored field notes is malformed" in text and "DELETE FROM runs" in text, text
    with Store(db) as store, pytest.raises(ValueError, match="stored field notes"):
        store.run(1)


# -- the schema file ------------------------------------------------------------------------


def test_the_published_schema_is_the_packaged_one() -> None:
    packaged = REPO / "src" / "hpcscope" / "results" / export_schema.SCHEMA_FILE
    published = REPO / "docs" / "export.schema.json"
    assert published.read_bytes() == packaged.read_bytes(), (
        "docs/export.schema.json differs from the packaged schema: copy "
        "src/hpcscope/results/export.schema.json to docs/"
    )
    assert export_schema.schema() == json.loads(packaged.read_text())
    assert "export.schema.json" in (REPO / "docs" / "records.md").read_text()


def test_the_schema_is_draft_2020_12_and_knows_the_codes_names() -> None:
    from jsonschema import Draft202012Validator

    schema = export_schema.schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    run = schema["$defs"]["run"]["properties"]
    assert run["suite"]["enum"] == list(SUITES)
    assert run["status"]["enum"] == [*RUN_STATUSES, "abandoned"]
    assert run["backend"]["enum"] == list(BACKENDS)
    assert schema["$defs"]["launch"]["properties"]["status"]["enum"] == list(LAUNCH_STATUSES)
    assert schema["properties"]["schema"]["const"] == "hpcscope.export/1"


@pytest.mark.parametrize(
    "text,ok",
    [
        ("2026-11-24T08:00:00.123+00:00", True),
        ("2026-11-24T08:00:00Z", True),
        ("2026-11-24t08:00:00z", True),
        ("2026-11-24T08:00:00", False),  # no zone
        ("2026-11-24 08:00:00+00:00", False),
        ("2026-02-30T08:00:00+00:00", False),
        ("2026-11-24T25:00:00+00:00", False),
        ("\u0662026-11-24T08:00:00+00:00", False),  # an Arabic-Indic digit
        ("not-a-date", False),
    ],
)
def test_date_times_are_really_checked(text: str, ok: bool) -> None:
    """jsonschema checks "date-time" only with an optional package; ours is registered."""
    assert export_schema._date_time(text) is ok
    doc = {"schema": "hpcscope.export/1", "launches": [], "samples": []}
    doc["run"] = {"started": text, "status": "ok", "suite": "p2p"}
    problem = export_schema._schema_problem(doc)
    if ok:
        assert problem is None
    else:
        assert problem is not None and "is not a 'date-time'" in problem[1], problem


def test_a_real_export_validates_and_round_trips(db: Path, exported: dict[str, Any]) -> None:
    assert export_schema._schema_problem(_export(exported)) is None
    assert _plain_validator().is_valid(_export(exported))
    with Store(db) as store:
        again = json.loads(to_json(store, 1))
    assert export_schema._schema_problem(again) is None


# -- fuzzing --------------------------------------------------------------------------------

# Examples tried per fuzz test; test_the_fuzz_tried_enough checks and reports the sum.
FUZZED: dict[str, list[int]] = {}  # name -> [examples, imported, refused]
FUZZ_TIME: dict[str, float] = {}  # name -> when its first example started
FUZZ_SECONDS: dict[str, float] = {}  # name -> seconds from its first to its last example

_odd_text = st.text(
    alphabet=st.characters(blacklist_categories=()), min_size=0, max_size=12
) | st.sampled_from(
    [
        "",
        "\x00",
        "\ud800",
        "\u202e",  # right-to-left override
        "\x1b[31m",
        "[red]x[/red]",
        ":smile:",
        "\u0661\u0662",
        "\ufeff",
        "a\nb",
        "2026-11-24T08:00:00+00:00",
        "../../etc",
        "p2p",
        "COMPLETED",
        "placement",
        "peak",
    ]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**400 // 10**380])
    | st.floats(allow_nan=True, allow_infinity=True)
    | _odd_text
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_odd_text, inner, max_size=3),
    max_leaves=8,
)
# Placeholders, replaced in the JSON text: what json.dumps cannot (or should not) write.
_SPECIAL = {
    "@HUGE@": '"' + "h" * 300_000 + '"',
    "@DEEP40@": "[" * 40 + "]" * 40,
    "@DEEP5000@": "[" * 5000 + "]" * 5000,
    "@NAN@": "NaN",
    "@INF@": "-Infinity",
    "@BIGFLOAT@": "1e999",
    "@BIGINT@": "9" * 5000,
}
_hostile = _values | st.sampled_from(sorted(_SPECIAL))


def _paths(doc: Any, parts: tuple = ()) -> list[tuple]:
    out = [parts]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*parts, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*parts, i))
    return out


def _mutate(doc: dict[str, Any], path: tuple, op: str, value: Any) -> None:
    if not path:
        return
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    current = parent[last]
    if op == "delete":
        del parent[last]
    elif op == "replace":
        parent[last] = value
    elif op == "wrap":  # the value, one level deeper: a type change that keeps content
        parent[last] = [current]
    elif op == "stringify":
        parent[last] = json.dumps(current)
    elif op == "insert" and isinstance(current, dict):
        current[str(value)[:20]] = value
    elif op == "insert" and isinstance(current, list):
        current.append(value)
    elif op == "grow" and isinstance(current, str):
        parent[last] = current * 50 + "z" * 300


def _text(doc: dict[str, Any], ascii_only: bool) -> str:
    text = json.dumps(doc, ensure_ascii=ascii_only, allow_nan=True)
    for mark, raw in _SPECIAL.items():
        text = text.replace(json.dumps(mark), raw)
    return text


def _views_work(db: Path, run_id: int) -> None:
    """`show` (summary and --cells) and `export` in every format, in-process."""
    with Store(db) as store:
        store.run(run_id)
        print_run(store, run_id, Console(file=io.StringIO(), width=100), cells=False)
        print_run(store, run_id, Console(file=io.StringIO(), width=100), cells=True)
        for fmt in (to_json, to_csv, to_markdown, to_osu):
            fmt(store, run_id)


SHOWN: set[str] = set()


def _content(db: Path, run_id: int) -> str:
    """What the views of a run read: its rows without their ids (which are new on every
    import), as text; the same content shows the same."""
    with sqlite3.connect(db) as con:
        run = con.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()[1:]
        launches = con.execute(
            "SELECT id, name, tags, status, returncode, started, finished, stderr_tail, "
            "backend_id, meta FROM launches WHERE run_id = ? ORDER BY id",
            (run_id,),
        ).fetchall()
        order = {row[0]: i for i, row in enumerate(launches)}
        rows: list[Any] = [run, [row[1:] for row in launches]]
        for table, cols in (
            ("samples", 'benchmark, metric, unit, params, "values", warmups'),
            ("summaries", "record"),
            ("errors", "message"),
        ):
            found = con.execute(
                f"SELECT launch_id, {cols} FROM {table} WHERE launch_id IN "
                "(SELECT id FROM launches WHERE run_id = ?) ORDER BY id",
                (run_id,),
            ).fetchall()
            rows.append([(order[row[0]], *row[1:]) for row in found])
    con.close()
    return repr(rows)


class Fuzz:
    """One store for all examples of a test (a fresh store per example costs more than
    the check itself); a refused file must leave it unchanged."""

    def __init__(self, folder: Path, name: str) -> None:
        folder.mkdir(exist_ok=True)
        self.db = folder / "fuzz.db"
        self.name = name
        FUZZED.setdefault(name, [0, 0, 0])
        FUZZ_TIME.setdefault(name, time.monotonic())

    def run(self, file: Path) -> None:
        counts = FUZZED[self.name]
        counts[0] += 1
        before = _state(self.db) if self.db.exists() else None
        result = hpcscope(self.db, "import", str(file))
        assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
        assert isinstance(result.exception, (SystemExit, type(None))), result.exception
        assert "Traceback" not in result.output
        if result.exit_code == 2:
            counts[2] += 1
            assert len(result.stderr.splitlines()) == 1, result.stderr
            assert result.stderr.startswith("error: import: "), result.stderr
            assert (_state(self.db) if self.db.exists() else None) == before
        else:
            counts[1] += 1
            new = [int(n) for n in result.stdout.split()]
            assert new
            for run_id in new:
                content = _content(self.db, run_id)
                if content not in SHOWN:  # the views of the same rows were shown already
                    SHOWN.add(content)
                    _views_work(self.db, run_id)
        FUZZ_SECONDS[self.name] = time.monotonic() - FUZZ_TIME[self.name]


@pytest.fixture(scope="module")
def fuzz_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """In memory where Linux offers it (/dev/shm): every import commits and checkpoints
    the store, and a disk's fsync per example costs more than the check itself."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path_factory.mktemp("fuzz")
        return
    folder = Path(tempfile.mkdtemp(prefix="hpcscope-fuzz-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


FUZZ_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


_BASE: dict[str, tuple[str, list[tuple]]] = {}  # the export as text, and its paths


@settings(FUZZ_SETTINGS, max_examples=1900)
@given(data=st.data())
def test_fuzz_mutated_exports(exported: dict[str, Any], fuzz_folder: Path, data: Any) -> None:
    """The small run's export with one to three mutations anywhere (a value replaced by
    any JSON value, NaN, a 300,000-character text, deep nesting or a 5,000-digit number;
    a key deleted; a value wrapped in a list or turned into its JSON text; a key or item
    added; a text grown), written as ASCII or UTF-8, sometimes cut short."""
    if "export" not in _BASE:
        base = _export(exported)
        base.pop("pooled")  # derived, never read by import: mutations there prove nothing
        _BASE["export"] = (json.dumps(base), _paths(base))
    text, paths = _BASE["export"]
    fuzz = Fuzz(fuzz_folder / "export", "exports")
    doc = json.loads(text)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        path = data.draw(st.sampled_from(paths), label="path")
        op = data.draw(
            st.sampled_from(
                ["replace", "replace", "delete", "wrap", "stringify", "insert", "grow"]
            ),
            label="op",
        )
        try:
            _mutate(doc, path, op, data.draw(_hostile, label="value"))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed or retyped what this path named
    text = _text(doc, data.draw(st.booleans(), label="ascii"))
    if data.draw(st.integers(0, 9), label="cut") == 0:  # a file cut short
        text = text[: data.draw(st.integers(0, len(text)), label="at")]
    file = fuzz.db.parent / "in.json"
    file.write_bytes(text.encode("utf-8", "surrogatepass"))
    fuzz.run(file)


_ROWS = {"runs": 1, "launches": 3, "samples": 8, "summaries": 2, "errors": 1}  # build_store's
_COLUMNS = (
    [
        ("runs", c)
        for c in ("started", "status", "suite", "command", "options", "host", "backend", "label")
    ]
    + [
        ("runs", c)
        for c in ("topology_xml", "environment", "mpi", "notes", "backend_data", "finished")
    ]
    + [("launches", c) for c in ("name", "tags", "status", "returncode", "started", "meta")]
    + [("samples", c) for c in ("benchmark", "metric", "unit", "params", "values", "warmups")]
    + [("summaries", "record"), ("errors", "message")]
)


@settings(FUZZ_SETTINGS, max_examples=600)
@given(data=st.data())
def test_fuzz_hand_edited_store_files(
    exported: dict[str, Any], fuzz_folder: Path, data: Any
) -> None:
    """Another store file whose rows were edited by hand: each column of each table, set
    to text that is JSON of another type, not JSON at all, or a number or bytes."""
    fuzz = Fuzz(fuzz_folder / "stores", "store files")
    pristine = fuzz.db.parent / "pristine.db"
    if not pristine.exists():
        with sqlite3.connect(exported["source_db"]) as src, sqlite3.connect(pristine) as dst:
            src.backup(dst)
        src.close()
        dst.close()
    other = fuzz.db.parent / "other.db"
    for old in fuzz.db.parent.glob("other.db*"):
        old.unlink(missing_ok=True)
    shutil.copy(pristine, other)
    with sqlite3.connect(other) as con:
        con.execute("PRAGMA synchronous = OFF")  # a scratch copy: no fsync per example
        for _ in range(data.draw(st.integers(1, 2), label="edits")):
            table, column = data.draw(st.sampled_from(_COLUMNS), label="column")
            value = _column_value(data.draw(_hostile, label="value"), data)
            row = data.draw(st.integers(1, _ROWS[table]), label="row")
            sql = f'UPDATE {table} SET "{column}" = ? WHERE rowid = ?'
            try:
                con.execute(sql, (value, row))
            except sqlite3.IntegrityError:  # NULL in a NOT NULL column: the text 'null'
                con.execute(sql, ("null", row))
    con.close()
    fuzz.run(other)


def _column_value(value: Any, data: Any) -> Any:
    """What SQLite takes: the value as JSON text (hostile placeholders included), or as
    itself where SQLite can hold it (a list or object becomes bytes, a BLOB)."""
    if data.draw(st.booleans(), label="as json") or isinstance(value, str) and value in _SPECIAL:
        return _text({"v": value}, True)[len('{"v": ') : -1]
    if isinstance(value, (list, dict)):
        return repr(value).encode("utf-8", "surrogatepass")
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def test_the_fuzz_tried_enough() -> None:
    """Runs after the fuzz tests (file order) and reports what they tried."""
    if not FUZZED:
        pytest.skip("the fuzz tests did not run (deselected)")
    total = sum(n for n, _, _ in FUZZED.values())
    seconds = sum(FUZZ_SECONDS.values())
    report = "; ".join(
        f"{name}: {n} examples, {ok} imported, {bad} refused, {FUZZ_SECONDS.get(name, 0):.0f} s"
        for name, (n, ok, bad) in FUZZED.items()
    )
    summary = (
        f"import fuzz: {total} examples in {seconds:.0f} s ({report}; "
        f"{len(SHOWN)} distinct imported runs shown and exported)"
    )
    print(summary)
    warnings.warn(summary, stacklevel=1)
    if len(FUZZED) == 2:  # with the option-value fuzz (test_cli_fuzz.py, 2,752): over 5,000
        assert total >= 2500, summary
    for name, (_, ok, bad) in FUZZED.items():
        assert ok and bad, f"{name}: the fuzz never imported or never refused: {summary}"
