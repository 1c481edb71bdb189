"""Views survive one bad run (issue 43, finding 6 and part 3).

A store edited by hand holds one run whose stored JSON does not decode to what hpcscope
writes (launches.meta `[1,2]`, tags `{bad`, values `[NaN]`, the run's mpi `{bad`).
`show`/`export`/`compare` of that run say what is wrong in one line (run, field, how to
delete it), exit 2; `list`, `history`, `report` and `tune` over several runs skip it
with that line and show the others. Never "unexpected error" or a traceback.

The store holds the synthetic runs of tests/fixtures/report/build_store.py: 1 and 3 are
p2p runs, 2 is a coll + node run.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

# (what is broken, SQL that breaks run 3, the field the message names)
FIRST_LAUNCH = "(SELECT min(id) FROM launches WHERE run_id = 3)"
FIRST_SAMPLE = (
    "(SELECT min(s.id) FROM samples s JOIN launches l ON s.launch_id = l.id WHERE l.run_id = 3)"
)
BREAKS = [
    ("meta", f"UPDATE launches SET meta = '[1,2]' WHERE id = {FIRST_LAUNCH}", "meta"),
    ("tags", f"UPDATE launches SET tags = '{{bad' WHERE id = {FIRST_LAUNCH}", "tags"),
    ("values", f"UPDATE samples SET \"values\" = '[NaN]' WHERE id = {FIRST_SAMPLE}", "values"),
]


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("good")
    store, _ = build_store.build(folder / "hpcscope.db")
    store.close()
    return folder / "hpcscope.db"


def _broken(clean_store: Path, tmp_path: Path, sql: str):
    from conftest import Cli

    cli = Cli(tmp_path)
    shutil.copy(clean_store, cli.db)
    with sqlite3.connect(cli.db) as con:
        con.execute(sql)
    con.close()
    return cli


def _one_clean_line(done, *said: str) -> str:
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "unexpected error" not in text, text
    lines = [line for line in done.stderr.splitlines() if "run 3" in line]
    assert len(lines) == 1, done.stderr
    for part in (*said, "DELETE FROM runs WHERE id = 3"):
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name,sql,field", BREAKS, ids=[b[0] for b in BREAKS])
def test_the_bad_run_itself_says_what_is_wrong(clean_store, tmp_path, name, sql, field):
    cli = _broken(clean_store, tmp_path, sql)
    for args in (["show", "3"], ["export", "3", "--format", "json"], ["compare", "1", "3"]):
        done = cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        _one_clean_line(done, "stored field", field, "is malformed")


@pytest.mark.parametrize("name,sql,field", BREAKS, ids=[b[0] for b in BREAKS])
def test_views_over_many_runs_skip_the_bad_one(clean_store, tmp_path, name, sql, field):
    cli = _broken(clean_store, tmp_path, sql)
    done = cli("report", "1", "3", "-o", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    _one_clean_line(done, "skipped run 3", field)
    assert (tmp_path / "report" / "index.html").exists()
    done = cli("history", "--suite", "p2p", "--format", "json")
    assert done.returncode == 0, done.stderr
    _one_clean_line(done, "skipped run 3", field)
    assert '"run_id": 1' in done.stdout and '"run_id": 3' not in done.stdout
    done = cli("tune", "2", "3", "-o", str(tmp_path / "t.json"))
    assert done.returncode == 0, done.stderr
    _one_clean_line(done, "skipped run 3", field)
    done = cli("show", "1")  # the good runs read as before
    assert done.returncode == 0 and "run 1 p2p" in done.stdout, done.stderr


def test_list_skips_a_run_whose_own_columns_do_not_decode(clean_store, tmp_path):
    cli = _broken(clean_store, tmp_path, "UPDATE runs SET mpi = '{bad' WHERE id = 3")
    for fmt in ("table", "json"):
        done = cli("list", "--format", fmt)
        assert done.returncode == 0, done.stderr
        _one_clean_line(done, "skipped run 3", "stored field mpi")
        ids = [line.split()[0] for line in done.stdout.splitlines()[1:]]
        if fmt == "table":
            assert ids == ["1", "2"], done.stdout
        assert "matching shown" not in done.stderr  # the page holds every run: no paging
    done = cli("history")
    assert done.returncode == 0, done.stderr
    _one_clean_line(done, "skipped run 3", "stored field mpi")


def test_the_only_run_of_a_report_being_bad_is_the_error(clean_store, tmp_path):
    cli = _broken(clean_store, tmp_path, BREAKS[0][1])
    done = cli("report", "3", "-o", str(tmp_path / "r"))
    assert done.returncode == 2
    _one_clean_line(done, "stored field launch")
