"""Symlinks planted in an output folder are never written through (issue 32, part 1).

Every writer of an output file goes through hpcscope.safe_write: a new temporary in the
same folder (O_EXCL | O_NOFOLLOW), then os.replace, which replaces a symlink at the path
rather than writing into its target. For each writer reachable without MPI (the helper
itself, the write-test probe of `run -o`, `report -o`, `compare --html`, `tune -o`,
`sim platform -o`, the output writers of the p2p, coll and node suites, the rankfile of
a launch, the lock files), a symlink named like each output points to a victim file
outside the folder; the writer runs, and the victim must be byte-identical and the output
a regular file.

Folders (issue 43, finding 3): a folder hpcscope makes below the one the user named
(hpcscope-out/run-ID, <out>/launch/JOB for rankfiles, hpcscope-out/report) planted as a
link, or owned by another user, is refused with one line naming it (exit 2) and nothing
is written behind it; the folder the user names may itself be a link."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner

from hpcscope import runner, safe_write
from hpcscope.cli.commands import main
from hpcscope.launch.launcher import LaunchSpec
from hpcscope.plan.job import Job
from hpcscope.results.store import Store
from hpcscope.suites import coll, node, p2p

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402

RUNNER = CliRunner()


class Victims:
    """Files outside the output folder, and symlinks to them planted in it."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "victims"
        self.folder.mkdir(exist_ok=True)
        self.planted: dict[Path, Path] = {}  # link -> victim

    def plant(self, folder: Path, names: Iterable[str]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            victim = self.folder / f"{len(self.planted)}-{name}"
            victim.write_bytes(b"precious: " + name.encode() + b"\n")
            os.symlink(victim, folder / name)
            self.planted[folder / name] = victim

    def check(self, written: Iterable[str | Path] = ()) -> None:
        """Every victim as it was; every planted name that was written (or all the planted
        names given in `written`) now a regular file of its own."""
        for link, victim in self.planted.items():
            assert victim.read_bytes() == b"precious: " + link.name.encode() + b"\n", victim
        for path in written:
            info = os.lstat(path)
            assert stat.S_ISREG(info.st_mode), f"{path} is not a regular file"

    def written(self) -> list[Path]:
        """The planted names that are no longer links (the writer replaced them)."""
        return [link for link in self.planted if not link.is_symlink()]


def no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def hpcscope(db: Path, *args: str) -> None:
    result = RUNNER.invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 0, (result.output, result.exception)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    folder = tmp_path_factory.mktemp("store")
    store, runs = build_store.build(folder / "store.db")
    store.close()
    return folder / "store.db", runs


def outputs_of(write: Callable[[Path], object], folder: Path) -> list[str]:
    """The names `write` gives its outputs: it writes once into a clean folder."""
    folder.mkdir(parents=True)
    write(folder)
    names = sorted(p.name for p in folder.iterdir())
    assert names, "the writer wrote nothing"
    return names


def assert_not_written_through(
    tmp_path: Path, write: Callable[[Path], object], at_least: Iterable[str] = ()
) -> list[str]:
    """Learn the writer's outputs, plant a link for each, write again, check."""
    names = outputs_of(write, tmp_path / "clean")
    assert set(at_least) <= set(names), names
    victims = Victims(tmp_path)
    out = tmp_path / "out"
    victims.plant(out, names)
    write(out)
    victims.check(out / n for n in names)
    no_temporaries(out)
    return names


# -- the helper ---------------------------------------------------------------------------


def test_write_text_and_bytes_replace_a_planted_link(tmp_path: Path) -> None:
    victims = Victims(tmp_path)
    out = tmp_path / "out"
    victims.plant(out, ["a.txt", "b.bin", "c.csv"])
    safe_write.write_text(out / "a.txt", "new text\n")
    safe_write.write_bytes(out / "b.bin", b"\x00new")
    with safe_write.open_for_write(out / "c.csv", newline="") as fh:
        fh.write("x,y\r\n")
    victims.check(out / n for n in ("a.txt", "b.bin", "c.csv"))
    assert (out / "a.txt").read_text() == "new text\n"
    assert (out / "b.bin").read_bytes() == b"\x00new"
    assert (out / "c.csv").read_bytes() == b"x,y\r\n"
    no_temporaries(out)


def test_a_failed_write_leaves_the_path_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("old\n")
    with pytest.raises(RuntimeError):
        with safe_write.open_for_write(tmp_path / "keep.txt") as fh:
            fh.write("half")
            raise RuntimeError("writer failed")
    assert (tmp_path / "keep.txt").read_text() == "old\n"
    no_temporaries(tmp_path)
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        safe_write.write_text(tmp_path / "dir", "x")
    no_temporaries(tmp_path)


def test_permissions_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        safe_write.write_text(tmp_path / "f", "x")
        safe_write.write_text(tmp_path / "s", "#!/bin/sh\n", perms=0o755)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "f").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(tmp_path / "s").st_mode) == 0o750


