"""Which BLAS a program we cannot change (Debian's hpcc) runs with, and the kernel it
dispatched to, asked of the same library file in the same environment.

    python -m hpcscope.machine.blas_probe BINARY

prints one line, `hpcscope-blas: {json}` (LINE_PREFIX), that the job's output carries to
its parser (results/parsers.py parse_hpcc), with:
  library   the file `ldd BINARY` resolved for the first BLAS it lists (libblas, libopenblas,
            libmkl, libblis), symlinks resolved: that library's dgemm_ is the one the
            program calls (the first in load order wins)
  libraries every BLAS-like file ldd lists (Debian's hpcc loads libblas.so.3 and
            libopenblas.so.0: two copies of OpenBLAS)
  core, config, version, threads   OpenBLAS's openblas_get_corename(), get_config(), the
            version in it, openblas_get_num_threads(), read through ctypes from that file;
            null for a BLAS without them
  env       every OPENBLAS_*, GOTO_*, MKL_*, BLIS_*, OMP_* variable of this environment

Run it as a child of the job's shell, so it sees the job's variables (OPENBLAS_CORETYPE
picks the kernel when the library loads). Cost: one ldd and one library load (~0.1 s).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys

LINE_PREFIX = "hpcscope-blas: "
BLAS_PREFIXES = ("OPENBLAS_", "GOTO_", "MKL_", "BLIS_", "OMP_")
_BLAS_LIB = re.compile(r"^\s*(lib(?:openblas|blas|mkl_rt|mkl_core|blis)\S*)\s+=>\s+(\S+)", re.M)


def blas_variables(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(environ.items()) if k.startswith(BLAS_PREFIXES)}


def linked(binary: str) -> list[str]:
    """The BLAS-like files ldd resolves for binary, in load order, symlinks resolved."""
    try:
        done = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [os.path.realpath(path) for _name, path in _BLAS_LIB.findall(done.stdout)]


def ask(library: str) -> dict:
    """OpenBLAS's answers from `library` (None each where it does not have them)."""
    out: dict = {"core": None, "config": None, "version": None, "threads": None}
    try:
        lib = ctypes.CDLL(library)
    except OSError:
        return out
    for key, name in (("core", "openblas_get_corename"), ("config", "openblas_get_config")):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            value = fn()
            out[key] = value.decode(errors="replace") if value else None
    threads = getattr(lib, "openblas_get_num_threads", None)
    if threads is not None:
        threads.restype = ctypes.c_int
        out["threads"] = int(threads())
    found = re.match(r"OpenBLAS (\S+)", out["config"] or "")
    out["version"] = found.group(1) if found else None
    return out


def probe(binary: str, environ: dict[str, str] | None = None) -> dict:
    files = linked(binary)
    facts: dict = {"binary": binary, "library": files[0] if files else None, "libraries": files}
    none = {"core": None, "config": None, "version": None, "threads": None}
    facts.update(ask(files[0]) if files else none)
    facts["env"] = blas_variables(dict(os.environ if environ is None else environ))
    return facts


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m hpcscope.machine.blas_probe BINARY", file=sys.stderr)
        return 2
    print(LINE_PREFIX + json.dumps(probe(argv[0]), sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
