"""The p2p suite: OSU-style latency and bandwidth between two ranks at each placement.

Repeats are separate launches (Hoefler & Belli: several launches, not one), ordered
round-robin over MPI libraries and placements so that a slow phase of a shared machine
spreads over all configurations instead of biasing one.
"""

from __future__ import annotations

import re

from hpcscope.plan import placement as placement_mod
from hpcscope.plan.job import Job
from hpcscope.results.cells import IMB_P2P_TESTS
from hpcscope.suites import p2p_adaptive, p2p_osu
from hpcscope.suites.base import Note, PlanContext, SuitePlan

# OSU's four (the default) and IMB-MPI1's PingPing, Sendrecv, Exchange (opt-in, so a
# default run and the demo keep their time; bench/mpi/p2p.c states each definition)
DEFAULT_TESTS = ("latency", "bw", "bibw", "mbw_mr")
IMB_TESTS = IMB_P2P_TESTS
TESTS = DEFAULT_TESTS + IMB_TESTS
PROTOCOLS = ("hpcscope", "osu")


def check_protocol(value: str | None) -> str:
    """hpcscope (default) or osu; ValueError naming the value otherwise."""
    value = value or "hpcscope"
    if value not in PROTOCOLS:
        raise ValueError(
            f"--protocol '{value}': choose hpcscope (blocks timed back to back, the "
            "default) or osu (OSU 7.4's loops)"
        )
    return value


def protocol_args(protocol: str) -> list[str]:
    """p2p options of one launch. hpcscope: sizes in a random order drawn per launch
    (ReproMPI's rule; docs/osu.md "Why hpcscope differs from OSU"); --seed 0 lets the program
    draw the seed, which its meta record echoes (so a launch can be repeated), and keeps
    every repeat's command line the same (one SLURM job array per placement); osu: OSU's
    loop, sizes ascending."""
    if protocol == "osu":
        return ["--protocol", "osu"]
    return ["--order", "random", "--seed", "0"]


DEFAULT_REPEAT, QUICK_REPEAT = 5, 3
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:i?B)?\s*$")


def parse_size(text: str) -> int:
    match = _SIZE.match(text)
    if not match:
        raise ValueError(
            f"'{text}' is not a size; write bytes with an optional K, M or G "
            "(binary) suffix, e.g. 0, 64, 16K, 4M"
        )
    if len(match.group(1)) > 15:  # beyond a float's exact integers, and any message
        raise ValueError(f"'{text}' is too large for a message size; at most 2G")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


MAX_MESSAGE = 2**31 - 1  # the p2p program sends bytes with an int count


def parse_size_range(text: str) -> tuple[int, int]:
    """'0:4M' -> (0, 4194304); 'MIN:MAX' with MIN <= MAX."""
    parts = text.split(":")
    if len(parts) != 2:
        raise ValueError(f"size range '{text}' must be MIN:MAX, e.g. 0:4M or 8:64K")
    low, high = parse_size(parts[0]), parse_size(parts[1])
    if low > high:
        raise ValueError(f"size range '{text}': MIN ({low}) is larger than MAX ({high})")
    if high > MAX_MESSAGE:
        raise ValueError(
            f"size range '{text}': MAX {high} bytes does not fit an MPI count of bytes "
            f"(at most {MAX_MESSAGE}, just under 2 GiB); lower it, e.g. 0:1G"
        )
    return low, high


