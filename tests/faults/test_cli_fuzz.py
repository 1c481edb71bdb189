"""Property-based fuzzing of the command line's option values (issue 32, part 8).

Hypothesis draws hostile values (huge, negative, NaN and infinite numbers, empty strings,
unicode and control characters, very long strings, /dev/zero, FIFOs, directories,
symlinks, files over the size caps) for the options of `run p2p|coll|lanes|nbc|node
--dry-run`, `list`, `history`, `sim platform` and `export`, sometimes giving an option
twice. Whatever they hold, the command ends with exit 0, 1 or 2, never with an uncaught
exception (a traceback, or the "unexpected error: ... this is a bug" line that the CLI
prints instead), and creates no file outside its temporary folder.

It runs in-process through click's CliRunner (milliseconds per example). What a dry run
would do that is slow or reaches outside is replaced for the whole module: the build
(cmake, cached in .cache/build) returns a fake tree whose `coll --list-algorithms` answer
is the recorded one (tests/fixtures/coll), the MPI wrappers' version answers, hwloc's
topology and this node's facts are read once, and the SLURM probe job (sinfo/srun) is
refused, as when no cluster answers. About 2,700 examples in all, in about a minute.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcscope.cli.commands import main

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
RUNNER = CliRunner()
# Relative names a value may hold; after the fuzz none of them may exist outside the
# temporary folder (the commands run with that folder as their working directory).
RELATIVE = ["out", "x.xml", "results", "hpcscope-out", "sub/dir/out.xml", ".", ".."]
EXAMPLES: dict[str, dict[int, int]] = {}  # command -> exit code -> examples


def fuzz_settings(examples: int):
    """HPCSCOPE_FUZZ_SCALE=10 runs ten times as many examples (a longer search)."""
    return settings(
        max_examples=int(examples * float(os.environ.get("HPCSCOPE_FUZZ_SCALE", "1"))),
        deadline=None,
        database=None,  # no .hypothesis folder in the repository
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


# -- the world the commands see -------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A store, hostile files, and the slow or outward parts of a dry run replaced."""
    from hpcscope import build as build_mod
    from hpcscope.launch import slurm_topology
    from hpcscope.machine import mpi as mpi_mod
    from hpcscope.machine import node_facts
    from hpcscope.machine.topology import Topology

    folder = tmp_path_factory.mktemp("fuzz")
    store, _ = build_store.build(folder / "hpcscope.db")
    store.close()
    paths = {
        "zero": "/dev/zero",
        "null": "/dev/null",
        "dir": str(folder / "a-dir"),
        "fifo": str(folder / "fifo"),
        "big": str(folder / "big"),
        "junk": str(folder / "junk.xml"),
        "link-zero": str(folder / "zero.xml"),
        "link-dir": str(folder / "dir-link"),
        "dangling": str(folder / "dangling.xml"),
        "cpuinfo": str(FIXTURES / "node" / "cpuinfo_haswell_e5_2680v3.txt"),
        "topology": str(FIXTURES / "topo" / "lcc3_2x6x2.xml"),
        "platform": str(folder / "p.xml"),
        "missing": str(folder / "missing" / "file"),
    }
    (folder / "a-dir").mkdir()
    os.mkfifo(paths["fifo"])
    with open(paths["big"], "wb") as fh:
        fh.truncate(17 << 20)
    Path(paths["junk"]).write_bytes(b"\xff\xfe<platform>\x00" * 100)
    os.symlink("/dev/zero", paths["link-zero"])
    os.symlink(paths["dir"], paths["link-dir"])
    os.symlink(folder / "nowhere", paths["dangling"])
    Path(paths["platform"]).write_text(
        '<platform version="4.1"><cluster id="c" prefix="n-" suffix="" radical="0-3" '
        'speed="1Gf" core="2" bw="1GBps" lat="1us"/></platform>'
    )
    fake_tree = folder / "fake-build"
    fake_tree.mkdir()
    catalog = json.loads((FIXTURES / "coll" / "list_algorithms.json").read_text())
    answers: dict[tuple, str] = {}
    real_output = mpi_mod._output

    def output(argv):
        key = tuple(argv)
        if key not in answers:
            answers[key] = real_output(argv)
        return answers[key]

    def no_probe(*args, **kwargs):
        raise slurm_topology.SlurmError("no SLURM probe in the fuzz")

    topology, facts = Topology.local(), node_facts.local()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build_mod, "build", lambda mpi, jobs=2: fake_tree)
        mp.setattr(build_mod, "compiled_files", lambda tree: 0)
        mp.setattr(build_mod, "find_program", lambda tree, name: tree / name)
        mp.setattr(build_mod, "algorithm_catalog", lambda program, argv=None, env=None: catalog)
        mp.setattr(mpi_mod, "_output", output)
        mp.setattr(Topology, "local", classmethod(lambda cls: topology))
        mp.setattr(node_facts, "local", lambda: facts)
        mp.setattr(slurm_topology, "node_kinds", no_probe)
        mp.setattr(slurm_topology, "probe", no_probe)
        mp.setenv("HPCSCOPE_CACHE", str(folder / "cache"))
        mp.setenv("XDG_CACHE_HOME", str(folder / "xdg-cache"))  # error logs of a bug
        mp.setenv("COLUMNS", "120")
        mp.delenv("HPCSCOPE_DB", raising=False)
        mp.chdir(folder)
        watched = _outside(folder)
        yield {"folder": folder, "db": str(folder / "hpcscope.db"), "paths": paths}
    assert _outside(folder) == watched, "files appeared outside the temporary folder"
    total = sum(sum(codes.values()) for codes in EXAMPLES.values())
    print(f"\ncli fuzz: {total} examples; by command and exit code: {EXAMPLES}")


