"""Export a run's samples: JSON, CSV, Markdown tables and OSU-style text.

`hpcscope export RUN --format json|csv|markdown|osu` prints one of these on stdout
(docs/architecture.md). Every number is derived from the stored raw values by hpcscope.results.stats;
nothing is rounded before the last formatting step, and a cell without data stays empty.

Grouping: a sample belongs to a launch, whose tags (mpi, placement, repeat, ...) say what
was measured. CSV and JSON keep one entry per launch x metric x params (nothing pooled);
Markdown, OSU text and `p2p_table` pool the launches that differ only in `repeat`, using
all their raw values, and give the across-launch view (median of launch medians, spread)
next to it, because several launches are not i.i.d. (Hoefler & Belli SC15, Sec. 4.2).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from hpcscope.formatting import csv_cell, markdown_cell, markdown_table, one_line
from hpcscope.plan.placement import PLACEMENTS as PLACEMENT_ORDER
from hpcscope.results import nbc_osu, osu_coll, osu_own, placement_proof, precision
from hpcscope.results.cells import (
    IMB_P2P_TESTS,
    NAMED_P2P_TESTS,
    OSU_MORE_P2P,
    canonical,
    cell_key,
    identity,
    launch_value,
    summarize_cell,
)
from hpcscope.results.cells import LAUNCH_TAGS as POOLED_TAGS
from hpcscope.results.export_schema import EXPORT_SCHEMA
from hpcscope.results.rma_tests import RMA_TESTS, SYNC_TEXT, WINDOW_TEXT
from hpcscope.results.stats import is_rate, summarize
from hpcscope.results.store import Store

METRIC_ORDER = ("latency", "bandwidth", "bibandwidth", "message_rate")
OSU_FIELD_WIDTH = 18  # OSU point-to-point FIELD_WIDTH; sizes are %-10d
OSU_TITLES = {
    "latency": ("Latency Test", "Latency"),
    "bandwidth": ("Bandwidth Test", "Bandwidth"),
    "bibandwidth": ("Bi-Directional Bandwidth Test", "Bandwidth"),
    "message_rate": ("Multiple Bandwidth / Message Rate Test", "Messages/s"),
}

Samples = Sequence[dict[str, Any]]


def _samples(source: Store | Samples, run_id: int | None) -> list[dict[str, Any]]:
    if isinstance(source, Store):
        if run_id is None:
            raise ValueError("exporting from a Store needs a run id (Store.resolve('last'))")
        return source.samples(run_id)
    return list(source)


_key = canonical


def _placement_rank(name: str) -> tuple[int, str]:
    return (PLACEMENT_ORDER.index(name) if name in PLACEMENT_ORDER else len(PLACEMENT_ORDER), name)


def _metric_rank(name: str) -> tuple[int, str]:
    return (METRIC_ORDER.index(name) if name in METRIC_ORDER else len(METRIC_ORDER), name)


def _params_rank(params: dict[str, Any]) -> tuple[Any, ...]:
    size = params.get("bytes")
    return (0 if isinstance(size, (int, float)) else 1, size or 0, _key(params))


_identity = identity


def _params_label(params: dict[str, Any]) -> str:
    if set(params) == {"bytes"}:
        return str(params["bytes"])
    return ", ".join(f"{k}={params[k]}" for k in sorted(params))


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


# -- the shared cell: one measurement pooled over repeats -------------------------------


def _cell(group: Samples) -> dict[str, Any]:
    """Statistics of one (tags without repeat, metric, params) group over its launches
    (results.cells.summarize_cell, the one summary of a cell), as a plain dict."""
    per_launch: dict[Any, list[float]] = {}
    for s in group:
        per_launch.setdefault(s["launch_id"], []).extend(s["values"])
    cell = summarize_cell(per_launch, group[0]["unit"])
    summary, across, over = cell.all, cell.across, cell.over
    # The interval a precision claim refers to (issue 47): over launches, around the
    # median of the launch medians (results/precision.quoted_interval); the samples'
    # interval alone held another run's median in 64 % of cells on a 2-vCPU guest.
    quoted = precision.quoted_interval(per_launch)
    return {
        "unit": cell.unit,
        "n": summary.n,
        "launches": cell.launches,
        # The seeds' view (results/cells.over_launches): one number per launch, as OSU
        # prints one per run, and their mean and sigma. No mean of all raw values pooled:
        # one stalled block drags a pooled harmonic mean far below every launch.
        "launch_values": over.values if over else [],
        "launch_mean": over.mean if over else None,
        "launch_std": over.std if over else None,
        "cv": summary.cv,
        "median": summary.median,
        "ci_low": quoted.low,
        "ci_high": quoted.high,
        "ci_of": quoted.centre,
        "ci_method": quoted.method,
        "sample_ci_low": summary.ci_low,
        "sample_ci_high": summary.ci_high,
        "min": summary.min,
        "max": summary.max,
        "warnings": cell.warnings,
        "across": None
        if across is None
        else {
            "median": across.median,
            "ci_low": across.ci_low,
            "ci_high": across.ci_high,
            "spread": across.spread,
            "cv": across.cv,
            "medians": across.medians,
        },
    }


def _common_tags(samples: Samples, ignore: Iterable[str]) -> dict[str, Any]:
    skip = set(ignore)
    return {k: v for k, v in samples[0]["tags"].items() if k not in skip}


def p2p_table(
    samples: Samples, metric: str = "latency", mpi: str | None = None
) -> list[dict[str, Any]]:
    """Rows for point-to-point tables and figures, sorted by message size:

        [{"bytes": 8, "placements": {"core": cell, "socket": cell, ...}}, ...]

    cell = {unit, n, launches, launch_values, launch_mean, launch_std, cv, median, ci_low,
    ci_high, ci_of, ci_method, sample_ci_low, sample_ci_high, min, max, warnings, across}:
    median, min, max and CV over all raw values of the launches of that placement;
    ci_low/ci_high the 95 % interval over launches of ci_of, the median of the launch
    medians (results/precision.quoted_interval, named by ci_method), sample_ci_low/high
    the CI of the median of the raw values pooled; launch_values one number per launch (the OSU way:
    mean time, or work over time for rates; results/cells.launch_value) with their mean
    and sample std; `across` = {median, ci_low, ci_high, spread, cv, medians} over the
    per-launch medians when there are several launches, else None.

    Only samples of `metric` with a params "bytes" are used; measurement settings
    (SETTING_PARAMS: iterations, block, window, repeat, test) are pooled. Launches may
    differ in placement and repeat only, and samples in nothing but bytes and settings;
    several MPIs need `mpi=` (they are never mixed silently).
    """
    chosen = [s for s in samples if s["metric"] == metric and "bytes" in s["params"]]
    mpis = sorted({str(s["tags"].get("mpi", "")) for s in chosen})
    if mpi is not None:
        chosen = [s for s in chosen if str(s["tags"].get("mpi", "")) == mpi]
    elif len(mpis) > 1:
        raise ValueError(
            f"samples of {len(mpis)} MPI libraries ({', '.join(mpis)}); choose one with mpi="
        )
    others = {_key(_common_tags([s], ("placement", *POOLED_TAGS))) for s in chosen}
    if len(others) > 1:
        raise ValueError(
            "samples differ in tags other than placement and repeat "
            f"({', '.join(sorted(others))}); filter them first"
        )
    kinds = {
        _key({k: v for k, v in _identity(s["params"]).items() if k != "bytes"}) for s in chosen
    }
    if len(kinds) > 1:
        raise ValueError(
            "samples differ in params other than bytes and measurement "
            f"settings ({', '.join(sorted(kinds))}); filter them first"
        )
    by_size: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for s in chosen:
        placement = str(s["tags"].get("placement", ""))
        by_size.setdefault(s["params"]["bytes"], {}).setdefault(placement, []).append(s)
    rows = []
    for size in sorted(by_size):
        cells = {
            p: _cell(g)
            for p, g in sorted(by_size[size].items(), key=lambda kv: _placement_rank(kv[0]))
        }
        rows.append({"bytes": size, "placements": cells})
    return rows


# -- JSON and CSV: one entry per launch x metric x params ------------------------------


def launch_entry(
    launch: dict[str, Any], summaries: list[dict[str, Any]], placement: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One launch as `export --format json` writes it: what ran, how it ended, and the
    placement proof from its meta record (records.md section 2): the MPI library, the
    timer facts, the cache-line transfer time between the CPUs of a 2-rank launch, the MPI
    transport (`mpi_t`, `mpi_transport`: components, requests and protocol thresholds read
    through MPI_T) and per rank the host, the CPUs it was bound to and its NUMA node, as read
    from inside the process; `placement` the verdict of the placement check (verified,
    wrong with the reason, or reported for bindings left to the launcher; null when not
    checked). `meta`, `errors`, `summaries` and `stderr_tail` are kept whole
    so that `hpcscope import` can rebuild the launch (results/transfer.py)."""
    meta = launch.get("meta")
    mpi = (meta or {}).get("mpi")
    return {
        "id": launch["id"],
        "name": launch["name"],
        "tags": launch.get("tags") or {},
        "status": launch["status"],
        "returncode": launch.get("returncode"),
        "started": launch.get("started"),
        "finished": launch.get("finished"),
        "backend_id": launch.get("backend_id") or "",
        "mpi": None if not mpi else {"library": mpi.get("library"), "version": mpi.get("version")},
        "timer": None if meta is None else meta.get("timer"),
        "cpu_pair": None if meta is None else meta.get("cpu_pair"),
        # the MPI transport read inside the benchmark (bench/common/transport_mpi.h)
        "mpi_t": None if meta is None else meta.get("mpi_t"),
        "mpi_transport": None if meta is None else meta.get("mpi_transport"),
        "ranks": [
            {k: r.get(k) for k in ("rank", "host", "cpus", "numa", "socket", "core")}
            | ({"lane": r["lane"]} if r.get("lane") else {})  # the lab's per-process lane
            for r in (meta or {}).get("ranks") or []
        ],
        "placement": placement,
        "meta": meta,
        "errors": list(launch.get("errors") or []),
        "summaries": [{k: v for k, v in x.items() if k != "launch_id"} for x in summaries],
        "stderr_tail": launch.get("stderr_tail") or "",
    }


