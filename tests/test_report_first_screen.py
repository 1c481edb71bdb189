"""The report's first screen (issue 46 parts 1, 2, 8): what machine and software this is
(CPU model, shape, clock, the memory the OS has beside hwloc's, MPI, OS, hypervisor) above
the Summary, and a Summary that hides no row; checked in the HTML and, where Chromium is
installed, as a browser lays it out at 1400 and 800 px."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from hpcscope.formatting import format_bytes
from hpcscope.machine.topology import Topology
from hpcscope.report import machine_line
from hpcscope.report.html import write_report
from hpcscope.results.store import Store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402
import cdp  # noqa: E402

GIB = 1 << 30
CPU = "Intel(R) Xeon(R) CPU X5650 @ 2.67GHz"
ENV = {
    "hostname": "lcc3-n01",
    "kernel": "6.1.0-13-amd64",
    "os": "Debian 12.4",
    "cpu_model": CPU,
    # the OS has 64 GiB, the kernel's NUMA nodes (and so hwloc's) 48 GiB: a guest's shape
    "mem_total_bytes": 64 * GIB,
    "numa_mem_total_bytes": 48 * GIB,
    "virtualization": {"hypervisor": "KVM", "hypervisor_flag": True},
}


def _sample(benchmark: str, metric: str, unit: str, value: float, **params) -> dict:
    return {
        "type": "sample",
        "benchmark": benchmark,
        "metric": metric,
        "unit": unit,
        "params": dict(params, threads=params.get("threads", 1)),
        "values": [value, value * 0.99, value * 1.01],
        "warmups": 1,
    }


NODE = [
    _sample(
        "cpu", "flops", "GFLOP/s", 110, workload="cpu_peak", op="fma", precision="fp64", threads=12
    ),
    _sample(
        "cpu", "flops", "GFLOP/s", 220, workload="cpu_peak", op="fma", precision="fp32", threads=12
    ),
    _sample(
        "cpu",
        "frequency",
        "GHz",
        2.5,
        workload="cpu_clock",
        kernel="dependent_add_chain",
        threads=12,
    ),
    *[
        _sample("mem", "bandwidth", "MB/s", 41000, workload="stream", op=op, threads=12)
        for op in ("copy", "triad")
    ],
    _sample("mem", "latency", "ns", 85, workload="mem_latency", op="pointer_chase", bytes=2**30),
    _sample(
        "disk", "bandwidth", "MB/s", 1900, workload="disk", op="read", pattern="seq", block=1 << 20
    ),
    _sample(
        "disk", "bandwidth", "MB/s", 1500, workload="disk", op="write", pattern="seq", block=1 << 20
    ),
    _sample(
        "net",
        "throughput",
        "Mbit/s",
        34000,
        workload="net",
        op="stream",
        protocol="tcp",
        streams=1,
        block=1 << 17,
    ),
]


def _peak(name: str, value: float) -> dict:
    return {
        "name": name,
        "value": value,
        "unit": "GFLOP/s",
        "formula": f"12 x 2.67 GHz ({name})",
        "source": "nominal, from the model name",
        "metric": "flops",
        "match": {"workload": "cpu_peak", "precision": name},
        "clock_ghz": 2.67,
        "cores": 12,
    }


def _node_run(store: Store) -> int:
    run = store.create_run(
        "node",
        host="lcc3-n01",
        backend="local",
        topology_xml=build_store.TOPO.read_text(),
        environment=ENV,
        mpi=[{"flavor": "openmpi", "version": "4.1.4"}, {"flavor": "mpich", "version": "4.0.2"}],
    )
    store.add_note(run, "peak", "fp64 peak", _peak("fp64", 256.0))
    store.add_note(run, "peak", "fp32 peak", _peak("fp32", 512.0))
    build_store._launch(store, run, "node/r1", {"repeat": 1}, "cpu", "lcc3-n01", NODE)
    store.finish_run(run, "ok")
    return run


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("first_screen")
    store = Store(tmp / "store.db")
    try:
        p2p = build_store.add_p2p_run(store, host="lcc3-n01", label="first screen")
        node = _node_run(store)
        path = write_report(store, [p2p, node], tmp / "out")
    finally:
        store.close()
    return path, path.read_text(encoding="utf-8")


def _header(html: str) -> str:
    return html.split('<section id="summary">', 1)[0]


def test_title_names_the_host_and_the_cpu_and_lists_the_runs_after(report):
    _, html = report
    assert f"<h1>lcc3-n01, {CPU}</h1>" in html
    title = re.search(r"<title>(.*?)</title>", html).group(1)
    assert title == f"hpcscope report: lcc3-n01, {CPU} (runs 1, 2)"


def test_machine_line_says_machine_and_software_above_the_summary(report):
    _, html = report
    head = re.sub(r"<[^>]+>", " ", _header(html)).replace("&#39;", "'")
    assert "2 sockets x 6 cores x 2 threads (24 CPUs)" in head
    assert "2.67 GHz nominal (model name)" in head
    assert "2.50 GHz measured with 12 threads busy (run 2, median of 3)" in head
    # the OS's memory first; hwloc's smaller count beside it with the fact that explains it
    assert "64 GiB (/proc/meminfo MemTotal); hwloc's NUMA nodes report 48 GiB" in head
    assert "all the kernel counts in its NUMA nodes" in head
    assert "the other 16 GiB lie in no NUMA node" in head
    assert "openmpi 4.1.4, mpich 4.0.2" in head
    assert "Debian 12.4, Linux 6.1.0-13-amd64; KVM virtual machine" in head


def test_machine_section_says_whose_memory_it_gives(report):
    """Run 1 (the machine section the node run shares) recorded no MemTotal: hwloc's
    count, said to be hwloc's; with MemTotal recorded the summary line gives both."""
    _, html = report
    section = html.split('id="run1-machine"', 1)[1].split("</section>", 1)[0]
    assert "48 GiB (hwloc&#39;s NUMA nodes; the OS&#39;s total was not recorded)" in section
    topo = Topology.from_xml(build_store.TOPO.read_text())
    assert "2 NUMA nodes, 64 GiB (hwloc's NUMA nodes: 48 GiB); L1d" in topo.summary(64 * GIB)
    assert "2 NUMA nodes, 48 GiB; L1d" in topo.summary(int(48.5 * GIB))  # within 3 %


