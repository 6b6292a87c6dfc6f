"""The one formatter: numbers for people, and the terminal filter every printer uses."""

import doctest
import math

import numpy as np
import pandas as pd
import pytest
from gpurank.engine import formatting
from gpurank.engine.formatting import (
    byte_size,
    column_label,
    count,
    fixed,
    integer,
    markdown_table,
    number,
    percent,
    printable,
    span,
    unit_of,
    value,
)

MISSING_VALUES = [None, float("nan"), float("inf"), -float("inf"), np.nan, pd.NA, pd.NaT,
                  np.float32("nan")]


def test_doctests():
    result = doctest.testmod(formatting)
    assert result.attempted > 10 and result.failed == 0


@pytest.mark.parametrize("x, digits, expected", [
    (1234.5678, 3, "1,235"), (12345.6, 3, "12,346"), (1_234_567.0, 2, "1,234,567"),
    (123.456, 3, "123"), (12.3456, 3, "12.3"), (1.23456, 3, "1.23"), (0.123456, 3, "0.123"),
    (0.0012345, 3, "0.00123"), (0.000046, 2, "0.000046"), (4.6e-6, 2, "4.6e-06"),
    (9.996, 3, "10.0"), (0.09996, 3, "0.100"), (999.6, 3, "1,000"), (2.0, 3, "2.00"),
    (-0.5, 3, "-0.500"), (-12345.6, 3, "-12,346"), (0.0, 3, "0"), (-0.0, 3, "0"),
    (1e15, 3, "1.00e+15"), (1e300, 2, "1.0e+300"), (5, 1, "5"), (np.float32(0.25), 2, "0.25"),
    (np.int64(12345), 3, "12,345"),
])
def test_number(x, digits, expected):
    assert number(x, digits) == expected


def test_the_digits_are_significant_digits():
    rng = np.random.default_rng(0)
    for x in 10.0 ** rng.uniform(-4.9, 14.9, 500) * rng.choice([-1, 1], 500):
        for d in (1, 2, 3, 4):
            text = number(x, d)
            assert math.isclose(float(text.replace(",", "")), x, rel_tol=10.0 ** (1 - d))
            digits = text.replace(",", "").replace("-", "").replace(".", "").lstrip("0")
            assert len(digits) >= d  # never fewer digits than asked (integer digits are kept)
            if abs(x) < 10**d:
                assert len(digits) == d, (x, d, text)


@pytest.mark.parametrize("missing", MISSING_VALUES)
def test_missing_is_a_dash_everywhere(missing):
    for f in (number, integer, count, percent, value):
        assert f(missing) == "-", f
    assert fixed(missing, 2) == "-"
    assert number(missing, unit="min") == "-"  # no unit after a missing value


def test_other_formats():
    assert fixed(0.988426, 4) == "0.9884" and fixed(1234.5, 1) == "1,234.5"
    assert integer(1234.5) == "1,234" and integer(1235.5) == "1,236"  # round half to even
    assert count(16.0) == "16" and count(12.5) == "12.5" and count(2048) == "2,048"
    assert percent(0.06) == "6%" and percent(0.9961, 1) == "99.6%"
    assert span(4, 16) == "4-16" and span(8.0, 8.0) == "8" and span(1024, 2048) == "1,024-2,048"
    assert number(42.0, unit="min") == "42.0 min" and integer(7, unit="GPUs") == "7 GPUs"


def test_trimmed_numbers_read_as_counts_and_sizes_in_a_sentence():
    # whole values keep every integer digit and no point; others lose their trailing zeros
    assert number(8.0, trim=True) == "8" and number(1_000_000_000_000, 4, trim=True) == \
        "1,000,000,000,000"
    assert number(1.5, trim=True) == "1.5" and number(0.125, trim=True) == "0.125"
    assert number(2.0004, 3, trim=True) == "2" and number(1234.6, 3, trim=True) == "1,235"
    assert number(100.0, 3, trim=True) == "100" and number(3e-7, trim=True) == "3.00e-07"
    assert number(float("nan"), trim=True) == "-" and number(8.0) == "8.00"


