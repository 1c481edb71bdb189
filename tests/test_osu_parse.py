"""results/parsers.parse_osu on OSU's documented text format (no MPI needed)."""

from __future__ import annotations

import pytest

from hpcscope.results.parsers import PARSERS, parse_osu

LATENCY = """# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       0.21
2                       0.22
4                       0.25
"""
MBW_MR = """# OSU MPI Multiple Bandwidth / Message Rate Test v7.4
# [ pairs: 1 ] [ window size: 64 ]
# Size                  MB/s        Messages/s
1                       2.75        2747440.07
2                       5.50        2750000.00
"""


def test_latency_rows_become_p2p_samples_with_osu_version():
    meta, *samples = parse_osu(LATENCY)
    assert meta["benchmark"] == "p2p" and meta["version"] == "OSU 7.4" and meta["ranks"] == []
    assert [(s["metric"], s["unit"], s["params"], s["values"]) for s in samples] == [
        ("latency", "us", {"bytes": 1, "test": "latency"}, [0.21]),
        ("latency", "us", {"bytes": 2, "test": "latency"}, [0.22]),
        ("latency", "us", {"bytes": 4, "test": "latency"}, [0.25]),
    ]
    assert PARSERS["osu"] is parse_osu


@pytest.mark.parametrize(
    "title, metric",
    [("Bandwidth", "bandwidth"), ("Bi-Directional Bandwidth", "bibandwidth")],
)
def test_bandwidth_programs(title, metric):
    text = f"# OSU MPI {title} Test v5.9\n# Size      Bandwidth (MB/s)\n1    3.10\n8   24.80\n"
    samples = parse_osu(text)[1:]
    assert [s["metric"] for s in samples] == [metric] * 2
    assert [s["values"][0] for s in samples] == [3.10, 24.80]


def test_mbw_mr_takes_the_message_rate_column_and_ignores_noise():
    noisy = "[vm:123] some MPI warning on stdout\n" + MBW_MR + "trailing words\n"
    samples = parse_osu(noisy)[1:]
    assert [(s["metric"], s["values"]) for s in samples] == [
        ("message_rate", [2747440.07]),
        ("message_rate", [2750000.0]),
    ]


@pytest.mark.parametrize(
    "text, words",
    [
        ("hello from a program that is not OSU\n", ["no '# OSU MPI ... Test' title", "hello"]),
        ("# OSU MPI Scan Latency Test v7.4\n1 2.0\n", ["Scan", "not one of OSU 7.4's programs"]),
        ("# OSU MPI Latency Test v7.4\n# Size Latency (us)\n", ["no rows"]),
    ],
)
def test_output_that_is_not_osu_pt2pt_is_an_error_record(text, words):
    records = parse_osu(text)
    assert records[0]["type"] == "meta"
    errors = [r for r in records if r["type"] == "error"]
    assert len(errors) == 1 and not [r for r in records if r["type"] == "sample"]
    for word in words:
        assert word in errors[0]["message"]