def test_summary_has_no_scroll_box_and_lists_the_headline_rates_in_full(report):
    _, html = report
    part = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    assert "tablebox" not in part
    node = part.split("<h3>The node</h3>", 1)[1]
    for name in (
        "FP64 FMA peak kernel",
        "STREAM triad",
        "DRAM latency",
        "disk sequential read",
        "disk sequential write",
        "TCP stream",
    ):
        assert name in node, name
    table, rest = node.split("</table>", 1)
    assert "FP32" not in table and "core clock" not in table  # not headline rates
    assert re.search(
        r"2 more rates \(FP32 FMA peak kernel, 12 threads; core clock, 12 "
        r"threads\) in the <a href=\"#run2-node\">node section</a>",
        rest,
    )


@pytest.mark.parametrize(
    ("env", "hw", "expected"),
    [
        ({}, 48 * GIB, "48 GiB (hwloc's NUMA nodes; the OS's total was not recorded)"),
        ({"mem_total_bytes": 47 * GIB}, 48 * GIB, "47 GiB (/proc/meminfo MemTotal)"),
        (
            {"mem_total_bytes": 24 * GIB},
            6 * GIB,
            "24 GiB (/proc/meminfo MemTotal); hwloc's NUMA nodes report 6 GiB: not explained "
            "by a recorded fact",
        ),
        (  # the kernel's count is not hwloc's: no fact ties them, so no cause
            {"mem_total_bytes": 24 * GIB, "numa_mem_total_bytes": 20 * GIB},
            6 * GIB,
            "24 GiB (/proc/meminfo MemTotal); hwloc's NUMA nodes report 6 GiB: not explained",
        ),
        (
            {
                "mem_total_bytes": 24 * GIB,
                "numa_mem_total_bytes": 6 * GIB,
                "virtualization": {"hypervisor": "KVM"},
            },
            6 * GIB,
            "24 GiB (/proc/meminfo MemTotal); hwloc's NUMA nodes report 6 GiB, all the "
            "kernel counts in its NUMA nodes (/sys/devices/system/node): the other 18 GiB "
            "lie in no NUMA node (in a virtual machine, memory added after boot can)",
        ),
    ],
)
def test_memory_text_prefers_the_os_and_explains_only_from_facts(env, hw, expected):
    topo = Topology.from_xml(build_store.TOPO.read_text())
    assert format_bytes(topo.total_memory) == "48 GiB"
    topo.total_memory = hw
    assert machine_line.memory_text(env, topo).startswith(expected)


def test_hypervisor_text_says_bare_metal_only_on_the_flags_word():
    assert machine_line.hypervisor_text({}) == "hypervisor not recorded"
    assert (
        machine_line.hypervisor_text(
            {"virtualization": {"hypervisor": None, "hypervisor_flag": False}}
        )
        == "bare metal (no hypervisor flag in /proc/cpuinfo)"
    )
    assert (
        machine_line.hypervisor_text(
            {"virtualization": {"hypervisor_flag": True, "dmi_product": "Standard PC"}}
        )
        == "a virtual machine (hypervisor not named), Standard PC"
    )


# Inside the Summary: any element whose content is cut and scrolls (a hidden row).
SCROLLERS = """Array.from(document.querySelectorAll('#summary *')).filter(e => {
  const s = getComputedStyle(e);
  return (e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1)
    && /(auto|scroll|hidden)/.test(s.overflowY + s.overflowX);
}).map(e => e.tagName + '.' + e.className)"""
MACHINE_BOX = """(() => { const e = document.getElementById('machine-line');
  if (!e) return null; const r = e.getBoundingClientRect();
  return [r.top, r.bottom, e.innerText]; })()"""
DRAWN = """Array.from(document.querySelectorAll('img, svg')).map(e => {
  const r = e.getBoundingClientRect(); return [e.tagName, r.width, r.height]; })"""


@pytest.mark.browser
@pytest.mark.skipif(cdp.chromium() is None, reason="Chromium is not installed")
@pytest.mark.parametrize("width", [1400, 800])
def test_first_screen_in_headless_chromium(report, width):
    path, _ = report
    result = cdp.load(
        path.resolve().as_uri(),
        width=width,
        checks={"scrollers": SCROLLERS, "machine": MACHINE_BOX, "drawn": DRAWN},
    )
    assert result["console_errors"] == []
    values = result["values"]
    top, bottom, text = values["machine"]
    if width == 1400:
        assert bottom < 900, (top, bottom)  # all of it on the first screen
    assert CPU in text and "64 GiB (/proc/meminfo MemTotal)" in text
    assert values["scrollers"] == []
    assert values["drawn"], "no figure at all"
    assert all(w > 0 and h > 0 for _, w, h in values["drawn"]), values["drawn"]