def _precision_by_cell(store: Store, run_id: int) -> dict[tuple, dict[str, Any]]:
    """{cells.cell_key: the cell's precision} of a run measured to a precision
    (results/precision.py); {} otherwise."""
    run = store.run(run_id)
    target = precision.target_of(run.get("notes") or [])
    judged = precision.judge(
        run, store.samples(run_id), store.summaries(run_id), store.launches(run_id)
    )
    return {
        r.key: {
            "target": target,
            "half_width": r.precision.half_width,
            "level": r.precision.level,
            "met": r.precision.met,
            "stop": r.reason,
        }
        for r in judged
    }


def _launch_entries(store: Store, run_id: int) -> list[dict[str, Any]]:
    by_launch: dict[int, list[dict[str, Any]]] = {}
    for x in store.summaries(run_id):
        by_launch.setdefault(x["launch_id"], []).append(x)
    verdicts = placement_proof.verdicts_by_launch(store.run(run_id).get("notes") or [])
    return [
        launch_entry(l, by_launch.get(l["id"], []), placement_proof.launch_placement(l, verdicts))
        for l in store.launches(run_id)
    ]


def to_json(source: Store | Samples, run_id: int | None = None) -> str:
    """All raw values with a summary each, plus the pooled view over repeats.

    {"schema": EXPORT_SCHEMA, "run": run dict (with its command line) or null,
     "launches": [launch_entry(...)] (empty without a Store),
     "samples": [sample + {"summary": Summary}],
     "pooled": [{benchmark, metric, unit, params, tags (without repeat), launch_ids,
                 cell, and for a run measured to a precision "precision": {target,
                 half_width, level, met, stop}}]}
    The run's topology XML is left out (large). docs/records.md, "export".
    """
    samples = _samples(source, run_id)
    judged = _precision_by_cell(source, run_id) if isinstance(source, Store) and run_id else {}
    out_samples = []
    for s in samples:
        summary = summarize(s["values"], is_rate(s["unit"])).to_dict()
        out_samples.append(dict(s, summary=summary))
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        key = _key(
            [
                s["benchmark"],
                s["metric"],
                s["unit"],
                _identity(s["params"]),
                _common_tags([s], POOLED_TAGS),
            ]
        )
        groups.setdefault(key, []).append(s)
    pooled_out = []
    for group in groups.values():
        first = group[0]
        pooled_out.append(
            {
                "benchmark": first["benchmark"],
                "metric": first["metric"],
                "unit": first["unit"],
                "params": _identity(first["params"]),
                "tags": _common_tags(group, POOLED_TAGS),
                "launch_ids": sorted({s["launch_id"] for s in group}),
                "cell": _cell(group),
            }
            | ({"precision": judged[cell_key(first)]} if cell_key(first) in judged else {})
        )
    run, launches = None, []
    if isinstance(source, Store) and run_id is not None:
        run = source.run(run_id)
        run.pop("topology_xml", None)  # large; `hpcscope export` is about measurements
        launches = _launch_entries(source, run_id)
    doc = {
        "schema": EXPORT_SCHEMA,
        "run": run,
        "launches": launches,
        "samples": out_samples,
        "pooled": pooled_out,
    }
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