def plan(ctx: PlanContext, opts: dict) -> SuitePlan:
    """opts: placements (list|None), cpus (list|None), sizes 'MIN:MAX', repeat (int|None),
    tests (list|None), validate (bool), quick (bool), protocol ('hpcscope'|'osu'),
    osu_dir (str|None: also run the user's OSU programs, tagged tool=osu), precision
    (fraction|None: the default's; 0: fixed counts) and budget_s (float|None), see
    p2p_adaptive."""
    low, high = parse_size_range(opts.get("sizes") or "0:4M")
    protocol = check_protocol(opts.get("protocol"))
    if opts.get("cpus") is not None and len(opts["cpus"]) != 2:
        raise ValueError(
            f"--cpus {','.join(map(str, opts['cpus']))}: p2p runs two ranks, so give two "
            "CPUs, one per rank, e.g. --cpus 0,7"
        )
    tests = opts.get("tests") or list(DEFAULT_TESTS)
    if tests == ["all"]:
        tests = list(TESTS)
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise ValueError(f"unknown p2p test(s) {unknown}; choose from {', '.join(TESTS)}, or all")
    imb = [t for t in tests if t in IMB_TESTS]
    if imb and protocol == "osu":
        raise ValueError(
            f"--tests {','.join(imb)}: IMB-MPI1's patterns have no OSU loop to reproduce; "
            "drop --protocol osu or run them without it"
        )
    quick = bool(opts.get("quick"))
    adaptive = p2p_adaptive.settings(opts, quick)
    if adaptive:  # a backend that runs jobs now gets the later rounds from follow_up;
        # --repeat N asks for N launches, all planned (the blocks still adapt)
        osu_repeat = adaptive["min_launches"]
        repeat = 1 if ctx.adds_rounds and not opts.get("repeat") else osu_repeat
    else:
        repeat = osu_repeat = opts.get("repeat") or (QUICK_REPEAT if quick else DEFAULT_REPEAT)
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    classes = opts.get("placements") or list(placement_mod.PLACEMENTS)
    placements = placement_mod.plan_placements(
        ctx.topology, classes, opts.get("cpus"), nodes_available=ctx.nodes_available
    )
    result = SuitePlan()
    osu_programs: dict = {}
    if opts.get("osu_dir"):
        osu_programs, missing = p2p_osu.programs(
            opts["osu_dir"],
            [t for t in tests if t not in IMB_TESTS],
            ctx.mpis,
            check=ctx.nodes_available == 1,
        )
        result.notes += [Note("skipped", m, {}) for m in missing]
        result.notes += [
            Note("skipped", f"--osu-dir: OSU has no counterpart of IMB-MPI1's {t}", {}) for t in imb
        ]
    usable = []
    for place in placements:
        if place.skipped:
            result.notes.append(
                Note(
                    "skipped", f"placement {place.name}: {place.skipped}", {"placement": place.name}
                )
            )
        else:
            usable.append(place)
    precision_args: list[str] = []
    if adaptive:
        configurations = len(ctx.mpis) * len(usable)
        size_ms = p2p_adaptive.size_budget_ms(
            adaptive, configurations, p2p_adaptive.sizes_per_launch(tests, low, high)
        )
        precision_args = [
            "--precision",
            str(adaptive["target"]),
            "--size-budget-ms",
            f"{size_ms:.1f}",
        ]
        result.notes.append(
            Note("precision", p2p_adaptive.plan_text(adaptive, configurations, size_ms), adaptive)
        )
    for rep in range(1, max(repeat, osu_repeat) + 1):
        for mpi in ctx.mpis if rep <= repeat else []:
            program = [
                str(ctx.binary("p2p", mpi)),
                "--tests",
                ",".join(tests),
                "--min-size",
                str(low),
                "--max-size",
                str(high),
            ]
            if quick and not adaptive:
                program += ["--scale-iterations", "0.2"]
            program += precision_args
            if opts.get("validate"):
                program.append("--validate")
            tags = {"mpi": mpi.flavor, "mpi_version": mpi.version}
            if protocol == "osu":
                tags["protocol"] = "osu"  # default-protocol tags stay as before: same cells
            for place in usable:
                result.jobs.append(
                    Job(
                        suite="p2p",
                        name=f"{mpi.flavor}/{place.name}/r{rep}",
                        program=program + protocol_args(protocol),
                        mpi=mpi,
                        ranks=2,
                        cpus=place.cpus,
                        nodes=place.nodes,
                        tags={**tags, "placement": place.name, "repeat": rep},
                        timeout_s=900,
                    )
                )
        for test, (path, mpi) in osu_programs.items() if rep <= osu_repeat else []:
            for place in usable:
                result.jobs.append(
                    Job(
                        suite="p2p",
                        name=f"osu/{test}/{mpi.flavor}/{place.name}/r{rep}",
                        program=[str(path), *p2p_osu.program_args(low, high)],
                        mpi=mpi,
                        ranks=2,
                        cpus=place.cpus or None,
                        nodes=place.nodes,
                        launcher_binding=place.name == placement_mod.DEFAULT,
                        tags={
                            "mpi": mpi.flavor,
                            "mpi_version": mpi.version,
                            "tool": "osu",
                            "placement": place.name,
                            "repeat": rep,
                        },
                        timeout_s=900,
                        output="osu",
                    )
                )
    return result


follow_up = p2p_adaptive.follow_up  # more launches where cells still miss the target


def outputs(store, run_id: int, out_dir):
    """Latency/bandwidth figures (PNG+SVG) and the size x placement tables."""
    from hpcscope import safe_write
    from hpcscope.figures import p2p as p2p_figures
    from hpcscope.results import export

    samples = store.samples(run_id, benchmark="p2p")
    written = p2p_figures.write(samples, out_dir)
    for name, text in (
        ("p2p_table.md", export.to_markdown(samples)),
        ("p2p_samples.csv", export.to_csv(samples)),
    ):
        safe_write.write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written
