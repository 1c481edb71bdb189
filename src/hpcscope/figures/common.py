"""Figures for the HTML report as inert images: matplotlib and lstopo SVG, base64-encoded
in `data:` URIs.

Why <img src="data:image/svg+xml;base64,..."> and not inline <svg>: an SVG loaded as an
image never runs scripts, event handlers or external loads, whatever text the machine put
into it (host names, device names in lstopo's drawing). Sanitising as well costs little,
so `sanitize_svg` strips scripts, on* attributes and external references first.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from hpcscope import safe_write  # noqa: E402
from hpcscope.paths import cache_root  # noqa: E402

# Reproducible SVG: no random ids, no date, so two reports of one run are identical.
plt.rcParams["svg.hashsalt"] = "hpcscope"

_SCRIPT = re.compile(r"<script\b.*?</script\s*>|<script\b[^>]*/>", re.I | re.S)
_FOREIGN = re.compile(r"<foreignObject\b.*?</foreignObject\s*>", re.I | re.S)
_ON_ATTR = re.compile(r"\s+on[a-z]+\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
_EXT_HREF = re.compile(r"""\s+(?:xlink:)?href\s*=\s*("(?!#)[^"]*"|'(?!#)[^']*')""", re.I)


# The report shows a figure at most this wide (style.css: body max-width 1120 px less
# 2 x 2rem padding at 15 px) and never wider than its own size; 1 pt of SVG is 4/3 px.
# A figure at most PAGE_WIDTH_IN wide shows at its own size, so MIN_FONT_PT (7 pt =
# 9.3 px) is the smallest text a reader gets; wider figures shrink and their text with
# them (the browser test, tests/test_report_figures.py, measures it).
PAGE_WIDTH_IN = 1056 / 96
MIN_FONT_PT = 7


def quantity_formatter(unit: str) -> Any:
    """A matplotlib tick formatter writing each tick with its scaled unit, as the tables
    scale them (formatting.unit_scale): 0.1 us -> '100 ns', 15800 MB/s -> '15.8 GB/s',
    bytes -> '16 KiB', messages/s -> '10 M/s' (matplotlib's EngFormatter); never
    '1e+07' beside '100000'."""
    from matplotlib.ticker import EngFormatter, FuncFormatter

    from hpcscope.formatting import size_tick, unit_scale

    if unit == "messages/s":
        return EngFormatter(unit="/s", places=0)

    def tick(value: float, _pos: Any) -> str:
        if unit in ("B", "bytes"):
            return size_tick(value) if value >= 0 else ""
        shown, per = unit_scale(value, unit)
        return f"{value / per:.3g} {shown}".strip()

    return FuncFormatter(tick)


@dataclass
class Figure:
    id: str
    title: str
    caption: str
    uri: str  # data:image/svg+xml;base64,...
    alt: str = ""
    stem: str = ""  # the file a run wrote of it (STEM.svg/.png), where it wrote one


@dataclass
class Drawing:
    """A figure before it is drawn: its file stem, what it shows as its cache key (kind,
    data; see cached_uri) and the function that draws it (a matplotlib figure or None).
    The run's files (save_drawings) and the report (cached_uri) draw it once between
    them."""

    stem: str
    kind: str
    data: Any
    draw: Callable[[], Any]

    def uri(self) -> str | None:
        """The report's data URI (cached_uri)."""
        return cached_uri(self.kind, self.data, self.draw)


def save_drawings(drawings: Iterable[Drawing], out_dir: Path) -> list[Path]:
    """out_dir/STEM.png and .svg of each drawing that draws a figure; returns the paths."""
    paths: list[Path] = []
    for drawing in drawings:
        fig = drawing.draw()
        if fig is not None:
            paths += save_png_svg(fig, out_dir, drawing.stem, (drawing.kind, drawing.data))
    return paths


