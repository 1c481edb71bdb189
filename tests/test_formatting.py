"""One number style (issue 46 part 3): units scaled (ns/µs/ms, MB/s/GB/s, B/KiB/MiB),
three significant digits with their trailing zeros, one unit per column chosen from its
median, 'p < 1e-10' for a p-value that underflowed, never an exponent."""

from __future__ import annotations

import re

import pytest

from hpcscope.formatting import (
    column_unit,
    format_column,
    format_number,
    format_p,
    format_quantity,
    format_span,
    sig3,
    size_tick,
    table_column,
    unit_scale,
)


@pytest.mark.parametrize(
    "value, text",
    [
        (0.112, "0.112"),
        (0.11, "0.110"),  # beside 0.112: the same three digits
        (16, "16.0"),
        (15.8, "15.8"),
        (12140, "12100"),  # not 1.214e+04
        (9418, "9420"),
        (9.996, "10.0"),  # rounded first, not 10.00
        (0, "0"),
        (-2.5, "-2.50"),
    ],
)
def test_sig3_keeps_three_digits_and_never_an_exponent(value, text):
    assert sig3(value) == text


@pytest.mark.parametrize(
    "value, unit, text",
    [
        (0.0951, "us", "95.1 ns"),
        (3.5, "us", "3.50 µs"),
        (999.6, "us", "1.00 ms"),  # scaled after rounding
        (2_500_000, "us", "2.50 s"),
        (85, "ns", "85.0 ns"),
        (15800, "MB/s", "15.8 GB/s"),
        (950, "MB/s", "950 MB/s"),
        (9400, "Mbit/s", "9.40 Gbit/s"),
        (1048576, "bytes", "1 MiB"),
        (7, "widgets", "7.00 widgets"),  # a unit it does not know stays
    ],
)
def test_format_quantity_scales_the_unit(value, unit, text):
    assert format_quantity(value, unit) == text


def test_no_us_in_text_for_people():
    assert unit_scale(3.0, "us")[0] == "µs"


def test_a_column_shares_one_unit_chosen_from_its_median():
    shown, cells = format_column([0.0951, 0.5, 2.3, 1200.0, None], "us")
    assert shown == "µs" and cells == ["0.0951", "0.500", "2.30", "1200", "-"]
    shown, cells = format_column([15800.0, 16000.0, 900.0], "MB/s")
    assert shown == "GB/s" and cells == ["15.8", "16.0", "0.900"]  # not 16 beside 15.8
    assert column_unit([], "us") == ("ns", 0.001)
    # over many decades: the largest value's unit, not 739000 ns
    assert column_unit([0.2, 0.3, 0.3, 0.4, 739.0], "us") == ("µs", 1.0)


def test_table_column_renames_the_header_unit():
    assert table_column("alpha (us)", [0.33, 0.43, 1.25]) == ("alpha (ns)", ["330", "430", "1250"])
    assert table_column("beta (MB/s)", [12140.0, 9418.0]) == ("beta (GB/s)", ["12.1", "9.42"])
    assert table_column("from bytes", [0.0, 1048576.0]) == ("from bytes", ["0 B", "1 MiB"])
    assert table_column("native_median_us", [3.5, 20.0]) == ("native_median (µs)", ["3.50", "20.0"])
    assert table_column("verdict", ["ok"]) is None
    # cells the caller wrote as text keep their unit (spelled µs), never a scaled header
    assert table_column("native avg (us)", ["0.67", None]) == ("native avg (µs)", ["0.67", "-"])
    assert table_column("x (MB/s)", ["12.5"]) is None


def test_span_is_one_unit_three_digits():
    assert format_span(24.0009062, 25.9892031, "ns") == "24.0-26.0 ns"
    assert format_span(1.0, 1.0, "ns") == "1.00 ns"
    assert format_span(1e-9 * 1e6, 1e-9 * 1e6, "us") == "1.00 ns"


@pytest.mark.parametrize(
    "p, text",
    [(0.0, "p < 1e-10"), (1e-12, "p < 1e-10"), (3e-5, "p = 3.0e-5"), (0.034, "p = 0.034")],
)
def test_p_is_never_zero(p, text):
    assert format_p(p) == text


def test_size_ticks_in_binary_units():
    assert [size_tick(x) for x in (0, 1, 512, 16384, 4 << 20, 1.5 * 2**20)] == [
        "0",
        "1",
        "512",
        "16 KiB",
        "4 MiB",
        "1.5 MiB",
    ]


@pytest.mark.parametrize("value", [1.2e7, 2e-5, 123456.0, 0.00042])
def test_format_number_writes_no_exponent(value):
    assert not re.search(r"\de[+-]?\d", format_number(value))


def test_report_tables_show_scaled_units_and_keep_the_csv_raw(tmp_path):
    """The report's tables (html._Writer.table): a header's unit scales its column, a
    shared unit spans a median and its CI, a row's own unit column scales that row; the
    CSV beside the page keeps the recorded numbers."""
    from hpcscope.report import html

    w = html._Writer(tmp_path, 1)
    hockney = w.table(
        "hockney",
        "Hockney",
        ["from bytes", "alpha (us)", "beta (MB/s)"],
        [[1048576.0, 0.326, 12140.0], [0.0, 0.43, 9418.0]],
    )
    assert hockney.columns == ["from bytes", "alpha (ns)", "beta (GB/s)"]
    assert [[c.text for c in r] for r in hockney.rows] == [
        ["1 MiB", "326", "12.1"],
        ["0 B", "430", "9.42"],
    ]
    p2p = w.table(
        "p2p",
        "latency",
        ["median", "CI low"],
        [[0.112, 0.11], [2.5, 2.4]],
        shared_unit=([0, 1], "us"),
    )
    assert p2p.columns == ["median (µs)", "CI low (µs)"]
    assert [c.text for c in p2p.rows[0]] == ["0.112", "0.110"]
    node = w.table(
        "node",
        "node",
        ["unit", "measured_median", "peak", "block"],
        [["MB/s", 15800.0, 16000.0, 1048576], ["ns", 85.2, None, None]],
        row_unit=([1, 2], 0),
    )
    assert [[c.text for c in r] for r in node.rows] == [
        ["GB/s", "15.8", "16.0", "1 MiB"],
        ["ns", "85.2", "-", "-"],
    ]
    assert "0.326,12140.0" in (tmp_path / "run1_hockney.csv").read_text()
