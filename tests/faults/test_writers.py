"""Every file and folder hpcscope creates follows one rule (issue 43, part 1): found by
walking the code, so a new writer cannot escape it.

Python (src/hpcscope): every file-creating call goes through hpcscope.safe_write (a new
file by O_EXCL | O_NOFOLLOW then rename; folders by ensure_dir), except the entries of
ALLOWED, each with its reason. C (bench/, lanecoll/): no fopen for writing, and every
open with O_CREAT has O_EXCL and O_NOFOLLOW (bench/common/out_file.c), except ALLOWED_C.
Shell: the generated SLURM scripts create files only under noclobber, each name checked
by `new` first (tests/faults/test_slurm_links.py runs them against planted links).

The symlink checks of each writer are in test_symlinks.py; this file makes sure the list
of writers there is the whole list."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpcscope.launch.slurm_script import SlurmOptions, group_jobs, render
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "hpcscope"

# (file below src/hpcscope, the call's function as written) -> why it may create a file
# without safe_write. Keep it short: each entry is a writer the rule does not cover.
ALLOWED: dict[tuple[str, str], str] = {
    ("results/store.py", "sqlite3.connect"): (
        "the store the user names with --db (it may be a link, like any folder they "
        "name); SQLite creates and opens its own -wal and -shm files beside it, which "
        "Store refuses when they exist as anything but a file (a planted link)"
    ),
    ("machine/simgrid.py", "tar.extractall"): (
        "SimGrid's source archive into a folder of the user's own cache; filter='data' "
        "refuses links and paths that leave it"
    ),
}
# (file below the repository, text of the call) -> why
ALLOWED_C: dict[tuple[str, str], str] = {
    ("lanecoll/src/log.c", "O_APPEND | O_CREAT | O_NOFOLLOW"): (
        "LANECOLL_LOG is appended to by every rank, so it cannot be created afresh; "
        "O_NOFOLLOW and a regular-file check instead (like safe_write.open_append)"
    ),
}

_READ_MODES = set("rbt")
_MODE_AT = {"io": 1, "tarfile": 1, "gzip": 1, "bz2": 1, "lzma": 1, "codecs": 1}
_CREATING_ATTRS = {
    "write_text",
    "write_bytes",
    "mkdir",
    "makedirs",
    "touch",
    "symlink_to",
    "hardlink_to",
    "rename",
    "extractall",
    "extract",
}
_CREATING_CALLS = {
    "os.symlink",
    "os.link",
    "os.rename",
    "os.replace",
    "os.mkfifo",
    "os.mknod",
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.move",
    "tempfile.mktemp",  # a name, not a file: the classic race
    "sqlite3.connect",
}


def _mode(call: ast.Call, index: int) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == "mode"), None)


def _writes(mode: ast.expr | None) -> bool:
    """An open() mode that may create or change a file ("w", "a", "x", "+"); a mode
    that is not a literal counts as writing (it cannot be told)."""
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return not set(mode.value) <= _READ_MODES
    return True


def creating_calls(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, function as written) of each call in `tree` that may create a file or
    folder by path."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = ast.unparse(node.func)
        if isinstance(node.func, ast.Name) and node.func.id == "open":
            if _writes(_mode(node, 1)):
                yield node.lineno, func
        elif isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = owner.id if isinstance(owner, ast.Name) else ""
            attr = node.func.attr
            if owner_name == "safe_write":
                continue
            if func == "os.open":
                flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if "O_CREAT" in flags:
                    yield node.lineno, func
            elif attr == "open" and owner_name != "os":
                if _writes(_mode(node, _MODE_AT.get(owner_name, 0))):
                    yield node.lineno, func
            elif attr in _CREATING_ATTRS or func in _CREATING_CALLS:
                yield node.lineno, func


def python_writers() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "safe_write.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        found += [(rel, line, func) for line, func in creating_calls(tree)]
    return found


def test_the_walker_finds_every_kind_of_writer() -> None:
    """A probe of each kind, as someone might add it: the walker must see them all."""
    probe = """
