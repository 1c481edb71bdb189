"""The README's first command, end to end: `hpcscope demo` exactly as `make demo` runs it
(every step, every MPI library found), on the checkout under test. It fails when any
step does not end `ok`, when the report lacks a suite's section or does not open with
its Summary and at most 12 highlights, and when a real browser cannot show it.

Costs about 3 minutes on a 2-core machine (the demo itself, with its simulated lane step
where SimGrid is installed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hpcscope.analysis.highlights import MAX_HIGHLIGHTS
from hpcscope.results.store import Store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import cdp  # noqa: E402

HPCSCOPE = Path(sys.executable).with_name("hpcscope")
SUITES = ("p2p", "coll", "lanes", "node")
REPORT_MAX_BYTES = 1_500_000


def _demo(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HPCSCOPE_DB": str(tmp.parent / f"{tmp.name}.db")}
    return subprocess.run(
        [str(HPCSCOPE), "demo", "--out", str(tmp / "out"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("demo")
    done = _demo(tmp)
    return tmp, done


@pytest.mark.mpi
def test_demo_passes_and_prints_the_report_path(demo_run):
    tmp, done = demo_run
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr
    page = Path(done.stdout.strip().splitlines()[-1])
    assert page == (tmp / "out" / "report" / "index.html").resolve() and page.is_file()
    # one line per step, then the headline numbers
    for suite in SUITES:
        assert re.search(rf"^  {suite}\s+.*: run \d+ ok, ", done.stderr, re.M), suite
    assert "How fast this machine and its MPI are" in done.stderr
    assert re.search(r"p2p \w+ core: latency [\d.]+ (ns|µs|ms) at 8 B", done.stderr)
    assert "building benchmarks" not in done.stderr and "not run" not in done.stderr
    # one process per emulated node measures k = 1 only: the lane pattern also runs on a
    # small simulated cluster, labelled as such (or one line says SimGrid is missing)
    if shutil.which("smpirun"):
        assert re.search(r"^  lanes  simulated \(hydra:.*: run \d+ ok, ", done.stderr, re.M)
        assert re.search(
            r"lanes smpi: simulated on a model of hydra, .*: lane pattern [\d.]+x faster",
            done.stderr,
        )
    else:
        assert "lanes  simulated (hydra:nodes=4,cores_per_socket=2): skipped" in done.stderr


@pytest.mark.mpi
def test_every_step_is_an_ok_run(demo_run):
    tmp, done = demo_run
    store = Store(tmp.parent / f"{tmp.name}.db")
    try:
        runs, _ = store.list_runs()
        measured = [r for r in runs if r.get("label") != "demo lanes (simulated)"]
        assert sorted(r["suite"] for r in measured) == sorted(SUITES)
        assert len(runs) - len(measured) == (1 if shutil.which("smpirun") else 0)
        assert all(r["status"] == "ok" for r in runs), [(r["suite"], r["status"]) for r in runs]
        mpis = {m["flavor"] for m in store.run(runs[0]["id"]).get("mpi") or []}
        assert {"openmpi", "mpich"} <= mpis  # both libraries, as on a fresh machine
    finally:
        store.close()


@pytest.mark.mpi
def test_report_opens_with_summary_and_few_highlights(demo_run):
    tmp, done = demo_run
    page = tmp / "out" / "report" / "index.html"
    html = page.read_text(encoding="utf-8")
    assert page.stat().st_size < REPORT_MAX_BYTES
    headings = re.findall(r"<h2[^>]*>([^<]+)</h2>", html)
    assert headings[:2] == ["Summary", "Highlights"]
    for section in ("Point-to-point by placement", "Collectives", "Node suite"):
        assert section in headings or any(h.startswith(section) for h in headings), section
    summary = html[html.index('id="summary"') : html.index('id="highlights"')]
    for part in ("MPI point-to-point", "Collectives and lanes", "The node"):
        assert part in summary, part
    listed = re.search(r'<ol class="obs">(.*?)</ol>', html, re.S)
    assert listed is None or len(re.findall(r"<li ", listed.group(1))) <= MAX_HIGHLIGHTS
    assert "not run" not in html


@pytest.mark.mpi
@pytest.mark.browser
@pytest.mark.skipif(cdp.chromium() is None, reason="Chromium is not installed")
def test_report_first_screen_in_a_browser(demo_run, tmp_path):
    tmp, _ = demo_run
    page = tmp / "out" / "report" / "index.html"
    result = cdp.load(
        page.resolve().as_uri(),
        tmp_path / "first-screen.png",
        checks={
            "first_h2": "document.querySelector('h2').textContent",
            "summary_top": "document.getElementById('summary').getBoundingClientRect().top",
            "highlights": "document.querySelectorAll('#highlights + p + ol > li').length",
            "p2p_rows": "document.querySelectorAll('#summary table.summary')[0].rows.length",
        },
    )
    assert result["console_errors"] == []
    values = result["values"]
    assert values["first_h2"] == "Summary"
    assert values["summary_top"] < 600  # on the first screen, under the title and banners
    assert values["highlights"] <= MAX_HIGHLIGHTS
    assert values["p2p_rows"] >= 3  # a header and a row per MPI library at least


@pytest.mark.mpi
def test_an_output_folder_under_a_file_fails_the_demo_in_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")  # --out under a file: refused before any step
    done = _demo(tmp_path / "a-file")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "a file stands where hpcscope needs a folder" in done.stderr


def test_demo_choices_are_options_of_the_run_commands():
    """The demo sets options of `run p2p|coll|lanes|node` by name: a renamed option fails
    here at once rather than being ignored (the class of bug that broke the demo)."""
    import click

    from hpcscope.cli.demo import _defaults
    from hpcscope.cli.run import run_p2p

    ctx = click.Context(click.Command("hpcscope"), obj={"db": "unused.db"})
    assert _defaults(ctx, run_p2p, quick=True)["quick"] is True
    with pytest.raises(TypeError, match="no option no_such_option"):
        _defaults(ctx, run_p2p, no_such_option=1)


@pytest.mark.mpi
@pytest.mark.browser
@pytest.mark.skipif(cdp.chromium() is None, reason="Chromium is not installed")
def test_every_figure_the_runs_wrote_is_in_the_report_with_text_of_9_px(demo_run):
    """Issue 46 parts 6 and 8 on the demo itself: each STEM.svg a step wrote is a figure
    of the report (data-file="STEM"), and each figure's smallest text is at least 9 px
    where Chromium lays the page out 1400 px wide."""
    import test_report_figures as figures

    tmp, _ = demo_run
    page = tmp / "out" / "report" / "index.html"
    html = page.read_text(encoding="utf-8")
    written = {p.stem for p in (tmp / "out").glob("*/*.svg") if p.parent.name != "report"}
    shown = {stem for _f, stem, _k, _d in figures._FIGURE.findall(html) if stem}
    assert written and written - shown == set()
    result = cdp.load(page.resolve().as_uri(), width=1400, checks={"shown": figures.SHOWN})
    widths = dict(result["values"]["shown"])
    small = {
        fid: round(figures.smallest_text_px(svg, widths[fid]), 1)
        for fid, svg in figures._svgs(html).items()
    }
    assert small and {f: px for f, px in small.items() if px < figures.MIN_PX} == {}, small
