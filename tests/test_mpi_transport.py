"""The MPI transport a launch recorded (meta "mpi_t", "mpi_transport"), in words, and the
p2p bandwidth steps it explains (analysis/mpi_transport.py, analysis/observations.py).

The fixtures are the meta fields Open MPI 4.1.4 and MPICH 4.0.2 (Debian 12) wrote on the
project's machine (bench/common/transport_mpi.c); the real programs are run in
tests/test_bench_p2p.py."""

from __future__ import annotations

import copy
import json

import pytest

from hpcscope.analysis import highlights
from hpcscope.analysis import mpi_transport as mt
from hpcscope.analysis import observations as obs
from hpcscope.results import export
from hpcscope.results.records import RecordError, parse_line

RANKS_ONE_NODE = [
    {"rank": 0, "host": "n1", "cpus": [0], "core": 0, "socket": 0, "numa": 0},
    {"rank": 1, "host": "n1", "cpus": [1], "core": 1, "socket": 0, "numa": 0},
]
OPENMPI = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "0.1.0",
    "mpi": {"library": "Open MPI", "version": "4.1.4", "full": "Open MPI v4.1.4, ..."},
    "mpi_t": {
        "btl": "^uct,openib,ofi",
        "btl_tcp_rndv_eager_limit": 65536,
        "btl_tcp_eager_limit": 65536,
        "btl_tcp_max_send_size": 131072,
        "btl_vader_single_copy_mechanism": "cma",
        "btl_vader_rndv_eager_limit": 32768,
        "btl_vader_eager_limit": 4096,
        "btl_vader_max_send_size": 32768,
        "btl_self_rndv_eager_limit": 131072,
        "btl_self_eager_limit": 1024,
        "btl_self_max_send_size": 16384,
        "pml": "^ucx",
        "mtl": "^ofi",
    },
    "mpi_transport": {
        "device": None,
        "components_open": {"pml": ["ob1"], "btl": ["tcp", "vader", "self"], "mtl": []},
        "env": {},
        "mpi_t_more": 0,
    },
    "ranks": RANKS_ONE_NODE,
    "timer": {"resolution_ns": 1, "overhead_ns": 20},
    "options": {},
}
MPICH = {
    **OPENMPI,
    "mpi": {"library": "MPICH", "version": "4.0.2", "full": "MPICH Version:\t4.0.2"},
    "mpi_t": {
        "MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ": -1,
        "MPIR_CVAR_NEMESIS_SHM_READY_EAGER_MAX_SZ": -2,
        "MPIR_CVAR_NEMESIS_NETMOD": "",
        "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE": 131072,
        "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE": -1,
        "MPIR_CVAR_CH4_IPC_GPU_P2P_THRESHOLD": 32768,
        "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD": 4096,
        "MPIR_CVAR_CH4_SHM_POSIX_EAGER": "",
        "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": 69632,
        "MPIR_CVAR_CH4_NETMOD": "",
        "MPIR_CVAR_CH4_SHM": "",
    },
    "mpi_transport": {"device": "ch4:ucx", "components_open": None, "env": {}, "mpi_t_more": 0},
}
# Open MPI's bandwidth with a step at 4 KiB (the shape of this machine's vader curve)
SIZES = [512, 1024, 2048, 4096, 8192, 16384, 32768]
STEP_AT_4K = [2000, 3500, 6000, 3000, 7000, 11000, 15000]


def two_nodes(meta: dict) -> dict:
    out = copy.deepcopy(meta)
    out["ranks"][1]["host"] = "n2"
    return out


# ----------------------------------------------------------------- thresholds


def test_open_mpi_on_one_node_is_carried_by_vader_and_switches_at_its_eager_limit():
    found = mt.thresholds(OPENMPI)
    assert [(t.name, t.bytes) for t in found] == [("btl_vader_eager_limit", 4096)]
    assert found[0].what == "the eager limit of Open MPI's vader BTL"
    assert found[0].source == "MPI_T"


