"""The node suite's knobs (issue 18 part 5): validation from the command line (exit 2, one
line naming the value and the fix, store unchanged), their effect on the plan, the
integer and IOPS peaks, and the node table rows they produce."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from hpcscope.analysis.node_table import node_table
from hpcscope.cli.commands import main as hpcscope
from hpcscope.cli.node_knobs import node_knobs, parse_size
from hpcscope.machine.peaks import compute_peaks
from hpcscope.suites import node_hpl, node_parts, node_refs
from hpcscope.suites.base import PlanContext
from hpcscope.suites.node import plan

ZEN4 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
cpu MHz\t\t: 2596.0
flags\t\t: fpu sse2 avx fma avx2 avx512f avx512bw avx512vl avx512dq
physical id\t: 0
core id\t\t: 0
"""
SKYLAKE_GOLD = (
    ZEN4.replace("AuthenticAMD", "GenuineIntel")
    .replace("25", "6", 1)
    .replace("model\t\t: 17", "model\t\t: 85")
    .replace("AMD EPYC", "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz")
)
HASWELL = (
    ZEN4.replace("AuthenticAMD", "GenuineIntel")
    .replace("25", "6", 1)
    .replace("model\t\t: 17", "model\t\t: 63")
    .replace(" avx512f avx512bw avx512vl avx512dq", "")
    .replace("AMD EPYC", "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz")
)


