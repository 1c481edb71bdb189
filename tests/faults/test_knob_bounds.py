"""Bounds on every knob and input file (issue 32, part 7): each finding is refused before
anything is built, launched or stored, with exit 2 and one error line that names the
option and the fix, never a traceback, a hang or unbounded memory.

Most cases run in-process through click's CliRunner (the refusals come before any build,
so they take milliseconds); the ones that used to hang or grow without limit run the real
command in a subprocess under a time and memory limit. The store holds the synthetic runs
of tests/fixtures/report/build_store.py and must be unchanged after every refusal.
"""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hpcscope.cli.commands import main

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOPO = str(REPO / "tests" / "fixtures" / "topo" / "lcc3_2x6x2.xml")
CPUINFO = (REPO / "tests" / "fixtures" / "node" / "cpuinfo_haswell_e5_2680v3.txt").read_text()
SLURM_NODE = ["run", "node", "--on", "slurm", "--topology", TOPO]

# (command line, texts the one error line must contain). "@name" stands for a file of
# the `files` fixture. Every case is a finding of issue 32 or its sibling.
REFUSED: list[tuple[list[str], list[str]]] = [
    # --repeat, --repetitions, ranks: upper bounds (--repeat 100000000 grew to 1.35 GB)
    (["run", "p2p", "--repeat", "100000000", "--dry-run"], ["'--repeat'", "1<=x<=1000"]),
    (["run", "coll", "--repeat", "1001", "--dry-run"], ["'--repeat'", "at most 1000"]),
    (
        ["run", "coll", "--repetitions", "999999999999", "--dry-run"],
        ["'--repetitions'", "1<=x<=100000"],
    ),
    (["run", "lanes", "--repetitions", "100001", "--dry-run"], ["'--repetitions'", "100000"]),
    (["run", "coll", "--ranks", "100001", "--dry-run"], ["'--ranks'", "at most 100000 ranks"]),
    (["run", "coll", "--node-size", "99999999999", "--dry-run"], ["'--node-size'", "100000"]),
    (
        ["run", "coll", "--on", "slurm", "--nodes", "1000", "--ntasks-per-node", "1000"],
        ["--nodes 1000 x --ntasks-per-node 1000", "at most 100000 ranks"],
    ),
    (["run", "p2p", "--on", "slurm", "--array-limit", "99999999"], ["'--array-limit'", "10000"]),
    (["run", "lanes", "--on", "sim", "--ppn", "99999999999", "--dry-run"], ["'--ppn'", "100000"]),
    # simulated clusters: nodes=99999999999999 hung writing the platform
    (
        ["sim", "platform", "hydra:nodes=99999999999999", "-o", "x.xml"],
        ["nodes=", "at most 100000"],
    ),
    (
        ["sim", "platform", "hydra:cores_per_socket=5000", "-o", "x.xml"],
        ["360000 cores", "at most 100000 ranks", "lower nodes or cores_per_socket"],
    ),
    (["sim", "platform", "vsc3:nodes=600", "-o", "x.xml"], ["1200 hosts", "at most 1000 hosts"]),
    (["sim", "platform", "jupiter:lanes=1001", "-o", "x.xml"], ["lanes=1001", "at most 1000"]),
    (
        ["sim", "platform", "hydra:lane_bandwidth=1e308", "-o", "x.xml"],
        ["lane_bandwidth=1e+308", "up to 1e+18"],
    ),
    (["sim", "platform", "hydra:lane_latency=inf", "-o", "x.xml"], ["lane_latency=inf", "seconds"]),
    (
        ["run", "lanes", "--on", "sim", "--platform", "hydra:nodes=99999999999999", "--dry-run"],
        ["--platform", "at most 100000"],
    ),
    (["run", "lanes", "--on", "sim", "--platform", "@zero.xml", "--dry-run"], ["not a regular"]),
    (["run", "lanes", "--on", "sim", "--platform", "@radical.xml", "--dry-run"], ["1000 hosts"]),
    # list/history --since: OverflowError
    (["list", "--since", "1000000d"], ["--since '1000000d'", "at most 100 years"]),
    (["history", "--since", "1000000d"], ["--since '1000000d'", "at most 100 years"]),
    (["list", "--since", "99999999999999999999m"], ["--since", "at most 100 years"]),
    (["list", "--since", "0001-01-01T00:00:00+01:00"], ["--since", "give a date"]),
    # --cpuinfo and --topology: regular files below 16 MiB with sane values
    ([*SLURM_NODE, "--cpuinfo", "@mhz.cpuinfo", "--dry-run"], ["--cpuinfo", "cpu MHz", "100000"]),
    ([*SLURM_NODE, "--cpuinfo", "@clock.cpuinfo", "--dry-run"], ["--cpuinfo", "100 GHz"]),
    ([*SLURM_NODE, "--cpuinfo", "@family.cpuinfo", "--dry-run"], ["cpu family", "0..65535"]),
    ([*SLURM_NODE, "--cpuinfo", "/dev/zero", "--dry-run"], ["--cpuinfo /dev/zero", "regular"]),
    ([*SLURM_NODE, "--cpuinfo", "@fifo", "--dry-run"], ["--cpuinfo", "not a regular file"]),
    ([*SLURM_NODE, "--cpuinfo", "@big", "--dry-run"], ["--cpuinfo", "larger than 16 MiB"]),
    ([*SLURM_NODE, "--cpuinfo", "@folder", "--dry-run"], ["'--cpuinfo'", "is a directory"]),
    (
        ["run", "node", "--on", "slurm", "--topology", "/dev/zero", "--dry-run"],
        ["--topology /dev/zero", "not a regular file", "lstopo --of xml"],
    ),
    (
        ["run", "node", "--on", "slurm", "--topology", "@zero.xml", "--dry-run"],
        ["--topology", "not a regular file"],
    ),
    (["run", "p2p", "--on", "slurm", "--topology", "@big", "--dry-run"], ["larger than 16 MiB"]),
    (["run", "p2p", "--on", "slurm", "--topology", "@pus.xml", "--dry-run"], ["16384"]),
    # --peak NAME=VALUE: known names, positive finite values
    (["run", "node", "--peak", "fp64=1e308", "--dry-run"], ["--peak fp64=1e308", "up to 1e+09"]),
    (["run", "node", "--peak", "fp64=-1", "--dry-run"], ["--peak fp64=-1", "positive number"]),
    (["run", "node", "--peak", "fp64=nan", "--dry-run"], ["--peak fp64=nan", "GFLOP/s"]),
    (["run", "node", "--peak", "mem=1e400GB/s", "--dry-run"], ["--peak mem=1e400GB/s", "MB/s"]),
    (["run", "node", "--peak", "freq=200GHz", "--dry-run"], ["--peak freq=200GHz", "up to 100"]),
    (
        ["run", "node", "--peak", "bogus=1", "--dry-run"],
        ["no peak is called 'bogus'", "fp64, fp32", "disk_iops, net"],
    ),
    (["run", "node", "--peak", "disk=-5GB/s", "--dry-run"], ["--peak disk=-5GB/s", "MB/s"]),
    (
        ["run", "node", "--peak", "disk=2GB/s", "--peak", "disk=3GB/s", "--dry-run"],
        ["--peak disk given twice", "state each peak once"],
    ),
    # empty values are not "all"
    *[
        (["run", suite, option, "", "--dry-run"], [f"{option} ''", "empty", "leave"])
        for suite, option in [
            ("p2p", "--placements"),
            ("p2p", "--tests"),
            ("p2p", "--sizes"),
            ("p2p", "--cpus"),
            ("p2p", "--protocol"),
            ("p2p", "--osu-dir"),
            ("p2p", "--mpi"),
            ("p2p", "--time"),
            ("coll", "--collectives"),
            ("coll", "--algorithms"),
            ("coll", "--counts"),
            ("lanes", "--lanes"),
            ("lanes", "--platform"),
            ("node", "--threads"),
            ("node", "--disk-blocks"),
            ("node", "--disk-depths"),
            ("node", "--net-streams"),
            ("node", "--net-blocks"),
            ("node", "--mem-blocks"),
            ("node", "--latency-threads"),
            ("node", "--numa-threads"),
            ("node", "--disk-dir"),
        ]
    ],
    (["run", "p2p", "-o", "", "--dry-run"], ["-o/--out ''", "empty"]),
    # single-value options given twice: click kept the last silently
    (
        ["run", "p2p", "--mpi", "openmpi", "--mpi", "mpich", "--dry-run"],
        ["'--mpi'", "given 2 times", "give several libraries as --mpi openmpi,mpich"],
    ),
    (["run", "p2p", "--repeat", "3", "--repeat", "5", "--dry-run"], ["'--repeat'", "given 2"]),
    (["run", "coll", "--time", "10", "--time", "20", "--dry-run"], ["'--time'", "give it once"]),
    (
        ["run", "p2p", "--placements", "core", "--placements", "socket", "--dry-run"],
        ["'--placements'", "one comma list: --placements core,socket"],
    ),
    (
        ["run", "p2p", "--on", "slurm", "--exclusive", "--no-exclusive", "--dry-run"],
        ["'--exclusive'", "(--exclusive, --no-exclusive)"],
    ),
    (
        ["run", "node", "--disk-blocks", "4K", "--disk-blocks", "1M", "--dry-run"],
        ["'--disk-blocks'", "--disk-blocks 1K,4K"],
    ),
    (["run", "lanes", "--node-size", "2", "--node-size", "4"], ["'--node-size'", "given 2"]),
    (["run", "lanes", "--on", "sim", "--platform", "a", "--platform", "b"], ["'--platform'"]),
    (["run", "p2p", "--label", "a", "--label", "b", "--dry-run"], ["'--label'", "give it once"]),
    # --time in SLURM's forms, with the fields in range
    (["run", "p2p", "--time", "1-99:99:99", "--dry-run"], ["--time '1-99:99:99'", "0..23"]),
    (["run", "p2p", "--time", "1-24", "--dry-run"], ["--time '1-24'", "0..23"]),
    (["run", "p2p", "--time", "0:60", "--dry-run"], ["--time '0:60'", "0..59"]),
    (["run", "p2p", "--time", "1:60:00", "--dry-run"], ["--time '1:60:00'", "0..59"]),
    (["run", "p2p", "--time", "99999999999", "--dry-run"], ["--time", "longer than a year"]),
    (["run", "p2p", "--time", "366-0", "--dry-run"], ["--time '366-0'", "365-00:00:00"]),
    (["run", "p2p", "--time", "\u0663", "--dry-run"], ["--time", "not a SLURM time limit"]),
    # list-valued numbers: ASCII digits in range
    (["run", "coll", "--counts", "99999999999", "--dry-run"], ["--counts", "2147483647"]),
    (["run", "coll", "--counts", "\u00b2", "--dry-run"], ["--counts", "neither a count"]),
    (["run", "p2p", "--cpus", "99999999999,1", "--dry-run"], ["--cpus", "0..1048575"]),
    (["run", "lanes", "--lanes", "99999999", "--dry-run"], ["--lanes", "up to 100000"]),
    (["run", "node", "--threads", "99999", "--dry-run"], ["--threads '99999'", "1..16384"]),
    (["run", "node", "--disk-depths", "\u00b2", "--dry-run"], ["--disk-depths", "1..128"]),
    (["run", "node", "--mem-blocks", "9" * 100, "--dry-run"], ["--mem-blocks", "not a size"]),
]


