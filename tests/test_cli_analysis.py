"""report, compare, tune, show and export from the command line, on a store of synthetic
records (tests/fixtures/report/build_store.py: LCC3-shaped p2p runs of two MPI libraries,
a coll run where the lane bcast wins from 4096 elements on)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hpcscope.analysis import tune

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402


@pytest.fixture
def filled(cli):
    store, (p2p_a, coll, p2p_b) = build_store.build(cli.db)
    store.close()
    return cli, p2p_a, coll, p2p_b


def test_report_writes_one_page_and_prints_its_path(filled):
    cli, p2p_a, coll, p2p_b = filled
    done = cli("report", str(p2p_a), str(coll), str(p2p_b), "-o", "rep")
    assert done.returncode == 0, done.stderr
    page = Path(done.stdout.strip())
    assert page == (cli.folder / "rep" / "index.html").resolve() and page.exists()
    assert "Point-to-point" in page.read_text() and list(page.parent.glob("*.csv"))


def test_compare_marks_the_slower_node_path(filled):
    cli, p2p_a, _, p2p_b = filled
    done = cli("compare", str(p2p_a), str(p2p_b), "--html", "cmp.html")
    assert done.returncode == 0, done.stderr
    assert "slower" in done.stdout and (cli.folder / "cmp.html").exists()


def test_tune_writes_a_table_with_the_winning_lane_bcast(filled):
    cli, p2p_a, coll, _ = filled
    done = cli("tune", str(coll), "-o", "tuning.json")
    assert done.returncode == 0, done.stderr
    table = json.loads((cli.folder / "tuning.json").read_text())
    tune.check_table(table)  # covers 0..2^63-1, no overlap
    lane = [r for r in table["rules"] if r["collective"] == "bcast" and r["algorithm"] == "lane"]
    assert lane and lane[0]["min_bytes"] <= 4096 * 4 <= lane[0]["max_bytes"]
    assert all(r["algorithm"] == "native" for r in table["rules"] if r["collective"] == "allreduce")
    refused = cli("tune", str(p2p_a), "-o", "x.json")  # a p2p run has no coll samples
    assert refused.returncode == 2 and "no coll measurements" in refused.stderr


def test_show_and_export_of_unknown_run_say_how_to_list_runs(filled):
    cli, *_ = filled
    assert cli("show", "2").returncode == 0
    done = cli("export", "99", "--format", "json")
    assert done.returncode == 2 and "99" in done.stderr and "Traceback" not in done.stderr