def test_open_mpi_across_nodes_uses_the_network_btl_not_shared_memory():
    assert [(t.name, t.bytes) for t in mt.thresholds(two_nodes(OPENMPI))] == [
        ("btl_tcp_eager_limit", 65536)
    ]


def test_a_btl_that_is_not_open_or_a_pml_other_than_ob1_gives_no_btl_threshold():
    meta = copy.deepcopy(OPENMPI)
    meta["mpi_transport"]["components_open"]["btl"] = ["tcp", "self"]  # vader excluded
    assert [t.name for t in mt.thresholds(meta)] == ["btl_tcp_eager_limit"]
    meta["mpi_transport"]["components_open"] = {"pml": ["ucx"], "btl": [], "mtl": []}
    assert mt.thresholds(meta) == []  # UCX picks its own threshold: nothing to cite
    meta["mpi_transport"]["env"] = {"UCX_RNDV_THRESH": "16k"}
    assert [(t.name, t.bytes, t.source) for t in mt.thresholds(meta)] == [
        ("UCX_RNDV_THRESH", 16384, "environment")
    ]
    meta["mpi_transport"]["env"] = {"UCX_RNDV_THRESH": "auto"}
    assert mt.thresholds(meta) == []


def test_mpich_thresholds_belong_to_the_device_that_ran():
    # ch4:ucx on one node: CH3's eager limit and the XPMEM threshold are not its own, and
    # MPICH 4.0.2 records no numeric eager limit for ch4's shared memory
    assert mt.thresholds(MPICH) == []
    # across nodes UCX carries the pair: UCX_RNDV_THRESH counts where it was set
    meta = two_nodes(MPICH)
    assert mt.thresholds(meta) == []
    meta["mpi_transport"]["env"] = {"UCX_RNDV_THRESH": "8192"}
    assert [t.bytes for t in mt.thresholds(meta)] == [8192]
    # a ch3 build: CH3's eager limit across nodes
    ch3 = two_nodes(MPICH)
    ch3["mpi_transport"]["device"] = "ch3:nemesis"
    assert [(t.name, t.bytes) for t in mt.thresholds(ch3)] == [
        ("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", 131072)
    ]


@pytest.mark.parametrize("meta", [None, {}, {"mpi_t": "x"}, {"mpi_transport": [1]}, "meta"])
def test_no_or_malformed_transport_gives_nothing(meta):
    assert mt.thresholds(meta) == []
    assert mt.facts_rows(meta) == []
    assert mt.summary_line(meta) is None


# ----------------------------------------------------------------- the dip's cause


def test_step_at_the_recorded_eager_limit_is_named_the_protocol_switch():
    dips = obs.bandwidth_dips(
        SIZES, STEP_AT_4K, subject="openmpi core", explain=True, thresholds=mt.thresholds(OPENMPI)
    )
    assert [d.numbers["bytes"] for d in dips] == [4096]
    assert dips[0].numbers["switch"] == "btl_vader_eager_limit = 4096"
    assert dips[0].numbers["switch_bytes"] == 4096
    assert (
        "the eager limit of Open MPI's vader BTL is 4 KiB (btl_vader_eager_limit = 4096): "
        "the step at 4 KiB is the protocol switch"
    ) in dips[0].text
    assert "not explained" not in dips[0].text


def test_limit_at_the_size_before_the_step_still_lies_within_it():
    # the switch happens between the last eager and the first rendezvous size measured
    bw = [2000, 3500, 6000, 9000, 4000, 11000, 15000]  # step from 4 KiB to 8 KiB
    dips = obs.bandwidth_dips(SIZES, bw, explain=True, thresholds=mt.thresholds(OPENMPI))
    assert [d.numbers["bytes"] for d in dips] == [8192]
    assert dips[0].numbers["switch"] == "btl_vader_eager_limit = 4096"


