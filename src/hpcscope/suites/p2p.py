"""The p2p suite: OSU-style latency and bandwidth between two ranks at each placement.

Repeats are separate launches (Hoefler & Belli: several launches, not one), ordered
round-robin over MPI libraries and placements so that a slow phase of a shared machine
spreads over all configurations instead of biasing one.
"""

from __future__ import annotations

import re

from hpcscope.plan import placement as placement_mod
from hpcscope.plan.job import Job
from hpcscope.plan.placement import Placement
from hpcscope.results.cells import IMB_P2P_TESTS, OSU_MORE_P2P_TESTS
from hpcscope.suites import osu_programs as p2p_osu
from hpcscope.suites import p2p_adaptive, p2p_fan, p2p_pairs
from hpcscope.suites.base import Note, PlanContext, SuitePlan

# OSU's four (the default) and IMB-MPI1's PingPing, Sendrecv, Exchange (opt-in, so a
# default run and the demo keep their time; bench/mpi/p2p.c states each definition)
DEFAULT_TESTS = ("latency", "bw", "bibw", "mbw_mr")
IMB_TESTS = IMB_P2P_TESTS
# OSU 7.4's persistent, multi-threaded and multi-process programs (opt-in as well)
OSU_MORE_TESTS = OSU_MORE_P2P_TESTS
TESTS = DEFAULT_TESTS + IMB_TESTS + OSU_MORE_TESTS  # multi_lat (p2p_pairs), bw_fan_* (p2p_fan)
# what each test needs beyond two ranks: refused (sim) or noted where it cannot run
THREADED, FORKED = "latency_mt", "latency_mp"
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


def parse_counts(text: str | None, option: str, default: tuple[int, int]) -> tuple[int, int]:
    """OSU's -t: 'N' (receiver side, the sender's default kept) or 'M:N' -> (M, N), each
    in 1..127 (OSU's MAX_NUM_THREADS/PROCESSES is exclusive)."""
    if not text:
        return default
    parts = text.split(":")
    try:
        counts = (default[0], int(parts[0])) if len(parts) == 1 else tuple(map(int, parts))
    except ValueError:
        counts = ()
    if len(counts) != 2 or not all(1 <= c <= 127 for c in counts):
        raise ValueError(
            f"{option} '{text}': give N or SENDER:RECEIVER counts in 1..127, as OSU's -t "
            f"(e.g. {option} {default[0]}:{default[1]})"
        )
    return counts[0], counts[1]


def count_args(tests: list[str], opts: dict) -> tuple[list[str], dict[str, list[str]]]:
    """The program's thread and process counts for the tests that use them, and OSU's
    own -t M:N per test for --osu-dir."""
    args: list[str] = []
    osu: dict[str, list[str]] = {}
    if THREADED in tests:
        sender, receiver = parse_counts(opts.get("threads"), "--threads", (1, 2))
        args += ["--threads", f"{sender}:{receiver}"]
        osu[THREADED] = ["-t", f"{sender}:{receiver}"]
    if FORKED in tests:
        sender, receiver = parse_counts(opts.get("processes"), "--processes", (2, 2))
        args += ["--processes", f"{sender}:{receiver}"]
        osu[FORKED] = ["-t", f"{sender}:{receiver}"]
    return args, osu


