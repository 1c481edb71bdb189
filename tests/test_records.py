"""Record contract (docs/records.md): valid records pass, each malformed case names line + problem."""

from __future__ import annotations

import json

import pytest

from hpcscope.results.records import RecordError, parse_line, parse_stream

META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "0.1",
    "mpi": {"library": "Open MPI", "version": "4.1.4"},
    "ranks": [
        {"rank": 0, "host": "n1", "cpus": [0], "core": 0, "socket": 0, "numa": 0},
        {"rank": 1, "host": "n1", "cpus": [1], "core": 1, "socket": 0, "numa": None},
    ],
    "timer": {"resolution_ns": 1, "overhead_ns": 21.5},
    "options": {"min_bytes": 0, "max_bytes": 4194304},
}
SAMPLE = {
    "type": "sample",
    "metric": "latency",
    "unit": "us",
    "params": {"bytes": 8},
    "values": [0.16, 0.17, 0.16],
    "warmups": 10,
}
SUMMARY = {"type": "summary", "metric": "latency", "params": {"bytes": 8}, "min": 0.16}
ERROR = {"type": "error", "message": "MPI_Init failed"}


def line(record: dict) -> str:
    return json.dumps(record)


@pytest.mark.parametrize("record", [META, SAMPLE, SUMMARY, ERROR])
def test_valid_records_round_trip(record: dict) -> None:
    assert parse_line(line(record), "p2p output line 1") == record


def test_meta_with_the_cpu_pairs_cache_line_time() -> None:
    """As the store keeps it (and as p2p wrote it before it measured the pair last)."""
    rec = dict(META, cpu_pair={"cacheline_ns": 62.5, "round_trips": 120000})
    assert parse_line(line(rec), "x")["cpu_pair"]["cacheline_ns"] == 62.5


def test_the_cpu_pair_record_follows_the_measurements() -> None:
    pair = {"type": "cpu_pair", "cacheline_ns": 62.5, "round_trips": 120000}
    text = "\n".join(line(r) for r in (META, SAMPLE, SUMMARY, pair))
    assert list(parse_stream(text.splitlines(), "p2p output"))[-1] == pair
    with pytest.raises(RecordError, match="line 1: cpu_pair record before the meta record"):
        list(parse_stream([line(pair), line(META)], "p2p output"))


def test_meta_without_mpi_for_plain_programs() -> None:
    rec = dict(META, mpi=None, benchmark="mem")
    assert parse_line(line(rec), "x")["mpi"] is None


def test_stream_of_a_whole_output() -> None:
    text = "\n".join(line(r) for r in (META, SAMPLE, SAMPLE, SUMMARY)) + "\n\n"
    records = list(parse_stream(text.splitlines(True), "p2p output"))
    assert [r["type"] for r in records] == ["meta", "sample", "sample", "summary"]


def _broken(**changes: object) -> dict:
    rec = dict(SAMPLE)
    for key, value in changes.items():
        if value is KeyError:
            rec.pop(key)
        else:
            rec[key] = value
    return rec


@pytest.mark.parametrize(
    "record, problem",
    [
        (_broken(values=KeyError), "sample record has no 'values'"),
        (_broken(values=[]), "'values' must be a non-empty list"),
        (_broken(values=[1.0, None]), "values[1] is null"),
        (_broken(values=[1.0, "2"]), "values[1] is '2', not a number"),
        (_broken(values=[True]), "values[0] is True, not a number"),
        (_broken(metric=KeyError), "sample record has no 'metric'"),
        (_broken(unit=3), "'unit' must be a string"),
        (_broken(params=[8]), "'params' must be an object"),
        (_broken(warmups=-1), "'warmups' must be an integer >= 0"),
        (_broken(warmups=1.5), "'warmups' must be an integer >= 0"),
        ({"type": "summary", "min": 1}, "summary record has no string 'metric'"),
        ({"type": "error"}, "error record has no string 'message'"),
        ({"type": "bogus"}, "unknown record type 'bogus'"),
        ({"metric": "x"}, "record has no 'type'"),
        (dict(META, ranks=[{"rank": 0}]), "ranks[0] has no 'host'"),
        (dict(META, ranks=[dict(META["ranks"][0], cpus="0-3")]), "'cpus' must be a list"),
        (dict(META, timer={"resolution_ns": 1}), "'timer' needs a finite number 'overhead_ns'"),
        (dict(META, mpi={"library": "MPICH"}), "'mpi' has no string 'version'"),
        (dict(META, mpi="MPICH"), "'mpi' must be an object"),
        (dict(META, options=None), "'options' must be an object"),
        (
            dict(META, cpu_pair={"round_trips": 5}),
            "'cpu_pair' needs a finite number 'cacheline_ns'",
        ),
        (dict(META, cpu_pair={"cacheline_ns": 0, "round_trips": 5}), "'cacheline_ns' > 0"),
        (dict(META, cpu_pair={"cacheline_ns": 60.5, "round_trips": 0}), "'round_trips' >= 1"),
        (
            {"type": "cpu_pair", "cacheline_ns": None, "round_trips": 5},
            "cpu_pair record needs a finite number 'cacheline_ns' > 0",
        ),
        ({k: v for k, v in META.items() if k != "benchmark"}, "meta record has no 'benchmark'"),
        ({k: v for k, v in META.items() if k != "schema"}, "meta record has no 'schema'"),
    ],
)
def test_malformed_records_are_rejected_naming_line_and_problem(record: dict, problem: str) -> None:
    with pytest.raises(RecordError) as err:
        parse_line(line(record), "p2p output line 7")
    msg = str(err.value)
    assert msg.startswith("p2p output line 7: ")
    assert problem in msg
    assert "(got: {" in msg


