"""The export schema and the checks every imported or newly recorded run passes, in one
module below the store: `hpcscope import` (transfer.py) checks whole exports with them,
and the store checks a new run's fields with them (a run is recorded only with what an
export of it could import again), so neither imports the other.

What is checked and in which order: transfer.py's docstring; the schema itself:
export.schema.json (draft 2020-12, shipped in this package and published as
docs/export.schema.json); docs/records.md section 3.
"""

from __future__ import annotations

import functools
import json
import math
import re
from datetime import datetime
from importlib import resources
from typing import Any

from hpcscope.results.records import INT_LIMIT, shorten

EXPORT_SCHEMA = "hpcscope.export/1"
EXPORT_SCHEMA_PREFIX = "hpcscope.export/"
SCHEMA_FILE = "export.schema.json"  # in this package; docs/export.schema.json is a copy
MAX_DEPTH = 32  # nesting of objects and lists in an export (ours use 7)
_SHOW = 200  # characters of a refused value or message shown
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,40}")


# -- parsing ------------------------------------------------------------------------------


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number JSON knows (NaN and Infinity are refused)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{shorten(text, 40)} overflows to infinity")
    return value


def loads(text: str | bytes) -> Any:
    """Strict JSON: NaN, Infinity and numbers beyond float range refused (ValueError);
    nesting deeper than Python's recursion limit is a ValueError too."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None


# -- the checks ---------------------------------------------------------------------------


def _path(parts: Any) -> str:
    """('run', 'notes', 0, 'text') -> 'run.notes[0].text' (JSON path without '$')."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(str(part)):
            out += f".{part}"
        else:
            out += f"[{shorten(repr(part), 40)}]"
    return out.lstrip(".") or "the export"


def _plain_data(doc: Any) -> tuple[str, str] | None:
    """(path, problem) of a value no store may hold, or None. Iterative: the
    depth is counted here, so no nesting makes it recurse."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        value, parts = stack.pop()
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            if not -INT_LIMIT <= value < INT_LIMIT:
                return _path(parts), "an integer beyond 64 bits"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return _path(parts), f"{value} is not a finite number"
        elif isinstance(value, str):
            problem = _text_problem(value)
            if problem:
                return _path(parts), problem
        elif isinstance(value, (dict, list)):
            if len(parts) >= MAX_DEPTH:
                return _path(parts), f"nested more than {MAX_DEPTH} levels deep"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    problem = _text_problem(key)
                    if problem:
                        return _path(parts), f"a key {problem}"
                stack.append((item, (*parts, key)))
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def _date_time(text: object) -> bool:
    """RFC 3339 date-time (JSON Schema's "date-time"), checked here rather than by an
    optional package: ASCII digits, a zone, and a real calendar date and time."""
    if not isinstance(text, str):
        return True  # the format applies to strings; "type" refuses the rest
    if not _DATE_TIME.fullmatch(text):
        return False
    try:
        datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@functools.cache
def schema() -> dict[str, Any]:
    """The export schema (export.schema.json of this package)."""
    text = resources.files("hpcscope.results").joinpath(SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _inlined(node: Any, defs: dict[str, Any], within: tuple[str, ...] = ()) -> Any:
    """`node` with every "$ref" to a definition replaced by that definition, except where
    a definition refers to itself ("value"): the same schema, validated about a third
    faster (jsonschema resolves each "$ref" anew at every value it checks)."""
    if isinstance(node, list):
        return [_inlined(item, defs, within) for item in node]
    if not isinstance(node, dict):
        return node
    rest = {key: _inlined(item, defs, within) for key, item in node.items() if key != "$ref"}
    if "$ref" not in node:
        return rest
    name = str(node["$ref"]).removeprefix("#/$defs/")
    if name not in defs or name in within or _refers_to(defs[name], name, defs):
        return {"$ref": node["$ref"], **rest}
    target = _inlined(defs[name], defs, (*within, name))
    if set(rest) & set(target) - {"description"}:
        return {**rest, "allOf": [target]}
    return {**target, **rest}


def _refers_to(node: Any, name: str, defs: dict[str, Any], seen: frozenset = frozenset()) -> bool:
    """Whether `node` reaches the definition `name` through its "$ref"s."""
    if isinstance(node, list):
        return any(_refers_to(item, name, defs, seen) for item in node)
    if not isinstance(node, dict):
        return False
    ref = str(node.get("$ref", "")).removeprefix("#/$defs/")
    if ref == name:
        return True
    if ref in defs and ref not in seen and _refers_to(defs[ref], name, defs, seen | {ref}):
        return True
    return any(_refers_to(item, name, defs, seen) for item in node.values())


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("date-time")(_date_time)
    full = schema()
    fast = {**_inlined({k: v for k, v in full.items() if k != "$defs"}, full["$defs"])}
    fast["$defs"] = full["$defs"]  # what is still referred to ("value")
    return Draft202012Validator(fast, format_checker=checker)


def _schema_problem(doc: dict[str, Any]) -> tuple[str, str] | None:
    """(path, problem) of the schema's most relevant complaint, or None."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(doc))
    if error is None:
        return None
    value = error.instance
    if error.validator in ("maxLength", "maxItems") and isinstance(value, (str, list)):
        unit = "characters" if isinstance(value, str) else "items"
        problem = f"{len(value)} {unit}, more than the {error.validator_value} allowed"
    elif error.validator == "propertyNames":
        problem = f"a key longer than {error.validator_value.get('maxLength')} characters"
    else:
        problem = error.message
    return _path(error.absolute_path), shorten(problem, _SHOW)


def max_length(key: str) -> int:
    """The import schema's bound on a run field's length (label: 200 characters): the
    one place both import and a new run (`--label`) take it from."""
    return int(schema()["$defs"]["run"]["properties"][key]["maxLength"])


def run_fields_problem(fields: dict[str, Any]) -> str | None:
    """'run.PATH: problem' of run fields (label, host, command, options, environment,
    mpi) that the import schema refuses, or None: a run is recorded only with what an
    export of it could import again. The fields are checked as the run object of an
    export, beside placeholders for the ones not given."""
    run = {"started": "2026-01-01T00:00:00Z", "status": "ok", "suite": "p2p", **fields}
    doc = {"schema": EXPORT_SCHEMA, "run": run, "launches": [], "samples": []}
    found = _plain_data(doc) or _schema_problem(doc)
    return f"{found[0]}: {found[1]}" if found else None
