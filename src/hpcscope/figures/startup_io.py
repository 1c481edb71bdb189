"""Figures of the startup and io suites: start-up time against ranks per MPI library, and
MPI-IO bandwidth against transfer size per mode. They draw analysis/startup_rows.py's and
analysis/io_rows.py's rows (medians over launches, with the launches' min..max as bars)."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

from hpcscope.figures.common import Drawing, quantity_formatter  # noqa: E402


def startup_drawing(rows: list[dict]) -> Drawing:
    data = [
        (r["mpi"], r["ranks"], r["init_avg_ms"], r["init_avg_range"], r["hello_ms"])
        + (r["hello_range"], r["job_ms"])
        for r in rows
    ]
    return Drawing("startup_time", "startup_time", data, lambda: _startup(rows))


def _bars(rows: list[dict], key: str, span: str) -> tuple[list, list, list]:
    xs: list[int] = []
    ys: list[float] = []
    err: list[list[float]] = [[], []]
    for r in rows:
        if r.get(key) is None:
            continue
        lo, hi = r.get(span) or (r[key], r[key])
        xs.append(r["ranks"])
        ys.append(1000 * r[key])  # ms -> us, the unit quantity_formatter scales
        err[0].append(1000 * (r[key] - lo))
        err[1].append(1000 * (hi - r[key]))
    return xs, ys, err


def _startup(rows: list[dict]) -> Any:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=110)
    for i, mpi in enumerate(sorted({r["mpi"] for r in rows})):
        color = f"C{i}"  # one colour per library in both panels
        mine = sorted((r for r in rows if r["mpi"] == mpi), key=lambda r: r["ranks"])
        xs, ys, err = _bars(mine, "init_avg_ms", "init_avg_range")
        if xs:
            left.errorbar(xs, ys, yerr=err, marker="o", ms=3, capsize=2, label=mpi, color=color)
        xs, ys, err = _bars(mine, "hello_ms", "hello_range")
        if xs:
            right.errorbar(xs, ys, yerr=err, marker="o", ms=3, capsize=2, label=mpi, color=color)
        jobs = [(r["ranks"], 1000 * r["job_ms"]) for r in mine if r.get("job_ms") is not None]
        if jobs:
            right.plot(
                *zip(*jobs), linestyle="--", marker="x", ms=3, label=f"{mpi} job", color=color
            )
    for ax, title in (
        (left, "MPI_Init, mean over ranks"),
        (right, "launch to every rank's hello"),
    ):
        ax.set(xscale="log", xlabel="ranks", ylabel="median over launches", title=title)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_major_formatter(quantity_formatter("us"))
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def io_drawing(rows: list[dict]) -> Drawing:
    data = [
        (r["mpi"], r["op"], r["mode"], r["layout"], r["transfer"], r["median_mbs"]) + (r["range"],)
        for r in rows
    ]
    return Drawing("io_bandwidth", "io_bandwidth", data, lambda: _io(rows))


def _io(rows: list[dict]) -> Any:
    ops = [op for op in ("write", "read") if any(r["op"] == op for r in rows)]
    fig, axes = plt.subplots(1, len(ops), figsize=(10, 3.8), dpi=110, squeeze=False)
    for ax, op in zip(axes[0], ops, strict=True):
        series = sorted({(r["mpi"], r["mode"], r["layout"]) for r in rows if r["op"] == op})
        mpis = sorted({m for m, _, _ in series})
        kinds = sorted({(mode, layout) for _, mode, layout in series})
        for mpi, mode, layout in series:
            # colour: mode and file layout; line style: MPI library
            color = f"C{kinds.index((mode, layout))}"
            style = ("-", "--", ":", "-.")[mpis.index(mpi) % 4]
            mine = sorted(
                (
                    r
                    for r in rows
                    if (r["op"], r["mpi"], r["mode"], r["layout"]) == (op, mpi, mode, layout)
                ),
                key=lambda r: r["transfer"],
            )
            ys = [r["median_mbs"] for r in mine]
            err = [
                [r["median_mbs"] - r["range"][0] for r in mine],
                [r["range"][1] - r["median_mbs"] for r in mine],
            ]
            ax.errorbar(
                [r["transfer"] for r in mine],
                ys,
                yerr=err,
                marker="o",
                ms=3,
                capsize=2,
                color=color,
                linestyle=style,
                label=f"{mpi} {mode} {layout}",
            )
        ax.set(xlabel="transfer size", ylabel="median over launches", title=f"MPI-IO {op}")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(quantity_formatter("B"))
        ax.yaxis.set_major_formatter(quantity_formatter("MB/s"))
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
