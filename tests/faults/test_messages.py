"""Messages name what failed (issue 43, finding 7 and part 5): one line, exit 2, no
traceback and no "unexpected error", through the real command line.

- a full disk under standard output or the report's folder names that, not --db/--out;
- a folder planted where a file belongs is said to be one, not "a bug in hpcscope";
- `--platform` a folder, empty -o/--html/--db, an unknown --suite, a closed standard
  output and HPCSCOPE_* variables of the wrong form are refused;
- --cpuinfo that a SLURM dry run cannot use (no readable SLURM configuration) is named.

The store holds the synthetic runs of tests/fixtures/report/build_store.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "report"))
import build_store  # noqa: E402
from conftest import Cli  # noqa: E402


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("messages"))
    store, _ = build_store.build(cli.db)
    store.close()
    return cli


def one_line(done: subprocess.CompletedProcess, *said: str, code: int = 2) -> str:
    """Exit `code`, exactly one line on stderr containing every `said`, no traceback."""
    assert done.returncode == code, (done.returncode, done.stderr)
    text = (done.stdout or "") + done.stderr
    assert "Traceback" not in text and "unexpected error" not in text, text
    assert "bug in hpcscope" not in text, text
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for part in said:
        assert part in lines[0], lines[0]
    return lines[0]


def test_platform_a_folder_is_one_line(filled: Cli, tmp_path: Path) -> None:
    done = filled("run", "coll", "--on", "sim", "--platform", str(tmp_path), "--dry-run")
    line = one_line(done, f"--platform {tmp_path}", "is a directory")
    assert "Errno" not in line


@pytest.mark.parametrize(
    "args,option",
    [
        (["report", "1", "-o", ""], "-o/--out ''"),
        (["compare", "1", "3", "--html", ""], "--html ''"),
        (["sim", "platform", "hydra", "-o", ""], "-o/--out ''"),
        (["sim", "calibrate", "1", "-o", ""], "-o/--out ''"),
        (["demo", "-o", ""], "-o/--out ''"),
        (["--db", "", "list"], "--db ''"),
    ],
)
def test_an_empty_output_name_is_refused(filled: Cli, args: list[str], option: str) -> None:
    done = subprocess.run(
        [*filled.argv()[:-2], *args] if args[0] == "--db" else filled.argv(*args),
        cwd=filled.folder,
        env=filled.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = one_line(done, option, "empty")
    assert "PosixPath" not in line


@pytest.mark.parametrize("command", ["history", "list"])
def test_an_unknown_suite_lists_the_suites(filled: Cli, command: str) -> None:
    done = filled(command, "--suite", "bogus")
    assert done.returncode == 2, done.stderr
    assert "'bogus' is not one of 'p2p', 'coll', 'lanes', 'node'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["export", "1", "--format", "json"],
        ["list"],
        ["show", "1"],
        ["history"],
        ["compare", "1", "3"],
    ],
)
def test_a_closed_standard_output_is_refused(filled: Cli, args: list[str]) -> None:
    """`hpcscope export 1 >&-` said nothing and exited 0 (Python has no sys.stdout)."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *filled.argv(*args)],
        cwd=filled.folder,
        env=filled.env(),
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    done.stdout = ""
    one_line(done, "standard output is closed", f"hpcscope {args[0]}")