def without_unsupported(tests: list[str], mpis) -> tuple[list[str], list[Note]]:
    """The tests SimGrid SMPI cannot run, skipped there with the reason: it runs every
    simulated rank as a thread of one simulator process, so forking a rank (latency_mp)
    would copy the whole simulation (p2p.c refuses it), and its MPI_Init_thread provides
    MPI_THREAD_SINGLE (SimGrid 3.32: p2p.c's refusal, tests/test_p2p_osu_more.py), which
    latency_mt's threads cannot use. Elsewhere the library says: p2p.c asks for
    MPI_THREAD_MULTIPLE and a launch given less fails naming the level it got."""
    if not any(m.flavor == "smpi" for m in mpis):
        return tests, []
    why = {
        FORKED: "SimGrid SMPI runs every rank as a thread of one simulator process, and "
        "forking a rank would copy the whole simulation",
        THREADED: "SimGrid SMPI's MPI_Init_thread provides MPI_THREAD_SINGLE, and its "
        "threads need MPI_THREAD_MULTIPLE",
    }
    notes = [Note("skipped", f"{t} skipped: {why[t]}", {"test": t}) for t in tests if t in why]
    return [t for t in tests if t not in why], notes


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
    pairs (multi_lat), fan ('GROUPS:PPN', the fan tests),
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
    tests, unsupported = without_unsupported(tests, ctx.mpis)
    if not tests:
        raise ValueError(unsupported[0].text + "; choose other --tests")
    counts, osu_counts = count_args(tests, opts)  # bad --threads/--processes: refused here
    # multi_lat: 2 x --pairs ranks, launched on its own (p2p_pairs); the rest: 2 ranks
    pairs = p2p_pairs.parse_pairs(opts.get("pairs")) if p2p_pairs.MULTI in tests else 0
    if pairs > 1 and any(m.flavor == "smpi" for m in ctx.mpis):
        # the sim backend puts a p2p launch's ranks on hosts by its placement, for 2 ranks
        # (launch/sim.py planned_hosts, machine pair_hosts): more are not planned there
        why = (
            f"multi_lat skipped: {pairs} pairs are {2 * pairs} ranks, and --on sim places a "
            "p2p launch's two ranks by its placement; --pairs 1 runs there"
        )
        result_notes = [Note("skipped", why, {"test": p2p_pairs.MULTI})]
        pairs, tests = 0, [t for t in tests if t != p2p_pairs.MULTI]
    else:
        result_notes = []
    fan = [t for t in tests if t in p2p_fan.TESTS]
    two_rank = [t for t in tests if t != p2p_pairs.MULTI and t not in p2p_fan.TESTS]
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
    result.notes += unsupported + result_notes
    osu_programs: dict = {}
    if opts.get("osu_dir"):
        osu_programs, missing = p2p_osu.programs(
            opts["osu_dir"],
            [t for t in two_rank if t not in IMB_TESTS] + fan,
            ctx.mpis,
            check=ctx.nodes_available == 1,
        )
        result.notes += missing
        result.notes += [
            Note("skipped", f"--osu-dir: OSU has no counterpart of IMB-MPI1's {t}", {}) for t in imb
        ]
    usable = []
    for place in placements:
        if place.skipped and two_rank:  # the launches of 2N ranks say their own
            result.notes.append(
                Note(
                    "skipped", f"placement {place.name}: {place.skipped}", {"placement": place.name}
                )
            )
        elif not place.skipped:
            usable.append(place)
    pair_places = []
    if pairs:
        for place in p2p_pairs.placements(ctx.topology, classes, pairs, ctx.nodes_available):
            if place.skipped:
                why = f"multi_lat placement {place.name}: {place.skipped}"
                result.notes.append(Note("skipped", why, {"placement": place.name}))
            else:
                pair_places.append(place)
    # (test, placement, ranks, tag) of the OSU programs: the two-rank ones at every usable
    # placement, the fan programs at the node placement only (p2p_fan.launches)
    osu_places: list[tuple[str, Placement, int, dict[str, object]]] = [
        (t, p, 2, {}) for t in osu_programs if t not in p2p_fan.TESTS for p in usable
    ]
    # (placement, ranks, --tests and its options, tag) of the launches beside the two-rank
    # ones: multi_lat's pairs and the fan tests' groups
    groups: list[tuple[Placement, int, list[str], dict[str, object]]] = [
        (p, 2 * pairs, [p2p_pairs.MULTI], {"pairs": pairs}) for p in pair_places
    ]
    if fan:
        fan_launches, fan_osu, fan_notes = p2p_fan.launches(
            ctx, classes, fan, opts.get("fan"), osu_programs
        )
        groups += fan_launches
        osu_places += fan_osu
        result.notes += fan_notes
    # the launcher's placement of more ranks than hardware threads: run, oversubscribed
    # (as coll does), with the warning that its timings mean nothing
    crowded: dict[str, str] = {}
    for place, ranks, args, _ in groups:
        over = placement_mod.max_ranks_check(ctx.topology, ranks, place.nodes, True)
        if over and not place.cpus:
            crowded[f"{place.name}{args}"] = over
            result.notes.append(Note("warning", f"{args[0]} {place.name}: {over}", {}))
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
            rest = ["--min-size", str(low), "--max-size", str(high)]
            if quick and not adaptive:
                rest += ["--scale-iterations", "0.2"]
            rest += precision_args
            if opts.get("validate"):
                rest.append("--validate")
            binary = str(ctx.binary("p2p", mpi))
            program = [binary, "--tests", ",".join(two_rank), *rest, *counts]
            tags = {"mpi": mpi.flavor, "mpi_version": mpi.version}
            if protocol == "osu":
                tags["protocol"] = "osu"  # default-protocol tags stay as before: same cells
            for place, ranks, args, tag in groups:
                packed = f"{place.name}{args}" in crowded
                what = "".join(f"-{v}{k}" for k, v in tag.items())  # -2pairs, -3x1fan
                result.jobs.append(
                    Job(
                        suite="p2p",
                        name=f"{mpi.flavor}/{place.name}{what}/r{rep}",
                        program=[binary, "--tests", *args, *rest] + protocol_args(protocol),
                        mpi=mpi,
                        ranks=ranks,
                        cpus=place.cpus,
                        nodes=place.nodes,
                        tags={**tags, "placement": place.name, "repeat": rep, **tag}
                        | ({"oversubscribed": True} if packed else {}),
                        oversubscribe=packed,
                        timeout_s=900,
                    )
                )
            for place in usable if two_rank else []:
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
        for test, place, ranks, tag in osu_places if rep <= osu_repeat else []:
            path, mpi = osu_programs[test]
            result.jobs.append(
                Job(
                    suite="p2p",
                    name=f"osu/{test}/{mpi.flavor}/{place.name}/r{rep}",
                    program=[
                        str(path),
                        *p2p_osu.program_args(low, high, path),
                        *osu_counts.get(test, []),
                    ],
                    mpi=mpi,
                    ranks=ranks,
                    cpus=place.cpus or None,
                    nodes=place.nodes,
                    launcher_binding=place.name == placement_mod.DEFAULT,
                    tags={
                        "mpi": mpi.flavor,
                        "mpi_version": mpi.version,
                        "tool": "osu",
                        "placement": place.name,
                        "repeat": rep,
                        **tag,
                    },
                    timeout_s=900,
                    output="osu",
                )
            )
    return result


follow_up = p2p_adaptive.follow_up  # more launches where cells still miss the target


def outputs(store, run_id: int, out_dir):
    """Latency/bandwidth figures (PNG+SVG) and the size x placement tables."""
    from hpcscope.figures import p2p as p2p_figures

    return figures_and_tables(store, run_id, out_dir, "p2p", p2p_figures.write)


def figures_and_tables(store, run_id: int, out_dir, benchmark: str, write_figures) -> list:
    """A p2p-shaped suite's (p2p, rma) figures and its size x configuration tables:
    BENCHMARK_table.md and BENCHMARK_samples.csv."""
    from hpcscope import safe_write
    from hpcscope.results import export

    samples = store.samples(run_id, benchmark=benchmark)
    written = write_figures(samples, out_dir)
    for name, text in (
        (f"{benchmark}_table.md", export.to_markdown(samples)),
        (f"{benchmark}_samples.csv", export.to_csv(samples)),
    ):
        safe_write.write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written
