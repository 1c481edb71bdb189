"""No Python value reaches a person (issue 46 part 4): every view of a store (the report
page, `show` of each run, `list`, `history`, `compare`, the Markdown, CSV and OSU exports)
is rendered and searched for None, True, False, {}, [] and nan outside quoted data.

Quoted data is what a person did not ask us to word: the page's <script>, <style>, SVG
and data: URIs, the command line as typed, the environment variables as set; the JSON
export is data and not searched. The store is the report tests' fixture (three runs:
p2p with Open MPI and MPICH, a simulated coll and node run with emulated nodes) plus a
run whose options hold every kind of unset value the CLI stores."""

from __future__ import annotations

import html as html_mod
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hpcscope.cli.commands import main as cli_main
from hpcscope.report.html import write_report

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402

# word-bounded: "Nonexistent", "Falsetto" or "nano" are words, not values
PYTHON_VALUE = re.compile(r"\b(?:None|True|False|nan|NaN)\b|\{\}|\[\]")


def _leaks(text: str) -> list[str]:
    return [
        text[max(0, m.start() - 60) : m.end() + 30].replace("\n", " ")
        for m in PYTHON_VALUE.finditer(text)
    ]


def _page_text(page: str) -> str:
    """What the page says in words: scripts, styles, SVG, the command lines (as typed)
    and data URIs out; then the text between tags, unescaped."""
    for tag in ("script", "style", "svg"):
        page = re.sub(rf"<{tag}\b.*?</{tag}>", " ", page, flags=re.S)
    page = re.sub(r"<dt>command</dt><dd><code>.*?</code>", " ", page, flags=re.S)
    page = re.sub(r"data:[^\"')\s]+", " ", page)
    # attribute values a person reads: titles (the glossary's tooltips) and alt texts
    said = " ".join(re.findall(r'(?:title|alt|aria-label)="([^"]*)"', page))
    return html_mod.unescape(re.sub(r"<[^>]*>", " ", page) + " " + said)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    tmp = tmp_path_factory.mktemp("values")
    store, runs = build_store.build(tmp / "store.db")
    # the options `run` stores: unset values (None), flags off (False), empty peaks
    run = store.create_run(
        "coll",
        command=["hpcscope", "run", "coll", "--quick", "--interleave"],
        options={
            "budget_s": None,
            "interleave": True,
            "precision": None,
            "quick": True,
            "peaks": {},
            "tests": [],
            "no_validate": False,
        },
        host="lcc3-n01",
    )
    # a launch on nodes emulated on one machine, tagged as `run coll --node-size 1` tags
    # it (its placement line in `show` read 'emulated_nodes=True')
    build_store._launch(
        store,
        run,
        "mpich/coll/r1",
        {"mpi": "mpich", "emulated_nodes": True, "node_size": 1, "ranks": 2, "repeat": 1},
        "coll",
        "lcc3-n01",
        [
            {
                "type": "sample",
                "benchmark": "coll",
                "metric": "time",
                "unit": "us",
                "params": {"collective": "bcast", "algorithm": algo, "count": n, "bytes": 4 * n},
                "values": [2.0 + i / 100 + n / 1000 for i in range(10)],
                "warmups": 2,
            }
            for algo in ("native", "lane")
            for n in (1, 64)
        ],
    )
    store.finish_run(run, "ok")
    store.close()
    return tmp / "store.db", [*runs, run]


def _cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli_main, ["--db", str(db), *args], env={"COLUMNS": "100"})
    assert result.exit_code == 0, (args, result.output)
    return result.output


def test_the_report_page_says_no_python_value(store_path, tmp_path):
    from hpcscope.results.store import Store

    db, runs = store_path
    store = Store(db)
    try:
        page = write_report(store, runs, tmp_path / "out").read_text(encoding="utf-8")
    finally:
        store.close()
    assert "interleaved; quick" in _page_text(page) or "quick; interleaved" in _page_text(page)
    assert _leaks(_page_text(page)) == []


@pytest.mark.parametrize(
    "view",
    [
        ("list",),
        ("history",),
        ("compare", "1", "3"),
        ("compare", "1", "1"),
        ("compare", "2", "4"),  # nodes emulated as '4x6' against a flag
    ],
)
def test_cli_views_say_no_python_value(store_path, view):
    db, _ = store_path
    assert _leaks(_cli(db, *view)) == []


def test_show_says_no_python_value(store_path):
    db, runs = store_path
    for run in runs:
        assert _leaks(_cli(db, "show", str(run))) == [], run
    # the emulated launch's placement line in words
    assert "mpich, emulated nodes, node size 1" in _cli(db, "show", str(runs[-1]))


@pytest.mark.parametrize("fmt", ["markdown", "csv", "osu"])
def test_exports_say_no_python_value(store_path, fmt):
    db, runs = store_path
    # OSU text is for p2p runs (the fixture's first and third)
    for run in runs if fmt != "osu" else [runs[0], runs[2]]:
        found = _leaks(_cli(db, "export", str(run), "--format", fmt))
        if fmt == "csv":  # a CSV cell is data: a flag tag is True or False (export.py)
            found = [f for f in found if not re.search(r"\b(?:True|False)\b", f)]
        assert found == [], (run, fmt)


def test_options_read_as_a_person_says_them():
    from hpcscope.report.options_text import options_text

    stored = {  # what `run p2p --quick` stores
        "budget_s": None,
        "cpus": None,
        "placements": None,
        "precision": None,
        "protocol": "hpcscope",
        "quick": True,
        "repeat": None,
        "sizes": "0:4M",
        "validate": False,
    }
    assert options_text(stored) == "quick; no precision target; protocol hpcscope; sizes 0:4M"
    asked = {"interleave": True, "precision": 0.02, "budget_s": 25.0, "peaks": {"disk": 2000.0}}
    assert options_text(asked) == (
        "interleaved; precision target 2 %; budget 25 s; peaks given disk 2000"
    )
    assert options_text(None) == "" and options_text({"quick": False, "peaks": {}}) == ""
