"""Property-based fuzzing of the one place records are validated (results/records.py) and
of ingestion: whatever a benchmark or a file says, a line is stored as a valid record or
refused as a problem with its line number, and nothing else happens (no crash)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcscope.launch.ingest import IngestResult, ingest_lines
from hpcscope.results.records import METRICS, UNITS, RecordError, parse_line, validate
from hpcscope.results.store import Store

META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "0.1",
    "mpi": None,
    "ranks": [],
    "timer": {"resolution_ns": 1, "overhead_ns": 20},
    "options": {},
}

# Any JSON value, with the troublemakers found by hand: huge integers, lone surrogates,
# NUL characters, deep nesting.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=()), max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
samples = st.fixed_dictionaries(
    {
        "type": st.just("sample"),
        "metric": st.sampled_from(METRICS) | st.text(max_size=8),
        "unit": st.sampled_from(UNITS) | st.text(max_size=5),
        "params": st.dictionaries(
            st.sampled_from(["bytes", "count", "x"]), json_values, max_size=3
        ),
        "values": st.lists(json_values, max_size=4),
        "warmups": json_values,
    }
)


def _line(value) -> str:
    return json.dumps(value, ensure_ascii=True)


@settings(max_examples=300, deadline=None)
@given(st.one_of(samples, json_values))
def test_parse_line_validates_or_refuses(value):
    try:
        record = parse_line(_line(value), "fuzz line 1")
    except RecordError as exc:
        assert "fuzz line 1" in str(exc)
        return
    validate(record, "again")  # what passed once passes again


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(samples, json_values, st.just(META)), max_size=6))
def test_ingest_stores_or_reports_every_line(tmp_path, records):
    with Store(tmp_path / "fuzz.db") as store:
        run = store.create_run("fuzz")
        launch = store.add_launch(run, "fuzz")
        lines = [_line(META)] + [_line(r) for r in records]
        result = ingest_lines(store, launch, lines, "fuzz", IngestResult())
        assert result.records + len(result.problems) + len(result.noise) == len(lines)
        for stored in store.samples(run):  # what was stored is a valid sample again
            validate(
                {
                    "type": "sample",
                    **{k: stored[k] for k in ("metric", "unit", "params", "values", "warmups")},
                },
                "stored",
            )


def test_the_hand_found_cases_are_refused():
    bad = [
        "[" * 100_000 + "]" * 100_000,
        _line({**META, "options": {"x": 10**30}}),
        '{"type":"error","message":"x","n":' + "9" * 4400 + "}",
        _line({"type": "error", "message": "\ud800"}),
        _line({"type": "error", "message": "a\x00b"}),
    ]
    for text in bad:
        try:
            parse_line(text, "case")
        except RecordError:
            continue
        raise AssertionError(f"accepted: {text[:60]}")
    sample = {"type": "sample", "metric": "latency", "unit": "us", "warmups": 0}
    for wrong in ({"params": {"bytes": [1, 2]}, "values": [1.0]}, {"params": {}, "values": [-1.0]}):
        try:
            validate({**sample, **wrong}, "case")
        except RecordError:
            continue
        raise AssertionError(f"accepted: {wrong}")
