"""hwloc's library called directly (ctypes): the topology XML without the `lstopo` program.

Wherever an MPI is installed the hwloc library is too (Open MPI and MPICH link it), while the
`hwloc` package with lstopo often is not. `topology_xml()` does in this process what
`lstopo-no-graphics --of xml` does: the same type filters as lstopo (every object type kept,
instruction caches included; I/O objects filtered to the important ones, which keeps the
NICs and their PCI devices), then the XML export. The text goes to the same parser
(`Topology.from_xml`), so both paths give the same Topology.

The library honours HWLOC_XMLFILE (and the other HWLOC_* variables) itself, as lstopo does.

The discovery runs in a child Python (this file as a script, standard library only, about
50 ms), as lstopo ran in a child before: hwloc's plugins load other libraries (OpenCL, which
on a GPU node starts the GPU driver with its threads and memory), and these must not stay
in the process that then runs the measurements; a crash in a plugin also costs only the
child, and the parent falls back to lstopo.

ABI, from hwloc.h and hwloc/export.h:
- 2.x (libhwloc.so.15): `hwloc_topology_set_all_types_filter(topo, KEEP_ALL=0)`,
  `hwloc_topology_set_io_types_filter(topo, KEEP_IMPORTANT=3)`,
  `int hwloc_topology_export_xmlbuffer(topo, char **buf, int *len, unsigned long flags)`.
- 1.x (libhwloc.so.5): no filters; `hwloc_topology_set_flags(topo, IO_DEVICES | ICACHES)`
  (lstopo 1.x's defaults), and the export takes no flags argument.
Other major versions are not called (their ABI is unknown here): lstopo is used instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import subprocess
import sys

# Sonames tried after ctypes.util.find_library("hwloc"): hwloc 2.x, then 1.x.
SONAMES = ("libhwloc.so.15", "libhwloc.so.5")

# enum hwloc_type_filter_e (hwloc 2.x)
_KEEP_ALL = 0
_KEEP_IMPORTANT = 3
# hwloc 1.x topology flags
_V1_FLAG_IO_DEVICES = 1 << 2
_V1_FLAG_ICACHES = 1 << 5

TIMEOUT_S = 120.0
_EXIT_NO_LIBRARY = 3
_EXIT_FAILED = 4


class HwlocLibraryError(RuntimeError):
    """The hwloc library could not be loaded, or it failed to discover the machine."""


@functools.cache
def load_library() -> tuple[ctypes.CDLL, int]:
    """The hwloc library and its API version (0x00020800 for 2.8), or HwlocLibraryError.

    Loaded with RTLD_GLOBAL: hwloc's discovery plugins (PCI, which finds the NICs) look the
    library's symbols up globally and disable themselves when they cannot."""
    names: list[str] = []
    found = ctypes.util.find_library("hwloc")
    if found:
        names.append(found)
    names.extend(n for n in SONAMES if n not in names)
    errors: list[str] = []
    for name in names:
        try:
            lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL, use_errno=True)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            continue
        try:
            get_version = lib.hwloc_get_api_version
        except AttributeError:
            errors.append(f"{name}: no hwloc_get_api_version")
            continue
        get_version.restype = ctypes.c_uint
        get_version.argtypes = []
        version = int(get_version())
        if version >> 16 not in (1, 2):
            errors.append(f"{name}: hwloc API {version_text(version)} is not supported here")
            continue
        return lib, version
    raise HwlocLibraryError(
        "the hwloc library (libhwloc) could not be loaded ("
        + ("; ".join(errors) if errors else "not found")
        + ")"
    )


def version_text(version: int) -> str:
    return f"{version >> 16}.{(version >> 8) & 0xFF}.{version & 0xFF}"


