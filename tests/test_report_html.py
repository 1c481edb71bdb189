"""The HTML report: written from a store of synthetic records (LCC3 numbers, a coll-like
and a node-like set, hostile strings), self-contained, escaped, and - with real headless
Chromium - loading with no console errors, no network requests and every figure drawn."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcscope.figures.common import sanitize_svg
from hpcscope.report.html import write_report

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402
import cdp  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("report")
    store, runs = build_store.build(tmp / "store.db")
    try:
        path = write_report(store, runs, tmp / "out")
    finally:
        store.close()
    return path, path.read_text(encoding="utf-8")


def _visible_text(html: str) -> str:
    """Text between tags (what a reader sees), without attributes and data: URIs."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    return re.sub(r"<[^>]*>", " ", html)


def test_file_exists_and_sections_render(report):
    path, html = report
    assert path.name == "index.html" and path.exists()
    for title in (
        "Highlights",
        "The machine",
        "Environment",
        "Point-to-point by placement",
        "Collectives",
        "Node suite",
        "Methods",
        "Skipped and warnings",
        "Failed or interrupted launches",
        "Comparison",
    ):
        assert title in html, title
    assert "Hockney model per placement and segment" in html
    assert "Theoretical peaks" in html and "6 channels x 1333 MT/s x 8 bytes" in html


def test_simulated_and_emulated_runs_are_labelled(report):
    _, html = report
    assert "simulated (SimGrid)" in html
    assert "Nodes emulated: 4x6 on one machine" in html  # what was emulated
    assert "collectives and lanes ran on nodes emulated: 4x6" in html  # the banner
    assert "(True)" not in html


def test_observations_cite_lcc3_numbers(report):
    _, html = report
    text = _visible_text(html)
    assert "latency is flat within 10% up to 16 B" in text
    assert re.search(r"node-to-node \(openmpi\) latency is 1\d\.\dx core-to-core", text)
    assert re.search(
        r"openmpi core: bandwidth drops from 10\.\d GB/s at 8 KiB to 6\.\d+ GB/s "
        r"at 16 KiB",
        text,
    )
    assert "suggested by one launch" in text  # coll-like set: one launch
    assert "past the L1d size of 32 KiB" in text  # pointer chase
    assert "of the fp64 peak" in text  # efficiency vs peak


def test_no_external_references(report):
    _, html = report
    # http(s):// may appear only in visible text, never in an attribute or a stylesheet.
    for tag in re.findall(r"<[^>]+>", html):
        assert not re.search(r"(?:https?:)?//[a-z0-9]", tag.split("data:", 1)[0], re.I), tag[:200]
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    assert "url(" not in style and "@import" not in style
    assert "<script" not in html.lower()
    assert "Content-Security-Policy" in html


def test_machine_strings_are_escaped(report):
    _, html = report
    assert "<script>alert(1)</script>" not in html
    assert "lcc3-n01&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "3.1.6 &lt;script&gt;alert(1)&lt;/script&gt;" in html  # MPI version string


def test_every_table_has_a_csv_next_to_the_page(report):
    path, html = report
    links = re.findall(r'<a href="([^"]+\.csv)">', html)
    assert len(links) >= 10
    for name in links:
        assert "/" not in name and (path.parent / name).exists(), name
    with open(path.parent / "run1_p2p_latency.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["MPI placement", "bytes", "median"]
    assert any(r[0] == "openmpi node" and r[1] == "8" for r in rows[1:])


def test_figures_are_inert_images(report):
    _, html = report
    uris = re.findall(r'<img src="(data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)"', html)
    assert len(uris) >= 10
    assert len(uris) == html.count("<img ")


def test_sanitize_svg_strips_active_content():
    evil = (
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>'
        "<a href=\"https://example.org/x\"><text onclick='alert(3)'>host</text></a>"
        '<use href="#g1"/><foreignObject><div>x</div></foreignObject></svg>'
    )
    clean = sanitize_svg(evil)
    assert "alert" not in clean and "example.org" not in clean and "foreignObject" not in clean
    assert 'href="#g1"' in clean and "host" in clean


@pytest.mark.browser
@pytest.mark.skipif(cdp.chromium() is None, reason="Chromium is not installed")
def test_page_in_headless_chromium(report, tmp_path):
    path, html = report
    shot = tmp_path / "report.png"
    result = cdp.load(
        path.resolve().as_uri(),
        shot,
        checks={
            "images": "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])",
            "alerts_as_text": "document.body.innerText.includes('<script>alert(1)</script>')",
            "script_elements": "document.querySelectorAll('script').length",
        },
    )
    assert result["console_errors"] == []
    external = [u for u in result["requests"] if not u.startswith(("data:", "file:"))]
    assert external == []
    images = result["values"]["images"]
    assert len(images) == html.count("<img ")
    assert all(done and w > 0 and h > 0 for done, w, h in images), images
    assert result["values"]["alerts_as_text"] is True  # shown as text, not run
    assert result["values"]["script_elements"] == 0
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[1] == 1280 and pixels.shape[0] > 4000
    assert float(np.std(pixels[..., :3])) > 0.05  # not blank