def _outside(folder: Path) -> dict[str, set[str]]:
    """What the commands could have written outside `folder`: the repository's top level
    and hpcscope-out, the home folder, /var/tmp's hpcscope folders (--disk-dir's default),
    and the real cache's top level (only names a fuzz value could produce are compared,
    as other processes may write there meanwhile)."""
    names = {r.split("/")[0] for r in RELATIVE if r.strip(".")} | {"hpcscope.db"}
    seen: dict[str, set[str]] = {}
    for where in (REPO, Path.home(), REPO / "hpcscope-out", REPO / ".cache", Path("/var/tmp")):
        try:
            entries = set(os.listdir(where))
        except OSError:
            entries = set()
        seen[str(where)] = {e for e in entries if e in names or "hpcscope" in e}
    return seen


def invoke(world, name: str, args: list[str]) -> None:
    result = RUNNER.invoke(main, ["--db", world["db"], *args])
    codes = EXAMPLES.setdefault(name, {})
    codes[result.exit_code] = codes.get(result.exit_code, 0) + 1
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(
            f"hpcscope {' '.join(map(repr, args))} raised {result.exception!r}\n{result.output}"
        ) from result.exception
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output, (args, result.output)
    # handle_errors turns an exception it does not know into this line, exit 1: a bug
    assert "this is a bug in hpcscope" not in result.output, (args, result.output)


# -- hostile values ---------------------------------------------------------------------

