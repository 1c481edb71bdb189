"""Parse and validate the JSONL records written by hpcscope benchmark binaries (docs/records.md).

Every line a benchmark writes is one JSON object with a "type": meta, sample, summary or
error. Validation happens here, once, so the store and the statistics can trust what
they get: a record that does not fit is rejected with a message naming where it came
from (source and line), what is wrong, and the offending text, shortened.

Non-finite numbers: the C writer prints NaN/Inf as null (JSON has neither), and Python's
json module would accept the non-standard tokens NaN/Infinity; both are rejected for
sample values, because a statistic over them means nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any, TypeGuard

SCHEMA = "hpcscope.bench/1"
SUPPORTED_SCHEMAS: tuple[str, ...] = (SCHEMA,)
RECORD_TYPES: tuple[str, ...] = ("meta", "sample", "summary", "error", "cpu_pair")
_SHOW_CHARS = 120


class RecordError(ValueError):
    """A record that does not fit the contract; the message names source, line, problem."""


def shorten(text: str, limit: int = _SHOW_CHARS) -> str:
    """The offending text for an error message: one line, at most `limit` characters."""
    text = text.strip().replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON (non-finite number)")


def _is_number(x: Any) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _fail(where: str, problem: str, text: str) -> RecordError:
    return RecordError(f"{where}: {problem} (got: {shorten(text)})")


def parse_line(line: str, where: str) -> dict[str, Any]:
    """Parse one JSONL line into a validated record dict.

    `where` names the line for error messages, e.g. "p2p output line 7".
    Raises RecordError for non-JSON text, a non-object, or a record that does not fit.
    """
    if len(line) > MAX_LINE_CHARS:
        raise _fail(where, f"longer than {MAX_LINE_CHARS} characters: not a record", line)
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError; also 5000-digit ints
        raise _fail(where, f"not a JSON record ({exc})", line) from None
    except RecursionError:
        raise _fail(where, "nested too deeply to be a record", line) from None
    if not isinstance(record, dict):
        raise _fail(where, f"a record must be a JSON object, not {type(record).__name__}", line)
    validate(record, where, text=line)
    return record


def validate(record: dict[str, Any], where: str, text: str | None = None) -> None:
    """Check one decoded record against the contract (docs/records.md); raise RecordError if not.

    Extra keys are allowed (a newer benchmark may add fields within the same schema).
    """
    shown = text if text is not None else json.dumps(record, default=str)
    problem = _value_problem(record, "record", 0)
    if problem:
        raise _fail(where, problem, shown)
    kind = record.get("type")
    if kind not in RECORD_TYPES:
        if "type" not in record:
            raise _fail(
                where, "record has no 'type' (one of " + ", ".join(RECORD_TYPES) + ")", shown
            )
        raise _fail(
            where,
            f"unknown record type {kind!r} (expected one of " + ", ".join(RECORD_TYPES) + ")",
            shown,
        )
    problem = {
        "meta": _meta_problem,
        "sample": _sample_problem,
        "summary": _summary_problem,
        "error": _error_problem,
        "cpu_pair": _cpu_pair_problem,
    }[kind](record)
    if problem:
        raise _fail(where, f"{kind} record {problem}", shown)


# The metrics and units the suites' programs and the reference tools' parsers write
# (docs/records.md sections 4 and 5): a sample with another is refused here, at the source,
# and by import (export.schema.json has them as enums; a test keeps the three the same and
# checks them against bench/ and parsers.py). A view prints them in titles, so no
# hostile text can come in through them.
METRICS: tuple[str, ...] = (
    "latency",
    "bandwidth",
    "bibandwidth",
    "message_rate",
    "time",
    "time_per_step",
    "flops",
    "throughput",
    "frequency",
    "iops",
    # nbc: OSU's overlap measure of a non-blocking collective (docs/nbc.md)
    "pure_time",
    "overall_time",
    "compute_time",
    "overlap",
)
UNITS: tuple[str, ...] = (
    "us",
    "ns",
    "MB/s",
    "msg/s",
    "GFLOP/s",
    "GOP/s",
    "GHz",
    "IOPS",
    "Mbit/s",
    "%",
)
MAX_LINE_CHARS = 16 << 20  # a record line; a sample of a million values is ~20 MB
MAX_DEPTH = 16  # nesting of objects and lists in a record (ours use 3)
INT_LIMIT = 2**63  # integers must fit the store (SQLite INTEGER is 64-bit)
# Params whose value, when present, is a count of bytes, elements or processes.
COUNT_PARAMS = (
    "bytes",
    "count",
    "nodes",
    "ppn",
    "p",
    "threads",
    "streams",
    "block",
    "lanes",
    "depth",
    "window",
    "iterations",
)


def _value_problem(value: Any, path: str, depth: int) -> str | None:
    """What no record may hold anywhere: deep nesting, integers beyond 64 bits, text
    that is not valid Unicode (lone surrogates) or holds NUL characters."""
    if depth > MAX_DEPTH:
        return f"{path} is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if -INT_LIMIT <= value < INT_LIMIT else f"{path} is an integer beyond 64 bits"
    if isinstance(value, str):
        if "\x00" in value:
            return f"{path} contains a NUL character"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{path} is not valid Unicode (a lone surrogate)"
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            problem = _value_problem(k, f"{path} key", depth + 1) or _value_problem(
                v, f"{path}.{k}", depth + 1
            )
            if problem:
                return problem
    elif isinstance(value, list):
        for i, v in enumerate(value):
            problem = _value_problem(v, f"{path}[{i}]", depth + 1)
            if problem:
                return problem
    return None


def _meta_problem(r: dict[str, Any]) -> str | None:
    if "schema" not in r:
        return "has no 'schema' (expected " + SCHEMA + ")"
    if r["schema"] not in SUPPORTED_SCHEMAS:
        return (
            f"has schema {r['schema']!r} but this hpcscope reads only "
            + ", ".join(SUPPORTED_SCHEMAS)
            + ": rebuild the benchmarks with this hpcscope (`hpcscope build`) "
            "or upgrade hpcscope"
        )
    for key in ("benchmark", "version", "mpi", "ranks", "timer", "options"):
        if key not in r:
            return f"has no {key!r}"
    if not isinstance(r["benchmark"], str) or not r["benchmark"]:
        return "'benchmark' must be a non-empty string"
    if not isinstance(r["version"], (str, int)) or isinstance(r["version"], bool):
        return "'version' must be a string"
    mpi = r["mpi"]
    if mpi is not None:
        if not isinstance(mpi, dict):
            return "'mpi' must be an object {library, version} or null for non-MPI programs"
        for key in ("library", "version"):
            if not isinstance(mpi.get(key), str):
                return f"'mpi' has no string {key!r}"
    ranks = r["ranks"]
    if not isinstance(ranks, list):
        return "'ranks' must be a list of {rank, host, cpus, core, socket, numa}"
    for i, rank in enumerate(ranks):
        problem = _rank_problem(rank)
        if problem:
            return f"ranks[{i}] {problem}"
    timer = r["timer"]
    if not isinstance(timer, dict):
        return "'timer' must be an object {resolution_ns, overhead_ns}"
    for key in ("resolution_ns", "overhead_ns"):
        v = timer.get(key)
        if not _is_number(v) or not math.isfinite(v) or v < 0:
            return f"'timer' needs a finite number {key!r} >= 0"
    for key in ("wtick_s", "wtime_cost_ns"):  # MPI programs only
        v = timer.get(key)
        if key in timer and (not _is_number(v) or not math.isfinite(v) or v < 0):
            return f"'timer' {key!r} must be a finite number >= 0"
    pair = r.get("cpu_pair")  # merged in by the store from the cpu_pair record
    if pair is not None:
        if not isinstance(pair, dict):
            return "'cpu_pair' must be an object {cacheline_ns, round_trips}"
        problem = _cpu_pair_problem(pair)
        if problem:
            return f"'cpu_pair' {problem}"
    cvars = r.get("mpi_t")  # MPI programs: control variables read through MPI_T
    if cvars is not None and (
        not isinstance(cvars, dict)
        or any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in cvars.values())
    ):
        return "'mpi_t' must be an object {name: string or integer} or null"
    transport = r.get("mpi_transport")
    if transport is not None and not isinstance(transport, dict):
        return "'mpi_transport' must be an object or null"
    if not isinstance(r["options"], dict):
        return "'options' must be an object"
    return None


def _rank_problem(rank: Any) -> str | None:
    if not isinstance(rank, dict):
        return "must be an object {rank, host, cpus, core, socket, numa}"
    for key in ("rank", "host", "cpus", "core", "socket", "numa"):
        if key not in rank:
            return f"has no {key!r}"
    if not _is_int(rank["rank"]) or rank["rank"] < 0:
        return "'rank' must be an integer >= 0"
    if not isinstance(rank["host"], str):
        return "'host' must be a string"
    if not isinstance(rank["cpus"], list) or not all(_is_int(c) for c in rank["cpus"]):
        return "'cpus' must be a list of integers (OS CPU indexes)"
    for key in ("core", "socket", "numa"):
        # null: the binary could not tell (no topology information on this system)
        if rank[key] is not None and not _is_int(rank[key]):
            return f"{key!r} must be an integer or null"
    if "lane" in rank and (not isinstance(rank["lane"], str) or not rank["lane"]):
        return "'lane' (the lab's per-process lane) must be a non-empty string when present"
    return None


def _sample_problem(r: dict[str, Any]) -> str | None:
    for key in ("metric", "unit", "params", "values", "warmups"):
        if key not in r:
            return f"has no {key!r}"
    if not isinstance(r["metric"], str) or not r["metric"]:
        return "'metric' must be a non-empty string"
    if r["metric"] not in METRICS:
        return f"'metric' {shorten(repr(r['metric']), 40)} is not one of " + ", ".join(METRICS)
    if not isinstance(r["unit"], str):
        return "'unit' must be a string"
    if r["unit"] not in UNITS:
        return f"'unit' {shorten(repr(r['unit']), 40)} is not one of " + ", ".join(UNITS)
    if not isinstance(r["params"], dict):
        return "'params' must be an object"
    for key in COUNT_PARAMS:
        if key in r["params"] and (not _is_int(r["params"][key]) or r["params"][key] < 0):
            return f"params.{key} must be an integer >= 0, got {r['params'][key]!r}"
    values = r["values"]
    if not isinstance(values, list) or not values:
        return "'values' must be a non-empty list of numbers (raw values, never only a mean)"
    for i, v in enumerate(values):
        if v is None:
            return f"values[{i}] is null: the benchmark measured a non-finite number (NaN or Inf)"
        if not _is_number(v):
            return f"values[{i}] is {v!r}, not a number"
        if not math.isfinite(v):
            return f"values[{i}] is not finite"
        if v < 0:
            return f"values[{i}] is {v}: a time, rate or count is never negative"
    if not _is_int(r["warmups"]) or r["warmups"] < 0:
        return "'warmups' must be an integer >= 0"
    if "benchmark" in r and (not isinstance(r["benchmark"], str) or not r["benchmark"]):
        return "'benchmark' (optional) must be a non-empty string"
    return None


def _summary_problem(r: dict[str, Any]) -> str | None:
    if not isinstance(r.get("metric"), str) or not r["metric"]:
        return "has no string 'metric'"
    return None


def _cpu_pair_problem(r: dict[str, Any]) -> str | None:
    """The cache-line time between a 2-rank launch's CPUs, written after its measurements."""
    v = r.get("cacheline_ns")
    if not _is_number(v) or not math.isfinite(v) or v <= 0:
        return "needs a finite number 'cacheline_ns' > 0"
    if not _is_int(r.get("round_trips")) or r["round_trips"] < 1:
        return "needs an integer 'round_trips' >= 1"
    return None


