"""The facts that explain DGEMM and HPL (issue 47, part 1): the BLAS each program linked and
the kernel OpenBLAS dispatched to (our cpu program's meta, hpcc through
machine/blas_probe.py), the BLAS variables and the virtual machine in the run's
environment, the load around each job (machine/host_load.py), and HPL's N, NB, P x Q and
time in its label. The live test sets OPENBLAS_CORETYPE=Haswell on an AVX-512 machine and
reads the DGEMM and HPL lines of `show` and of the summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, have

from hpcscope.analysis import hpl_facts
from hpcscope.machine import blas_probe, environment, host_load, node_facts
from hpcscope.machine.peaks import identify_uarch, parse_cpuinfo
from hpcscope.results import parsers

HPCC_HASWELL = (Path(__file__).parent / "fixtures" / "node" / "hpcc_n256_haswell.txt").read_text()
CPU_BINARIES = sorted(REPO.glob(".cache/build/*/node/cpu"))


def test_hpcc_output_carries_the_probed_blas_into_meta_and_the_hpl_sample():
    [meta, hpl, dgemm] = parsers.parse_hpcc(HPCC_HASWELL)
    assert meta["blas"]["core"] == "Haswell" and meta["blas"]["version"] == "0.3.21"
    assert meta["blas"]["library"].endswith("libblas.so.3")
    assert meta["blas"]["env"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert hpl["params"]["blas_core"] == "Haswell" and hpl["params"]["n"] == 256
    assert "blas_core" not in dgemm["params"]
    # without the probe's line (an older run's output): no BLAS facts, HPL as before
    plain = "\n".join(x for x in HPCC_HASWELL.splitlines() if not x.startswith("hpcscope-blas"))
    [meta, hpl, _] = parsers.parse_hpcc(plain)
    assert "blas" not in meta and "blas_core" not in hpl["params"]


@pytest.mark.skipif(not have("hpcc"), reason="hpcc not installed (Debian package hpcc)")
def test_the_probe_asks_the_library_hpcc_links_in_the_jobs_environment():
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        ["python3", "-m", "hpcscope.machine.blas_probe", "/usr/bin/hpcc"],
        env={**env, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith(blas_probe.LINE_PREFIX)
    facts = json.loads(done.stdout[len(blas_probe.LINE_PREFIX) :])
    assert facts["library"] == blas_probe.linked("/usr/bin/hpcc")[0]
    assert facts["core"] == "Haswell" and facts["threads"] == 1
    assert facts["env"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert blas_probe.probe("/bin/sh")["library"] is None  # no BLAS: nothing made up


@pytest.mark.skipif(not CPU_BINARIES, reason="bench/node not built (hpcscope build)")
def test_the_cpu_programs_meta_and_dgemm_sample_name_the_kernel_openblas_ran():
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    done = subprocess.run(
        [str(CPU_BINARIES[0]), "--kernels=dgemm", "--threads=1", "--reps=1", "--warmups=0",
         "--dgemm-n=64"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    if "blas" not in records[0]:
        pytest.skip("cpu was built without OpenBLAS (pkg-config openblas)")
    blas = records[0]["blas"]
    assert blas["core"] == "Haswell" and blas["env"] == {"OPENBLAS_CORETYPE": "Haswell"}
    assert blas["version"] and "Haswell" in blas["config"] and Path(blas["library"]).exists()
    assert records[1]["params"]["blas_core"] == "Haswell"


def test_the_environment_keeps_blas_variables_and_the_virtual_machine(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("MKL_DEBUG_CPU_TYPE", "5")
    env = environment.capture()
    assert env["variables"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert env["variables"]["MKL_DEBUG_CPU_TYPE"] == "5"
    virt = env["virtualization"]
    assert set(virt) >= {"hypervisor", "steal_since_boot_pct", "loadavg", "hw_counters"}
    assert virt["hw_counters"] in ("yes", "no PMU", "not permitted", "not probed") or virt[
        "hw_counters"
    ].startswith("no (")
    flag = "hypervisor" in parse_cpuinfo(node_facts.local().cpuinfo_text).flags
    assert virt["hypervisor_flag"] is flag
    text = environment.virtualization_text(env)
    assert text and "steal time since boot" in text and "hardware counters:" in text


def test_load_between_snapshots_tells_steal_from_other_processes():
    hz = os.sysconf("SC_CLK_TCK")
    # 10 s on 2 CPUs: 2000 jiffies at 100 Hz; user 900, system 100, steal 200, idle 800
    before = host_load.Snapshot(0.0, [0] * 10, 0.0)
    after = host_load.Snapshot(
        10.0, [j * hz // 100 for j in (900, 0, 100, 800, 0, 0, 0, 200, 0, 0)], 6.0
    )
    facts = host_load.between(before, after)
    assert facts is not None
    assert facts["steal_pct"] == 10.0  # 200 of 2000
    assert facts["others_cores"] == pytest.approx(0.4)  # 10 s busy - our 6 s, over 10 s
    assert facts["ours_cores"] == pytest.approx(0.6)
    assert host_load.between(before, host_load.Snapshot(10.0, None, 6.0)) is None
    assert "steal time 10.0 %, other processes 0.40 cores" in host_load.text("node/cpu", facts)


def test_show_sums_the_load_notes_up_in_one_line():
    def note(job, others, steal):
        data = {"job": job, "others_cores": others, "steal_pct": steal, "wall_s": 1.0}
        return {"kind": "load", "text": job, "data": data}

    notes = [note("node/cpu", 0.2, 0.0), note("node/mem", 1.3, 0.5), note("node/disk", 0.6, 4.0)]
    assert host_load.summary_text(notes + [{"kind": "info", "text": "x"}]) == (
        "3 jobs (/proc/stat); other processes used half a core or more during 2 of them, "
        "at most 1.30 cores (node/mem); steal time at most 4.0 % (node/disk)"
    )
    assert host_load.summary_text([{"kind": "info", "text": "x"}]) is None


def test_hpl_states_n_nb_grid_and_time_and_a_quick_one_says_it_is_not_the_machines():
    # HPL's rate formula backwards: N = 3072 at 82.77 GFLOP/s took 0.234 s
    assert hpl_facts.lu_seconds(3072, 82.77) == pytest.approx(0.2336, rel=1e-3)
    params = {"n": 3072, "nb": 128, "grid": "1x2", "threads": 2}
    quick = hpl_facts.label(hpl_facts.hpl_facts(params, 82.77, {"quick": True}))
    assert quick == "quick HPL (N = 3072, NB = 128, P x Q = 1 x 2, 0.23 s), not the machine's HPL"
    full = hpl_facts.label(hpl_facts.hpl_facts({**params, "n": 40960}, 150.0, {"quick": False}))
    assert full == "HPL (N = 40960, NB = 128, P x Q = 1 x 2, 305 s)"


def _two_fma_avx512() -> bool:
    cpu = parse_cpuinfo(node_facts.local().cpuinfo_text)
    return "avx512f" in cpu.flags and identify_uarch(cpu).dp_per_cycle >= 32


@pytest.mark.skipif(
    not _two_fma_avx512(),
    reason="this CPU has no AVX-512 with two 512-bit FMA units (e.g. AMD Zen 3/4, Intel "
    "without AVX-512): an AVX2 kernel is not capped below its FP64 peak there",
)
@pytest.mark.skipif(not have("hpcc"), reason="hpcc not installed (Debian package hpcc)")
@pytest.mark.skipif(not CPU_BINARIES, reason="bench/node not built (hpcscope build)")
def test_openblas_coretype_haswell_is_named_in_the_dgemm_and_hpl_lines(cli, monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    done = cli("run", "node", "--quick", "--cpu", "--precision", "0")
    assert done.returncode == 0, done.stderr
    shown = cli("show", "last")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    named = (
        "OPENBLAS_CORETYPE=Haswell forces OpenBLAS's Haswell kernel (AVX2): its ceiling is 50% "
        "of this AVX-512 peak"
    )
    causes = text[text.index("below 90% of the peak") :]
    dgemm = causes[causes.index("DGEMM (OpenBLAS), 2 threads: ") :]
    assert dgemm[: dgemm.index(" - ") + 3 + len(named)].endswith(named), dgemm[:300]
    hpl = causes[causes.index("quick HPL (N = ") :]
    assert "not the machine's HPL: " in hpl[:120] and named in hpl[:400], hpl[:400]
    assert "BLAS: cpu: OpenBLAS" in text and "kernel Haswell" in text
    assert "BLAS: hpcc: OpenBLAS" in text and "OPENBLAS_CORETYPE=Haswell" in text
    assert re.search(r"load: \d+ jobs \(/proc/stat\); other processes used", text), text
