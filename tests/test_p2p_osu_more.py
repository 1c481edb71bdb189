"""OSU 7.4's other two-rank programs in p2p (issue 44): persistent requests
(osu_latency/bw/bibw_persistent), threads per rank (osu_latency_mt) and forked processes
per rank (osu_latency_mp): OSU's text parsed, the cells, the suite's planning, and the
suite end to end with Open MPI (run, store, show, exports). The program itself, run with
Open MPI and MPICH, is tested in test_bench_p2p.py (its build is shared there).
Correctness and plausibility, never speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import have, requires_openmpi

from hpcscope.results.store import Store

MORE = ("latency_persistent", "bw_persistent", "bibw_persistent", "latency_mt", "latency_mp")


def test_osu_text_of_the_more_programs_parses_into_their_cells():
    """OSU 7.4's own osu_latency_mt text (this machine, Open MPI 4.1.4): its test, its
    thread counts as p2p.c's params, so OSU's rows and ours share a cell."""
    from hpcscope.results.parsers import parse_osu

    text = (
        "# Number of Sender threads: 1 \n# Number of Receiver threads: 2\n\n"
        "# OSU MPI Multi-threaded Latency Test v7.4\n# Datatype: MPI_CHAR.\n"
        "# Size       Avg Latency(us)\n1                       0.67\n2      0.54\n"
    )
    recs = parse_osu(text)
    assert [r["params"] for r in recs[1:]] == [
        {"bytes": 1, "test": "latency_mt", "sender_threads": 1, "threads": 2},
        {"bytes": 2, "test": "latency_mt", "sender_threads": 1, "threads": 2},
    ]
    mp = parse_osu("# OSU MPI Multi-process Latency Test v7.4\n# Size  Avg\n1               1.27\n")
    assert mp[1]["params"]["test"] == "latency_mp" and mp[1]["values"] == [1.27]
    # OSU's fan programs print osu_bw's title: the program's name tells them apart
    fan = "# OSU MPI Bandwidth Test v7.4\n# Datatype: MPI_CHAR.\n# Size  Bandwidth (MB/s)\n1  8.5\n"
    assert parse_osu(fan, "osu_bw_fan_out")[1]["params"] == {"bytes": 1, "test": "bw_fan_out"}
    assert parse_osu(fan)[1]["params"]["test"] == "bw"


def test_named_tests_are_their_own_cells():
    """latency_persistent writes metric latency like latency: the test keeps them apart
    in the cell identity, the curves and the OSU export (titled by OSU's program)."""
    from hpcscope.analysis.p2p_curves import what
    from hpcscope.results import export
    from hpcscope.results.cells import identity

    base = {"bytes": 8, "iterations": 10, "block": 1}
    assert identity({**base, "test": "latency"}) == {"bytes": 8}
    assert identity({**base, "test": "latency_mt", "threads": 2}) == {
        "bytes": 8,
        "test": "latency_mt",
        "threads": 2,
    }
    assert what({"metric": "latency", "params": {"test": "latency_persistent"}}) == (
        "latency_persistent"
    )
    sample = {
        "benchmark": "p2p",
        "metric": "latency",
        "unit": "us",
        "values": [1.5],
        "launch_id": 1,
        "tags": {"mpi": "openmpi", "placement": "core", "repeat": 1},
    }
    text = export.to_osu(
        [
            {**sample, "params": {**base, "test": "latency"}},
            {**sample, "params": {**base, "test": "latency_mp"}, "values": [2.5]},
        ]
    )
    assert "# OSU MPI Latency Test (hpcscope" in text
    assert "# OSU MPI Multi-process Latency Test (hpcscope" in text
    assert "test=latency_mp" in text and text.count("8 ") == 2


@pytest.mark.parametrize(
    "text, expected",
    [(None, (1, 2)), ("3", (1, 3)), ("2:4", (2, 4)), ("127:1", (127, 1))],
)
def test_counts_read_like_osus_t(text, expected):
    from hpcscope.suites.p2p import parse_counts

    assert parse_counts(text, "--threads", (1, 2)) == expected


@pytest.mark.parametrize("text", ["0", "128", "1:2:3", "two", "2:"])
def test_bad_counts_are_refused_naming_the_option(text):
    from hpcscope.suites.p2p import parse_counts

    with pytest.raises(ValueError, match=f"--processes '{text}'.*1..127"):
        parse_counts(text, "--processes", (2, 2))


def test_latency_mt_and_mp_are_skipped_on_smpi_with_the_reason():
    from types import SimpleNamespace

    from hpcscope.suites.p2p import without_unsupported

    smpi = [SimpleNamespace(flavor="smpi")]
    tests, notes = without_unsupported(["latency", "latency_mt", "latency_mp"], smpi)
    assert tests == ["latency"]
    assert "provides MPI_THREAD_SINGLE" in notes[0].text
    assert "would copy the whole simulation" in notes[1].text
    kept = ["latency_mt", "latency_mp"]
    assert without_unsupported(kept, [SimpleNamespace(flavor="mpich")]) == (kept, [])


TOPO = Path(__file__).parent / "fixtures" / "topo"


def test_pairs_are_placed_by_class():
    """osu_multi_lat's layout (rank r with r + N) on a 2 x 16-core machine: inside a
    package, across packages, across nodes; what does not fit is skipped with why."""
    from hpcscope.machine.topology import Topology
    from hpcscope.suites import p2p_pairs

    topo = Topology.from_xml((TOPO / "2x16_nosmt.xml").read_text())
    core, socket, node, smt = p2p_pairs.placements(topo, ["core", "socket", "node", "smt"], 3, 2)
    first = [c.pus[0] for c in topo.cores]
    assert core.cpus == first[:6] and {topo.pu(c).package for c in core.cpus} == {0}
    assert [topo.pu(c).package for c in socket.cpus] == [0, 0, 0, 1, 1, 1]
    assert node.nodes == 2 and node.cpus == first[:6] and not node.skipped
    assert "multi_lat places its pairs inside a socket" in smt.skipped
    (big,) = p2p_pairs.placements(topo, ["core"], 9, 1)
    assert big.skipped == "9 pairs inside a socket need 18 cores in one package; the largest has 16"
    (alone,) = p2p_pairs.placements(topo, ["node"], 2, 1)
    assert alone.skipped.startswith("one node")  # the planner's own reason
    with pytest.raises(ValueError, match="--pairs '0'"):
        p2p_pairs.parse_pairs("0")


def test_fan_groups_are_placed_by_class():
    """osu_bw_fan_in/out's groups on a 2 x 16-core machine: a group per node (as many as
    the allocation has), per package, or per core set of one package; what does not fit
    is skipped with why."""
    from hpcscope.machine.topology import Topology
    from hpcscope.suites import p2p_fan

    topo = Topology.from_xml((TOPO / "2x16_nosmt.xml").read_text())
    first = [c.pus[0] for c in topo.cores]
    placed = p2p_fan.placements(topo, ["core", "socket", "node", "numa", "default"], None, 2, 4)
    (core, g_core), (socket, g_socket), (node, g_node), (numa, g_numa), (dflt, g_dflt) = placed
    assert (g_core, core.cpus) == (8, first[:16])  # 8 groups of 2 fill package 0
    assert {topo.pu(c).package for c in core.cpus} == {0}
    assert g_socket == 2 and [topo.pu(c).package for c in socket.cpus] == [0, 0, 1, 1]
    assert (g_node, node.nodes, node.cpus) == (4, 4, first[:8])  # ranks in blocks per node
    assert g_numa == 0 and "place their groups on nodes" in numa.skipped
    assert (g_dflt, dflt.cpus) == (2, [])
    ((five, none),) = p2p_fan.placements(topo, ["node"], 5, 1, 4)
    assert none == 0 and "5 groups on nodes need 5 nodes; the allocation has 4" in five.skipped
    ((big, _),) = p2p_fan.placements(topo, ["core"], 9, 2, 1)
    assert (
        big.skipped == "9 groups of 2 inside one package need 18 cores; the largest package has 16"
    )
    assert p2p_fan.parse_fan(":4") == (None, 4) and p2p_fan.parse_fan("3") == (3, 1)
    for bad in ("1:1", "3:0", "x"):
        with pytest.raises(ValueError, match=f"--fan '{bad}'"):
            p2p_fan.parse_fan(bad)


@requires_openmpi
def test_all_runs_the_fifteen_and_passes_the_counts(cli):
    done = cli(
        "run", "p2p", "--dry-run", "--mpi", "openmpi", "--placements", "core,default", "--tests",
        "all", "--threads", "2:3", "--processes", "1", "--pairs", "64", "--fan", "64:1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = " ".join((done.stdout + done.stderr).split())
    assert "--tests latency,bw,bibw,mbw_mr,pingping,sendrecv,exchange," + ",".join(MORE) in out
    assert "--threads 2:3 --processes 2:1" in out
    # multi_lat: a launch of 2 x 64 ranks of its own; no package has 128 cores, so core
    # is skipped with why, and the launcher's placement runs oversubscribed, saying so
    assert "multi_lat placement core: 64 pairs inside a socket need 128 cores" in out
    assert "openmpi/default-64pairs/r1: ranks=128" in out and "--tests multi_lat " in out
    assert "multi_lat default: 128 ranks but" in out and "timings mean nothing" in out
    # the fan tests: a launch of 64 groups of 1, likewise
    assert "bw_fan_in,bw_fan_out placement core: 64 groups of 1 inside one package" in out
    assert "openmpi/default-64x1fan/r1: ranks=64" in out
    assert "--tests bw_fan_in,bw_fan_out --fan-ppn 1 " in out
    bad = cli("run", "p2p", "--mpi", "openmpi", "--tests", "latency_mt", "--threads", "0")
    assert bad.returncode == 2 and "--threads '0'" in bad.stderr
    assert "Traceback" not in bad.stderr
    fan = cli("run", "p2p", "--mpi", "openmpi", "--tests", "bw_fan_in", "--fan", "1:0")
    assert fan.returncode == 2 and "--fan '1:0'" in fan.stderr
    assert "built" not in fan.stderr  # refused before anything is built


@requires_openmpi
def test_suite_runs_stores_shows_and_exports_the_more_tests(cli):
    done = cli(
        "run", "p2p", "--tests", "latency,latency_persistent,bw_persistent,latency_mt,latency_mp",
        "--quick", "--repeat", "1", "--mpi", "openmpi", "--placements", "core", "--sizes", "0:8",
        "--threads", "1", "--out", str(cli.folder / "out"),
    )  # fmt: skip
    # --threads 1 (one receiver thread): two threads on a rank's one CPU take milliseconds
    # per round trip at some sizes, in OSU's osu_latency_mt as in ours (docs/osu.md)
    assert done.returncode == 0, done.stderr
    shown = cli("show", "last")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # rich wraps titles
    for osu in ("osu_latency_persistent", "osu_bw_persistent", "osu_latency_mt", "osu_latency_mp"):
        assert f"as {osu}:" in text
    exported = cli("export", "last", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    tests = {s["params"]["test"] for s in json.loads(exported.stdout)["samples"]}
    assert tests == {"latency", "latency_persistent", "bw_persistent", "latency_mt", "latency_mp"}
    osu = cli("export", "last", "--format", "osu")
    assert osu.returncode == 0, osu.stderr
    for title in (
        "Latency",
        "Latency Persistent",
        "Bandwidth Persistent",
        "Multi-threaded Latency",
    ):
        assert f"# OSU MPI {title} Test (hpcscope" in osu.stdout
    markdown = cli("export", "last", "--format", "markdown")
    assert "latency_mt core median (us)" in markdown.stdout
    assert sorted(p.name for p in (cli.folder / "out").rglob("p2p_latency_m*.svg")) == [
        "p2p_latency_mp.svg",
        "p2p_latency_mt.svg",
    ]


@requires_openmpi
def test_fan_on_nodes_plans_one_group_per_node(cli):
    """OSU's case on an allocation: a group per node, the ranks in blocks per node; OSU's
    own fan programs come along only with --osu-dir (a plan without it once failed)."""
    done = cli(
        "run", "p2p", "--on", "slurm", "--nodes", "3", "--dry-run", "--mpi", "openmpi",
        "--tests", "bw_fan_in,bw_fan_out", "--placements", "node",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = " ".join((done.stdout + done.stderr).split())
    assert "job array openmpi_node-3x1fan" in out and "--nodes=3" in out
    assert "--tests bw_fan_in,bw_fan_out --fan-ppn 1" in out
    assert "osu/" not in out


@requires_openmpi
def test_fan_runs_stores_shows_and_exports_under_osus_title(cli):
    """The fan tests end to end on this machine's cores: every core of package 0 a group."""
    done = cli(
        "run", "p2p", "--tests", "bw_fan_in,bw_fan_out", "--quick", "--repeat", "1",
        "--mpi", "openmpi", "--placements", "core", "--sizes", "1:64",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = " ".join(cli("show", "last").stdout.split())
    assert "as osu_bw_fan_in:" in text and "as osu_bw_fan_out:" in text
    osu = cli("export", "last", "--format", "osu").stdout
    assert osu.count("# OSU MPI Bandwidth Test (hpcscope: p2p, fan=") == 2
    samples = json.loads(cli("export", "last", "--format", "json").stdout)["samples"]
    assert {s["params"]["test"] for s in samples} == {"bw_fan_in", "bw_fan_out"}
    assert all(s["tags"]["fan"] == f"{s['params']['fan_groups']}x1" for s in samples)


requires_smpi = pytest.mark.skipif(
    not (have("smpirun") and have("smpicc")),
    reason="SimGrid's smpirun/smpicc not installed (apt-get install libsimgrid-dev)",
)


@pytest.mark.sim
@requires_smpi
def test_sim_runs_the_imb_patterns_and_persistent_tests_and_skips_threads_and_forks(cli):
    """--on sim: IMB-MPI1's three patterns, the persistent and the fan tests simulated for
    real, latency_mt and latency_mp skipped with SMPI's reason (node placement)."""
    done = cli(
        "run", "p2p", "--on", "sim", "--platform", "hydra:nodes=2,cores_per_socket=1",
        "--placements", "node", "--tests", "all", "--sizes", "0:4", "--quick", "--repeat", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    store = Store(cli.db)
    run_id = store.resolve("last")
    tests = {s["params"]["test"] for s in store.samples(run_id)}
    assert {"pingping", "sendrecv", "exchange", "latency_persistent", "bibw_persistent"} <= tests
    assert {"bw_fan_in", "bw_fan_out"} <= tests  # one group per simulated node: 2 ranks
    assert not tests & {"latency_mt", "latency_mp"}
    skipped = " ".join(n["text"] for n in store.run(run_id)["notes"] if n["kind"] == "skipped")
    assert "latency_mt skipped: SimGrid SMPI's MPI_Init_thread provides" in skipped
    assert "latency_mp skipped: SimGrid SMPI runs every rank as a thread" in skipped
    assert "multi_lat skipped: 2 pairs are 4 ranks, and --on sim places" in skipped


@pytest.mark.sim
@requires_smpi
def test_smpi_refuses_latency_mt_naming_the_thread_level_it_provides(tmp_path):
    """The program's own refusal, under a real library that provides less than
    MPI_THREAD_MULTIPLE (SMPI): one error record with the level, nothing measured."""
    from hpcscope import build as build_mod
    from hpcscope.launch.sim import SimBackend
    from hpcscope.machine import mpi as mpi_mod
    from hpcscope.machine.sim_machine import resolve
    from hpcscope.plan.job import Job

    mpi = mpi_mod.discover("smpi")[0]
    p2p = build_mod.find_program(build_mod.build(mpi), "p2p")
    job = Job(
        "p2p", "smpi/node/r1", [str(p2p), "--tests", "latency,latency_mt", "--max-size", "8"],
        mpi, 2, None, 2, tags={"mpi": "smpi", "placement": "node", "repeat": 1}, timeout_s=120,
    )  # fmt: skip
    store = Store(tmp_path / "sim.db")
    run_id = store.create_run("p2p", backend="sim")
    SimBackend(store, tmp_path / "sim", resolve("jupiter:nodes=2"), 1).submit(run_id, [job])
    (launch,) = store.launches(run_id)
    assert launch["status"] == "FAILED"
    (error,) = launch["errors"]
    assert "latency_mt needs MPI_THREAD_MULTIPLE" in error
    assert "provided MPI_THREAD_SINGLE" in error
    assert not store.samples(run_id)
