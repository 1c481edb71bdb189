"""Every output encoded for where it lands (issue 32, part 6): one encoder per medium in
hpcscope.formatting (plain and one_line for terminals and OSU text, markdown_cell for
Markdown, csv_cell for CSV), used by every writer. A run whose label, host, MPI name,
launch name, tags and params hold spreadsheet formulas, HTML, '|', terminal escape
sequences and bidi overrides is exported as CSV, Markdown and OSU text (from the store,
and again after `hpcscope import` of its JSON export) and listed; no output may carry a
formula cell, raw HTML, a broken table row or a character a terminal acts on."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hpcscope.cli.commands import main
from hpcscope.formatting import (
    csv_cell,
    markdown_cell,
    markdown_table,
    markup_safe,
    one_line,
    plain,
)
from hpcscope.results.export import to_json
from hpcscope.results.store import Store

FORMULA = '=HYPERLINK("http://x")'
SCRIPT = "<script>alert(1)</script>"
PIPE = "a|b"
OSC_TITLE = "\x1b]0;title\x07"
CLEAR = "\x1b[2J"
RLO = "\u202e"
C1_CSI = "\x9b31m"  # the 8-bit CSI: red on terminals that honour C1
EVIL = f"{FORMULA}{SCRIPT}{PIPE}{OSC_TITLE}{CLEAR}{RLO}{C1_CSI}\x07\x1bc"

# What no output may hold: C0 controls but \n and \t, DEL, C1, the bidi controls.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def assert_terminal_safe(text: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, (
        f"{found.group()!r} at {found.start()}: {text[max(0, found.start() - 40) : found.end() + 40]!r}"
    )


# -- the encoders -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST-ended
        ("\x9b2Jx", "x"),  # 8-bit CSI
        ("\x9d0;t\x9cx", "x"),  # 8-bit OSC ended by 8-bit ST
        ("a\x1bcb", "ab"),  # ESC c: reset
        ("a\x07b\x00c\x7fd\x85e", "abcde"),  # BEL, NUL, DEL, NEL (C1)
        ("abc\u202edef", "abc<U+202E>def"),  # bidi: shown, not acted on
        ("\u2066x\u2069\u200b\u061c", "<U+2066>x<U+2069><U+200B><U+061C>"),
        ("line\nnext\ttab\r", "line\nnext\ttab"),
        ("\x1b]0;unended", "0;unended"),  # only the introducer goes: nothing acts on the rest
    ],
)
def test_plain_strips_what_a_terminal_acts_on(raw: str, shown: str) -> None:
    assert plain(raw) == shown


def test_plain_keeps_only_the_controls_asked_for() -> None:
    assert plain("a\nb\tc", keep="") == "abc"
    assert plain("a\nb\tc", keep="\n") == "a\nbc"
    assert plain(12.5) == "12.5"
    assert markup_safe("[red]x\u202e") == "\\[red]x<U+202E>"


def test_one_line_turns_breaks_into_spaces() -> None:
    assert one_line("a\nb\r\nc\td\u2028e\x1b[2J") == "a b c d e"


def test_markdown_cell_escapes_html_pipes_and_newlines() -> None:
    cell = markdown_cell(f"{SCRIPT} a|b & c\nd{OSC_TITLE}{RLO}")
    assert cell == "&lt;script&gt;alert(1)&lt;/script&gt; a\\|b &amp; c d&lt;U+202E&gt;"
    assert_terminal_safe(cell)


def test_markdown_table_encodes_every_cell_and_keeps_its_columns() -> None:
    table = markdown_table(["h|1", "h2"], [[PIPE, SCRIPT], ["x\ny", CLEAR]], [False, True])
    lines = table.splitlines()
    assert lines[1] == "|---|---:|"
    for line in lines:
        assert len(_cells(line)) == 2, line
    assert "<" not in table and "a\\|b" in table and "x y" in table
    assert_terminal_safe(table)


@pytest.mark.parametrize(
    ("raw", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\x1b[2J=1", "'=1"),  # stripped first, then guarded: no escape hides a formula
        ("\u202e=1", "<U+202E>=1"),  # shown, so it no longer starts the cell
        ("a=1", "a=1"),
        ("line\nnext", "line\nnext"),  # the CSV quoting holds newlines
        (None, ""),
        (-1.5, -1.5),  # numbers stay numbers
        (3, 3),
    ],
)
def test_csv_cell_guards_formulas_and_strips_controls(raw: Any, cell: Any) -> None:
    assert csv_cell(raw) == cell


def test_the_report_uses_the_same_csv_encoder() -> None:
    from hpcscope.report import html

    assert html._csv_cell is csv_cell


# -- a hostile run, exported --------------------------------------------------------------


def _meta(host: str, mpi: str) -> dict[str, Any]:
    return {
        "type": "meta",
        "schema": "hpcscope.bench/1",
        "benchmark": "p2p",
        "version": "0.1",
        "mpi": {"library": mpi, "version": "4.1.4 " + EVIL},
        "ranks": [
            {"rank": r, "host": host, "cpus": [r], "core": r, "socket": 0, "numa": 0}
            for r in range(2)
        ],
        "timer": {"resolution_ns": 1, "overhead_ns": 20},
        "options": {},
    }


def build_hostile(path: Path) -> tuple[Store, int]:
    """A p2p run of two placements whose texts are all hostile."""
    store = Store(path)
    host, mpi = FORMULA + "-n01" + SCRIPT + RLO, "=" + "openmpi" + OSC_TITLE + PIPE
    run = store.create_run(
        "p2p",
        command=["hpcscope", "run", "p2p", "--label", EVIL],
        options={"repeat": 1},
        host=host,
        label=EVIL,
        environment={"hostname": host, "variables": {"X": EVIL}},
        mpi=[{"flavor": mpi, "version": "4.1.4", "mpicc": "mpicc", "mpirun": "mpirun"}],
    )
    for placement in ("core", "node" + EVIL):
        tags = {"mpi": mpi, "placement": placement, "repeat": 1, "note": EVIL, EVIL: "+1"}
        launch = store.add_launch(run, f"{FORMULA}/{placement}/r1", tags)
        store.add_record(launch, _meta(host, mpi))
        for size in (0, 8, 64):
            for variant in ("plain", EVIL):
                params = {"bytes": size, "variant": variant}
                values = [1.5 + size / 64 + 0.01 * i for i in range(6)]
                store.add_record(
                    launch,
                    {
                        "type": "sample",
                        "benchmark": "p2p",
                        "metric": "latency",
                        "unit": "us",  # one of records.UNITS: a hostile unit is refused (test_bounds)
                        "params": params,
                        "values": values,
                        "warmups": 2,
                    },
                )
        store.finish_launch(launch, "COMPLETED", 0, EVIL)
    store.finish_run(run, "ok")
    return store, run


RUNNER = CliRunner()


def hpcscope(db: Path, *args: str) -> str:
    result = RUNNER.invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, int]]:
    """The hostile run in the store it was made in, and imported from its JSON export
    into another (the way a hostile file reaches a user)."""
    folder = tmp_path_factory.mktemp("hostile")
    store, run = build_hostile(folder / "source.db")
    with store:
        exported = to_json(store, run)
    # JSON carries every text whole, escaped by JSON itself
    assert "\\u001b" in exported and EVIL not in exported
    assert json.loads(exported)["run"]["label"] == EVIL
    (folder / "hostile.json").write_text(exported, encoding="utf-8")
    imported = folder / "imported.db"
    hpcscope(imported, "import", str(folder / "hostile.json"))
    return [(folder / "source.db", run), (imported, 1)]


def _export(stores: list[tuple[Path, int]], fmt: str) -> list[str]:
    return [hpcscope(db, "export", str(run), "--format", fmt) for db, run in stores]


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells, split at the pipes that are not escaped."""
    inner = line.strip()
    assert inner.startswith("|") and inner.endswith("|") and not inner.endswith("\\|"), line
    return re.split(r"(?<!\\)\|", inner[1:-1])