def test_a_symlinked_folder_is_followed(tmp_path: Path) -> None:
    """Documented choice: the folder a user names may be a link (scratch space)."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "linked")
    safe_write.write_text(tmp_path / "linked" / "x.txt", "x")
    assert (real / "x.txt").read_text() == "x"


def test_probe_never_touches_an_existing_file(tmp_path: Path) -> None:
    victims = Victims(tmp_path)
    out = tmp_path / "out"
    victims.plant(out, [".hpcscope-write-test"])
    safe_write.probe_writable(out)
    runner.check_writable(out)  # `run -o DIR` checks the folder before a run exists
    victims.check()
    assert (out / ".hpcscope-write-test").is_symlink()  # not removed either
    assert sorted(p.name for p in out.iterdir()) == [".hpcscope-write-test"]
    out.chmod(0o500)
    try:
        if not os.access(out, os.W_OK):  # root writes anyway
            with pytest.raises(runner.UsageError, match="cannot write there"):
                runner.check_writable(out)
    finally:
        out.chmod(0o700)


def test_lock_and_log_are_opened_without_following_or_truncating(tmp_path: Path) -> None:
    victims = Victims(tmp_path)
    out = tmp_path / "out"
    victims.plant(out, [".lock", ".collect.lock", "build.log"])
    for name in (".lock", ".collect.lock"):
        with pytest.raises(OSError):
            safe_write.open_lock(out / name)
    with pytest.raises(OSError):
        safe_write.open_append(out / "build.log")
    victims.check()
    (out / "real.lock").write_text("kept\n")
    with safe_write.open_lock(out / "real.lock"):
        pass
    assert (out / "real.lock").read_text() == "kept\n"  # a lock is never truncated


# -- the writers --------------------------------------------------------------------------


def test_report(filled, tmp_path: Path) -> None:
    db, runs = filled

    def write(folder: Path) -> None:
        hpcscope(db, "report", *map(str, runs), "-o", str(folder))

    names = assert_not_written_through(tmp_path, write, ["index.html"])
    assert any(n.startswith(f"run{runs[0]}_") and n.endswith(".csv") for n in names)
    assert any(n.startswith("compare_run") for n in names)


def test_compare_html(filled, tmp_path: Path) -> None:
    db, runs = filled

    def write(folder: Path) -> None:
        hpcscope(db, "compare", str(runs[0]), str(runs[2]), "--html", str(folder / "cmp.html"))

    assert assert_not_written_through(tmp_path, write) == ["cmp.html"]


def test_tune(filled, tmp_path: Path) -> None:
    db, runs = filled

    def write(folder: Path) -> None:
        hpcscope(db, "tune", str(runs[1]), "-o", str(folder / "tuning.json"))

    assert assert_not_written_through(tmp_path, write) == ["tuning.json"]


def test_sim_platform(tmp_path: Path) -> None:
    def write(folder: Path) -> None:
        out = str(folder / "hydra.xml")
        hpcscope(tmp_path / "unused.db", "sim", "platform", "hydra", "-o", out, "--ppn", "2")

    names = assert_not_written_through(tmp_path, write)
    assert names == ["hydra.xml", "hydra.xml.hostfile"]


@pytest.mark.parametrize(
    ("suite", "which", "expected"),
    [
        (p2p, 0, ["p2p_table.md", "p2p_samples.csv"]),
        (coll, 1, ["coll_table.csv", "coll_table.md", "coll_table.txt"]),
        (node, 1, ["node_table.csv"]),
    ],
    ids=["p2p", "coll", "node"],
)
def test_suite_outputs(filled, tmp_path: Path, suite, which: int, expected: list[str]) -> None:
    """The output writers `run` calls after a run, on stored samples (no MPI needed)."""
    db, runs = filled

    def write(folder: Path) -> None:
        with Store(db, read_only=True) as store:
            suite.outputs(store, runs[which], folder)

    assert_not_written_through(tmp_path, write, expected)


def test_rankfile_of_a_launch(tmp_path: Path) -> None:
    spec = LaunchSpec(
        ["--rankfile", "{rankfile}", "{agent}"],
        {"rankfile": "rank 0=n1 slot=0\n", "agent": "#!/bin/sh\nexec true\n"},
    )
    victims = Victims(tmp_path)
    out = tmp_path / "launch"
    victims.plant(out, ["rankfile", "agent"])
    args = spec.materialize(out)
    victims.check([out / "rankfile", out / "agent"])
    assert args == ["--rankfile", str(out / "rankfile"), str(out / "agent")]
    assert (out / "rankfile").read_text() == "rank 0=n1 slot=0\n"
    assert os.access(out / "agent", os.X_OK) and not os.access(out / "rankfile", os.X_OK)


# -- folders hpcscope makes below the folder the user named (issue 43, finding 3) ---------


def test_ensure_dir_makes_or_accepts_only_own_folders(tmp_path: Path) -> None:
    root = tmp_path / "out"
    made = safe_write.ensure_dir(root, "a/b")
    assert made == root / "a" / "b" and made.is_dir()
    assert safe_write.ensure_dir(root, "a/b") == made  # our own folder: used again
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / "planted")
    (root / "file").write_text("x")
    for name, why in [
        ("planted", "it is a symbolic link (planted?)"),
        ("planted/x", "it is a symbolic link (planted?)"),
        ("file", "it is not a folder"),
    ]:
        with pytest.raises(safe_write.UnsafeFolder) as refused:
            safe_write.ensure_dir(root, name)
        first = root / name.split("/")[0]
        assert str(refused.value) == (
            f"refusing {first}: {why}; remove it or choose another output folder (-o/--out)"
        )
    assert list(elsewhere.iterdir()) == []
    # the root itself may be a link (scratch linked into the home folder)
    os.symlink(elsewhere, tmp_path / "linked-root")
    assert safe_write.ensure_dir(tmp_path / "linked-root", "x").is_dir()
    assert (elsewhere / "x").is_dir()
    with pytest.raises(ValueError):
        safe_write.ensure_dir(root, "../escape")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant another user's folder")
def test_ensure_dir_refuses_another_users_folder(tmp_path: Path) -> None:
    """root's run in a shared folder: a real folder planted by another user is refused."""
    (tmp_path / "report").mkdir()
    os.chown(tmp_path / "report", 12345, 12345)
    with pytest.raises(safe_write.UnsafeFolder, match=r"belongs to another user \(uid 12345\)"):
        safe_write.ensure_dir(tmp_path, "report")


