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
    launch=None,
    tags=None,
):
    return {
        "benchmark": benchmark,
        "metric": "time",
        "unit": "us",
        "launch_id": launch,
        "tags": {"mpi": mpi, **(tags or {})},
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


def two_launches(alg, center, rel=0.02, **kw):
    return [sample(alg, noisy(center, rel, 50), launch=i, **kw) for i in (1, 2)]


def test_clear_violation():
    rows = verdicts.coll_table(
        two_launches("native", 10.0) + two_launches("lane", 5.0) + two_launches("hier", 10.0)
    )
    assert len(rows) == 1
    row = rows[0]
    assert row["lane_verdict"] == "violation" and row["lane_launches"] == 2
    assert row["lane_speedup"] == pytest.approx(2.0, rel=0.05)
    assert row["lane_p"] < 1e-10 and row["lane_p"] <= row["lane_p_adjusted"] < 0.05
    assert row["hier_verdict"] == "same"
    assert row["verdict"].startswith("violation (lane 2.0")
    assert verdicts.best_algorithm(row) == "lane"
    assert (row["N"], row["n"], row["p"], row["count"]) == (2, 1, 2, 200)
    assert row["native_min"] <= row["native_median"]
    (said,) = verdicts.guideline_observations(rows)
    assert said.numbers["speedup"] == row["lane_speedup"] and "guideline violated" in said.text
    assert "each of 2 launches" in said.text and said.severity == "warning"


def test_one_launch_only_suggests_a_violation():
    rows = verdicts.coll_table(
        [sample("native", noisy(10.0, 0.02)), sample("lane", noisy(5.0, 0.02))]
    )
    row = rows[0]
    assert row["lane_verdict"] == "suggested" and row["lane_launches"] == 1
    assert row["verdict"].startswith("suggested (lane 2.0")
    assert verdicts.best_algorithm(row) == "lane"  # tune still takes the best evidence
    (f,) = verdicts.findings(rows)
    assert f.status == "suggested" and "repeat with --repeat 2" in f.text()
    assert "violated" not in f.text()


def test_launches_that_disagree_are_not_a_violation():
    native = two_launches("native", 10.0)
    lane = [sample("lane", noisy(5.0, 0.02, 50), launch=1)]
    lane += [sample("lane", noisy(10.0, 0.02, 50), launch=2)]  # launch 2: no faster
    row = verdicts.coll_table(native + lane)[0]
    assert row["lane_verdict"] == "same"
    assert any("do not show it" in w for w in row["warnings"])


def test_holm_adjusts_step_down_and_keeps_the_order():
    adjusted = verdicts.holm([0.01, 0.04, 0.03, 0.005])
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> non-decreasing 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert verdicts.holm([]) == []
    assert verdicts.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_a_check_significant_alone_is_not_after_the_correction():
    """One modest effect (p ~ 0.004 alone, 10 % faster) among many checks: alone the run's
    only launch suggests a violation; Holm over 41 checks takes it back."""
    rng = np.random.default_rng(0)
    native, lane = 10 * (1 + 0.1 * rng.standard_normal(20)), 9 * (1 + 0.1 * rng.standard_normal(20))
    alone = [sample("native", native), sample("lane", lane)]
    row = verdicts.coll_table(alone)[0]
    assert 1e-3 < row["lane_p"] < 0.01, row["lane_p"]
    assert row["lane_p_adjusted"] == row["lane_p"] and row["checks_in_run"] == 1
    assert row["lane_verdict"] == "suggested"
    ties = []  # 40 more checks, ties at other counts: the family is 41
    for count in range(1, 41):
        same = noisy(10.0, 0.02, 30)
        ties += [sample("native", same, count=count), sample("lane", same.copy(), count=count)]
    rows = {r["count"]: r for r in verdicts.coll_table(alone + ties)}
    assert rows[200]["checks_in_run"] == 41
    assert rows[200]["lane_p_adjusted"] == pytest.approx(min(1.0, 41 * row["lane_p"]))
    assert rows[200]["lane_verdict"] == "same" and rows[200]["verdict"] == "ok"
    assert verdicts.findings(list(rows.values())) == []


def test_violations_group_into_one_finding_per_collective_and_comparison():
    """One rank per node: MPI_Scan's lane, lane_v and hier are its MPI_Exscan plus a local
    reduction, so twelve violated checks (3 mock-ups x 4 counts) are one finding."""
    samples = []
    for count, factor in ((2, 1.4), (20, 1.8), (200, 1.6), (2000, 1.5)):
        samples += two_launches("native", 10.0, coll="scan", count=count, mpi="mpich")
        for alg in ("lane", "lane_v", "hier"):
            samples += two_launches(alg, 10.0 / factor, coll="scan", count=count, mpi="mpich")
    samples += two_launches("native", 10.0, coll="allreduce", mpi="mpich")
    samples += two_launches("lane", 10.0, coll="allreduce", mpi="mpich")
    rows = verdicts.coll_table(samples)
    assert sum(r.get(f"{a}_verdict") == "violation" for r in rows for a in r["algorithms"]) == 12
    (f,) = verdicts.findings(rows)
    assert (f.mpi, f.collective, f.status) == ("mpich", "scan", "violated")
    assert f.algorithms == ["lane", "lane_v", "hier"]
    assert f.counts == [2, 20, 200, 2000] and f.checked == 4 and f.family == 13
    assert f.low == pytest.approx(1.4, rel=0.05) and f.high == pytest.approx(1.8, rel=0.05)
    text = f.text()
    assert "MPI_Scan takes 1.4" in text and "-1.8" in text
    assert "its own MPI_Exscan plus a local reduction at 4 of 4 counts (2 to 2000" in text
    assert "not a lane comparison" in text and "Holm-corrected" in text
    (said,) = verdicts.guideline_observations(rows)
    assert said.text == text and said.numbers["counts"] == [2, 20, 200, 2000]


def test_with_several_ranks_per_node_each_mock_up_is_its_own_finding():
    samples = two_launches("native", 10.0, ppn=4) + two_launches("lane", 6.0, ppn=4)
    samples += two_launches("hier", 8.0, ppn=4)
    found = verdicts.findings(verdicts.coll_table(samples))
    assert [f.against for f in found] == ["lane", "hier"]
    assert "lanecoll's lane mock-up at 1 of 1 count (200;" in found[0].text()
    assert "rank per node" not in found[0].text()


def test_a_simulation_is_a_deterministic_model_not_a_test():
    sim = {"simulated": True, "platform": "hydra"}
    samples = [
        sample("native", [10.0, 10.0, 10.0], tags=sim, mpi="smpi"),
        sample("lane", [8.0, 8.0, 8.0], tags=sim, mpi="smpi"),
        sample("hier", [9.8, 9.8, 9.8], tags=sim, mpi="smpi"),
    ]
    row = verdicts.coll_table(samples)[0]
    # three identical repetitions: no Mann-Whitney p could be below 0.05 (0.1 at best)
    assert row["deterministic"] and row["checks_in_run"] == 0
    assert row["lane_p"] is None and row["lane_verdict"] == "violation"
    assert row["hier_verdict"] == "same"  # 2 %: under the 5 % threshold
    (f,) = verdicts.findings([row])
    assert f.status == "model" and "deterministic model" in f.text() and "p <=" not in f.text()


def test_simulated_lanes_say_model_instead_of_a_p_value():
    rows = verdicts.lanes_table(
        [
            {
                "benchmark": "lane_pattern",
                "metric": "time_per_step",
                "unit": "us",
                "tags": {"mpi": "smpi", "simulated": True, "platform": "hydra"},
                "values": [v, v * 1.0001, v],
                "params": {"pattern": "lane", "lanes": k, "count": 128000, "nodes": 4, "ppn": 4},
            }
            for k, v in ((1, 41.96), (2, 21.48), (4, 41.0))
        ]
    )
    by_k = {r["k"]: r for r in rows}
    assert all(r["deterministic"] and r["p_vs_1"] is None for r in rows)
    assert by_k[2]["factor"] == pytest.approx(1.95, rel=0.01) and by_k[2]["significant"]
    assert not by_k[4]["significant"]  # 2 % apart in the model


def test_emulation_text_names_what_was_emulated_without_python_values():
    tags = [{"emulated_nodes": True, "node_size": 2, "ranks": 4}, {"mpi": "x"}]
    text = verdicts.emulation_text(tags)
    assert text == (
        "nodes emulated: 2 ranks per node via LANECOLL_NODE_SIZE=2 (4 ranks as 2 nodes) "
        "on one machine"
    )
    assert verdicts.emulation_text([{"mpi": "x"}]) is None
    old = verdicts.emulation_text([{"emulated_nodes": "4x6"}])  # an older store's text
    assert old == "nodes emulated: 4x6 on one machine"
    unnamed = verdicts.emulation_text([{"emulated_nodes": True}])
    for said in (text, old, unnamed):
        assert "True" not in said and "None" not in said


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
    rows = verdicts.coll_table(two_launches("native", 10.0) + two_launches("lane", 5.0))
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