def _error_problem(r: dict[str, Any]) -> str | None:
    if not isinstance(r.get("message"), str):
        return "has no string 'message'"
    return None


def parse_stream(
    lines: Iterable[str], where: str, *, skip_noise: bool = False, warnings: list[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Yield validated records from the lines a benchmark wrote; line numbers start at 1.

    Blank lines are ignored. With `skip_noise`, lines that do not start with "{" (an MPI
    library's warnings interleaved with our stdout) are skipped and described in
    `warnings`; a line that starts with "{" but is broken is still an error, because it
    is a damaged record, not noise. The stream must not repeat the meta record, and
    sample/summary records must follow it (the store takes the benchmark name from it),
    as must the cpu_pair record (the store keeps it in the meta record);
    error records may come first (a binary can fail before it writes meta).

    Records before a bad line have been yielded already, so a caller that stores as it
    iterates keeps them when RecordError is raised.
    """
    seen_meta = False
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        here = f"{where} line {number}"
        if not line.strip():
            continue
        if skip_noise and not line.lstrip().startswith("{"):
            if warnings is not None:
                warnings.append(f"{here}: skipped non-JSON line: {shorten(line)}")
            continue
        record = parse_line(line, here)
        kind = record["type"]
        if kind == "meta":
            if seen_meta:
                raise _fail(
                    here,
                    "second meta record in one output (one per run of a "
                    "benchmark binary; were two outputs concatenated?)",
                    line,
                )
            seen_meta = True
        elif kind in ("sample", "summary") and not seen_meta and "benchmark" not in record:
            raise _fail(
                here,
                f"{kind} record before the meta record (the benchmark must write meta first)",
                line,
            )
        elif kind == "cpu_pair" and not seen_meta:
            raise _fail(here, "cpu_pair record before the meta record that holds it", line)
        yield record
