"""Turn one job's output into stored records, one by one as they arrive.

All backends go through here: local runs feed lines while the program still runs, SLURM
collection feeds the files jobs wrote. Each record is committed on its own, so whatever
finished before a crash or Ctrl-C stays in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hpcscope.results.parsers import PARSERS, check_osu_sizes, osu_size_range, parse_osu
from hpcscope.results.records import MAX_LINE_CHARS, RecordError, parse_line
from hpcscope.results.store import Store


@dataclass
class IngestResult:
    records: int = 0
    meta: dict | None = None
    errors: list[str] = field(default_factory=list)  # error records written by the program
    problems: list[str] = field(default_factory=list)  # malformed lines (contract broken)
    noise: list[str] = field(default_factory=list)  # non-JSON lines (e.g. MPI warnings)
    # coll's "decomposition" summary: the nodes and ppn lanecoll saw (placement check, sim)
    decomposition: dict | None = None
    # What the output's checks found that does not fail the job (OSU: a size missing);
    # the backend turns each into a `warning` note of the run (show, report).
    warnings: list[str] = field(default_factory=list)
    last_step: str = ""  # the step of the last sample or summary (step_text)


def _ranks(decomposition: dict) -> int:
    """The ranks a decomposition summary covers (p; older records without it: 0)."""
    p = decomposition.get("p")
    return p if isinstance(p, int) else 0


def step_text(record: dict) -> str:
    """The step a sample or summary record measured, in words: 'latency 64 B',
    'allreduce lane count 1000', 'triad threads 2'; '' when its params say nothing."""
    params = record.get("params")
    if not isinstance(params, dict):
        return ""
    words = [
        str(params[key])
        for key in ("test", "collective", "algorithm", "kernel", "op", "pattern")
        if isinstance(params.get(key), (str, int)) and not isinstance(params.get(key), bool)
    ][:2]
    size = params.get("bytes")
    if isinstance(size, int) and not isinstance(size, bool):
        words.append(_bytes_text(size))
    for key in ("count", "threads", "streams", "depth", "block"):
        value = params.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and key != "block":
            words.append(f"{key} {value}")
            break
    return " ".join(words)[:80]


def _bytes_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _not_utf8(program: str, where: str, exc: UnicodeDecodeError, column: int | None = None) -> str:
    """The problem of output that is not UTF-8, naming the program and the first bad
    byte (`column`: where it is on its line, when exc's offset is not that)."""
    bad = bytes(exc.object[exc.start : exc.start + 1]).hex()
    at = exc.start if column is None else column
    return (
        f"{where}: {program or 'the program'} wrote bytes that are not UTF-8 text (0x{bad} "
        f"at column {at + 1}); its output cannot be trusted as records"
    )


# A reference tool's whole output (fio, iperf3 and hpcc write JSON or text of a few kB to
# a few MB): read up to this, the rest drained unread, so a runaway tool costs at most
# this much memory.
MAX_TOOL_OUTPUT_BYTES = 64 << 20


def read_capped(stream: IO[Any], cap: int = MAX_TOOL_OUTPUT_BYTES) -> tuple[Any, int]:
    """(the first `cap` bytes or characters of `stream`, its whole length); the rest is
    read in blocks and dropped (a pipe must be drained or its writer blocks)."""
    data = stream.read(cap)
    size = len(data)
    while True:
        block = stream.read(1 << 20)
        if not block:
            return data, size
        size += len(block)


class _TooLong:
    """Stands for a line longer than MAX_LINE_CHARS, read past but never held whole."""

    def __init__(self, size: int, unit: str):
        self.size, self.unit = size, unit


def bounded_lines(stream: IO[Any], cap: int = MAX_LINE_CHARS) -> Iterator[Any]:
    """The lines of a pipe or file (bytes or text), each read with readline(cap + 1): a
    line longer than `cap` is skipped to its end in blocks of `cap` and yielded as a
    _TooLong, so one 400 MB line costs at most `cap` of memory, not 1.3 GB."""
    while True:
        line = stream.readline(cap + 1)
        if not line:
            return
        if len(line) <= cap or line[-1:] in ("\n", b"\n"):
            yield line
            continue
        size = len(line)
        while True:  # the rest of the long line, dropped as it is read
            rest = stream.readline(cap)
            size += len(rest)
            if not rest or rest[-1:] in ("\n", b"\n"):
                break
        yield _TooLong(size, "bytes" if isinstance(line, bytes) else "characters")


def ingest_lines(
    store: Store,
    launch_id: int,
    lines: Iterable[str] | Iterable[bytes],
    source: str,
    result: IngestResult | None = None,
    *,
    program: str = "",
    on_record: Callable[[dict], None] | None = None,
) -> IngestResult:
    """Validate and store each JSONL line. Non-JSON lines are kept as noise, not records:
    MPI libraries print warnings to stdout and those must not kill a measurement.

    Lines may be bytes (a pipe read as is): a line that is not UTF-8 is a problem that
    names `program` (the job fails, the other lines are still read); a text file that
    is not UTF-8 ends the reading there with the same problem. `on_record` sees every
    stored record as it arrives (the local backend's progress and hang watch).

    A stream (a pipe, a file) is read line by line with a bounded readline: a line over
    MAX_LINE_CHARS (16 MiB) is a problem naming the cap (the job fails), never a whole
    line in memory."""
    result = result or IngestResult()
    if hasattr(lines, "readline"):
        lines = bounded_lines(lines)  # type: ignore[arg-type]
    numbered = enumerate(lines, 1)
    while True:
        try:
            number, line = next(numbered)
        except StopIteration:
            break
        except UnicodeDecodeError as exc:  # a text stream (a SLURM output file)
            result.problems.append(_not_utf8(program, f"{source} output", exc))
            break
        if isinstance(line, _TooLong):
            result.problems.append(
                f"{source} line {number}: {line.size} {line.unit}, longer than the cap of "
                f"{MAX_LINE_CHARS >> 20} MiB a record line may have; the line was skipped"
            )
            continue
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                result.problems.append(_not_utf8(program, f"{source} line {number}", exc))
                continue
        else:
            text = str(line).strip()
        if not text:
            continue
        if not text.startswith("{"):
            result.noise.append(text)
            continue
        where = f"{source} line {number}"
        try:
            record = parse_line(text, where)
        except RecordError as exc:
            result.problems.append(str(exc))
            continue
        if record["type"] == "meta" and result.meta is not None:
            result.problems.append(
                f"{where}: a second meta record (one per program run); the first is kept"
            )
            continue
        if record["type"] == "cpu_pair" and result.meta is None:
            result.problems.append(f"{where}: a cpu_pair record before any meta record")
            continue
        store.add_record(launch_id, record)
        result.records += 1
        if record["type"] == "meta":
            result.meta = record
        elif record["type"] == "error":
            result.errors.append(record["message"])
        elif record["type"] == "summary" and record.get("metric") == "decomposition":
            # coll --npmin writes one per rank count too: the launch's is all its ranks'
            if result.decomposition is None or _ranks(record) >= _ranks(result.decomposition):
                result.decomposition = record
        if record["type"] in ("sample", "summary"):
            result.last_step = step_text(record) or result.last_step
        if on_record is not None:
            on_record(record)
    return result


def ingest_tool_output(
    store: Store,
    launch_id: int,
    tool: str,
    text: str | bytes | IO[Any],
    result: IngestResult,
    notes: list[str],
    *,
    program: str = "",
    argv: Sequence[str] = (),
    suite: str = "",
) -> IngestResult:
    """A reference tool's whole stdout (fio, iperf3, likwid-bench) through its parser in
    results.parsers; output the parser does not understand becomes an error record and a
    line in `notes` (the launch's stderr tail).

    `text` may be bytes (a pipe read as is): output that is not UTF-8 fails the job,
    naming `program`, and what parses of it (undecodable bytes replaced) is kept like
    any failed job's records. OSU's output is checked against the sizes its command line
    (`argv`, -m MIN:MAX) asked for (parsers.check_osu_sizes): a size printed twice or
    outside the range is an error record, a size missing a warning.

    `text` may be the stream itself (a pipe, a file): it is read up to
    MAX_TOOL_OUTPUT_BYTES (read_capped); longer output fails the job, naming the cap."""
    if not isinstance(text, (str, bytes)):
        data, size = read_capped(text, MAX_TOOL_OUTPUT_BYTES)
        text = data if isinstance(data, (str, bytes)) else str(data)
        if size > MAX_TOOL_OUTPUT_BYTES:
            result.problems.append(
                f"{tool} output: {size} bytes, more than the cap of "
                f"{MAX_TOOL_OUTPUT_BYTES >> 20} MiB a tool's output may have; only the "
                "first part was read"
            )
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1)
            where = f"{tool} output line {line}"
            result.problems.append(_not_utf8(program, where, exc, column))
            text = raw.decode("utf-8", errors="replace")
    assert isinstance(text, str)  # read and decoded above
    try:
        if tool == "osu":  # the program and suite tell apart titles two programs print
            records = parse_osu(text, Path(program).name, suite)
        else:
            records = PARSERS[tool](text)
    except Exception as exc:  # a tool printed something its parser does not know
        notes.append(f"hpcscope: could not parse the tool's output: {exc}")
        records = [{"type": "error", "message": f"unparsable output: {exc}"}]
    if tool == "osu":
        errors, warnings = check_osu_sizes(records, osu_size_range(argv), program)
        records += [{"type": "error", "message": e} for e in errors]
        result.warnings += warnings
    for record in records:
        store.add_record(launch_id, record)
        result.records += 1
        if record.get("type") == "error":
            result.errors.append(record.get("message", ""))
    return result