def test_csv_export_has_no_formula_and_no_control(stores) -> None:
    for text in _export(stores, "csv"):
        assert_terminal_safe(text)
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) == 1 + 2 * 3 * 2
        assert all(len(row) == len(rows[0]) for row in rows)
        for row in rows:
            for cell in row:
                if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                    float(cell)  # only a number may start so (none here is negative)
        joined = "\n".join(",".join(r) for r in rows)
        assert "'=HYPERLINK" in joined and "'+1" in joined
        assert SCRIPT in joined  # CSV has no HTML: the text stays, harmless


def test_markdown_export_has_no_html_and_whole_rows(stores) -> None:
    for text in _export(stores, "markdown"):
        assert_terminal_safe(text)
        assert "<script" not in text.lower() and "<" not in text
        assert "&lt;script&gt;" in text and "a\\|b" in text
        lines = text.splitlines()
        assert not [line for line in lines if line.startswith("=")]
        for i, line in enumerate(lines):
            if line.startswith("|---") or line.startswith("|--"):
                width = len(line.strip("|").split("|"))
                j = i - 1
                while j < len(lines) and lines[j].startswith("|"):
                    assert len(_cells(lines[j])) == width, lines[j]
                    j += 1
        headings = [line for line in lines if line.startswith("#")]
        assert headings and all("<" not in h for h in headings)


def test_osu_export_has_only_comments_and_data_rows(stores) -> None:
    for text in _export(stores, "osu"):
        assert_terminal_safe(text)
        for line in text.splitlines():
            if line and not line.startswith("#"):
                size, value = line.split()  # a newline in a name would start a fake row
                int(size), float(value)


def test_json_export_escapes_the_controls_itself(stores) -> None:
    for text in _export(stores, "json"):
        assert_terminal_safe(text)  # JSON writes \u001b, \u0007, \u202e...
        assert json.loads(text)["run"]["label"] == EVIL  # ... and keeps the text whole


def test_list_prints_no_escape_and_no_bidi_control(stores) -> None:
    for db, _ in stores:
        text = hpcscope(db, "list")
        assert_terminal_safe(text)
        assert "HYPERLINK" in text and "<U+202E>" in text  # the label is shown, defanged