open(p, "w"); open(p, mode="a"); open(p, "rb"); open(p)
path.write_text("x"); path.write_bytes(b""); path.open("a"); path.open()
os.open(p, os.O_WRONLY | os.O_CREAT); os.open(p, os.O_RDONLY)
os.mkdir(p); os.makedirs(p); path.mkdir(parents=True); path.touch()
shutil.copy(a, b); shutil.move(a, b); os.replace(a, b); tempfile.mktemp()
tarfile.open(p, "w"); tarfile.open(p); safe_write.write_text(p, "x")
"""
    found = [func for _, func in creating_calls(ast.parse(probe))]
    assert found == [
        "open",
        "open",
        "path.write_text",
        "path.write_bytes",
        "path.open",
        "os.open",
        "os.mkdir",
        "os.makedirs",
        "path.mkdir",
        "path.touch",
        "shutil.copy",
        "shutil.move",
        "os.replace",
        "tempfile.mktemp",
        "tarfile.open",
    ]


def test_python_creates_files_and_folders_only_through_safe_write() -> None:
    found = python_writers()
    stray = [f"{rel}:{line}: {func}" for rel, line, func in found if (rel, func) not in ALLOWED]
    assert not stray, (
        "file-creating calls outside safe_write.py (use safe_write.write_text/open_for_write"
        "/ensure_dir, or add an entry with its reason to ALLOWED):\n  " + "\n  ".join(stray)
    )
    stale = set(ALLOWED) - {(rel, func) for rel, _, func in found}
    assert not stale, f"ALLOWED entries that no longer match any call: {sorted(stale)}"


# -- C ------------------------------------------------------------------------------------

_FOPEN = re.compile(r"\b(?:fopen|freopen)\s*\(([^;]*?),\s*\"([^\"]*)\"")
_OPEN = re.compile(r"\b(open|openat|shm_open|creat)\s*\(([^;]*)\)\s*;", re.S)
# MPI-IO creates a file it opens with MPI_MODE_CREATE (no O_EXCL, links followed): the
# mpiio benchmark creates each file itself first (O_EXCL | O_NOFOLLOW) and opens it without
_MPI_CREATE = re.compile(r"\bMPI_File_open\s*\(([^;]*MPI_MODE_CREATE[^;]*)\)\s*;", re.S)


def c_sources() -> list[Path]:
    return sorted(
        p
        for root in ("bench", "lanecoll")
        for p in (REPO / root).rglob("*")
        if p.suffix in (".c", ".h")
    )


def c_writers(text: str) -> list[str]:
    """The calls in C source `text` that create a file other than by O_CREAT | O_EXCL |
    O_NOFOLLOW."""
    found = [m.group(0) for m in _FOPEN.finditer(text) if not set(m.group(2)) <= _READ_MODES]
    found += [f"MPI_File_open({' '.join(m.group(1).split())})" for m in _MPI_CREATE.finditer(text)]
    for m in _OPEN.finditer(text):
        call, args = m.group(1), " ".join(m.group(2).split())
        if call == "creat" or "O_CREAT" in args:
            needs = ("O_EXCL",) if call == "shm_open" else ("O_EXCL", "O_NOFOLLOW")
            if call == "creat" or not all(flag in args for flag in needs):
                found.append(f"{call}({args})")
    return found


def test_the_c_walker_finds_writers() -> None:
    probe = """
    FILE *f = fopen(path, "w"); FILE *g = fopen(p, "a"); FILE *r = fopen(p, "r");
    int a = open(p, O_RDWR | O_CREAT | O_DIRECT, 0600);
    int b = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    int c = open("/dev/null", O_WRONLY);
    MPI_File_open(comm, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    MPI_File_open(comm, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    """
    assert [w.split("(")[0].split()[-1] for w in c_writers(probe)] == [
        "fopen",
        "fopen",
        "MPI_File_open",
        "open",
    ]


def test_c_programs_create_files_only_with_o_excl_and_o_nofollow() -> None:
    stray, used = [], set()
    for path in c_sources():
        rel = path.relative_to(REPO).as_posix()
        for call in c_writers(path.read_text(errors="replace")):
            allowed = [(f, text) for f, text in ALLOWED_C if rel == f and text in call]
            used |= set(allowed)
            if not allowed:
                stray.append(f"{rel}: {call}")
    assert used == set(ALLOWED_C), f"stale ALLOWED_C entries: {set(ALLOWED_C) - used}"
    assert not stray, (
        "C calls creating a file without O_CREAT | O_EXCL | O_NOFOLLOW (bench/common/"
        "out_file.c hs_create_out for an output the user names):\n  " + "\n  ".join(stray)
    )


# -- shell: the generated SLURM scripts ------------------------------------------------

OMPI = MpiSpec("openmpi", "/usr/bin/mpicc", "/usr/bin/mpirun", "4.1")
MPICH = MpiSpec("mpich", "/usr/bin/mpicc.mpich", "/usr/bin/mpirun.mpich", "4.0")
_REDIRECT = re.compile(r"(?<![<>&|])(\d?)>(?![>&|])\s*\"([^\"]+)\"")


def _script(launcher: str, mpi: MpiSpec) -> str:
    job = Job("p2p", "x/core/r1", ["/b/p2p"], mpi, 2, [0, 1], 1, tags={"placement": "core"})
    (group,) = group_jobs([job])
    return render(group, 7, Path("/scratch/run-7.abc"), SlurmOptions(launcher=launcher))


@pytest.mark.parametrize("launcher,mpi", [("srun", OMPI), ("mpirun", OMPI), ("mpirun", MPICH)])
def test_slurm_scripts_create_files_only_under_noclobber(launcher: str, mpi: MpiSpec) -> None:
    """noclobber before the first redirect; no `>>` or `>|` (they ignore noclobber);
    every file redirected to is checked by `new` first (noclobber alone writes through a
    link to /dev/null or a FIFO)."""
    lines = _script(launcher, mpi).splitlines()
    body = [ln for ln in lines if not ln.startswith("#")]
    first = next(i for i, ln in enumerate(body) if _REDIRECT.search(ln.replace(">/dev/null", "")))
    assert "set -o noclobber" in "\n".join(body[:first])
    text = "\n".join(body)
    assert ">>" not in text and ">|" not in text
    checked = set(re.findall(r'\bnew "([^"]+)"', text))
    for names, pattern in re.findall(r'for f in ([\w ]+); do new "([^"]+)"; done', text):
        checked |= {pattern.replace("$f", n) for n in names.split()}
    targets = {t for _, t in _REDIRECT.findall(text) if t != "/dev/null"}
    assert targets and targets <= checked, targets - checked
