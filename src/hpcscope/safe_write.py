"""The one way hpcscope writes a file: a fresh temporary in the same folder, then a rename.

Why: an output folder may be shared or world-writable (hpcscope-out/ on a cluster's
project space, /tmp). A file opened with open(path, "w") follows a symlink planted under
the output's name and truncates and overwrites the link's target, another user's file.
Here a file is written as

1. a temporary `.NAME.RANDOM.tmp` in the same folder, created by os.open with
   O_CREAT | O_EXCL | O_NOFOLLOW (a name that exists, a symlink included, is never
   opened: another random name is tried) and mode 0o666 less the umask, as open() would;
2. written, flushed and fsync'ed (see below);
3. renamed over the path with os.replace. rename(2) replaces a symlink at the path by the
   file itself and never writes through it; the readers of the path see the old file or
   the whole new one, never half of it. On any error the temporary is removed.

Folders: the folder the user names (--out, -o, --slurm-dir, the folder of --db,
hpcscope-out) may be a symbolic link and is followed: a scratch space linked into the
home folder is ordinary use. Every folder hpcscope makes *below* it (`<out>/launch/JOB`
for rankfiles, `hpcscope-out/run-ID`, `hpcscope-out/report`, `<out>/sim/JOB`, the cache's
folders) goes through `ensure_dir`: made with mkdir, or, when it exists already, used only
if it is a real folder (not a symbolic link) owned by this user; anything else raises
UnsafeFolder, one line naming the entry. Whoever can write a shared output folder can
plant `report -> /home/other/www`; without this check root's `hpcscope report` would
replace another user's index.html there. Restriction: the check is made when the folder
is made, not on every write into it (that would need every write relative to a folder
descriptor); a folder swapped for a link in between by someone who can write its parent
is not caught.

A replaced file is a new file: it gets the umask's permissions and the writer as owner,
not those of the file it replaces. In a sticky folder (/tmp) the rename over another
user's file fails (EPERM) and is reported, as it should be.

fsync: one per file, before the rename, so that a crash never leaves a renamed but empty
file. Cost measured on the development VM (ext4 on virtio): 3.7 ms per 10 kB file with
fsync, 0.13 ms without; expect more on NFS or Lustre. A report writes a few dozen files
(about 0.1 s against seconds of drawing and statistics), a run a handful, so it is paid
everywhere rather than made optional. The folder itself is not fsync'ed (a crash may lose
the rename and leave the old file whole, acceptable for outputs that are written again).

Lock files are not replaced (a lock must stay the same inode): `open_lock` opens one with
O_CREAT | O_NOFOLLOW and without O_TRUNC, so a planted symlink is refused rather than its
target truncated. `open_append` does the same for a log that is appended to.

C programs and shell scripts follow the same rule: bench/common/out_file.c (a named output
is unlinked and created again with O_CREAT | O_EXCL | O_NOFOLLOW), bench/node/disk.c (its
test files in a fresh mkdtemp folder), the SLURM scripts (launch/slurm_script.py:
noclobber, and an existing entry refused). tests/faults/test_writers.py walks the code for
file-creating calls outside this module.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TRIES = 100  # random names tried before giving up (a collision of 48 random bits: never)

StrPath = str | os.PathLike[str]


def _temporary(path: Path, perms: int) -> tuple[int, Path]:
    """(fd, name) of a new empty file beside `path`, made by this call and no one else."""
    for _ in range(_TRIES):
        tmp = path.with_name(f".{path.name[:80]}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, _CREATE, perms), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


@contextlib.contextmanager
def open_for_write(
    path: StrPath,
    mode: str = "w",
    *,
    encoding: str | None = None,
    newline: str | None = None,
    perms: int = 0o666,
) -> Iterator[IO[Any]]:
    """A file object for writers that stream (csv.writer, json.dump): text ("w", UTF-8
    unless `encoding` says otherwise) or bytes ("wb"). The path gets the file when the
    block ends without an error; with an error the path is left as it was. `perms`: the
    mode the file is created with, less the umask (0o755 for a script)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"open_for_write: mode {mode!r}; use 'w' or 'wb'")
    target = Path(path)
    # A device, FIFO or socket under the name is never replaced: as root the rename below
    # turned `-o /dev/null` into a regular file /dev/null for the whole machine.
    with contextlib.suppress(FileNotFoundError):
        kind = os.lstat(target).st_mode
        if not (stat.S_ISREG(kind) or stat.S_ISLNK(kind) or stat.S_ISDIR(kind)):
            raise OSError(errno.EINVAL, "not a regular file (a device, FIFO or socket)", str(path))
    fd, tmp = _temporary(target, perms)
    try:
        if mode == "wb":
            fh: IO[Any] = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
    except BaseException:
        os.close(fd)
        _remove(tmp)
        raise
    try:
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())  # cost: see the module's docstring
        os.replace(tmp, target)  # replaces a symlink at `target`, never writes through it
    except BaseException:
        _remove(tmp)
        raise


