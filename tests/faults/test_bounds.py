"""Stored fields bounded at the source (issue 43, findings 4 and 5, part 2).

- metric and unit: one list in code (records.METRICS, records.UNITS), the enums of the
  import schema, what the programs in bench/ and the parsers write, and docs/records.md
  all say the same; a record with another is refused at ingestion and at import, so a
  title of `show` cannot carry ESC[2J or U+202E;
- `show` prints no raw control characters or bidi overrides from stored text;
- --label and the other run fields get the import schema's bounds when a run is
  recorded; environment values are cut at ENV_VALUE_CHARS with a marker;
- benchmark output lines and import files have a size cap, named in one line.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from hpcscope.results import export_schema, records, transfer
from hpcscope.results.records import METRICS, UNITS, RecordError, parse_line

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


# -- metric and unit ------------------------------------------------------------------------


def _written_by_the_programs() -> set[tuple[str, str]]:
    """(metric, unit) pairs the C programs and the tool parsers write, read from their
    source: node_sample_begin/point_params calls, p2p's test table, hs_repeat_emit (unit
    us), parsers._sample calls."""
    pairs: set[tuple[str, str]] = set()
    for path in [*REPO.glob("bench/**/*.c"), REPO / "src/hpcscope/results/parsers.py"]:
        text = path.read_text()
        for m in re.finditer(
            r"(?:node_sample_begin|point_params|_sample)\(\s*(?:&j,\s*)?"
            r'"([a-z_]+)",\s*"([^"]+)"',
            text,
        ):
            pairs.add((m.group(1), m.group(2)))
        for m in re.finditer(r'is_fp \? "(\w+)" : "(\w+)", is_fp \? "([^"]+)" : "([^"]+)"', text):
            pairs |= {(m.group(1), m.group(3)), (m.group(2), m.group(4))}
        for m in re.finditer(r'\{ "\w+", "(\w+)", "([^"]+)", "# OSU', text):
            pairs.add((m.group(1), m.group(2)))
        for m in re.finditer(r'hs_repeat_emit\("(\w+)"', text):
            pairs.add((m.group(1), "us"))
    return pairs


def test_metrics_and_units_are_one_list_in_code_schema_docs_and_programs() -> None:
    sample = export_schema.schema()["$defs"]["sample"]["properties"]
    assert sample["metric"]["enum"] == list(METRICS)
    assert sample["unit"]["enum"] == list(UNITS)
    written = _written_by_the_programs()
    assert len(written) >= 12, written  # the scan found the programs' calls
    assert {m for m, _ in written} == set(METRICS), written
    assert {u for _, u in written} == set(UNITS), written
    doc = (REPO / "docs" / "records.md").read_text()
    section = doc[doc.index("## 4. Benchmarks") : doc.index("## 6. The store")]
    for name in METRICS:
        assert f"`{name}`" in section, name
    for unit in UNITS:
        assert unit in section, unit
    assert "records.METRICS" in doc


@pytest.mark.parametrize(
    "key,value", [("metric", "lat\u202eency"), ("unit", "\x1b[2Jus"), ("metric", "x" * 300)]
)
def test_a_record_with_another_metric_or_unit_is_refused(key: str, value: str) -> None:
    record = {"type": "sample", "metric": "latency", "unit": "us", "params": {}}
    record |= {"values": [1.0], "warmups": 0, key: value}
    with pytest.raises(RecordError, match=f"'{key}' .* is not one of"):
        parse_line(json.dumps(record), "line 1")


# -- show ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bounds")
    store, _ = build_store.build(folder / "hpcscope.db")
    store.close()
    return folder / "hpcscope.db"


def test_show_prints_no_raw_escape_or_bidi_control(store_file: Path, tmp_path: Path) -> None:
    """Finding 4: a store edited by hand (import refuses these now) with ESC[2J and U+202E
    in a sample's metric and unit, and a label: show prints them as text."""
    from conftest import Cli

    cli = Cli(tmp_path)
    cli.db.write_bytes(store_file.read_bytes())
    with sqlite3.connect(cli.db) as con:
        con.execute("UPDATE samples SET unit = 'u\x1b[2Js', metric = 'lat\u202eency'")
        con.execute("UPDATE runs SET label = 'a\x1b]0;title\x07b\u202ec'")
    con.close()
    for args in (["show", "1"], ["show", "1", "--cells"]):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\u202e" not in done.stdout, done.stdout[:2000]
        assert "<U+202E>" in done.stdout


def test_show_of_a_200_character_label_is_fast(store_file: Path, tmp_path: Path) -> None:
    """Finding 5: show's time grew with the square of the label's length; at the bound
    (200 characters, one word) it is as fast as any."""
    from conftest import Cli

    cli = Cli(tmp_path)
    cli.db.write_bytes(store_file.read_bytes())
    with sqlite3.connect(cli.db) as con:
        con.execute("UPDATE runs SET label = ? WHERE id = 2", ("L" * 200,))
    con.close()
    started = time.monotonic()
    done = cli("show", "2")
    assert done.returncode == 0 and "L" * 20 in done.stdout, done.stderr
    assert time.monotonic() - started < 15


# -- run fields at the source -------------------------------------------------------------


def test_a_label_over_the_import_bound_is_refused_before_anything_runs(tmp_path: Path) -> None:
    from conftest import Cli

    cli = Cli(tmp_path)
    limit = export_schema.schema()["$defs"]["run"]["properties"]["label"]["maxLength"]
    done = cli("run", "node", "--cpu", "--quick", "--dry-run", "--label", "L" * (limit + 1))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{limit + 1} characters" in lines[0], done.stderr
    assert f"at most {limit}" in lines[0] and "--label" in lines[0]
    assert not cli.db.exists()


def test_run_fields_get_the_import_bounds_when_a_run_is_recorded(tmp_path: Path) -> None:
    from hpcscope.results.store import Store, StoreError

    with Store(tmp_path / "x.db") as store:
        with pytest.raises(StoreError, match=r"run\.label: 201 characters, more than the 200"):
            store.create_run("p2p", label="x" * 201)
        with pytest.raises(StoreError, match=r"run\.options\.sizes: 70000 characters"):
            store.create_run("p2p", options={"sizes": "1" * 70000})
        assert store.run_ids() == []


def test_environment_values_are_cut_with_a_marker(tmp_path: Path) -> None:
    from hpcscope.results.store import ENV_VALUE_CHARS, Store

    long = "v" * 100_000
    with Store(tmp_path / "x.db") as store:
        run = store.create_run("p2p", environment={"variables": {"OMPI_X": long}, "os": "ok"})
        env = store.run(run)["environment"]
    value = env["variables"]["OMPI_X"]
    assert len(value) < ENV_VALUE_CHARS + 100 and value.startswith("v" * 100)
    assert "[cut by hpcscope: 100000 characters]" in value
    assert env["os"] == "ok"
    assert env["cut"] == {"variables.OMPI_X": 100_000}


# -- output lines and import files ----------------------------------------------------------


def test_an_output_line_over_the_cap_fails_the_job_not_the_memory(tmp_path: Path) -> None:
    """A program that writes one line of 40 MiB: read with a bounded readline, the line
    is a problem naming the cap (the job fails), the records around it are stored."""
    import io

    from hpcscope.launch.ingest import IngestResult, ingest_lines
    from hpcscope.results.store import Store

    meta = json.dumps(
        {
            "type": "meta",
            "schema": records.SCHEMA,
            "benchmark": "cpu",
            "version": "1",
            "mpi": None,
            "ranks": [],
            "timer": {"resolution_ns": 1, "overhead_ns": 1},
            "options": {},
        }
    )
    sample = json.dumps(
        {"type": "sample", "metric": "flops", "unit": "GFLOP/s", "params": {}}
        | {"values": [1.0], "warmups": 0}
    )
    big = b'{"type": "error", "message": "' + b"x" * (40 << 20) + b'"}\n'
    stream = io.BytesIO(f"{meta}\n".encode() + big + f"{sample}\n".encode())
    with Store(tmp_path / "x.db") as store:
        run = store.create_run("node")
        launch = store.add_launch(run, "cpu")
        result = ingest_lines(store, launch, stream, "cpu", IngestResult())
        assert result.records == 2  # meta and the sample after the long line
        assert len(result.problems) == 1, result.problems
        assert "cpu line 2" in result.problems[0]
        assert f"longer than the cap of {records.MAX_LINE_CHARS >> 20} MiB" in result.problems[0]


def test_an_import_file_over_the_cap_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"schema": "hpcscope.export/1", "pad": "x" * 2000}))
    with pytest.raises(transfer.TransferError, match="more than the cap of 1000 bytes"):
        transfer.read_file(path)