@pytest.mark.parametrize("args", [["export", "1", "--format", "json"], ["list"], ["show", "1"]])
def test_a_full_standard_output_is_named(filled: Cli, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            filled.argv(*args),
            cwd=filled.folder,
            env=filled.env(),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    done.stdout = ""
    line = one_line(done, "no space left on standard output")
    assert "--db" not in line and "--out" not in line


def test_a_folder_planted_under_an_output_name_is_said_to_be_one(filled: Cli) -> None:
    folder = filled.folder / "planted"
    (folder / "index.html").mkdir(parents=True)
    done = filled("report", "1", "-o", str(folder))
    one_line(done, f"{folder}/index.html is a folder where hpcscope writes a file", "-o/--out")


@pytest.mark.parametrize(
    "name,value",
    [
        ("HPCSCOPE_LOCK_TIMEOUT", "abc"),
        ("HPCSCOPE_LOCK_TIMEOUT", "-5"),
        ("HPCSCOPE_LOCK_TIMEOUT", "nan"),
        ("HPCSCOPE_HANG_S", "0"),
        ("HPCSCOPE_HANG_S", "inf"),
        ("HPCSCOPE_FIGURE_CACHE", "yes"),
        ("HPCSCOPE_DB", ""),
        ("HPCSCOPE_CACHE", " "),
    ],
)
def test_garbage_in_hpcscope_variables_is_named(filled: Cli, name: str, value: str) -> None:
    env = {**filled.env(), name: value}
    done = subprocess.run(
        filled.argv("list"), cwd=filled.folder, env=env, capture_output=True, text=True
    )
    one_line(done, f"{name}={value!r}", "expected", "fix or unset it")


def test_the_known_variables_are_every_one_the_code_reads() -> None:
    """A new HPCSCOPE_* variable read with os.environ gets its form in ENVIRONMENT
    (internal ones, set by hpcscope for its children, are listed here)."""
    import re

    from hpcscope.cli.common import ENVIRONMENT

    src = Path(__file__).resolve().parents[2] / "src" / "hpcscope"
    read = set()
    for path in src.rglob("*.py"):
        read |= set(re.findall(r'environ(?:\.get\(|\[)"(HPCSCOPE_[A-Z_]+)"', path.read_text()))
    internal = {"HPCSCOPE_LAB_LANE"}  # set by hpcscope for the lab's ranks
    assert read - internal <= set(ENVIRONMENT), read - set(ENVIRONMENT)
    assert len(read) >= 5, read


def test_cpuinfo_that_a_dry_run_cannot_use_is_named(filled: Cli, tmp_path: Path) -> None:
    """No readable SLURM configuration (a sinfo that fails as without slurm.conf): the
    dry run plans for this machine and says that --cpuinfo is not used (it was silent)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sinfo", "sbatch", "squeue", "scontrol", "sacct", "srun"):
        fake = bin_dir / tool
        fake.write_text(
            "#!/bin/sh\necho 'sinfo: fatal: Could not establish a configuration source' >&2\n"
            "exit 1\n"
        )
        fake.chmod(0o755)
    cpuinfo = tmp_path / "node.cpuinfo"
    cpuinfo.write_text(Path("/proc/cpuinfo").read_text())
    env = {**filled.env(), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        filled.argv("run", "coll", "--on", "slurm", "--cpuinfo", str(cpuinfo), "--dry-run"),
        cwd=filled.folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in done.stderr and "unexpected error" not in done.stderr
    text = " ".join(done.stderr.split())
    if done.returncode == 0:
        assert f"--cpuinfo {cpuinfo} is not used" in text, text
    else:  # refused instead: then in one line that names SLURM
        assert done.returncode == 2 and "SLURM" in text, text


def test_a_full_report_folder_is_named(filled: Cli, tmp_path: Path) -> None:
    """A full disk under the report's folder: named as the report's folder, with -o/--out,
    not "--out, --db" (needs root for a small tmpfs)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    folder = tmp_path / "full"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        with open(folder / "filler", "ab", buffering=0) as fh:
            for chunk in (65536, 4096, 1):
                try:
                    while True:
                        fh.write(b"\0" * chunk)
                except OSError:
                    pass
        done = filled("report", "1", "-o", str(folder / "report"))
        line = one_line(done, "no space left on the report's folder", "-o/--out")
        assert "--db" not in line
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_the_suite_names_list_knows_are_the_registered_suites() -> None:
    from hpcscope.results.store import SUITE_NAMES
    from hpcscope.suites.registry import SUITES

    assert SUITE_NAMES == tuple(SUITES)


def test_a_device_or_fifo_under_an_output_name_is_never_replaced(filled: Cli) -> None:
    """safe_write renames a new file over the name; as root that turned `sim platform
    -o /dev/null` (the CLI fuzz draws it) into a regular file /dev/null for the machine."""
    import stat

    fifo = filled.folder / "out.fifo"
    os.mkfifo(fifo)
    done = filled("sim", "platform", "hydra", "-o", str(fifo))
    one_line(done, f"{fifo} is not a regular file", "-o/--out")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    for device in ("/dev/null", "/dev/full"):
        done = filled("sim", "platform", "hydra", "-o", device)
        one_line(done, f"{device} is not a regular file")
        assert stat.S_ISCHR(os.lstat(device).st_mode), f"{device} was replaced"
