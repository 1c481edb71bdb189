"""Launches split by the host moving the ranks' CPUs (results/cpu_pair.py): found where
the results follow the cache-line time, not where the time alone wanders or chance would
give as many cells; said in show, the report's observations and at the top
(analysis/cpu_pair.py), and as the stop reason of the cells that follow."""

from __future__ import annotations

import io
import json

import numpy as np
from rich.console import Console
from test_show import _launch

from hpcscope.analysis import cpu_pair, highlights
from hpcscope.analysis.observations import Observation
from hpcscope.report.show import print_run
from hpcscope.results import precision
from hpcscope.results.cpu_pair import pair_moves
from hpcscope.results.store import Store

TAGS = {"mpi": "openmpi", "placement": "core"}
SMALL = [0, 1, 8, 64, 512, 1024]  # follow the line: 0.12 us near, 0.37 us far (AMD guest)
LARGE = [1 << 20, 1 << 22]  # memory-bound: the same in both states


def latency(size: int, far: bool, rng: np.random.Generator, follows: bool = True) -> list[float]:
    centre = (0.37 if far and follows else 0.12) + size * 1e-4
    return list(centre * (1 + 0.01 * rng.standard_normal(20)))


def run_of(lines_ns: list[float], follows: bool = True, seed: int = 1) -> tuple[list, list]:
    """Launches with these cache-line times; small sizes follow the line when `follows`."""
    rng = np.random.default_rng(seed)
    launches, samples = [], []
    for i, ns in enumerate(lines_ns, start=1):
        launches.append(
            {"id": i, "tags": {**TAGS, "repeat": i}, "meta": {"cpu_pair": {"cacheline_ns": ns}}}
        )
        for size in SMALL + LARGE:
            samples.append(
                {
                    "launch_id": i,
                    "benchmark": "p2p",
                    "metric": "latency",
                    "unit": "us",
                    "params": {"bytes": size, "test": "latency"},
                    "tags": {**TAGS, "repeat": i},
                    "values": latency(size, ns > 100 and size in SMALL, rng, follows),
                }
            )
    return samples, launches


def test_launches_whose_results_follow_the_cache_line_are_one_move():
    samples, launches = run_of([50, 55, 205, 48, 198, 62])
    (move,) = pair_moves(samples, launches)
    assert move.tags == TAGS
    assert move.fast == [48, 50, 55, 62] and move.slow == [198, 205]
    assert sorted(size for _, size, _, _ in move.following) == SMALL
    assert move.cells == len(SMALL + LARGE)
    text = cpu_pair.text(move)
    assert "48-62 ns in 4 launches and 198-205 ns in 2" in text
    assert f"{len(SMALL)} of {len(SMALL + LARGE)} cells" in text
    assert "120 ns vs 370 ns" in text  # times scaled (formatting.format_number)


def test_a_cache_line_that_wanders_within_one_state_is_no_move():
    # 55-180 ns in small steps (an Intel guest's slow state): no ratio of 2 between neighbours
    samples, launches = run_of([55, 70, 90, 120, 150, 180])
    assert pair_moves(samples, launches) == []


def test_two_states_the_results_do_not_follow_are_no_move():
    samples, launches = run_of([20, 22, 60, 65, 21, 70], follows=False)
    assert pair_moves(samples, launches) == []


def test_one_odd_launch_needs_more_cells_than_chance_gives():
    # 1 launch of 15 in the other state: a cell separates by chance with p = 1/15; two of
    # eight cells following is what chance gives, not a move
    samples, launches = run_of([50] * 14 + [200], follows=False)
    odd = [s for s in samples if s["launch_id"] == 15 and s["params"]["bytes"] in (0, 1)]
    for s in odd:
        s["values"] = [v * 1.5 for v in s["values"]]
    assert pair_moves(samples, launches) == []
    for s in samples:  # all six small sizes: a move (6 >= 3 x 8/15)
        if s["launch_id"] == 15 and s["params"]["bytes"] in SMALL:
            s["values"] = [v * 1.5 for v in s["values"]]
    assert len(pair_moves(samples, launches)) == 1