def test_no_limit_recorded_says_not_explained_and_what_to_check():
    dips = obs.bandwidth_dips(SIZES, STEP_AT_4K, explain=True, thresholds=mt.thresholds(MPICH))
    assert len(dips) == 1 and dips[0].numbers["switch"] is None
    text = dips[0].text
    assert "not explained: no recorded protocol threshold lies between 2 KiB and 4 KiB" in text
    assert "none recorded for this transport" in text
    assert "check the library's eager limit (MPI_T control variables" in text
    assert "protocol switch" not in text


def test_a_limit_elsewhere_is_listed_but_not_named_the_cause():
    shifted = copy.deepcopy(OPENMPI)
    shifted["mpi_t"]["btl_vader_eager_limit"] = 65536
    dips = obs.bandwidth_dips(SIZES, STEP_AT_4K, explain=True, thresholds=mt.thresholds(shifted))
    assert "not explained" in dips[0].text
    assert "(recorded: btl_vader_eager_limit = 65536)" in dips[0].text
    assert dips[0].numbers["switch"] is None


def test_launches_without_a_transport_record_say_so():
    dips = obs.bandwidth_dips(SIZES, STEP_AT_4K, explain=True, thresholds=None)
    assert "not explained" in dips[0].text
    assert "recorded no MPI transport" in dips[0].text
    # and the pure function without `explain` keeps its sentence unchanged
    plain = obs.bandwidth_dips(SIZES, STEP_AT_4K)
    assert "explained" not in plain[0].text and plain[0].numbers["switch"] is None


def test_p2p_observations_explain_per_curve_and_grouped_dips_keep_the_cause():
    bw = dict(zip(SIZES, [2000, 3500, 6000, 3000, 7000, 11000, 5000], strict=True))
    bw[65536] = 16000
    lat = {s: 1.0 + s / 1e4 for s in bw}
    transport = {"openmpi core": mt.thresholds(OPENMPI), "mpich core": mt.thresholds(MPICH)}
    found = obs.p2p_observations(
        {"openmpi core": lat, "mpich core": lat},
        {"openmpi core": bw, "mpich core": bw},
        transport=transport,
    )
    dips = [o for o in found if o.kind == "dip"]
    by = {(o.subject, o.numbers["bytes"]): o for o in dips}
    assert by[("openmpi core", 4096)].numbers["switch"] == "btl_vader_eager_limit = 4096"
    assert by[("openmpi core", 32768)].numbers["switch"] is None
    assert by[("mpich core", 4096)].numbers["switch"] is None
    grouped = [o for o in highlights.group_dips(dips) if o.subject == "openmpi core"]
    assert len(grouped) == 1
    # the deepest dip (32 KiB) leads; the 4 KiB one keeps its recorded cause
    assert "4 KiB (-" in grouped[0].text
    assert "btl_vader_eager_limit = 4096: the protocol switch)" in grouped[0].text


def test_curve_thresholds_map_each_curve_to_its_launches_records():
    launches = [
        {"id": 1, "meta": OPENMPI, "tags": {"mpi": "openmpi"}},
        {"id": 2, "meta": {**OPENMPI, "mpi_t": None, "mpi_transport": None}},
    ]
    samples = [
        {"launch_id": 1, "tags": {"mpi": "openmpi", "placement": "core"}},
        {"launch_id": 2, "tags": {"mpi": "openmpi", "placement": "default"}},
    ]

    def label(s):
        return f"{s['tags']['mpi']} {s['tags']['placement']}"

    found = mt.curve_thresholds(samples, launches, label)
    assert list(found) == ["openmpi core"]
    assert [t.name for t in found["openmpi core"]] == ["btl_vader_eager_limit"]


# ----------------------------------------------------------------- in words


def test_facts_name_their_source_requested_apart_from_in_use():
    rows = {fact: (value, source) for fact, value, source in mt.facts_rows(OPENMPI)}
    assert rows["PML in use"] == ("ob1", "MPI_T: pml components open after MPI_Init")
    assert rows["BTLs open"][0] == "tcp, vader, self"
    assert rows["requested"][0] == "pml=^ucx, btl=^uct,openib,ofi, mtl=^ofi"
    assert "requests, not choices" in rows["requested"][1]
    assert rows["btl_vader_eager_limit"] == ("4096", "MPI_T control variable")
    assert rows["btl_vader_single_copy_mechanism"][0] == "cma"
    line = mt.summary_line(OPENMPI)
    assert line is not None and line.startswith("PML in use ob1; BTLs open tcp, vader, self")
    assert "btl_vader_eager_limit 4096" in line and "btl_vader_single_copy_mechanism cma" in line


