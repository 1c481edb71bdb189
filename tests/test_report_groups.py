"""The report over comparable runs: one group section with the runs overlaid, a column per
run, the spread over runs and the changes (report/html.py, report/over_runs.py), from
fixture records stored with the Store API (no MPI needed)."""

from __future__ import annotations

import re

import numpy as np

from hpcscope.report import html
from hpcscope.results.store import Store


def _p2p_run(store: Store, level: float, label: str, placement: str = "core", seed: int = 0):
    rng = np.random.default_rng(seed)
    rid = store.create_run("p2p", host="node1", label=label, mpi=[{"flavor": "openmpi"}])
    for repeat in (1, 2, 3):
        lid = store.add_launch(
            rid,
            f"p2p {placement} {repeat}",
            {"mpi": "openmpi", "mpi_version": "4.1.4", "placement": placement, "repeat": repeat},
        )
        for size in (8, 64, 1024):
            for metric, unit, value in (
                ("latency", "us", level * (1 + size / 4096)),
                ("bandwidth", "MB/s", size / level),
            ):
                store.add_record(
                    lid,
                    {
                        "type": "sample",
                        "benchmark": "p2p",
                        "metric": metric,
                        "unit": unit,
                        "params": {"bytes": size, "test": metric},
                        "values": [float(v) for v in value * (1 + 0.01 * rng.standard_normal(20))],
                        "warmups": 10,
                    },
                )
        store.finish_launch(lid, "COMPLETED", 0)
    store.finish_run(rid, "ok")
    return rid


def test_comparable_runs_share_one_section(tmp_path):
    with Store(tmp_path / "s.db") as store:
        ids = [_p2p_run(store, 1.0, f"night {i}", seed=i) for i in range(5)]
        ids.append(_p2p_run(store, 2.0, "night 5 (slow)", seed=5))
        other = _p2p_run(store, 1.0, "socket", placement="socket", seed=9)
        page = html.write_report(store, [*ids, other], tmp_path / "rep").read_text()
    assert page.count('class="group"') == 1 and page.count('class="run"') == 1
    assert "6 comparable runs" in page
    assert "latency: 6 runs overlaid" in page and "bandwidth: 6 runs overlaid" in page
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", page.split("its spread over them")[1])
    assert header is not None
    columns = re.findall(r"<th scope=\"col\">(.*?)</th>", header.group(1))
    assert [c for c in columns if c.startswith("run ")] == [f"run {r}" for r in ids]
    assert {"mean", "std", "CV", "median", "CI low", "CI high"} <= set(columns)
    # the slow run is a change at every size and metric (3 sizes x 2 metrics)
    changes = (tmp_path / "rep" / f"runs{ids[0]}-{ids[-1]}_changes.csv").read_text()
    assert changes.count(f"\n{ids[-1]},") == 6 and "slower" in changes
    assert "all 6 runs pooled" in page  # the suite's tables once, over every launch
    # cost: one overlay and one history figure per metric for the group, none per run
    group_part = page.split(f'id="runs{ids[0]}-{ids[-1]}"')[1].split('class="run"')[0]
    assert group_part.count("<img") == 4