@pytest.mark.parametrize("nbytes, expected", [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 KB"), (1_234_567, "1.2 MB"), (5.5e9, "5.5 GB"),
    (3.2e12, "3.2 TB"), (7e15, "7.0 PB"), (2.5e18, "2,500.0 PB"), (None, "-"),
    (float("inf"), "-")])
def test_byte_size(nbytes, expected):
    assert byte_size(nbytes) == expected


def test_markdown_table():
    lines = markdown_table(["a", "b|c"], [[1, "x|y"], ["two\nlines", None]])
    assert lines == ["| a | b\\|c |", "| --- | --- |", "| 1 | x\\|y |", "| two lines | None |"]
    assert markdown_table(["a", "b", "c"], [], align="lrc") == ["| a | b | c |",
                                                               "|:--|--:|:-:|"]
    for bad in ("lr", "lrx"):
        with pytest.raises(ValueError, match="align must have one of"):
            markdown_table(["a", "b", "c"], [], align=bad)


def test_value_of_any_cell():
    assert value(True) == "yes" and value(np.bool_(False)) == "no"
    assert value(7) == "7" and value(np.int32(-1536)) == "-1,536"
    assert value(1536.0) == "1,536" and value(2.5) == "2.50" and value(0.93761) == "0.938"
    assert value(1e16) == "1.00e+16"
    assert value("A100 [x] $5") == "A100 [x] $5"
    assert value([1, 2]) == "[1, 2]"


def test_units_and_column_labels():
    assert unit_of("cost_usd") == "USD" and unit_of("median_time_to_train_min") == "min"
    assert unit_of("scaling_efficiency") is None
    assert column_label("time_to_train_min") == "time to train (min)"
    assert column_label("time_to_train_min", compact=True) == "time (min)"
    assert column_label("median_cost_usd") == "median cost (USD)"
    assert column_label("median_cost_usd", compact=True) == "cost (USD)"
    assert column_label("cpu_cores_per_accelerator", compact=True) == "cores/accel"
    assert column_label("my_own_column") == "my own column"
    assert column_label("prediction_basis") == "prediction basis"


#: Every kind of character a terminal acts on, with what it must read as.
HOSTILE = {
    "\x1b]0;pwned\x07": "\\x1b]0;pwned\\x07",  # sets the window title
    "\x1b[2J\x1b[H": "\\x1b[2J\\x1b[H",  # clears the screen
    "\x9b31m": "\\x9b31m",  # C1 CSI: one byte, same effect as ESC [
    "\x85\x8d\x90\x9d\x9f\x80": "\\x85\\x8d\\x90\\x9d\\x9f\\x80",
    "\u202egnp.exe": "\\u202egnp.exe",  # right-to-left override
    "\u202a\u202b\u202c\u202d": "\\u202a\\u202b\\u202c\\u202d",
    "\u2066\u2067\u2068\u2069": "\\u2066\\u2067\\u2068\\u2069",
    "\u200e\u200f\u061c": "\\u200e\\u200f\\u061c",
    "ab\bc": "ab\\x08c", "over\rwrite": "over\\x0dwrite", "tab\there": "tab\\x09here",
    "nul\x00": "nul\\x00", "del\x7f": "del\\x7f", "bell\x07": "bell\\x07",
    "line\nbreak": "line\\x0abreak", "sep\u2028\u2029": "sep\\u2028\\u2029",
    "lone \udcff surrogate": "lone \\udcff surrogate",
}


@pytest.mark.parametrize("raw", list(HOSTILE))
def test_printable_neutralizes(raw):
    out = printable(raw)
    assert out == HOSTILE[raw]
    assert all(c == "\n" or (0x20 <= ord(c) < 0x7f) or ord(c) > 0x9f for c in out)
    out.encode("utf-8")  # always encodable: no lone surrogates left


def test_printable_keeps_ordinary_text():
    text = "NVIDIA H100 SXM5 80GB — 8 × 16 GPUs, coût 5 € / h, 日本語 [bold]x[/bold] :smile:"
    assert printable(text) == text
    assert printable("two\nlines", newlines=True) == "two\nlines"
    assert printable("two\r\nlines", newlines=True) == "two\\x0d\nlines"
    assert printable(12.5) == "12.5"
