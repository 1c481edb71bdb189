"""The machine as measured beside the machine as reported (issue 33, parts 2-5).

Fixtures: this project's 2-vCPU guest (hwloc: L3 480 MiB; the pointer chase reaches
memory latency from 8-16 MiB), a bare-metal-like curve whose edges match hwloc, the 16-vCPU
host of the issue (FP64 85 GFLOP/s on one thread, 675 on 16; clock 2.79 -> 2.50 GHz), a
host whose all-core clock drops while its cores scale, and a two-socket node whose SLIT
(hwloc's NUMA latency matrix, 10/21) the near/far matrix confirms or contradicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcscope.analysis import clock_peaks, machine_measured, node_table, numa_distances
from hpcscope.results.store import Store

KIB, MIB = 1 << 10, 1 << 20
GUEST_CACHES = {"L1d": 48 * KIB, "L1i": 64 * KIB, "L2": 2 * MIB, "L3": 480 * MIB}
# The guest's single-thread chase (ns), run 4 of a fresh-clone demo: 4 KiB .. 512 MiB.
GUEST_CHASE = [1.21, 1.21, 1.21, 1.22, 4.64, 4.62, 4.66, 5.10, 5.23, 19.0, 38.3, 40.8,
               123.0, 139.2, 163.9, 171.7, 175.4, 202.1]  # fmt: skip
WORKING_SETS = [4 * KIB * 2**i for i in range(len(GUEST_CHASE))]


def chase_samples(latencies: list[float]) -> list[dict]:
    return [
        {"benchmark": "mem", "metric": "latency", "unit": "ns", "values": [y, y * 1.01, y],
         "params": {"workload": "mem_latency", "op": "pointer_chase", "threads": 1, "bytes": x}}
        for x, y in zip(WORKING_SETS, latencies, strict=True)
    ]  # fmt: skip


def cpu_samples(fp64: dict[int, float], clock: dict[int, float]) -> list[dict]:
    out = [
        {"benchmark": "cpu", "metric": "flops", "unit": "GFLOP/s", "values": [v * 0.99, v],
         "params": {"workload": "cpu_peak", "op": "fma", "precision": "fp64", "isa": "avx512",
                    "threads": n, "kernel": "registers"}}
        for n, v in fp64.items()
    ]  # fmt: skip
    out += [
        {"benchmark": "cpu", "metric": "frequency", "unit": "GHz", "values": [g, g],
         "params": {"workload": "cpu_clock", "threads": n, "kernel": "dependent_add_chain"}}
        for n, g in clock.items()
    ]  # fmt: skip
    return out


def test_the_guests_last_level_cache_is_far_smaller_than_reported():
    edges = machine_measured.cache_edges(WORKING_SETS, GUEST_CHASE, GUEST_CACHES)
    by_level = {e.level: e for e in edges}
    assert set(by_level) == {"L1d", "L2", "L3"}
    assert by_level["L1d"].agrees and (by_level["L1d"].low, by_level["L1d"].high) == (
        32 * KIB,
        64 * KIB,
    )
    assert by_level["L2"].agrees
    llc = by_level["L3"]
    # the last edge leads to memory: 8 MiB .. 16 MiB, within 2x of the latency curve's
    # edge, and 30x below hwloc's 480 MiB, said so
    assert (llc.low, llc.high) == (8 * MIB, 16 * MIB) and not llc.agrees
    assert "42x smaller than reported" in llc.text()


def test_edges_that_match_hwloc_agree():
    caches = {"L1d": 32 * KIB, "L2": 1 * MIB, "L3": 32 * MIB}
    curve = [1.0] * 3 + [4.0] * 5 + [15.0] * 5 + [90.0] * 5  # steps after 16K, 512K, 16M
    edges = machine_measured.cache_edges(WORKING_SETS, curve, caches)
    assert [(e.level, e.agrees) for e in edges] == [("L1d", True), ("L2", True), ("L3", True)]
    assert machine_measured.cache_edges(WORKING_SETS, [5.0] * 18, caches) == []  # flat: none


def test_the_issues_host_halves_its_rate_per_thread_beyond_the_clock_drop():
    samples = cpu_samples({1: 85.5, 16: 675.0}, {1: 2.79, 16: 2.50})
    [one, full] = machine_measured.core_scaling(samples)
    assert one.rate_per_thread == pytest.approx(1.0)
    assert full.rate_per_thread == pytest.approx(675 / 16 / 85.5)
    assert full.shared and full.effective_cores == pytest.approx(8.8, abs=0.1)
    row = {"benchmark": "cpu", "concurrency": 16, "eff_vs_peak": 0.6, "peak_name": "fp64"}
    cause = machine_measured.efficiency_cause(row, [one, full])
    assert "clock drop under load: 2.5 GHz with 16 threads busy, 90% of one thread's" in cause
    assert "cores shared on the host" in cause and "about 8.8 cores' worth" in cause


def test_a_clock_drop_alone_is_named_and_the_peak_follows_the_clock():
    samples = cpu_samples({1: 100.0, 4: 360.0}, {1: 3.0, 4: 2.7})
    scaling = machine_measured.core_scaling(samples)
    assert not scaling[-1].shared  # 90% per thread at 90% of the clock: the cores scale
    row = {"benchmark": "cpu", "concurrency": 4, "eff_vs_peak": 0.85, "peak_name": "fp64"}
    cause = machine_measured.efficiency_cause(row, scaling)
    assert cause.startswith("clock drop under load") and "shared" not in cause
    # A peak of 4 cores at the all-core clock, taken for 1 thread: 1 core at 1 thread's clock
    peak = {"value": 4 * 2.7 * 32, "clock_ghz": 2.7, "nominal_clock_ghz": 2.0, "cores": 4,
            "unit": "GFLOP/s", "formula": "..."}  # fmt: skip
    one = clock_peaks.for_threads(peak, 1, machine_measured.clocks(samples))
    assert one["value"] == pytest.approx(3.0 * 32) and "1/4 cores" in one["formula"]
    assert clock_peaks.for_threads(peak, 4, machine_measured.clocks(samples)) is peak
    assert clock_peaks.for_threads({**peak, "cores": None}, 1, {}) == {**peak, "cores": None}


def test_the_clock_between_fma_work_is_the_one_the_peaks_use():
    samples = cpu_samples({1: 100.0}, {1: 3.0, 2: 3.0})
    loaded = [
        {**s, "values": [2.5, 2.5], "params": {**s["params"], "load": "fp64 fma avx512"}}
        for s in samples
        if s["params"]["workload"] == "cpu_clock"
    ]
    assert machine_measured.clocks(samples) == {1: 3.0, 2: 3.0}
    assert machine_measured.clocks(samples + loaded) == {1: 2.5, 2: 2.5}
    assert clock_peaks.measured_clock(samples + loaded) == (2.5, 2, 2)
    peak = {"value": 160.0, "clock_ghz": 2.0, "unit": "GFLOP/s",
            "formula": "2 cores x 2 GHz x 40 FLOP/cycle"}  # fmt: skip
    [scaled] = clock_peaks.at_measured_clock([peak], samples + loaded)
    assert scaled["value"] == pytest.approx(200.0)
    assert "between FP64 FMA AVX512 work" in scaled["formula"]


def test_rows_above_90_percent_have_no_cause_and_noise_is_named():
    assert machine_measured.efficiency_cause({"eff_vs_peak": 0.95, "peak_name": "fp64"}, []) is None
    noisy = {"benchmark": "mem", "eff_vs_peak": 0.5, "peak_name": "mem", "spread": 0.4}
    assert "repetitions spread by 40%" in machine_measured.efficiency_cause(noisy, [])
    quiet = machine_measured.efficiency_cause({**noisy, "spread": 0.01}, [])
    assert quiet == "not explained; check the array size against the caches and the NUMA placement"
    best = {"benchmark": "mem", "eff_vs_peak": 0.5, "peak_name": node_table.MEASURED_BEST}
    assert machine_measured.efficiency_cause(best, []) is None


def test_the_node_table_gives_each_thread_count_its_own_peak_and_cause():
    samples = cpu_samples({1: 85.5, 2: 90.0}, {1: 2.8, 2: 2.8})
    peak = {"name": "fp64", "value": 2 * 2.0 * 32, "unit": "GFLOP/s", "metric": "flops",
            "formula": "2 cores x 2.0 GHz x 32 FP64 FLOP/cycle", "match": {"precision": "fp64"},
            "clock_ghz": 2.0, "cores": 2}  # fmt: skip
    rows = {r["concurrency"]: r for r in node_table.node_table(samples, [peak]) if r["op"] == "fma"}
    assert rows[1]["peak"] == pytest.approx(2.8 * 32)  # one core at the measured clock
    assert rows[1]["eff_vs_peak"] == pytest.approx(85.5 / (2.8 * 32)) and rows[1]["cause"] is None
    assert rows[2]["peak"] == pytest.approx(2 * 2.8 * 32)
    assert "cores shared on the host" in rows[2]["cause"]


def store_chase_of_this_host(cli, latencies: list[float]) -> int:
    """A stored node run of this host (its hwloc topology) with this pointer chase."""
    from hpcscope.machine.topology import Topology

    topology = Topology.local()
    with Store(cli.db, create=True) as store:
        run = store.create_run("node", backend="local")
        store.update_run(run, host=topology.hostname, topology_xml=topology.xml)
        launch = store.add_launch(run, "node/mem", {})
        for s in chase_samples(latencies):
            store.add_record(launch, {"type": "sample", "benchmark": "mem", "warmups": 0, **s})
    return run


def test_topo_measured_shows_the_newest_node_run_beside_hwloc(cli):
    missing = cli("topo", "--measured")
    assert missing.returncode == 2 and "run node --cpu --mem" in " ".join(missing.stderr.split())
    run = store_chase_of_this_host(cli, GUEST_CHASE)
    shown = cli("topo", "--measured")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert f"As measured by run {run}" in text and "edge 8 MiB-16 MiB" in text


# A chase whose memory latency starts at 512 KiB: below any last-level cache hwloc reports.
SMALL_LLC_CHASE = [1.2] * 4 + [5.0] * 3 + [100.0] * 11


def test_the_usable_llc_is_where_the_chase_reaches_memory_when_hwloc_disagrees():
    from pathlib import Path

    xml = (Path(__file__).parent / "fixtures" / "topo" / "this_vm.xml").read_text()  # L3 32 MiB
    run = {"id": 7, "topology_xml": xml}
    usable = machine_measured.usable_llc(run, chase_samples(SMALL_LLC_CHASE))
    assert usable == {"bytes": 512 * KIB, "low": 256 * KIB, "reported": 32 * MIB,
                      "level": "L3", "run_id": 7}  # fmt: skip
    agrees = [1.2] * 4 + [5.0] * 10 + [100.0] * 4  # memory from 32-64 MiB: as reported
    assert machine_measured.usable_llc(run, chase_samples(agrees)) is None


def test_the_node_plan_sizes_stream_from_the_usable_llc_when_hwloc_still_says_the_same():
    from pathlib import Path

    from hpcscope.machine.topology import Topology
    from hpcscope.suites import node as node_suite
    from hpcscope.suites.base import SuitePlan

    topo = Topology.from_xml(
        (Path(__file__).parent / "fixtures" / "topo" / "2x16_nosmt.xml").read_text()
    )  # 4 L3 instances of 32 MiB
    usable = {"bytes": 4 * MIB, "low": 2 * MIB, "reported": 32 * MIB, "level": "L3", "run_id": 3}
    out = SuitePlan()
    assert node_suite._llc_for_arrays(topo, {"usable_llc": usable}, out) == 4 * 4 * MIB
    assert "as run 3 measured it" in out.notes[0].text
    other = SuitePlan()  # another machine now (hwloc reports another size): hwloc's
    moved = {**usable, "reported": 16 * MIB}
    assert node_suite._llc_for_arrays(topo, {"usable_llc": moved}, other) == 4 * 32 * MIB
    assert node_suite._llc_for_arrays(topo, {}, other) == 4 * 32 * MIB and not other.notes


def test_run_node_plans_stream_from_this_hosts_newest_node_run(cli):
    run = store_chase_of_this_host(cli, SMALL_LLC_CHASE)
    dry = cli("run", "node", "--mem", "--quick", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    said = " ".join((dry.stdout + dry.stderr).split())
    assert f"STREAM arrays sized from the last-level cache as run {run} measured it" in said
    assert "--array-bytes=67108864" in said  # STREAM's minimum of 64 MiB


# ----- NUMA distances: hwloc's matrix beside the measured near/far one ------------------

TOPO = Path(__file__).parent / "fixtures" / "topo"
SLIT_XML = (TOPO / "lcc3_2x6x2_distances.xml").read_text()  # hwloc 2: NUMALatency 10/21


def numa_samples(latency: dict[tuple[int, int], float]) -> list[dict]:
    out = []
    for (i, m), ns in latency.items():
        out.append(
            {"benchmark": "mem", "metric": "latency", "unit": "ns", "values": [ns, ns * 1.02],
             "params": {"workload": "numa_latency", "threads": 1, "cpu_node": i, "mem_node": m}}
        )  # fmt: skip
        out.append(
            {"benchmark": "mem", "metric": "bandwidth", "unit": "MB/s",
             "values": [20000.0 if i == m else 12000.0] * 3,
             "params": {"workload": "numa_bandwidth", "threads": 1, "cpu_node": i, "mem_node": m}}
        )  # fmt: skip
    return out


def test_hwloc_s_numa_matrix_is_read_from_both_xml_formats():
    assert numa_distances.reported_matrix(SLIT_XML) == {(0, 1): 2.1, (1, 0): 2.1}
    # the hwloc 1.x file of the same machine with the matrix lstopo 1.x wrote
    v1 = (TOPO / "lcc3_2x6x2_hwloc1.xml").read_text()
    block = (
        '<distances nbobjs="2" relative_depth="2" latency_base="1.000000">'
        + "".join(f'<latency value="{v}"/>' for v in (1.0, 2.1, 2.1, 1.0))
        + "</distances>"
    )
    v1 = v1.replace("</topology>", block + "</topology>")
    assert numa_distances.reported_matrix(v1) == pytest.approx({(0, 1): 2.1, (1, 0): 2.1})
    assert numa_distances.reported_matrix((TOPO / "lcc3_2x6x2.xml").read_text()) is None


def test_measured_distances_that_match_the_slit_are_as_reported():
    samples = numa_samples({(0, 0): 80, (0, 1): 160, (1, 1): 80, (1, 0): 176})
    (line,) = [c for c in machine_measured.compare(samples, {}, None, None, SLIT_XML)]
    assert line.what == "NUMA distances" and line.reported == "remote 2.1x local"
    assert line.measured == "remote latency 2-2.2x local, far bandwidth 0.6x near"
    assert line.verdict == "as reported"


def test_a_remote_node_nearer_than_the_slit_says_is_named():
    samples = numa_samples({(0, 0): 80, (0, 1): 96, (1, 1): 80, (1, 0): 170})
    (line,) = machine_measured.compare(samples, {}, None, None, SLIT_XML)
    assert (
        line.verdict
        == "node 0 -> 1: 1.2x measured, 2.1x reported (1 of 2 pairs differ by over 25%)"
    )
    # without hwloc's matrix (most VMs): the measured one, and that hwloc has none
    plain = (TOPO / "lcc3_2x6x2.xml").read_text()
    (line,) = machine_measured.compare(samples, {}, None, None, plain)
    assert line.reported == "-" and line.verdict == "hwloc reports no distances"
    # one NUMA node: no line at all
    assert machine_measured.compare(numa_samples({(0, 0): 80}), {}, None, None, SLIT_XML) == []


# The FP64 peak of a 2-unit AVX-512 core, as machine/peaks.py writes it, and Zen 4's.
AVX512_PEAK = "2 cores x 4.05 GHz x 32 FP64 FLOP/cycle (AVX-512, 2 FMA units)"
ZEN4_PEAK = "2 cores x 3.7 GHz x 16 FP64 FLOP/cycle (AVX-512 on 2 FMA units of 256 bits)"


def blas_row(workload: str = "dgemm", eff: float = 0.43, formula: str = AVX512_PEAK) -> dict:
    bench = "cpu" if workload == "dgemm" else "hpcc"
    return {"benchmark": bench, "workload": workload, "concurrency": 2, "eff_vs_peak": eff,
            "peak_name": "fp64", "peak": 259.2, "peak_formula": formula, "spread": 0.02}  # fmt: skip


def facts(core: str, variables: dict | None = None, loads: dict | None = None):
    return machine_measured.RunFacts({"dgemm": core, "hpl": core}, variables or {}, loads or {})


def test_a_forced_haswell_kernel_names_the_variable_and_its_ceiling():
    scaling = machine_measured.core_scaling(cpu_samples({1: 128.0, 2: 256.0}, {1: 4.0, 2: 4.0}))
    forced = facts("Haswell", {"OPENBLAS_CORETYPE": "Haswell"})
    for workload in ("dgemm", "hpl"):
        cause = machine_measured.efficiency_cause(blas_row(workload), scaling, forced)
        assert cause.startswith(
            "OPENBLAS_CORETYPE=Haswell forces OpenBLAS's Haswell kernel (AVX2): its ceiling "
            "is 50% of this AVX-512 peak, and this run reached 86% of that ceiling"
        ), cause
        assert "the rest is not explained; check the BLAS kernel" in cause
        assert "kernel's own" not in cause
    # at 46 % of the peak the kernel explains it all: nothing left unexplained
    whole = machine_measured.efficiency_cause(blas_row(eff=0.46), scaling, forced)
    assert "reached" not in whole and "not explained" not in whole
    # chosen by OpenBLAS itself (no variable): said so
    chosen = machine_measured.efficiency_cause(blas_row(), scaling, facts("Haswell"))
    assert chosen.startswith("OpenBLAS chose its Haswell kernel (AVX2; no OPENBLAS_CORETYPE")


def test_kernel_ceilings_come_from_the_widths_against_the_peaks_flop_per_cycle():
    ceiling = machine_measured.kernel_ceiling
    assert ceiling("Haswell", AVX512_PEAK) == (0.5, "AVX2")
    assert ceiling("SkylakeX", AVX512_PEAK) == (1.0, "AVX-512")
    assert ceiling("Haswell", ZEN4_PEAK) == (1.0, "AVX2")  # 2 x 256-bit units: no loss
    assert ceiling("Sandybridge", AVX512_PEAK) == (0.25, "AVX without FMA")
    assert ceiling("Nehalem", "1 cores x 2 GHz x 16 FP64 FLOP/cycle (AVX2, 2 FMA units)") == (
        0.25,
        "SSE2/SSE3",
    )
    assert ceiling("Haswell", "user value 100 GFLOP/s") is None  # --peak: no FLOP/cycle
    assert ceiling("Neoversen1", AVX512_PEAK) is None  # a kernel not in the table
    # the native kernel on its own machine leaves the register FMA comparison
    scaling = machine_measured.core_scaling(cpu_samples({1: 128.0, 2: 250.0}, {1: 4.0, 2: 4.0}))
    native = machine_measured.efficiency_cause(blas_row(), scaling, facts("SkylakeX"))
    assert native.startswith("not explained: the register-only FMA kernel reaches 96% of this")
    assert "so the cores can; check the BLAS kernel and threads (OPENBLAS_VERBOSE=2)" in native


def test_load_around_the_job_is_the_guests_or_the_hosts_with_its_number():
    scaling = machine_measured.core_scaling(cpu_samples({1: 100.0, 2: 110.0}, {1: 3.0, 2: 3.0}))
    row = {"benchmark": "cpu", "workload": "cpu_peak", "concurrency": 2, "eff_vs_peak": 0.5,
           "peak_name": "fp64", "peak": 200.0, "peak_formula": AVX512_PEAK}  # fmt: skip
    guest = {"node/cpu": {"job": "node/cpu", "steal_pct": 0.1, "others_cores": 0.9}}
    cause = machine_measured.efficiency_cause(row, scaling, facts("", loads=guest))
    assert "other processes used 0.9 cores during the run (/proc/stat" in cause
    assert "cores shared on the host" not in cause and "steal" not in cause
    host = {"node/cpu": {"job": "node/cpu", "steal_pct": 12.0, "others_cores": 0.0}}
    cause = machine_measured.efficiency_cause(row, scaling, facts("", loads=host))
    assert "cores shared on the host: the FP64 rate per thread with 2 threads is 55%" in cause
    assert "steal time 12 %: the host ran other guests" in cause
    quiet = {"node/cpu": {"job": "node/cpu", "steal_pct": 0.0, "others_cores": 0.05}}
    cause = machine_measured.efficiency_cause(row, scaling, facts("", loads=quiet))
    assert "cores shared on the host" not in cause
    assert "not explained; check SMT siblings (lscpu) and how the host pins these vCPUs" in cause
    # hpcc's rows take the load of hpcc's job
    hpl = {"ref/hpcc/hpl/n3072/p2": {"job": "ref/hpcc/hpl/n3072/p2", "steal_pct": 0.0,
                                     "others_cores": 1.2}}  # fmt: skip
    cause = machine_measured.efficiency_cause(blas_row("hpl"), [], facts("SkylakeX", loads=hpl))
    assert cause == (
        "other processes used 1.2 cores during the run (/proc/stat: the guest's own load, not ours)"
    )


def test_run_facts_read_the_samples_the_environment_and_the_load_notes():
    samples = [
        {"benchmark": "cpu", "params": {"workload": "dgemm", "blas_core": "Haswell"}},
        {"benchmark": "hpcc", "params": {"workload": "hpl", "blas_core": "SkylakeX"}},
    ]
    run = {
        "environment": {"variables": {"OPENBLAS_CORETYPE": "Haswell"},
                        "virtualization": {"steal_since_boot_pct": 3.5}},
        "notes": [{"kind": "load", "text": "", "data": {"job": "node/cpu", "steal_pct": 1.0,
                                                         "others_cores": 0.5}},
                  {"kind": "peak", "text": "", "data": {"name": "fp64", "formula": AVX512_PEAK}}],
    }  # fmt: skip
    found = machine_measured.run_facts(run, samples)
    assert found.blas_core == {"dgemm": "Haswell", "hpl": "SkylakeX"}
    assert found.variables == {"OPENBLAS_CORETYPE": "Haswell"} and found.steal_since_boot == 3.5
    assert found.load({"benchmark": "cpu"}) == {"steal_pct": 1.0, "others_cores": 0.5}
    assert found.load({"benchmark": "mem"}) is None
    assert found.peak_formulas == {"fp64": AVX512_PEAK}
    assert machine_measured.run_facts(None, []).blas_core == {}
