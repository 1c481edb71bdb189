"""list, history and report over real small p2p runs (real mpirun), as a user runs them.

The slowdown history must find here is synthetic and says so: an export of a real run
whose every value is multiplied by 1000, imported under the label "SYNTHETIC x1000 (test)".
The real ones (a run on Open MPI's TCP transport, a run under background load) are made
by benchmarks/report_scale."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import requires_openmpi

RUN = ["run", "p2p", "--quick", "--precision", "0", "--repeat", "2", "--mpi", "openmpi",
       "--placements", "core", "--sizes", "8:16", "--tests", "latency", "-o", "out"]  # fmt: skip


@requires_openmpi
def test_list_history_and_report_over_real_runs(cli):
    for label in ("first", "second", "third"):
        done = cli(*RUN, "--label", label)
        assert done.returncode == 0, done.stderr

    page = cli("list", "--limit", "2")
    assert page.returncode == 0, page.stderr
    assert "second" in page.stdout and "third" in page.stdout and "first" not in page.stdout
    assert "runs 2-3 of 3" in page.stderr and "--offset 2" in page.stderr
    only = json.loads(cli("list", "--label", "sec*", "--format", "json").stdout)
    assert [r["label"] for r in only] == ["second"]
    bad = cli("list", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr and "Traceback" not in bad.stderr

    shown = cli("history", "--suite", "p2p")
    assert shown.returncode == 0, shown.stderr
    assert "history of 3 runs" in shown.stdout
    result = json.loads(cli("history", "--suite", "p2p", "--format", "json").stdout)
    assert sorted(s["params"]["bytes"] for s in result["series"]) == [8, 16]
    assert all(len(s["points"]) == 3 for s in result["series"])

    # SYNTHETIC: a copy of run 3 with every value x1000, clearly labelled, imported (x1000:
    # on this shared machine a launch median of a real run can be several times another).
    doc = json.loads(cli("export", "3", "--format", "json").stdout)
    doc["run"]["label"] = "SYNTHETIC x1000 (test)"
    doc["run"]["started"] = doc["run"]["finished"]  # after run 3, so last in history
    for s in doc["samples"]:
        s["values"] = [1000 * v for v in s["values"]]
    Path(cli.folder / "synthetic.json").write_text(json.dumps(doc))
    assert cli("import", "synthetic.json").returncode == 0
    result = json.loads(cli("history", "--suite", "p2p", "--format", "json").stdout)
    found = {(c["run_id"], c["params"]["bytes"], c["verdict"]) for c in result["changes"]}
    assert {(4, 8, "slower"), (4, 16, "slower")} <= found, result["changes"]
    table = cli("history", "--suite", "p2p", "--metric", "latency")
    assert "slower" in table.stdout and "4" in table.stdout
    none = cli("history", "--metric", "bandwidth")
    assert none.returncode == 2 and "no 'bandwidth' measurements" in none.stderr

    report = cli("report", "1", "2", "3", "4", "-o", "rep")
    assert report.returncode == 0, report.stderr
    page = Path(report.stdout.strip()).read_text(encoding="utf-8")
    assert page.count('class="group"') == 1 and "4 comparable runs" in page
    assert "latency: 4 runs overlaid" in page and "Changes between runs" in page
    assert all(f"run {r}" in page for r in (1, 2, 3, 4))
