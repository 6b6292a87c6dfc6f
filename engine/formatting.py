"""How gpurank writes values for people: one number formatter, one byte formatter, one
Markdown table writer and one terminal filter.

The console, the HTML report, the MLPerf study and the prediction notes all format numbers
here, so a value reads the same everywhere: thousands separated, a fixed number of significant
digits, missing or non-finite values as ``"-"``. :func:`byte_size` writes file and memory
sizes, :func:`markdown_table` the Markdown tables of the reports and the benchmarks.
:func:`printable` is the filter every terminal printer passes data text through, so a value
from a table can never drive the terminal.

>>> number(1234.5678), number(0.012345), number(2.0), number(float("nan"))
('1,235', '0.0123', '2.00', '-')
>>> value(2.0), value(7), value(True), value(None)
('2', '7', 'yes', '-')
>>> printable("a\\x1b]0;title\\x07b")
'a\\\\x1b]0;title\\\\x07b'
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pandas as pd

from .methods import METHODS

__all__ = [
    "MISSING",
    "number",
    "fixed",
    "integer",
    "count",
    "percent",
    "span",
    "value",
    "byte_size",
    "markdown_table",
    "markdown_row",
    "printable",
    "unit_of",
    "column_label",
]

#: What a missing, NaN or infinite value reads as.
MISSING = "-"

#: Magnitudes shown in scientific notation: below 1e-5 and from 1e15 on, where a fixed
#: notation would be all zeros.
_SCI_BELOW, _SCI_FROM = -5, 15


def _as_float(x):
    """``x`` as a finite float, or None when it is missing, NaN, infinite or not a number."""
    if x is None or isinstance(x, (str, bytes)):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):  # pandas.NA, NaT and other non-numbers
        return None
    return v if math.isfinite(v) else None


def _with_unit(text, unit):
    return f"{text} {unit}" if unit and text != MISSING else text


def number(x, digits=3, *, unit=None, trim=False) -> str:
    """``x`` rounded to ``digits`` significant digits, thousands separated.

    Digits of the integer part are never dropped (``12,346`` for 12345.6 at 3 digits);
    magnitudes below 1e-5 or from 1e15 on are written in scientific notation.

    Parameters
    ----------
    x : number or None
    digits : int
        Significant digits, at least 1.
    unit : str, optional, keyword-only
        Appended after a space (not to a missing value).
    trim : bool, keyword-only
        Drop the trailing zeros of the decimals, and the point when none is left, as a count
        or a size is written in a sentence (``8``, ``1.5``; not ``8.00``, ``1.50``).
        Scientific notation keeps its digits.

    Returns
    -------
    str
        ``"-"`` for None, NaN, infinity, ``pandas.NA`` or a non-number.

    Examples
    --------
    >>> number(9.996), number(-0.5), number(12345.6), number(3e-7), number(42, unit="min")
    ('10.0', '-0.500', '12,346', '3.00e-07', '42.0 min')
    >>> number(8.0, trim=True), number(1.5, trim=True), number(1536, 4, trim=True)
    ('8', '1.5', '1,536')
    """
    v = _as_float(x)
    if v is None:
        return MISSING
    digits = max(1, int(digits))
    if v == 0:
        return _with_unit("0", unit)
    # The magnitude after rounding, so 9.996 reads "10.0" and not "10.00".
    rounded = float(f"{v:.{digits - 1}e}")
    mag = math.floor(math.log10(abs(rounded)))
    if mag < _SCI_BELOW or mag >= _SCI_FROM:
        return _with_unit(f"{v:.{digits - 1}e}", unit)
    dec = max(digits - 1 - mag, 0)
    text = f"{v:,.{dec}f}"
    if trim and dec:
        text = text.rstrip("0").rstrip(".")
    return _with_unit(text, unit)


def fixed(x, decimals, *, unit=None) -> str:
    """``x`` with exactly ``decimals`` decimals, thousands separated (TOPSIS scores, seconds).

    >>> fixed(0.98843, 4), fixed(1234.5, 1), fixed(None, 2)
    ('0.9884', '1,234.5', '-')
    """
    v = _as_float(x)
    if v is None:
        return MISSING
    return _with_unit(f"{v:,.{max(0, int(decimals))}f}", unit)


def integer(x, *, unit=None) -> str:
    """``x`` rounded to an integer, thousands separated.

    >>> integer(1234.6), integer(-3), integer(float("inf"))
    ('1,235', '-3', '-')
    """
    v = _as_float(x)
    if v is None:
        return MISSING
    return _with_unit(f"{int(round(v)):,}", unit)


def count(x, *, unit=None) -> str:
    """A count-like value (a median of counts): an integer when whole, else one decimal.

    >>> count(16.0), count(12.5), count(1536)
    ('16', '12.5', '1,536')
    """
    v = _as_float(x)
    if v is None:
        return MISSING
    return _with_unit(f"{int(v):,}" if v == int(v) else f"{v:,.1f}", unit)


def percent(x, decimals=0) -> str:
    """A share (0.06) as a percentage (``"6%"``).

    >>> percent(0.0612), percent(0.996, 1), percent(None)
    ('6%', '99.6%', '-')
    """
    v = _as_float(x)
    if v is None:
        return MISSING
    return f"{100 * v:.{max(0, int(decimals))}f}%"


def span(lo, hi) -> str:
    """A range of counts, ``"4-16"``, or one count when both ends agree.

    >>> span(4, 16), span(8.0, 8.0)
    ('4-16', '8')
    """
    a, b = count(lo), count(hi)
    return a if a == b else f"{a}-{b}"


def value(v, digits=3) -> str:
    """Any table cell as text: the formatter of the console and report tables.

    Booleans read ``yes``/``no``; integers (and whole floats below 1e15) are written whole,
    thousands separated; other floats go through :func:`number`; text is returned as is
    (escape it for its destination: HTML, or :func:`printable` for a terminal).

    >>> value(1536.0), value(0.93761), value("H100"), value(float("nan"))
    ('1,536', '0.938', 'H100', '-')
    """
    if isinstance(v, str):
        return v
    if v is None:
        return MISSING
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    if not isinstance(v, numbers.Real):
        # pandas.NA and NaT are missing; any other object is shown as its text
        return MISSING if _is_missing_scalar(v) else str(v)
    f = _as_float(v)
    if f is None:
        return MISSING
    if f == int(f) and abs(f) < 10.0**_SCI_FROM:
        return f"{int(f):,}"
    return number(f, digits)


def _is_missing_scalar(v) -> bool:
    try:
        return v is pd.NA or v is pd.NaT or bool(np.ndim(v) == 0 and pd.isna(v))
    except (TypeError, ValueError):
        return False


#: Decimal units of a byte count (what disk tools and people say: 1 MB = 1,000,000 B).
_BYTE_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def byte_size(nbytes) -> str:
    """A byte count in decimal units, one decimal (whole bytes below 1 KB).

    >>> byte_size(512), byte_size(1_234_567), byte_size(3.2e12), byte_size(None)
    ('512 B', '1.2 MB', '3.2 TB', '-')
    """
    v = _as_float(nbytes)
    if v is None:
        return MISSING
    for unit in _BYTE_UNITS:
        if abs(v) < 1000 or unit == _BYTE_UNITS[-1]:
            break
        v /= 1000
    return f"{v:,.0f} {unit}" if unit == "B" else f"{v:,.1f} {unit}"


# -- Markdown -----------------------------------------------------------------------------------
#: The separator cell of each column alignment a table may ask for.
_ALIGN = {"l": ":--", "r": "--:", "c": ":-:"}


def markdown_row(cells) -> str:
    """One row of a Markdown table: each cell as text, ``|`` escaped, line breaks as spaces.

    >>> markdown_row(["a|b", 2, "two\\nlines"])
    '| a\\\\|b | 2 | two lines |'
    """
    return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ")
                             for c in cells) + " |"


def markdown_table(headers, rows, *, align=None) -> list[str]:
    """A Markdown table as its lines: the header, the separator, one line per row.

    Parameters
    ----------
    headers : sequence of str
    rows : iterable of sequences
        The cells, already formatted (any object is written with ``str``).
    align : str, optional, keyword-only
        One letter per column, ``l``, ``r`` or ``c``; without it every column is left to
        the renderer (``| --- |``).

    Returns
    -------
    list of str

    Examples
    --------
    >>> print("\\n".join(markdown_table(["name", "n"], [["H100", 8]])))
    | name | n |
    | --- | --- |
    | H100 | 8 |
    >>> markdown_table(["name", "n"], [], align="lr")
    ['| name | n |', '|:--|--:|']
    """
    headers = list(headers)
    if align is None:
        rule = "|" + "|".join(" --- " for _ in headers) + "|"
    elif len(align) != len(headers) or set(align) - set(_ALIGN):
        raise ValueError(f"align must have one of 'l', 'r', 'c' per column ({len(headers)}); "
                         f"got {align!r}")
    else:
        rule = "|" + "|".join(_ALIGN[a] for a in align) + "|"
    return [markdown_row(headers), rule] + [markdown_row(r) for r in rows]


# -- terminal safety ----------------------------------------------------------------------------
#: Characters a terminal may act on instead of showing: C0 controls (ESC starts every escape
#: sequence; BEL, BS and CR rewrite what is shown), DEL, C1 controls (U+009B is a one-byte CSI),
#: the bidirectional embeddings, overrides and isolates (they reorder what follows), the line
#: and paragraph separators, and lone surrogates (which cannot be encoded for a terminal).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_NEWLINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028"
                                   "\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match) -> str:
    o = ord(match.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(text, *, newlines=False) -> str:
    """``text`` with every character a terminal could act on replaced by a visible escape.

    ESC (``\\x1b``), the other C0 controls (tab, backspace, carriage return, bell...), DEL,
    the C1 controls U+0080-U+009F, the bidirectional controls (U+202A-U+202E, U+2066-U+2069,
    U+200E, U+200F, U+061C), U+2028/U+2029 and lone surrogates become ``\\x1b`` /
    ``\\u202e`` style escapes, so ``ESC ] 0 ;`` cannot set the window title and ``ESC [ 2 J``
    cannot clear the screen. Every gpurank printer passes data text through this.

    Parameters
    ----------
    text : object
        Converted with ``str``.
    newlines : bool, keyword-only
        Keep line feeds (for multi-line messages whose lines gpurank wrote).

    Examples
    --------
    >>> printable("evil\\x1b[2J\\u202etxt.exe")
    'evil\\\\x1b[2J\\\\u202etxt.exe'
    >>> printable("two\\nlines", newlines=True)
    'two\\nlines'
    """
    return (_UNSAFE_KEEP_NEWLINES if newlines else _UNSAFE).sub(_escape, str(text))


# -- column names and units ---------------------------------------------------------------------
#: The unit of each known column.
UNITS = {
    "time_to_train_min": "min",
    "throughput": "samples/s",
    "throughput_per_accelerator": "samples/s",
    "cost_usd": "USD",
    "energy_kwh": "kWh",
    "accelerator_hours": "h",
    "cpu_cores_per_accelerator": "cores",
    "price_per_accelerator_hour": "USD/h",
    "power_w": "W",
}
#: (name, compact name) of known columns; others read as their name with spaces.
_NAMES = {
    "rank": ("rank", "#"),
    "n_accelerators": ("accels", "accels"),
    "n_nodes": ("nodes", "nodes"),
    "time_to_train_min": ("time to train", "time"),
    "throughput_per_accelerator": ("per-accel throughput", "tput/accel"),
    "scaling_efficiency": ("scaling efficiency", "efficiency"),
    "cpu_cores_per_accelerator": ("cores/accel", "cores/accel"),
    "domination_count": ("dominated by", "dominated by"),
    **{m.column: (m.label, m.label) for m in METHODS.values()},  # each method's score
    "pareto_rank": ("front", "front"),
    "accelerator_hours": ("accel-hours", "accel-h"),
    "cost_usd": ("cost", "cost"),
    "energy_kwh": ("energy", "energy"),
    "utilization": ("utilization", "util"),
    "prediction_basis": ("prediction basis", "basis"),
}
#: Units that a compact header leaves out because the compact name says it.
_COMPACT_NO_UNIT = {"cpu_cores_per_accelerator"}


def unit_of(column) -> str | None:
    """The unit of ``column`` (``"min"``, ``"USD"``...), or None when unknown or unitless.

    A ``median_`` prefix is looked through: ``median_cost_usd`` is in USD.
    """
    return UNITS.get(str(column).removeprefix("median_"))


def column_label(column, *, compact=False) -> str:
    """The header of ``column`` for people, with its unit: ``"time to train (min)"``.

    ``compact`` gives the short form used where width is scarce (``"time (min)"``). A
    ``median_`` prefix is kept as the word "median" (dropped when compact).
    """
    col = str(column)
    prefix = ""
    if col.startswith("median_"):
        col = col[len("median_"):]
        prefix = "" if compact else "median "
    long, short = _NAMES.get(col, (col.replace("_", " "),) * 2)
    name = short if compact else long
    unit = UNITS.get(col)
    if unit and not (compact and col in _COMPACT_NO_UNIT):
        return f"{prefix}{name} ({unit})"
    return f"{prefix}{name}"
