"""Reference-tool parsers on outputs recorded on this machine (tests/fixtures/node/)."""

from pathlib import Path

from hpcscope.analysis.node_table import node_table
from hpcscope.machine.peaks import compute_peaks
from hpcscope.results import parsers
from hpcscope.results.records import validate
from hpcscope.suites import node_refs

FIX = Path(__file__).parent / "fixtures" / "node"


def parsed(name, parser):
    recs = parser((FIX / name).read_text())
    for i, r in enumerate(recs):
        validate(r, f"{name} record {i}")
    assert recs[0]["type"] == "meta"
    return recs


def samples(recs, metric):
    return [r for r in recs if r["type"] == "sample" and r["metric"] == metric]


def test_fio_read_matches_our_disk_params():
    recs = parsed("fio_seqread_1M_psync.json", parsers.parse_fio)
    assert recs[0]["benchmark"] == "fio" and recs[0]["version"] == "fio-3.33"
    (bw,) = samples(recs, "bandwidth")
    assert bw["params"] == {
        "workload": "disk",
        "op": "read",
        "pattern": "seq",
        "block": 1048576,
        "threads": 1,
        "depth": 1,
        "engine": "psync",
        "direct": True,
    }
    assert 1 < bw["values"][0] < 100_000
    assert samples(recs, "iops") and samples(recs, "latency")


def test_fio_write_and_repetitions_merge():
    text = (FIX / "fio_seqwrite_1M_psync.json").read_text()
    recs = parsers.parse_fio("noise line\n" + text + "\n" + text)
    (bw,) = samples(recs, "bandwidth")
    assert bw["params"]["op"] == "write" and len(bw["values"]) == 2


def test_iperf3_tcp_and_udp():
    (tcp,) = samples(parsed("iperf3_tcp_P2_32K.json", parsers.parse_iperf3), "throughput")
    assert tcp["params"] == {
        "workload": "net",
        "protocol": "tcp",
        "op": "stream",
        "block": 32768,
        "streams": 2,
        "host": "127.0.0.1",
    }
    assert 100 < tcp["values"][0] < 1e6
    (udp,) = samples(parsed("iperf3_udp_P1_32K.json", parsers.parse_iperf3), "throughput")
    assert udp["params"]["protocol"] == "udp"


def test_iperf3_error_becomes_error_record():
    recs = parsers.parse_iperf3('{"start": {}, "error": "unable to connect to server"}')
    assert any(r["type"] == "error" and "unable to connect" in r["message"] for r in recs)


def test_likwid_peakflops_and_stream():
    recs = parsed("likwid_peakflops_avx_fma.txt", parsers.parse_likwid_bench)
    assert recs[0]["version"] == "5.2.2"
    (f,) = samples(recs, "flops")
    assert f["params"]["workload"] == "cpu_peak" and f["params"]["precision"] == "fp64"
    assert f["params"]["threads"] == 2 and f["unit"] == "GFLOP/s"
    (s,) = samples(parsed("likwid_stream_avx_fma.txt", parsers.parse_likwid_bench), "bandwidth")
    assert s["params"]["op"] == "triad" and s["params"]["threads"] == 2


def test_likwid_failure_is_an_error_record():
    recs = parsers.parse_likwid_bench("ERROR: Unknown test peakflops_foo\n")
    assert recs[-1]["type"] == "error"


def test_kernel_choice_follows_isa():
    assert node_refs.likwid_kernels({"avx512f", "avx2", "fma"})[0] == "peakflops_avx512_fma"
    assert node_refs.likwid_kernels({"avx2", "fma"}) == ("peakflops_avx_fma", "stream_avx_fma")


