"""The node suite to a precision (issue 29): our programs' repetitions adapt per point.

Each program (cpu, mem, disk, net: bench/node/node_repeat.h) repeats every point until
the 95 % CI of its median is within the target, its share of the program's budget is
spent, or CAP repetitions are done, and writes the stop and the half-width beside the
sample (results/precision.py reads them, as for coll). Here the plan picks the target,
each program's budget (the run's, shared out by SHARES over the parts that run) and the
length of one repetition, and says so in a note.

A precision needs 6 to 10 repetitions a point (an interval from 6, "met" from 10),
where the fixed counts take 3-5. So under a target a repetition is shorter wherever its length
is free (the pyperf way: many short samples, their spread measured, rather than a few
long ones): REPETITION_S per part. STREAM passes and block sweeps keep their length: it
is set by the arrays.

Kept fixed: --precision 0 (today's counts: --quick 3-5 a point, full 5-10). The
reference tools (likwid-bench, hpcc, fio, iperf3) always run their fixed counts, as their
users run them, and come on top of the budget.
"""

from __future__ import annotations

from hpcscope.suites.base import Note

DEFAULT_PRECISION, QUICK_PRECISION = 0.01, 0.02
DEFAULT_BUDGET_S, QUICK_BUDGET_S = 600.0, 30.0
CAP = 50  # timed repetitions of a point at most
# Of the budget, each part's share (of the parts that run): mem has the most points.
SHARES = {"cpu": 0.25, "mem": 0.45, "disk": 0.15, "net": 0.15}
# Seconds of one repetition under a target, (--quick, full): cpu kernels, disk and net
# points, one pointer-chase repetition (fixed counts: 0.1/0.2, 0.5/1, 0.5/1, 0.02/0.05).
REPETITION_S = {
    "cpu": (0.02, 0.05),
    "disk": (0.1, 0.25),
    "net": (0.1, 0.25),
    "chase": (0.005, 0.01),
}


def settings(opts: dict, quick: bool) -> dict | None:
    """{target, budget_s} of a node run, or None for the fixed counts (--precision 0)."""
    target = opts.get("precision")
    if target == 0:
        return None
    return {
        "target": target or (QUICK_PRECISION if quick else DEFAULT_PRECISION),
        "budget_s": opts.get("budget_s") or (QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S),
        "cap": CAP,
    }


def repetition_s(part: str, quick: bool) -> float:
    return REPETITION_S[part][0 if quick else 1]


def budget_of(adaptive: dict, part: str, parts: dict[str, bool]) -> float:
    """The seconds of `part`'s repetitions: its share of the budget among the parts
    that run."""
    total = sum(SHARES[p] for p, on in parts.items() if on) or 1.0
    return adaptive["budget_s"] * SHARES[part] / total


def program_args(adaptive: dict, part: str, parts: dict[str, bool]) -> list[str]:
    """The program's --precision and --time-budget."""
    return [
        f"--precision={adaptive['target']:g}",
        f"--time-budget={budget_of(adaptive, part, parts):.3f}",
    ]


def plan_note(adaptive: dict, parts: dict[str, bool]) -> Note:
    """What the plan aims for, said before the run (results/precision.target_of reads
    its data)."""
    shares = ", ".join(
        f"{p} {budget_of(adaptive, p, parts):.0f} s" for p, on in parts.items() if on
    )
    return Note(
        "precision",
        f"node: target {adaptive['target']:.1%} (95 % CI half-width of each median), "
        f"budget {adaptive['budget_s']:.0f} s ({shares}): each point repeats until it "
        f"meets the target, at least 6 and at most {adaptive['cap']} times; the "
        "reference tools, and our short runs right before and after likwid-bench's STREAM "
        "and iperf3, run their fixed counts on top",
        adaptive,
    )
