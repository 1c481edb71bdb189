"""Collective samples as OSU 7.4's collective programs print them (`export --format osu`).

One block per OSU program, MPI library, configuration and rank count, with that program's
own title line ("# OSU MPI Allreduce Latency Test v7.4"), its datatype line and the columns
OSU prints with -f (full):

    # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
    4                       0.49              0.47              0.50        1000

osu_barrier has no size column. A "# hpcscope:" line after the datatype says what the
numbers are, because they depend on the protocol the run used:

  osu       (`run coll --protocol osu`, params protocol "osu") each value is one rank's
            mean over OSU's iterations, so Avg, Min and Max are OSU's: the mean, minimum
            and maximum over the ranks (launches pooled: the mean of all ranks' means).
  hpcscope  each value is one repetition's time of the slowest rank: Avg, Min and Max are
            over the repetitions, and Iterations counts them (all launches).

Only the library's own collective (algorithm native, and tuned) has an OSU program;
lanecoll's and the coll program's mock-ups, and MPI_Scan/MPI_Exscan (no OSU program), are
named in a closing line instead. Size is OSU's: the per-process block in bytes, the whole
vector for Reduce_scatter and Reduce_scatter_block (p blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcscope.formatting import one_line
from hpcscope.results.nbc_names import OPS, osu_title

# OSU 7.4's blocking collective programs (c/mpi/collective/blocking/osu_*.c) are those of
# the operations nbc measures in every form: one list, and one table of title words
OSU_COLLECTIVES = OPS
OSU_ALGORITHMS = ("native", "tuned")  # MPI_<Coll> itself: what OSU times
WHOLE_VECTOR = ("reduce_scatter", "reduce_scatter_block")  # OSU's size is p blocks
FIELD = 18  # OSU's FIELD_WIDTH
COLUMNS = ("Avg Latency(us)", "Min Latency(us)", "Max Latency(us)")
BLOCK_TAGS = ("mpi", "mpi_version", "node_size", "rank_layout", "protocol", "tool")


def title(collective: str) -> str:
    """'# OSU MPI Allreduce Latency Test v7.4' (KeyError: no OSU program)."""
    found = osu_title(collective) if collective in OSU_COLLECTIVES else None
    if found is None:
        raise KeyError(collective)
    return found


def osu_size(params: dict[str, Any]) -> int:
    """OSU's size of a sample: what the program recorded, else bytes (x p for the whole
    vector of Reduce_scatter and Reduce_scatter_block)."""
    if "osu_size" in params:
        return int(params["osu_size"])
    scale = int(params.get("p", 1)) if params["collective"] in WHOLE_VECTOR else 1
    return int(params["bytes"]) * scale


def header(collective: str) -> str:
    rest = "".join(f"{c:>{FIELD}}" for c in COLUMNS[1:]) + f"{'Iterations':>12}"
    if collective == "barrier":  # print_only_header without show_size
        return f"# {COLUMNS[0]}{rest}"
    return f"{'# Size':<10}{COLUMNS[0]:>{FIELD}}{rest}"


def row(collective: str, size: int, avg: float, low: float, high: float, iters: int) -> str:
    rest = f"{low:>{FIELD}.2f}{high:>{FIELD}.2f}{iters:>12d}"
    if collective == "barrier":  # print_stats without show_size: %17.2f
        return f"{avg:>17.2f}{rest}"
    return f"{size:<10d}{avg:>{FIELD}.2f}{rest}"


def _block_key(s: dict[str, Any]) -> tuple:
    prm, tags = s["params"], s.get("tags") or {}
    return (
        str(tags.get("mpi", "")),
        prm["collective"],
        tuple((k, str(tags[k])) for k in BLOCK_TAGS if k in tags),
        int(prm.get("nodes", 1)),
        int(prm.get("ppn", 0)),
        int(prm.get("p", 0)),
        prm["algorithm"],
    )


def _described(s: dict[str, Any], launches: int, osu: bool) -> str:
    prm, tags = s["params"], s.get("tags") or {}
    said = [f"{k}={tags[k]}" for k in BLOCK_TAGS if k in tags and k != "protocol"]
    said += [f"N={prm.get('nodes', 1)} x n={prm.get('ppn', 0)} (p={prm.get('p', 0)})"]
    if prm["algorithm"] != "native":
        said.append(f"algorithm={prm['algorithm']}")
    what = (
        "your OSU build's own output (--osu-dir, MPI_CHAR): Avg as it printed it, one per "
        "launch (mean, min and max over the launches)"
        if tags.get("tool") == "osu"
        else "protocol osu: mean, min and max over the ranks of each rank's mean"
        if osu
        else "protocol hpcscope: mean, min and max over the repetitions of the slowest "
        "rank's time; Iterations = repetitions"
    )
    return one_line(f"# hpcscope: coll, {', '.join(said)}; {what}; {launches} launch(es)")


def to_osu_coll(samples: Sequence[dict[str, Any]]) -> list[str]:
    """The OSU text blocks of coll samples (metric time), then the closing line naming
    what has no OSU form."""
    blocks: dict[tuple, list[dict[str, Any]]] = {}
    left_out: set[str] = set()
    for s in samples:
        prm = s["params"]
        if s["metric"] != "time" or "collective" not in prm:
            continue
        if prm["collective"] not in OSU_COLLECTIVES:
            left_out.add(f"MPI_{prm['collective'].capitalize()} (no OSU program)")
        elif prm["algorithm"] not in OSU_ALGORITHMS:
            left_out.add(f"{prm['collective']} {prm['algorithm']}")
        else:
            blocks.setdefault(_block_key(s), []).append(s)
    out = []
    for key in sorted(blocks):
        group = blocks[key]
        collective = key[1]
        osu = all(s["params"].get("protocol") == "osu" for s in group)
        lines = [
            title(collective),
            "# Datatype: MPI_CHAR."
            if key[2] and ("tool", "osu") in key[2]
            else "# Datatype: MPI_INT.",
            _described(group[0], len({s.get("launch_id") for s in group}), osu),
            header(collective),
        ]
        sizes: dict[int, list[dict[str, Any]]] = {}
        for s in group:
            sizes.setdefault(osu_size(s["params"]), []).append(s)
        for size in sorted(sizes):
            values = np.asarray([v for s in sizes[size] for v in s["values"]], dtype=float)
            iters = int(sizes[size][0]["params"].get("iterations", 0)) if osu else int(values.size)
            lines.append(
                row(collective, size, float(values.mean()), values.min(), values.max(), iters)
            )
        out.append("\n".join(lines) + "\n")
    if left_out:
        out.append(
            "# not exported (no OSU 7.4 program): "
            + ", ".join(sorted(left_out))
            + "; --format json, csv or markdown has them\n"
        )
    return out
