"""`hpcscope show` is a summary a person reads (issue 27, part 6): p2p as OSU tables (sizes
as rows, one column per MPI x placement), coll and lanes as verdict tables, node as the
node table, `--cells` the per-cell statistics; nothing cut to '…' in a 100-column
terminal. `hpcscope list` fits the terminal and is plain text in a pipe. All built from
synthetic records (tests/fixtures/report), no MPI needed."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from hpcscope.analysis.p2p_curves import curves
from hpcscope.report.show import _num, print_run
from hpcscope.results.store import Store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402
import lcc3  # noqa: E402

TITLE = "p2p latency (µs), as osu_latency: median per message size"  # one scaled unit
HOSTILE = "evil \x1b]0;owned\x07\x1b[5mblink [red]not red[/red] \u202eexe.txt"


def render(store: Store, run: int, width: int = 100, *, cells: bool = False) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    print_run(store, run, console, cells=cells)
    return console.export_text()


def _launch(store: Store, run: int, tags: dict, records: list[dict], bench: str = "p2p") -> None:
    lid = store.add_launch(run, "/".join(str(v) for v in tags.values()), tags)
    store.add_record(lid, build_store.meta(bench, "n1"))
    for r in records:
        store.add_record(lid, r)
    store.finish_launch(lid, "COMPLETED", 0)


def p2p_run(store: Store, mpis=("openmpi", "mpich"), label: str = "two MPIs") -> int:
    """One run with the LCC3 curves of every MPI in `mpis` (core, socket, node, 3 launches)."""
    run = store.create_run("p2p", host="n1", label=label)
    for mpi in mpis:
        launches: dict[tuple, list[dict]] = {}
        for tags, rec in lcc3.sample_records(mpi=mpi):
            launches.setdefault(tuple(sorted(tags.items())), []).append(rec)
        for tags_items, recs in launches.items():
            _launch(store, run, dict(tags_items), recs)
    store.finish_run(run, "ok")
    return run


def wide_p2p_run(store: Store) -> int:
    """Two MPIs x five placements: ten configuration columns, more than 100 columns fit."""
    run = store.create_run("p2p", host="n1")
    for mpi in ("openmpi", "mpich"):
        for place in ("smt", "core", "numa", "socket", "node"):
            for rep in (1, 2):
                recs = [
                    {
                        "type": "sample",
                        "metric": "latency",
                        "unit": "us",
                        "params": {"bytes": size, "test": "latency"},
                        "values": [1.23456 + size / 1e3 + 0.001 * i for i in range(10)],
                        "warmups": 1,
                    }
                    for size in (0, 1024, 4 << 20)
                ]
                _launch(store, run, {"mpi": mpi, "placement": place, "repeat": rep}, recs)
    store.finish_run(run, "ok")
    return run


def lanes_run(store: Store) -> int:
    run = store.create_run("lanes", host="n1")
    recs = []
    for bench in ("lane_pattern", "multi_coll"):
        for k in (1, 2, 4):
            base = 40.0 if bench == "multi_coll" else 40.0 / k
            recs.append(
                {
                    "type": "sample",
                    "benchmark": bench,
                    "metric": "time",
                    "unit": "us",
                    "params": {"count": 1024, "bytes": 4096, "lanes": k, "nodes": 2, "ppn": 4},
                    "values": [base * (1 + 0.01 * i) for i in range(12)],
                    "warmups": 1,
                }
            )
    _launch(store, run, {"mpi": "openmpi", "repeat": 1}, recs, "lane_pattern")
    store.finish_run(run, "ok")
    return run


def node_run(store: Store) -> int:
    run = store.create_run("node", host="n1")
    store.add_note(
        run,
        "peak",
        "fp64 peak: 128 GFLOP/s",
        {
            "name": "fp64",
            "value": 128.0,
            "unit": "GFLOP/s",
            "formula": "2 cores x 2 GHz x 32 FLOP/cycle",
            "metric": "flops",
            "match": {"precision": "fp64"},
        },
    )
    params = {"workload": "cpu_peak", "op": "fma", "precision": "fp64", "threads": 2}
    ours = {
        "type": "sample",
        "benchmark": "cpu",
        "metric": "flops",
        "unit": "GFLOP/s",
        "params": {**params, "isa": "avx512", "kernel": "registers"},
        "values": [100.0, 110.0, 96.0],
        "warmups": 1,
    }
    ref = {
        **ours,
        "benchmark": "likwid-bench",
        "params": {**params, "kernel": "fma_avx512"},
        "values": [88.0, 80.0],
    }
    _launch(store, run, {"part": "cpu"}, [ours], "cpu")
    _launch(store, run, {"reference": "likwid-bench"}, [ref], "likwid-bench")
    store.finish_run(run, "ok")
    return run


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "show.db") as s:
        yield s


def test_p2p_table_has_sizes_as_rows_and_one_column_per_mpi_and_placement(store) -> None:
    run = p2p_run(store)
    text = render(store, run)
    lines = text.splitlines()
    start = lines.index(TITLE)
    head = lines[start + 1 : start + 3]
    assert head[0].split() == ["mpich"] * 3 + ["openmpi"] * 3
    assert head[1].split() == ["size", "core", "socket", "node"] * 1 + ["core", "socket", "node"]
    rows = lines[start + 4 : start + 4 + 24]
    sizes = [re.match(r"\s*(\d+(?:\.\d+)? [KM]?i?B)", r).group(1) for r in rows]
    assert sizes[:3] == ["0 B", "1 B", "2 B"] and "1 KiB" in sizes and sizes[-1] == "4 MiB"
    # each cell is the report's curve centre (analysis/p2p_curves.py)
    centre = curves(store.samples(run), "latency")["openmpi core"][1024]["center"]
    one_k = next(r for r in rows if r.lstrip().startswith("1 KiB")).split()
    assert one_k[2 + 3].rstrip("*") == _num(centre)
    # one unit per table, scaled from its medians (formatting.column_unit)
    assert re.search(r"p2p bandwidth \((MB|GB)/s\), as osu_bw: median per message size", text)
    assert "median: the median over launches (here 3) of each launch's median" in text


def test_unstable_cells_are_marked_and_the_mark_explained_once(store) -> None:
    """A star where the median's interval over launches is wider than asked (5 % for
    fixed counts), one line per curve, test and class below; none where it is within."""
    run = store.create_run("p2p", host="n1")
    scales = {8: (1.0, 1.3, 1.0), 16: (1.0, 1.002, 0.998)}  # 8 B: one launch 30 % off
    for rep in (1, 2, 3):
        recs = [
            {
                "type": "sample",
                "metric": "latency",
                "unit": "us",
                "params": {"bytes": size},
                "values": [scale[rep - 1] * (2.0 + 0.001 * i) for i in range(10)],
                "warmups": 0,
            }
            for size, scale in scales.items()
        ]
        _launch(store, run, {"mpi": "openmpi", "placement": "core", "repeat": rep}, recs)
    text = render(store, run)
    row = next(l for l in text.splitlines() if l.lstrip().startswith("8 B"))
    assert row.rstrip().endswith("*")
    row = next(l for l in text.splitlines() if l.lstrip().startswith("16 B"))
    assert not row.rstrip().endswith("*")
    flat = " ".join(text.split())
    assert flat.count("* 1 cell whose median's 95% interval over launches is wider than 5%") == 1
    assert "openmpi core latency 8 B: ±" in flat and "(launches bimodal (not explained" in flat


def test_more_configurations_than_fit_are_split_not_cut(store) -> None:
    run = wide_p2p_run(store)
    text = render(store, run, 100)
    assert "…" not in text and max(len(l) for l in text.splitlines()) <= 100
    head = text.splitlines()[text.splitlines().index(TITLE) + 1]
    assert head.split() == ["mpich"] * 5 + ["openmpi"] * 5  # ten columns fit 100
    text = render(store, run, 70)
    assert "…" not in text and max(len(l) for l in text.splitlines()) <= 70
    lines = text.splitlines()
    parts = [i for i, l in enumerate(lines) if l.startswith(TITLE)]
    assert [lines[i] for i in parts] == [f"{TITLE} (1/2)", f"{TITLE} (2/2)"]
    # split between the MPI libraries, the size column repeated
    assert lines[parts[0] + 1].split() == ["mpich"] * 5
    assert lines[parts[1] + 1].split() == ["openmpi"] * 5
    assert lines[parts[1] + 2].split() == ["size", "smt", "core", "numa", "socket", "node"]
    assert "4 MiB" in text and "1 KiB" in text


@pytest.mark.parametrize("cells", [False, True])
def test_no_cell_is_cut_in_a_100_column_terminal(tmp_path: Path, cells: bool) -> None:
    store, runs = build_store.build(tmp_path / "fx.db")
    with store:
        runs += [lanes_run(store), node_run(store), wide_p2p_run(store)]
        for run in runs:
            text = render(store, run, 100, cells=cells)
            assert "…" not in text, (run, text)
            assert max(len(l) for l in text.splitlines()) <= 100, (run, text)


def test_show_on_the_command_line_at_100_columns(tmp_path: Path) -> None:
    from conftest import HPCSCOPE

    build_store.build(tmp_path / "fx.db")[0].close()
    env = {**os.environ, "COLUMNS": "100"}
    for args in (["show", "1"], ["show", "2"], ["show", "1", "--cells"]):
        done = subprocess.run(
            [*HPCSCOPE, "--db", str(tmp_path / "fx.db"), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "…" not in done.stdout
        assert max(len(l) for l in done.stdout.splitlines()) <= 100
    assert "95% CI" in done.stdout and "of median" in done.stdout  # --cells


def test_cells_still_gives_the_per_cell_statistics(store) -> None:
    run = p2p_run(store, mpis=("openmpi",))
    text = render(store, run, cells=True)
    for column in ("(launches)", "median", "95% CI", "of median", "min", "CV", "mean ± σ"):
        assert column in text
    assert "per launch" in text and "p2p: latency (us)" in text
    assert "36 (3)" in text  # 12 values in each of 3 launches, per cell
    assert "osu_latency" not in text  # not the summary tables


def test_coll_shows_native_median_speedups_and_verdicts(tmp_path: Path) -> None:
    store, (_, coll, _) = build_store.build(tmp_path / "fx.db")
    with store:
        text = render(store, coll)
    assert "coll MPI_Bcast, mpich, N=4 nodes x n=6 ranks (p=24)" in " ".join(text.split())
    bcast = text[text.index("coll MPI_Bcast") :]
    head = next(l for l in bcast.splitlines() if l.lstrip().startswith("count"))
    assert head.split() == ["count", "size", "native", "lane", "hier", "verdict"]
    row = next(l for l in bcast.splitlines() if l.lstrip().startswith("4096"))
    # the fixture's one launch suggests the violation, "?" (two launches would make it "!")
    assert "16 KiB" in row and "?" in row and "suggested" in row
    assert re.search(r"\b2\.\d\d\?", row)  # the lane mock-up about 2.2x faster
    allreduce = text[text.index("coll MPI_Allreduce") : text.index("coll MPI_Bcast")]
    assert "suggested" not in allreduce and " ok" in allreduce
    flat = " ".join(text.split())
    assert "guideline findings (1, one per collective and comparison): suggested: mpich" in flat
    assert "Holm's correction over the run's 16 checks" in flat
    assert "nodes emulated: 4x6 on one machine" in flat and "True" not in flat


def test_coll_without_native_shows_each_algorithms_median(store) -> None:
    """A run of mock-ups only (the paper's pipeline against pipeline1) has no speed-up to
    show: each algorithm's median instead of dashes, and the legend says so."""
    run = store.create_run("coll", host="n1", backend="sim")
    params = {"collective": "bcast", "count": 11520000, "bytes": 46080000, "nodes": 36,
              "ppn": 32, "p": 1152}  # fmt: skip
    records = [
        {"type": "sample", "benchmark": "coll", "metric": "time", "unit": "us",
         "params": {**params, "algorithm": alg}, "values": [value], "warmups": 0}
        for alg, value in (("pipeline", 20339.598), ("pipeline1", 37326.719))
    ]  # fmt: skip
    _launch(store, run, {"mpi": "smpi", "repeat": 1}, records, bench="coll")
    text = " ".join(render(store, run).split())
    assert "11520000 43.9 MiB - 20340 37327 no native" in text, text
    assert "Rows without native (verdict 'no native') give each algorithm's median" in text


def test_lanes_shows_the_factor_per_lane_count(store) -> None:
    text = render(store, lanes_run(store))
    assert "lane pattern openmpi: N=2 nodes x n=4 ranks" in text
    assert "multi-collective openmpi" in text
    pattern = text[text.index("lane pattern openmpi") : text.index("multi-collective openmpi")]
    k4 = next(l for l in pattern.splitlines() if re.match(r"\s*1024\s+4 KiB\s+4\s", l))
    assert "4.00" in k4.split()  # t(1)/t(4)


def test_node_shows_measured_reference_peak_and_efficiency(store) -> None:
    text = render(store, node_run(store))
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if "FP64 FMA peak kernel, 2 threads" in l)
    row = lines[at]
    # best 110 of peak 128 = 86 %; our median 100 / likwid-bench's median 84 = 119 %, its
    # range 80-88 and our median beside it (the cell wraps)
    assert row.split()[-6:] == ["GFLOP/s", "likwid-bench", "84", "128", "86%", "119%"]
    assert "110" in row
    assert "(80-88; ours 100)" in " ".join(" ".join(lines[at : at + 3]).split())


