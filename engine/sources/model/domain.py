"""The domain of a configuration row: what a row must hold for the model to predict it.

Declared once, here, and used wherever rows become model inputs (``predict``, ``analyze
--predict``, ``calibrate``, ``plan``): a row outside the domain gets no number, and its
reason. Every value a row gives is checked against its column's range
(:data:`ROW_DOMAIN`); a value the table does not give (an empty cell, NaN) is assumed by
the model and named in the row's note, but a value it gives wrong is never replaced:

- counts (``n_accelerators``, ``n_nodes``, ``accelerators_per_node``) are positive
  integers, ``global_batch_size`` a positive integer (at least one sample per replica is
  checked where replicas are known, :mod:`.inputs`);
- prices, epochs, samples, host cores and the per-row hardware facts (``bf16_dense_tflops``,
  ``mem_bw_tbps``, ...) are finite and positive, below a bound no real system reaches (so
  no value near 1e308 overflows the model's arithmetic);
- ``n_nodes x accelerators_per_node = n_accelerators``; with one of the two given, the
  other must come out whole;
- no more accelerators in a node than the product's largest node (:func:`largest_node`).

A row whose accelerator the catalog lacks is modelled from its own columns when they give
a peak and a memory bandwidth (:func:`catalog_with_row_specs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..facts.accelerators import resolve_accelerator
from ..facts.catalog import merge_accelerator_catalog
from ..facts.hardware import ROW_ALIASES, SPEC_COLUMNS

__all__ = ["Bound", "ROW_DOMAIN", "COUNT_MAX", "BATCH_MAX", "SPEC_MAX", "PCIE_NODE_MAX",
           "domain_reasons", "largest_node", "catalog_with_row_specs", "row_specs_complete", "without_outside"]

#: The most PCIe cards one node may hold: servers seat cards behind PCIe switches beyond a
#: chassis' eight (the MLPerf Training results in the shared data hold PCIe nodes of 10, 14,
#: 16 and 24 cards: A100 PCIe, A30, A40); 32 bounds these with room for one more switch tier.
PCIE_NODE_MAX = 32.0
#: Counts above this are no system (int32, the kernels' integer type).
COUNT_MAX = 2**31 - 1
#: A global batch above this cannot be held exactly in a float64.
BATCH_MAX = 2**53
#: A per-row hardware fact above this is no accelerator (1e9 TFLOP/s, TB/s, GB, W: six
#: orders of magnitude above any product), and keeps the model's products finite.
SPEC_MAX = 1e9


@dataclass(frozen=True)
class Bound:
    """A column's domain: a finite number in ``(0, high]``, an integer when ``integer``."""

    column: str
    high: float
    integer: bool = False

    def describe(self) -> str:
        if self.integer:
            return f"a positive integer (at most {self.high:,.0f})"
        return f"a finite number in (0, {self.high:g}]"


#: Every per-row column the model reads, with its domain.
ROW_DOMAIN = (
    Bound("n_accelerators", COUNT_MAX, integer=True),
    Bound("n_nodes", COUNT_MAX, integer=True),
    Bound("accelerators_per_node", COUNT_MAX, integer=True),
    Bound("global_batch_size", BATCH_MAX, integer=True),
    Bound("price_per_accelerator_hour", SPEC_MAX),
    Bound("epochs", SPEC_MAX),
    Bound("samples_to_converge", 1e18),
    Bound("cpu_cores_per_accelerator", SPEC_MAX),
    *(Bound(c, SPEC_MAX) for c in SPEC_COLUMNS),
    *(Bound(a, SPEC_MAX) for a in ROW_ALIASES),
)


def _numeric(col: pd.Series) -> bool:
    return col.dtype.kind in "iuf" or str(col.dtype) in ("Int64", "Int32", "Float64")


def _given(col: pd.Series) -> np.ndarray:
    """Rows where a column holds a value (not missing, not an empty text)."""
    if _numeric(col):
        return col.notna().to_numpy(dtype=bool)
    return (col.notna() & (col.astype(str).str.strip() != "")).to_numpy()


