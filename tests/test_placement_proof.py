"""The placement proof as show, the report and the exports give it: one line per launch
class, the verdict counted over its launches, distinct bindings listed (issue 18, part 2)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from hpcscope.report.html import write_report
from hpcscope.report.show import print_run
from hpcscope.results.export import to_csv, to_json
from hpcscope.results.placement_proof import proof_lines
from hpcscope.results.store import Store

META = {
    "type": "meta",
    "schema": "hpcscope.bench/1",
    "benchmark": "p2p",
    "version": "1",
    "mpi": {"library": "Open MPI", "version": "4.1.4"},
    "timer": {"resolution_ns": 1, "overhead_ns": 1},
    "options": {},
}


def rank(r: int, cpus: list[int], socket: int | None, host: str = "n1") -> dict:
    core = cpus[0] if len(cpus) == 1 else None
    return {"rank": r, "host": host, "cpus": cpus, "core": core, "socket": socket, "numa": socket}


def build(path: Path) -> tuple[Store, int]:
    store = Store(path)
    run = store.create_run("p2p", backend="slurm")
    launches = [
        ("openmpi/socket/r1", "socket", [rank(0, [0], 0), rank(1, [6], 1)], "verified"),
        ("openmpi/socket/r2", "socket", [rank(0, [6], 1), rank(1, [0], 0)], "wrong"),
        (
            "openmpi/default/r1",
            "default",
            [rank(0, [0, 1], None), rank(1, [0, 1], None)],
            "reported",
        ),
    ]
    for rep, (name, place, ranks, verdict) in enumerate(launches, 1):
        lid = store.add_launch(run, name, {"mpi": "openmpi", "placement": place, "repeat": rep})
        store.add_record(lid, {**META, "ranks": ranks})
        store.add_record(
            lid,
            {
                "type": "sample",
                "metric": "latency",
                "unit": "us",
                "params": {"bytes": 8},
                "values": [1.0, 1.1, 1.2],
                "warmups": 0,
            },
        )
        store.finish_launch(lid, "FAILED" if verdict == "wrong" else "COMPLETED", 0)
        data = {
            "launch_id": lid,
            "launch": name,
            "verdict": verdict,
            "placement": place,
            "reason": "asked rank 0 on CPU 0 but it ran on CPUs [6]" if verdict == "wrong" else "",
            "cpus": [0, 6] if place == "socket" else [],
            "nodes": 1,
            "observed": "unbound" if place == "default" else "socket",
        }
        store.add_note(run, "placement", f"{name}: {verdict}", data)
    return store, run


def test_one_line_per_class_with_verdicts_and_bindings(tmp_path: Path) -> None:
    store, run = build(tmp_path / "h.db")
    lines = proof_lines(store.launches(run), store.run(run)["notes"])
    assert [l.label for l in lines] == ["openmpi socket", "openmpi default"]
    sock, default = lines
    assert sock.launches == 2 and sock.verdicts == {"verified": 1, "wrong": 1}
    assert [n for _, n in sock.bindings] == [1, 1]  # the two launches ran differently
    assert sock.bindings[0][0] == (
        "rank 0 on n1 CPU 0 (socket 0, NUMA 0, core 0), rank 1 on n1 CPU 6 (socket 1, NUMA 1, core 6)"
    )
    assert "asked rank 0 on CPU 0" in sock.reasons[0]
    assert default.verdict_text() == "reported 1/1; ran as unbound (1)"
    assert "CPUs 0-1" in default.bindings[0][0]


def test_show_report_and_exports_carry_the_proof(tmp_path: Path) -> None:
    store, run = build(tmp_path / "h.db")
    console = Console(record=True, width=200)
    print_run(store, run, console)
    text = console.export_text()
    assert "openmpi socket: verified 1/2; wrong 1/2" in text
    assert "1x rank 0 on n1 CPU 6 (socket 1" in text
    assert "placement: openmpi" not in text  # per class, not one note line per launch
    page = write_report(store, [run], tmp_path / "out").read_text()
    assert "Placement proof per launch class" in page and "reported 1/1; ran as unbound" in page
    doc = json.loads(to_json(store, run))
    assert [l["placement"]["verdict"] for l in doc["launches"]] == ["verified", "wrong", "reported"]
    rows = to_csv(store, run).splitlines()
    assert "placement_verdict" in rows[0] and "reported: ran as unbound" in rows[3]


def test_without_exclusive_only_the_class_is_checked() -> None:
    """SLURM --no-exclusive: srun gets no CPU list, so the class the ranks ran as decides."""
    from hpcscope.launch.placement_check import check
    from hpcscope.machine.mpi import MpiSpec
    from hpcscope.machine.topology import Topology
    from hpcscope.plan.job import Job

    topo = Topology.from_file(str(Path(__file__).parent / "fixtures" / "topo" / "lcc3_2x6x2.xml"))
    mpi = MpiSpec("openmpi", "", "")
    job = Job("p2p", "openmpi/socket/r1", ["p2p"], mpi, 2, [0, 6], 1, tags={"placement": "socket"})
    other_sockets = {"ranks": [rank(0, [3], 0), rank(1, [9], 1)]}
    one_socket = {"ranks": [rank(0, [3], 0), rank(1, [4], 0)]}
    assert check(job, other_sockets, topo, cpus_bound=False).verdict == "verified"
    wrong = check(job, one_socket, topo, cpus_bound=False)
    assert wrong.verdict == "wrong" and "ran as core" in wrong.reason
    assert check(job, other_sockets, topo).verdict == "wrong"  # exclusive: CPUs must match
