"""Two placements of one MPI that ran on the same CPUs yet differ (analysis/same_cpus.py):
said where the binding was the same in every launch and the numbers differ by more than
SAME_CPUS_LIMIT; not for other CPUs, other MPIs, OSU's loop or simulated ranks; in
`show` and among the report's highlights."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from rich.console import Console

from hpcscope.analysis import highlights, same_cpus
from hpcscope.report.show import print_run
from hpcscope.results.store import Store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "report"))
import build_store  # noqa: E402


def rank(r: int, cpu: int) -> dict:
    return {"rank": r, "host": "vm", "cpus": [cpu], "core": cpu, "socket": cpu // 2, "numa": 0}


NEAR = [rank(0, 0), rank(1, 1)]
FAR = [rank(0, 0), rank(1, 3)]


def configuration(mpi: str, placement: str, latency_us: float, ranks=NEAR, launches=2, **extra):
    """(samples, launches) of one configuration: latency at 0 and 8 B, bandwidth at 4 MiB."""
    samples, found = [], []
    for repeat in range(1, launches + 1):
        tags = {"mpi": mpi, "placement": placement, "repeat": repeat, **extra}
        lid = f"{mpi}-{placement}-{repeat}-{sorted(extra.items())}"
        found.append({"id": lid, "tags": tags, "meta": {"ranks": ranks}})
        for metric, size, value in (
            ("latency", 0, latency_us * 0.9),
            ("latency", 8, latency_us),
            ("bandwidth", 4 << 20, 15000.0),
        ):
            samples.append(
                {
                    "launch_id": lid,
                    "benchmark": "p2p",
                    "metric": metric,
                    "unit": "us" if metric == "latency" else "MB/s",
                    "params": {"bytes": size},
                    "tags": tags,
                    "values": [value] * 5,
                }
            )
    return samples, found


def combined(*parts):
    return [s for p in parts for s in p[0]], [lo for p in parts for lo in p[1]]


def test_same_cpus_and_3x_apart_is_said_with_the_binding_and_the_numbers():
    samples, launches = combined(
        configuration("openmpi", "core", 0.344), configuration("openmpi", "default", 0.103)
    )
    (found,) = same_cpus.observations(samples, launches)
    assert found.kind == "same_cpus" and found.subject == "openmpi default"
    assert found.text.startswith(
        "openmpi core and openmpi default ran on the same CPUs in every launch "
        "(rank 0 on vm CPU 0, rank 1 on vm CPU 1), yet their latency at 8 B reads "
        "344 ns against 103 ns (3.3x)."
    )
    (top,) = highlights.rank([(found, "#p2p")])
    assert top.tier == 2 and top.text == found.text


def test_no_word_where_the_numbers_agree_or_cannot_be_compared():
    agree = combined(
        configuration("openmpi", "core", 0.34), configuration("openmpi", "default", 0.36)
    )
    other_cpus = combined(
        configuration("openmpi", "core", 0.34), configuration("openmpi", "socket", 0.9, FAR)
    )
    other_mpi = combined(configuration("openmpi", "core", 0.34), configuration("mpich", "core", 1))
    osu_loop = combined(
        configuration("openmpi", "core", 0.34),
        configuration("openmpi", "core", 1.0, tool="osu"),
    )
    simulated = [{"rank": 0, "host": "n1", "cpus": []}, {"rank": 1, "host": "n1", "cpus": []}]
    sim = combined(
        configuration("smpi", "core", 0.3, simulated),
        configuration("smpi", "default", 1.0, simulated),
    )
    moved = combined(
        configuration("openmpi", "core", 0.34),
        configuration("openmpi", "default", 0.1, launches=1),
        configuration("openmpi", "default", 0.1, FAR, launches=1),
    )
    for samples, launches in (agree, other_cpus, other_mpi, osu_loop, sim, moved):
        assert same_cpus.observations(samples, launches) == []


def test_show_says_it(tmp_path):
    samples, launches = combined(
        configuration("openmpi", "core", 0.344), configuration("openmpi", "default", 0.103)
    )
    store = Store(tmp_path / "s.db")
    run_id = store.create_run("p2p", host="vm")
    for launch in launches:
        lid = store.add_launch(run_id, str(launch["id"]), launch["tags"])
        store.add_record(lid, {**build_store.meta("p2p", "vm"), **launch["meta"]})
        for s in samples:
            if s["launch_id"] == launch["id"]:
                fields = ("benchmark", "metric", "unit", "params", "values")
                store.add_record(
                    lid, {"type": "sample", "warmups": 10, **{k: s[k] for k in fields}}
                )
        store.finish_launch(lid, "COMPLETED", 0)
    store.finish_run(run_id, "ok")
    out = io.StringIO()
    print_run(store, run_id, Console(file=out, width=300))
    assert "same CPUs: openmpi core and openmpi default ran on the same CPUs" in out.getvalue()


def test_a_sample_without_a_message_size_is_no_point():
    # the import fuzz (tests/faults/test_import_hostile.py) stored one; show crashed on it
    samples, launches = combined(
        configuration("openmpi", "core", 0.344), configuration("openmpi", "default", 0.103)
    )
    del samples[1]["params"]["bytes"]
    assert [o.kind for o in same_cpus.observations(samples, launches)] == ["same_cpus"]
