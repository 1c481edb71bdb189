"""Find the MPI libraries on this machine and say exactly which one is which.

Debian installs Open MPI and MPICH side by side with suffixed wrappers (mpicc.openmpi,
mpicc.mpich); a cluster usually has one `mpicc` from a module. `--mpi` accepts a flavor,
`auto` (the first one found), `all`, or a path to any mpicc wrapper.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class MpiSpec:
    """Which MPI library launches a job. `flavor` is 'openmpi', 'mpich' or 'smpi' (SimGrid's
    simulated MPI: smpicc builds, smpirun runs every rank inside one simulator process)."""

    flavor: str
    mpicc: str
    mpirun: str
    version: str = ""

    @property
    def label(self) -> str:
        return {"openmpi": "Open MPI", "mpich": "MPICH", "smpi": "SMPI (SimGrid)"}.get(
            self.flavor, self.flavor
        ) + (f" {self.version}" if self.version else "")


FLAVORS = ("openmpi", "mpich")  # what auto/all choose from; smpi only when named
SIMULATED = "smpi"
_WRAPPERS = {
    "openmpi": ("mpicc.openmpi", "mpirun.openmpi"),
    "mpich": ("mpicc.mpich", "mpirun.mpich"),
}
_INSTALL_HINT = {
    "openmpi": "apt-get install openmpi-bin libopenmpi-dev",
    "mpich": "apt-get install mpich libmpich-dev",
    "smpi": "apt-get install libsimgrid-dev simgrid",
}


class MpiNotFound(Exception):
    """No usable MPI for what the user asked; the message says how to get one."""


def _output(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def flavor_of(mpicc: str) -> str:
    """Open MPI's wrapper answers --showme:version; MPICH's answers -v with 'MPICH'."""
    if "Open MPI" in _output([mpicc, "--showme:version"]):
        return "openmpi"
    if "MPICH" in _output([mpicc, "-v"]):
        return "mpich"
    raise MpiNotFound(
        f"{mpicc} is neither an Open MPI nor an MPICH compiler wrapper; "
        "pass --mpi openmpi, --mpi mpich or the path of their mpicc"
    )


def version_of(flavor: str, mpirun: str) -> str:
    text = _output([mpirun, "--version"])
    pattern = r"\(Open(?:RTE| MPI)\)\s+(\S+)" if flavor == "openmpi" else r"Version:\s+(\S+)"
    match = re.search(pattern, text)
    return match.group(1) if match else "unknown"


def _from_wrapper(mpicc: str) -> MpiSpec:
    path = shutil.which(mpicc) or mpicc
    if not os.access(path, os.X_OK):
        raise MpiNotFound(f"{mpicc}: not an executable; pass the path of an mpicc wrapper")
    flavor = flavor_of(path)
    folder = Path(path).parent
    suffix = Path(path).name.removeprefix("mpicc")  # ".openmpi", ".mpich" or ""
    for name in (f"mpirun{suffix}", f"mpiexec{suffix}", "mpirun", "mpiexec"):
        candidate = folder / name
        if candidate.exists():
            return MpiSpec(flavor, path, str(candidate), version_of(flavor, str(candidate)))
    raise MpiNotFound(f"found {path} but no mpirun or mpiexec beside it in {folder}")


def smpi_installs() -> list[MpiSpec]:
    """Every SimGrid smpicc/smpirun found: those built into the cache (machine/simgrid.py,
    `hpcscope build --mpi smpi`) and those on PATH (Debian's). The version is SimGrid's
    ('SimGrid version 3.32'), which is what decides the simulated behaviour, with the
    cached build's patch level where it has one ('4.1+hpcscope.1'); the build cache is
    keyed by it."""
    from hpcscope.machine import simgrid

    candidates = [
        (str(p / "bin" / "smpicc"), str(p / "bin" / "smpirun"), name)
        for name, p in simgrid.cached()
    ]
    candidates.append((shutil.which("smpicc") or "", shutil.which("smpirun") or "", ""))
    found = []
    for smpicc, smpirun, name in candidates:
        if smpicc and smpirun:
            match = re.search(r"SimGrid version\s+(\S+)", _output([smpirun, "--version"]))
            version = match.group(1) if match else "unknown"
            if name.startswith(version + "+"):
                version = name
            found.append(MpiSpec(SIMULATED, smpicc, smpirun, version))
    return found


def _smpi() -> MpiSpec | None:
    """The newest SimGrid found (smpi_installs); Debian's is the fallback."""
    from hpcscope.machine import simgrid

    return max(smpi_installs(), key=lambda m: simgrid.version_key(m.version), default=None)


def _flavor(flavor: str) -> MpiSpec | None:
    mpicc, mpirun = _WRAPPERS[flavor]
    mpicc_path, mpirun_path = shutil.which(mpicc), shutil.which(mpirun)
    if mpicc_path and mpirun_path:
        return MpiSpec(flavor, mpicc_path, mpirun_path, version_of(flavor, mpirun_path))
    if shutil.which("mpicc"):  # a cluster module's plain wrapper
        try:
            spec = _from_wrapper("mpicc")
        except MpiNotFound:
            return None
        return spec if spec.flavor == flavor else None
    return None


def discover(spec: str) -> list[MpiSpec]:
    """`spec` is openmpi, mpich, smpi (simulated), auto, all, a comma list of those, or a path
    to mpicc."""
    if "/" in spec:
        return [_from_wrapper(spec)]
    wanted = [w.strip() for w in spec.split(",") if w.strip()]
    if not wanted:
        raise MpiNotFound(
            f"--mpi '{spec}' names no MPI library: use openmpi, mpich, auto, "
            "all, a comma list of those, or the path of an mpicc wrapper"
        )
    found: list[MpiSpec] = []
    for word in wanted:
        if word in ("auto", "all"):
            hits = [m for m in (_flavor(f) for f in FLAVORS) if m]
            if not hits:
                raise MpiNotFound(
                    "no MPI library found; install one, e.g. "
                    f"{_INSTALL_HINT['openmpi']}, or run scripts/install-deps"
                )
            found.extend(hits[:1] if word == "auto" else hits)
        elif word in FLAVORS:
            hit = _flavor(word)
            if not hit:
                raise MpiNotFound(
                    f"{word} is not installed (no {_WRAPPERS[word][0]}); "
                    f"install it with: {_INSTALL_HINT[word]}"
                )
            found.append(hit)
        elif word == SIMULATED:
            sim = _smpi()
            if not sim:
                raise MpiNotFound(
                    f"SimGrid's smpicc/smpirun are not installed; install them with: "
                    f"{_INSTALL_HINT[SIMULATED]}"
                )
            found.append(sim)
        else:
            raise MpiNotFound(
                f"unknown MPI '{word}': use openmpi, mpich, smpi, auto, all "
                "or the path of an mpicc wrapper"
            )
    unique = {m.mpicc: m for m in found}
    return list(unique.values())


def launch_env(mpi: MpiSpec) -> dict[str, str]:
    """Environment every launch of this MPI needs here. Open MPI refuses root without it;
    harmless for a normal user."""
    if mpi.flavor == "openmpi":
        return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return {}
