"""Bad values through the real command line: each is refused before anything runs, with
exit 2, a message naming the value and the fix, no traceback, and the store unchanged.

The store holds the synthetic runs of tests/fixtures/report/build_store.py: 1 and 3 are
p2p runs, 2 is a coll + node run.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

# (command line, text the message must contain). Planning-only cases use --dry-run or
# fail before planning, so nothing is built, launched or stored.
BAD = [
    (["run", "node", "--cpu", "--threads", "0", "--dry-run"], "--threads '0'"),
    (["run", "node", "--cpu", "--threads", "-1", "--dry-run"], "--threads '-1'"),
    (["show", "12345678901234567890123"], "neither a run id"),
    (["show", "999"], "no run 999"),
    (["slurm", "status", "999"], "no run 999"),
    (["slurm", "collect", "999"], "no run 999"),
    (["slurm", "cancel", "999"], "no run 999"),
    (["report", "1", "-o", "/proc/hpcscope-report"], "choose another place"),
    (["run", "p2p", "--sizes", "0:5G", "--dry-run"], "does not fit an MPI count"),
    (["run", "p2p", "--sizes", "0:99999999999999999999", "--dry-run"], "too large"),
    (["run", "p2p", "--cpus", "0", "--dry-run"], "give two CPUs"),
    (["run", "p2p", "--cpus", "-3,1", "--dry-run"], "--cpus '-3,1'"),
    (["run", "p2p", "--repeat", "0", "--dry-run"], "'--repeat': 0 is not in the range"),
    (["run", "coll", "--ranks", "0", "--dry-run"], "'--ranks': 0 is not in the range"),
    (["run", "coll", "--repetitions", "0", "--dry-run"], "'--repetitions': 0"),
    (["run", "coll", "--node-size", "0", "--dry-run"], "'--node-size': 0"),
    (["run", "p2p", "--on", "slurm", "--nodes", "0", "--dry-run"], "'--nodes': 0"),
    (["run", "p2p", "--placements", "core,,core", "--dry-run"], "empty item"),
    (["run", "p2p", "--placements", "core,core", "--dry-run"], "core named twice"),
    (["run", "p2p", "--mpi", ",", "--dry-run"], "names no MPI library"),
    (["compare", "1", "3", "--threshold", "nan"], "--threshold nan"),
    (["compare", "1", "3", "--threshold", "-5"], "'--threshold': -5.0 is not in the range"),
    (["tune", "2", "-o", "t.json", "--mpi", "bogus"], "--mpi bogus"),
    (["tune", "2"], "-o/--out FILE"),
    (["show", "[/x]"], "'[/x]' is neither a run id"),
    (["run", "p2p", "--out", "/proc/hpcscope-out", "--mpi", "openmpi"], "cannot write there"),
    (["run", "p2p", "--placements", "[/x]", "--dry-run"], "[/x]"),
]


def _snapshot(db: Path) -> list:
    with sqlite3.connect(db) as con:
        return [
            con.execute(f"SELECT * FROM {t}").fetchall() for t in ("runs", "launches", "samples")
        ]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    from conftest import Cli

    folder = tmp_path_factory.mktemp("bad")
    cli = Cli(folder)
    store, _ = build_store.build(cli.db)
    store.close()
    return cli


@pytest.mark.parametrize("args,said", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_value_is_refused_with_its_fix(filled, args, said):
    before = _snapshot(filled.db)
    done = filled(*args, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert _snapshot(filled.db) == before


def test_read_only_commands_do_not_create_a_store(tmp_path):
    from conftest import HPCSCOPE

    typo = tmp_path / "typo.db"
    for args in (["show", "last"], ["list"], ["export", "last"], ["report", "last"], ["history"]):
        done = subprocess.run(
            [*HPCSCOPE, "--db", str(typo), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 2 and "no store at" in done.stderr, done.stderr
        assert not typo.exists()


def test_terminal_output_is_plain_text(filled):
    """A label with Rich markup and an escape sequence reaches the terminal as text."""
    store_path = filled.db
    with sqlite3.connect(store_path) as con:
        con.execute(
            "UPDATE runs SET label = ? WHERE id = 1",
            ("openmpi [/opt/ompi-5 build] \x1b]0;owned\x07\x1b[31mred",),
        )
    done = filled("list")
    assert done.returncode == 0, done.stderr
    assert "[/opt/ompi-5 build]" in done.stdout
    assert "\x1b]0;" not in done.stdout and "\x1b[31m" not in done.stdout


def test_osu_export_of_a_run_without_message_sizes_is_refused(tmp_path):
    from conftest import Cli

    from hpcscope.results.store import Store

    cli = Cli(tmp_path)
    with Store(cli.db) as store:
        run = store.create_run("node")
        launch = store.add_launch(run, "node/cpu")
        store.add_record(launch, build_store.meta("cpu", "n1"))
        store.add_record(
            launch,
            {
                "type": "sample",
                "metric": "flops",
                "unit": "GFLOP/s",
                "params": {"threads": 1},
                "values": [10.0],
                "warmups": 0,
            },
        )
    done = cli("export", str(run), "--format", "osu")
    assert done.returncode == 2 and "no OSU form" in done.stderr, done.stderr


def test_a_damaged_store_is_named_by_every_command(tmp_path):
    """Issue 17: with a corrupt page `list` crashed while show, report and export read on
    without a warning."""
    from conftest import Cli

    cli = Cli(tmp_path)
    store, _ = build_store.build(cli.db)
    store.close()
    clean = cli.db.read_bytes()
    page = 4096
    assert len(clean) > 6 * page
    for where in (3, len(clean) // page - 1):  # an index page, the last data page
        data = bytearray(clean)
        data[where * page : (where + 1) * page] = b"\xff" * page  # turned to garbage
        cli.db.write_bytes(bytes(data))
        for args in (["list"], ["show", "1"], ["export", "1"], ["report", "1"], ["history"]):
            done = cli(*args)
            assert done.returncode == 2, (where, args, done.stderr)
            assert "is damaged" in done.stderr and "Traceback" not in done.stderr


BAD_IMPORTS = [
    ("plain.txt", "hello", "not an hpcscope export (not JSON"),
    ("list.json", "[]", "not an hpcscope export (a JSON list"),
    ("old.json", '{"run": {}, "samples": [], "pooled": []}', "schema None"),
    ("newer.json", '{"schema": "hpcscope.export/9", "run": {}}', "upgrade hpcscope"),
    ("foreign.db", None, "not an hpcscope store"),
]


@pytest.mark.parametrize("name,content,said", BAD_IMPORTS, ids=[b[0] for b in BAD_IMPORTS])
def test_import_of_a_bad_file_is_refused_and_changes_nothing(filled, name, content, said):
    path = filled.folder / name
    if content is None:
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE t (x)")
    else:
        path.write_text(content)
    before = _snapshot(filled.db)
    done = filled("import", str(path), timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = " ".join(done.stderr.split())  # the console wraps long paths
    assert said in message, done.stderr
    assert message.count("error:") == 1 and message.startswith("error:"), done.stderr
    assert "Traceback" not in done.stderr
    assert _snapshot(filled.db) == before


def test_import_of_an_export_through_the_cli(filled, tmp_path):
    exported = filled("export", "1", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    path = tmp_path / "run1.json"
    path.write_text(exported.stdout)
    from conftest import Cli

    laptop = Cli(tmp_path)
    done = laptop("import", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1" and "imported run 1" in done.stderr
    again = laptop("export", "1", "--format", "json")
    assert again.stdout == exported.stdout  # run 1 in both stores: even the ids agree
