"""`hpcscope report RUN ... -o DIR`: one self-contained page, DIR/index.html, plus a CSV per
table next to it.

The page needs no server, no network and no JavaScript: CSS is inline, figures are SVG in
data: URIs (inert, see hpcscope.figures.common), and a Content-Security-Policy forbids scripts and
any load that is not inline. Every string from the machine or the user goes through
jinja2 autoescaping. Each section appears only when its data exist.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from hpcscope import safe_write
from hpcscope.analysis import (
    clock_peaks,
    cpu_pair,
    machine_measured,
    mpi_transport,
    nbc_analysis,
    node_table,
    p2p_curves,
    paper_colls,
    paper_compare,
    same_cpus,
    summary,
    verdicts,
)
from hpcscope.analysis import highlights as highlights_mod
from hpcscope.analysis import observations as obs
from hpcscope.analysis import over_runs as over_runs_analysis
from hpcscope.analysis import tables as coll_tables
from hpcscope.figures import coll as coll_figs
from hpcscope.figures import nbc as nbc_figs
from hpcscope.figures import node as node_figs
from hpcscope.figures import p2p as p2p_figs
from hpcscope.figures import rma as rma_figs
from hpcscope.figures import stability as stability_figs
from hpcscope.figures.common import Figure, cached_uri, lstopo_uri
from hpcscope.formatting import (
    column_unit,
    csv_cell,
    format_bytes,
    format_number,
    format_span,
    sig3,
    table_column,
    unit_scale,
)
from hpcscope.machine import environment
from hpcscope.machine.topology import Topology, TopologyError
from hpcscope.report import compare as compare_mod
from hpcscope.report import glossary, machine_line
from hpcscope.report import over_runs as over_runs_parts
from hpcscope.report.options_text import options_text
from hpcscope.results import cells, placement_proof, precision, stats
from hpcscope.results.store import Store


@dataclass
class Cell:
    text: str
    cls: str = ""


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    csv: str = ""  # file name next to index.html
    caption: str = ""


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    observations: list[obs.Observation] = field(default_factory=list)
    items: list[tuple[str, str]] = field(default_factory=list)  # definition list
    notes: list[str] = field(default_factory=list)
    warning: str = ""


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))  # sizes and counts stored as floats
        return sig3(x)  # three digits, never an exponent (formatting.sig3)
    if isinstance(x, (list, tuple)):
        return ", ".join(_num(v) for v in x)
    return str(x)


def _numeric(v: Any) -> bool:
    """Numbers right-aligned, text left-aligned (also numbers pre-formatted as text)."""
    if v is None or isinstance(v, (int, float)):
        return True
    return bool(re.fullmatch(r"[-+]?[\d.,]+(e[-+]?\d+)?%?|-", str(v).strip()))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


# A CSV cell a spreadsheet shows as text (formula guard, control characters removed): the
# one CSV encoder, formatting.csv_cell.
_csv_cell = csv_cell


class _Writer:
    """Writes each table's CSV next to index.html, with file names safe on any system."""

    def __init__(self, out_dir: Path, run_id: int | str) -> None:
        """run_id: the run's id, or "s5-44" for the group of runs 5 to 44 (ids and file
        names then read runs5-44-...)."""
        self.out_dir, self.run_id = out_dir, run_id

    def table(
        self,
        tid: str,
        title: str,
        columns: list[str],
        rows: list[list[Any]],
        caption: str = "",
        classes: list[list[str]] | None = None,
        shared_unit: tuple[list[int], str] | None = None,
        row_unit: tuple[list[int], int] | None = None,
    ) -> Table:
        """shared_unit=(columns, unit): those columns hold values in `unit` and are shown
        in one scaled unit, chosen from the median of all their values (a median beside
        its CI and range, native beside lane, reads in one unit), named in their headers.
        row_unit=(columns, unit column): each row's values in those columns are in the
        unit its unit column names (a table of mixed quantities): shown in one unit per
        row, scaled to the first column's value (1580 MB/s -> 1.58 GB/s), the unit cell
        naming it."""
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"run{self.run_id}_{tid}") + ".csv"
        with safe_write.open_for_write(self.out_dir / name, newline="") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            for row in rows:
                w.writerow([_csv_cell(v) for v in row])
        # A column whose header names a unit is shown in one scaled unit (formatting.
        # table_column: 'alpha (us)' of 0.09 reads 'alpha (ns)' 90.0); the CSV above
        # keeps the recorded units.
        shown = list(columns)
        texts = [[_num(v) for v in row] for row in rows]
        for j, header in enumerate(columns):
            scaled = table_column(header, [row[j] if j < len(row) else None for row in rows])
            if scaled is not None:
                shown[j] = scaled[0]
                for i, text in enumerate(scaled[1]):
                    if j < len(texts[i]):
                        texts[i][j] = text
        if row_unit is not None:
            listed, at = row_unit
            for i, row in enumerate(rows):
                first = row[listed[0]]
                if not isinstance(row[at], str) or not isinstance(first, (int, float)):
                    continue
                texts[i][at], per = unit_scale(first, row[at])
                for j in listed:
                    if isinstance(row[j], (int, float)) and not isinstance(row[j], bool):
                        texts[i][j] = sig3(row[j] / per)
        if shared_unit is not None:
            listed, unit = shared_unit
            unit_shown, per = column_unit([row[j] for row in rows for j in listed], unit)
            for j in listed:
                shown[j] = _UNIT_SUFFIX.sub("", columns[j]) + f" ({unit_shown})"
                for i, row in enumerate(rows):
                    if isinstance(row[j], (int, float)) and not isinstance(row[j], bool):
                        texts[i][j] = sig3(row[j] / per)
        cells = [
            [
                Cell(
                    texts[i][j],
                    " ".join(
                        c
                        for c in ((classes[i][j] if classes else ""), "" if _numeric(v) else "text")
                        if c
                    ),
                )
                for j, v in enumerate(row)
            ]
            for i, row in enumerate(rows)
        ]
        return Table(f"run{self.run_id}-{tid}", title, shown, cells, name, caption)


# ------------------------------------------------------------------------ sections


def _machine(run: dict, w: _Writer, samples: list[dict]) -> Section | None:
    """Topology, caches, NICs and the theoretical peaks, FLOP/s and op/s peaks at the
    clock the run's samples measured (analysis/clock_peaks.py)."""
    xml = run.get("topology_xml")
    peaks = [n for n in run.get("notes") or [] if n.get("kind") == "peak"]
    if not xml and not peaks:
        return None
    sec = Section(f"run{w.run_id}-machine", "The machine")
    if xml:
        try:
            topo = Topology.from_xml(xml)
        except TopologyError as exc:
            sec.warning = f"the stored topology does not parse: {exc}"
            topo = None
        if topo:
            env = run.get("environment") or {}
            memory = env.get("mem_total_bytes")  # the OS's; hwloc's can be less (a guest)
            sec.intro = topo.summary(memory if isinstance(memory, int) else None)
            sec.items.append(("memory", machine_line.memory_text(env, topo)))
            uri = lstopo_uri(xml)
            if uri:
                sec.figures.append(
                    Figure(
                        f"run{w.run_id}-lstopo",
                        "Topology (hwloc lstopo)",
                        "hwloc's drawing of the stored topology: packages, "
                        "NUMA nodes, caches, cores, hardware threads, "
                        "devices.",
                        uri,
                        "hwloc topology drawing",
                    )
                )
            else:
                sec.notes.append(topo.describe())
            sec.tables.append(
                w.table(
                    "caches",
                    "Caches",
                    ["cache", "size per instance", "instances", "CPUs per instance"],
                    [
                        [c.name, format_bytes(c.size), n, len(cpus)]
                        for c, n, cpus in _cache_rows(topo)
                    ],
                )
            )
            if topo.nics:
                sec.tables.append(
                    w.table(
                        "nics",
                        "Network interfaces",
                        ["name", "type", "subtype", "PCI link (GB/s)", "PCI bus"],
                        [
                            [n.name, n.type, n.subtype, n.link_speed_gbs, n.pci_busid]
                            for n in topo.nics
                        ],
                    )
                )
    if peaks:
        sec.tables.append(
            w.table(
                "peaks",
                "Theoretical peaks",
                ["name", "value", "unit", "formula", "source"],
                [
                    [
                        p.get("name", ""),
                        p.get("value"),
                        p.get("unit", ""),
                        p.get("formula", ""),
                        p.get("source", ""),
                    ]
                    for p in clock_peaks.at_measured_clock([n.get("data") for n in peaks], samples)
                ],
                "Every efficiency in this report divides by one of these; the formula says how "
                "it was computed.",
            )
        )
    return sec