# No NUL: a real argv cannot hold one (C strings). Everything else can, and bytes that
# are not UTF-8 arrive as Python's surrogate escapes (U+DC80..U+DCFF), never as other
# lone surrogates.
escapes = st.integers(0xDC80, 0xDCFF).map(chr)
text = st.text(
    st.one_of(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), escapes),
    max_size=40,
)
long_text = st.sampled_from(["x" * 5000, "9" * 5000, "a," * 2000 + "a", "é" * 3000, "-" * 300])
numbers = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "2",
            "3",
            "7",
            "1000",
            "1001",
            "100000",
            "100001",
            "2147483647",
            "2147483648",
            "9223372036854775808",
            "99999999999999999999",
            "1e308",
            "1e400",
            "nan",
            "inf",
            "-inf",
            "0x10",
            "1_000",
            "+5",
            " 5",
            "5 ",
            "\u0663",
            "\u00b2",
            "1.5",
            "",
            " ",
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
words = st.sampled_from(
    [
        "core",
        "socket",
        "numa",
        "smt",
        "node",
        "latency",
        "bw",
        "bibw",
        "mbw_mr",
        "bcast",
        "allreduce",
        "alltoall",
        "native",
        "lane",
        "hier",
        "pipeline",
        "1p",
        "10p",
        "0p",
        "4K",
        "1M",
        "100M",
        "1G",
        "512",
        "openmpi",
        "mpich",
        "auto",
        "all",
        "smpi",
        "bogus",
    ]
)
item = st.one_of(words, numbers, text)
lists = st.one_of(
    st.lists(item, max_size=5).map(",".join),
    st.sampled_from([",", ",,", "a,,b", "core,core", " , ", "1,1"]),
    long_text,
)


def paths_of(world_paths: dict[str, str]):
    return st.one_of(st.sampled_from(sorted(world_paths.values()) + RELATIVE + [""]), text)


times = st.one_of(
    st.sampled_from(
        [
            "10",
            "0",
            "1:30",
            "1:30:00",
            "1-0",
            "1-12:30",
            "1-23:59:59",
            "1-99:99:99",
            "1-24",
            "0:60",
            "99999999999",
            "366-0",
            "365-00:00:00",
            "-1",
            "1-",
            "::",
            "1:2:3:4",
        ]
    ),
    numbers,
    text,
)
mpis = st.one_of(
    st.sampled_from(["openmpi", "mpich", "auto", "all", "openmpi,mpich", ",", "", "bogus"]),
    st.sampled_from(["/dev/zero", "/tmp", "/nonexistent/mpicc", "./mpicc"]),
    text,
)
fields = st.sampled_from(
    [
        "nodes",
        "sockets",
        "cores_per_socket",
        "lanes",
        "lane_bandwidth",
        "lane_latency",
        "core_speed",
        "taper",
        "switch",
        "lane_placement",
        "lat_factor",
        "name",
        "bogus",
    ]
)
platforms = st.one_of(
    st.tuples(
        st.sampled_from(["hydra", "vsc3", "jupiter"]),
        st.lists(st.tuples(fields, st.one_of(numbers, text)), max_size=3),
    ).map(lambda t: t[0] + (":" if t[1] else "") + ",".join(f"{k}={v}" for k, v in t[1])),
    st.sampled_from(["hydra", "jupiter:nodes=2", "hydra:nodes=50", "", ":", "x.xml"]),
    text,
)


@st.composite
def options(draw, table: dict[str, st.SearchStrategy], flags: list[str]) -> list[str]:
    """Some options of `table` with drawn values, an option now and then given twice,
    and some flags."""
    names = draw(st.lists(st.sampled_from(sorted(table)), max_size=5))
    args: list[str] = []
    for name in names:
        args += [name, draw(table[name])]
    args += draw(st.lists(st.sampled_from(flags), max_size=2, unique=True)) if flags else []
    return args


def run_table(paths) -> dict[str, st.SearchStrategy]:
    """The options every `run` subcommand has (common, SLURM, simulation)."""
    return {
        "--mpi": mpis,
        "--repeat": numbers,
        "-o": paths,
        "--label": st.one_of(text, long_text),
        "--time": times,
        "--nodes": numbers,
        "--ntasks-per-node": numbers,
        "--partition": text,
        "--array-limit": numbers,
        "--slurm-dir": paths,
        "--platform": platforms,
        "--ppn": numbers,
        "--launcher": st.sampled_from(["srun", "mpirun", "", "x"]),
    }


