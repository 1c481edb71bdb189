"""p2p to a precision: the launch level (issue 29; the block level is in bench/mpi/p2p.c).

The plan's first rounds (MIN_LAUNCHES launches of every MPI and placement) run every
size, each size adding blocks until its in-launch CI meets the target or its share of
the budget is spent (`--size-budget-ms`). Then, after every round, `follow_up` judges
every cell (results/precision.py) and plans one more launch for each configuration that
has cells still missing the target, measuring only those tests and sizes (`--tests`,
`--sizes`), until every cell meets it, MAX_LAUNCHES are reached or the budget would be
overrun; a full round runs for every configuration or for none, so all have as many
launches. Sizes keep their random order within a launch and the extra launches run
round-robin over the configurations, so adding launches introduces no order effect.

Budget: BLOCK_SHARE of it is planned for the first rounds' blocks, spread evenly over
their sizes (a launch's start-up, warm-ups and the first 6 blocks of its large sizes come
on top: 1.5-2.5 s a launch here); the rest, less RESERVE_S for the figures and tables,
goes to extra launches, whose cost is estimated from the round before (seconds per
measured size, times SAFETY) so that the run ends inside its budget. Where every cell still short of the target is so
because its launches differ (the launch level), an extra launch takes the fewest blocks
per size (6): there the next launch median is what narrows the interval, not a longer
launch, and on a machine whose launches differ (this project's 2-vCPU guest: by 2-9 %
at small sizes) that buys about twice as many launches.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import datetime

from hpcscope.plan.job import Job
from hpcscope.results.cells import NAMED_P2P_TESTS, group_cells
from hpcscope.results.precision import cell_precision

MIN_LAUNCHES, QUICK_MIN_LAUNCHES = 3, 2
# Launches allowed where cells still miss the target: the budget is what ends a run on a
# machine whose launches differ (10 launches took 118 s of a 300 s budget here).
MAX_LAUNCHES, QUICK_MAX_LAUNCHES = 30, 10
DEFAULT_PRECISION, QUICK_PRECISION = 0.01, 0.02
DEFAULT_BUDGET_S, QUICK_BUDGET_S = 600.0, 25.0  # --quick: 2 full rounds of 4 configurations here
BLOCK_SHARE = 0.3
SAFETY = 1.5
RESERVE_S = 3.0  # of the budget, for what follows the launches: figures, tables (2-3 s here)
LAUNCH_START_S = 0.5  # mpirun start and the meta record, per launch (measured here: 0.3-0.6 s)
FEWEST_BLOCKS_MS = "0.001"  # a size budget spent at the first look: 6 blocks
MAX_SIZE_BUDGET_MS = 1000.0
METRIC_TEST = {
    "latency": "latency",
    "bandwidth": "bw",
    "bibandwidth": "bibw",
    "message_rate": "mbw_mr",
}


def settings(opts: dict, quick: bool) -> dict | None:
    """The adaptive settings of a p2p run ({target, budget_s, min_launches,
    max_launches}), or None for fixed counts (the default, --precision 0, --protocol
    osu). Fixed counts are the default since issue 47: measured side by side on the
    2-vCPU guest the adaptive runs took 1.63x the fixed runs' time and met 2 % in fewer
    cells; under load they overran a 25 s budget 3x and ended with 1-2 launches a
    configuration, whose intervals held another run's median in 59-82 % of cells
    (docs/osu.md, benchmarks/precision_cost). --budget alone asks for the adaptive
    protocol at the default target."""
    target = opts.get("precision")
    if target is None:
        if not opts.get("budget_s"):
            return None
        target = QUICK_PRECISION if quick else DEFAULT_PRECISION
    if target == 0 or opts.get("protocol") == "osu":
        return None
    budget = opts.get("budget_s") or (QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    fixed = opts.get("repeat")  # --repeat N: exactly N launches, the blocks still adapt
    return {
        "target": target,
        "budget_s": budget,
        "min_launches": fixed or (QUICK_MIN_LAUNCHES if quick else MIN_LAUNCHES),
        "max_launches": fixed or (QUICK_MAX_LAUNCHES if quick else MAX_LAUNCHES),
    }


OSU_FIXED = (
    "--protocol osu keeps OSU's fixed counts; drop --precision/--budget, or use the "
    "hpcscope protocol"
)


def refuse_with_osu(protocol: str | None, precision: float | None, budget_s: float | None):
    """ValueError (exit 2) for --precision or --budget with --protocol osu (p2p, rma, nbc:
    OSU's loops run OSU's counts; coll says it in suites/coll_osu.py)."""
    if protocol == "osu" and (precision or budget_s):
        raise ValueError(OSU_FIXED)


def sizes_per_launch(tests: list[str], low: int, high: int) -> int:
    """How many (test, size) a full launch measures: powers of two from max(low, 1) to
    high, and 0 B for the tests that have it (latency, mbw_mr) when low is 0."""
    powers = sum(1 for e in range(32) if max(low, 1) <= 1 << e <= high)
    has_zero = {"latency", "mbw_mr", "pingping", "sendrecv", "exchange", "latency_persistent"}
    has_zero |= {"latency_mt", "latency_mp", "multi_lat"}
    zero = sum(1 for t in tests if t in has_zero) if low == 0 else 0
    return powers * len(tests) + zero


def plan_text(adaptive: dict, configurations: int, size_ms: float) -> str:
    """What the planner aims for, said before the run."""
    each = (
        f"{adaptive['min_launches']} launch(es) each"
        if adaptive["min_launches"] == adaptive["max_launches"]
        else f"{adaptive['min_launches']} launches each, up to {adaptive['max_launches']} "
        "where a cell still misses it"
    )
    return (
        f"target {adaptive['target']:.1%} (half-width of each median's 95 % interval over "
        "launches), "
        f"budget {adaptive['budget_s']:.0f} s: {configurations} configuration(s), {each}; "
        f"each size adds blocks for at most {size_ms:.0f} ms per launch"
    )


def size_budget_ms(
    adaptive: dict, configurations: int, sizes_per_launch: int, share: float = BLOCK_SHARE
) -> float:
    """Each size's share of the first rounds: `share` of the budget (p2p: BLOCK_SHARE, the
    rest for added launches; rma, which adds none: suites/rma.py), less the launches'
    start-up, over every size of every planned launch; at most MAX_SIZE_BUDGET_MS (a run
    of one size and one launch would otherwise spend a third of its budget in one go,
    where another launch tells more)."""
    launches = adaptive["min_launches"] * configurations
    usable = share * adaptive["budget_s"] - launches * LAUNCH_START_S
    share = max(usable, 0.0) * 1e3 / max(launches * sizes_per_launch, 1)
    return min(share, MAX_SIZE_BUDGET_MS)


def _seconds(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp).timestamp() if stamp else None


def _costs(store, run_id: int, recent: int) -> tuple[float, float]:
    """From this run's finished launches: seconds of the longest one (a full launch), and
    per measured size in the `recent` last ones (their time less start-up over their
    sizes, averaged: the cost of the round just run, whose settings the next repeats)."""
    took: dict[int, float] = {}
    for launch in store.launches(run_id):
        start, end = _seconds(launch.get("started")), _seconds(launch.get("finished"))
        if start is not None and end is not None:
            took[launch["id"]] = end - start
    counts: dict[int, int] = {}
    for s in store.samples(run_id, benchmark="p2p"):
        counts[s["launch_id"]] = counts.get(s["launch_id"], 0) + 1
    latest = sorted(k for k in counts if k in took)[-recent:]
    per_size = [max(took[k] - LAUNCH_START_S, 0.0) / counts[k] for k in latest]
    full = max(took.values(), default=LAUNCH_START_S)
    return full, (sum(per_size) / len(per_size) if per_size else 1.0)


def _configuration(tags: dict) -> tuple[str, str]:
    """(mpi, placement); multi_lat's launches (tag pairs) and the fan tests' (tag fan) are
    configurations of their own."""
    place = tags.get("placement", "")
    if tags.get("pairs"):
        place = f"{place}-{tags['pairs']}pairs"
    elif tags.get("fan"):
        place = f"{place}-{tags['fan']}fan"
    return tags.get("mpi", ""), place


def missing(
    store, run_id: int, target: float
) -> tuple[dict[tuple[str, str], dict[str, set[int]]], set[tuple[str, str]]]:
    """{(mpi, placement): {test: sizes}} of the cells that miss the target, and the
    configurations among them where most of those cells miss at the samples level (more
    blocks in a launch help them; at the launches level only more launches do)."""
    out: dict[tuple[str, str], dict[str, set[int]]] = {}
    levels: dict[tuple[str, str], list[str]] = {}
    samples = [
        s
        for s in store.samples(run_id, benchmark="p2p")
        if (s.get("tags") or {}).get("tool") != "osu"
    ]
    for key, per_launch in group_cells(samples).items():
        _, metric, _, tags_json, params_json = key
        cell = cell_precision(per_launch, target)
        params = json.loads(params_json)
        # IMB's patterns (metric time) and OSU's other two-rank tests (the four's
        # metrics) name their test in params
        named = params.get("test") if params.get("test") in NAMED_P2P_TESTS else None
        test = named or METRIC_TEST.get(metric)
        if test is None or cell.met:
            continue
        config = _configuration(json.loads(tags_json))
        out.setdefault(config, {}).setdefault(test, set()).add(int(params.get("bytes")))
        levels.setdefault(config, []).append(cell.level)
    blocks = {c for c, got in levels.items() if 2 * got.count("samples") > len(got)}
    return out, blocks


def _with_cells(
    program: list[str], tests: list[str], sizes: list[int], fewest_blocks: bool
) -> list[str]:
    """The launch's command line measuring only these tests and sizes; `fewest_blocks`:
    each size stops at its first look (6 blocks), for cells whose launches differ, where
    a launch's own precision adds little and another launch is what counts."""
    out = list(program)
    out[out.index("--tests") + 1] = ",".join(tests)
    if fewest_blocks and "--size-budget-ms" in out:
        out[out.index("--size-budget-ms") + 1] = FEWEST_BLOCKS_MS
    return out + ["--sizes", ",".join(map(str, sizes))]