def _cache_rows(topo: Topology) -> list[tuple[Any, int, list[int]]]:
    seen: dict[str, list] = {}
    for c in topo.caches:
        seen.setdefault(c.name, [c, 0, c.cpus])
        seen[c.name][1] += 1
    return [tuple(v) for v in seen.values()]


def _environment(run: dict, w: _Writer, launches: list[dict] | None = None) -> Section | None:
    env = dict(run.get("environment") or {})
    mpis = run.get("mpi") or []
    if not env and not mpis:
        return None
    sec = Section(f"run{w.run_id}-env", "Environment")
    labels = {
        "hostname": "host name",
        "kernel": "kernel",
        "os": "operating system",
        "cpu_model": "CPU",
        "compiler": "compiler",
        "governor": "frequency governor",
        "max_freq_khz": "max frequency (kHz)",
        "turbo_disabled": "turbo disabled",
        "smt": "SMT",
        "python": "Python",
        "hpcscope": "hpcscope",
    }
    for key, name in labels.items():
        if key in env:
            value = env.pop(key)
            sec.items.append((name, "not readable" if value is None else str(value)))
    for key, name in (
        ("mem_total_bytes", "memory (/proc/meminfo MemTotal)"),
        ("numa_mem_total_bytes", "memory in NUMA nodes (sysfs)"),
    ):
        if key in env:
            value = env.pop(key)
            sec.items.append((name, format_bytes(value) if isinstance(value, int) else "-"))
    variables = env.pop("variables", {}) or {}
    virt = env.pop("virtualization", None)
    if isinstance(virt, dict):  # machine/environment.py virtualization()
        sec.items.append(
            ("virtual machine", environment.virtualization_text({"virtualization": virt}) or "-")
        )
    for key, value in sorted(env.items()):
        sec.items.append((key, json.dumps(value) if not isinstance(value, str) else value))
    if mpis:
        sec.tables.append(
            w.table(
                "mpi",
                "MPI libraries",
                ["flavor", "version", "mpicc", "mpirun"],
                [
                    [m.get("flavor"), m.get("version"), m.get("mpicc"), m.get("mpirun")]
                    for m in mpis
                ],
            )
        )
    transport = [  # analysis/mpi_transport.py: read inside the benchmarks, rank 0
        [f"{label} ({count} launch{'es' if count > 1 else ''})", *row]
        for label, meta, count in mpi_transport.by_library(launches or [])
        for row in mpi_transport.facts_rows(meta)
    ]
    if transport:
        sec.tables.append(
            w.table(
                "mpi_transport",
                "MPI transport as the benchmarks found it at run time",
                ["MPI (launches)", "fact", "value", "source"],
                transport,
                "Read inside each benchmark (rank 0) after MPI_Init: components open, the "
                "requests (MCA or MPIR_CVAR settings) and the protocol thresholds, through "
                "the MPI tool interface (MPI_T control variables); MPICH's device from "
                "MPI_Get_library_version. A p2p dip is named a protocol switch only where "
                "the eager limit of the transport that carried the pair lies within its step "
                "(analysis/mpi_transport.py).",
            )
        )
    blas = environment.blas_of(launches or [])
    if blas:
        sec.tables.append(
            w.table(
                "blas",
                "BLAS each program ran with (its kernel: OpenBLAS's own answer)",
                ["program", "library", "version", "kernel", "threads", "variables"],
                [
                    [
                        b["program"],
                        b["library"],
                        b["version"],
                        b["core"],
                        b["threads"],
                        " ".join(f"{k}={v}" for k, v in sorted(b["env"].items())),
                    ]
                    for b in blas
                ],
            )
        )
    if variables:
        sec.tables.append(
            w.table(
                "variables",
                "Environment variables read by MPI, BLAS and schedulers",
                ["variable", "value"],
                [[k, v] for k, v in sorted(variables.items())],
            )
        )
    return sec


def _rma(
    samples: list[dict],
    w: _Writer,
    judged: list[precision.CellResult] | None = None,
    target: float | None = None,
) -> Section | None:
    """The rma suite: per test, sync and window kind one figure (the p2p curves' code)
    and one table of the medians over launches with their interval and launch range;
    judged/target: a run measured to a precision, its table of the cells short of it."""
    rma = [s for s in samples if s["benchmark"] == "rma" and "bytes" in s["params"]]
    if not rma:
        return None
    sec = Section(
        f"run{w.run_id}-rma",
        "One-sided (RMA) by placement",
        "OSU 7.4's one-sided programs (docs/rma.md): one curve per MPI and placement for "
        "each test, synchronization and window kind; the median over launches of each "
        "launch's median, band: smallest to largest launch median.",
    )
    drawings = {d.stem: d for d in rma_figs.drawings(rma)}
    for family, group in rma_figs.families(rma).items():
        test = group[0]["params"]["test"]
        metric, unit = group[0]["metric"], group[0]["unit"]
        stem = rma_figs.stem(family)
        uri = drawings[stem].uri()
        if uri is not None:
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-{stem}",
                    family,
                    f"{family} vs message size.",
                    uri,
                    f"{family} vs message size",
                    stem,
                )
            )
        data = p2p_figs.curves(group, metric)
        rows = [
            [
                label,
                size,
                v["center"],
                v["ci_low"],
                v["ci_high"],
                v["low"],
                v["high"],
                v["launches"],
            ]
            for label in sorted(data, key=obs._placement_rank)
            for size, v in sorted(data[label].items())
        ]
        sec.tables.append(
            w.table(
                stem,
                f"{family}, as {rma_figs.RMA_TESTS[test].program}",
                [
                    "MPI placement",
                    "bytes",
                    "median",
                    "CI low",
                    "CI high",
                    "min launch",
                    "max launch",
                    "launches",
                ],
                rows,
                "median: of launch medians; CI: nonparametric 95% CI of the median of all "
                "samples; min/max launch: the smallest and largest launch median.",
                shared_unit=([2, 3, 4, 5, 6], unit),
            )
        )
    if judged and target:
        sec.tables.append(_precision_table(judged, target, w))
    return sec