@st.composite
def backend(draw, paths) -> list[str]:
    """--on local (usually), slurm with a --topology and maybe --cpuinfo (never a probe
    job), or sim."""
    on = draw(st.sampled_from(["local", "local", "slurm", "sim"]))
    args = ["--on", on]
    if on == "slurm":
        args += ["--topology", draw(paths)]
        if draw(st.booleans()):
            args += ["--cpuinfo", draw(paths)]
    return args


# -- the properties -----------------------------------------------------------------------


@fuzz_settings(600)
@given(data=st.data())
def test_run_p2p_dry_run(world, data):
    paths = paths_of(world["paths"])
    table = {
        **run_table(paths),
        "--placements": lists,
        "--cpus": lists,
        "--sizes": st.one_of(
            st.sampled_from(["0:4M", "8:64K", "4M:0", "0:5G", ":", "1:1"]), numbers, text
        ),
        "--tests": lists,
        "--protocol": st.one_of(st.sampled_from(["hpcscope", "osu"]), text),
        "--osu-dir": paths,
    }
    args = data.draw(options(table, ["--quick", "--validate"]))
    invoke(world, "run p2p", ["run", "p2p", *data.draw(backend(paths)), *args, "--dry-run"])


COLL_TABLE = {
    "--ranks": numbers,
    "--node-size": numbers,
    "--repetitions": numbers,
    "--rank-layout": st.one_of(st.sampled_from(["alternate", "block", "default"]), text),
}


@fuzz_settings(500)
@given(data=st.data())
def test_run_coll_dry_run(world, data):
    paths = paths_of(world["paths"])
    table = {
        **run_table(paths),
        **COLL_TABLE,
        "--collectives": lists,
        "--algorithms": lists,
        "--counts": lists,
        "--sizes": st.one_of(st.sampled_from(["4:64K", "1:2", "64K:4", "0:5G"]), numbers, text),
        "--npmin": numbers,
        "--protocol": st.one_of(st.sampled_from(["hpcscope", "osu"]), text),
    }
    args = data.draw(options(table, ["--quick", "--regular-only", "--no-validate"]))
    invoke(world, "run coll", ["run", "coll", *data.draw(backend(paths)), *args, "--dry-run"])


@fuzz_settings(200)
@given(data=st.data())
def test_run_nbc_dry_run(world, data):
    paths = paths_of(world["paths"])
    table = {
        **run_table(paths),
        "--ranks": numbers,
        "--rank-layout": COLL_TABLE["--rank-layout"],
        "--collectives": st.one_of(
            st.sampled_from(["ibcast", "persistent", "neighborhood", "all", "ibcast,x"]), lists
        ),
        "--sizes": st.one_of(st.sampled_from(["1:64K", "4:1", "0:5G", "1:128M"]), numbers, text),
        "--iterations": numbers,
        "--probes": numbers,
        "--neighbor-dims": numbers,
        "--neighbor-radius": numbers,
        "--protocol": st.one_of(st.sampled_from(["hpcscope", "osu"]), text),
    }
    args = data.draw(options(table, ["--quick", "--no-validate"]))
    invoke(world, "run nbc", ["run", "nbc", *data.draw(backend(paths)), *args, "--dry-run"])


@fuzz_settings(300)
@given(data=st.data())
def test_run_lanes_dry_run(world, data):
    paths = paths_of(world["paths"])
    table = {**run_table(paths), **COLL_TABLE, "--lanes": lists}
    args = data.draw(options(table, ["--quick", "--regular-only"]))
    invoke(world, "run lanes", ["run", "lanes", *data.draw(backend(paths)), *args, "--dry-run"])


peaks = st.one_of(
    st.tuples(
        st.sampled_from(["fp64", "fp32", "int8", "freq", "mem", "disk", "disk_iops", "net", "x"]),
        st.one_of(numbers, st.sampled_from(["2GB/s", "-5GB/s", "100Gbit/s", "2.6GHz", "1e400T"])),
    ).map("=".join),
    text,
)


