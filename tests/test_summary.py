"""The report's first screen: the Summary's numbers (from a store of synthetic records with
the LCC3 numbers) and the ranking and grouping of the highlights (pure functions)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hpcscope.analysis import highlights, summary
from hpcscope.analysis.observations import Observation
from hpcscope.formatting import format_number

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402


@pytest.fixture(scope="module")
def store_runs(tmp_path_factory: pytest.TempPathFactory):
    store, runs = build_store.build(tmp_path_factory.mktemp("summary") / "store.db")
    yield store, runs
    store.close()


def _summary(store, run_id: int) -> summary.Summary:
    return summary.summarize(store.run(run_id), store.samples(run_id), store.launches(run_id))


def test_p2p_lines_give_small_message_latency_and_peak_bandwidth(store_runs):
    store, runs = store_runs
    found = _summary(store, runs[0])
    configs = [p.config for p in found.p2p]
    assert configs[0] == "openmpi smt" or configs[0].startswith("openmpi")
    node = next(p for p in found.p2p if p.config == "openmpi node")
    core = next(p for p in found.p2p if p.config == "openmpi core")
    assert node.latency_bytes == 8 and core.latency_bytes == 8
    assert node.latency_us > 5 * core.latency_us  # LCC3: InfiniBand vs shared memory
    assert core.bandwidth_MBps > 1000 and core.bandwidth_bytes >= 65536
    # LCC3's shared memory peaks at 128 KiB: the largest size is given beside it; over
    # InfiniBand the peak is the largest size, given once
    assert core.largest_bytes == 4 << 20 and core.largest_MBps < core.bandwidth_MBps
    assert node.bandwidth_bytes == 4 << 20 and node.largest_MBps is None
    lines = found.headline_lines()
    assert any(" at 128 KiB (" in line and " at 4 MiB)" in line for line in lines)
    assert all(line.anchor == f"run{runs[0]}-p2p" for line in found.p2p)


def test_coll_line_counts_checks_and_the_finding(store_runs):
    store, runs = store_runs
    found = _summary(store, runs[1])
    assert len(found.coll) == 1
    line = found.coll[0]
    # lane beats native at two bcast counts, in the fixture's only launch: suggested, and
    # the two checks are one finding (MPI_Bcast against its lane mock-up)
    assert line.checks == 16 and line.violations == 0 and line.suggested == 2
    (f,) = line.findings
    assert f.collective == "bcast" and f.counts == [4096, 262144] and f.high > 1.05
    text = line.text()
    assert text.startswith("1 finding in 16 guideline checks (Holm-corrected over the run's 16)")
    assert "suggested by the run's 1 launch (repeat with --repeat 2 to confirm)" in text
    assert "MPI_Bcast takes " in text and "lanecoll's lane mock-up at 2 of " in text


def test_node_lines_carry_peak_and_reference_fractions(store_runs):
    store, runs = store_runs
    found = _summary(store, runs[1])
    assert found.node
    assert any(n.vs_peak is not None for n in found.node)
    assert all(n.value > 0 for n in found.node)


def test_steps_name_skips_and_failed_launches(store_runs):
    store, runs = store_runs
    text = "\n".join(s.text for r in runs for s in _summary(store, r).steps)
    assert "skipped: placement smt" in text
    assert "did not complete" in text


def test_headline_lines_are_plain_text(store_runs):
    store, runs = store_runs
    lines = _summary(store, runs[0]).headline_lines()
    assert any(line.startswith("p2p openmpi core: latency ") for line in lines)


def _obs(kind: str, subject: str = "x", severity: str = "warning", **numbers) -> Observation:
    return Observation(kind, f"{subject}: {kind} {numbers}", numbers, severity, subject)


def test_rank_keeps_at_most_twelve_in_tier_order():
    # twenty dips at twenty different size steps: twenty causes (one cause reads as one line)
    found = [
        (_obs("dip", f"c{i}", "notable", shortfall=0.3, bytes=float(8 << i)), "a")
        for i in range(20)
    ]
    found += [(_obs("unstable", "u", max_spread=0.4, sizes=[1.0]), "b")]
    found += [
        (_obs("guideline", "mpich MPI_Scan N=2 x n=1, count 2", speedup=1.4, mockup="lane"), "c")
    ]
    found += [(_obs("failed", "f"), "d")]
    ranked = highlights.rank(found)
    assert len(ranked) == highlights.MAX_HIGHLIGHTS
    assert [h.tier for h in ranked[:3]] == [0, 1, 2]
    assert [h.anchor for h in ranked[:3]] == ["d", "c", "b"]


def test_noise_is_not_a_highlight():
    found = [
        (_obs("dip", "c", "notable", shortfall=0.15, bytes=8.0), "a"),  # quiet-machine dip
        (_obs("unstable", "u", max_spread=0.08, sizes=[1.0]), "b"),  # 5 % flag only
        (_obs("fit", "f", "info"), "c"),
        (_obs("reference", "r", efficiency=0.95), "d"),
        # a best rate 1 % over a peak at the median measured clock: the clock's own spread
        (_obs("efficiency", "FP32 FMA, 1 thread", efficiency=1.01), "e"),
    ]
    assert highlights.rank(found) == []
    over = [(_obs("efficiency", "BF16", efficiency=3.68), "e")]
    assert [h.tier for h in highlights.rank(over)] == [4]


def test_many_curves_whose_launches_disagree_read_as_one_line():
    def unstable(subject: str, spread: float) -> tuple[Observation, str]:
        numbers = {"max_spread": spread, "max_spread_at": 2048.0, "sizes": [2048.0]}
        return Observation("unstable", "", numbers, "warning", subject), f"#{subject}"

    two = [unstable("openmpi core latency", 0.5), unstable("mpich core latency", 0.9)]
    assert [h.text.split(":")[0] for h in highlights.rank(two)] == [
        "mpich core latency",
        "openmpi core latency",
    ]
    many = two + [unstable(f"openmpi c{i} bandwidth", 0.3 + i / 10) for i in range(4)]
    many.append(unstable("mpich default latency", 0.1))  # the 5 % flag alone: not counted
    (one,) = highlights.rank(many)
    assert one.text.startswith(
        "Launches disagree in 6 curves, their medians up to 90% apart in mpich core latency "
        "at 2 KiB, 60% in openmpi c3 bandwidth at 2 KiB, 50% in openmpi core latency at "
        "2 KiB and 3 more: this machine's launches do not repeat;"
    )
    assert one.anchor == "#mpich core latency" and one.tier == 2


def test_guideline_findings_are_highlights_and_many_read_as_one_more_line():
    def finding(subject: str, factor: float, status: str) -> tuple[Observation, str]:
        numbers = {"speedup": factor, "status": status}
        severity = "warning" if status == "violated" else "notable"
        return Observation("guideline", f"{subject}: {factor}x", numbers, severity, subject), "c"

    one = highlights.rank([finding("mpich MPI_Scan N=2 x n=1", 1.7, "suggested")])
    assert [(h.text, h.tier, h.severity) for h in one] == [
        ("mpich MPI_Scan N=2 x n=1: 1.7x", 1, "notable")
    ]
    many = [finding(f"openmpi MPI_C{i} N=2 x n=2", 1.1 + i / 10, "violated") for i in range(6)]
    ranked = highlights.rank(many)
    assert len(ranked) == highlights.GUIDELINES_ALONE + 1
    assert ranked[0].text.startswith("openmpi MPI_C5")
    rest = next(h for h in ranked if h.text.startswith("3 more guideline findings"))
    assert "openmpi MPI_C2 N=2 x n=2 (1.30x, violated)" in rest.text


def test_dips_of_one_curve_are_grouped_around_the_deepest():
    dips = [
        Observation(
            "dip",
            f"openmpi core: bandwidth drops at {b} B.",
            {"bytes": float(b), "shortfall": s},
            "notable",
            "openmpi core",
        )
        for b, s in ((128, 0.18), (16384, 0.33), (2 << 20, 0.09))
    ]
    other = Observation("plateau", "p", {}, "info", "openmpi core")
    grouped = highlights.group_dips([dips[0], other, dips[1], dips[2]])
    assert len(grouped) == 2 and grouped[1] is other
    assert grouped[0].text.startswith("openmpi core: bandwidth drops at 16384 B; 2 more dips")
    assert "128 B (-18%)" in grouped[0].text and grouped[0].numbers["count"] == 3


def _node_sample(benchmark: str, metric: str, unit: str, value: float, **params) -> dict:
    return {
        "benchmark": benchmark,
        "metric": metric,
        "unit": unit,
        "params": dict(params, threads=params.get("threads", 1)),
        "values": [value, value * 0.99],
        "tags": {"suite": "node"},
    }


def test_a_node_without_reference_tools_still_hears_its_memory_disk_and_network():
    """Where likwid-bench, fio and iperf3 are not installed (the 16-core Ubuntu host), the
    summary kept only the FLOP/s lines: STREAM triad, disk and TCP had no yardstick."""
    samples = [
        _node_sample("mem", "bandwidth", "MB/s", 82000, workload="stream", op=op, threads=16)
        for op in ("copy", "scale", "add", "triad")
    ] + [
        _node_sample(
            "mem",
            "bandwidth",
            "MB/s",
            9000,
            workload="mem_block",
            op="read_write",
            pattern="seq",
            block=4096,
            threads=16,
        ),
        _node_sample(
            "disk",
            "bandwidth",
            "MB/s",
            2800,
            workload="disk",
            op="write",
            pattern="seq",
            block=1048576,
        ),
        _node_sample(
            "disk",
            "bandwidth",
            "MB/s",
            1900,
            workload="disk",
            op="read",
            pattern="seq",
            block=1048576,
        ),
        _node_sample(
            "net",
            "throughput",
            "Mbit/s",
            34000,
            workload="net",
            op="stream",
            protocol="tcp",
            streams=1,
            block=131072,
        ),
        _node_sample(
            "mem", "latency", "ns", 150, workload="mem_latency", op="pointer_chase", bytes=2**29
        ),
    ]
    names = [n.name for n in summary.node_lines(1, {"notes": []}, samples)]
    assert "STREAM triad, 16 threads" in names
    assert "disk sequential read, 1 thread, 1 MiB blocks" in names
    assert "disk sequential write, 1 thread, 1 MiB blocks" in names
    assert "TCP stream, 1 stream, 128 KiB blocks" in names
    assert not any(n.startswith(("STREAM copy", "memory seq")) for n in names)  # not quoted


def test_headline_numbers_of_a_thousand_and_more_are_whole_numbers():
    # the demo's BF16 line read "1.05e+03 GFLOP/s"
    assert format_number(1048.3, "GFLOP/s") == "1048 GFLOP/s"
    assert format_number(999.6, "GFLOP/s") == "1000 GFLOP/s"
    assert format_number(12345.6, "IOPS") == "12346 IOPS"
    assert format_number(44402, "MB/s") == "44.4 GB/s"
    assert format_number(0.1234, "us") == "123 ns"  # times scaled, never 'us'
    assert format_number(1e-5, "s") == "10.0 µs"
    assert format_number(2.5e6, "msg/s") == "2.50 M msg/s"  # no exponent