def test_a_tool_output_over_the_cap_fails_the_job(tmp_path: Path, monkeypatch) -> None:
    """A reference tool's whole output is read up to MAX_TOOL_OUTPUT_BYTES from its pipe,
    the rest drained unread; the job fails naming the cap."""
    import io

    from hpcscope.launch import ingest
    from hpcscope.results.store import Store

    monkeypatch.setattr(ingest, "MAX_TOOL_OUTPUT_BYTES", 1 << 20)
    stream = io.BytesIO(b'{"start": {}, "error": "' + b"x" * (3 << 20) + b'"}')
    with Store(tmp_path / "x.db") as store:
        launch = store.add_launch(store.create_run("node"), "ref/iperf3")
        result = ingest.ingest_tool_output(
            store, launch, "iperf3", stream, ingest.IngestResult(), []
        )
    assert stream.read() == b""  # drained
    assert any("more than the cap of 1 MiB" in p for p in result.problems), result.problems


def test_texts_from_programs_are_cut_to_the_import_bounds(tmp_path: Path) -> None:
    """A note, a stderr tail and an error message longer than the schema allows are cut
    where they are stored (marked), so the run's export imports again."""
    from hpcscope.results.export import to_json
    from hpcscope.results.store import NOTE_TEXT_CHARS, TEXT_CHARS, Store

    defs = export_schema.schema()["$defs"]
    assert defs["note"]["properties"]["text"]["maxLength"] == NOTE_TEXT_CHARS
    assert defs["text"]["maxLength"] == TEXT_CHARS
    with Store(tmp_path / "x.db") as store:
        run = store.create_run("p2p")
        store.add_note(run, "warning", "n" * 100_000)
        launch = store.add_launch(run, "x")
        store.add_record(launch, {"type": "error", "message": "e" * 100_000})
        store.finish_launch(launch, "FAILED", 1, "s" * 100_000 + "LAST LINE")
        doc = json.loads(to_json(store, run))
        store.finish_run(run, "failed")
    assert doc["run"]["notes"][0]["text"].endswith("[cut by hpcscope: 100000 characters]")
    assert doc["launches"][0]["stderr_tail"].endswith("LAST LINE")
    assert len(doc["launches"][0]["errors"][0]) <= TEXT_CHARS
    transfer.check_export(doc, "export")  # imports again


def test_an_import_from_a_pipe_is_read_once_and_capped(tmp_path: Path, monkeypatch) -> None:
    """`export ... | import /dev/stdin`: one open, read up to the cap (a pipe has no size
    to check first); over it, one line."""
    monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 1000)
    read, write = os.pipe()
    os.write(write, json.dumps({"schema": "hpcscope.export/1", "pad": "x" * 2000}).encode())
    os.close(write)
    try:
        with pytest.raises(transfer.TransferError, match="more than the cap of 1000 bytes"):
            transfer.read_file(f"/dev/fd/{read}")
    finally:
        os.close(read)