@fuzz_settings(500)
@given(data=st.data())
def test_run_node_dry_run(world, data):
    paths = paths_of(world["paths"])
    table = {
        **run_table(paths),
        "--threads": lists,
        "--disk-dir": paths,
        "--peak": peaks,
        "--disk-blocks": lists,
        "--disk-depths": lists,
        "--net-streams": lists,
        "--net-blocks": lists,
        "--mem-blocks": lists,
        "--latency-threads": lists,
        "--numa-threads": lists,
    }
    args = data.draw(options(table, ["--cpu", "--mem", "--disk", "--net", "--quick"]))
    invoke(world, "run node", ["run", "node", *data.draw(backend(paths)), *args, "--dry-run"])


FILTERS = {
    "--suite": st.one_of(words, text),
    "--label": st.one_of(text, st.sampled_from(["*", "?", "[", "%", "_", "LCC3*"])),
    "--since": st.one_of(
        st.sampled_from(
            [
                "7d",
                "0m",
                "1000000d",
                "36500d",
                "99999999999999999999h",
                "2026-11-24",
                "0001-01-01T00:00:00+01:00",
                "9999-12-31T23:59:59-23:59",
                "2026-13-01",
                "d",
            ]
        ),
        numbers.map(lambda n: n + "d"),
        text,
    ),
    "--status": st.one_of(st.sampled_from(["ok", "failed", "abandoned", "running"]), text),
}


@fuzz_settings(250)
@given(data=st.data())
def test_list(world, data):
    table = {
        **FILTERS,
        "--format": st.sampled_from(["table", "json", "", "csv"]),
        "--limit": numbers,
        "--offset": numbers,
    }
    invoke(world, "list", ["list", *data.draw(options(table, []))])


@pytest.mark.parametrize("option", ["--limit", "--offset"])
def test_list_paging_beyond_64_bits(world, option):
    """SQLite's integers are 64 bits: a larger page is refused by click, not by SQLite."""
    invoke(world, "list", ["list", option, str(2**63)])


@fuzz_settings(200)
@given(data=st.data())
def test_history(world, data):
    table = {
        **FILTERS,
        "--metric": st.one_of(st.sampled_from(["latency", "bandwidth", "time"]), text),
        "--threshold": numbers,
        "--format": st.sampled_from(["table", "json", ""]),
    }
    invoke(world, "history", ["history", *data.draw(options(table, []))])


@fuzz_settings(250)
@given(data=st.data())
def test_sim_platform(world, data):
    outs = st.sampled_from(
        [
            "x.xml",
            "sub/dir/out.xml",
            "",
            "/dev/null",
            "/dev/full",
            world["paths"]["dir"],
            world["paths"]["link-zero"],
            world["paths"]["fifo"] + ".xml",
        ]
    )
    name = data.draw(st.one_of(platforms, paths_of(world["paths"])))
    args = ["sim", "platform", name, "-o", data.draw(outs)]
    if data.draw(st.booleans()):
        args += ["--ppn", data.draw(numbers)]
    invoke(world, "sim platform", args)


@fuzz_settings(150)
@given(data=st.data())
def test_export(world, data):
    run = data.draw(st.one_of(st.sampled_from(["1", "2", "3", "last", "0", "-1"]), numbers, text))
    fmt = data.draw(st.sampled_from(["csv", "json", "markdown", "osu", "", "xml"]))
    invoke(world, "export", ["export", run, "--format", fmt])


def test_the_fuzz_tried_enough() -> None:
    """Runs after the fuzz tests (file order): with the import fuzz (test_import_hostile.py)
    the hostile corpus is over 5,000 values (issue 32's target)."""
    total = sum(sum(codes.values()) for codes in EXAMPLES.values())
    if not total:
        pytest.skip("the fuzz tests did not run (deselected)")
    assert total >= 2500, EXAMPLES