CSV_HEAD = ("launch_id", "launch", "benchmark", "metric", "unit")  # tags go after "launch"
CSV_PLACEMENT = "rank_hosts_cpus"  # after the tags: "host:cpus;..." per rank, from meta
CSV_VERDICT = "placement_verdict"  # after it: the placement check's verdict
CSV_STATS = ("n", "median", "ci_low", "ci_high", "min", "max", "mean", "std", "cv")
CSV_TAIL = ("warmups", *CSV_STATS, "launch_value", "warnings")  # after the params
# Last, for a run measured to a precision: its cell's achieved half-width, level, stop.
CSV_PRECISION = ("cell_precision", "cell_precision_level", "cell_stop")


def _precision_columns(found: dict[str, Any] | None) -> list[str]:
    if found is None:
        return ["", "", ""]
    return [_csv_value(found["half_width"]), _csv_value(found["level"]), _csv_value(found["stop"])]


def to_csv(source: Store | Samples, run_id: int | None = None) -> str:
    """One row per launch x metric x params: launch_id, launch, one column per tag, then
    benchmark, metric, unit, one column per param, warmups, n, median, ci_low, ci_high,
    min, max, mean (harmonic for rates), std, cv, launch_value (the sample's one number
    as OSU prints one per run, results/cells.launch_value: the seeds' mean and sigma over
    launches are taken over this column), warnings. A param whose name is taken
    by a tag or a fixed column is written as param_<name>. After the tags,
    `rank_hosts_cpus` is where the launch's ranks ran, verified from inside (meta record):
    "host:cpus" per rank in rank order, ";" between ranks, cpus as "0,1" (empty without a
    Store or meta), then `placement_verdict` (verified, wrong, "reported: ran as CLASS"
    for bindings left to the launcher, empty when not checked). A run measured to a
    precision adds, last, its cell's `cell_precision` (achieved 95% CI half-width of the
    median, a fraction), `cell_precision_level` (samples or launches) and `cell_stop`
    (met, budget, launch spread, CPU pair moved, cap)."""
    samples = _samples(source, run_id)
    placement: dict[int, str] = {}
    verdict: dict[int, str] = {}
    judged: dict[tuple, dict[str, Any]] = {}
    if isinstance(source, Store) and run_id is not None:
        judged = _precision_by_cell(source, run_id)
        verdicts = placement_proof.verdicts_by_launch(source.run(run_id).get("notes") or [])
        for launch in source.launches(run_id):
            verdict[launch["id"]] = placement_proof.csv_verdict(verdicts.get(launch["name"]))
            ranks = (launch.get("meta") or {}).get("ranks") or []
            placement[launch["id"]] = ";".join(
                f"{r.get('host', '')}:{','.join(str(c) for c in r.get('cpus') or [])}"
                for r in ranks
            )
    tag_cols = sorted({k for s in samples for k in s["tags"]})
    fixed = {*CSV_HEAD, *CSV_TAIL, CSV_PLACEMENT, CSV_VERDICT}
    tag_names = {k: (f"tag_{k}" if k in fixed else k) for k in tag_cols}
    param_keys = sorted({k for s in samples for k in s["params"]})
    taken = fixed | set(tag_names.values())
    param_names = {k: (f"param_{k}" if k in taken else k) for k in param_keys}
    header = [
        *CSV_HEAD[:2],
        *tag_names.values(),
        CSV_PLACEMENT,
        CSV_VERDICT,
        *CSV_HEAD[2:],
        *param_names.values(),
        *CSV_TAIL,
        *(CSV_PRECISION if judged else ()),
    ]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(name) for name in header])  # tag and param names are text too
    for s in samples:
        summary = summarize(s["values"], is_rate(s["unit"]))
        stats = summary.to_dict()
        writer.writerow(
            [
                s["launch_id"],
                _csv_value(s.get("launch", "")),
                *(_csv_value(s["tags"].get(k)) for k in tag_cols),
                _csv_value(placement.get(s["launch_id"], "")),
                _csv_value(verdict.get(s["launch_id"], "")),
                _csv_value(s["benchmark"]),
                _csv_value(s["metric"]),
                _csv_value(s["unit"]),
                *(_csv_value(s["params"].get(k)) for k in param_keys),
                _csv_value(s["warmups"]),
                *(_csv_value(stats[k]) for k in CSV_STATS),
                _csv_value(launch_value(s["values"], s["unit"])),
                _csv_value("; ".join(summary.warnings)),
                *(_precision_columns(judged.get(cell_key(s))) if judged else ()),
            ]
        )
    return buf.getvalue()


