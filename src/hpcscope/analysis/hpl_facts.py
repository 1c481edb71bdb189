"""What an HPL row states in every view: N, NB, the P x Q grid and the LU's time, and
whether it was a --quick run, which is never the machine's HPL (suites/node_hpl.py plans
the run and says how N was chosen; issue 47)."""

from __future__ import annotations


def lu_seconds(n: int, gflops: float) -> float | None:
    """The LU's time, from HPL's own rate formula (HPL_pdtest: Gflops = (2/3 N^3 + 3/2 N^2)
    / time / 1e9), so it is exact for the value hpcc printed."""
    return (2 / 3 * n**3 + 1.5 * n**2) / (gflops * 1e9) if gflops > 0 and n > 0 else None


def hpl_facts(params: dict, best_gflops: float, tags: dict | None) -> dict:
    """What an HPL row states in every view: N, NB, the P x Q grid, the LU's seconds at the
    best rate, and whether it was the --quick run (tag quick: N from a 0.25 s budget)."""
    n = params.get("n")
    return {
        "n": n,
        "nb": params.get("nb"),
        "grid": params.get("grid"),
        "procs": params.get("threads"),
        "seconds": lu_seconds(n, best_gflops) if isinstance(n, int) else None,
        "quick": bool((tags or {}).get("quick")),
    }


def label(facts: dict) -> str:
    """'HPL (N = 20480, NB = 128, P x Q = 1 x 2, 64.2 s)'; a --quick run's: 'quick HPL
    (N = 3072, NB = 128, P x Q = 1 x 2, 0.25 s), not the machine's HPL'."""
    parts = [f"N = {facts['n']}"] if facts.get("n") else []
    if facts.get("nb"):
        parts.append(f"NB = {facts['nb']}")
    if facts.get("grid"):
        parts.append("P x Q = " + str(facts["grid"]).replace("x", " x "))
    if facts.get("seconds") is not None:
        parts.append(
            f"{facts['seconds']:.2g} s" if facts["seconds"] < 10 else f"{facts['seconds']:.0f} s"
        )
    inside = f" ({', '.join(parts)})" if parts else ""
    if facts.get("quick"):
        return f"quick HPL{inside}, not the machine's HPL"
    return f"HPL{inside}"