def save_png_svg(
    fig, out_dir: Path, stem: str, cache_as: tuple[str, Any] | None = None
) -> list[Path]:
    """Writes out_dir/stem.png and .svg (files people open or put in papers) and closes
    the figure; returns both paths.

    The files are the report's own renderings (text as text in the SVG, PNG at PNG_DPI,
    margins from the figure's tight_layout), so a figure is drawn once for both:
    cache_as=(kind, data), the key cached_uri(kind, data, ...) would draw this figure
    under, remembers the report's URI made from these bytes, and a report after the run
    (the demo's, `hpcscope report`) draws it no more. A figure of ten log-log panels
    takes about 1.3 s a rendering on a 2-vCPU guest."""
    safe_write.ensure_dir(out_dir)  # the run's or report's folder, made by its caller
    svg, png = _svg_text(fig), _png_bytes(fig)
    plt.close(fig)
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    # drawn into memory, then written by safe_write (never through a planted symlink)
    safe_write.write_bytes(paths[0], png)
    safe_write.write_text(paths[1], svg, encoding="utf-8")
    if cache_as is not None:
        _remember(_cache_key(*cache_as), _report_uri(svg, lambda: png))
    return paths


def sanitize_svg(svg: str) -> str:
    """Drop <script>, <foreignObject>, on* handlers and non-fragment links."""
    svg = _SCRIPT.sub("", svg)
    svg = _FOREIGN.sub("", svg)
    svg = _ON_ATTR.sub("", svg)
    return _EXT_HREF.sub("", svg)


def svg_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(
        compact_svg(sanitize_svg(svg)).encode("utf-8")
    ).decode("ascii")


# A figure's SVG above this size (after compact_svg) goes into the page as PNG instead: a
# scatter of thousands of points is smaller as pixels than as paths. 300 KB keeps every
# line figure of the report in SVG.
SVG_MAX_BYTES = 300_000
PNG_DPI = 110

_LONG_DECIMAL = re.compile(r"(\d\.\d{2})\d+")
_INDENT = re.compile(r"\n[ \t]+")
_TAG = re.compile(r"<[A-Za-z][^<>]*>")
_STYLE_ATTR = re.compile(r'\sstyle="([^"]*)"')


def compact_svg(svg: str) -> str:
    """matplotlib's SVG made smaller without changing what it shows:

    - indentation removed;
    - coordinates to 2 decimals (1/100 of a pixel at the figure's size; matplotlib
      writes 6), which is the largest saving on line plots;
    - shared styles: each distinct style="..." becomes one CSS class in a <style>
      element, so the hundreds of markers and line segments of one look share it.
    Costs one pass of two regular expressions (a few ms per figure)."""
    svg = _LONG_DECIMAL.sub(r"\1", svg)
    # matplotlib indents every line; a newline alone separates as well (about 15 % of a
    # figure's bytes)
    svg = _INDENT.sub("\n", svg)
    classes: dict[str, str] = {}

    def one_tag(match: re.Match[str]) -> str:
        tag = match.group(0)
        found = _STYLE_ATTR.search(tag)
        if found is None or " class=" in tag:
            return tag
        name = classes.setdefault(found.group(1), f"s{len(classes)}")
        return tag[: found.start()] + f' class="{name}"' + tag[found.end() :]

    svg = _TAG.sub(one_tag, svg)
    if not classes:
        return svg
    rules = "".join(f".{name}{{{style}}}" for style, name in classes.items())
    at = svg.find(">", svg.find("<svg")) + 1
    return svg[:at] + f'<style type="text/css">{rules}</style>' + svg[at:]


def _svg_text(fig) -> str:
    buf = io.StringIO()
    # Text as <text> in a generic font, not as glyph outlines: the outlines of every
    # character used are most of a small figure's bytes (about half of a line plot).
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def _png_bytes(fig) -> bytes:
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=PNG_DPI, metadata={"Software": None})
    return png.getvalue()


def _report_uri(svg: str, png: Callable[[], bytes]) -> str:
    """The compact SVG as a data URI, or the PNG where that SVG exceeds SVG_MAX_BYTES."""
    compact = compact_svg(svg)
    if len(compact) <= SVG_MAX_BYTES:
        return svg_uri(compact)
    return "data:image/png;base64," + base64.b64encode(png()).decode("ascii")