def write_text(path: StrPath, text: str, encoding: str = "utf-8", perms: int = 0o666) -> Path:
    """Path.write_text without following a symlink at `path`, all or nothing."""
    with open_for_write(path, "w", encoding=encoding, perms=perms) as fh:
        fh.write(text)
    return Path(path)


def write_bytes(path: StrPath, data: bytes, perms: int = 0o666) -> Path:
    """Path.write_bytes without following a symlink at `path`, all or nothing."""
    with open_for_write(path, "wb", perms=perms) as fh:
        fh.write(data)
    return Path(path)


def probe_writable(folder: StrPath) -> None:
    """Raise OSError unless a file can be created in `folder`. Creates a new file under a
    random name (O_EXCL | O_NOFOLLOW) and removes it: no existing file, and no file a
    symlink points to, is opened, truncated or removed."""
    fd, tmp = _temporary(Path(folder) / ".hpcscope-write-test", 0o600)
    os.close(fd)
    os.unlink(tmp)


def _open_existing(path: StrPath, flags: int) -> int:
    """fd of a regular file opened with `flags` | O_CREAT, refusing a symlink (ELOOP)
    and anything that is not a regular file (a FIFO would block)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def open_lock(path: StrPath) -> IO[str]:
    """A lock file for fcntl.flock: created if missing, never truncated, never through a
    symlink (a planted link raises OSError instead)."""
    return os.fdopen(_open_existing(path, os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8")


def open_append(path: StrPath) -> IO[str]:
    """A text log opened for appending, created if missing, never through a symlink."""
    return os.fdopen(_open_existing(path, os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8")


class UnsafeFolder(OSError):
    """A folder hpcscope makes exists as something it must not write into (a symbolic
    link, a file, another user's folder). str() is the whole one-line message."""

    def __init__(self, path: StrPath, why: str) -> None:
        super().__init__(errno.EEXIST, why, os.fsdecode(path))
        self.message = (
            f"refusing {os.fsdecode(path)}: {why}; remove it or choose another output "
            "folder (-o/--out)"
        )

    def __str__(self) -> str:
        return self.message


def ensure_dir(root: StrPath, relative: StrPath = "") -> Path:
    """The folder root/relative, made where missing (see the module's docstring).

    `root` is a folder the user named: made with its parents where missing, followed when
    it is a symbolic link. Each folder of `relative` below it is made with mkdir (mode
    0o777 less the umask, as mkdir(1)); one that exists must be a folder of its own, not a
    symbolic link and owned by this user (os.geteuid), or UnsafeFolder is raised."""
    base = Path(root)
    if base.exists() and not base.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fsdecode(base))
    base.mkdir(parents=True, exist_ok=True)
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"ensure_dir: {relative!r} must be a relative path below the root")
    path = base
    for part in rel.parts:
        path = path / part
        try:
            os.mkdir(path)
        except FileExistsError:
            _check_own_folder(path)
    return path


def _check_own_folder(path: Path) -> None:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFolder(path, "it is a symbolic link (planted?)")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(path, "it is not a folder")
    if info.st_uid != os.geteuid():
        raise UnsafeFolder(path, f"it belongs to another user (uid {info.st_uid})")


def _remove(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
