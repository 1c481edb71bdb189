"""Issue 47: each node number named for what it measured. Two modes instead of a best
value (analysis/modes.py), the memory level of a working set (analysis/memory_level.py),
ratios to a reference tool median to median with a cause (node_table), the disk facts
under --disk-dir and the cache they reveal (machine/disk_facts.py, node_table._disk_cache),
and the disk files sized against RAM (suites/node_parts.outgrow_ram)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hpcscope.analysis import highlights, memory_level, modes, node_table, summary
from hpcscope.machine import disk_facts
from hpcscope.suites import node_parts

FIX = Path(__file__).parent / "fixtures"
THIS_VM = (FIX / "topo" / "this_vm.xml").read_text()  # L2 512 KiB per CPU, L3 32 MiB for 2
TRIAD = {"workload": "stream", "op": "triad", "threads": 2, "array_bytes": 1 << 29}


def _sample(benchmark, values, launch=1, metric="bandwidth", unit="MB/s", **params):
    return {
        "benchmark": benchmark,
        "metric": metric,
        "unit": unit,
        "tags": {},
        "launch_id": launch,
        "values": values,
        "params": params,
    }


# ---------------------------------------------------------------- modes


def test_the_demos_bimodal_triad_is_two_modes_with_their_shares():
    rng = random.Random(1)
    values = [rng.uniform(45e3, 58e3) for _ in range(30)] + [
        rng.uniform(83e3, 88e3) for _ in range(20)
    ]
    low, high = modes.two_modes(values)
    assert (low.count, high.count) == (30, 20) and high.share == pytest.approx(0.4)
    assert 45e3 <= low.low and low.high <= 58e3 and 83e3 <= high.low
    text = modes.text([low, high], "MB/s")
    assert text.startswith("two modes: ") and "(60% of 50, " in text and "(40% of 50, " in text


def test_one_noisy_mode_is_not_two():
    rng = random.Random(7)
    flagged = sum(
        modes.two_modes([rng.gauss(100, 5) for _ in range(50)]) is not None for _ in range(200)
    )
    assert flagged <= 4  # the rule's false alarms on normal noise: at most 2 %
    assert modes.two_modes([100.0] * 10 + [100.1] * 10) is None  # a step below MIN_GAP
    assert modes.two_modes([1.0, 1.0, 9.0, 9.0]) is None  # too few values
    assert modes.two_modes([10.0] * 9 + [30.0]) is None  # one outlier is not a mode (20 %)


def test_a_bimodal_row_is_quoted_by_its_modes_not_its_best():
    values = [47e3, 48e3, 50e3, 49e3, 46e3, 85e3, 86e3, 84e3, 87e3]
    (row,) = node_table.node_table([_sample("mem", values, **TRIAD)], [])
    assert row["modes"] and node_table.quoted(row) == row["measured_median"]
    assert node_table.quoted_text(row).startswith("two modes: 48 GB/s (56% of 9, 46-50 GB/s)")
    (line,) = summary.node_lines(1, {"notes": []}, [_sample("mem", values, **TRIAD)])
    assert line.value_text().startswith("two modes: 48 GB/s")
    assert "87" not in line.value_text().split("and")[0]  # no best value quoted


# ---------------------------------------------------------------- reference ratios


def test_ours_above_the_tool_beyond_both_ranges_is_a_discrepancy_not_a_success():
    samples = [_sample("mem", [60e3, 61e3, 62e3], 1, **TRIAD)]
    samples += [
        _sample("likwid-bench", [49.2e3], 2, **TRIAD),
        _sample("likwid-bench", [54.6e3], 3, **TRIAD),
    ]
    (row,) = node_table.node_table(samples, [])
    assert row["eff_vs_reference"] == pytest.approx(61e3 / 51.9e3)
    assert row["discrepancy"] is True
    assert "a discrepancy, not a result" in row["reference_cause"]
    (o,) = highlights.reference_observations([row])
    assert o.severity == "warning" and "beyond both ranges" in o.text and "reaches" not in o.text
    (h,) = highlights.rank([(o, "node")])
    assert h.severity == "warning"


def test_a_ratio_outside_the_band_names_bimodal_ours_or_says_not_explained():
    bimodal = [45e3, 46e3, 47e3, 48e3, 85e3, 86e3, 87e3, 88e3, 86e3]
    (row,) = node_table.node_table(
        [_sample("mem", bimodal, **TRIAD), _sample("likwid-bench", [52e3, 53e3, 90e3], 2, **TRIAD)],
        [],
    )
    assert not REF_AGREES(row["eff_vs_reference"]) and not row["discrepancy"]
    assert row["reference_cause"].startswith("ours bimodal, two modes: ")
    (row,) = node_table.node_table(
        [
            _sample("mem", [30e3, 41e3, 42e3], **TRIAD),  # ranges overlap
            _sample("likwid-bench", [35e3, 31e3, 36e3], 2, **TRIAD),
        ],
        [],
    )
    assert row["reference_cause"].startswith("not explained: ours ran in the sweep")
    assert "benchmarks/node_targets" in row["reference_cause"]
    (row,) = node_table.node_table(
        [_sample("mem", [40e3, 41e3], **TRIAD), _sample("likwid-bench", [40e3, 42e3], 2, **TRIAD)],
        [],
    )
    assert row["reference_cause"] is None  # inside 0.9-1.1: nothing to explain


def REF_AGREES(eff: float) -> bool:
    low, high = node_table.REFERENCE_AGREES
    return low <= eff <= high


def test_a_different_working_set_is_named_as_the_cause():
    ours = _sample("mem", [40e3, 41e3], **{**TRIAD, "array_bytes": 1 << 27})
    tool = _sample("likwid-bench", [60e3, 61e3], 2, **TRIAD)
    (row,) = node_table.node_table([ours, tool], [])
    assert "a different working set: ours 128 MiB, likwid-bench 512 MiB" in row["reference_cause"]


# ---------------------------------------------------------------- memory levels


def test_memory_levels_account_for_threads_sharing_a_cache():
    levels = memory_level.levels_of(THIS_VM)
    # the "Memory copy, 2 threads, 1 MiB working set": 512 KiB per thread, L2
    assert memory_level.level("mem_wss", 1 << 20, 2, levels) == "L2"
    assert memory_level.level("mem_wss", 4 << 10, 2, levels) == "L1d"
    assert memory_level.level("mem_wss", 32 << 20, 2, levels) == "L3"
    assert memory_level.level("mem_wss", 48 << 20, 2, levels) == "L3+DRAM"  # past L3, < 4x
    # a chase is per thread: 64 MiB is 2x the 32 MiB L3, not DRAM alone; 128 MiB is 4x
    assert memory_level.level("mem_latency", 64 << 20, 1, levels) == "L3+DRAM"
    assert memory_level.level("mem_latency", 128 << 20, 1, levels) == "DRAM"
    # two chasers share the L3: each sees 16 MiB of it
    assert memory_level.level("mem_latency", 64 << 20, 2, levels) == "DRAM"
    assert memory_level.level("mem_wss", 1 << 20, 2, []) == ""


def _run_with(topology: str, notes: list | None = None) -> dict:
    return {"topology_xml": topology, "notes": notes or []}


def test_views_name_the_level_and_the_summary_latency_says_not_dram():
    copy = _sample("mem", [570e3, 560e3], workload="mem_wss", op="copy", threads=2, bytes=1 << 20)
    chase = [
        _sample(
            "mem",
            [v],
            metric="latency",
            unit="ns",
            workload="mem_latency",
            op="pointer_chase",
            threads=1,
            bytes=b,
        )  # fmt: skip
        for b, v in ((4096, 1.0), (1 << 20, 4.0), (64 << 20, 131.0))
    ]
    run = _run_with(THIS_VM)
    rows = node_table.node_table([copy, *chase], [], run)
    names = {node_table.human_name(r) for r in rows}
    assert "L2 cache copy, 2 threads, 1 MiB working set" in names
    assert "L3 cache and DRAM latency, 64 MiB working set" in names
    lines = {line.workload: line for line in summary.node_lines(1, run, [copy, *chase])}
    assert lines["mem_wss"].name.startswith("L2 cache copy")
    assert lines["mem_latency"].caveat.startswith("not DRAM alone: working set only 2x the L3")
    assert "(not DRAM alone" in lines["mem_latency"].value_text()


# ---------------------------------------------------------------- disk


MOUNTINFO = """\
22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
30 22 0:26 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw,size=1024k
31 22 259:1 / /scratch\\040space rw,noatime shared:3 - xfs /dev/nvme0n1p1 rw,attr2
"""


def test_the_mount_holding_a_directory_and_its_device(tmp_path):
    assert disk_facts.mount_of("/var/tmp", MOUNTINFO)["source"] == "/dev/vda"
    tmp = disk_facts.mount_of("/tmp/x", MOUNTINFO)
    assert (tmp["fstype"], tmp["options"]) == ("tmpfs", "rw,nosuid,rw,size=1024k")
    scratch = disk_facts.mount_of("/scratch space/me", MOUNTINFO)
    assert scratch["source"] == "/dev/nvme0n1p1" and scratch["fstype"] == "xfs"
    # a fake /sys/class/block: a partition's queue and model are its disk's
    disk = tmp_path / "devices" / "nvme0n1"
    (disk / "nvme0n1p1").mkdir(parents=True)
    (disk / "nvme0n1p1" / "partition").write_text("1")
    (disk / "queue").mkdir()
    (disk / "queue" / "rotational").write_text("0\n")
    (disk / "device").mkdir()
    (disk / "device" / "model").write_text("Fast SSD 1TB  \n")
    block = tmp_path / "block"
    block.mkdir()
    (block / "nvme0n1p1").symlink_to(disk / "nvme0n1p1")
    dev = disk_facts.block_device("/dev/nvme0n1p1", block)
    assert dev == {
        "device": "nvme0n1p1",
        "disk": "nvme0n1",
        "kind": "NVMe",
        "rotational": False,
        "model": "Fast SSD 1TB",
    }
    assert disk_facts.block_device("tmpfs", block)["kind"] is None


def _disk(op, values, file_bytes=256 << 20):
    return _sample("disk", values, workload="disk", op=op, pattern="seq", block=1 << 20,
                   threads=1, file_bytes=file_bytes)  # fmt: skip


FACTS = {"virtual": True, "kind": "virtio", "mem_total": 24 << 30}


def test_a_virtual_disk_writing_4x_its_reads_says_a_cache_above_the_device():
    run = {"notes": [{"kind": "info", "text": "disk", "data": {"disk_facts": FACTS}}]}
    samples = [_disk("write", [6390.0, 6300.0]), _disk("read", [1630.0, 1600.0])]
    rows = node_table.node_table(samples, [], run)
    for r in rows:
        assert r["cache_note"].startswith("a cache above the device (host write-back?)")
        assert "fit in RAM (24 GiB)" in r["cache_note"]
    write = next(r for r in rows if r["op"] == "write")
    assert "writes ran 3.9x the reads on a virtual (virtio) disk" in write["cache_note"]
    # no peak from the best write: read is not "25 % of peak"
    assert all(r["peak"] is None and r["eff_vs_peak"] is None for r in rows)
    lines = summary.node_lines(1, run, samples)
    assert all("(a cache above the device (host write-back?)" in l.value_text() for l in lines)
    # beside fio, that cache is the recorded cause of a ratio outside 0.9-1.1
    with_fio = samples + [
        _sample(
            "fio",
            [4000.0, 6350.0],
            2,
            workload="disk",
            op="write",
            pattern="seq",
            block=1 << 20,
            threads=1,
        )  # fmt: skip
    ]
    write = next(r for r in node_table.node_table(with_fio, [], run) if r["op"] == "write")
    assert write["reference_cause"].startswith("a cache above the device (host write-back?)")
    assert (
        "ours (in the sweep) and fio (apart from it) met that cache in different states"
        in (write["reference_cause"])
    )
    assert "not explained" not in write["reference_cause"]
    # the summary says the cache once, beside the value, and calls it "that cache" after
    line = next(l for l in summary.node_lines(1, run, with_fio) if "write" in l.name)
    text = f"{line.value_text()}, {line.reference_text()}"
    assert text.count("a cache above the device") == 1, text
    assert ": that cache: ours (in the sweep) and fio" in text, text
    # a file past RAM on a real disk reading as fast as it writes: nothing to say
    big = [_disk("write", [2000.0], 32 << 30), _disk("read", [1900.0], 32 << 30)]
    facts = {**FACTS, "virtual": False, "kind": "NVMe"}
    run = {"notes": [{"kind": "info", "data": {"disk_facts": facts}}]}
    assert all(r["cache_note"] is None for r in node_table.node_table(big, [], run))


def test_disk_files_outgrow_ram_where_the_space_allows_and_say_why_not():
    d = node_parts.disk_plan({}, False, 2)
    facts = {"mem_total": 8 << 30, "free_bytes": 200 << 30}
    size, why = node_parts.outgrow_ram(d, facts, quick=False)
    assert size == 10 << 30 and "1.25x RAM" in why
    size, why = node_parts.outgrow_ram(d, {**facts, "free_bytes": 30 << 30}, quick=False)
    assert size == d["size"] and "half the free space" in why
    quick = node_parts.disk_plan({}, True, 2)
    size, why = node_parts.outgrow_ram(quick, facts, quick=True)
    assert size == 256 << 20 and "--quick" in why and "within RAM" in why


def test_table_cells_get_ranges_and_modes_as_text_not_python_lists():
    values = [47e3, 48e3, 50e3, 49e3, 46e3, 85e3, 86e3, 84e3, 87e3]
    samples = [_sample("mem", values, **TRIAD), _sample("likwid-bench", [49e3, 54e3], 2, **TRIAD)]
    (row,) = node_table.node_table(samples, [])
    cells = node_table.flat(row)
    assert cells["ours_range"] == "46-87 GB/s" and cells["reference_range"] == "49-54 GB/s"
    assert cells["modes"].startswith("two modes: ") and cells["reference_modes"] is None
    assert not any(isinstance(v, (list, dict)) for v in cells.values())


def test_the_plan_records_the_disk_facts_or_says_it_cannot(tmp_path):
    from test_node_refs import TwoCores

    from hpcscope.machine import node_facts
    from hpcscope.suites.base import PlanContext
    from hpcscope.suites.node import plan

    ctx = PlanContext(topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n)
    p = plan(ctx, {"quick": True, "disk": True, "disk_dir": str(tmp_path)})
    (note,) = [n for n in p.notes if n.data and "disk_facts" in n.data]
    facts = note.data["disk_facts"]
    assert facts["directory"] == str(tmp_path.resolve()) and facts["mount_point"]
    assert facts["mem_total"] and note.data["file_bytes"] == 256 << 20
    assert note.text.startswith(f"disk: {tmp_path.resolve()} on ") and "--quick" in note.text
    disk = next(j for j in p.jobs if j.name == "node/disk")
    assert f"--size={256 << 20}" in disk.program
    # a plan for other nodes (--on slurm) does not read this machine's disk
    remote = PlanContext(
        topology=TwoCores(), mpis=[], binary=lambda n, m: tmp_path / n,
        node_facts=node_facts.local(),
    )  # fmt: skip
    p = plan(remote, {"quick": True, "disk": True})
    assert not [n for n in p.notes if n.data and "disk_facts" in n.data]
    assert any("not read at plan time" in n.text for n in p.notes)