def fig_uri(fig) -> str:
    """A matplotlib figure as a data URI (and closed, so memory does not grow): compact
    SVG, or PNG when that SVG would exceed SVG_MAX_BYTES."""
    uri = _report_uri(_svg_text(fig), lambda: _png_bytes(fig))
    plt.close(fig)
    return uri


def cached_uri(kind: str, data: Any, draw: Callable[[], Any]) -> str | None:
    """fig_uri(draw()) (svg_uri when draw gives SVG text), cached by content: the same
    `kind` and `data` (what the figure shows, JSON-able) give the same figure, so it is
    drawn once and then read from <cache>/figures/ (paths.cache_root(); a report over the
    same runs, or a nightly report over a growing history, redraws only what changed).
    None when draw() gives None. HPCSCOPE_FIGURE_CACHE=0 turns the disk cache off
    (benchmarks measure cold); one process still draws a content once."""
    key = _cache_key(kind, data)
    if key in _MEMORY:
        return _MEMORY[key]
    path = _cache_path(key)
    if path is not None and path.exists():
        _MEMORY[key] = path.read_text(encoding="ascii")
        try:
            os.utime(path)  # last used: what _prune keeps
        except OSError:
            pass
        return _MEMORY[key]
    fig = draw()
    if fig is None:
        uri = None
    elif isinstance(fig, str):  # an SVG drawn by another program (lstopo)
        uri = svg_uri(fig)
    else:
        uri = fig_uri(fig)
    _remember(key, uri)
    return uri


def _cache_key(kind: str, data: Any) -> str:
    text = json.dumps([CACHE_VERSION, kind, data], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cache_path(key: str) -> Path | None:
    if os.environ.get("HPCSCOPE_FIGURE_CACHE", "1") == "0":
        return None
    return cache_root() / "figures" / f"{key[:2]}/{key}.uri"


def _remember(key: str, uri: str | None) -> None:
    path = _cache_path(key)
    if uri is not None and path is not None:
        try:
            _prune(path.parent.parent)
            safe_write.ensure_dir(cache_root(), path.parent.relative_to(cache_root()))
            # atomic: a concurrent report reads all or nothing
            safe_write.write_text(path, uri, encoding="ascii")
        except OSError:
            pass  # a read-only cache only costs the drawing
    _MEMORY[key] = uri


CACHE_VERSION = 4  # bump when a figure's drawing changes, so old cached ones are not used
_MEMORY: dict[str, str | None] = {}

# Every run caches its figures (a demo about 3 MB), and an installed hpcscope caches under
# the home directory, which a cluster's quota keeps small: above this size the figures
# used longest ago go, down to half of it.
CACHE_MAX_BYTES = 100_000_000
_pruned: set[Path] = set()


def _prune(folder: Path) -> None:
    """Once a process per cache folder (a scan: about 1 ms per 100 figures)."""
    if folder in _pruned:
        return
    _pruned.add(folder)
    found = folder.glob("*/*.uri") if folder.is_dir() else []
    # never through a linked folder: only the cache's own files go
    files = [(f.lstat(), f) for f in found if not f.parent.is_symlink()]
    total = sum(st.st_size for st, _ in files)
    if total <= CACHE_MAX_BYTES:
        return
    for st, f in sorted(files, key=lambda x: x[0].st_mtime):
        f.unlink(missing_ok=True)
        total -= st.st_size
        if total <= CACHE_MAX_BYTES // 2:
            break


def lstopo_uri(topology_xml: str) -> str | None:
    """lstopo's drawing as a data URI, cached by the topology (the same machine is drawn
    once; lstopo takes about 0.2 s)."""
    return cached_uri("lstopo", topology_xml, functools.partial(lstopo_svg, topology_xml))


def lstopo_svg(topology_xml: str, timeout_s: float = 30.0) -> str | None:
    """hwloc's own drawing of a stored topology (`lstopo -i FILE.xml --of svg`), or None
    when lstopo is missing or fails (the text description is shown instead)."""
    exe = shutil.which("lstopo")
    if exe is None or not topology_xml:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "topology.xml"
        safe_write.write_text(xml, topology_xml)
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