@pytest.mark.parametrize(
    "args, says",
    [
        (["--disk-blocks", "1500"], "--disk-blocks '1500': not a multiple of 512 B"),
        (["--disk-blocks", "512"], "--disk-blocks '512': outside 1K..100M"),
        (["--disk-blocks", "200M"], "--disk-blocks '200M': outside 1K..100M"),
        (["--disk-blocks", "4X"], "--disk-blocks '4X': not a size"),
        (["--disk-depths", "0"], "--disk-depths '0': give whole numbers 1..128"),
        (["--disk-depths", "129"], "--disk-depths '129': give whole numbers 1..128"),
        (["--net-streams", "9"], "--net-streams '9': give whole numbers 1..8"),
        (["--net-streams", "1,,2"], "an empty item between commas"),
        (["--net-blocks", "0"], "--net-blocks '0': outside 1..64M"),
        (["--mem-blocks", "2G"], "--mem-blocks '2G': outside 1K..1G"),
        (["--latency-threads", "x"], "--latency-threads 'x': give whole numbers 1..64"),
        (["--numa-threads", "65"], "--numa-threads '65': give whole numbers 1..64"),
    ],
)
def test_bad_knob_exits_2_with_one_line(tmp_path, monkeypatch, args, says):
    monkeypatch.setenv("COLUMNS", "300")  # rich wraps at the terminal's width, not ours
    db = tmp_path / "s.db"
    result = CliRunner().invoke(hpcscope, ["--db", str(db), "run", "node", "--dry-run", *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and says in lines[0], lines
    assert not db.exists()


def test_bad_knob_through_the_real_command(tmp_path):
    """The installed entry point, as a user types it (stderr, exit status)."""
    db = tmp_path / "s.db"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "hpcscope.cli",
            "--db",
            str(db),
            "run",
            "node",
            "--dry-run",
            "--disk-depths",
            "1,200",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "error: --disk-depths '200': give whole numbers 1..128, e.g. 1,4"
    )
    assert not db.exists()


def test_knobs_parse_sizes_and_ranges():
    assert parse_size("4K") == 4096 and parse_size("1MiB") == 1 << 20 and parse_size("x") is None
    k = node_knobs({"disk_blocks": "1K,100M,4K", "disk_depths": "128,1", "net_streams": "8"})
    assert k["disk_blocks"] == [1024, 4096, 100 << 20] and k["disk_depths"] == [1, 128]
    assert k["net_streams"] == [8] and k["mem_blocks"] is None


def _ctx(tmp_path, nodes=1):
    class Topo:
        cores = [0, 1]
        numa_nodes = [0]

        def last_level_caches(self):
            return []

    return PlanContext(
        topology=Topo(), mpis=[], binary=lambda n, m: tmp_path / n, nodes_available=nodes
    )


def _args(p, name):
    (job,) = [j for j in p.jobs if j.name == name]
    return dict(a.lstrip("-").split("=", 1) for a in job.program[1:] if "=" in a)


def test_knobs_reach_the_programs_and_references(tmp_path):
    opts = {
        "quick": True,
        "disk": True,
        "net": True,
        "mem": True,
        "disk_blocks": [1024, 100 << 20],
        "disk_depths": [1, 128],
        "net_streams": [1, 8],
        "net_blocks": [1024, 1 << 20],
        "mem_blocks": [1024, 1 << 20],
        "latency_threads": [1, 2],
        "numa_threads": [1, 2],
    }
    p = plan(_ctx(tmp_path), opts)
    disk = _args(p, "node/disk")  # throughput over block sizes
    assert disk["blocks"] == "1024,104857600" and disk["threads"] == "1"
    assert disk["tests"] == "all" and int(disk["size"]) >= 2 * (100 << 20)
    iops = _args(p, "node/disk/iops")  # IOPS and latency over concurrency, small blocks
    assert iops["blocks"] == "1024" and iops["threads"] == "128"  # depth 1: done above
    assert iops["tests"] == "randread,randwrite" and int(iops["size"]) * 128 <= 300 << 20
    net = _args(p, "node/net")
    assert net["streams"] == "1,8" and net["blocks"] == "1024,1048576"
    mem = _args(p, "node/mem")
    assert mem["block-sizes"] == "1024,1048576" and mem["chase-threads"] == "1,2"
    assert mem["numa-threads"] == "1,2"
    names = [j.name for j in p.jobs]
    if not node_refs.missing("fio"):
        assert "ref/fio/randread/1024/t128" in names
    if not node_refs.missing("iperf3"):
        # each iperf3 point runs as ALTERNATE one-run jobs between ours (suites/node.py)
        assert "ref/iperf3/tcp/1048576/P8/r1" in names and "ref/iperf3/udp/1024/P1/r3" in names
    assert "node/net/two-nodes" not in names  # one node: no two-node step


def test_two_node_step_planned_with_two_nodes(tmp_path):
    p = plan(_ctx(tmp_path, nodes=2), {"quick": True, "net": True})
    (job,) = [j for j in p.jobs if j.name == "node/net/two-nodes"]
    assert job.nodes == 2 and job.ranks == 2 and job.mpi is None
    assert "--role=server" in job.program[2] and "--role=client" in job.program[2]


def test_disk_iops_files_shrink_with_depth():
    d = node_parts.disk_iops_plan({"disk_depths": [1, 128]}, False, 2)
    assert d["depths"] == [128] and d["blocks"] == [4096]  # depth 1 at 4K: throughput job
    assert d["size"] * 128 <= 2200 << 20
    assert node_parts.disk_iops_plan({}, True, 2) is None  # --quick: only when asked
    assert node_parts.disk_iops_plan({}, False, 2)["depths"] == [16, 64]


def test_integer_peaks_follow_the_isa():
    zen4 = {p.name: p for p in compute_peaks(ZEN4, {"cores": 2})}
    assert "16 INT64 ops/cycle" in zen4["int64"].formula and zen4["int8"].unit == "GOP/s"
    assert zen4["int8"].value == pytest.approx(2 * 2.596 * 128)
    gold = {p.name: p for p in compute_peaks(SKYLAKE_GOLD, {"cores": 1})}
    assert "64 INT16 ops/cycle" in gold["int16"].formula and "512 bits" in gold["int16"].formula
    hsw = {p.name: p for p in compute_peaks(HASWELL, {"cores": 1})}
    assert hsw["int32"].value == pytest.approx(2.5 * 24)  # 3 ports x 256 bits / 32 bits
    assert hsw["int32"].match == {"precision": "int32"} and hsw["int32"].metric == "throughput"


def test_iops_peak_not_stated_unless_given():
    peaks = compute_peaks(ZEN4, {"cores": 1})
    (iops,) = [p for p in peaks if p.name == "disk_iops"]
    assert iops.value is None and iops.formula.startswith("not stated")
    (given,) = [
        p for p in compute_peaks(ZEN4, {"cores": 1}, {"disk_iops": "500k"}) if p.name == "disk_iops"
    ]
    assert given.value == 500000
    sample = {
        "benchmark": "disk",
        "metric": "iops",
        "unit": "IOPS",
        "params": {
            "workload": "disk",
            "op": "read",
            "pattern": "rand",
            "block": 4096,
            "threads": 1,
        },
        "values": [1000.0, 1200.0],
    }
    (row,) = node_table([sample], peaks)
    assert row["peak"] is None and row["eff_vs_peak"] is None
    assert row["peak_formula"].startswith("not stated")
    (row,) = node_table([sample], [given])
    assert row["eff_vs_peak"] == pytest.approx(1200 / 500000)


def test_hpl_row_has_its_efficiency_against_fp64_peak():
    peaks = compute_peaks(ZEN4, {"cores": 2})
    hpl = {
        "benchmark": "hpcc",
        "metric": "flops",
        "unit": "GFLOP/s",
        "params": {"workload": "hpl", "op": "lu", "precision": "fp64", "threads": 2, "n": 1024},
        "values": [30.0],
    }
    (row,) = node_table([hpl], peaks)
    assert row["benchmark"] == "hpcc" and row["op"] == "lu N=1024"
    assert row["eff_vs_peak"] == pytest.approx(30 / (2 * 2.596 * 16))


def test_hpl_n_rule_memory_or_time_decides():
    n, rule = node_hpl.choose_n(1 << 30, 100.0, 2)
    assert n % node_hpl.NB == 0 and "N_time" in rule and n <= int((1.5 * 2 * 50e9) ** (1 / 3))
    n_mem, _ = node_hpl.choose_n(64 << 20, 1e6, 600)  # tiny memory, huge peak: memory decides
    assert n_mem == int((0.8 * (64 << 20) / 8) ** 0.5) // 128 * 128
    assert node_hpl.grid(6) == (2, 3) and node_hpl.grid(7) == (1, 7)


def test_wss_sizes_round_as_mem_does():
    assert node_refs.wss_bytes(1000, 2) == 2048 and node_refs.wss_bytes(10 << 20, 4) == 10 << 20


def test_quick_caps_stream_arrays_and_says_what_the_rule_wanted():
    from hpcscope.suites.base import SuitePlan
    from hpcscope.suites.node import QUICK_ARRAY_CAP, stream_array_bytes

    plan = SuitePlan()
    assert stream_array_bytes(480 << 20, False, True, plan) == 4 * (480 << 20)  # the rule
    assert stream_array_bytes(32 << 20, True, True, plan) == 128 << 20  # rule under the cap
    assert stream_array_bytes(1 << 20, True, True, plan) == 64 << 20  # STREAM's minimum
    assert not plan.notes
    assert stream_array_bytes(480 << 20, True, True, plan) == QUICK_ARRAY_CAP
    assert plan.notes[0].kind == "warning" and "1.88 GiB" in plan.notes[0].text
