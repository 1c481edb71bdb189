"""The compute-node topology of SLURM plans without a cluster: sinfo and srun answers are
canned (a fake runner), the cache lives in a temporary folder (issue 18, part 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hpcscope.launch import slurm_topology as st
from hpcscope.launch.slurm import SlurmError
from hpcscope.launch.slurm_script import SlurmOptions
from hpcscope.machine.topology import TopologyError

FIXTURES = Path(__file__).parent / "fixtures" / "topo"
LCC3 = (FIXTURES / "lcc3_2x6x2.xml").read_text()
SINFO_ONE_KIND = "n1|debug*|24|2:6:2|ib,x5650\nn2|debug*|24|2:6:2|ib,x5650\nn3|long|24|2:6:2|ib\n"
SINFO_TWO_KINDS = (
    "n1|mixed*|24|2:6:2|x5650\nn2|mixed*|24|2:6:2|x5650\n"
    "g1|mixed*|64|2:16:2|epyc\ng2|mixed*|64|2:16:2|epyc\n"
)


class FakeSlurm:
    """Answers sinfo with `sinfo` and the probe (srun) with `xml`; records every call."""

    def __init__(self, sinfo: str, xml: str = LCC3, probe_rc: int = 0) -> None:
        self.sinfo, self.xml, self.probe_rc = sinfo, xml, probe_rc
        self.calls: list[list[str]] = []

    def __call__(self, argv, timeout=None, env=None, cwd=None):
        self.calls.append(list(argv))
        if argv[0] == "sinfo":
            return subprocess.CompletedProcess(argv, 0, self.sinfo, "")
        if argv[0] == "srun":
            err = "" if self.probe_rc == 0 else "srun: error: Unable to allocate resources"
            return subprocess.CompletedProcess(argv, self.probe_rc, self.xml, err)
        raise AssertionError(f"unexpected command {argv}")

    @property
    def probes(self) -> int:
        return sum(1 for c in self.calls if c[0] == "srun")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLURM_CONF", "/etc/slurm/test.conf")
    return tmp_path / "cache"


def test_probe_once_then_cache_until_the_nodes_change(cache: Path) -> None:
    fake = FakeSlurm(SINFO_ONE_KIND)
    first = st.node_topology(SlurmOptions(), runner=fake)
    assert first.source == "probe" and fake.probes == 1
    assert len(first.topology.packages) == 2 and first.partition == "debug"
    assert Path(first.path).parent == cache / "slurm-topology"
    again = st.node_topology(SlurmOptions(), runner=fake)
    assert again.source == "cache" and fake.probes == 1 and again.sha256 == first.sha256
    # refresh (hpcscope topo --on slurm) probes on purpose
    assert st.node_topology(SlurmOptions(), refresh=True, runner=fake).source == "probe"
    assert fake.probes == 2
    # other nodes in the partition (a new layout in slurm.conf): a new key, a new probe
    changed = FakeSlurm(SINFO_ONE_KIND.replace("2:6:2", "2:8:2").replace("|24|", "|32|"))
    assert st.node_topology(SlurmOptions(), runner=changed).source == "probe"


def test_probe_job_asks_for_the_run_s_nodes() -> None:
    fake = FakeSlurm(SINFO_ONE_KIND)
    options = SlurmOptions(partition="long", constraint="ib", account="p7", qos="short")
    st.node_topology(options, runner=fake)
    (probe,) = [c for c in fake.calls if c[0] == "srun"]
    for word in ("-N1", "-n1", "--exclusive", "--partition=long", "--constraint=ib"):
        assert word in probe
    assert "--account=p7" in probe and "--qos=short" in probe
    assert "lstopo-no-graphics --of xml" in probe[-1]


def test_heterogeneous_partition_is_refused_naming_the_nodes() -> None:
    with pytest.raises(SlurmError) as err:
        st.node_topology(SlurmOptions(), runner=FakeSlurm(SINFO_TWO_KINDS))
    text = str(err.value)
    assert "partition 'mixed' has 2 kinds of nodes" in text
    assert "n1,n2 (2 socket(s) x 6 core(s) x 2 thread(s), 24 CPUs)" in text
    assert "g1,g2 (2 socket(s) x 16 core(s) x 2 thread(s), 64 CPUs)" in text
    assert "--constraint" in text
    # one kind picked by its feature: planned
    found = st.node_topology(SlurmOptions(constraint="x5650"), runner=FakeSlurm(SINFO_TWO_KINDS))
    assert found.kinds[0].nodes == ["n1", "n2"]


def test_unknown_partition_and_features_are_refused() -> None:
    with pytest.raises(SlurmError, match="partition 'gpu' has no nodes"):
        st.node_topology(SlurmOptions(partition="gpu"), runner=FakeSlurm(SINFO_ONE_KIND))
    with pytest.raises(SlurmError, match="no node of partition 'debug' has the features"):
        st.node_topology(SlurmOptions(constraint="a100"), runner=FakeSlurm(SINFO_ONE_KIND))


def test_failed_probe_says_how_to_pass_the_topology() -> None:
    with pytest.raises(SlurmError, match="pass --topology node.xml"):
        st.node_topology(SlurmOptions(), runner=FakeSlurm(SINFO_ONE_KIND, probe_rc=1))
    with pytest.raises(SlurmError, match="hpcscope cannot use"):
        st.node_topology(SlurmOptions(), runner=FakeSlurm(SINFO_ONE_KIND, xml="<topology/>"))


def test_topology_file_needs_no_slurm_and_bad_files_name_the_fix(tmp_path: Path) -> None:
    fake = FakeSlurm(SINFO_TWO_KINDS)
    found = st.node_topology(SlurmOptions(), str(FIXTURES / "lcc3_2x6x2.xml"), runner=fake)
    assert found.source == "file" and fake.calls == [] and len(found.topology.cores) == 12
    with pytest.raises(TopologyError, match=r"--topology .*nope.xml: cannot read it"):
        st.node_topology(SlurmOptions(), str(tmp_path / "nope.xml"), runner=fake)
    junk = tmp_path / "junk.xml"
    junk.write_text("this is not XML")
    with pytest.raises(TopologyError, match=r"junk.xml: hwloc XML does not parse.*lstopo --of xml"):
        st.node_topology(SlurmOptions(), str(junk), runner=fake)


def test_constraint_filter_reads_plain_expressions_only() -> None:
    assert st._constraint_filter("a&b")({"a", "b", "c"})
    assert not st._constraint_filter("a&b")({"a"})
    assert st._constraint_filter("a|b")({"b"})
    assert st._constraint_filter("[a*2&b]") is None


# ----- the command line: bad input -> exit 2, one line naming the value and the fix -----


def test_cli_refuses_a_bad_topology_file(cli, tmp_path: Path) -> None:
    junk = tmp_path / "node.xml"
    junk.write_text("<html>not hwloc</html>")
    done = cli("run", "p2p", "--on", "slurm", "--topology", str(junk), "--dry-run")
    assert done.returncode == 2
    text = " ".join(done.stderr.split())
    assert f"--topology {junk}" in text and "lstopo --of xml" in text
    assert not cli.db.exists()


def test_cli_refuses_topology_off_slurm_and_slurm_options_without_on(cli) -> None:
    done = cli("run", "p2p", "--topology", str(FIXTURES / "lcc3_2x6x2.xml"), "--dry-run")
    assert done.returncode == 2 and "--on slurm" in done.stderr
    done = cli("topo", "--partition", "short")
    assert done.returncode == 2 and "add --on slurm" in done.stderr


def test_cli_plans_coll_for_the_given_nodes_not_this_machine(cli) -> None:
    """32 cores per node in the file: 2 x 32 ranks are not oversubscribed (no --overcommit),
    although this machine has 2 cores."""
    node = str(FIXTURES / "2x16_nosmt.xml")
    done = cli(
        "run",
        "coll",
        "--on",
        "slurm",
        "--topology",
        node,
        "--nodes",
        "2",
        "--ntasks-per-node",
        "32",
        "--mpi",
        "openmpi",
        "--collectives",
        "bcast",
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    assert "--ntasks=64" in done.stdout and "--overcommit" not in done.stdout
    assert "oversubscribed" not in done.stderr


def test_cli_plans_the_lcc3_placements_from_the_nodes_file(cli) -> None:
    """The LCC3 exercise from a login node with one socket: core, socket and node are all
    planned with the CPU numbers of the two-socket node (P#0 and P#12 are one core's two
    hardware threads there), and default leaves binding to srun."""
    done = cli(
        "run",
        "p2p",
        "--on",
        "slurm",
        "--topology",
        str(FIXTURES / "lcc3_2x6x2.xml"),
        "--nodes",
        "2",
        "--mpi",
        "openmpi",
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    heads = [l for l in done.stdout.splitlines() if l.startswith("# ---- job array")]
    arrays = [l.split()[4].rstrip(":") for l in heads]
    assert arrays == [f"openmpi_{p}" for p in ("default", "smt", "core", "socket", "node")]
    binds = [l for l in done.stdout.splitlines() if l.startswith("srun ")]
    assert "--cpu-bind" not in binds[0]  # default
    assert [b.split("--cpu-bind=map_cpu:")[1].split()[0] for b in binds[1:4]] == [
        "0,12",
        "0,1",
        "0,6",
    ]
    assert "c=(0 1)" in binds[4]  # node: one rank per node, by global rank