def test_a_planted_rankfile_folder_is_refused(tmp_path: Path) -> None:
    """DIR/launch/openmpi_core_r1 -> elsewhere would have put the rankfile there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rankfile").write_bytes(b"precious\n")
    launch = tmp_path / "out" / "launch"
    launch.mkdir(parents=True)
    os.symlink(elsewhere, launch / "openmpi_core_r1")
    spec = LaunchSpec(["--rankfile", "{rankfile}"], {"rankfile": "rank 0=n1 slot=0\n"})
    with pytest.raises(safe_write.UnsafeFolder, match="openmpi_core_r1: it is a symbolic link"):
        spec.materialize(launch / "openmpi_core_r1")
    assert (elsewhere / "rankfile").read_bytes() == b"precious\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["rankfile"]


def _toy_run(tmp_path: Path, folder: Path, options: dict, job: Job) -> runner.Outcome:
    from rich.console import Console

    from hpcscope.suites.base import SuitePlan

    store = Store(tmp_path / "db.sqlite")
    run_id = store.create_run("p2p")
    with open(os.devnull, "w") as quiet:
        return runner.run_jobs(
            store,
            run_id,
            SuitePlan(jobs=[job]),
            "local",
            options,
            None,
            folder,
            Console(file=quiet),
        )


TOY = Job(suite="toy", name="toy", program=[sys.executable, "-c", "pass"])


@pytest.mark.parametrize("planted", ["run-1", "run-1/launch"])
def test_a_planted_run_folder_stops_the_run_with_one_line(tmp_path: Path, planted: str) -> None:
    """hpcscope-out/run-ID (the default) or its launch/ planted as links: refused before
    any job starts, one line, exit 2 (nothing ran), nothing written elsewhere."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "hpcscope-out"
    (out / planted).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, out / planted)
    outcome = _toy_run(tmp_path, out / "run-1", {}, TOY)
    assert outcome.exit_code == 2
    (line,) = outcome.messages
    assert line.startswith(f"refusing {out / planted}: it is a symbolic link (planted?)"), line
    assert list(elsewhere.iterdir()) == []