def _snapshot(db: Path) -> list:
    with sqlite3.connect(db) as con:
        rows = [
            con.execute(f"SELECT * FROM {t}").fetchall() for t in ("runs", "launches", "samples")
        ]
    con.close()
    return rows


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A store and the hostile input files the cases name."""
    folder = tmp_path_factory.mktemp("bounds")
    db = folder / "hpcscope.db"
    store, _ = build_store.build(db)
    store.close()
    out = {"db": db, "folder": folder}
    for name, old, new in [
        ("mhz.cpuinfo", "cpu MHz\t\t: 2500.000", "cpu MHz\t\t: 1e308"),
        ("clock.cpuinfo", "@ 2.50GHz", "@ 1e308GHz"),
        ("family.cpuinfo", "cpu family\t: 6", "cpu family\t: 99999999999999999999"),
    ]:
        assert old in CPUINFO, old
        (folder / name).write_text(CPUINFO.replace(old, new))
    big = folder / "big"
    with open(big, "wb") as fh:  # sparse: 17 MiB of nothing on disk
        fh.truncate(17 << 20)
    os.mkfifo(folder / "fifo")
    (folder / "folder").mkdir()
    (folder / "zero.xml").symlink_to("/dev/zero")
    (folder / "radical.xml").write_text(
        '<platform version="4.1"><cluster id="c" prefix="n-" suffix="" '
        'radical="0-99999999999999" speed="1Gf" core="1" bw="1GBps" lat="1us"/></platform>'
    )
    pu = '<object type="PU" os_index="0" cpuset="0x1"/>'
    (folder / "pus.xml").write_text(
        '<?xml version="1.0"?><topology><object type="Machine" cpuset="0x1">'
        + pu * 16385
        + "</object></topology>"
    )
    for name in ("mhz.cpuinfo", "clock.cpuinfo", "family.cpuinfo", "big", "fifo", "folder"):
        out[name] = folder / name
    for name in ("zero.xml", "radical.xml", "pus.xml"):
        out[name] = folder / name
    return out


def _argv(files: dict[str, Path], args: list[str]) -> list[str]:
    return [str(files[a[1:]]) if a.startswith("@") else a for a in args]


def one_error_line(output: str) -> str:
    """The refusal's one line: click's usage and 'Try' lines aside, nothing else."""
    lines = [
        line
        for line in output.splitlines()
        if line.strip() and not line.startswith(("Usage:", "Try '"))
    ]
    assert len(lines) == 1, output
    assert lines[0].lower().startswith("error:"), output
    return lines[0]


@pytest.mark.parametrize("args,said", REFUSED, ids=[" ".join(a)[:60] for a, _ in REFUSED])
def test_bad_knob_is_refused_with_one_line(files, args, said, monkeypatch):
    monkeypatch.chdir(files["folder"])
    monkeypatch.setenv("COLUMNS", "2000")  # rich wraps at the terminal's width
    monkeypatch.setenv("HPCSCOPE_CACHE", str(files["folder"] / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(files["folder"] / "xdg-cache"))
    before = _snapshot(files["db"])
    result = CliRunner().invoke(main, ["--db", str(files["db"]), *_argv(files, args)])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert "Traceback" not in result.output
    line = one_error_line(result.output)
    for text in said:
        assert text in line, (text, line)
    assert _snapshot(files["db"]) == before
    assert not (files["folder"] / "x.xml").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "p2p", "--repeat", "100000000"],
        ["run", "coll", "--repetitions", "999999999999"],
        ["run", "node", "--peak", "fp64=1e308"],
        ["run", "p2p", "--mpi", "openmpi", "--mpi", "mpich"],
        ["run", "p2p", "--placements", ""],
    ],
    ids=lambda a: " ".join(a),
)
def test_refused_before_a_store_is_created(tmp_path, args):
    """Without --dry-run too: nothing is built, launched or stored."""
    db = tmp_path / "new.db"
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert not db.exists()


def _limited() -> None:
    """The child: 4 GiB of address space, so an unbounded read fails fast instead of
    eating the machine (--cpuinfo /dev/zero reached 24 GB before the fix)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize(
    "args,said",
    [
        (["run", "p2p", "--repeat", "100000000", "--dry-run"], "'--repeat'"),
        (["sim", "platform", "hydra:nodes=99999999999999", "-o", "x.xml"], "at most 100000"),
        ([*SLURM_NODE, "--cpuinfo", "/dev/zero", "--dry-run"], "not a regular file"),
        ([*SLURM_NODE, "--cpuinfo", "@fifo", "--dry-run"], "not a regular file"),
    ],
    ids=["repeat", "sim-nodes", "cpuinfo-dev-zero", "cpuinfo-fifo"],
)
def test_what_hung_or_grew_is_refused_by_the_real_command(files, tmp_path, args, said):
    from conftest import Cli

    cli = Cli(tmp_path)
    done = subprocess.run(
        cli.argv(*_argv(files, args)),
        cwd=tmp_path,
        env={
            **cli.env(),
            "COLUMNS": "2000",
            "HPCSCOPE_CACHE": str(tmp_path / "cache"),
            "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
            "OPENBLAS_NUM_THREADS": "1",  # its per-thread buffers count against the limit
        },
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limited,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert said in one_error_line(done.stderr)
    assert not cli.db.exists() and not (tmp_path / "x.xml").exists()


def test_values_in_range_still_pass(files, tmp_path):
    """The bounds refuse typos, not real values: a year of --time, 100 years of --since,
    the largest stated peaks, the largest simulated cluster."""
    from hpcscope.cli.common import peak_overrides
    from hpcscope.cli.store import parse_since
    from hpcscope.launch.slurm_script import time_limit_seconds
    from hpcscope.machine import sim_machine

    assert time_limit_seconds("365-00:00:00") == 365 * 86400
    assert time_limit_seconds("1-23:59:59") == 2 * 86400 - 1
    assert time_limit_seconds("48:00:00") == 48 * 3600  # no day part: hours unbounded
    assert time_limit_seconds("90:30") == 90 * 60 + 30  # MM:SS
    assert parse_since("36500d") is not None
    assert peak_overrides(("fp64=1e9", "net=100Gbit/s", "disk_iops=500k", "freq=2.6GHz"))
    machine = sim_machine.resolve("hydra:nodes=500,cores_per_socket=100")  # 1000 hosts
    assert machine.nodes == 500 and machine.cores_per_node == 200
    result = CliRunner().invoke(
        main,
        [
            "--db",
            str(tmp_path / "a.db"),
            "sim",
            "platform",
            "jupiter:nodes=4",
            "-o",
            str(tmp_path / "j.xml"),
        ],
    )
    assert result.exit_code == 0, result.output


# -- lanecoll's environment ---------------------------------------------------------------

LANECOLL_ENV = [
    (
        {"LANECOLL_PIPELINE_BLOCK": "99999999999999999999"},
        "LANECOLL_PIPELINE_BLOCK=99999999999999999999: expected a positive integer (bytes) "
        "up to 1000000000",
    ),
    ({"LANECOLL_PIPELINE_BLOCK": "+5"}, "LANECOLL_PIPELINE_BLOCK=+5: expected a positive"),
    (
        {"LANECOLL_NODE_SIZE": "99999999999999999999"},
        "LANECOLL_NODE_SIZE=99999999999999999999: expected a positive integer up to 1000000000",
    ),
    (
        {"LANECOLL_NODE_SIZES": "1,99999999999999999999"},
        "LANECOLL_NODE_SIZES=1,99999999999999999999: expected positive integers separated by "
        "commas, each up to 1000000000",
    ),
    ({"LANECOLL_TUNING": "@folder"}, "': is a directory"),
]


@pytest.fixture(scope="module")
def lanecoll_program():
    from hpcscope import build as build_mod
    from hpcscope.machine import mpi as mpi_mod

    if shutil.which("mpicc.openmpi") is None:
        pytest.skip("Open MPI not installed")
    (spec,) = mpi_mod.discover("openmpi")
    tree = build_mod.build(spec)
    return build_mod.find_program(tree, "coll"), next(tree.rglob("liblanecoll_pmpi.so"))


@pytest.mark.mpi
@pytest.mark.parametrize("env,said", LANECOLL_ENV, ids=[next(iter(e)) for e, _ in LANECOLL_ENV])
def test_lanecoll_refuses_out_of_range_variables_at_init(lanecoll_program, files, env, said):
    coll, pmpi = lanecoll_program
    env = {k: str(files[v[1:]]) if v.startswith("@") else v for k, v in env.items()}
    done = subprocess.run(
        [
            str(coll),
            "--collectives",
            "bcast",
            "--algorithms",
            "native",
            "--counts",
            "1",
            "--repetitions",
            "1",
            "--warmup",
            "0",
        ],
        env={
            **os.environ,
            "LD_PRELOAD": str(pmpi),
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            **env,
        },
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )
    assert done.returncode != 0 and said in done.stderr, done.stderr[-800:]
