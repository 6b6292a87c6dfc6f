"""The hardware facts the performance model reads, per row: catalog values under per-row ones.

A configuration's accelerator facts come from the accelerator catalog
(``engine/data/accelerators.csv``, or the catalog a user merges over it) and, where a table
gives them per row, from the table: a column named like a catalog column (``mem_bw_tbps``,
``fp8_dense_tflops``, ``scaleup_domain``, ...) overrides the catalog for the rows where it
holds a number. ``peak_tflops`` (what ``gpurank mlperf`` writes) is the dense bf16 peak.

The dense tensor peak a row computes at is the one of the precision its workload trains in
(``Workload.precision``, or a ``precision`` column per row), falling back to the next wider
format the accelerator has: an fp8 workload on an A100 computes at its bf16 peak.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .formats import format_name, is_missing

__all__ = [
    "PRECISIONS",
    "ELEMENT_BYTES",
    "positive_numbers",
    "SPEC_COLUMNS",
    "ROW_ALIASES",
    "HardwareFacts",
    "hardware_facts",
    "peak_columns",
]

#: Training number formats, narrowest last; a format an accelerator lacks falls back to the
#: next wider one it has (bf16 always: fp16 where no bf16).
PRECISIONS = ("bf16", "fp8", "fp4")

#: Catalog columns a table may give per row to override the catalog (numbers, > 0).
SPEC_COLUMNS = (
    "bf16_dense_tflops",
    "fp16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
    "mem_gb",
    "mem_bw_tbps",
    "tdp_w",
    "scaleup_domain",
    "scaleup_bw_GBps",
)
#: Per-row names that stand for a catalog column.
ROW_ALIASES = {"peak_tflops": "bf16_dense_tflops"}
#: Bytes of an element of each format over a bf16 one: FP8 half; NVFP4 a quarter plus one
#: FP8 scale per 16 elements (0.25 + 1/32), MXFP4 one 8-bit scale per 32 (OCP MX spec).
ELEMENT_BYTES = {"bf16": 1.0, "fp8": 0.5, "fp4": 0.25 + 1.0 / 32.0}
#: The catalog column of each precision's dense peak.
_PEAK_COLUMN = {"bf16": "bf16_dense_tflops", "fp8": "fp8_dense_tflops",
                "fp4": "fp4_dense_tflops"}


def peak_columns(precision: str) -> list[str]:
    """The catalog columns a row of ``precision`` takes its peak from, narrowest first
    (the format itself, then each wider one, fp16 last)."""
    i = PRECISIONS.index(precision)
    return [_PEAK_COLUMN[p] for p in reversed(PRECISIONS[: i + 1])] + ["fp16_dense_tflops"]


def positive_numbers(values) -> np.ndarray:
    """``values`` as floats, NaN where one is not a finite number > 0."""
    out = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(float)
    return np.where(np.isfinite(out) & (out > 0), out, np.nan)


class HardwareFacts:
    """Per-row facts (arrays of the table's length) and where each came from.

    Attributes
    ----------
    peak : ndarray
        Dense tensor peak (TFLOP/s) in the format the row trains in.
    precision : ndarray of str
        The format ``peak`` is of (``bf16``, ``fp8``, ``fp4``).
    facts : dict of str -> ndarray
        Every column of :data:`SPEC_COLUMNS` (NaN where neither the table nor the catalog has
        it).
    from_table : dict of str -> ndarray of bool
        Rows whose value of a column came from the table.
    precision_unread : ndarray of bool
        Rows whose ``precision`` value names no format (the workload's is used).
    """

    def __init__(self, peak, precision, facts, from_table, precision_unread):
        self.peak = peak
        self.precision = precision
        self.facts = facts
        self.from_table = from_table
        self.precision_unread = precision_unread


def hardware_facts(table: pd.DataFrame, A: pd.DataFrame, precision) -> HardwareFacts:
    """The facts of each row: ``A`` (the catalog rows of each table row, aligned), under the
    table's own columns.

    Parameters
    ----------
    table : DataFrame
        The configurations; may hold :data:`SPEC_COLUMNS`, ``peak_tflops`` and ``precision``.
    A : DataFrame
        One catalog row per table row (same length, same order).
    precision : str or array of str
        The training format of the rows where the table has no ``precision`` value (the
        workload's, or one per row).
    """
    n = len(table)
    facts, from_table = {}, {}
    for col in SPEC_COLUMNS:
        cat = positive_numbers(A[col]) if col in A.columns else np.full(n, np.nan)
        names = [col] + [a for a, c in ROW_ALIASES.items() if c == col]
        row = np.full(n, np.nan)
        for name in names:
            if name in table.columns:
                v = positive_numbers(table[name].to_numpy())
                row = np.where(np.isnan(row), v, row)
        use = ~np.isnan(row)
        facts[col] = np.where(use, row, cat)
        from_table[col] = use
    prec, unread = _precisions(table, precision, n)
    peak = np.full(n, np.nan)
    used = np.array([""] * n, dtype=object)
    for p in PRECISIONS:
        rows = prec == p
        if not rows.any():
            continue
        for col, fmt in zip(peak_columns(p), _formats(p)):
            take = rows & np.isnan(peak) & ~np.isnan(facts[col])
            peak = np.where(take, facts[col], peak)
            used = np.where(take, fmt, used)
    return HardwareFacts(peak, used, facts, from_table, unread)


def _formats(precision: str) -> list[str]:
    i = PRECISIONS.index(precision)
    return list(reversed(PRECISIONS[: i + 1])) + ["bf16"]


def _precisions(table: pd.DataFrame, default: str, n: int) -> np.ndarray:
    """Each row's training format: the table's ``precision`` where it names one, else the
    workload's (a value that names no format is the workload's, too: the caller reports it)."""
    out = np.empty(n, dtype=object)
    out[:] = default
    unread = np.zeros(n, dtype=bool)
    if "precision" in table.columns:
        raw = table["precision"].to_numpy(dtype=object)
        given = np.array([format_name(v) for v in raw], dtype=object)
        named = np.array([v is not None for v in given])
        out = np.where(named, given, out)
        unread = ~named & np.array([format_name(v) is None and not is_missing(v) for v in raw])
    return out, unread