def test_mpich_facts_show_the_device_and_hide_other_devices_variables():
    rows = {fact: (value, source) for fact, value, source in mt.facts_rows(MPICH)}
    assert rows["device"] == ("ch4:ucx", "MPI_Get_library_version")
    assert "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE" not in rows
    assert "MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ" not in rows
    assert "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE" not in rows
    assert rows["other devices"][0] == "4 variables of devices this launch did not use (not shown)"
    assert rows["MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"][0] == "69632"
    assert rows["UCX_RNDV_THRESH"] == ("unset: UCX picks its own threshold", "environment")
    assert rows["requested"][0] == (
        "MPIR_CVAR_CH4_NETMOD=(default), MPIR_CVAR_CH4_SHM=(default), "
        "MPIR_CVAR_NEMESIS_NETMOD=(default)"
    )


def test_by_library_groups_launches_with_one_transport():
    launches = [
        {"id": i, "meta": OPENMPI, "tags": {"mpi": "openmpi", "mpi_version": "4.1.4"}}
        for i in (1, 2)
    ] + [{"id": 3, "meta": MPICH, "tags": {"mpi": "mpich", "mpi_version": "4.0.2"}}]
    launches.append({"id": 4, "meta": None, "tags": {}})
    assert [(label, n) for label, _, n in mt.by_library(launches)] == [
        ("openmpi 4.1.4", 2),
        ("mpich 4.0.2", 1),
    ]


# ----------------------------------------------------------------- records and export


def test_meta_validation_accepts_the_transport_and_refuses_other_shapes():
    assert parse_line(json.dumps(OPENMPI), "t")["mpi_t"]["btl_vader_eager_limit"] == 4096
    assert parse_line(json.dumps({**OPENMPI, "mpi_t": None, "mpi_transport": None}), "t")
    for bad in ({"mpi_t": [1]}, {"mpi_t": {"a": [1]}}, {"mpi_t": {"a": True}}):
        with pytest.raises(RecordError, match="'mpi_t' must be an object"):
            parse_line(json.dumps({**OPENMPI, **bad}), "t")
    with pytest.raises(RecordError, match="'mpi_transport' must be an object"):
        parse_line(json.dumps({**OPENMPI, "mpi_transport": "ob1"}), "t")


def test_export_launch_entry_carries_the_transport():
    entry = export.launch_entry(
        {"id": 1, "name": "l", "status": "COMPLETED", "meta": OPENMPI, "tags": {}}, []
    )
    assert entry["mpi_t"]["btl_vader_eager_limit"] == 4096
    assert entry["mpi_transport"]["components_open"]["pml"] == ["ob1"]
    old = export.launch_entry({"id": 2, "name": "l", "status": "FAILED", "meta": None}, [])
    assert old["mpi_t"] is None and old["mpi_transport"] is None


def test_show_prints_one_transport_line_per_library():
    from rich.console import Console

    from hpcscope.report import show

    console = Console(record=True, width=400)
    launches = [
        {"id": 1, "meta": OPENMPI, "tags": {"mpi": "openmpi", "mpi_version": "4.1.4"}},
        {"id": 2, "meta": MPICH, "tags": {"mpi": "mpich", "mpi_version": "4.0.2"}},
    ]
    show.print_mpi_transport(launches, console)
    lines = console.export_text().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("MPI transport openmpi 4.1.4: PML in use ob1; BTLs open tcp")
    assert "btl_vader_eager_limit 4096" in lines[0]
    assert lines[1].startswith("MPI transport mpich 4.0.2: device ch4:ucx;")
    assert "UCX_RNDV_THRESH unset: UCX picks its own threshold" in lines[1]
