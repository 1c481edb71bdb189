"""The rounds of `run links`: a 1-factorization of the complete graph on N nodes.

Circle method (the same rule as bench/mpi/links.c `partner`, which measures by it; the
analysis checks recorded rounds against it): M = N rounded up to even, nodes 0..M-2 on a
circle and M-1 fixed. In round r (0 <= r < M-1) node r is paired with M-1 and nodes i, j
with i + j = 2r (mod M-1); M-1 is odd, so every pair {i, j} meets in exactly one round.
For odd N the slot M-1 is no node: the node it would meet is idle that round.
N-1 rounds of N/2 pairs for even N, N rounds of (N-1)/2 pairs for odd N.

Cost: O(N^2) to list (1,024 nodes: 523,776 pairs in about 0.3 s); `partner` is O(1).
"""

from __future__ import annotations

from collections.abc import Iterator


def rounds(n: int) -> int:
    """How many rounds N nodes need: N-1 (even N), N (odd N); 0 for fewer than 2."""
    if n < 2:
        return 0
    return n + (n & 1) - 1


def partner(node: int, r: int, n: int) -> int:
    """The node `node` meets in round r, or -1 when it is idle (odd N)."""
    m = n + (n & 1)
    fixed = m - 1
    if node == fixed:
        other = r
    elif node == r:
        other = fixed
    else:
        other = (2 * r - node) % fixed
    return -1 if other >= n else other


def round_pairs(r: int, n: int) -> list[tuple[int, int]]:
    """The pairs (a < b) of round r."""
    return [(a, b) for a in range(n) if (b := partner(a, r, n)) > a]


def schedule(n: int) -> Iterator[list[tuple[int, int]]]:
    """Every round's pairs, in order."""
    for r in range(rounds(n)):
        yield round_pairs(r, n)


def schedule_lines(n: int, lanes: int = 1) -> Iterator[str]:
    """The dry run's schedule, one line per round ('round 3: 0-6 1-5 2-4'); with lanes, each
    node pair is measured on every lane l (lane l of a with lane l of b) at once."""
    per = f" (each on {lanes} lanes at once)" if lanes > 1 else ""
    yield (
        f"schedule: {n} nodes, {rounds(n)} rounds, {n * (n - 1) // 2} node pairs{per}; "
        "every node in one pair per round" + ("" if n % 2 == 0 else ", one idle per round")
    )
    for r, pairs in enumerate(schedule(n)):
        yield f"round {r}: " + " ".join(f"{a}-{b}" for a, b in pairs)
