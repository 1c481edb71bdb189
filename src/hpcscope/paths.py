"""Where hpcscope's C sources and its cache are (a leaf module: build, machine and launch
all read it, so it imports nothing of hpcscope)."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
CHECKOUT = _PACKAGE.parents[1]


def _source_root() -> Path:
    """Where bench/ and lanecoll/ are: beside the package in a checkout (and an editable
    install), or inside it (hpcscope/csrc, copied there by setup.py) when installed."""
    shipped = _PACKAGE / "csrc"
    return shipped if (shipped / "bench").is_dir() else CHECKOUT


SOURCE_ROOT = _source_root()


def cache_root() -> Path:
    """$HPCSCOPE_CACHE, else .cache in the checkout, else ~/.cache/hpcscope (installed)."""
    if os.environ.get("HPCSCOPE_CACHE"):
        return Path(os.environ["HPCSCOPE_CACHE"]).resolve()
    if SOURCE_ROOT == CHECKOUT:
        return (CHECKOUT / ".cache").resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(xdg) / "hpcscope").resolve()