def _p2p(
    samples: list[dict],
    w: _Writer,
    figures: bool = True,
    judged: list[precision.CellResult] | None = None,
    target: float | None = None,
    launches: list[dict] | None = None,
    run: dict | None = None,
) -> Section | None:
    """figures=False: tables and observations only (a group of runs draws its curves
    overlaid instead, report/over_runs.py). judged/target: a run measured to a precision
    (results/precision.py): the target line in the stability figure, and one table of the
    cells that missed it. launches: the run's, to say where their CPU pair moved
    (analysis/cpu_pair.py) and which placements ran on the same CPUs yet differ
    (analysis/same_cpus.py). run: its precision target and budget note, which grade the
    numbers less precise than asked (analysis/p2p_curves.grade)."""
    p2p = [s for s in samples if s["benchmark"] == "p2p"]
    if not p2p:
        return None
    sec = Section(
        f"run{w.run_id}-p2p",
        "Point-to-point by placement",
        "Two ranks placed on two hardware threads of a core (smt), two cores of a "
        "socket (core), two NUMA nodes (numa), two sockets (socket) or two nodes "
        "(node). Curves: median over launches of each launch's median; band: "
        "smallest to largest launch median.",
    )
    centres: dict[str, dict[str, dict[float, float]]] = {}
    drawings = {d.stem: d for d in p2p_figs.drawings(p2p)} if figures else {}
    for metric in p2p_figs.METRICS:
        data = p2p_figs.curves(p2p, metric)
        if not data:
            continue
        centres[metric] = {
            label: {s: v["center"] for s, v in pts.items()} for label, pts in data.items()
        }
        uri = drawings[f"p2p_{metric}"].uri() if figures else None
        if uri is not None:
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-p2p-{metric}",
                    metric.replace("_", " "),
                    f"{p2p_figs.METRICS[metric][0]} vs message size.",
                    uri,
                    f"{metric} vs message size",
                    f"p2p_{metric}",
                )
            )
        unit = next(s["unit"] for s in p2p if p2p_curves.what(s) == metric)
        by_launch = _by_launch(p2p, metric)
        # the table's one unit (its medians'), also for the per-launch values' text
        per = column_unit([v["center"] for pts in data.values() for v in pts.values()], unit)[1]
        rows = []
        classes = []
        for label in sorted(data, key=obs._placement_rank):
            for size, v in sorted(data[label].items()):
                rel = ((v["high"] - v["low"]) / v["center"]) if v["center"] else None
                over = cells.over_launches(by_launch.get((label, size), {}), unit)
                rows.append(
                    [
                        label,
                        size,
                        v["center"],
                        v["ci_low"],
                        v["ci_high"],
                        v["low"],
                        v["high"],
                        v["launches"],
                        _pct(rel),
                        over.mean if over else None,
                        over.std if over else None,
                        ", ".join(sig3(x / per) for x in over.values) if over else "",
                    ]
                )
                classes.append(
                    [""] * 8
                    + ["warn" if rel is not None and rel > stats.CV_LIMIT else ""]
                    + [""] * 3
                )
        sec.tables.append(
            w.table(
                f"p2p_{metric}",
                metric.replace("_", " "),  # the unit is in the value columns' headers
                [
                    "MPI placement",
                    "bytes",
                    "median",
                    "CI low",
                    "CI high",
                    "min launch",
                    "max launch",
                    "launches",
                    "launch spread",
                    "launch mean",
                    "launch σ",
                    "per-launch values",
                ],
                rows,
                "median: of launch medians; CI: nonparametric 95% "
                "CI of the median of all samples; spread: (max-min)/median "
                "of launch medians, highlighted above 5%. launch mean and σ: the seeds' "
                "stability view, over one number per launch computed as OSU prints one per "
                "run (mean time; for rates work over time), listed in launch order.",
                classes,
                shared_unit=([2, 3, 4, 5, 6, 9, 10, 11], unit),
            )
        )
        if figures and metric in ("latency", "bandwidth"):
            uri = cached_uri(
                "p2p_spread",
                [metric, data, target],
                functools.partial(stability_figs.spread_figure, data, metric, target),
            )
            if uri is not None:
                sec.figures.append(
                    Figure(
                        f"run{w.run_id}-p2p-{metric}-stability",
                        f"{metric} stability",
                        "Half-width of the median's 95% interval over launches (what a star "
                        "is judged by) and launch-to-launch spread; dashed: 5%, the limit for "
                        "fixed counts"
                        + (f"; dotted: the precision target {target:.1%}." if target else "."),
                        uri,
                        f"{metric} stability",
                    )
                )
            uri = cached_uri(
                "p2p_box",
                drawings[f"p2p_{metric}"].data,  # what the curves show: [metric, samples]
                functools.partial(stability_figs.box_figure, p2p, metric),
            )
            if uri is not None:
                sec.figures.append(
                    Figure(
                        f"run{w.run_id}-p2p-{metric}-box",
                        f"{metric} distributions",
                        "Box plots of all "
                        "samples relative to their median (box: quartiles; "
                        "whiskers: 1.5 IQR).",
                        uri,
                        f"{metric} box plots",
                    )
                )
    if judged and target:
        sec.tables.append(_precision_table(judged, target, w))
    # every dip named from the transport its launches recorded, or "not explained"
    transport = (
        None
        if launches is None
        else mpi_transport.curve_thresholds(p2p, launches, p2p_figs.curve_label)
    )
    found = obs.p2p_observations(
        centres.get("latency", {}), centres.get("bandwidth", {}), transport=transport
    )
    fits = [o for o in found if o.kind == "fit"]
    sec.observations = highlights_mod.group_dips([o for o in found if o.kind != "fit"])
    if fits:
        sec.tables.append(
            w.table(
                "hockney",
                "Hockney model per placement and segment: T(m) = alpha + m/beta",
                [
                    "MPI placement",
                    "from bytes",
                    "to bytes",
                    "alpha (us)",
                    "beta (MB/s)",
                    "points",
                    "rms rel. residual",
                ],
                [
                    [
                        o.subject,
                        o.numbers["from_bytes"],
                        o.numbers["to_bytes"],
                        o.numbers["alpha_us"],
                        o.numbers["beta_MBps"],
                        o.numbers["points"],
                        _pct((o.numbers["cost"] / max(o.numbers["points"], 1)) ** 0.5),
                    ]
                    for o in fits
                ],
                "Segments from a penalised piecewise least-squares fit of the latency curve "
                "(see Methods); beta '-' means no size dependence in that segment.",
            )
        )
    # Graded, not stamped (issue 47): a row per curve, test and class where the quoted
    # median's own 95 % interval over launches is wider than the precision asked; the
    # curve's instability observation counts those sizes only.
    how = p2p_curves.grading(run, p2p, launches)
    unstable_rows = []
    for metric in p2p_figs.METRICS:
        graded: dict[tuple[str, str], list[tuple[int, dict]]] = {}
        for label, points in sorted(p2p_figs.curves(p2p, metric).items()):
            for size, point in points.items():
                cls = p2p_curves.grade(point, label, metric, size, how)
                if cls is not None:
                    graded.setdefault((label, cls), []).append((size, point))
        for (label, cls), marked in graded.items():
            halves = [p["half_width"] for _, p in marked if p["half_width"] is not None]
            sizes = sorted(size for size, _ in marked)
            unstable_rows.append(
                [
                    label,
                    metric,
                    f"{format_bytes(sizes[0])}-{format_bytes(sizes[-1])} ({len(sizes)})"
                    if len(sizes) > 1
                    else format_bytes(sizes[0]),
                    "/".join(str(n) for n in sorted({p["launches"] for _, p in marked})),
                    "-"
                    if not halves
                    else "-".join(dict.fromkeys((_pct(min(halves)), _pct(max(halves))))),
                    cls,
                ]
            )
        if metric not in ("latency", "bandwidth"):
            continue
        starred = {(label, size) for (label, _), marked in graded.items() for size, _ in marked}
        for label, by_size in sorted(_per_launch(p2p, metric).items()):
            found_obs = []
            for size, groups in sorted(by_size.items()):
                if (label, size) in starred:
                    found_obs.extend(
                        obs.instability(
                            f"{label} {metric} at {format_bytes(size)}", groups, size=size
                        )
                    )
            summary = obs.instability_summary(f"{label} {metric}", found_obs)
            if summary:
                sec.observations.append(summary)
    sec.observations.extend(cpu_pair.observations(p2p, launches or []))
    sec.observations.extend(same_cpus.observations(p2p, launches or []))
    if unstable_rows:
        sec.tables.append(
            w.table(
                "unstable",
                "Numbers less precise than asked",
                ["MPI placement", "metric", "sizes", "launches", "± (95%)", "why"],
                unstable_rows,
                "Hoefler & Belli: report variation. Each row: the sizes whose median's 95% "
                "interval over launches (t over 2-5 launch medians, order statistics from "
                f"6; at least the samples' interval) is wider than {how.target_text()}, "
                "their half-widths, and why: launches bimodal (with the CPU pair's cache-"
                "line times where they moved), budget ran out before the target, or noise "
                "above the target.",
            )
        )
    return sec


def _precision_table(judged: list[precision.CellResult], target: float, w: _Writer) -> Table:
    """The cells short of the precision target, one row per test, configuration and
    reason (not a warning per cell)."""
    met = sum(r.precision.met for r in judged)
    rows = [
        [
            r.what.replace("_", " "),
            r.configuration,
            format_bytes(r.sizes[0]) if r.sizes else "",
            format_bytes(r.sizes[-1]) if r.sizes else "",
            len(r.sizes),
            _pct(r.achieved[0]) if r.achieved else "-",
            _pct(r.achieved[1]) if r.achieved else "-",
            r.reason,
        ]
        for r in precision.missed_rows(judged)
    ]
    return w.table(
        "precision",
        f"Precision: {met} of {len(judged)} cells met the target {target:.1%}; the others",
        ["measures", "configuration", "from", "to", "cells", "achieved min", "achieved max", "why"],
        rows,
        "At the level that counts: all samples while the launches agree, the launch "
        "medians once they differ by more than the target. " + precision.MISSED_LEGEND,
    )


def _placement(run: dict, launches: list[dict], w: _Writer) -> Section | None:
    """Where the ranks ran (read from inside every rank), one row per launch class and
    binding, with the placement check's verdict: the proof behind every placement label."""
    lines = placement_proof.proof_lines(launches, run.get("notes") or [])
    if not lines:
        return None
    sec = Section(
        f"run{w.run_id}-placement",
        "Placement: where the ranks ran",
        "Read from inside every rank (host, CPUs of its affinity mask, and the socket, "
        "NUMA node and core hwloc puts them on), compared with what the plan asked for. "
        "'reported': the placement left binding to the launcher, and this is what it chose.",
    )
    rows, classes = [], []
    for line in lines:
        for binding, count in line.bindings:
            rows.append([line.label, count, line.verdict_text(), binding])
            classes.append(["", "", "bad" if line.verdicts.get("wrong") else "", ""])
    sec.tables.append(
        w.table(
            "placement",
            "Placement proof per launch class",
            ["launch class", "launches", "verdict", "ranks: host, CPUs (socket, NUMA, core)"],
            rows,
            "One row per distinct binding; the JSON export lists every rank of every launch.",
            classes,
        )
    )
    sec.notes += [reason for line in lines for reason in line.reasons]
    return sec


