"""One-sided (rma suite) figures: one per test, sync and window kind, a curve per (MPI,
placement), drawn by the p2p figure's code (same curves, bands and axes) with its own
title, so the two suites read alike."""

from __future__ import annotations

import functools
from pathlib import Path

from hpcscope.figures.common import Drawing, save_drawings
from hpcscope.figures.p2p import plot_metric
from hpcscope.results.rma_tests import RMA_TESTS, is_rma, label  # noqa: F401 (RMA_TESTS: report)


def families(samples: list[dict]) -> dict[str, list[dict]]:
    """{label 'test (sync, window)': its samples}, in the tests' order."""
    out: dict[str, list[dict]] = {}
    order = list(RMA_TESTS)
    for s in sorted(
        (s for s in samples if is_rma(s["params"])),
        key=lambda s: (order.index(s["params"]["test"]), label(s["params"])),
    ):
        out.setdefault(label(s["params"]), []).append(s)
    return out


def stem(family: str) -> str:
    """'put_latency (flush, allocate)' -> 'rma_put_latency_flush_allocate'."""
    return "rma_" + "_".join(family.replace("(", "").replace(")", "").replace(",", "").split())


def plot_family(samples: list[dict], family: str):
    test = RMA_TESTS[samples[0]["params"]["test"]]
    fig = plot_metric(samples, test.metric)
    if fig is not None:
        fig.axes[0].set_title(f"MPI one-sided {family} ({test.program})", fontsize=11)
    return fig


def drawings(samples: list[dict]) -> list[Drawing]:
    found = []
    for family, group in families(samples).items():
        shown = [[s["tags"], s["params"], s["values"]] for s in group]
        draw = functools.partial(plot_family, group, family)
        found.append(Drawing(stem(family), "rma_family", [family, shown], draw))
    return found


def write(samples: list[dict], out_dir: Path) -> list[Path]:
    """PNG and SVG per test family; returns the files written."""
    return save_drawings(drawings(samples), out_dir)
