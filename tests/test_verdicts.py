"""Guideline verdicts and lane tables on synthetic samples with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from hpcscope.analysis import tables, verdicts


def sample(
    alg,
    values,
    *,
    coll="allreduce",
    count=200,
    nodes=2,
    ppn=1,
    mpi="openmpi",
    benchmark="coll",
    regular=True,
):
    return {
        "benchmark": benchmark,
        "metric": "time",
        "unit": "us",
        "tags": {"mpi": mpi},
        "params": {
            "collective": coll,
            "algorithm": alg,
            "count": count,
            "bytes": count * 4,
            "nodes": nodes,
            "ppn": ppn,
            "p": nodes * ppn,
            "regular": regular,
        },
        "values": list(map(float, values)),
        "warmups": 5,
    }


RNG = np.random.default_rng(7)


def noisy(center, rel, n=100):
    return center * (1 + rel * RNG.standard_normal(n))


def test_clear_violation():
    rows = verdicts.coll_table(
        [
            sample("native", noisy(10.0, 0.02)),
            sample("lane", noisy(5.0, 0.02)),
            sample("hier", noisy(10.0, 0.02)),
        ]
    )
    assert len(rows) == 1
    row = rows[0]
    assert row["lane_verdict"] == "violation"
    assert row["lane_speedup"] == pytest.approx(2.0, rel=0.05)
    assert row["lane_p"] < 1e-10
    assert row["hier_verdict"] == "same"
    assert row["verdict"].startswith("violation (lane 2.0")
    assert verdicts.best_algorithm(row) == "lane"
    assert (row["N"], row["n"], row["p"], row["count"]) == (2, 1, 2, 200)
    assert row["native_min"] <= row["native_median"]
    (said,) = verdicts.guideline_observations(rows)
    assert said.numbers["speedup"] == row["lane_speedup"] and "guideline violated" in said.text


def test_tie_is_not_a_violation():
    same = noisy(10.0, 0.02)
    rows = verdicts.coll_table([sample("native", same), sample("lane", same.copy())])
    assert rows[0]["lane_verdict"] == "same"
    assert rows[0]["lane_p"] == pytest.approx(1.0)
    assert rows[0]["verdict"] == "ok"


def test_noisy_tie_is_not_a_violation():
    # 8 % faster median, but the two sets of 10 repetitions interleave: not significant
    native = [10.0, 17.1, 12.5, 9.1, 15.0, 11.2, 8.3, 14.2, 13.3, 9.9]
    lane = [9.2, 15.3, 11.4, 8.6, 13.9, 10.2, 7.5, 16.4, 12.1, 8.8]
    rows = verdicts.coll_table([sample("native", native), sample("lane", lane)])
    assert rows[0]["lane_p"] >= 0.05
    assert rows[0]["lane_verdict"] == "same"


def test_small_but_significant_difference_is_same():
    # significant (p tiny) but only 2 % faster: below the 5 % effect threshold
    rows = verdicts.coll_table(
        [sample("native", noisy(10.0, 0.002)), sample("lane", noisy(9.8, 0.002))]
    )
    assert rows[0]["lane_p"] < 1e-6
    assert rows[0]["lane_verdict"] == "same"


def test_slower_mockup_and_missing_native():
    rows = verdicts.coll_table(
        [
            sample("native", noisy(5.0, 0.01)),
            sample("hier", noisy(8.0, 0.01)),
            sample("lane", noisy(3.0, 0.01), count=2000),
        ]
    )
    by_count = {r["count"]: r for r in rows}
    assert by_count[200]["hier_verdict"] == "slower"
    assert by_count[200]["verdict"] == "ok"
    assert by_count[2000]["verdict"] == "no native"


def test_launches_are_pooled_and_mpis_kept_apart():
    rows = verdicts.coll_table(
        [sample("native", [1, 2]), sample("native", [3, 4]), sample("native", [9], mpi="mpich")]
    )
    assert [(r["mpi"], r["native_reps"]) for r in rows] == [("mpich", 1), ("openmpi", 4)]


def test_renderers_have_paper_columns():
    rows = verdicts.coll_table(
        [sample("native", noisy(10.0, 0.02)), sample("lane", noisy(5.0, 0.02))]
    )
    cols = tables.coll_columns(rows)
    keys = [k for k, _ in cols]
    assert keys[:6] == ["mpi", "collective", "N", "n", "p", "count"]
    assert keys[6:10] == ["native_avg", "native_min", "lane_avg", "lane_min"]
    md = tables.to_markdown(rows, cols)
    assert md.splitlines()[0].startswith("| MPI | collective | N | n | p | count |")
    assert "violation" in md
    csv = tables.to_csv(rows, cols).splitlines()
    assert csv[0].split(",")[:6] == ["mpi", "collective", "N", "n", "p", "count"]
    assert len(csv) == 2
    assert "lane speed-up" in tables.to_text(rows, cols)


def test_lanes_table_factors():
    lp = [
        {
            "benchmark": "lane_pattern",
            "metric": "time_per_step",
            "unit": "us",
            "tags": {"mpi": "openmpi"},
            "values": list(v),
            "params": {
                "pattern": "lane",
                "lanes": k,
                "count": 1000,
                "bytes": 4000,
                "nodes": 2,
                "ppn": 2,
                "p": 4,
            },
        }
        for k, v in ((1, noisy(20.0, 0.01, 30)), (2, noisy(10.0, 0.01, 30)))
    ]
    mc = [
        {
            "benchmark": "multi_coll",
            "metric": "time",
            "unit": "us",
            "tags": {"mpi": "openmpi"},
            "values": list(v),
            "params": {
                "pattern": "multi_alltoall",
                "lanes": k,
                "count": 1000,
                "bytes": 4000,
                "nodes": 2,
                "ppn": 2,
                "p": 4,
            },
        }
        for k, v in ((1, noisy(10.0, 0.01, 30)), (2, noisy(30.0, 0.01, 30)))
    ]
    rows = {(r["benchmark"], r["k"]): r for r in verdicts.lanes_table(lp + mc)}
    assert rows[("lane_pattern", 1)]["factor"] == pytest.approx(1.0)
    assert rows[("lane_pattern", 2)]["factor"] == pytest.approx(2.0, rel=0.03)
    assert rows[("lane_pattern", 2)]["significant"]
    assert rows[("multi_coll", 2)]["factor"] == pytest.approx(3.0, rel=0.03)


def test_figures_are_written(tmp_path):
    from hpcscope.figures.coll import coll_figures

    samples = [
        sample(a, noisy(c, 0.02, 20), count=n, coll=coll)
        for coll in ("allreduce", "bcast")
        for n in (2, 20, 200)
        for a, c in (("native", 10.0), ("lane", 6.0))
    ]
    paths = coll_figures(samples, tmp_path)
    assert sorted(p.suffix for p in paths) == [".png", ".svg"]
    assert all(p.stat().st_size > 1000 for p in paths)
