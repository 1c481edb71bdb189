"""The node knobs run for real at small sizes (issue 18 parts 5 and 7): loaded memory latency
at several thread counts, the working-set sweep beside likwid-bench's copy, disk blocks
below 4 KiB with O_DIRECT and many concurrent I/Os, network streams, the likwid FP64
reference running our kernel's instruction mix, and HPL through hpcc with a tiny N."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from test_node_kernels import bindir, run, samples  # noqa: F401  (bench/node built alone)

from hpcscope.analysis.node_table import node_table
from hpcscope.machine import node_facts
from hpcscope.machine.peaks import compute_peaks, parse_cpuinfo
from hpcscope.results import parsers
from hpcscope.suites import node_hpl, node_refs


def _flags() -> set[str]:
    return parse_cpuinfo(node_facts.local().cpuinfo_text).flags


def _tool(job) -> list[dict]:
    p = subprocess.run(
        job.program, capture_output=True, text=True, timeout=job.timeout_s, env=_env(job)
    )
    assert p.returncode == 0, p.stderr[-800:]
    return parsers.PARSERS[job.output](p.stdout)


def _env(job) -> dict:
    import os

    return {**os.environ, **job.env}


def test_mem_latency_at_two_thread_counts_and_wss(bindir):  # noqa: F811
    _, recs = run(
        bindir,
        "mem",
        "--tests=wss,chase,numa",
        "--threads=1,2",
        "--wss-sizes=8K,1000,2M",
        "--chase-threads=1,2",
        "--numa-threads=1,2",
        "--chase-max=64K",
        "--chase-steps=1",
        "--chase-seconds=0.005",
        "--reps=3",
        timeout=90,
    )
    lat = samples(recs, workload="mem_latency")
    assert {s["params"]["threads"] for s in lat} == {1, 2}
    assert all(min(s["values"]) > 0.3 for s in lat)  # ns: no load is faster than a cycle
    wss = samples(recs, workload="mem_wss")
    # 1000 B rounds down to a multiple of 1 KiB x threads, but never to 0
    assert {(s["params"]["threads"], s["params"]["bytes"]) for s in wss} == {
        (1, 8192),
        (1, 1024),
        (1, 2 << 20),
        (2, 8192),
        (2, 2048),
        (2, 2 << 20),
    }
    assert all(100 < max(s["values"]) < 5e6 for s in wss)  # MB/s below 5 TB/s


def test_mem_refuses_too_many_chase_threads(bindir):  # noqa: F811
    p, _ = run(bindir, "mem", "--tests=chase", "--chase-threads=65", ok=False)
    assert p.returncode == 2 and "--chase-threads (1..64)" in p.stderr


@pytest.mark.skipif(shutil.which("likwid-bench") is None, reason="likwid-bench not installed")
def test_wss_and_likwid_copy_share_rows(bindir):  # noqa: F811
    sizes = [16 << 10, 4 << 20]
    _, recs = run(bindir, "mem", "--tests=wss", "--threads=2", "--wss-sizes=16K,4M", "--reps=3")
    ours = [dict(r, benchmark="mem") for r in samples(recs, workload="mem_wss")]
    (job,) = node_refs.likwid_copy_jobs(_flags(), [2], sizes, 1, {})
    ref = [dict(r, benchmark="likwid-bench") for r in _tool(job) if r["type"] == "sample"]
    rows = node_table(ours + ref, [])
    assert {r["block"] for r in rows} == set(sizes)
    assert all(r["reference_tool"] == "likwid-bench" and r["eff_vs_reference"] for r in rows)


@pytest.mark.skipif(shutil.which("likwid-bench") is None, reason="likwid-bench not installed")
def test_likwid_fp64_reference_runs_our_instruction_mix():
    flags = _flags()
    isa = node_refs.fma_isa(flags)
    if isa is None:
        pytest.skip("this CPU has no FMA: likwid's stock peakflops kernel is used")
    peak_job = node_refs.likwid_jobs(flags, [1], 64 << 20, 1, {})[0]
    assert peak_job.name == f"ref/likwid/hpcscope_fma_{isa}/t1"
    (s,) = [r for r in _tool(peak_job) if r["type"] == "sample"]
    assert s["params"]["kernel"] == f"hpcscope_fma_{isa}" and s["params"]["hwthreads"]
    assert (s["params"]["workload"], s["params"]["op"]) == ("cpu_peak", "fma")
    assert 0.1 < s["values"][0] < 2 * 100 * 32 * 6  # GFLOP/s of one core, generously


def test_disk_1k_blocks_and_deep_queue(bindir, tmp_path):  # noqa: F811
    _, recs = run(
        bindir,
        "disk",
        f"--dir={tmp_path}",
        "--blocks=1K",
        "--threads=1,16",
        "--tests=randread",
        "--size=1M",
        "--seconds=0.1",
        "--reps=1",
    )
    iops = samples(recs, metric="iops")
    assert {s["params"]["depth"] for s in iops} == {1, 16}
    assert all(s["params"]["block"] == 1024 for s in iops)
    # 1 KiB is allowed where the device's logical block is 512 B (stated in the records)
    assert all(s["params"].get("logical_block", 512) <= 1024 for s in iops)


def test_disk_refuses_blocks_not_multiple_of_512(bindir, tmp_path):  # noqa: F811
    p, _ = run(bindir, "disk", f"--dir={tmp_path}", "--blocks=1000", "--size=1M", ok=False)
    assert p.returncode == 2 and "multiples of 512" in p.stderr


def test_net_eight_streams_small_blocks(bindir):  # noqa: F811
    _, recs = run(
        bindir,
        "net",
        "--tests=tcp",
        "--streams=1,8",
        "--blocks=1,64K",
        "--seconds=0.1",
        "--reps=1",
    )
    tcp = samples(recs, protocol="tcp", op="stream")
    assert {(s["params"]["streams"], s["params"]["block"]) for s in tcp} == {
        (1, 1),
        (8, 1),
        (1, 65536),
        (8, 65536),
    }
    assert all(max(s["values"]) > 0 for s in tcp)


@pytest.mark.skipif(
    shutil.which("hpcc") is None, reason="hpcc not installed (apt-get install hpcc)"
)
def test_hpl_through_hpcc_tiny_n():
    job = node_hpl.hpl_job(256, 2, {"suite": "node"})
    recs = _tool(job)
    (hpl,) = [r for r in recs if r["type"] == "sample" and r["params"]["workload"] == "hpl"]
    assert hpl["params"]["n"] == 256 and hpl["params"]["grid"] == "1x2"
    assert hpl["params"]["validated"] and hpl["values"][0] > 0
    peaks = compute_peaks(node_facts.local().cpuinfo_text, {"cores": 2})
    rows = node_table([dict(hpl, benchmark="hpcc")], peaks)
    assert rows[0]["peak_name"] == "fp64" and 0 < rows[0]["eff_vs_peak"] < 2


def test_disk_refuses_blocks_below_a_4k_device(bindir, tmp_path):  # noqa: F811
    """A 4Kn device (a loop device with 4096-byte sectors): 1 KiB is refused before any
    write, naming the device's logical block size; 4 KiB runs and is recorded."""
    import os

    if os.geteuid() != 0 or not all(shutil.which(c) for c in ("losetup", "mkfs.ext4")):
        pytest.skip("needs root, losetup and mkfs.ext4 to make a 4096-byte-sector device")
    img, mnt = tmp_path / "4k.img", tmp_path / "mnt"
    img.write_bytes(b"")
    os.truncate(img, 64 << 20)
    mnt.mkdir()
    loop = subprocess.run(
        ["losetup", "-f", "--show", "-b", "4096", str(img)], capture_output=True, text=True
    )
    if loop.returncode != 0:
        pytest.skip(f"cannot set up a loop device here: {loop.stderr.strip()}")
    dev = loop.stdout.strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-b", "4096", dev], check=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        try:
            p, _ = run(bindir, "disk", f"--dir={mnt}", "--blocks=1K", "--size=1M", ok=False)
            assert p.returncode == 2
            assert "logical block size, 4096 B" in p.stderr and list(mnt.iterdir()) in (
                [],
                [mnt / "lost+found"],
            )
            _, recs = run(
                bindir,
                "disk",
                f"--dir={mnt}",
                "--blocks=4K",
                "--size=1M",
                "--tests=seqread",
                "--threads=1",
                "--seconds=0.1",
                "--reps=1",
            )
            assert {s["params"]["logical_block"] for s in samples(recs)} == {4096}
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
