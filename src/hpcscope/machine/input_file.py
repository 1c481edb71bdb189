"""Reading a file the user names on the command line (--cpuinfo, --topology, a --platform
.xml): a regular file below a size cap, or a refusal that says why.

Without these checks `--cpuinfo /dev/zero` read until the machine ran out of memory, a
FIFO waited forever for a writer, and a directory gave a confusing error. The file is
opened without blocking (O_NONBLOCK: opening a FIFO for reading would wait for a writer)
and checked on the open descriptor, so it cannot be swapped between check and read.
"""

from __future__ import annotations

import os
import stat

from hpcscope.formatting import format_bytes

# A /proc/cpuinfo of 512 CPUs is about 0.8 MB; `lstopo --of xml` of the largest nodes a
# few MB. A SimGrid platform file has a route per pair of hosts: 130 MB for the 1000
# hosts hpcscope simulates at most (machine/sim_platform.py), hence its own cap.
MAX_BYTES = 16 << 20
MAX_PLATFORM_BYTES = 256 << 20


class InputFileError(ValueError):
    """Why a named file is not read; the callers prefix the option and file and add the fix."""


def read_bytes(path: str, limit: int = MAX_BYTES) -> bytes:
    """The whole content of the regular file `path`, at most `limit` bytes. Raises
    InputFileError: cannot be opened (with the system's reason), is a directory, is not a
    regular file (a device such as /dev/zero, a FIFO, a socket), or is larger than limit."""
    too_large = f"larger than {format_bytes(limit)}, the most hpcscope reads of such a file"
    try:
        fd = os.open(str(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputFileError(f"cannot read it ({reason})") from None
    info = os.fstat(fd)  # before fdopen, which refuses a directory with Errno 21 itself
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputFileError("is a directory")
        raise InputFileError("is not a regular file (a device, FIFO or socket)")
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > limit:
            raise InputFileError(too_large)
        try:
            data = fh.read(limit + 1)  # the file may have grown since fstat
        except OSError as exc:
            raise InputFileError(f"cannot read it ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise InputFileError(too_large)
    return data


def read_text(path: str, limit: int = MAX_BYTES) -> str:
    """read_bytes decoded as UTF-8; InputFileError when it is not UTF-8 text."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"is not UTF-8 text (byte {exc.start})") from None