def _by_launch(samples: list[dict], metric: str) -> dict[tuple[str, int], dict[int, list[float]]]:
    """{(MPI placement label, bytes): {launch id: raw values}} for the over-launch view."""
    out: dict[tuple[str, int], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if p2p_curves.what(s) == metric and "bytes" in s["params"]:  # IMB's: by test
            label = f"{s['tags'].get('mpi', '?')} {s['tags'].get('placement', '?')}"
            out[(label, int(s["params"]["bytes"]))][s["launch_id"]].extend(s["values"])
    return out


def _per_launch(samples: list[dict], metric: str) -> dict[str, dict[int, list[list[float]]]]:
    out: dict[str, dict[int, list[list[float]]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if p2p_curves.what(s) == metric:
            label = p2p_figs.curve_label(s)
            out[label][int(s["params"]["bytes"])].append(list(s["values"]))
    return out


RANK_LAYOUT_TEXT = {
    "alternate": "alternate: rank i of a node pinned on socket i mod S (the paper's layout; "
    "the placement section shows each rank's CPU)",
    "block": "block: ranks pinned core by core, socket 0 first",
    "default": "default: binding left to the launcher, reported in the placement section",
    "unpinned": "unpinned: hpcscope could not pin (more ranks than cores, uneven nodes, or "
    "a backend without own CPUs)",
}


COLL_PROGRAMS = ("coll", "lane_pattern", "multi_coll")


def _coll(
    samples: list[dict],
    w: _Writer,
    judged: list[precision.CellResult] | None = None,
    target: float | None = None,
) -> Section | None:
    """judged/target: a run measured to a precision, its table of the cells short of it."""
    coll = [s for s in samples if s["benchmark"] in COLL_PROGRAMS]
    if not coll:
        return None
    sec = Section(
        f"run{w.run_id}-coll",
        "Collectives",
        "Native MPI collectives against full-lane (lane; lane_v with vector node "
        "collectives) and hierarchical (hier) mock-ups built from the library's own collectives. Guideline (Traeff & "
        "Hunold): the native collective should be no slower than a mock-up of "
        "itself; a mock-up significantly faster (Mann-Whitney p < 0.05 after Holm's "
        "correction over the run's checks, and at least 5%) in each of two or more "
        "launches is a violation, highlighted in red; from a run's only launch it is "
        "suggested (repeat with --repeat 2 or more to tell).",
    )
    emulated = verdicts.emulation_text(s["tags"] for s in coll)
    if emulated:
        sec.warning = (
            f"{emulated[0].upper()}{emulated[1:]}: ranks were grouped into nodes by "
            "hpcscope, not by the hardware; all traffic goes through this machine's memory, "
            "so lane effects here are not those of a multi-node network."
        )
    layouts = sorted({str(s["tags"]["rank_layout"]) for s in coll if s["tags"].get("rank_layout")})
    if layouts:
        sec.items.append(("rank layout", ", ".join(RANK_LAYOUT_TEXT.get(x, x) for x in layouts)))
    rows = verdicts.coll_table(coll)
    if rows:
        cols = coll_tables.coll_columns(rows)
        sec.tables.append(
            w.table(
                "coll",
                "Collective times, speed-ups and guideline verdicts",
                [t for _, t in cols],
                [
                    [
                        # times as numbers: the column's one scaled unit (table_column)
                        r.get(k)
                        if "(us)" in t and isinstance(r.get(k), float)
                        else coll_tables.cell(r.get(k), k)
                        for k, t in cols
                    ]
                    for r in rows
                ],
                "avg and min over all repetitions (each repetition the max over ranks); "
                "speed-up = median native / median mock-up.",
                [[_verdict_class(k, r.get(k)) for k, _ in cols] for r in rows],
                shared_unit=([i for i, (_, t) in enumerate(cols) if "(us)" in t], "us"),
            )
        )
        sec.observations.extend(verdicts.guideline_observations(rows))
        tested = next((r["checks_in_run"] for r in rows if not r.get("deterministic")), 0)
        if tested:
            sec.items.append(
                (
                    "correction",
                    f"Holm over the run's {tested} guideline checks (family-wise: the "
                    "chance of any false violation in the run stays under 5%); the "
                    "observations group the violated checks into one finding per "
                    "collective and comparison.",
                )
            )
        if any(r.get("deterministic") for r in rows):
            sec.items.append(("simulated", DETERMINISTIC_TEXT))
        if any(r["n"] == 1 for r in rows):
            sec.items.append(("1 rank per node", verdicts.ONE_PER_NODE_TEXT))

    def add_rows(tid: str, title: str, cols: list, rows: list[dict], caption: str) -> None:
        """One table of row dicts, columns as (key, title) pairs."""
        sec.tables.append(
            w.table(
                tid,
                title,
                [t for _, t in cols],
                [[coll_tables.cell(r.get(k), k) for k, _ in cols] for r in rows],
                caption,
            )
        )

    by_ranks = verdicts.ranks_table(rows)  # run coll --npmin: IMB's view by rank count
    if by_ranks:
        add_rows(
            "coll-ranks",
            "Collectives by rank count (--npmin)",
            verdicts.ranks_columns(by_ranks),
            verdicts.flat_ranks(by_ranks),
            "median of each collective, algorithm and size in bytes per process at each "
            "rank count of the sweep (the first p ranks of the launch).",
        )
    lanes = verdicts.lanes_table(coll)
    if lanes:
        add_rows(
            "lanes",
            "Lane pattern and multi-collective",
            coll_tables.LANES_COLUMNS,
            lanes,
            "lane pattern: factor = t(k=1)/t(k), up to L with L physical lanes; "
            "multi-collective: factor = t(k)/t(1), about 1 up to k = L."
            + (
                " Simulated: a deterministic model (its repetitions repeat), so no "
                "significance test and no p-value."
                if any(r.get("deterministic") for r in lanes)
                else " p vs k=1: Mann-Whitney against one lane."
            ),
        )
    paper = paper_compare.paper_vs_simulation(coll)
    if paper:
        add_rows(
            "paper",
            "Paper vs simulation: lane pattern and multi-collective",
            paper_compare.COLUMNS,
            paper,
            "Simulated (SimGrid) median factors beside the factors computed from the "
            "paper's own minimum and average times (analysis/paper_lanes.py cites the "
            "tables): lane pattern t(1)/t(k), multi-collective t(k)/t(1); empty where "
            "the paper gives no number. Times only for the multi-collective benchmark: "
            "the lane pattern's are per step here, per several steps in the paper.",
        )
        sec.observations.extend(paper_compare.observations(paper))
    paper = paper_colls.paper_vs_simulation(coll)
    if paper:
        add_rows(
            "paper-colls",
            "Paper vs simulation: collectives on Hydra",
            paper_colls.COLUMNS,
            paper,
            "Simulated (SimGrid) medians and speed-ups over native beside the paper's "
            "Open MPI 4.0.1 minimum times (analysis/paper_colls.py cites the tables). "
            "Agreement in shape (which side of native a mock-up falls), not in absolute "
            "times: the model's links are assumptions and SMPI's collectives are not "
            "Open MPI 4.0.1's.",
        )
        sec.observations.extend(paper_colls.observations(paper))
    if judged and target:
        sec.tables.append(_precision_table(judged, target, w))
    flat = coll_figs.lanes_left_out(lanes)
    if flat:
        sec.items.append(
            (
                "lane figures",
                "left out where only k = 1 was measured (a flat line, nothing to compare): "
                + "; ".join(flat)
                + ".",
            )
        )
    for kind, drawings in (
        ("coll", coll_figs.coll_drawings(rows) + coll_figs.ranks_drawings(by_ranks)),
        ("lanes", coll_figs.lanes_drawings(lanes)),
    ):
        for drawing in drawings:
            uri = drawing.uri()
            if uri is None:
                continue
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-{drawing.stem}",
                    drawing.stem.replace("_", " "),
                    "Median time per rank count of the --npmin sweep, a line per size."
                    if drawing.stem.startswith("coll_ranks")
                    else "Line: median; dash: minimum; red ring: guideline violation."
                    if kind == "coll"
                    else "Median time per lane count k and the factor against one lane.",
                    uri,
                    drawing.stem,
                    drawing.stem,
                )
            )
    return sec


# ---- links (docs/links.md)


def _links(samples: list[dict], w: _Writer) -> Section | None:
    """Per launch of `run links`: the heatmaps, the flagged pairs with their cause, and
    what the fabric loses under load (analysis/links.py, figures/links.py)."""
    from hpcscope.analysis import links
    from hpcscope.figures import links as links_figs

    found = links.by_launch(samples)
    if not found:
        return None
    sec = Section(
        f"run{w.run_id}-links",
        "Links: every pair of nodes",
        "Every pair of nodes (and lanes) measured in parallel rounds of a 1-factorization, "
        "the slowest pairs again alone, then bisection and all-to-all under load. "
        f"Rule: {links.Rule().text()} (the run's own k and floor in the table).",
    )
    for i, (name, result) in enumerate(found):
        tag = f"{i}_" if len(found) > 1 else ""
        sec.items.append((name, "; ".join(links.summary_lines(result)[:3])))
        sec.tables.append(
            w.table(
                f"links_{tag}flags",
                f"Flagged pairs ({name})",
                ["metric", "pair", "lane", "round", "value", "median", "alone", "cause", "why"],
                [
                    [
                        f.metric,
                        f"{f.node_a}-{f.node_b}",
                        f.lane,
                        f.round,
                        f.value,
                        f.median,
                        f.serial,
                        f"{f.cause} {f.culprit}".strip(),
                        f.why,
                    ]
                    for f in result.flags
                ],
                caption=result.rule.text() + ("; no pair flagged" if not result.flags else ""),
            )
        )
        load = [
            [f"bisection {b.pairing} ({b.pairs} pairs)", b.together, b.sum_alone, b.ratio]
            for b in result.bisection
        ]
        a = result.alltoall
        if a is not None and a.ratio is not None and a.reference_bw is not None:
            moved = a.p * (a.p - 1) * a.bytes / a.time_us  # bytes per us = MB/s
            load.append([f"all-to-all, {a.p} ranks", moved, a.p * a.reference_bw, a.ratio])
        if load:
            sec.tables.append(
                w.table(
                    f"links_{tag}load",
                    f"Under load ({name})",
                    ["test", "together (MB/s)", "alone (MB/s)", "ratio"],
                    load,
                    caption="ratio 1: nothing lost under load. Bisection: the sum of the "
                    "pairs' bandwidths together / the sum of the same pairs alone. All-to-all: "
                    "p(p-1) blocks / the time, against p ranks each at one pair's bandwidth "
                    "alone (docs/links.md)",
                )
            )
        caption = "Each pair's best value in its round (the rule's value); grey: not measured; red: flagged."
        sec.figures += [
            Figure(
                f"run{w.run_id}-{d.stem}", d.stem.replace("_", " "), caption, uri, d.stem, d.stem
            )
            for d in links_figs.drawings(result, tag)
            if (uri := d.uri()) is not None
        ]
    return sec


# ---- nbc: non-blocking (overlap), persistent and neighbourhood collectives (docs/nbc.md)


def _nbc(
    samples: list[dict],
    w: _Writer,
    judged: list[precision.CellResult] | None = None,
    target: float | None = None,
) -> Section | None:
    """judged/target: a run measured to a precision, its table of the cells short of it."""
    mine = [s for s in samples if s["benchmark"] == "nbc"]
    rows = nbc_analysis.table(mine)
    if not rows:
        return None
    sec = Section(
        f"run{w.run_id}-nbc",
        "Non-blocking, persistent and neighbourhood collectives",
        "OSU 7.4's definitions. Non-blocking: pure = I<coll> + MPI_Wait; a compute "
        "calibrated to it runs between post and wait; overall = post + compute + wait; "
        "overlap = max(0, 100 - (overall - compute) / pure x 100). Persistent: MPI_Start + "
        "MPI_Wait of a request made once per size. Neighbourhood: OSU's Cartesian "
        "neighbourhood. Each value is the median over the iterations of the slowest rank. "
        "Guideline: a variant is not slower than its blocking collective (and "
        "neighbor_alltoall not slower than MPI_Alltoallv on the same neighbours): a "
        "reference significantly faster (Mann-Whitney, Holm over the run's checks, at "
        "least 5%) in two launches or more is a violation, from one launch suggested.",
    )
    timed = [k for k, t in nbc_analysis.COLUMNS if "(us)" in t]
    cols = nbc_analysis.COLUMNS
    sec.tables.append(
        w.table(
            "nbc",
            "Times and overlap by collective and size",
            [t for _, t in cols],
            [
                [r.get(k) if k in timed else coll_tables.cell(r.get(k), k) for k, _ in cols]
                for r in rows
            ],
            "Medians of all iterations (each the slowest rank's); blocking = the blocking "
            "collective of the same launch.",
            shared_unit=([i for i, (k, _) in enumerate(cols) if k in timed], "us"),
        )
    )
    checks = nbc_analysis.guidelines(mine)
    if checks:
        gcols = nbc_analysis.GUIDELINE_COLUMNS
        gtimed = [k for k, t in gcols if "(us)" in t]
        sec.tables.append(
            w.table(
                "nbc-guidelines",
                "Guideline checks: each variant against its blocking collective",
                [t for _, t in gcols],
                [
                    [r.get(k) if k in gtimed else coll_tables.cell(r.get(k), k) for k, _ in gcols]
                    for r in checks
                ],
                f"Holm over the run's {len(checks)} checks; verdict from the raw "
                "iterations of every launch (analysis/nbc_analysis.py).",
                [
                    [
                        "bad"
                        if r["verdict"] == "violation" and k == "status"
                        else "warn"
                        if r["verdict"] == "suggested" and k == "status"
                        else ""
                        for k, _ in gcols
                    ]
                    for r in checks
                ],
                shared_unit=([i for i, (k, _) in enumerate(gcols) if k in gtimed], "us"),
            )
        )
    if judged and target:
        sec.tables.append(_precision_table(judged, target, w))
    for drawing in nbc_figs.drawings(rows):
        uri = drawing.uri()
        if uri is None:
            continue
        sec.figures.append(
            Figure(
                f"run{w.run_id}-{drawing.stem}",
                drawing.stem.replace("_", " "),
                "Overlap (%) by message size, median per size."
                if drawing.kind == "nbc_overlap"
                else "Median time per call by message size.",
                uri,
                drawing.stem,
                drawing.stem,
            )
        )
    return sec


_UNIT_SUFFIX = re.compile(r"\s*\((?:us|µs|ns|ms|MB/s|GB/s)\)$")

# node_table columns in the row's unit; the first picks the row's scale
_NODE_VALUES = (
    "measured_median",
    "measured_best",
    "reference_median",
    "reference_best",
    "measured_beside",
    "ours_compared_median",
    "peak",
)

DETERMINISTIC_TEXT = (
    "a deterministic model (its repetitions repeat), so no significance test: a mock-up "
    "at least 5% faster in the model is a violation of the model, not of a library."
)


def _startup_io(run: dict, samples: list[dict], w: _Writer) -> list[Section]:
    """The startup and io suites' sections: their tables (analysis/startup_rows.py,
    io_rows.py), what the numbers mean, and their figure (figures/startup_io.py)."""
    from hpcscope.analysis import io_rows, startup_rows
    from hpcscope.figures import startup_io

    out = []
    for sid, title, rows, cols, drawing, intro in (
        (
            "startup",
            "MPI start-up",
            startup_rows.rows([s for s in samples if s["benchmark"] == "startup"]),
            startup_rows.COLUMNS,
            startup_io.startup_drawing,
            "MPI_Init per rank (CLOCK_MONOTONIC around it; avg and max over ranks as "
            "OSU's osu_init), the time from the launch (the harness's clock just before "
            "mpirun or srun) to the last rank's hello, and the harness's wall time of the "
            "whole launch. Start-up varies between launches: medians over launches, with "
            "the launches' min..max.",
        ),
        (
            "io",
            "MPI-IO",
            io_rows.rows([s for s in samples if s["benchmark"] == "mpiio"]),
            io_rows.COLUMNS,
            startup_io.io_drawing,
            io_rows.HEADLINE + ".",
        ),
    ):
        if not rows:
            continue
        sec = Section(f"run{w.run_id}-{sid}", title, intro)
        sec.tables.append(
            w.table(
                sid,
                title,
                [t for _, t in cols],
                [[coll_tables.cell(r.get(k), k) for k, _ in cols] for r in rows],
            )
        )
        if sid == "io":
            for line in io_rows.caveats([s for s in samples if s["benchmark"] == "mpiio"]):
                sec.items.append(("reads", line))
            for note in run.get("notes") or []:
                if str(note.get("text", "")).startswith("io: ceiling"):
                    sec.items.append(("ceiling", note["text"][len("io: ceiling: ") :]))
        shown = drawing(rows)
        uri = shown.uri()
        if uri is not None:
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-{shown.stem}",
                    shown.stem.replace("_", " "),
                    "Median over launches; bars: the launches' min..max.",
                    uri,
                    shown.stem,
                    shown.stem,
                )
            )
        out.append(sec)
    return out