def follow_up(store, run_id: int, jobs: list[Job], started: float) -> list[Job]:
    """The next round, trimmed to the budget: first full launches of every configuration
    up to min_launches, then one launch per configuration with cells below the target
    (only those tests and sizes). [] when the run is done; a note then says why."""
    opts = store.run(run_id).get("options") or {}
    adaptive = settings(opts, bool(opts.get("quick")))
    if not adaptive:
        return []
    launches: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        if job.suite == "p2p" and job.tags.get("tool") != "osu":
            launches.setdefault(_configuration(job.tags), []).append(job)
    left = adaptive["budget_s"] - RESERVE_S - (time.monotonic() - started)
    full_cost, per_size = _costs(store, run_id, recent=len(launches))
    todo, need_blocks = missing(store, run_id, adaptive["target"])
    Cells = dict[str, set[int]] | None  # None: a full launch
    rounds: list[tuple[tuple[str, str], Cells, float]] = [
        (config, None, full_cost)
        for config, done in launches.items()
        if len(done) < adaptive["min_launches"]
    ] or [
        (config, cells, SAFETY * (LAUNCH_START_S + per_size * sum(map(len, cells.values()))))
        for config, cells in todo.items()
        if len(launches.get(config, [])) < adaptive["max_launches"]
    ]
    wanted = bool(rounds)
    if rounds and rounds[0][1] is None and sum(cost for _, _, cost in rounds) > left:
        rounds = []  # a full round for every configuration or none: all get as many launches
    more: list[Job] = []
    for config, cells, cost in rounds:
        if cost > left:
            continue
        left -= cost
        base = launches[config][0]
        repeat = len(launches[config]) + 1
        program = base.program
        if cells:
            sizes = sorted(set().union(*cells.values()))
            program = _with_cells(program, sorted(cells), sizes, config not in need_blocks)
        more.append(
            replace(
                base,
                name=f"{config[0]}/{config[1]}/r{repeat}",
                program=program,
                tags={**base.tags, "repeat": repeat},
            )
        )
    if not more:
        _note_stop(store, run_id, adaptive, todo, wanted)
    return more


def _note_stop(store, run_id: int, adaptive: dict, todo: dict, wanted: bool) -> None:
    """The run-level end of a precision run, as a note (show, report): met, launches or
    budget, with the number of cells still below the target."""
    stop = "budget" if wanted else "met" if not todo else "launches"
    cells = sum(len(sizes) for tests in todo.values() for sizes in tests.values())
    why = {
        "met": "every cell met the precision target",
        "launches": f"{cells} cell(s) below the target after the most launches allowed",
        "budget": f"{cells} cell(s) below the target when the budget ran out"
        + ("" if cells else f" before {adaptive['min_launches']} launches of each configuration"),
    }[stop]
    store.add_note(
        run_id,
        "precision",
        f"target {adaptive['target']:.1%} in {adaptive['budget_s']:.0f} s: {why}",
        {"precision_stop": stop, "cells_missed": cells},
    )
