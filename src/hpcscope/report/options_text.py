"""A run's options as a person reads them, for the report's Methods and `show`:
'quick; interleaved; no precision target; sizes 0:4M', not the stored dict's
'budget_s=None, interleave=True, peaks={}, precision=None, quick=True'.

Options that are off or unset (False, None, empty) are the defaults and are left out;
the one exception is the precision target, whose absence is itself how the numbers were
measured (OSU's fixed counts and --repeat launches: docs/osu.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hpcscope.formatting import one_line

# a flag that is on, in words (others read as their name with spaces)
ON = {
    "interleave": "interleaved",
    "validate": "every received byte validated",
    "no_validate": "no validation pass",
    "exclusive": "exclusive nodes",
    "wait": "waited for the batch jobs",
}
# an option's name as people say it (others: the name with spaces)
NAMES = {
    "budget_s": "budget",
    "osu_dir": "OSU build in",
    "node_size": "ranks per emulated node",
    "peaks": "peaks given",
}


def _value(key: str, value: Any) -> str:
    if key == "precision" and isinstance(value, int | float):
        return f"{value * 100:.3g} %" if value else "0 (fixed counts)"
    if key == "budget_s" and isinstance(value, int | float):
        return f"{value:.3g} s" if value < 1000 else f"{value:.0f} s"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_value(str(k), v)}" for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return ", ".join(_value(key, v) for v in value)
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.3g}"
    return one_line(value)


def options_text(options: Mapping[str, Any] | None) -> str:
    """One line; '' when every option is at its default."""
    if not isinstance(options, Mapping):
        return ""
    parts: list[str] = []
    if options.get("quick") is True:
        parts.append("quick")
    for key, value in options.items():
        if key == "quick":
            continue
        if key == "precision" and value is None:
            parts.append("no precision target")
            continue
        if value is None or value is False or value == "" or value == {} or value == []:
            continue
        name = NAMES.get(key, key.replace("_", " "))
        if value is True:
            parts.append(ON.get(key, name))
        elif key == "precision":
            parts.append(f"precision target {_value(key, value)}")
        else:
            parts.append(f"{name} {_value(key, value)}")
    return "; ".join(parts)