def test_a_named_out_folder_may_be_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "scratch"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "results")
    outcome = _toy_run(tmp_path, tmp_path / "results", {"out_dir": "results"}, TOY)
    assert outcome.status == "ok", outcome.messages  # (a toy suite has no figures to write)
    assert (elsewhere / "launch").is_dir()


def test_a_planted_rankfile_folder_fails_the_launch_naming_it(tmp_path: Path) -> None:
    from hpcscope.machine.mpi import MpiSpec

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    launch = tmp_path / "out" / "launch"
    launch.mkdir(parents=True)
    os.symlink(elsewhere, launch / "openmpi_core_r1")
    job = Job(
        suite="p2p",
        name="openmpi/core/r1",
        program=["/bin/true"],
        mpi=MpiSpec("openmpi", "mpicc", "/no/mpirun", "4.1"),
        ranks=2,
        cpus=[0, 1],
        tags={"placement": "core"},
    )
    outcome = _toy_run(tmp_path, tmp_path / "out", {"out_dir": "out"}, job)
    assert outcome.exit_code == 2
    (line,) = outcome.messages
    assert line.startswith(f"refusing {launch / 'openmpi_core_r1'}: it is a symbolic link"), line
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("args", [["report"], ["report", "-o", "hpcscope-out/report"]])
def test_a_planted_report_folder(filled, tmp_path: Path, args: list[str]) -> None:
    """`report` without -o writes hpcscope-out/report: planted as a link (or another
    user's index.html behind it), one line, exit 2, the target untouched. A folder the
    user names with -o may be a link: it is theirs to choose."""
    db, runs = filled
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.html").write_bytes(b"precious\n")
    (tmp_path / "hpcscope-out").mkdir()
    os.symlink(elsewhere, tmp_path / "hpcscope-out" / "report")
    done = subprocess.run(
        [sys.executable, "-m", "hpcscope.cli", "--db", str(db), *args, str(runs[0])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if len(args) == 1:
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            "error: refusing hpcscope-out/report: it is a symbolic link (planted?); remove it "
            "or choose another output folder (-o/--out)"
        ]
        assert sorted(p.name for p in elsewhere.iterdir()) == ["index.html"]
        assert (elsewhere / "index.html").read_bytes() == b"precious\n"
    else:
        assert done.returncode == 0, done.stderr
        assert (elsewhere / "index.html").read_bytes() != b"precious\n"


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_planted_store_companion_is_refused(tmp_path: Path, suffix: str) -> None:
    """SQLite opens the store's -wal/-shm/-journal beside it itself, following links: one
    planted under such a name is refused (exit 2, after the plan's notes), its target untouched."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    db = tmp_path / "shared" / "x.db"
    db.parent.mkdir()
    os.symlink(victim, f"{db}{suffix}")
    done = subprocess.run(
        [sys.executable, "-m", "hpcscope.cli", "--db", str(db), "run", "node", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]  # after the plan's notes
    assert f"{db}{suffix} is a symbolic link (planted?)" in line, done.stderr
    assert "Traceback" not in done.stderr
    assert victim.read_bytes() == b"precious\n"
