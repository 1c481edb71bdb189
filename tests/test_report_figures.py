"""Figures a person reads at page width (issue 46 parts 6 and 8): every figure's smallest
text is at least 9 px where the report is 1400 px wide, and every figure file the runs
wrote (STEM.svg beside STEM.png) is in the report. Measured from the SVG (its fonts,
scaled by the width it shows at) and, where Chromium is installed, from the width the
browser lays each <img> out at."""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

import pytest

from hpcscope.figures import common
from hpcscope.report import html
from hpcscope.suites import coll, node, p2p

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402
import cdp  # noqa: E402

MIN_PX = 9.0
PAGE_PX = 1056  # style.css: body max-width 1120 px less 2 x 2rem (15 px) padding
_FIGURE = re.compile(
    r'<figure id="([^"]+)"[^>]*?(?: data-file="([^"]+)")?>\s*'
    r'<img src="data:image/(svg\+xml|png);base64,([^"]+)"'
)
_FONT = re.compile(r"font(?:-size)?:\s*([\d.]+)px")
_VIEWBOX = re.compile(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"')
_WIDTH_PT = re.compile(r'<svg[^>]*\swidth="([\d.]+)pt"')


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[Path]]:
    """The runs' own outputs (their figure files), then the report over the runs."""
    tmp = tmp_path_factory.mktemp("figures")
    store, runs = build_store.build(tmp / "store.db")
    written: list[Path] = []
    try:
        for suite, run in ((p2p, runs[0]), (coll, runs[1]), (node, runs[1]), (p2p, runs[2])):
            written += suite.outputs(store, run, tmp / f"out{run}")
        path = html.write_report(store, runs, tmp / "report")
    finally:
        store.close()
    return path, path.read_text(encoding="utf-8"), written


def _svgs(page: str) -> dict[str, str]:
    """{figure id: SVG text} of the report's SVG figures that write their text as text
    (lstopo's drawing writes glyph outlines: no font size to measure)."""
    found = {}
    for fid, _stem, kind, data in _FIGURE.findall(page):
        if kind == "svg+xml":
            svg = base64.b64decode(data).decode("utf-8")
            if _FONT.search(svg):
                found[fid] = svg
    return found


def smallest_text_px(svg: str, shown_px: float) -> float:
    """The smallest font of an SVG in CSS pixels when it is shown shown_px wide."""
    width = float(_VIEWBOX.search(svg).group(1))
    return min(float(f) for f in _FONT.findall(svg)) * shown_px / width


def _natural_px(svg: str) -> float:
    return float(_WIDTH_PT.search(svg).group(1)) * 4 / 3


def test_smallest_text_px_scales_the_font_by_the_shown_width():
    svg = '<svg width="720pt" viewBox="0 0 720 300"><text style="font-size: 7px">a</text></svg>'
    assert smallest_text_px(svg, 960) == pytest.approx(9.33, abs=0.01)  # natural size
    assert smallest_text_px(svg, 480) == pytest.approx(4.67, abs=0.01)  # shrunk


def test_every_figure_text_is_at_least_9_px_at_page_width(report):
    """At its own size or the page's width, whichever is smaller (img max-width: 100 %)."""
    _, page, _ = report
    svgs = _svgs(page)
    assert any("coll" in fid for fid in svgs) and any("chase" in fid for fid in svgs)
    small = {
        fid: round(smallest_text_px(svg, min(_natural_px(svg), PAGE_PX)), 1)
        for fid, svg in svgs.items()
    }
    assert {f: px for f, px in small.items() if px < MIN_PX} == {}, small


def test_coll_grid_has_at_most_three_panels_a_row_and_fits_the_page(report):
    _, page, _ = report
    grids = {f: s for f, s in _svgs(page).items() if "coll_" in f}
    assert grids
    for svg in grids.values():
        assert _natural_px(svg) <= PAGE_PX
        assert common.PAGE_WIDTH_IN * 96 == PAGE_PX


def test_every_figure_file_the_runs_wrote_is_in_the_report(report):
    _, page, written = report
    files = {p.stem for p in written if p.suffix == ".svg"}
    shown = {stem for _fid, stem, _kind, _data in _FIGURE.findall(page) if stem}
    assert {"node_pointer_chase", "p2p_latency"} <= files
    assert files - shown == set()


def test_tick_labels_are_scaled_units_not_exponents(report):
    _, page, _ = report
    for fid, svg in _svgs(page).items():
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
        assert not [t for t in texts if re.search(r"\de[+-]\d|10\^|2\^", t)], fid
        assert not [t for t in texts if re.fullmatch(r"\d{5,}", t.strip())], (fid, texts)


# [id, shown width] of every figure image, as Chromium lays the page out
SHOWN = """Array.from(document.querySelectorAll('figure img')).map(e =>
  [e.closest('figure').id, e.getBoundingClientRect().width])"""


@pytest.mark.browser
@pytest.mark.skipif(cdp.chromium() is None, reason="Chromium is not installed")
def test_figure_text_in_headless_chromium_at_1400_px(report):
    path, page, _ = report
    result = cdp.load(path.resolve().as_uri(), width=1400, checks={"shown": SHOWN})
    shown = dict(result["values"]["shown"])
    assert shown and all(w > 0 for w in shown.values()), shown
    svgs = _svgs(page)
    small = {fid: round(smallest_text_px(svg, shown[fid]), 1) for fid, svg in svgs.items()}
    assert {f: px for f, px in small.items() if px < MIN_PX} == {}, small


def _coll_rows(collectives: int) -> list[dict]:
    """verdicts.coll_table's rows for one setup: native and lane at four counts."""
    return [
        {
            "mpi": "openmpi",
            "N": 2,
            "n": 4,
            "p": 8,
            "collective": f"coll{i:02d}",
            "count": count,
            "algorithms": ["native", "lane"],
            "native_median": 2.0 + count / 100,
            "native_min": 1.8 + count / 100,
            "lane_median": 3.0 + count / 90,
            "lane_min": 2.7 + count / 90,
        }
        for i in range(collectives)
        for count in (1, 10, 100, 1000)
    ]


def test_a_grid_of_13_collectives_keeps_its_text_at_9_px(tmp_path):
    """The demo's 13 collectives: at most 3 panels a row, so the grid shows at its own
    size (5 a row shrank it to 0.65 and its 7 pt ticks to 6 px)."""
    from hpcscope.figures import coll as coll_figs

    (drawing,) = coll_figs.coll_drawings(_coll_rows(13))
    svg = common._svg_text(drawing.draw())
    assert _natural_px(svg) <= PAGE_PX
    assert smallest_text_px(svg, min(_natural_px(svg), PAGE_PX)) >= MIN_PX


def test_lane_figures_with_only_one_lane_count_are_left_out_and_named():
    from hpcscope.figures import coll as coll_figs

    rows = [
        {"mpi": "openmpi", "benchmark": b, "N": 2, "n": 1, "k": k, "count": c, "median_us": 5.0}
        for b, ks in (("multi_coll", (1,)), ("lane_pattern", (1, 2)))
        for k in ks
        for c in (1, 10)
    ]
    assert [d.stem for d in coll_figs.lanes_drawings(rows)] == ["lane_pattern_openmpi_N2_n1"]
    assert coll_figs.lanes_left_out(rows) == ["multi_coll openmpi N=2 x n=1"]
