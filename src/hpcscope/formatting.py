"""How numbers and sizes are written for people, in every view (terminal, files, report).

One function per kind of quantity so that the same size never reads two ways.
"""

from __future__ import annotations

import re

from rich.markup import escape


def format_bytes(n: float) -> str:
    """Sizes in binary units, three significant digits, whole values without decimals:
    8 -> '8 B', 32768 -> '32 KiB', 5999722496 -> '5.59 GiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            if unit == "B" or value == int(value):
                return f"{int(value)} {unit}"
            return f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def size_tick(n: int) -> str:
    """Short axis label for a message size: 0, 512, 16K, 4M."""
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def format_number(x: float, unit: str = "") -> str:
    """Three significant digits; MB/s and Mbit/s above 1000 as GB/s and Gbit/s since that
    is how people read them."""
    if unit in ("MB/s", "Mbit/s") and abs(x) >= 1000:
        return f"{x / 1000:.3g} G{unit[1:]}"
    text = f"{x:.3g}" if abs(x) < 1e5 else f"{x:.3e}"
    return f"{text} {unit}".strip()


def markdown_table(head: list[str], rows: list[list[str]], numeric: list[bool]) -> str:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned, '|' escaped."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    rule = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    return "\n".join([line(head), rule] + [line(r) for r in rows]) + "\n"


_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f]"
)


def plain(value: object) -> str:
    """Text from the user, the environment or a benchmark, safe for a terminal: ANSI/OSC
    escape sequences and other control characters removed (newlines and tabs kept)."""
    return _CONTROL.sub("", str(value))


def markup_safe(value: object) -> str:
    """`plain`, and Rich markup ('[red]', '[/x]') escaped, for text inside console.print."""
    return escape(plain(value))
