"""How numbers and sizes are written for people, in every view (terminal, files, report).

One function per kind of quantity so that the same size never reads two ways.
"""

from __future__ import annotations

import functools
import math
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


def size_tick(n: float) -> str:
    """Axis label for a size in bytes, in the units of format_bytes: 0, 512, 16 KiB,
    4 MiB (a size between powers of two with three digits: 1.5 MiB)."""
    n = float(n)
    if n < 1024:
        return sig3(n) if n != int(n) else str(int(n))
    return format_bytes(n)


def format_number(x: float, unit: str = "") -> str:
    """Three significant digits; times scaled (format_quantity: 0.0951 us -> '95.1 ns');
    MB/s and Mbit/s above 1000 as GB/s and Gbit/s since that
    is how people read them; 1000 and up as whole numbers ('1048 GFLOP/s', not '1.05e+03')."""
    # a time or a message rate as people read it: 95.1 ns, 1.94 µs, 2.50 M msg/s
    if unit in _TIME_IN_US or unit in ("msg/s", "messages/s"):
        return format_quantity(x, unit)
    if unit in ("MB/s", "Mbit/s") and abs(x) >= 1000:
        return f"{x / 1000:.3g} G{unit[1:]}"
    text = f"{x:.3g}" if abs(x) < 1e3 else f"{x:.0f}"
    if "e" in text:  # below 0.0001: .3g writes an exponent
        text = sig3(x)
    return f"{text} {unit}".strip()


def sig3(x: float) -> str:
    """Three significant digits, trailing zeros kept (0.110 beside 0.112, 16.0 beside
    15.8), never an exponent: whole numbers from 100 on (12140, not 1.214e+04); below
    0.001 as many decimals as three digits need."""
    if x is None or not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    x = float(f"{x:.3g}")  # round first: 9.996 -> 10.0, not 10.00
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


# Time units people read, from the microseconds the benchmarks record. "µs", not "us".
_TIME_SCALES = (("ns", 1e-3), ("µs", 1.0), ("ms", 1e3), ("s", 1e6))
# Rate units scaled by 1000 (decimal, as OSU and iperf write them).
_RATE_SCALES = {
    "MB/s": (("MB/s", 1.0), ("GB/s", 1e3), ("TB/s", 1e6)),
    "Mbit/s": (("Mbit/s", 1.0), ("Gbit/s", 1e3)),
    "GFLOP/s": (("GFLOP/s", 1.0), ("TFLOP/s", 1e3)),
    "messages/s": (("messages/s", 1.0), ("k messages/s", 1e3), ("M messages/s", 1e6)),
    "msg/s": (("msg/s", 1.0), ("k msg/s", 1e3), ("M msg/s", 1e6)),
}
# Units as stored -> the family they scale in (times stored in us, ns, ms or s).
_TIME_IN_US = {"us": 1.0, "µs": 1.0, "ns": 1e-3, "ms": 1e3, "s": 1e6}


def unit_scale(magnitude: float, unit: str) -> tuple[str, float]:
    """(unit to show, factor to divide a value in `unit` by) for a value of this
    magnitude: a time in us of 0.095 -> ('ns', 0.001); 15800 MB/s -> ('GB/s', 1000).
    Units it does not know stay as they are (factor 1)."""
    m = abs(magnitude) if magnitude is not None and math.isfinite(magnitude) else 0.0
    m = float(f"{m:.3g}")  # as it will be written: 999.6 us is 1.00 ms, not 1000 µs
    if unit in _TIME_IN_US:
        us = m * _TIME_IN_US[unit]
        name, per = _TIME_SCALES[0]
        for cand, cand_per in _TIME_SCALES:
            if us >= cand_per or cand == "ns":
                name, per = cand, cand_per
        return name, per / _TIME_IN_US[unit]
    if unit in _RATE_SCALES:
        name, per = _RATE_SCALES[unit][0]
        for cand, cand_per in _RATE_SCALES[unit]:
            if m >= cand_per:
                name, per = cand, cand_per
        return name, per
    return unit, 1.0


