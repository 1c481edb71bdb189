"""compare_runs: two synthetic runs with one clearly faster, one clearly slower and one
unchanged measurement; matching drops `repeat` and the tag that tells the runs apart."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hpcscope.report import compare
from hpcscope.results.store import Store


def _run(store: Store, mpi: str, lat8: float, bw4m: float, lat1k: float, seed: int) -> int:
    rng = np.random.default_rng(seed)
    run = store.create_run("p2p", host="n1", mpi=[{"flavor": mpi, "version": "1"}])
    for rep in (1, 2, 3):
        lid = store.add_launch(
            run, f"{mpi}/core/r{rep}", {"mpi": mpi, "placement": "core", "repeat": rep}
        )
        for metric, unit, size, centre in (
            ("latency", "us", 8, lat8),
            ("bandwidth", "MB/s", 4194304, bw4m),
            ("latency", "us", 1024, lat1k),
        ):
            store.add_record(
                lid,
                {
                    "type": "sample",
                    "benchmark": "p2p",
                    "metric": metric,
                    "unit": unit,
                    "params": {"bytes": size, "test": metric},
                    "values": (centre * (1 + 0.01 * rng.standard_normal(15))).tolist(),
                    "warmups": 5,
                },
            )
        store.finish_launch(lid, "COMPLETED", 0)
    store.finish_run(run, "ok")
    return run


@pytest.fixture()
def rows_and_store(tmp_path: Path):
    store = Store(tmp_path / "c.db")
    # B: latency at 8 B 30 % lower (faster), bandwidth 40 % lower (slower), 1 KiB unchanged.
    a = _run(store, "openmpi", 1.00, 10000.0, 0.50, seed=1)
    b = _run(store, "mpich", 0.70, 6000.0, 0.50, seed=2)
    yield compare.compare_runs(store, a, b), store, a, b
    store.close()


def _row(rows, metric, size):
    return next(r for r in rows if r.metric == metric and r.params["bytes"] == size)


def test_verdicts(rows_and_store):
    rows, *_ = rows_and_store
    assert len(rows) == 3  # matched although the mpi tag differs between runs
    fast, slow, same = (
        _row(rows, "latency", 8),
        _row(rows, "bandwidth", 4194304),
        _row(rows, "latency", 1024),
    )
    assert fast.verdict == "faster" and fast.ratio == pytest.approx(0.7, rel=0.03)
    assert fast.p_value < 1e-6 and fast.n_a == fast.n_b == 45 and fast.launches_a == 3
    assert slow.verdict == "slower" and slow.ratio == pytest.approx(0.6, rel=0.03)
    assert not slow.lower_is_better
    assert same.verdict == "same" and abs(same.ratio - 1) < 0.02
    assert "repeat" not in fast.config and "mpi" not in fast.config
    assert fast.config == {"placement": "core"}


def test_compared_tags_and_geomean_per_metric(rows_and_store):
    rows, store, a, b = rows_and_store
    assert compare.compared_tags(store, a, b) == {"mpi": ("openmpi", "mpich")}
    summaries = {s.metric: s for s in compare.summarize(rows)}
    assert set(summaries) == {"latency", "bandwidth"}  # never mixed
    lat = summaries["latency"]
    assert lat.rows == 2 and lat.faster == 1 and lat.same == 1
    expected = math.sqrt(_row(rows, "latency", 8).ratio * _row(rows, "latency", 1024).ratio)
    assert lat.geomean_ratio == pytest.approx(expected)
    assert "better" in lat.text
    assert "worse" in summaries["bandwidth"].text


def test_unmatched_runs_give_no_rows(tmp_path: Path):
    with Store(tmp_path / "u.db") as store:
        a = _run(store, "openmpi", 1.0, 1.0, 1.0, seed=3)
        b = store.create_run("node")
        lid = store.add_launch(b, "cpu", {"repeat": 1})
        store.add_record(
            lid,
            {
                "type": "sample",
                "benchmark": "cpu",
                "metric": "flops",
                "unit": "GFLOP/s",
                "params": {},
                "values": [1.0],
                "warmups": 0,
            },
        )
        assert compare.compare_runs(store, a, b) == []
        out = io.StringIO()
        compare.print_comparison([], Console(file=out, width=120))
        assert "no measurement is present in both runs" in out.getvalue()


def test_terminal_and_html(rows_and_store, tmp_path: Path):
    rows, *_ = rows_and_store
    out = io.StringIO()
    compare.print_comparison(rows, Console(file=out, width=160, color_system=None))
    text = out.getvalue()
    assert "faster" in text and "slower" in text and "same" in text
    assert "geometric mean of B/A" in text
    page = compare.write_comparison_html(
        rows, tmp_path / "cmp" / "compare.html", title="A <b>vs</b> B"
    )
    html = page.read_text()
    assert "A &lt;b&gt;vs&lt;/b&gt; B" in html and "<script" not in html
    assert html.count('class="good">faster') == 1 and html.count('class="bad">slower') == 1


def test_one_run_against_itself_says_so_and_reads_all_unchanged(rows_and_store):
    _, store, a, _ = rows_and_store
    rows = compare.compare_runs(store, a, a)
    assert compare.same_run_note(a, a).startswith(f"runs A and B are the same run ({a})")
    assert compare.same_run_note(a, a + 1) == ""
    texts = [s.text for s in compare.summarize(rows)]
    assert texts and all("(unchanged); all " in t and t.endswith(" unchanged") for t in texts)
    assert not any("0.0%" in t for t in texts)


def test_terminal_at_100_columns_scales_units_and_cuts_no_configuration(rows_and_store):
    rows, *_ = rows_and_store
    out = io.StringIO()
    compare.print_comparison(rows, Console(file=out, width=100, color_system=None))
    text = out.getvalue()
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "in every row: core" in text  # said once, not on every row
    # the 8 B latency: 1.00 us in A, 0.70 us in B -> one unit, µs, never 'us'
    assert "1.00 µs" in text and "700 ns" not in text and " us" not in text
    assert "4 MiB" in text and "4194304" not in text  # sizes in binary units
    assert "…" not in text and "n A/B" in text  # no column or label cut
    row = _row(rows, "latency", 8)
    assert row.label == "core bytes=8 B"  # tag values bare, sizes in binary units
    assert compare._p(0.0) == "< 1e-10"
