"""Figures that cost what they show (figures/common.py): compact SVG that still parses and
draws the same elements, PNG where an SVG would be huge, and the content cache."""

from __future__ import annotations

import base64
import xml.dom.minidom

import matplotlib.pyplot as plt
import numpy as np

from hpcscope.figures import common


def _svg_of(uri: str) -> str:
    assert uri.startswith("data:image/svg+xml;base64,")
    return base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")


def _line_figure():
    fig, ax = plt.subplots()
    for k in range(5):
        ax.plot(np.arange(50), np.sin(np.arange(50) / 7 + k), marker="o", label=f"line {k}")
    ax.legend()
    return fig


def test_compact_svg_is_smaller_and_keeps_every_element():
    fig = _line_figure()
    import io

    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    raw = buf.getvalue()
    small = common.compact_svg(raw)
    plt.close(fig)
    assert len(small) < 0.8 * len(raw)
    a, b = xml.dom.minidom.parseString(raw), xml.dom.minidom.parseString(small)
    for tag in ("path", "use", "g"):
        assert len(a.getElementsByTagName(tag)) == len(b.getElementsByTagName(tag))
    assert ' style="' not in small and "<style" in small
    assert common.compact_svg(small) == small  # once is enough


def test_fig_uri_is_compact_svg_with_text_as_text():
    svg = _svg_of(common.fig_uri(_line_figure()))
    doc = xml.dom.minidom.parseString(svg)
    assert doc.getElementsByTagName("text")  # labels as <text>, not glyph outlines
    assert len(svg) < 60_000


def test_a_huge_figure_becomes_png(monkeypatch):
    monkeypatch.setattr(common, "SVG_MAX_BYTES", 10_000)
    uri = common.fig_uri(_line_figure())
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_cached_uri_draws_each_content_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    monkeypatch.setattr(common, "_MEMORY", {})
    drawn = []

    def draw():
        drawn.append(1)
        return _line_figure()

    first = common.cached_uri("test", {"x": [1, 2]}, draw)
    again = common.cached_uri("test", {"x": [1, 2]}, draw)
    other = common.cached_uri("test", {"x": [1, 3]}, draw)
    assert first == again and other is not None and len(drawn) == 2
    monkeypatch.setattr(common, "_MEMORY", {})  # a new process: read from the disk cache
    assert common.cached_uri("test", {"x": [1, 2]}, draw) == first and len(drawn) == 2
    assert list((tmp_path / "figures").rglob("*.uri"))


def test_the_runs_files_and_the_report_draw_a_figure_once(tmp_path, monkeypatch):
    """save_drawings (a run's outputs) remembers the report's URI from its own renderings:
    the report's Drawing.uri() then draws nothing, and gives what a fresh drawing gives,
    SVG or PNG alike (the PNG file's bytes when the SVG is too large)."""
    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path / "cache"))
    for limit in (common.SVG_MAX_BYTES, 10_000):
        monkeypatch.setattr(common, "SVG_MAX_BYTES", limit)
        monkeypatch.setattr(common, "_MEMORY", {})
        drawn: list[int] = []

        def draw(drawn=drawn):
            drawn.append(1)
            return _line_figure()

        drawing = common.Drawing("lines", "test_lines", {"limit": limit}, draw)
        out = tmp_path / str(limit)
        paths = common.save_drawings([drawing], out)
        assert [p.name for p in paths] == ["lines.png", "lines.svg"] and len(drawn) == 1
        uri = drawing.uri()
        assert len(drawn) == 1  # the report drew nothing
        assert uri == common.fig_uri(_line_figure())
        if limit == 10_000:
            png = base64.b64decode(uri.split(",", 1)[1])
            assert png == (out / "lines.png").read_bytes()
        else:
            assert "<text" in (out / "lines.svg").read_text()


def test_the_figure_cache_keeps_the_figures_used_last_within_its_size(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path))
    monkeypatch.setattr(common, "_MEMORY", {})
    monkeypatch.setattr(common, "_pruned", set())
    for k in range(4):
        common.cached_uri("test", {"k": k}, lambda: "<svg xmlns='http://www.w3.org/2000/svg'/>")
    files = sorted((tmp_path / "figures").glob("*/*.uri"))
    assert len(files) == 4
    size = files[0].stat().st_size
    for age, f in enumerate(files):  # the first file used longest ago
        os.utime(f, (1000 + age, 1000 + age))
    oldest = files[0]
    monkeypatch.setattr(common, "CACHE_MAX_BYTES", 3 * size)
    monkeypatch.setattr(common, "_pruned", set())  # a new process
    common.cached_uri("test", {"k": 99}, lambda: "<svg xmlns='http://www.w3.org/2000/svg'/>")
    left = list((tmp_path / "figures").glob("*/*.uri"))
    assert not oldest.exists() and len(left) * size <= 3 * size


def test_a_report_after_the_runs_outputs_redraws_none_of_their_figures(tmp_path, monkeypatch):
    """The demo's path: each run writes its figures (suites' outputs), then the report over
    the runs. The report's p2p curves, coll and lanes grids and pointer chase are the
    runs' own renderings, found by content: none of them is drawn again."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
    import build_store

    from hpcscope.figures import coll as coll_figs
    from hpcscope.figures import node as node_figs
    from hpcscope.figures import p2p as p2p_figs
    from hpcscope.report import html
    from hpcscope.suites import coll, node, p2p

    monkeypatch.setenv("HPCSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(common, "_MEMORY", {})
    store, runs = build_store.build(tmp_path / "store.db")
    for suite, run in ((p2p, runs[0]), (coll, runs[1]), (node, runs[1]), (p2p, runs[2])):
        suite.outputs(store, run, tmp_path / f"out{run}")
    drawn: list[str] = []
    for module, name in (
        (p2p_figs, "plot_metric"),
        (coll_figs, "_coll_grid"),
        (coll_figs, "_lanes_grid"),
        (node_figs, "pointer_chase_figure"),
        (node_figs, "_plot"),  # memory, disk, network, STREAM, FLOP/s: in the report too
    ):
        original = getattr(module, name)

        def counted(*args, _name=name, _original=original, **kw):
            drawn.append(_name)
            return _original(*args, **kw)

        monkeypatch.setattr(module, name, counted)
    assert list(tmp_path.glob("out*/coll_*.png")) and list(tmp_path.glob("out*/p2p_*.png"))
    assert list(tmp_path.glob("out*/node_pointer_chase.png"))
    assert list(tmp_path.glob("out*/node_flops_vs_threads.png"))
    html.write_report(store, runs, tmp_path / "report")
    assert drawn == []
    store.close()
