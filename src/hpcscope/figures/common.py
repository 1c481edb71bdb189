"""Figures for the HTML report as inert images: matplotlib and lstopo SVG, base64-encoded
in `data:` URIs.

Why <img src="data:image/svg+xml;base64,..."> and not inline <svg>: an SVG loaded as an
image never runs scripts, event handlers or external loads, whatever text the machine put
into it (host names, device names in lstopo's drawing). Sanitising as well costs little,
so `sanitize_svg` strips scripts, on* attributes and external references first.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Reproducible SVG: no random ids, no date, so two reports of one run are identical.
plt.rcParams["svg.hashsalt"] = "hpcscope"

_SCRIPT = re.compile(r"<script\b.*?</script\s*>|<script\b[^>]*/>", re.I | re.S)
_FOREIGN = re.compile(r"<foreignObject\b.*?</foreignObject\s*>", re.I | re.S)
_ON_ATTR = re.compile(r"\s+on[a-z]+\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
_EXT_HREF = re.compile(r"""\s+(?:xlink:)?href\s*=\s*("(?!#)[^"]*"|'(?!#)[^']*')""", re.I)


@dataclass
class Figure:
    id: str
    title: str
    caption: str
    uri: str  # data:image/svg+xml;base64,...
    alt: str = ""


def save_png_svg(fig, out_dir: Path, stem: str) -> list[Path]:
    """Writes out_dir/stem.png and .svg (files people open or put in papers) and closes
    the figure; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    for path in paths:
        fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return paths


def sanitize_svg(svg: str) -> str:
    """Drop <script>, <foreignObject>, on* handlers and non-fragment links."""
    svg = _SCRIPT.sub("", svg)
    svg = _FOREIGN.sub("", svg)
    svg = _ON_ATTR.sub("", svg)
    return _EXT_HREF.sub("", svg)


def svg_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(
        sanitize_svg(svg).encode("utf-8")
    ).decode("ascii")


def fig_uri(fig) -> str:
    """A matplotlib figure as a data URI (and closed, so memory does not grow)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return svg_uri(buf.getvalue())


def lstopo_svg(topology_xml: str, timeout_s: float = 30.0) -> str | None:
    """hwloc's own drawing of a stored topology (`lstopo -i FILE.xml --of svg`), or None
    when lstopo is missing or fails (the text description is shown instead)."""
    exe = shutil.which("lstopo")
    if exe is None or not topology_xml:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "topology.xml"
        xml.write_text(topology_xml, encoding="utf-8")
        try:
            done = subprocess.run(
                [exe, "-i", str(xml), "--of", "svg"],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode != 0 or "<svg" not in done.stdout:
        return None
    return done.stdout
