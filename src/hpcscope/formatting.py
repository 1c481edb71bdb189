"""How numbers and sizes are written for people, in every view (terminal, files, report).

One function per kind of quantity so that the same size never reads two ways.
"""

from __future__ import annotations

import functools
import re
from typing import Any

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
    is how people read them; 1000-99999 as whole numbers ('1048 GFLOP/s', not '1.05e+03')."""
    if unit in ("MB/s", "Mbit/s") and abs(x) >= 1000:
        return f"{x / 1000:.3g} G{unit[1:]}"
    text = f"{x:.3g}" if abs(x) < 1e5 else f"{x:.3e}"
    if 999 < abs(x) < 1e5:  # .3g writes 999.6 and up with an exponent
        text = f"{x:.0f}"
    return f"{text} {unit}".strip()


def markdown_table(head: list[str], rows: list[list[str]], numeric: list[bool]) -> str:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned, every cell
    through `markdown_cell`."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    rule = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    return "\n".join([line(head), rule] + [line(r) for r in rows]) + "\n"


# One encoder per medium a text lands in; every writer of that medium uses it:
#   terminal      plain (markup_safe inside Rich markup)
#   Markdown      markdown_cell (cells, headings, list items)
#   CSV           csv_cell
#   OSU text      one_line (plain on one line: a newline would start a fake data row)
#   HTML          Jinja's autoescape (report/html.py, report/compare.py)
#   JSON          json.dumps (escapes control characters itself)

# Escape sequences a terminal acts on, removed whole so that their parameters do not show
# as text: CSI (ESC [ or 8-bit CSI ... final byte), the strings OSC, DCS, SOS, PM and APC
# (ESC ] P X ^ _ or their 8-bit forms, ended by BEL or ST; unended ones lose only their
# introducer, below), and the two-byte escapes (ESC c, ESC 7, ESC ( B).
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
# C0 and C1 control characters (DEL included): removed.
_CONTROLS = "\x00-\x1f\x7f-\x9f"
# Invisible format characters, the Unicode bidi controls first: embeddings and overrides
# U+202A-U+202E (U+202E shows "abc" as "cba", so "txt.exe" can read "exe.txt"), isolates
# U+2066-U+2069, the marks U+200E, U+200F and U+061C; and the zero-width characters
# U+200B-U+200D, U+2060-U+2065, U+FEFF. Shown as "<U+202E>" rather than removed, so a
# reader sees that a label holds one (the same as `hpcscope show` and `list` always did).
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


@functools.cache
def _controls(keep: str) -> re.Pattern[str]:
    kept = "".join(re.escape(c) for c in keep)
    return re.compile(f"(?![{kept}])[{_CONTROLS}]" if kept else f"[{_CONTROLS}]")


def plain(value: object, keep: str = "\n\t") -> str:
    """Text from the user, the environment, a benchmark or an imported file, safe for a
    terminal: escape sequences (ANSI colours, OSC titles and links) and every other C0
    and C1 control character removed, and the invisible characters that make a label read
    reversed or hide text (bidi controls, zero-width characters) shown as "<U+202E>".
    `keep`: the control characters the caller wants kept (newlines and tabs by default;
    "" for none)."""
    text = _controls(keep).sub("", _SEQUENCE.sub("", str(value)))
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def one_line(value: object) -> str:
    """`plain` on one line: newlines, carriage returns and tabs become spaces (a line of
    OSU text, a cell of an aligned text table)."""
    return plain(_LINE_BREAKS.sub(" ", str(value)), keep="")


_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\v\f\x85\u2028\u2029]")


def markdown_cell(value: object) -> str:
    """Text for a Markdown table cell (or heading, or list item): `one_line`, then HTML
    escaped (& < >: Markdown passes raw HTML through, so "<script>" would run in a viewer
    that renders it) and '|' escaped (it would end the cell)."""
    text = one_line(value)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


# OWASP's rule for CSV injection: a cell a spreadsheet would read as a formula
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text, and a terminal prints without effects: text
    loses its control characters (`plain`, newlines and tabs kept: the CSV quoting holds
    them), then text that starts with = + - @ tab or CR (a formula to a spreadsheet) gets
    a leading apostrophe (OWASP's rule). None is an empty cell; numbers stay numbers."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    text = plain(value)
    if text[:1] in _FORMULA_START:
        return "'" + text
    return text


def markup_safe(value: object) -> str:
    """`plain`, and Rich markup ('[red]', '[/x]') escaped, for text inside console.print."""
    return escape(plain(value))