def _verdict_class(key: str, value: Any) -> str:
    text = str(value).lower() if value is not None else ""
    if "verdict" in key or key == "verdict":
        if text.startswith("violation") or text.startswith("violated"):
            return "bad"
        if text.startswith("suggested"):
            return "warn"
        if text in ("ok", "slower"):
            return "good"
    return ""


# ------------------------------------------- every node at once (issue 45 part 3)
def _node_outliers(samples: list[dict], w: _Writer) -> Section | None:
    """The node x rate table of an every-node run with the outliers marked, the rule
    stated, and one warning observation per outlier (analysis/node_outliers.py)."""
    from hpcscope.analysis import node_outliers

    found = node_outliers.analyse(samples)
    if found is None:
        return None
    sec = Section(
        f"run{w.run_id}-node-outliers",
        "Nodes side by side",
        f"The node programs ran on {len(found.nodes)} nodes at once; each cell is that "
        f"node's median. Outlier rule: {node_outliers.RULE_TEXT}.",
    )
    rows = node_outliers.table_rows(found)
    columns = ["rate", "unit", *found.nodes]
    sec.tables.append(
        w.table(
            "node-outliers",
            "Node x rate",
            columns,
            [[r[c] for c in columns] for r in rows],
            "! (red): an outlier by the rule above; - : not measured on that node.",
            [["bad" if str(r[c]).endswith("!") else "" for c in columns] for r in rows],
        )
    )
    sec.notes += [f"{r.label}: {r.note}" for r in found.rates if r.note]
    sec.observations += [
        obs.Observation("node_outlier", f.text, f.to_dict(), "warning", f.node) for f in found.flags
    ]
    if not found.flags:
        sec.notes.append(f"No outlier among the {len(found.nodes)} nodes.")
    return sec