def _numbers(col: pd.Series) -> np.ndarray:
    """Values as float64 (NaN for text that is no number; the first of ``;``-joined
    values, as the model reads them), without a warning for any magnitude."""
    if _numeric(col):
        return col.to_numpy(dtype=np.float64, na_value=np.nan)

    def one(v):
        if isinstance(v, str):
            v = v.split(";")[0].strip()
        try:
            return float(v)
        except (TypeError, ValueError, OverflowError):
            return math.nan

    return np.array([one(v) for v in col.to_numpy(dtype=object)], dtype=np.float64)


def _shown(v) -> str:
    text = repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    return text if len(text) <= 40 else text[:37] + "..."


def _count(v: float) -> str:
    return f"{v:,.0f}"


def largest_node(A: pd.DataFrame) -> np.ndarray:
    """The most accelerators one node of each row's product may hold: the larger of its
    chassis limit (``max_accels_per_node``) and its scale-up domain (a rack-scale system
    such as GB200 NVL72 is one node to some submitters), and for a PCIe card
    :data:`PCIE_NODE_MAX`; for a product with none, the largest the catalog holds for any
    product."""
    def col(name):
        if name not in A.columns:
            return np.full(len(A), np.nan)
        return pd.to_numeric(A[name], errors="coerce").to_numpy(float)

    both = np.fmax(col("max_accels_per_node"), col("scaleup_domain"))
    if "form_factor" in A.columns:
        card = A["form_factor"].astype(str).str.lower().str.startswith("pcie").to_numpy()
        both = np.where(card, np.fmax(both, PCIE_NODE_MAX), both)
    known = both[np.isfinite(both) & (both > 0)]
    fallback = float(known.max()) if len(known) else 8.0
    return np.where(np.isfinite(both) & (both > 0), both, fallback)


#: How :func:`catalog_with_row_specs` marks the entries it adds (``extra_source``).
_FROM_ROWS = "facts from the table's own columns"


def domain_reasons(table: pd.DataFrame, node_limit=None, *, catalog_rows=None) -> np.ndarray:
    """Why each row is outside the domain ("" for a row inside it).

    Parameters
    ----------
    table : DataFrame
        The configurations.
    node_limit : array of float, optional
        The most accelerators per node of each row's product (:func:`largest_node`).
    catalog_rows : DataFrame, optional
        Each row's catalog entry (aligned): a row of a product the catalog lacks (an entry
        :func:`catalog_with_row_specs` added for other rows) needs its own peak and memory
        bandwidth.

    Returns
    -------
    ndarray of str
        The first reason per row: the column, the value and what is allowed.
    """
    n_rows = len(table)
    reasons = np.full(n_rows, "", dtype=object)
    values = {}
    for b in ROW_DOMAIN:
        if b.column not in table.columns:
            continue
        col = table[b.column]
        given = _given(col)
        v = _numbers(col)
        ok = np.isfinite(v) & (v > 0) & (v <= b.high)
        if b.integer:
            ok &= np.floor(np.where(ok, v, 0.0)) == np.where(ok, v, 0.0)
        bad = given & ~ok & (reasons == "")
        raw = col.to_numpy(dtype=object) if bad.any() else ()
        for i in np.flatnonzero(bad):
            reasons[i] = f"{b.column} must be {b.describe()}; got {_shown(raw[i])}"
        values[b.column] = np.where(given & ok, v, np.nan)
    _topology(values, reasons, node_limit)
    if catalog_rows is not None and "extra_source" in catalog_rows.columns and n_rows:
        added = catalog_rows["extra_source"].astype(str).str.contains(_FROM_ROWS,
                                                                      regex=False).to_numpy()
        lacking = added & ~row_specs_complete(table) & (reasons == "")
        reasons[lacking] = ("accelerator not in catalog, and the row does not give its own "
                            "dense peak (bf16_dense_tflops) and mem_bw_tbps")
    return reasons