def _csv_value(value: Any) -> str:
    """One CSV cell: numbers in full precision (formatting is the reader's job), text
    through formatting.csv_cell (no control characters, no formula a spreadsheet runs)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):  # bool included: True, False
        return str(value)
    if isinstance(value, (dict, list)):
        return csv_cell(_key(value))
    return csv_cell(str(value))


# -- Markdown: size rows x placement columns, the seeds' stability table -----------------


def to_markdown(source: Store | Samples, run_id: int | None = None) -> str:
    """Tables shaped like shared/data/lcc3_osu_stability.tsv: one row per params (message
    size), for each metric (latency first, then bandwidth) and placement: hpcscope's
    median of all raw values and the 95% interval over launches (the cell's ci_low and
    ci_high), then the seeds' view: the mean and the
    standard deviation over the launches of one number per launch (results/cells.
    over_launches: OSU's number for that run). A second table lists those per-launch
    numbers. One pair of tables per benchmark and per combination of the other tags (e.g.
    per MPI). Measurement settings (SETTING_PARAMS) are pooled within a cell. Values with
    2 decimals, as OSU prints them.
    """
    samples = _samples(source, run_id)
    tables: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        key = _key([s["benchmark"], _common_tags([s], ("placement", *POOLED_TAGS))])
        tables.setdefault(key, []).append(s)
    parts = []
    for key in sorted(tables):
        benchmark, tags = json.loads(key)
        parts.append(_markdown_table(benchmark, tags, tables[key]))
    return "\n".join(parts)


def _ci_text(cell: dict[str, Any]) -> str:
    if cell["ci_low"] is None:
        return ""
    return f"{_fmt(cell['ci_low'])} .. {_fmt(cell['ci_high'])}"


def _markdown_table(benchmark: str, tags: dict[str, Any], samples: Samples) -> str:
    columns: dict[tuple[str, str, str], None] = {}  # (metric, unit, placement), ordered
    cells: dict[str, dict[tuple[str, str, str], list[dict[str, Any]]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for s in samples:
        # IMB-MPI1's p2p patterns (all metric time) and OSU's other two-rank tests (the
        # four's metrics): a column per test, rows by size
        test = s["params"].get("test") if s["params"].get("test") in NAMED_P2P_TESTS else None
        col = (test or s["metric"], s["unit"], str(s["tags"].get("placement", "")))
        columns[col] = None
        params = {k: v for k, v in _identity(s["params"]).items() if not (test and k == "test")}
        row = _key(params)
        rows[row] = params
        cells.setdefault(row, {}).setdefault(col, []).append(s)
    ordered_cols = sorted(columns, key=lambda c: (_metric_rank(c[0]), c[1], _placement_rank(c[2])))
    ordered_rows = sorted(rows, key=lambda r: _params_rank(rows[r]))
    launches = len({s["launch_id"] for s in samples})
    title = " ".join(
        [
            f"### {markdown_cell(benchmark or 'unknown benchmark')}",
            # a flag that is on as its name, not 'emulated_nodes=True' (placement_proof)
            *(
                markdown_cell(t)
                for t in (placement_proof.tag_pair(k, v) for k, v in sorted(tags.items()))
                if t
            ),
        ]
    )
    size_head = "bytes" if all(set(p) == {"bytes"} for p in rows.values()) else "params"
    head, per_launch_head = [size_head], [size_head]
    for metric, unit, placement in ordered_cols:
        name = f"{metric} {placement}".strip()
        head += [f"{name} median ({unit})", f"{name} 95% CI", f"{name} mean", f"{name} σ"]
        per_launch_head.append(f"{name} ({unit})")
    body: list[list[str]] = []
    per_launch_body: list[list[str]] = []
    warnings: list[str] = []
    for row in ordered_rows:
        line = [_params_label(rows[row])]
        values_line = [_params_label(rows[row])]
        for col in ordered_cols:
            group = cells[row].get(col)
            if not group:
                line += ["", "", "", ""]
                values_line.append("")
                continue
            cell = _cell(group)
            line += [
                _fmt(cell["median"]),
                _ci_text(cell),
                _fmt(cell["launch_mean"]),
                _fmt(cell["launch_std"]),
            ]
            values_line.append(", ".join(_fmt(v) for v in cell["launch_values"]))
            unstable = [w for w in cell["warnings"] if "unstable" in w or "differ" in w]
            warnings += [
                f"{size_head} {_params_label(rows[row])}, {col[0]} {col[2]}: {w}" for w in unstable
            ]
        body.append(line)
        per_launch_body.append(values_line)
    lines = [
        title,
        "",
        "median: over all raw values of the launches (hpcscope's robust view). 95% CI: "
        "the interval over launches of the median of the launch medians (t over 2-5 "
        "launches, order statistics from 6; one launch: its samples'). "
        f"mean and σ: over the {launches} launch(es) of one number per launch, the number "
        "OSU prints for one run (mean time; for rates work over time), as the LCC3 "
        "exercises report it. σ needs two launches.",
        "",
        markdown_table(head, body, [True] * len(head)).rstrip("\n"),
        "",
        "Per-launch values (one per launch, in launch order):",
        "",
        markdown_table(per_launch_head, per_launch_body, [True] * len(per_launch_head)).rstrip(
            "\n"
        ),
    ]
    if warnings:
        lines += ["", "Warnings:", ""] + [f"- {markdown_cell(w)}" for w in warnings]
    return "\n".join(lines) + "\n"


# -- OSU text: per MPI and placement, median per size -----------------------------------


def to_osu(source: Store | Samples, run_id: int | None = None) -> str:
    """OSU micro-benchmark style text so that scripts written for OSU output work:

        # OSU MPI Latency Test (hpcscope: p2p, mpi=openmpi, placement=core)
        # Size          Latency (us)
        0                       0.16

    One block per metric, MPI and placement (and other tags); the value is the median of
    all raw values at that size over all repeats, printed as OSU's point-to-point tests do ("%-10d%18.2f").
    Measurement settings (SETTING_PARAMS) are pooled; other params than bytes make
    blocks of their own. Samples without params "bytes" have no OSU form: left out.
    """
    every = _samples(source, run_id)
    # collectives: OSU's collective programs' own text (results/osu_coll.py)
    coll = osu_coll.to_osu_coll([s for s in every if s["benchmark"] == "coll"])
    samples = [s for s in every if "bytes" in s["params"] and s["benchmark"] != "coll"]
    # nbc: OSU's non-blocking/persistent/neighbourhood programs' own columns (nbc_osu)
    nbc = [s for s in samples if s["benchmark"] == "nbc"]
    samples = [s for s in samples if s["benchmark"] != "nbc"]
    # IMB-MPI1's p2p patterns have no OSU program whose text to imitate: named, not shown
    imb = sorted({s["params"]["test"] for s in samples if s["params"].get("test") in IMB_P2P_TESTS})
    samples = [s for s in samples if s["params"].get("test") not in IMB_P2P_TESTS]
    blocks: dict[str, list[dict[str, Any]]] = {}
    order: dict[str, tuple[Any, ...]] = {}
    for s in samples:
        other = {k: v for k, v in _identity(s["params"]).items() if k != "bytes"}
        key = _key([s["metric"], s["unit"], s["benchmark"], other, _common_tags([s], POOLED_TAGS)])
        order[key] = (
            _metric_rank(s["metric"]),
            s["unit"],
            s["benchmark"],
            str(s["tags"].get("mpi", "")),
            _placement_rank(str(s["tags"].get("placement", ""))),
            key,
        )
        blocks.setdefault(key, []).append(s)
    out = []
    for key in sorted(blocks, key=order.__getitem__):
        group = blocks[key]
        first = group[0]
        metric, unit = one_line(first["metric"]), one_line(first["unit"])
        test, column = OSU_TITLES.get(metric, (f"{metric} test", metric.capitalize()))
        named = first["params"].get("test")
        if named in OSU_MORE_P2P:  # osu_latency_mt's title, not osu_latency's
            test = OSU_MORE_P2P[named][1]
        tags = _common_tags(group, POOLED_TAGS)
        other = {k: v for k, v in _identity(first["params"]).items() if k != "bytes"}
        described = ", ".join(
            [
                first["benchmark"] or "unknown benchmark",
                *(f"{k}={v}" for k, v in sorted(tags.items())),
                *(f"{k}={v}" for k, v in sorted(other.items()) if tags.get(k) != v),
            ]
        )
        launches = len({s["launch_id"] for s in group})
        title = f"# OSU MPI {test}"
        rma = RMA_TESTS.get(str(other.get("test"))) if first["benchmark"] == "rma" else None
        if rma:  # the one-sided program's own title and its window/sync lines
            title, column = f"# {rma.title}", column if metric == "latency" else "Bandwidth"
        # osu_mbw_mr prints MB/s, then Messages/s: the rate times the size, then the rate
        both = metric == "message_rate"
        head = f"{'MB/s':>{OSU_FIELD_WIDTH}}{'Messages/s':>{OSU_FIELD_WIDTH}}" if both else ""
        lines = [
            f"{title} (hpcscope: {one_line(described)})",
            f"# median of all values per size over {launches} launch(es)",
            f"{'# Size':<10}" + (head or f"{column + ' (' + unit + ')':>{OSU_FIELD_WIDTH}}"),
        ]
        if rma:
            lines[2:2] = [
                f"# Window creation: {WINDOW_TEXT.get(str(other.get('window_kind')), '?')}",
                f"# Synchronization: {SYNC_TEXT.get(str(other.get('sync')), '?')}",
            ]
        own: dict = {}  # a --protocol osu run: OSU's own numbers (results/osu_own.py)
        if other.get("protocol") == "osu" and isinstance(source, Store) and run_id:
            own = osu_own.numbers(source.summaries(run_id))
        sizes: dict[int, list[dict[str, Any]]] = {}
        for s in group:
            sizes.setdefault(s["params"]["bytes"], []).append(s)
        for size in sorted(sizes):
            theirs = osu_own.value(sizes[size], own) if own else None
            median = _cell(sizes[size])["median"] if theirs is None else theirs
            mbs = f"{size * median / 1e6:>{OSU_FIELD_WIDTH}.2f}" if both else ""
            lines.append(f"{size:<10d}{mbs}{median:>{OSU_FIELD_WIDTH}.2f}")
        if own and all(osu_own.value(v, own) is not None for v in sizes.values()):
            lines[1] = osu_own.NOTE.format(n=launches)
        out.append("\n".join(lines) + "\n")
    # a Store's run: the nbc programs' own OSU aggregates (summaries "osu") for --protocol osu
    osu_sums = source.summaries(run_id) if isinstance(source, Store) and run_id is not None else []
    out += nbc_osu.blocks(nbc, osu_sums)
    from hpcscope.results import startup_osu  # osu_init and osu_hello's text

    started = startup_osu.osu_text(every)
    if started:
        out.append(started)
    if imb:
        out.append(
            f"# not exported: p2p {', '.join(imb)} (IMB-MPI1's patterns) have no OSU "
            "counterpart; --format json, csv or markdown has them\n"
        )
    return "\n".join(out + coll)


FORMATS = {"json": to_json, "csv": to_csv, "markdown": to_markdown, "osu": to_osu}


def export(source: Store | Samples, run_id: int | None, fmt: str) -> str:
    """Dispatch for `hpcscope export RUN --format FMT`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of " + ", ".join(FORMATS))
    return FORMATS[fmt](source, run_id)
