"""The likwid-bench STREAM reference compared with ours measured right before and after it
(suites/node.py _bracket_stream_refs, analysis/node_table.py _compare_with_tool): a VM's
memory bandwidth changes between runs (the demo read 86 GB/s in our sweep and 46 GB/s in
likwid-bench 10 s later: "186 % of likwid-bench")."""

from __future__ import annotations

import json
import shutil

import pytest
from test_node_refs import TwoCores

from hpcscope.analysis import highlights, node_table, summary
from hpcscope.suites import node_refs
from hpcscope.suites.base import PlanContext
from hpcscope.suites.node import plan

TRIAD = {"workload": "stream", "op": "triad", "threads": 2, "array_bytes": 1 << 27}


def _sample(benchmark: str, values: list[float], launch: int, **params) -> dict:
    return {
        "benchmark": benchmark,
        "metric": "bandwidth",
        "unit": "MB/s",
        "tags": {},
        "launch_id": launch,
        "values": values,
        "params": {**TRIAD, **params},
    }


def _triad_row(samples: list[dict]) -> dict:
    (row,) = [r for r in node_table.node_table(samples, []) if r["op"] == "triad"]
    return row


def test_plan_puts_our_stream_right_before_and_after_every_likwid_stream_job(tmp_path, monkeypatch):
    monkeypatch.setattr(node_refs, "missing", lambda tool: None)
    ctx = PlanContext(topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n)
    jobs = plan(ctx, {"mem": True, "threads": [1, 2]}).jobs
    names = [j.name for j in jobs]
    for t in (1, 2):
        at = next(
            i
            for i, n in enumerate(names)
            if n.startswith("ref/likwid/stream") and n.endswith(f"/t{t}")
        )
        before, after = jobs[at - 1], jobs[at + 1]
        assert (before.name, after.name) == (
            f"node/mem/beside-likwid/t{t}/before",
            f"node/mem/beside-likwid/t{t}/after",
        )
        for j in (before, after):
            assert j.program[0] == str(tmp_path / "mem")
            assert {"--tests=stream", f"--threads={t}", "--beside=likwid-bench"} <= set(j.program)
            assert j.tags["beside"] == "likwid-bench"
    # the sweep itself is unchanged and comes first
    assert names.index("node/mem") < names.index("node/mem/beside-likwid/t1/before")


def test_the_tool_is_compared_with_ours_beside_it_and_the_sweep_shown_apart():
    row = _triad_row(
        [
            _sample("mem", [80000.0, 86000.0], 1),
            _sample("mem", [47000.0, 48000.0], 2, beside="likwid-bench"),
            _sample("likwid-bench", [46000.0], 3, kernel="stream_avx512_fma"),
            _sample("mem", [47500.0, 47800.0], 4, beside="likwid-bench"),
        ]
    )
    assert row["measured_best"] == 86000.0  # the sweep stays what is measured
    assert row["measured_beside"] == 48000.0
    assert row["eff_vs_reference"] == pytest.approx(48000.0 / 46000.0)
    assert node_table.beside_drift(row) == pytest.approx(86000.0 / 48000.0)
    (o,) = highlights.reference_observations([row])
    assert o.severity == "warning" and "right before and after likwid-bench" in o.text
    assert "Side by side, ours reaches 104% of likwid-bench" in o.text
    (line,) = summary.node_lines(
        1,
        {"notes": []},
        [_sample("mem", [80000.0, 86000.0], 1)]
        + [
            _sample("mem", [47000.0, 48000.0], 2, beside="likwid-bench"),
            _sample("likwid-bench", [46000.0], 3),
            _sample("mem", [47500.0, 47800.0], 4, beside="likwid-bench"),
        ],
    )
    assert line.reference_text().startswith(
        "104% of likwid-bench (ours read 48 GB/s right beside it"
    )


def test_no_ratio_when_ours_before_and_after_the_tool_disagree():
    samples = [
        _sample("mem", [48000.0, 48900.0], 1),
        _sample("mem", [47000.0, 47400.0], 2, beside="likwid-bench"),
        _sample("likwid-bench", [49500.0], 3),
        _sample("mem", [82000.0, 85000.0], 4, beside="likwid-bench"),
    ]
    row = _triad_row(samples)
    assert row["eff_vs_reference"] is None and row["measured_beside"] is None
    assert row["beside_changed"] == [47200.0, 83500.0]  # medians, in launch order
    (o,) = highlights.reference_observations([row])
    assert "47.2 GB/s right before likwid-bench and 83.5 GB/s right after it" in o.text
    assert "not compared" in o.text
    (line,) = summary.node_lines(1, {"notes": []}, samples)
    assert line.reference_text().startswith("no ratio to likwid-bench")
    assert any(h.text == o.text for h in highlights.rank([(o, "node")]))


def test_without_beside_runs_the_sweep_is_compared_as_before():
    row = _triad_row([_sample("mem", [40000.0, 42000.0], 1), _sample("likwid-bench", [41000.0], 2)])
    assert row["eff_vs_reference"] == pytest.approx(42000.0 / 41000.0)
    assert row["measured_beside"] is None and row["beside_changed"] is None


@pytest.mark.skipif(shutil.which("likwid-bench") is None, reason="likwid-bench not installed")
def test_run_node_mem_brackets_likwid_for_real(cli):
    done = cli("run", "node", "--mem", "--quick", "--threads", "2", "--mem-blocks", "4K")
    assert done.returncode == 0, done.stderr
    exported = json.loads(cli("export", "last", "--format", "json").stdout)
    order = [l["name"] for l in exported["launches"]]
    at = next(i for i, n in enumerate(order) if n.startswith("ref/likwid/stream"))
    assert order[at - 1 : at + 2] == [
        "node/mem/beside-likwid/t2/before",
        order[at],
        "node/mem/beside-likwid/t2/after",
    ]
    beside = [s for s in exported["samples"] if s["params"].get("beside") == "likwid-bench"]
    assert {s["params"]["op"] for s in beside} == {"copy", "scale", "add", "triad"}
    shown = cli("show", "last")
    triad = next(l for l in shown.stdout.splitlines() if l.startswith("STREAM triad, 2 threads"))
    # either a side-by-side ratio or the statement that the machine changed meanwhile
    assert "likwid-bench" in triad
