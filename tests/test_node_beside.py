"""The likwid-bench STREAM and iperf3 references compared with ours measured right before and
after them (suites/node.py _bracket_refs, analysis/node_table.py _compare_with_tool): a VM's
memory bandwidth changes between runs (the demo read 86 GB/s in our sweep and 46 GB/s in
likwid-bench 10 s later: "186 % of likwid-bench")."""

from __future__ import annotations

import json
import shutil
import statistics

import pytest
from test_node_refs import TwoCores

from hpcscope.analysis import highlights, node_table, summary
from hpcscope.suites import node_refs
from hpcscope.suites.base import PlanContext
from hpcscope.suites.node import ALTERNATE, plan

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


def test_plan_alternates_likwid_stream_and_iperf3_runs_with_our_same_point(tmp_path, monkeypatch):
    """ours 1, tool r1, ours 2, tool r2, ours 3, tool r3, ours 4: each tool run alone in
    its job (one repetition), between two of ours at the same point."""
    monkeypatch.setattr(node_refs, "missing", lambda tool: None)
    ctx = PlanContext(topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n)
    jobs = plan(ctx, {"mem": True, "net": True, "threads": [1, 2]}).jobs
    names = [j.name for j in jobs]
    tool_runs = [
        i for i, n in enumerate(names) if n.startswith(("ref/likwid/stream", "ref/iperf3/"))
    ]
    points = {names[i].rsplit("/r", 1)[0] for i in tool_runs}
    assert len(points) == 2 + len([n for n in points if n.startswith("ref/iperf3/")])
    assert len(tool_runs) == ALTERNATE * len(points) and ALTERNATE >= 3
    for ref_name in points:
        at = [i for i in tool_runs if names[i].rsplit("/r", 1)[0] == ref_name]
        assert [names[i] for i in at] == [f"{ref_name}/r{k}" for k in range(1, ALTERNATE + 1)]
        tool = jobs[at[0]].tags["reference"]
        program = "mem" if tool == "likwid-bench" else "net"
        point = ref_name.removeprefix("ref/")
        first = at[0] - 1
        sequence = names[first : at[-1] + 2]
        expected = []
        for k in range(1, ALTERNATE + 1):
            expected += [f"node/{program}/beside-{point}/{k}", f"{ref_name}/r{k}"]
        assert sequence == expected + [f"node/{program}/beside-{point}/{ALTERNATE + 1}"]
        # the tool runs once a job, and its script says so
        assert all("seq 1)" in jobs[i].program[-1] for i in at), jobs[at[0]].program[-1]
        for j in (jobs[first], jobs[at[-1] + 1]):
            assert j.program[0] == str(tmp_path / program)
            assert f"--beside={tool}" in j.program and j.tags["beside"] == tool
        if program == "mem":
            threads = ref_name.rsplit("/t", 1)[1]
            assert {"--tests=stream", f"--threads={threads}"} <= set(jobs[first].program)
        else:
            protocol, block, streams = ref_name.split("/")[2:]
            expected_args = {f"--tests={protocol}", f"--blocks={block}", f"--streams={streams[1:]}"}
            assert expected_args <= set(jobs[first].program)
    # fio, likwid's copy and FP64 jobs stay compared with the sweep, unbracketed
    others = [n for n in names if n.startswith("ref/") and n.rsplit("/r", 1)[0] not in points]
    assert others and not [n for n in names if any(f"beside-{o[4:]}/" in n for o in others)]
    # the sweeps themselves are unchanged and come first
    assert names.index("node/mem") < min(tool_runs) and names.index("node/net") < min(tool_runs)


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
    assert row["measured_beside"] == pytest.approx(47650.0)  # median of ours around the tool
    assert row["eff_vs_reference"] == pytest.approx(47650.0 / 46000.0)  # median to median
    assert row["ours_range"] == [47000.0, 48000.0] and row["reference_range"] == [46000.0] * 2
    assert node_table.beside_drift(row) == pytest.approx(83000.0 / 47650.0)  # medians
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
        "104% of likwid-bench (medians: ours 47.6 GB/s, 47-48 GB/s; likwid-bench 46 GB/s, "
        "46-46 GB/s) (ours read 47.6 GB/s right beside it"
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
    assert "ours read 47.2 GB/s and 83.5 GB/s in its runs around likwid-bench's, in order" in o.text
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
    ours = [25300.0, 26300.0, 24300.0, 24200.0, 29500.0, 32600.0, 27000.0, 25800.0]
    assert row["measured_beside"] == pytest.approx(statistics.median(ours))
    assert row["eff_vs_reference"] == pytest.approx(statistics.median(ours) / 26500.0)
    assert row["ours_compared"] == "beside"


def test_without_beside_runs_the_sweep_is_compared_median_to_median():
    row = _triad_row(
        [_sample("mem", [40000.0, 42000.0, 44000.0], 1), _sample("likwid-bench", [41000.0], 2)]
    )
    assert row["eff_vs_reference"] == pytest.approx(42000.0 / 41000.0)
    assert row["measured_beside"] is None and row["beside_changed"] is None
    assert row["ours_compared"] == "sweep" and row["reference_cause"] is None


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
        ref_name = order[at].rsplit("/r", 1)[0]
        point = ref_name.removeprefix("ref/")
        expected = []
        for k in range(1, ALTERNATE + 1):
            expected += [f"node/{program}/beside-{point}/{k}", f"{ref_name}/r{k}"]
        expected.append(f"node/{program}/beside-{point}/{ALTERNATE + 1}")
        assert order[at - 1 : at - 1 + len(expected)] == expected
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