def test_other_benchmarks_get_a_compact_table(store) -> None:
    run = store.create_run("custom", host="n1")
    rec = {
        "type": "sample",
        "metric": "time",
        "unit": "us",
        "params": {"what": "startup"},
        "values": [5.0, 5.1, 4.9, 5.0, 5.2, 5.0, 4.8],
        "warmups": 0,
    }
    _launch(store, run, {"repeat": 1}, [rec], "mytool")
    text = render(store, run)
    assert "mytool: time (us); what=startup" in text  # what all rows share
    assert "5" in text.split("mytool: time (us)")[1]


def list_cli(db: Path, width: int | None = None, *args: str) -> subprocess.CompletedProcess:
    from conftest import HPCSCOPE

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    if width:
        env["COLUMNS"] = str(width)
    return subprocess.run(
        [*HPCSCOPE, "--db", str(db), "list", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_list_in_a_pipe_is_plain_with_full_start_time_and_label(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with Store(db) as store:
        label = "a rather long label that would not fit an eighty column terminal at all"
        runs = [p2p_run(store, mpis=("openmpi",), label=label)]
        runs.append(store.create_run("coll", host="n2", backend="local"))
        started = [store.run(r)["started"] for r in runs]
    done = list_cli(db, 80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["id", "started", "(UTC)", "suite", "status", "host", "samples"] + [
        "label"
    ]  # no backend column: every run is local
    assert not set(done.stdout) & set("─━│┃┏┡└…")  # no box, nothing cut
    assert len(lines) == 3  # one line per run, nothing wrapped
    first = lines[1]
    assert first.endswith(label)
    stamp = started[0][:16].replace("T", " ")  # stored in UTC
    assert stamp in first and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", lines[2])
    # a run of another backend brings the column back
    with Store(db) as store:
        store.create_run("p2p", host="c1", backend="slurm")
    lines = list_cli(db).stdout.splitlines()
    assert "backend" in lines[0].split() and "slurm" in lines[-1].split()
    assert list_cli(db, None, "--format", "json").stdout.lstrip().startswith("[")


def test_list_on_a_terminal_fits_and_cuts_nothing(tmp_path: Path) -> None:
    """The terminal layout, in-process with a forced 80-column terminal."""
    from click.testing import CliRunner

    import hpcscope.cli.store as store_cli

    db = tmp_path / "t.db"
    with Store(db) as store:
        p2p_run(store, mpis=("openmpi",), label="x" * 30 + " " + "y" * 30)
    console = Console(width=80, force_terminal=True, record=True, file=io.StringIO())
    saved = store_cli.out
    try:
        store_cli.out = console
        result = CliRunner().invoke(store_cli.list_runs, [], obj={"db": str(db)})
    finally:
        store_cli.out = saved
    assert result.exit_code == 0, result.output
    text = console.export_text()
    assert "…" not in text and max(len(l) for l in text.splitlines()) <= 80
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", text)
    assert text.count("x") == 30 and text.count("y") == 30  # folded, every letter kept


def test_hostile_strings_do_not_reach_the_output_raw(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with Store(db) as store:
        run = p2p_run(store, mpis=("openmpi",), label=HOSTILE)
        store.add_note(run, "warning", HOSTILE)
        console = Console(width=100, force_terminal=True, record=True, file=io.StringIO())
        print_run(store, run, console)
        raw = console.file.getvalue()  # type: ignore[attr-defined]
        shown = console.export_text()
    listed = list_cli(db).stdout
    for text in (raw, listed):  # what reaches the terminal, Rich's own styles included
        assert "\x1b]0;" not in text and "\x1b[5m" not in text and "\x07" not in text
        assert "\u202e" not in text
    for text in (shown, listed):  # what a person reads
        assert "<U+202E>exe.txt" in text
        assert "[red]not red[/red]" in text  # shown as text, not taken as markup
    assert shown.count("evil") == 2  # the label and the note
