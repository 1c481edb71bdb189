"""The likwid-bench STREAM and iperf3 references compared with ours measured right before and
after them (suites/node.py _bracket_refs, analysis/node_table.py _compare_with_tool): a VM's
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


TCP = {"workload": "net", "protocol": "tcp", "op": "stream", "block": 131072, "streams": 1}


def _sample(benchmark: str, values: list[float], launch: int, point=TRIAD, **params) -> dict:
    """A stored sample of a STREAM triad point (or a TCP one: point=TCP)."""
    metric, unit = ("throughput", "Mbit/s") if point is TCP else ("bandwidth", "MB/s")
    return {
        "benchmark": benchmark,
        "metric": metric,
        "unit": unit,
        "tags": {},
        "launch_id": launch,
        "values": values,
        "params": {**point, **params},
    }


def _triad_row(samples: list[dict]) -> dict:
    (row,) = [r for r in node_table.node_table(samples, []) if r["op"] == "triad"]
    return row


def test_plan_brackets_likwid_stream_and_iperf3_jobs_with_our_same_point(tmp_path, monkeypatch):
    monkeypatch.setattr(node_refs, "missing", lambda tool: None)
    ctx = PlanContext(topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n)
    jobs = plan(ctx, {"mem": True, "net": True, "threads": [1, 2]}).jobs
    names = [j.name for j in jobs]
    bracketed = [
        i for i, n in enumerate(names) if n.startswith(("ref/likwid/stream", "ref/iperf3/"))
    ]
    assert len(bracketed) == 2 + len([n for n in names if n.startswith("ref/iperf3/")])
    for i in bracketed:
        ref, before, after = jobs[i], jobs[i - 1], jobs[i + 1]
        tool = ref.tags["reference"]
        program = "mem" if tool == "likwid-bench" else "net"
        point = ref.name.removeprefix("ref/")
        assert (before.name, after.name) == (
            f"node/{program}/beside-{point}/before",
            f"node/{program}/beside-{point}/after",
        )
        for j in (before, after):
            assert j.program[0] == str(tmp_path / program)
            assert f"--beside={tool}" in j.program and j.tags["beside"] == tool
        if program == "mem":
            threads = ref.name.rsplit("/t", 1)[1]
            assert {"--tests=stream", f"--threads={threads}"} <= set(before.program)
        else:
            protocol, block, streams = ref.name.split("/")[2:]
            expected = {f"--tests={protocol}", f"--blocks={block}", f"--streams={streams[1:]}"}
            assert expected <= set(before.program)
    # fio, likwid's copy and FP64 jobs stay compared with the sweep, unbracketed
    others = [i for i, n in enumerate(names) if n.startswith("ref/") and i not in bracketed]
    assert others and not [n for n in names if any(f"beside-{names[i][4:]}/" in n for i in others)]
    # the sweeps themselves are unchanged and come first
    assert names.index("node/mem") < min(bracketed) and names.index("node/net") < min(bracketed)


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


def test_brackets_whose_values_overlap_are_one_noisy_rate():
    """A demo's TCP brackets: medians 14 % apart, values overlapping, as the sweep's."""
    (row,) = node_table.node_table(
        [
            _sample("net", [28200.0, 23200.0, 22500.0, 25700.0], 1, TCP),
            _sample("net", [25300.0, 26300.0, 24300.0, 24200.0], 2, TCP, beside="iperf3"),
            _sample("iperf3", [23900.0, 29100.0], 3, TCP),
            _sample("net", [29500.0, 32600.0, 27000.0, 25800.0], 4, TCP, beside="iperf3"),
        ],
        [],
    )
    assert row["beside_changed"] is None
    assert row["measured_beside"] == 32600.0
    assert row["eff_vs_reference"] == pytest.approx(32600.0 / 29100.0)


def test_without_beside_runs_the_sweep_is_compared_as_before():
    row = _triad_row([_sample("mem", [40000.0, 42000.0], 1), _sample("likwid-bench", [41000.0], 2)])
    assert row["eff_vs_reference"] == pytest.approx(42000.0 / 41000.0)
    assert row["measured_beside"] is None and row["beside_changed"] is None


@pytest.mark.skipif(
    not (shutil.which("likwid-bench") and shutil.which("iperf3")),
    reason="likwid-bench or iperf3 not installed",
)
def test_run_node_brackets_likwid_stream_and_iperf3_for_real(cli):
    done = cli("run", "node", "--mem", "--net", "--quick", "--threads", "2", "--mem-blocks", "4K")
    assert done.returncode == 0, done.stderr
    exported = json.loads(cli("export", "last", "--format", "json").stdout)
    order = [l["name"] for l in exported["launches"]]
    for prefix, program in (("ref/likwid/stream", "mem"), ("ref/iperf3/tcp", "net")):
        at = next(i for i, n in enumerate(order) if n.startswith(prefix))
        point = order[at].removeprefix("ref/")
        assert order[at - 1 : at + 2] == [
            f"node/{program}/beside-{point}/before",
            order[at],
            f"node/{program}/beside-{point}/after",
        ]
    beside = {
        (s["params"].get("workload"), s["params"].get("op"), s["params"].get("beside"))
        for s in exported["samples"]
        if s["params"].get("beside")
    }
    assert beside == {
        *(("stream", op, "likwid-bench") for op in ("copy", "scale", "add", "triad")),
        ("net", "stream", "iperf3"),
    }
    shown = cli("show", "last").stdout.splitlines()
    # each compared row says either a side-by-side ratio or that the machine changed meanwhile
    for row in ("STREAM triad, 2 threads", "TCP stream, 1 stream"):
        line = next(l for l in shown if l.startswith(row))
        assert "likwid-bench" in line or "iperf3" in line, line
