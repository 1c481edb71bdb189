"""coll and lanes to a precision (issue 29): the repetitions adapt within each launch.

The programs (bench/mpi/coll_repeat.h) repeat each (collective, algorithm, count) or
(lanes, count) until the 95 % CI of its median (of the slowest-rank times) is within the
target, the launch's time budget shared out so far is spent, or the cap is reached, and
write the stop and the half-width beside the sample (results/precision.py reads them).
Here the plan picks the target, the cap and each launch's budget, and says so in a note.

Launches are not added (p2p does that, suites/p2p_adaptive.py): coll and lanes run
--repeat launches (default 1), their verdicts compare algorithms on the repetitions of
one launch and on launch medians across launches as before.

Kept fixed: an explicit --repetitions without --precision (exactly that many), the
simulator's defaults (simulated times repeat exactly; launch/sim_options.py), and
--precision 0. With --precision, --repetitions is the cap.
"""

from __future__ import annotations

from hpcscope.suites.base import Note

DEFAULT_PRECISION, QUICK_PRECISION = 0.01, 0.02
DEFAULT_BUDGET_S, QUICK_BUDGET_S = 300.0, 10.0
# Of the budget, what the timed repetitions may take; start-up, validation, warm-ups and
# the probe calls take the rest (a --quick coll launch here: 2-3 s of them).
REPETITION_SHARE = 0.5
CAP_FACTOR = 50  # the cap: 50x the fixed count (100, --quick 20)


def settings(opts: dict, quick: bool, fixed_reps: int) -> dict | None:
    """{target, budget_s, cap} of a coll or lanes run, or None for a fixed count.
    `fixed_reps`: the fixed count this run would use (the cap's base)."""
    target = opts.get("precision")
    if target == 0 or (target is None and opts.get("repetitions")):
        return None
    return {
        "target": target or (QUICK_PRECISION if quick else DEFAULT_PRECISION),
        "budget_s": opts.get("budget_s") or (QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S),
        "cap": opts.get("repetitions") or CAP_FACTOR * fixed_reps,
    }


def program_args(adaptive: dict, launches: int) -> list[str]:
    """The programs' --precision and --time-budget (this launch's share)."""
    share = REPETITION_SHARE * adaptive["budget_s"] / max(launches, 1)
    return ["--precision", f"{adaptive['target']:g}", "--time-budget", f"{share:.3f}"]


def plan_note(adaptive: dict, launches: int, suite: str) -> Note:
    """What the plan aims for, said before the run (results/precision.target_of reads
    its data)."""
    share = REPETITION_SHARE * adaptive["budget_s"] / max(launches, 1)
    return Note(
        "precision",
        f"{suite}: target {adaptive['target']:.1%} (95 % CI half-width of each median), "
        f"budget {adaptive['budget_s']:.0f} s: each measurement repeats until it meets "
        f"the target, at least 10 and at most {adaptive['cap']} times, the timed "
        f"repetitions of each of {launches} launch(es) within {share:.1f} s",
        adaptive,
    )