def _topology(values: dict, reasons: np.ndarray, node_limit) -> None:
    """Nodes x per node = accelerators, whole nodes, and no node above its product's
    largest; on the rows whose counts are in their domain (exact int64 arithmetic: counts
    are below 2**31, so a product of two is below 2**62)."""
    n_rows = len(reasons)
    nan = np.full(n_rows, np.nan)
    n = values.get("n_accelerators", nan)
    m = values.get("n_nodes", nan)
    g = values.get("accelerators_per_node", nan)
    limit = np.full(n_rows, np.inf) if node_limit is None else np.asarray(node_limit, float)
    ok = (reasons == "") & (n > 0)  # no count: refused as missing where counts are read
    has_m, has_g = ok & (m > 0), ok & (g > 0)
    ni = np.where(ok, n, 1).astype(np.int64)
    mi = np.where(has_m, m, 1).astype(np.int64)
    gi = np.where(has_g, g, 1).astype(np.int64)
    product = has_m & has_g & (mi * gi != ni)
    nodes_of_g = has_g & ~has_m & (ni % gi != 0)
    split_m = has_m & ~has_g & (ni % mi != 0)
    per_node = np.where(has_g, gi, np.where(has_m, ni // mi, 0)).astype(float)
    too_big = ok & ~product & ~nodes_of_g & ~split_m & (per_node > limit)
    for i in np.flatnonzero(product | nodes_of_g | split_m | too_big):
        if product[i]:
            reasons[i] = (f"inconsistent topology: n_nodes {_count(mi[i])} x "
                          f"accelerators_per_node {_count(gi[i])} = {_count(mi[i] * gi[i])}, "
                          f"not n_accelerators {_count(ni[i])}")
        elif nodes_of_g[i]:
            reasons[i] = (f"inconsistent topology: n_accelerators {_count(ni[i])} is not a "
                          f"whole number of nodes of accelerators_per_node {_count(gi[i])}")
        elif split_m[i]:
            reasons[i] = (f"inconsistent topology: n_accelerators {_count(ni[i])} does not "
                          f"split into n_nodes {_count(mi[i])} equal nodes")
        else:
            reasons[i] = (f"accelerators_per_node {_count(per_node[i])} is more than the "
                          f"largest node of this accelerator ({_count(limit[i])})")


def row_specs_complete(table: pd.DataFrame) -> np.ndarray:
    """Rows that give the facts the model needs of an accelerator: a dense peak
    (``bf16_dense_tflops``, ``fp16_dense_tflops`` or ``peak_tflops``) and ``mem_bw_tbps``,
    each a finite number > 0."""
    def valid(name):
        if name not in table.columns:
            return np.zeros(len(table), dtype=bool)
        v = _numbers(table[name])
        return np.isfinite(v) & (v > 0) & (v <= SPEC_MAX)

    peak = valid("bf16_dense_tflops") | valid("fp16_dense_tflops") | valid("peak_tflops")
    return peak & valid("mem_bw_tbps")


def catalog_with_row_specs(table: pd.DataFrame, acc: pd.DataFrame) -> pd.DataFrame:
    """``acc`` with one entry for each accelerator name the catalog lacks whose rows give
    their own facts (:func:`row_specs_complete`): the facts are the row's own (the entry
    holds none), its identity filled as for a user catalog's new accelerator (family =
    the name), its largest node the catalog's largest (:func:`largest_node`)."""
    if "accelerator" not in table.columns or not len(table):
        return acc
    complete = row_specs_complete(table)
    names = sorted({str(a).strip() for a, c in zip(table["accelerator"], complete)
                    if c and isinstance(a, str) and a.strip()})
    new = [a for a in names
           if resolve_accelerator(a, catalog=acc).match not in ("exact", "stand-in",
                                                                "unplaced")]
    if not new:
        return acc
    biggest = float(largest_node(acc).max()) if len(acc) else 8.0
    user = pd.DataFrame({"accelerator_id": new,
                         "max_accels_per_node": [f"{biggest:g}"] * len(new),
                         "extra_source": [_FROM_ROWS] * len(new)})
    return merge_accelerator_catalog(user, base=acc)


def without_outside(table: pd.DataFrame, outside: np.ndarray) -> pd.DataFrame:
    """``table`` with the domain's columns blanked on the rows outside the domain
    (``outside`` holds their reasons): those rows get no number, and their values (1e308
    accelerators, an infinite peak) never reach the model's arithmetic."""
    mask = np.asarray(outside, dtype=object) != ""
    if not mask.any():
        return table
    t = table.copy()
    for b in ROW_DOMAIN:
        if b.column in t.columns:
            t[b.column] = t[b.column].where(~mask)
    return t