def test_error_message_shortens_long_records() -> None:
    rec = _broken(values=KeyError, params={"pad": "x" * 500})
    with pytest.raises(RecordError) as err:
        parse_line(line(rec), "p2p output line 7")
    assert len(str(err.value)) < 250
    assert str(err.value).endswith("...)")


def test_schema_version_mismatch_names_supported_versions() -> None:
    rec = dict(META, schema="hpcscope.bench/2")
    with pytest.raises(RecordError) as err:
        parse_line(line(rec), "p2p output line 1")
    msg = str(err.value)
    assert "'hpcscope.bench/2'" in msg and "reads only hpcscope.bench/1" in msg


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Warning: no InfiniBand device found", "not a JSON record"),
        ('{"type":"sample","metric":"latency"', "not a JSON record"),  # truncated by a crash
        ("[1, 2]", "must be a JSON object, not list"),
        (
            '{"type":"sample","metric":"l","unit":"us","params":{},"values":[NaN],"warmups":0}',
            "not a JSON record (NaN is not valid JSON",
        ),
    ],
)
def test_non_json_lines_are_errors(text: str, problem: str) -> None:
    with pytest.raises(RecordError) as err:
        parse_line(text, "p2p output line 3")
    assert str(err.value).startswith("p2p output line 3: ") and problem in str(err.value)


def test_stream_error_names_the_line_number() -> None:
    lines = [line(META), line(SAMPLE), "", line(_broken(values=KeyError))]
    got: list[dict] = []
    with pytest.raises(RecordError, match=r"^p2p output line 4: sample record has no"):
        for rec in parse_stream(lines, "p2p output"):
            got.append(rec)
    assert len(got) == 2  # what came before the bad line was delivered


def test_noise_lines_can_be_skipped_as_warnings() -> None:
    lines = [
        "[n1:1234] mca_btl_openib: warning, no device",
        line(META),
        "--------------------------",
        line(SAMPLE),
    ]
    with pytest.raises(RecordError, match="line 1: not a JSON record"):
        list(parse_stream(lines, "p2p output"))
    warnings: list[str] = []
    records = list(parse_stream(lines, "p2p output", skip_noise=True, warnings=warnings))
    assert [r["type"] for r in records] == ["meta", "sample"]
    assert len(warnings) == 2
    assert warnings[0].startswith("p2p output line 1: skipped non-JSON line: [n1:1234]")
    assert warnings[1].startswith("p2p output line 3:")


def test_broken_record_is_not_noise() -> None:
    lines = [line(META), '{"type": "sample", "metric": ']
    with pytest.raises(RecordError, match="line 2: not a JSON record"):
        list(parse_stream(lines, "p2p output", skip_noise=True))


def test_stream_order_rules() -> None:
    with pytest.raises(RecordError, match="line 1: sample record before the meta record"):
        list(parse_stream([line(SAMPLE)], "p2p output"))
    with pytest.raises(RecordError, match="line 2: second meta record"):
        list(parse_stream([line(META), line(META)], "p2p output"))
    # a binary may fail before writing meta
    assert list(parse_stream([line(ERROR)], "p2p output")) == [ERROR]