def test_node_table_pairs_ours_with_reference_and_peak():
    fio = [
        r
        for r in parsers.parse_fio((FIX / "fio_seqread_1M_psync.json").read_text())
        if r["type"] == "sample"
    ]
    lk = [
        r
        for r in parsers.parse_likwid_bench((FIX / "likwid_peakflops_avx_fma.txt").read_text())
        if r["type"] == "sample"
    ]
    store = [{**r, "benchmark": "fio", "tags": {}, "launch_id": 2} for r in fio]
    store += [{**r, "benchmark": "likwid-bench", "tags": {}, "launch_id": 3} for r in lk]
    store.append(
        {
            "benchmark": "disk",
            "metric": "bandwidth",
            "unit": "MB/s",
            "tags": {},
            "launch_id": 1,
            "values": [900.0, 1000.0],
            "params": {
                "workload": "disk",
                "op": "read",
                "pattern": "seq",
                "block": 1048576,
                "threads": 1,
                "depth": 1,
                "engine": "psync",
                "direct": True,
                "file_bytes": 1 << 30,
            },
        }
    )
    store.append(
        {
            "benchmark": "cpu",
            "metric": "flops",
            "unit": "GFLOP/s",
            "tags": {},
            "launch_id": 1,
            "values": [40.0, 42.0],
            "params": {
                "workload": "cpu_peak",
                "op": "fma",
                "precision": "fp64",
                "isa": "avx2",
                "threads": 2,
                "kernel": "registers",
            },
        }
    )
    peaks = compute_peaks((FIX / "cpuinfo_this_vm_epyc.txt").read_text(), None, {})
    rows = {r["benchmark"]: r for r in node_table(store, peaks)}
    disk = rows["disk"]
    assert disk["reference_tool"] == "fio"
    # median to median, each side's range beside it
    assert disk["eff_vs_reference"] == 950.0 / disk["reference_median"]
    assert disk["ours_range"] == [900.0, 1000.0] and disk["reference_range"]
    # no rated disk bandwidth known: no peak at all (the best is a write a cache may take)
    assert disk["peak_name"] == "disk" and disk["peak"] is None and disk["eff_vs_peak"] is None
    assert "--peak disk=" in disk["peak_formula"]
    cpu = rows["cpu"]
    assert cpu["reference_tool"] == "likwid-bench" and cpu["peak_name"] == "fp64"
    assert abs(cpu["eff_vs_peak"] - 42.0 / cpu["peak"]) < 1e-12
    assert "FLOP/cycle" in cpu["peak_formula"]


class TwoCores:
    """The topology a node plan needs: two cores, one NUMA node, no caches known."""

    cores = [0, 1]
    numa_nodes = [0]

    def last_level_caches(self):
        return []


def test_plan_quick_has_ours_refs_peaks_and_skips(tmp_path):
    from hpcscope.suites.base import PlanContext
    from hpcscope.suites.node import plan

    ctx = PlanContext(topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n)
    p = plan(ctx, {"quick": True, "disk": True, "peaks": {"disk": "2GB/s"}})
    names = [j.name for j in p.jobs]
    assert names == ["node/disk"] + [n for n in names if n.startswith("ref/fio")]
    peaks = {n.data["name"]: n.data for n in p.notes if n.kind == "peak"}
    assert peaks["disk"]["value"] == 2000 and peaks["fp64"]["formula"]
    full = plan(ctx, {})
    assert {"node/cpu", "node/mem", "node/disk", "node/net"} <= {j.name for j in full.jobs}
    assert any(n.kind == "skipped" and "NUMA" in n.text for n in full.notes)
    assert all(j.output in ("jsonl", *parsers.PARSERS) for j in full.jobs)


def test_fio_reference_runs_whole_seconds_and_fails_on_its_own_warnings(tmp_path):
    """Issue 17: fio 3.33 refuses --runtime=0.5 ("time_based requires a runtime") and then
    runs size-bound; the launch used to count as completed."""
    import os
    import subprocess

    (job,) = node_refs.fio_jobs([("read", 4096, 1)], 1 << 20, 0.5, 1, str(tmp_path), {})
    script = job.program[2]
    assert "--runtime=1 " in script and "--runtime=0.5" not in script
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "fio").write_text(
        '#!/bin/sh\necho "fio: time_based requires a runtime" >&2\necho "{}"\n'
    )
    (stub / "fio").chmod(0o755)
    env = dict(os.environ, PATH=f"{stub}:{os.environ['PATH']}")
    done = subprocess.run(job.program, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "time_based requires a runtime" in done.stderr