def test_a_move_shows_with_two_or_three_launches_as_quick_runs_have():
    """Issue 47: a quick run's configuration has 2-3 launches; the old bar (3x the cells
    times 1 / C(a + b, a)) asked for 1.5x the cells with one launch in each state, so
    two of three configurations with a move said nothing."""
    for lines in ([50, 205], [50, 205, 48], [205, 50, 198]):
        samples, launches = run_of(lines)
        (move,) = pair_moves(samples, launches)
        assert sorted(size for _, size, _, _ in move.following) == SMALL
        slow = [k for k, ns in enumerate(lines, start=1) if ns > 100]
        assert move.slow_ids == slow


def test_two_launches_apart_in_both_directions_are_no_move():
    # the slow-line launch faster at half the small sizes, slower at the other half:
    # following and opposing alike, as when the state does not matter
    samples, launches = run_of([50, 205], follows=False)
    for s in samples:
        if s["params"]["bytes"] in SMALL:
            up = (s["launch_id"] == 2) == (SMALL.index(s["params"]["bytes"]) % 2 == 0)
            s["values"] = [v * (1.5 if up else 1.0) for v in s["values"]]
    assert pair_moves(samples, launches) == []


def test_the_move_replaces_its_curves_launches_disagree_highlight():
    samples, launches = run_of([50, 55, 205, 48, 198, 62])
    (move,) = cpu_pair.observations(samples, launches)

    def unstable(subject: str) -> Observation:
        numbers = {"max_spread": 2.0, "max_spread_at": 8, "sizes": [8]}
        return Observation("unstable", "", numbers, "warning", subject)

    found = [(move, "p2p"), (unstable("openmpi core latency"), "p2p")]
    found.append((unstable("mpich core latency"), "p2p"))
    top = highlights.rank(found)
    assert top[0].text == move.text and top[0].tier == 0
    texts = " ".join(h.text for h in top)
    assert "mpich core latency: launches disagree" in texts
    assert "openmpi core latency: launches disagree" not in texts


def test_show_says_where_the_cpu_pair_moved(tmp_path):
    samples, launches = run_of([50, 55, 205, 48, 198, 62])
    store = Store(tmp_path / "s.db")
    run = store.create_run("p2p", host="n1")
    for launch in launches:
        records = [
            {
                "type": "sample",
                "metric": s["metric"],
                "unit": s["unit"],
                "params": s["params"],
                "values": s["values"],
                "warmups": 10,
            }
            for s in samples
            if s["launch_id"] == launch["id"]
        ]
        records.append(
            {
                "type": "cpu_pair",
                "cacheline_ns": launch["meta"]["cpu_pair"]["cacheline_ns"],
                "round_trips": 9,
            }
        )
        _launch(store, run, launch["tags"], records)
    store.finish_run(run, "ok")
    console = Console(width=100, record=True, file=io.StringIO())
    print_run(store, run, console)
    text = " ".join(console.export_text().split())
    assert "CPU pair: openmpi core: the ranks' CPUs moved during the run" in text


def test_the_cells_that_follow_a_move_say_so_as_their_stop():
    samples, launches = run_of([50, 55, 205, 48, 198, 62])
    summaries = [
        {
            "launch_id": s["launch_id"],
            "metric": "latency",
            "params": s["params"],
            "precision": {"stop": "budget"},
        }
        for s in samples
    ]
    run = {"notes": [{"kind": "precision", "text": "", "data": {"target": 0.01}}]}
    reasons = {
        json.loads(r.key[4])["bytes"]: r.reason
        for r in precision.judge(run, samples, summaries, launches)
    }
    assert {reasons[size] for size in SMALL} == {precision.CPU_PAIR_MOVED}
    assert {reasons[size] for size in LARGE} <= {"met", "budget"}