def _node(
    run: dict,
    samples: list[dict],
    w: _Writer,
    judged: list[precision.CellResult] | None = None,
    target: float | None = None,
) -> Section | None:
    # every-node runs (samples tagged `node`) have their own section (_node_outliers)
    node = [
        s for s in samples if node_table.is_node_sample(s) and not (s.get("tags") or {}).get("node")
    ]
    if not node:
        return None
    peaks = [
        dict(n["data"], text=n.get("text", ""))
        for n in run.get("notes") or []
        if n.get("kind") == "peak"
    ]
    sec = Section(
        f"run{w.run_id}-node",
        "Node suite",
        "CPU, memory, disk and network of one node against theoretical peaks "
        "and against reference tools (dgemm, likwid-bench, fio, iperf3).",
    )
    rows = node_table.node_table(node, peaks, run)
    if rows:
        columns = list(rows[0].keys())
        percent = ("eff_vs_peak", "eff_vs_reference")
        classes = [
            [
                "bad" if c == "eff_vs_peak" and isinstance(r.get(c), float) and r[c] > 1 else ""
                for c in columns
            ]
            for r in rows
        ]
        sec.tables.append(
            w.table(
                "node",
                "Node measurements",
                columns,
                [
                    [
                        _pct(r[c]) if c in percent and isinstance(r.get(c), float) else r.get(c)
                        for c in columns
                    ]
                    for r in map(node_table.flat, rows)  # ranges and modes as text
                ],
                "eff_vs_peak = best of our values / peak; eff_vs_reference "
                "= our median / the reference tool's median (latency: its "
                "median / ours), ranges and modes beside it; reference_cause: why "
                "outside 0.9-1.1.",
                classes,
                # one unit per row, from its median: 1.58 GB/s beside 1.40 GB/s
                row_unit=(
                    [columns.index(c) for c in _NODE_VALUES if c in columns],
                    columns.index("unit"),
                )
                if "unit" in columns and "measured_median" in columns
                else None,
            )
        )
    if judged and target:
        sec.tables.append(_precision_table(judged, target, w))
    uri = cached_uri("node_eff", rows, functools.partial(node_figs.efficiency_figure, rows))
    if uri is not None:
        above = any((r.get("eff_vs_peak") or 0) > 1 for r in node_table.with_theoretical_peak(rows))
        sec.figures.append(
            Figure(
                f"run{w.run_id}-node-eff",
                "Efficiency vs peak",
                "Best value as % of the theoretical peak; dashed line: 100 %"
                + ("; red: above the peak (the table says why)." if above else "."),
                uri,
                "efficiency bars",
            )
        )
    sec.observations.extend(node_table.efficiency_observations(rows))
    sec.observations.extend(
        o for o in highlights_mod.reference_observations(rows) if o.severity == "warning"
    )
    compared = machine_measured.compare_run(run, node)
    if compared:
        sec.tables.append(
            w.table(
                "machine-measured",
                "The machine as reported and as measured",
                ["what", "reported (hwloc, /proc/cpuinfo)", "measured", "difference"],
                [[c.what, c.reported, c.measured, c.verdict] for c in compared],
                "Caches: the pointer chase's latency edges (the last one leads to memory: "
                "the last-level cache's usable size), a reported size within 2x of its edge "
                "agrees. Cores: the FP64 rate per thread with all threads against one "
                "thread's, at the measured clocks. Clock: the dependent-add chain with one "
                "and with all threads busy.",
            )
        )
    chase = node_figs.pointer_chase(node)
    if chase:
        caches: dict[str, int] = {}
        if run.get("topology_xml"):
            try:
                caches = Topology.from_xml(run["topology_xml"]).cache_sizes()
            except TopologyError:
                caches = {}
        x, y, unit = chase
        sec.observations.extend(obs.cache_plateaus(x, y, caches, unit=unit))
        drawing = node_figs.chase_drawing(node, caches)
        uri = drawing.uri() if drawing else None
        if uri is not None:
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-chase",
                    "Pointer chase",
                    "Latency per dependent load vs working set; dashed: cache sizes from "
                    "the topology.",
                    uri,
                    "pointer chase",
                    "node_pointer_chase",
                )
            )
    # the run's other node figures (suites/node.py writes the same drawings to its folder)
    for drawing in node_figs.drawings(node, peaks):
        uri = drawing.uri()
        if uri is not None:
            sec.figures.append(
                Figure(
                    f"run{w.run_id}-{drawing.stem}",
                    node_figs.title(drawing.stem),
                    "Each point: the median of the repetitions; open markers and dotted "
                    "lines: reference tools.",
                    uri,
                    drawing.stem,
                    drawing.stem,
                )
            )
    return sec


def _methods(run: dict, samples: list[dict], launches: list[dict]) -> list[tuple[str, str]]:
    """How each number was measured and summarised (Hoefler & Belli rules 9 and 10)."""
    items: list[tuple[str, str]] = []
    by_bench: dict[str, list[dict]] = defaultdict(list)
    for s in samples:
        by_bench[s["benchmark"]].append(s)
    for bench, ss in sorted(by_bench.items()):
        warm = sorted({s["warmups"] for s in ss})
        per_sample = sorted({len(s["values"]) for s in ss})
        configs: dict[str, set[int]] = defaultdict(set)
        for s in ss:
            key = json.dumps({k: v for k, v in s["tags"].items() if k != "repeat"}, sort_keys=True)
            configs[key].add(s["launch_id"])
        nl = sorted({len(v) for v in configs.values()})
        how = {
            "p2p": "OSU definitions: latency = half a blocking ping-pong round trip; bandwidth "
            "= bytes x window (64 non-blocking sends, 1-byte ack) / time; MB = 10^6 B. "
            "Timed in blocks of iterations so timer overhead stays out of sub-microsecond "
            "values.",
            "rma": "OSU 7.4's one-sided definitions (docs/rma.md): latency = time per "
            "operation with its synchronization (fence and pscw ping-pongs halved); "
            "bandwidth = bytes x window (64 operations) / time; MB = 10^6 B. Timed in "
            "blocks of iterations.",
            "coll": "Each repetition starts after MPI_Barrier; its time is the completion time "
            "of the slowest process (max over ranks); the first calls (communicator "
            "set-up) are warm-ups.",
            "nbc": "OSU 7.4's definitions (docs/nbc.md): every iteration timed on every rank, "
            "the slowest rank's kept; non-blocking: pure = post + wait, then a compute "
            "calibrated to the rank's own pure time between post and wait (overall, compute, "
            "overlap %).",
        }.get(bench, "Values as the benchmark or reference tool reports them.")
        items.append(
            (
                bench,
                f"{how} Warm-ups discarded per sample: {_span(warm)}. Values per "
                f"sample: {_span(per_sample)}. Launches per configuration: "
                f"{_span(nl)} (separate executions; statistics pool them as "
                "below).",
            )
        )
    timers = [l["meta"]["timer"] for l in launches if l.get("meta") and l["meta"].get("timer")]
    if timers:
        res = sorted({t.get("resolution_ns") for t in timers})
        ovh = sorted({t.get("overhead_ns") for t in timers})
        ticks = sorted({t["wtick_s"] for t in timers if t.get("wtick_s") is not None})
        costs = sorted({t["wtime_cost_ns"] for t in timers if t.get("wtime_cost_ns") is not None})
        mpi_clock = (
            f"; MPI_Wtick {_quantity_span(ticks, 's')}, one MPI_Wtime call "
            f"{_quantity_span(costs, 'ns')}"
            if ticks and costs
            else ""
        )
        items.append(
            (
                "timer",
                f"resolution {_quantity_span(res, 'ns')}, overhead "
                f"{_quantity_span(ovh, 'ns')}{mpi_clock} "
                "(measured by each benchmark at start).",
            )
        )
    pairs = [
        l["meta"]["cpu_pair"]["cacheline_ns"]
        for l in launches
        if (l.get("meta") or {}).get("cpu_pair")
    ]
    if pairs:
        items.append(
            (
                "CPU pair",
                f"one cache line between the two ranks' CPUs took {_span(sorted(round(x) for x in pairs))} ns "
                "one way (per 2-rank launch on one node, measured at its start). On a virtual "
                "machine it changes when the hypervisor moves the virtual CPUs, and small-message "
                "results change with it.",
            )
        )
    items.append(
        (
            "statistics",
            "Centre: median; uncertainty: nonparametric 95% CI of the "
            "median from order statistics (Le Boudec 2010), since timings are not "
            "normal. Across launches: median of the launch medians, and the spread of "
            "the launch medians. The seeds' view beside it: one number per launch as OSU "
            "prints one per run (mean time; for rates work over time, i.e. harmonic), and "
            "the mean and standard deviation of those over the launches. A quoted p2p "
            "median's own interval is over launches (a t-interval over 2-5 launch medians, "
            "order statistics from 6, at least the samples' interval); it is marked "
            "unstable only where that interval is wider than the precision asked "
            f"({stats.CV_LIMIT:.0%} for fixed counts), with its class: launches bimodal, "
            "budget ran out before the target, noise above the target. Nothing is dropped "
            "or smoothed (Hoefler & Belli, SC15, rules 5, 9, 10).",
        )
    )
    items.append(
        (
            "observations",
            "Computed from the medians, never canned: Hockney model "
            "T(m) = alpha + m/beta fitted per segment with relative (1/T-weighted) "
            "least squares; segments by exact dynamic programming minimising the sum of "
            "squared relative residuals plus a penalty of 0.02 per segment, at least 3 "
            "sizes per segment; flat region: sizes within 10% of the smallest latency; "
            "dip: a bandwidth more than 8% (and more than its CI) below the geometric "
            "mean of its neighbours; ratios between placements at 8 B and at the largest "
            "size; comparisons: Mann-Whitney U, p < 0.05 and a Hodges-Lehmann shift of "
            "more than 5%.",
        )
    )
    return items