def topology_xml(timeout_s: float = TIMEOUT_S) -> str:
    """This machine's topology as hwloc XML, discovered by the library in a child process
    (see the module text); HwlocLibraryError when it cannot be loaded or fails."""
    argv = [sys.executable, "-I", os.path.abspath(__file__)]  # -I: no PYTHON* variables
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise HwlocLibraryError(f"the hwloc library did not finish in {timeout_s:g} s") from exc
    except OSError as exc:
        raise HwlocLibraryError(f"the hwloc library could not be run ({exc})") from exc
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        if said:
            reason = said[-1]
        elif proc.returncode < 0:
            reason = f"the hwloc library crashed (signal {-proc.returncode})"
        else:
            reason = f"the hwloc library failed (exit {proc.returncode})"
        raise HwlocLibraryError(reason)
    return proc.stdout.decode("utf-8", errors="replace")


def discover_in_process() -> str:
    """The discovery itself, in this process (what the child runs)."""
    lib, version = load_library()
    return _export(lib, version)


def _export(lib: ctypes.CDLL, version: int) -> str:
    v2 = version >> 16 == 2
    topo = ctypes.c_void_p()
    init = lib.hwloc_topology_init
    init.restype = ctypes.c_int
    init.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    if init(ctypes.byref(topo)) != 0 or not topo.value:
        raise HwlocLibraryError("hwloc_topology_init failed")
    destroy = lib.hwloc_topology_destroy
    destroy.restype = None
    destroy.argtypes = [ctypes.c_void_p]
    try:
        if v2:
            for fn_name, value in (
                ("hwloc_topology_set_all_types_filter", _KEEP_ALL),
                ("hwloc_topology_set_io_types_filter", _KEEP_IMPORTANT),
            ):
                fn = getattr(lib, fn_name)
                fn.restype = ctypes.c_int
                fn.argtypes = [ctypes.c_void_p, ctypes.c_int]
                if fn(topo, value) != 0:
                    raise HwlocLibraryError(f"{fn_name} failed")
        else:
            set_flags = lib.hwloc_topology_set_flags
            set_flags.restype = ctypes.c_int
            set_flags.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
            if set_flags(topo, _V1_FLAG_IO_DEVICES | _V1_FLAG_ICACHES) != 0:
                raise HwlocLibraryError("hwloc_topology_set_flags failed")
        load = lib.hwloc_topology_load
        load.restype = ctypes.c_int
        load.argtypes = [ctypes.c_void_p]
        if load(topo) != 0:
            raise HwlocLibraryError(
                f"hwloc_topology_load failed (hwloc {version_text(version)}, "
                f"errno {ctypes.get_errno() or 'unknown'})"
            )
        buf = ctypes.POINTER(ctypes.c_char)()  # not c_char_p: the pointer must stay raw to free it
        length = ctypes.c_int(0)
        export = lib.hwloc_topology_export_xmlbuffer
        export.restype = ctypes.c_int
        if v2:
            export.argtypes = [
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.POINTER(ctypes.c_char)),
                ctypes.POINTER(ctypes.c_int),
                ctypes.c_ulong,
            ]
            rc = export(topo, ctypes.byref(buf), ctypes.byref(length), 0)
        else:
            export.argtypes = [
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.POINTER(ctypes.c_char)),
                ctypes.POINTER(ctypes.c_int),
            ]
            rc = export(topo, ctypes.byref(buf), ctypes.byref(length))
        if rc != 0 or not buf:
            raise HwlocLibraryError("hwloc_topology_export_xmlbuffer failed")
        try:
            # The length counts the terminating NUL; string_at stops at the NUL anyway.
            raw = ctypes.string_at(buf, max(length.value - 1, 0)) if length.value > 0 else b""
        finally:
            free = lib.hwloc_free_xmlbuffer
            free.restype = None
            free.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char)]
            free(topo, buf)
        return raw.rstrip(b"\0").decode("utf-8", errors="replace")
    finally:
        destroy(topo)


def _main() -> int:
    try:
        lib, version = load_library()
    except HwlocLibraryError as exc:
        print(exc, file=sys.stderr)
        return _EXIT_NO_LIBRARY
    try:
        xml = _export(lib, version)
    except HwlocLibraryError as exc:
        print(exc, file=sys.stderr)
        return _EXIT_FAILED
    sys.stdout.buffer.write(xml.encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main())