def format_quantity(x: float | None, unit: str) -> str:
    """One value with its unit scaled to its own size: 0.0951 us -> '95.1 ns',
    15800 MB/s -> '15.8 GB/s', 1048576 B -> '1 MiB'."""
    if x is None:
        return "-"
    if unit in ("B", "bytes"):
        return format_bytes(x)
    shown, per = unit_scale(x, unit)
    return f"{sig3(x / per)} {shown}".strip()


def column_unit(values: list[Any], unit: str) -> tuple[str, float]:
    """The one unit a column of values in `unit` is shown in, chosen from the column's
    median magnitude (so a column reads '95.1, 120, 1510' in ns rather than mixing ns
    and µs); one unit up where its largest would read 10000 or more (a latency column
    from 0.2 to 739 µs reads in µs, not up to '739000' ns)."""
    numbers = sorted(
        abs(float(v))
        for v in values
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    )
    nonzero = [v for v in numbers if v > 0]
    if not nonzero:
        return unit_scale(0.0, unit) if unit in _TIME_IN_US else (unit, 1.0)
    middle = nonzero[len(nonzero) // 2]
    shown, per = unit_scale(middle, unit)
    for step in (1e3, 1e6):  # a column over many decades: the next unit up, not '739000 ns'
        if nonzero[-1] / per < 1e4:
            break
        shown, per = unit_scale(middle * step, unit)
    return shown, per


def format_column(values: list[Any], unit: str) -> tuple[str, list[str]]:
    """(unit shown, cells): every number of the column in the unit column_unit chose,
    three significant digits; None as '-', text as it is."""
    shown, per = column_unit(values, unit)
    cells = []
    for v in values:
        if v is None:
            cells.append("-")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            cells.append(sig3(v / per))
        else:
            cells.append(str(v))
    return shown, cells


def format_span(low: float, high: float, unit: str) -> str:
    """A range in one unit, three digits each: 24.0009062-25.9892031 ns -> '24.0-26.0 ns'."""
    shown, per = unit_scale(max(abs(low), abs(high)), unit)
    a, b = sig3(low / per), sig3(high / per)
    return f"{a} {shown}" if a == b else f"{a}-{b} {shown}"


# A table header's unit: "alpha (us)", "beta (MB/s)", "median_us", "from bytes".
_HEADER_UNIT = re.compile(
    r"\((us|µs|ns|ms|MB/s|Mbit/s|GFLOP/s|messages/s|bytes|B)\)|_(us|ns|bytes)$|\b(bytes)$"
    r"|^(block)$"  # a disk or network block: a size in bytes
)


def table_column(header: str, values: list[Any]) -> tuple[str, list[str]] | None:
    """A table column for people: (header, cells) with its unit scaled as format_column
    does and named in the header ('alpha (us)' of 0.09 -> 'alpha (ns)', cells '95.1');
    byte sizes each as format_bytes ('1 MiB', not 1048576). None when the header names
    no unit this knows (the caller formats the cells as plain numbers)."""
    found = _HEADER_UNIT.search(header)
    if found is None:
        return None
    unit = next(g for g in found.groups() if g)
    if unit in ("bytes", "B", "block"):
        cells = [
            format_bytes(v)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            else ("-" if v is None else str(v))
            for v in values
        ]
        return header, cells
    if not any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        # cells written by the caller (text): their unit stays, spelled for people
        if unit != "us" or not found.group(1):
            return None
        return header[: found.start(1)] + "µs" + header[found.end(1) :], [
            "-" if v is None else str(v) for v in values
        ]
    shown, cells = format_column(values, unit)
    if found.group(1):
        header = header[: found.start(1)] + shown + header[found.end(1) :]
    else:
        header = header[: found.start()] + f" ({shown})"
    return header, cells


P_FLOOR = 1e-10


def format_p(p: float | None) -> str:
    """A p-value for people: 'p < 1e-10' rather than 'p = 0' (a test's p is never 0; the
    float underflowed), else two significant digits."""
    if p is None or not math.isfinite(p):
        return "p = -"
    if p < P_FLOOR:
        return "p < 1e-10"
    if p < 1e-3:
        return f"p = {p:.1e}".replace("e-0", "e-")
    return f"p = {p:.2g}"


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