def _quantity_span(values: list[Any], unit: str) -> str:
    """Lowest-highest of measured times in one scaled unit, three digits each
    ('24.0-26.0 ns', not '24.0009062-25.9892031 ns')."""
    numbers = [float(v) for v in values if isinstance(v, (int, float))]
    if not numbers:
        return "unknown"
    return format_span(min(numbers), max(numbers), unit)


def _span(values: list[Any]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "unknown"
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _run_context(
    store: Store, run_id: int, out_dir: Path, machine_shown_in: int | None = None
) -> dict[str, Any]:
    """`machine_shown_in`: an earlier run of the same machine whose machine and
    environment sections this run shares, so a multi-suite report shows them once."""
    run = store.run(run_id)
    samples = store.samples(run_id)
    launches = store.launches(run_id)
    judged = precision.judge(run, samples, store.summaries(run_id), launches)
    target = precision.target_of(run.get("notes") or [])
    w = _Writer(out_dir, run_id)
    machine = (
        (None, None)
        if machine_shown_in
        else (_machine(run, w, samples), _environment(run, w, launches))
    )
    sections = [
        s
        for s in (
            *machine,
            _placement(run, launches, w),
            _p2p(
                samples,
                w,
                judged=[r for r in judged if r.key[0] == "p2p"],
                target=target,
                launches=launches,
                run=run,
            ),
            _rma(samples, w, [r for r in judged if r.key[0] == "rma"], target),
            _coll(samples, w, [r for r in judged if r.key[0] in COLL_PROGRAMS], target),
            _nbc(samples, w, [r for r in judged if r.key[0] == "nbc"], target),
            _node(run, samples, w, [r for r in judged if r.key[0] in node_table.OURS], target),
            _node_outliers(samples, w),
            _links(samples, w),
            *_startup_io(run, samples, w),
        )
        if s is not None
    ]
    notes = run.get("notes") or []
    bad = [l for l in launches if l["status"] != "COMPLETED"]
    labels = []
    labels += [n["text"] for n in notes if n.get("kind") == "banner"]
    emulated = verdicts.emulation_text(s["tags"] for s in samples)
    # where each banner's fact is explained: the collectives' section for emulated nodes
    label_anchors = {}
    if emulated:
        labels.append(f"collectives and lanes ran on {emulated}")
        coll = next((s.id for s in sections if s.id.endswith("-coll")), None)
        if coll:
            label_anchors[labels[-1]] = coll
    return {
        "id": run_id,
        "anchor": f"run{run_id}",
        "name": f"Run {run_id}",
        "group": None,
        "run": run,
        "sections": sections,
        "labels": labels,
        "label_anchors": label_anchors,
        "machine_shown_in": machine_shown_in,
        "methods": _methods(run, samples, launches),
        "skipped": [n for n in notes if n.get("kind") == "skipped"],
        "warnings": [n for n in notes if n.get("kind") == "warning"],
        "info": [n for n in notes if n.get("kind") == "info"],
        "failed": bad,
        "n_launches": len(launches),
        "n_samples": len(samples),
        "observations": _candidates(sections, launches, notes, f"run{run_id}"),
        "summary": summary.summarize(run, samples, launches, f"run{run_id}"),
    }


def _candidates(
    sections: list[Section], launches: list[dict], notes: list[dict], anchor: str
) -> list[tuple[obs.Observation, str]]:
    """Every observation of a run's sections with the section it links to, plus the
    launches that failed and the placements that were wrong: the highlights' candidates."""
    found = [(o, s.id) for s in sections for o in s.observations]
    bad = [l for l in launches if l["status"] != "COMPLETED"]
    if bad:
        names = ", ".join(f"{l['name']} ({l['status']})" for l in bad[:4])
        text = f"{len(bad)} launch{'es' if len(bad) != 1 else ''} did not complete: {names}"
        found.append(
            (
                obs.Observation("failed", text + ("; ..." if len(bad) > 4 else "."), {}, "warning"),
                f"{anchor}-failed",
            )
        )
    for line in placement_proof.proof_lines(launches, notes):
        if line.verdicts.get("wrong"):
            found.append(
                (
                    obs.Observation(
                        "placement",
                        f"{line.label}: the ranks did not run where asked "
                        f"({line.verdict_text()}); its numbers are not that placement's.",
                        {},
                        "warning",
                        line.label,
                    ),
                    f"{anchor}-placement",
                )
            )
    return found


def _banners(runs: list[dict]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each distinct banner once at the top, with the runs it applies to ('Runs 2, 3:
    partly emulated ...'), not once per run; each run as (name, anchor): the section
    that explains the banner (the collectives' for emulated nodes), else the run."""
    found: dict[str, list[tuple[str, str]]] = {}
    for r in runs:
        for label in r["labels"]:
            anchor = (r.get("label_anchors") or {}).get(label, r["anchor"])
            found.setdefault(label, []).append((r["name"], anchor))
    return list(found.items())


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("hpcscope.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["fmt"] = format_number
    env.filters["bytes"] = format_bytes
    env.filters["options"] = options_text
    return env


def _headline_rate(n: summary.NodeLine) -> bool:
    """The node rates the Summary shows in full (issue 46 part 2): the FP64 peak kernel,
    DGEMM, DRAM bandwidth (STREAM triad), memory latency, sequential disk read and write,
    the network; the rest (other precisions, clock, caches, IOPS) stays in the node
    section's table, which the Summary links to."""
    if n.workload == "cpu_peak":
        return n.name.startswith("FP64")
    if n.workload == "stream":
        return n.name.startswith("STREAM triad")
    if n.workload == "disk":
        return n.name.startswith("disk sequential") and n.unit == "MB/s"
    return n.workload in ("dgemm", "mem_latency", "net")


def _title(machines: list[machine_line.MachineLine], run_ids: list[int]) -> tuple[str, str]:
    """The page's heading (host and CPU model: what a person reads first) and its
    <title>, which adds the runs."""
    heading = "; ".join(m.title for m in machines) or "unknown host"
    what = f"run {run_ids[0]}" if len(run_ids) == 1 else f"runs {', '.join(map(str, run_ids))}"
    return heading, f"hpcscope report: {heading} ({what})"


def write_report(store: Store, run_ids: list[int], out_dir: Path) -> Path:
    """Write out_dir/index.html (and one CSV per table) for the given runs. Comparable
    runs (analysis/over_runs.py: same suite, host and configurations) share one section
    with their curves overlaid, a column per run, the spread over runs and the changes
    between them; other runs get a section each. Runs of the same machine share one
    machine section; the first run of each later group (or the second run of a group of
    two) is compared with the first run of that suite. Returns the index.html path."""
    if not run_ids:
        raise ValueError("write_report needs at least one run id")
    out_dir = safe_write.ensure_dir(out_dir)  # the folder as named (links below: see callers)
    loaded = {rid: (store.run(rid), store.samples(rid)) for rid in dict.fromkeys(run_ids)}
    groups = over_runs_analysis.group_comparable(list(loaded.values()))
    first_of_machine: dict[tuple, int] = {}
    first_of_suite: dict[str, int] = {}
    runs, pairs = [], []
    for group in groups:
        rid = group[0]
        run = loaded[rid][0]
        machine = (run.get("host"), run.get("topology_xml"))
        if len(group) == 1:
            runs.append(_run_context(store, rid, out_dir, first_of_machine.get(machine)))
        else:
            runs.append(
                _group_context(store, group, loaded, out_dir, first_of_machine.get(machine))
            )
            if len(group) == 2:
                pairs.append((group[0], group[1]))
        first_of_machine.setdefault(machine, rid)
        if run["suite"] in first_of_suite:
            pairs.append((first_of_suite[run["suite"]], rid))
        first_of_suite.setdefault(run["suite"], rid)
    comparisons = []
    for first, other in pairs:
        rows = compare_mod.compare_runs(store, first, other)
        name = f"compare_run{first}_run{other}.csv"
        with safe_write.open_for_write(out_dir / name, newline="") as fh:
            cw = csv.writer(fh)
            cw.writerow(
                [
                    "benchmark",
                    "metric",
                    "unit",
                    "configuration",
                    "median_a",
                    "median_b",
                    "ratio_b_over_a",
                    "p_value",
                    "verdict",
                    "n_a",
                    "n_b",
                ]
            )
            for r in rows:
                cw.writerow(
                    [
                        csv_cell(v)
                        for v in (
                            r.benchmark,
                            r.metric,
                            r.unit,
                            r.label,
                            r.median_a,
                            r.median_b,
                            r.ratio,
                            r.p_value,
                            r.verdict,
                            r.n_a,
                            r.n_b,
                        )
                    ]
                )
        comparisons.append(
            {
                "a": first,
                "b": other,
                "csv": name,
                "differs": compare_mod.compared_tags(store, first, other),
                "html": compare_mod.render_comparison(
                    rows, f"Run {other} compared with run {first}"
                ),
            }
        )
    headline = summary.Summary()
    for context in runs:
        headline.extend(context["summary"])
    ranked = highlights_mod.rank(o for context in runs for o in context["observations"])
    machines = machine_line.machines([loaded[rid] for rid in dict.fromkeys(run_ids)])
    node_headline = [n for n in headline.node if _headline_rate(n)]
    heading, title = _title(machines, run_ids)
    html = (
        _env()
        .get_template("report.html")
        .render(
            runs=runs,
            summary=headline,
            banners=_banners(runs),
            highlights=ranked,
            n_observations=sum(len(context["observations"]) for context in runs),
            comparisons=comparisons,
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            title=title,
            heading=heading,
            machines=machines,
            node_headline=node_headline,
            node_rest=[n for n in headline.node if n not in node_headline],
            glossary=glossary.TERMS,
        )
    )
    html = glossary.link_first(html)  # each word's first use links to its definition
    path = out_dir / "index.html"
    safe_write.write_text(path, html)
    return path


# ------------------------------------------------------- groups of comparable runs


def _group_context(
    store: Store,
    group: list[int],
    loaded: dict[int, tuple[dict, list[dict]]],
    out_dir: Path,
    machine_shown_in: int | None = None,
) -> dict[str, Any]:
    """One section set for comparable runs (issue 19): what each run measured side by
    side (overlay, a column per run, spread over runs, changes), then the suite's own
    section once, over the launches of all the runs pooled. Its cost does not grow with
    the number of runs except for one table column and one line per figure per run."""
    group = sorted(group, key=lambda r: (loaded[r][0]["started"], r))
    runs = [loaded[r][0] for r in group]
    first = runs[0]
    samples = [dict(s, run_id=r) for r in group for s in loaded[r][1]]
    launches = [dict(l, name=f"run {r}: {l['name']}") for r in group for l in store.launches(r)]
    anchor = f"runs{group[0]}-{group[-1]}"
    w = _Writer(out_dir, f"s{group[0]}-{group[-1]}")
    machine = (
        (None, None)
        if machine_shown_in
        else (_machine(first, w, loaded[group[0]][1]), _environment(first, w, launches))
    )
    parts = over_runs_parts.group_parts(runs, samples, anchor)
    differs = _what_differs(runs)
    facts = Section(
        f"{anchor}-over-runs",
        f"{len(runs)} comparable runs",
        f"{len(runs)} runs of {first['suite']} on {first.get('host') or 'an unknown host'} with "
        "the same configurations, side by side. "
        + (f"What differs between them: {differs}." if differs else ""),
    )
    facts.tables.append(
        w.table(
            "runs",
            "The runs",
            ["run", "started", "label", "status", "MPI", "launches", "samples"],
            [
                [
                    r["id"],
                    str(r["started"])[:19],
                    r.get("label") or "",
                    r["status"],
                    ", ".join(f"{m.get('flavor')} {m.get('version')}" for m in r.get("mpi") or []),
                    sum(1 for l in launches if l["run_id"] == r["id"]),
                    len(loaded[r["id"]][1]),
                ]
                for r in runs
            ],
        )
    )
    facts.figures += parts.figures
    facts.tables += [_spec_table(w, t) for t in parts.tables]
    sections = [s for s in machine if s is not None] + [facts]
    if parts.history_figures or parts.history_tables:
        changes = Section(
            f"{anchor}-history",
            "History and changes",
            f"{parts.changes} change{'s' if parts.changes != 1 else ''} detected with the "
            "statistics of `hpcscope compare`; `hpcscope history` prints the same.",
        )
        changes.figures += parts.history_figures
        changes.tables += [_spec_table(w, t) for t in parts.history_tables]
        sections.append(changes)
    pooled = [
        s
        for s in (_p2p(samples, w, figures=False), _coll(samples, w), _node(first, samples, w))
        if s is not None
    ]
    for s in pooled:
        s.title += f" (all {len(runs)} runs pooled)"
        s.intro = (
            f"The launches of all {len(runs)} runs taken together, as if one run had made "
            "them (the curves of each run and the spread between runs are in the section "
            "above; the curves are not drawn again here). " + s.intro
        )
    sections += pooled
    notes = [n for r in runs for n in r.get("notes") or []]

    def unique(kind: str) -> list[dict]:
        seen: dict[str, dict] = {}
        for n in notes:
            if n.get("kind") == kind:
                seen.setdefault(n.get("text", ""), n)
        return list(seen.values())

    bad = [l for l in launches if l["status"] != "COMPLETED"]
    labels = sorted({n["text"] for n in notes if n.get("kind") == "banner"})
    return {
        "id": group[0],
        "anchor": anchor,
        "name": f"Runs {', '.join(map(str, group))}"
        if len(group) <= 6
        else f"Runs {group[0]} to {group[-1]} ({len(group)} runs)",
        "group": runs,
        "run": first,
        "sections": sections,
        "labels": labels,
        "machine_shown_in": machine_shown_in,
        "methods": _methods(first, samples, launches),
        "skipped": unique("skipped"),
        "warnings": unique("warning"),
        "info": unique("info"),
        "failed": bad,
        "n_launches": len(launches),
        "n_samples": len(samples),
        "observations": _candidates(sections, launches, notes, anchor),
        "summary": summary.summarize(first, samples, launches, anchor),
    }


def _spec_table(w: _Writer, spec: over_runs_parts.TableSpec) -> Table:
    return w.table(spec.tid, spec.title, spec.columns, spec.rows, spec.caption, spec.classes)


def _what_differs(runs: list[dict]) -> str:
    """Labels, MPI versions and hosts that are not the same in every run of a group."""
    parts = []
    for what, get in (
        ("label", lambda r: r.get("label") or "(none)"),
        (
            "MPI",
            lambda r: (
                ", ".join(f"{m.get('flavor')} {m.get('version')}" for m in r.get("mpi") or [])
                or "(none)"
            ),
        ),
        ("status", lambda r: r["status"]),
    ):
        values = list(dict.fromkeys(get(r) for r in runs))
        if len(values) > 1:
            parts.append(f"{what} ({', '.join(values[:6])}{', ...' if len(values) > 6 else ''})")
    dates = sorted(str(r["started"])[:10] for r in runs)
    parts.append(
        f"start time ({dates[0]} to {dates[-1]})" if dates[0] != dates[-1] else "start time"
    )
    return "; ".join(parts)
