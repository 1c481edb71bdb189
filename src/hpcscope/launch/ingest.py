"""Turn one job's output into stored records, one by one as they arrive.

All backends go through here: local runs feed lines while the program still runs, SLURM
collection feeds the files jobs wrote. Each record is committed on its own, so whatever
finished before a crash or Ctrl-C stays in the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hpcscope.results.parsers import PARSERS
from hpcscope.results.records import RecordError, parse_line
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


def ingest_lines(
    store: Store,
    launch_id: int,
    lines: Iterable[str],
    source: str,
    result: IngestResult | None = None,
) -> IngestResult:
    """Validate and store each JSONL line. Non-JSON lines are kept as noise, not records:
    MPI libraries print warnings to stdout and those must not kill a measurement."""
    result = result or IngestResult()
    for number, line in enumerate(lines, 1):
        text = line.strip()
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
        store.add_record(launch_id, record)
        result.records += 1
        if record["type"] == "meta":
            result.meta = record
        elif record["type"] == "error":
            result.errors.append(record["message"])
        elif record["type"] == "summary" and record.get("metric") == "decomposition":
            result.decomposition = record
    return result


def ingest_tool_output(
    store: Store, launch_id: int, tool: str, text: str, result: IngestResult, notes: list[str]
) -> IngestResult:
    """A reference tool's whole stdout (fio, iperf3, likwid-bench) through its parser in
    results.parsers; output the parser does not understand becomes an error record and a
    line in `notes` (the launch's stderr tail)."""
    try:
        records = PARSERS[tool](text)
    except Exception as exc:  # a tool printed something its parser does not know
        notes.append(f"hpcscope: could not parse the tool's output: {exc}")
        records = [{"type": "error", "message": f"unparsable output: {exc}"}]
    for record in records:
        store.add_record(launch_id, record)
        result.records += 1
        if record.get("type") == "error":
            result.errors.append(record.get("message", ""))
    return result
