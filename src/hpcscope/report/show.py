"""`hpcscope show RUN`: what ran, where, what was skipped or failed, and a summary a person
reads: per suite the table its users know, with the numbers the report computes.

- p2p: one table per test (latency, bandwidth, bibw, mbw_mr), message sizes as rows and
  one column per MPI library x placement, each cell the median (analysis/p2p_curves.py,
  the report's curves), marked where it is unstable;
- coll: per MPI and node shape, one row per (collective, count): native's median, each
  mock-up's speed-up and the guideline verdict (analysis/verdicts.coll_table);
- lanes: the lane-pattern and multi-collective factors (analysis/verdicts.lanes_table);
- node: measured, reference tool, peak and efficiencies (analysis/node_table.node_table);
- anything else: one row per cell (results/cells.py).

`show RUN --cells` prints the per-cell statistics instead (every cell's median, CI, CV,
launch view). Tables are split into several when their columns do not fit the terminal;
no cell is ever cut. Everything from the store is printed as text, never as markup.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from hpcscope.formatting import column_unit, format_bytes, plain, sig3
from hpcscope.results.cells import NAMED_P2P_TESTS, OSU_MORE_P2P

if TYPE_CHECKING:
    from hpcscope.results.store import Store

# Only rich and formatting at import time: `hpcscope list` uses `clean` and must not load
# numpy (issue 19, list < 1 s); the analysis modules are imported where they are used.


def clean(value: object) -> str:
    """Text from the store for a terminal (formatting.plain: escape sequences and control
    characters removed, direction controls shown as <U+202E>)."""
    return plain(value)


def S(value: object) -> str:
    """`clean`, with Rich markup escaped, for text inside console.print."""
    return escape(clean(value))


def _text(value: object, style: str = "") -> Text:
    return Text(clean(value), style=style)


def print_run(store: Store, run_id: int, console: Console, *, cells: bool = False) -> None:
    """The run's header (what ran where, notes, placement proof, failures), then either the
    suite summaries (default) or the per-cell statistics (cells=True)."""
    run = store.run(run_id)
    launches = store.launches(run_id)
    samples = store.samples(run_id)
    print_header(run, launches, console, samples)
    if not samples:
        console.print("no measurements stored")
        return
    if cells:
        from hpcscope.results import precision

        judged = precision.judge(run, samples, store.summaries(run_id), launches)
        print_cells(samples, console, {r.key: r for r in judged})
        return
    from hpcscope.analysis import cpu_pair, same_cpus

    print_summary(run, samples, console, launches)
    print_precision(run, samples, store.summaries(run_id), launches, console)
    for found in cpu_pair.observations(samples, launches):
        console.print(f"[yellow]CPU pair[/yellow]: {S(found.text)}")
    for found in same_cpus.observations(samples, launches):
        console.print(f"[yellow]same CPUs[/yellow]: {S(found.text)}")
    console.print(
        f"per-cell statistics (CI, CV, every launch): hpcscope show {run_id} --cells; "
        f"figures: hpcscope report {run_id}",
        style="dim",
    )


def print_header(
    run: dict, launches: list[dict], console: Console, samples: list[dict] | None = None
) -> None:
    # Everything below but our own markup comes from the store: user labels, host names,
    # benchmark and MPI output. It is printed as plain text (S, _text).
    console.print(
        f"[bold]run {S(run['id'])}[/bold] {S(run['suite'])} on {S(run['host'])} "
        f"({S(run['backend'])}): [bold]{S(run['status'])}[/bold]"
    )
    if run.get("label"):
        console.print(f"label: {S(run['label'])}")
    console.print(f"started {S(run['started'])}, finished {S(run.get('finished') or '-')}")
    for m in run.get("mpi") or []:
        console.print(f"MPI: {S(m.get('flavor'))} {S(m.get('version'))} ({S(m.get('mpicc'))})")
    print_mpi_transport(launches, console)
    print_environment(run, launches, console)
    notes = run.get("notes") or []
    for line in peak_lines(run, samples or []):
        console.print(f"[yellow]peaks[/yellow]: {S(line)}")
    for note in notes:
        # placements: one line per launch class below, not per launch; peaks: above;
        # load: one line for all jobs (each job's stays in the store and the export)
        if note["kind"] not in ("placement", "peak", "load"):
            console.print(f"[yellow]{S(note['kind'])}[/yellow]: {S(note['text'])}")
    from hpcscope.machine import host_load

    load = host_load.summary_text(notes)
    if load:
        console.print(f"[yellow]load[/yellow]: {S(load)}")
    print_placements(launches, notes, console)
    bad = [l for l in launches if l["status"] != "COMPLETED"]
    console.print(f"{len(launches)} launches, {len(bad)} not completed")
    for l in bad:
        console.print(
            f"[red]{S(l['name'])}: {S(l['status'])}[/red]\n{S(l.get('stderr_tail') or '')}"
        )


def print_environment(run: dict, launches: list[dict], console: Console) -> None:
    """The environment facts that explain numbers (machine/environment.py): the virtual
    machine, the BLAS each program ran with and the BLAS/OpenMP variables of the run."""
    from hpcscope.machine import environment

    env = run.get("environment") or {}
    virt = environment.virtualization_text(env)
    if virt:
        console.print(f"[yellow]machine[/yellow]: {S(virt)}")
    for b in environment.blas_of(launches):
        console.print(f"[yellow]BLAS[/yellow]: {S(environment.blas_text(b))}")
    blas_vars = {
        k: v
        for k, v in (env.get("variables") or {}).items()
        if k.startswith(("OPENBLAS_", "GOTO_", "MKL_", "BLIS_", "OMP_"))
    }
    if blas_vars:
        text = ", ".join(f"{k}={v}" for k, v in sorted(blas_vars.items()))
        console.print(f"[yellow]BLAS/OpenMP variables[/yellow]: {S(text)}")


def print_mpi_transport(launches: list[dict], console: Console) -> None:
    """The MPI transport each library ran with, read inside the benchmarks (components in
    use, requests, eager limits: analysis/mpi_transport.py), one line per library; every
    fact with its source in the report and the JSON export."""
    from hpcscope.analysis import mpi_transport

    for label, meta, _ in mpi_transport.by_library(launches):
        line = mpi_transport.summary_line(meta)
        if line:
            console.print(f"[yellow]MPI transport[/yellow] {S(label)}: {S(line)}")


def peak_lines(run: dict, samples: list[dict]) -> list[str]:
    """The run's theoretical peaks, at the measured clock where the run measured it, in a
    line or two: each one's formula and sources (a line of their own, a dozen of them on
    an AVX-512 machine) are in the report and the JSON export."""
    from hpcscope.analysis import clock_peaks

    data = [
        n["data"]
        for n in run.get("notes") or []
        if n.get("kind") == "peak" and isinstance(n.get("data"), dict)
    ]
    peaks = clock_peaks.at_measured_clock(data, samples)
    known = clock_peaks.positive_number  # an imported store's notes may hold anything
    by_unit: dict[str, list[str]] = {}
    for p in peaks:
        if known(p.get("value")):
            by_unit.setdefault(str(p.get("unit", "")), []).append(
                f"{p.get('name')} {p['value']:.4g}"
            )
    lines = []
    if by_unit:
        clock = next(
            (p for p in peaks if known(p.get("nominal_clock_ghz")) and known(p.get("clock_ghz"))),
            None,
        )
        at = (
            f" (at the measured clock, {clock['clock_ghz']:.3g} GHz; nominal "
            f"{clock['nominal_clock_ghz']:.3g} GHz)"
            if clock
            else ""
        )
        values = "; ".join(f"{', '.join(v)} {unit}" for unit, v in by_unit.items())
        lines.append(f"{values}{at}; formulas: hpcscope report {run['id']}")
    unknown = [str(p.get("name")) for p in peaks if not known(p.get("value"))]
    if unknown:
        lines.append(
            f"none known for {', '.join(unknown)}: the best measured value stands in "
            "(disk and IOPS: no peak, as a cache above the device may give the best; "
            "run node --peak NAME=VALUE gives one)"
        )
    return lines


def print_placements(launches: list[dict], notes: list[dict], console: Console) -> None:
    """Where the ranks ran, read from inside each rank, one line per launch class, with
    the verdict of the placement check (results/placement_proof.py)."""
    from hpcscope.results import placement_proof

    lines = placement_proof.proof_lines(launches, notes)
    if not lines:
        return
    console.print("[bold]placement[/bold] (read from inside every rank; verdict per launch):")
    for line in lines:
        colour = "red" if line.verdicts.get("wrong") else "green"
        console.print(f"  [{colour}]{S(line.label)}[/{colour}]: {S(line.verdict_text())}")
        for binding, count in line.bindings:
            times = f"{count}x " if len(line.bindings) > 1 else ""
            console.print(f"    {times}{S(binding)}")
        for reason in line.reasons:
            console.print(f"    [red]{S(reason)}[/red]")


# ------------------------------------------------------------------------ table layout


@dataclass
class Col:
    """One column: its header (lines split at '\\n'), text (left) or numbers (right),
    and for text the width beyond which it wraps (at spaces; never cut)."""

    header: str
    numeric: bool = True
    wrap_at: int | None = None


def _width(col: Col, cells: Iterable[Text]) -> int:
    widest = max((len(line) for c in cells for line in c.plain.split("\n")), default=0)
    header = max(len(line) for line in col.header.split("\n"))
    width = max(widest, header)
    return min(width, max(col.wrap_at, header)) if col.wrap_at else width


def print_table(
    console: Console,
    title: str,
    keys: Sequence[Col],
    values: Sequence[Col],
    rows: Sequence[Sequence[Text]],
    groups: Sequence[object] | None = None,
) -> None:
    """rows: the key cells, then the value cells. When the columns do not fit the
    console, the value columns are split over several tables, each repeating the key
    columns; value columns of one group (e.g. one MPI library) stay in one table where
    they fit. Every column folds rather than cuts, so nothing is ever lost to '…'."""
    nkeys = len(keys)
    widths = [_width(c, (r[i] for r in rows)) for i, c in enumerate([*keys, *values])]

    def total(columns: list[int]) -> int:
        # box.SIMPLE_HEAD without edges, padding collapsed: 2 between columns
        return sum(widths[i] + 2 for i in columns) - 2

    def fits(columns: list[int]) -> bool:
        return total([*range(nkeys), *columns]) <= console.width

    together: dict[object, list[int]] = {}  # value columns kept in one table if they fit
    for i in range(len(values)):
        together.setdefault(groups[i] if groups else i, []).append(nkeys + i)
    chunks: list[list[int]] = []
    for group in together.values():
        if chunks and fits([*chunks[-1], *group]):
            chunks[-1] += group
        elif fits(group):
            chunks.append(list(group))
        else:
            for i in group:
                if chunks and fits([*chunks[-1], i]):
                    chunks[-1].append(i)
                else:
                    chunks.append([i])
    for n, chunk in enumerate(chunks or [[]]):
        part = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        console.print()
        # titles and headers hold stored text (a metric, unit or MPI name): as text,
        # never markup, escapes or bidi controls (clean), like every cell
        console.print(_text(title + part, style="bold"))
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
        shown = [*range(nkeys), *chunk]
        for i in shown:
            col = [*keys, *values][i]
            table.add_column(
                _text(col.header),
                justify="right" if col.numeric else "left",
                overflow="fold",
                max_width=max(col.wrap_at, widths[i]) if col.wrap_at else None,
            )
        for row in rows:
            table.add_row(*(row[i] for i in shown))
        console.print(table)


def _num(x: float | None) -> str:
    """3 significant digits, whole numbers from 1000 on (OSU's MB/s, messages/s), never
    an exponent (formatting.sig3)."""
    if x is None:
        return "-"
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1000 or float(x).is_integer():
        return f"{x:.0f}"  # counts and sizes stored as floats read whole
    return sig3(x)  # never an exponent a reader has to decode


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


# ------------------------------------------------------------------------ summaries


def print_summary(
    run: dict, samples: list[dict], console: Console, launches: list[dict] | None = None
) -> None:
    from hpcscope.analysis import node_table, verdicts

    p2p = [s for s in samples if s["benchmark"] == "p2p" and "bytes" in (s["params"] or {})]
    coll = [s for s in samples if _is_coll(s)]
    lanes = [s for s in samples if _is_lanes(s, verdicts.LANE_BENCHMARKS)]
    node = [s for s in samples if node_table.is_node_sample(s)]
    rma = [s for s in samples if s["benchmark"] == "rma" and "bytes" in (s["params"] or {})]
    links = [s for s in samples if s["benchmark"] == "links"]
    own = [s for s in samples if s["benchmark"] in ("startup", "mpiio")]  # startup_io_show
    taken = {id(s) for group in (p2p, coll, lanes, node, rma, links, own) for s in group}
    rest = [s for s in samples if id(s) not in taken]
    # every node of an allocation at once (issue 45): node x rate, not one node's table
    per_node = [s for s in node if (s.get("tags") or {}).get("node")]
    node = [s for s in node if not (s.get("tags") or {}).get("node")]
    if own:
        from hpcscope.report import startup_io_show

        startup_io_show.print_suites(own, console)
    if p2p:
        print_p2p(p2p, console, run, launches)
    if rma:
        print_rma(rma, console)
    if coll:
        print_coll(coll, console)
    if lanes:
        print_lanes(lanes, console)
    if node:
        print_node(run, node, console)
    if per_node:
        print_node_outliers(per_node, console)
    if links:
        print_links(links, console)
    if rest:
        print_generic(rest, console)


def print_node_outliers(samples: list[dict], console: Console) -> None:
    """The node x rate table of an every-node run, outliers marked '!', then the outliers
    with their numbers and the rule (analysis/node_outliers.py)."""
    from hpcscope.analysis import node_outliers

    found = node_outliers.analyse(samples)
    if found is None:
        return
    rows = [
        [_text(r["rate"]), _text(r["unit"])]
        + [_text(r[n], style="red" if r[n].endswith("!") else "") for n in found.nodes]
        for r in node_outliers.table_rows(found)
    ]
    print_table(
        console,
        "node x rate: each node's median (! an outlier)",
        [Col("rate", numeric=False, wrap_at=36), Col("unit", numeric=False)],
        [Col(n) for n in found.nodes],
        rows,
    )
    for line in node_outliers.summary_lines(found):
        console.print(
            _text(
                line,
                style="bold red"
                if "outliers: none" not in line and line.startswith("node outliers")
                else "",
            )
        )


def _is_coll(s: dict) -> bool:
    """A sample verdicts.coll_table takes: a coll time with collective and algorithm."""
    prm = s.get("params") or {}
    return (
        s.get("benchmark") == "coll"
        and s.get("metric") == "time"
        and "collective" in prm
        and "algorithm" in prm
        and "count" in prm
    )


def _is_lanes(s: dict, lane_benchmarks: dict) -> bool:
    """A sample verdicts.lanes_table takes (its own filter)."""
    prm = s.get("params") or {}
    if "count" not in prm or "lanes" not in prm:
        return False
    return s.get("benchmark") in lane_benchmarks or prm.get("pattern") in (
        "lane",
        "multi_alltoall",
    )


# ---- p2p

P2P_TESTS = {
    "latency": ("latency", "osu_latency"),
    "bandwidth": ("bandwidth", "osu_bw"),
    "bibandwidth": ("bidirectional bandwidth", "osu_bibw"),
    "message_rate": ("message rate", "osu_mbw_mr"),
    # IMB-MPI1's patterns (metric time, one table per test: p2p_curves.what)
    "pingping": ("PingPing time per iteration", "IMB-MPI1 PingPing"),
    "sendrecv": ("Sendrecv time per iteration", "IMB-MPI1 Sendrecv"),
    "exchange": ("Exchange time per iteration", "IMB-MPI1 Exchange"),
    # OSU's persistent, threaded and forked tests (one table per test, too)
    **{test: (words, program) for test, (program, _, words, _) in OSU_MORE_P2P.items()},
}


def p2p_tables(samples: list[dict]) -> list[tuple[str, str, list[str], list[tuple[int, list]]]]:
    """[(metric, unit, configurations, [(bytes, [curve point or None per configuration])])]:
    the p2p curves of analysis/p2p_curves.py (the report's numbers) as OSU-shaped tables."""
    from hpcscope.analysis.observations import PLACEMENT_ORDER
    from hpcscope.analysis.p2p_curves import curve_label, curves, what

    order: dict[str, tuple] = {}
    units: dict[str, str] = {}
    for s in samples:
        tags = s.get("tags") or {}
        place = str(tags.get("placement", "?"))
        rank = PLACEMENT_ORDER.index(place) if place in PLACEMENT_ORDER else len(PLACEMENT_ORDER)
        order.setdefault(curve_label(s), (str(tags.get("mpi", "?")), rank, curve_label(s)))
        units.setdefault(what(s), s["unit"])
    known = list(P2P_TESTS)
    metrics = sorted(units, key=lambda m: (known.index(m) if m in known else len(known), m))
    out = []
    for metric in metrics:
        data = curves(samples, metric)
        configs = sorted(data, key=lambda label: order.get(label, (label, 0, label)))
        sizes = sorted({size for points in data.values() for size in points})
        rows = [(size, [data[c].get(size) for c in configs]) for size in sizes]
        out.append((metric, units[metric], configs, rows))
    return out


def print_p2p(
    samples: list[dict],
    console: Console,
    run: dict | None = None,
    launches: list[dict] | None = None,
) -> None:
    """The OSU-shaped tables; a star where the quoted median's own 95 % interval (over
    launches, results/precision.quoted_interval) is wider than the precision asked, and
    below them one line per curve, test and class with its sizes and half-widths
    (analysis/p2p_curves.grade), so a CPU move reads differently from a number a little
    short of the target."""
    from hpcscope.analysis import p2p_curves

    how = p2p_curves.grading(run, samples, launches)
    graded: dict[tuple[str, str, str], list[tuple[int, float | None]]] = {}
    seen: set[int] = set()
    halves: list[float | None] = []  # every point's half-width over launches
    for metric, unit, configs, rows in p2p_tables(samples):
        name, osu = P2P_TESTS.get(metric, (metric.replace("_", " "), ""))
        # one unit for the table, from its medians (µs, GB/s; OSU's own text export keeps
        # OSU's us and MB/s)
        shown, per = column_unit([p["center"] for _, ps in rows for p in ps if p], unit)
        title = f"p2p {name} ({shown}){', as ' + osu if osu else ''}: median per message size"
        cols = [Col(_header(c)) for c in configs]
        body = []
        for size, points in rows:
            cells = [_text(format_bytes(size))]
            for config, point in zip(configs, points, strict=True):
                if point is None:
                    cells.append(Text("- "))
                    continue
                seen.add(point["launches"])
                halves.append(point["half_width"] if point["launches"] > 1 else None)
                cls = p2p_curves.grade(point, config, metric, size, how)
                if cls is not None:
                    graded.setdefault((config, metric, cls), []).append((size, point["half_width"]))
                mark, style = ("*", "yellow") if cls else (" ", "")
                cells.append(Text(_num(point["center"] / per) + mark, style=style))
            body.append(cells)
        mpis = [c.split(" ", 1)[0] for c in configs]
        print_table(console, title, [Col("size")], cols, body, groups=mpis)
        if metric in IMB_MESSAGES:
            _print_imb_bandwidth(console, metric, configs, rows, mpis)
    counts = "/".join(str(n) for n in sorted(seen))
    console.print(
        f"median: the median over launches (here {counts}) of each launch's median, as in "
        "the report."
    )
    known = sorted(h for h in halves if h is not None)
    if known:
        within = ", ".join(
            f"{sum(h <= t for h in known)} within {t:.0%}" for t in sorted({0.02, 0.05, how.target})
        )
        console.print(
            f"precision achieved (95% interval of each median over launches): median "
            f"±{_up(known[len(known) // 2])} over {len(halves)} cells; {within}"
            + (f"; {len(halves) - len(known)} without one" if len(known) < len(halves) else "")
            + "."
        )
    if not graded:
        return
    stars = sum(len(v) for v in graded.values())
    console.print(
        f"[yellow]*[/yellow] {stars} cell{'s' if stars != 1 else ''} whose median's 95% "
        f"interval over launches is wider than {how.target_text()}; by curve, test and why:"
    )
    for (config, metric, cls), found in graded.items():
        widths = [h for _, h in found if h is not None]
        low, high = (_up(min(widths)), _up(max(widths))) if widths else ("-", "-")
        wide = low if low == high else f"{low}-{high}"
        sizes = _sizes_text(sorted(size for size, _ in found))
        short = P2P_TESTS[metric][1].removeprefix("osu_") if metric in P2P_TESTS else metric
        console.print(f"  {S(config)} {S(short)} {sizes}: ±{wide} ({S(cls)})")


# IMB-MPI1's scale_bw: messages of `bytes` its Mbytes/sec counts per iteration
IMB_MESSAGES = {"pingping": 1, "sendrecv": 2, "exchange": 4}


# ---- rma (one-sided): one table per test, sync and window kind


def print_rma(samples: list[dict], console: Console) -> None:
    """OSU-shaped tables of the rma suite: per family (test, sync, window kind) sizes as
    rows, a column per MPI x placement, each cell the median over launches of each launch's
    median (the curves of analysis/p2p_curves.py, as p2p's tables and the report)."""
    from hpcscope.analysis.p2p_curves import curves
    from hpcscope.figures.rma import families
    from hpcscope.results.rma_tests import RMA_TESTS

    seen: set[int] = set()
    for family, group in families(samples).items():
        test = RMA_TESTS[group[0]["params"]["test"]]
        data = curves(group, test.metric)
        configs = sorted(data)
        sizes = sorted({size for points in data.values() for size in points})
        rows = [(size, [data[c].get(size) for c in configs]) for size in sizes]
        shown, per = column_unit([p["center"] for _, ps in rows for p in ps if p], test.unit)
        body = []
        for size, points in rows:
            cells = [_text(format_bytes(size))]
            for point in points:
                if point is not None:
                    seen.add(point["launches"])
                cells.append(Text("- " if point is None else _num(point["center"] / per) + " "))
            body.append(cells)
        title = f"rma {family} ({shown}), as {test.program}: median per message size"
        mpis = [c.split(" ", 1)[0] for c in configs]
        print_table(
            console, title, [Col("size")], [Col(_header(c)) for c in configs], body, groups=mpis
        )
    counts = "/".join(str(n) for n in sorted(seen))
    console.print(
        f"median: the median over launches (here {counts}) of each launch's median, as in "
        "the report."
    )


def _print_imb_bandwidth(
    console: Console, test: str, configs: list[str], rows: list[tuple[int, list]], mpis: list[str]
) -> None:
    """IMB-MPI1's Mbytes/sec beside its t: k x bytes / the table's median t (us), MB =
    10^6 B, as IMB_output.c computes it from its t; sizes above 0 only."""
    k = IMB_MESSAGES[test]
    found = [
        (size, [k * size / p["center"] if p and p["center"] > 0 else None for p in points])
        for size, points in rows
        if size > 0
    ]
    shown, per = column_unit([v for _, vs in found for v in vs if v is not None], "MB/s")
    name = P2P_TESTS[test][1]
    body = [
        [_text(format_bytes(size))] + [Text("- " if v is None else _num(v / per) + " ") for v in vs]
        for size, vs in found
    ]
    title = f"p2p {name} bandwidth ({shown}): {k} x bytes / median time, as IMB's Mbytes/sec"
    print_table(
        console, title, [Col("size")], [Col(_header(c)) for c in configs], body, groups=mpis
    )


def print_precision(
    run: dict, samples: list[dict], summaries: list[dict], launches: list[dict], console: Console
) -> None:
    """A run measured to a precision: how many cells met it, and one table of those that
    did not (per test, configuration and reason: their sizes and achieved half-widths)."""
    from hpcscope.results import precision

    results = precision.judge(run, samples, summaries, launches)
    if not results:
        return
    target = precision.target_of(run.get("notes") or [])
    met = sum(r.precision.met for r in results)
    console.print()
    console.print(
        f"precision target {target:.1%} (95% CI half-width of each median): "
        f"{met} of {len(results)} cells met it"
        + ("; the others, by why they stopped:" if met < len(results) else ".")
    )
    rows = precision.missed_rows(results)
    if not rows:
        return
    body = [
        [
            _text(P2P_TESTS[r.what][1].removeprefix("osu_") if r.what in P2P_TESTS else r.what),
            _text(r.configuration),
            _text(_sizes_text(r.sizes)),
            Text("-" if r.achieved is None else f"{_up(r.achieved[0])}-{_up(r.achieved[1])}"),
            _text(r.reason),
        ]
        for r in rows
    ]
    print_table(
        console,
        "cells short of the precision target",
        [Col("measures", numeric=False), Col("configuration", numeric=False, wrap_at=24)],
        [
            Col("sizes", numeric=False, wrap_at=30),
            Col("achieved"),
            Col("why", numeric=False),
        ],
        body,
    )
    console.print(precision.MISSED_LEGEND, style="dim")


def _up(fraction: float) -> str:
    """A half-width as a percentage rounded up (2.04 % is 2.1 %, never 'the target')."""
    return f"{math.ceil(fraction * 1000 - 1e-9) / 10:.1f}%"


def _sizes_text(sizes: list[int]) -> str:
    """'1 B-4 KiB (13)': first and last size and how many."""
    if not sizes:
        return "-"
    if len(sizes) == 1:
        return format_bytes(sizes[0])
    return f"{format_bytes(sizes[0])}-{format_bytes(sizes[-1])} ({len(sizes)})"


def _header(label: str) -> str:
    """'openmpi core [OSU build]' -> 'openmpi\\ncore\\n[OSU build]' (one word a line)."""
    first, _, marks = clean(label).partition(" [")
    lines = first.split(" ", 1)
    return "\n".join([*lines, *(["[" + marks] if marks else [])])


# ---- coll


def print_coll(samples: list[dict], console: Console) -> None:
    """One table per MPI, node shape and collective (OSU's shape: counts as rows): native's
    median, each mock-up's speed-up over it and the guideline verdict of verdicts.coll_table,
    the rows the report shows; then the findings (one line per collective and comparison)
    and what the node shape and any emulation leave to compare."""
    from hpcscope.analysis import verdicts

    rows = verdicts.coll_table(samples)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        key = (row["mpi"], row["N"], row["n"], row["p"], row["collective"], row["regular"])
        groups[key].append(row)
    warnings: list[str] = []
    marks: set[str] = set()
    without_native = False
    for (mpi, nodes, ppn, p, coll, regular), group in groups.items():
        mockups = [a for a in _algorithms(group) if a != "native"]
        body = []
        for r in group:
            cells = [
                Text(str(r["count"])),
                Text(format_bytes(r["bytes"])),
                Text(_num(r.get("native_median"))),
            ]
            for alg in mockups:
                speedup = r.get(f"{alg}_speedup")
                said = r.get(f"{alg}_verdict")
                mark = _VERDICT_MARK.get(str(said), " ")
                marks.add(mark)
                if r.get("native_median") is None:  # nothing to compare with: its own time
                    without_native |= r.get(f"{alg}_median") is not None
                    text = _num(r.get(f"{alg}_median"))
                else:
                    text = "-" if speedup is None else f"{speedup:.2f}" + mark
                cells.append(Text(text, style=_VERDICT_STYLE.get(str(said), "")))
            verdict = str(r.get("verdict", ""))
            cells.append(_text(verdict, _VERDICT_STYLE.get(verdict.split(" ")[0], "green")))
            body.append(cells)
            warnings += [w for w in r.get("warnings", []) if w not in warnings]
        name = f"MPI_{clean(coll).capitalize()}" + ("" if regular else " (irregular)")
        print_table(
            console,
            f"coll {name}, {clean(mpi)}, N={nodes} nodes x n={ppn} ranks (p={p}): "
            "native median (µs) and speed-up of each mock-up",
            [Col("count"), Col("size"), Col("native")],
            [Col(clean(alg)) for alg in mockups] + [Col("verdict", numeric=False, wrap_at=12)],
            body,
        )
    console.print(_coll_legend(rows, marks, without_native))
    _print_by_ranks(verdicts.ranks_table(rows), console)
    found = verdicts.findings(rows)
    if found:
        console.print(f"guideline findings ({len(found)}, one per collective and comparison):")
        for f in found:
            style = "red" if f.status == "violated" else "yellow"
            console.print(f"  [{style}]{S(f.status)}[/{style}]: {S(f.text())}")
    if any(r["n"] == 1 for r in rows):
        console.print(S(verdicts.ONE_PER_NODE_TEXT))
    emulated = verdicts.emulation_text(s.get("tags") or {} for s in samples)
    if emulated:
        console.print(
            f"[yellow]{S(emulated)}[/yellow]: ranks grouped into nodes by hpcscope, not by the "
            "hardware; all traffic goes through this machine's memory, not a network."
        )
    layouts = sorted(
        {str(t["rank_layout"]) for s in samples if (t := s.get("tags") or {}).get("rank_layout")}
    )
    if layouts:
        console.print(f"rank layout: {S(', '.join(layouts))}")
    for w in warnings[:5]:
        console.print(f"[yellow]note[/yellow]: {S(w)}")
    if len(warnings) > 5:
        console.print(f"and {len(warnings) - 5} more notes (hpcscope report shows them all)")


def _print_by_ranks(by_ranks: list[dict], console: Console) -> None:
    """A process-count sweep (run coll --npmin): the median per rank count, IMB's view."""
    if not by_ranks:
        return
    counts = sorted({p for r in by_ranks for p in r["ranks"]})
    print_table(
        console,
        "coll by rank count (--npmin): median (µs) of each collective, algorithm and size",
        [Col("MPI", numeric=False), Col("collective", numeric=False)],
        [Col("algorithm", numeric=False), Col("size")] + [Col(f"p={p}") for p in counts],
        [
            [Text(clean(r["mpi"])), Text(clean(r["collective"])), Text(clean(r["algorithm"]))]
            + [Text(format_bytes(r["bytes"]))]
            + [Text(_num(r["ranks"].get(p))) for p in counts]
            for r in by_ranks
        ],
    )


_VERDICT_MARK = {"violation": "!", "suggested": "?"}
_VERDICT_STYLE = {"violation": "red", "suggested": "yellow", "no": "", "ok": "green"}


def _coll_legend(rows: list[dict], marks: set[str], without_native: bool) -> str:
    """What the speed-ups and marks mean, with the correction and the launches behind them."""
    tested = next((r["checks_in_run"] for r in rows if not r.get("deterministic")), 0)
    simulated = any(r.get("deterministic") for r in rows)
    text = "speed-up: median native / median mock-up (> 1: the mock-up is faster)."
    if tested:
        text += (
            " "
            f"{'!: ' if '!' in marks else ''}violation: a mock-up significantly faster "
            f"(Mann-Whitney p < 0.05 after Holm's correction over the run's {tested} checks, "
            "at least 5%) in each of 2 or more launches: the native collective breaks the "
            f"guideline. {'?: ' if '?' in marks else ''}suggested: the same from the run's "
            "only launch; repeat with --repeat 2 or more to tell."
        )
    if simulated:
        text += (
            " Simulated rows are a deterministic model (its repetitions repeat): no test; "
            "a mock-up at least 5% faster in the model is a violation of the model."
        )
    if without_native:
        text += " Rows without native (verdict 'no native') give each algorithm's median (µs)."
    return text


def _algorithms(rows: list[dict]) -> list[str]:
    from hpcscope.analysis.verdicts import alg_key

    return sorted({a for r in rows for a in r.get("algorithms", [])}, key=alg_key)


# ---- links (docs/links.md)


def print_links(samples: list[dict], console: Console) -> None:
    """Per launch: the medians and the rule, the flagged pairs with their cause, the
    nodes at fault, rounds, bisection and all-to-all (analysis/links.summary_lines)."""
    from hpcscope.analysis import links

    for name, result in links.by_launch(samples):
        console.print(f"[bold]links {S(name)}[/bold]")
        for line in links.summary_lines(result):
            console.print("  " + S(line))


# ---- lanes


def print_lanes(samples: list[dict], console: Console) -> None:
    from hpcscope.analysis import verdicts

    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in verdicts.lanes_table(samples):
        groups[(row["mpi"], row["benchmark"], row["N"], row["n"], row["p"])].append(row)
    simulated = False
    for (mpi, bench, nodes, ppn, p), rows in groups.items():
        name = verdicts.LANE_BENCHMARKS.get(bench, bench)
        factor = "t(k=1)/t(k)" if bench == "lane_pattern" else "t(k)/t(k=1)"
        model = all(r.get("deterministic") for r in rows)
        simulated |= model
        body = [
            [
                Text(str(r["count"])),
                Text(format_bytes(r["bytes"])),
                Text(str(r["k"])),
                Text(_num(r["median_us"])),
                Text(_num(r["avg_us"])),
                Text(_num(r["min_us"])),
                Text(
                    "-"
                    if r.get("factor") is None
                    else f"{r['factor']:.2f}" + ("*" if model and r.get("significant") else "")
                ),
            ]
            + (
                []
                if model
                else [
                    Text(
                        "-"
                        if r.get("p_vs_1") is None
                        else f"{r['p_vs_1']:.3g}" + ("*" if r.get("significant") else " ")
                    )
                ]
            )
            for r in rows
        ]
        print_table(
            console,
            f"{name} {clean(mpi)}: N={nodes} nodes x n={ppn} ranks (p={p}); factor {factor}"
            + (" (simulated: deterministic model, no significance test)" if model else ""),
            [Col("count"), Col("size"), Col("k")],
            [Col("median\n(µs)"), Col("avg\n(µs)"), Col("min\n(µs)"), Col("factor")]
            + ([] if model else [Col("p vs\nk=1")]),
            body,
        )
    text = (
        "lane pattern: factor = t(k=1)/t(k), up to L with L physical lanes; "
        "multi-collective: factor = t(k)/t(1), about 1 up to k = L. "
    )
    if simulated:
        text += (
            "Simulated: a deterministic model (its repetitions repeat), so no significance "
            "test; *: the model's factor differs from 1 by at least 5%. "
        )
    if not all(r.get("deterministic") for rows in groups.values() for r in rows):
        text += "*: significantly different from k = 1 (Mann-Whitney p < 0.05, at least 5%)."
    console.print(text.strip())
    emulated = verdicts.emulation_text(s.get("tags") or {} for s in samples)
    if emulated:
        console.print(
            f"[yellow]{S(emulated)}[/yellow]: the lanes share this machine's memory, not a "
            "network's rails."
        )


# ---- node


def print_node(run: dict, samples: list[dict], console: Console) -> None:
    from hpcscope.analysis import node_table

    peaks = [
        dict(n["data"], text=n.get("text", ""))
        for n in run.get("notes") or []
        if n.get("kind") == "peak"
    ]
    rows = node_table.node_table(samples, peaks, run)
    if not rows:
        return
    seen_best = False
    body = []
    for r in rows:
        measured = node_table.quoted(r)
        mark = "^" if r.get("modes") else ""
        ref = r["reference_median"]  # medians compare (node_table._compare_with_tool)
        reference = f"{r['reference_tool']} {_num(ref)}" if r.get("reference_tool") else "-"
        if r.get("reference_range"):
            low, high = r["reference_range"]
            reference += f" ({_num(low)}-{_num(high)}; ours {_num(r['ours_compared_median'])})"
        if node_table.beside_drift(r):
            reference += f"; ours beside it {_num(r['measured_beside'])}"
        if r.get("beside_changed"):
            reference += f"; ours around it {node_table.changed_text(r)}"
        peak = _num(r.get("peak"))
        if r.get("peak_name") == node_table.MEASURED_BEST:
            peak, seen_best = peak + "~", True
        elif r.get("peak_name") and r.get("peak") is None:
            peak = "not stated"
        eff = r.get("eff_vs_peak")
        body.append(
            [
                _text(node_table.human_name(r)),
                Text(_num(measured) + mark),
                _text(r["unit"]),
                _text(reference),
                _text(peak),
                Text(_pct(eff), style="red" if eff is not None and eff > 1 else ""),
                Text(_pct(r.get("eff_vs_reference"))),
            ]
        )
    print_table(
        console,
        "node: measured, reference tool and peak",
        [Col("measurement", numeric=False, wrap_at=34)],
        [
            Col("measured"),
            Col("unit", numeric=False),
            Col("reference", numeric=False, wrap_at=20),
            Col("peak"),
            Col("of\npeak"),
            Col("of\nref."),
        ],
        body,
    )
    console.print(
        "measured: best of all repetitions (latency, and ^ two modes: median); reference: "
        "the tool's median (its range; our median compared); of peak = best / peak (red: "
        "above peak); of ref. = our median / the tool's (latency: the tool's / ours), with "
        'ours run between the tool\'s runs where the run did so ("ours beside it" where '
        "the sweep's median differs by more than 10%; no ratio where ours around the tool "
        "differ: the machine changed while the tool ran)."
    )
    _print_node_notes(rows, console)
    if seen_best:
        console.print("~: no theoretical peak known; the best value of this resource in this run.")
    low = [r for r in rows if r.get("cause")]
    if low:
        console.print("\nbelow 90% of the peak, and why (measured):")
        for r in low:
            console.print(
                f"  {S(node_table.human_name(r))}: {_pct(r['eff_vs_peak'])} - {S(r['cause'])}"
            )
    print_machine_measured(run, samples, console)


def _print_node_notes(rows: list[dict], console: Console) -> None:
    """Below the node table: the bimodal rows' modes, the reference ratios outside 0.9-1.1
    with their causes, and the disk rows a cache above the device may have served."""
    from hpcscope.analysis import modes, node_table

    for title, found in (
        (
            "^ two modes (analysis/modes.py)",
            [(r, modes.text(r["modes"], r["unit"])) for r in rows if r.get("modes")],
        ),
        (
            "reference ratios outside 0.9-1.1, and why",
            [
                (r, f"{_pct(r['eff_vs_reference'])} - {r['reference_cause']}")
                for r in rows
                if r.get("reference_cause")
                and r.get("eff_vs_reference") is not None
                and not node_table.restates_bandwidth(r)
            ],
        ),
        (
            "disk rates a cache may have given",
            [
                (r, r["cache_note"])
                for r in rows
                if r.get("cache_note") and not node_table.restates_bandwidth(r)
            ],
        ),
    ):
        if found:
            console.print(f"\n{title}:")
            for r, text in found:
                console.print(f"  {S(node_table.human_name(r))}: {S(text)}")


def print_machine_measured(run: dict, samples: list[dict], console: Console) -> None:
    """The machine as hwloc reports it beside the machine as the node run measured it:
    caches from the pointer chase's edges, cores from the FP64 scaling, the clock."""
    from hpcscope.analysis import machine_measured

    found = machine_measured.compare_run(run, samples)
    if not found:
        return
    print_table(
        console,
        "the machine as reported (hwloc) and as measured",
        [Col("what", numeric=False)],
        [
            Col("reported", numeric=False),
            Col("measured", numeric=False, wrap_at=34),
            Col("difference", numeric=False, wrap_at=34),
        ],
        [[_text(c.what), _text(c.reported), _text(c.measured), _text(c.verdict)] for c in found],
    )


# ---- anything else


def print_generic(samples: list[dict], console: Console) -> None:
    """One table per (benchmark, metric, unit): a row per cell (results/cells.py), its
    median and 95% CI; what all rows share is named once in the title."""
    _cell_tables(samples, console, full=False)


# ------------------------------------------------------------------------ --cells


def print_cells(samples: list[dict], console: Console, judged: dict | None = None) -> None:
    """Every cell's statistics, pooled over the launches of one configuration: n, median,
    its 95% CI, min, CV, and the launch view (mean ± σ of one number per launch). Tags and
    params equal in every row of a table are named once in its title. `judged`: {cell
    key: precision.CellResult} of a run measured to a precision (its columns added)."""
    _cell_tables(samples, console, full=True, judged=judged or {})


def _cell_tables(
    samples: list[dict], console: Console, full: bool, judged: dict | None = None
) -> None:
    """A table per (benchmark, metric, unit), a row per cell; `full`: every statistic
    (--cells), else launches, median, CI and flags; `judged`: the precision columns."""
    judged = judged or {}
    from hpcscope.results.cells import group_cells, summarize_cell
    from hpcscope.results.placement_proof import tag_pair, tag_value

    by_metric: dict[tuple, list] = defaultdict(list)
    for key, g in sorted(group_cells(samples).items(), key=_order):
        by_metric[key[:3]].append((key, g))
    flagged: dict[str, int] = defaultdict(int)
    for (bench, metric, unit), rows in by_metric.items():
        all_tags = [json.loads(k[3]) for k, _ in rows]
        all_params = [_shown_params(k[4]) for k, _ in rows]
        tag_keys, param_keys = _varying(all_tags), _varying(all_params)
        body = []
        with_precision = any(key in judged for key, _ in rows)
        for (key, per_launch), prm in zip(rows, all_params, strict=True):
            tags = key[3]
            cell = summarize_cell(per_launch, unit)
            s = cell.all
            ci = f"{_num(s.ci_low)} .. {_num(s.ci_high)}" if s.ci_low is not None else "-"
            flags = sorted({_flag(w) for w in s.warnings})
            for f in flags:
                flagged[f] += 1
            what = " ".join(
                filter(
                    None, (tag_value(k, v) for k, v in json.loads(tags).items() if k in tag_keys)
                )
            )
            shown = _params_text({k: v for k, v in prm.items() if k in param_keys})
            if not full:
                config = [_text(", ".join(x for x in (what, shown) if x) or "-")]
                stats_cells = [Text(str(cell.launches)), Text(_num(s.median)), Text(ci)]
            else:
                config = [_text(what)] if tag_keys else []
                config += [_text(shown)] if param_keys else []
                stats_cells = [
                    Text(f"{s.n} ({cell.launches})"),
                    Text(_num(s.median)),
                    Text(ci),
                    Text(_num(s.min)),
                    Text(f"{100 * s.cv:.1f}%" if s.cv is not None else "-"),
                    Text(_over_text(cell.over)),
                    Text(_values_text(cell.over)),
                ]
                if with_precision:
                    got = judged.get(key)
                    stats_cells += [
                        Text(got.precision.text() if got else "-"),
                        _text(got.reason if got else "-"),
                    ]
            body.append([*config, *stats_cells, _text(" ".join(flags), "yellow")])
        common = [
            tag_pair(k, v) for k, v in all_tags[0].items() if k not in tag_keys | {"mpi_version"}
        ]
        common = [c for c in common if c]
        common += [f"{k}={v}" for k, v in all_params[0].items() if k not in param_keys]
        if not full:
            keys = [Col("configuration", numeric=False, wrap_at=40)]
            columns = [Col("launches"), Col("median"), Col("95% CI")]
        else:
            keys = [Col("configuration", numeric=False, wrap_at=16)] if tag_keys else []
            keys += [Col("params", numeric=False, wrap_at=28)] if param_keys else []
            columns = [
                Col("n\n(launches)"),
                Col("median"),
                Col("95% CI\nof median"),
                Col("min"),
                Col("CV"),
                Col("launch\nmean ± σ"),
                Col("per launch", wrap_at=24),
            ]
            if with_precision:
                columns += [Col("precision\n(level)"), Col("stop", numeric=False)]
        print_table(
            console,
            clean(f"{bench}: {metric} ({unit})" + (f"; {', '.join(common)}" if common else "")),
            keys,
            [*columns, Col("flags", numeric=False)],
            body,
        )
    _explain_flags(flagged, console)


def _varying(tags: list[dict]) -> set[str]:
    """The keys whose values differ between the rows (mpi_version never shown)."""
    keys = {k for t in tags for k in t} - {"mpi_version"}
    return {k for k in keys if len({json.dumps(t.get(k), sort_keys=True) for t in tags}) > 1}


def _over_text(over: Any) -> str:
    """The seeds' view: mean and sigma over the launches' one-number-per-launch values."""
    if over is None:
        return "-"
    return f"{_num(over.mean)} ± {_num(over.std)}" if over.std is not None else _num(over.mean)


def _values_text(over: Any, shown: int = 5) -> str:
    if over is None:
        return "-"
    text = ", ".join(_num(v) for v in over.values[:shown])
    return text + (f", ... ({len(over.values)})" if len(over.values) > shown else "")


_FLAGS = {
    "scatter": "the raw values' coefficient of variation is above 5%: they scatter, which "
    "says nothing yet about the median's precision (its interval; for p2p the star of "
    "`show`, judged over launches)",
    "wide-ci": "the samples' 95% CI of the median is wider than 5% of it; take more samples",
    "few": "too few samples for a nonparametric 95% CI of the median; use --repeat",
}


def _explain_flags(flagged: dict[str, int], console: Console) -> None:
    for flag, count in flagged.items():
        console.print(f"[yellow]{S(flag)}[/yellow] on {count} rows: {S(_FLAGS.get(flag, flag))}")


def _flag(warning: str) -> str:
    """Short tag for a Summary warning, explained once below the tables."""
    text = warning.lower()
    if text.startswith("cv "):
        return "scatter"  # issue 47: "unstable" only where a median's interval says so
    if "ci of the median reaches" in text:
        return "wide-ci"
    if "too few" in text:
        return "few"
    return warning


def _order(item: tuple) -> tuple:
    (bench, metric, unit, tags, params), _ = item
    p = json.loads(params)
    size = p.get("bytes", 0)
    test = p["test"] if p.get("test") in NAMED_P2P_TESTS else ""  # one test after another
    return (bench, metric, tags, test, size if isinstance(size, (int, float)) else 0, params)


def _shown_params(params_json: str) -> dict[str, Any]:
    """A cell's identifying params without how it was measured (iterations, block...)."""
    return {
        k: v
        for k, v in json.loads(params_json).items()
        if k not in ("iterations", "block", "test", "window")
        or (k == "test" and v in NAMED_P2P_TESTS)  # IMB's and OSU's named: the test is the cell
    }


def _params_text(params: dict[str, Any]) -> str:
    """'4 KiB' for a message size alone, else key=value pairs."""
    if set(params) == {"bytes"} and isinstance(params["bytes"], (int, float)):
        return format_bytes(params["bytes"])
    return ", ".join(f"{k}={v}" for k, v in params.items())
