"""Cross-partition dominance kernels: how rows of one block are dominated by another block.

Used by the Dask path (:mod:`gpurank.engine.distributed`) to compute exact domination counts
and Pareto ranks without gathering the table on one worker. Same conventions as
:mod:`gpurank.kernels.reference`: ``costs`` are (n, m) float64, every criterion minimized,
``b`` dominates ``a`` when ``b <= a`` everywhere and ``b < a`` somewhere; equal rows never
dominate each other.

Each fast function has its slow NumPy oracle beside it (``*_reference``).

Algorithms
----------
* :func:`cross_domination_count` (``a`` by ``b``): for m <= 3 the fast single-table kernels
  of :mod:`gpurank.kernels.cpu` on the stacked table, ``count(a ∪ b)[:len(a)] - count(a)``,
  O((n_a + n_b) log^2) ; for m >= 4 (and small inputs) a Numba kernel, parallel over the
  rows of ``a``, that scans ``b`` in increasing row-sum order and stops at the first row
  whose sum exceeds the row of ``a`` (a dominator never has a larger sum: floating-point
  addition in a fixed order is monotone), O(n_a n_b m) worst case.
* :func:`box_relation`: bounding-box test of two blocks, O(m): ``"none"`` when some column of
  ``b`` is wholly above ``a`` (no row of ``b`` can dominate a row of ``a``), ``"all"`` when
  ``b``'s box lies wholly below ``a``'s (every row of ``b`` dominates every row of ``a``),
  ``"some"`` otherwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _shared

__all__ = [
    "box",
    "box_relation",
    "count_preceding",
    "count_preceding_reference",
    "cross_domination_count",
    "cross_domination_count_reference",
    "sort_keys",
]

_dominates = njit(inline="always")(_shared.dominates)

#: Below this many pairs (n_a * n_b) the brute-force kernel is used even for m <= 3.
_SMALL_PAIRS = 1 << 20


def _as_costs(x, name):
    c = np.ascontiguousarray(x, dtype=np.float64)
    if c.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n, m) array; got shape {c.shape}")
    return c


def _check_pair(a, b):
    a, b = _as_costs(a, "costs_a"), _as_costs(b, "costs_b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"costs_a has {a.shape[1]} columns and costs_b {b.shape[1]}; they must match")
    return a, b


def cross_domination_count_reference(costs_a, costs_b):
    """How many rows of ``costs_b`` dominate each row of ``costs_a`` (NumPy oracle, O(n_a n_b m)
    memory)."""
    a, b = _check_pair(costs_a, costs_b)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros(a.shape[0], dtype=np.int64)
    le = np.all(b[None, :, :] <= a[:, None, :], axis=2)
    lt = np.any(b[None, :, :] < a[:, None, :], axis=2)
    return (le & lt).sum(axis=1).astype(np.int64)


@njit(cache=True)
def _row_sums(c):
    n, m = c.shape
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(m):
            s += c[i, k]
        out[i] = s
    return out


@njit(cache=True, parallel=True)
def _cross_sorted(a, sa, bs, sb):
    n, m = a.shape
    nb = bs.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        # b rows with sum <= sum(a[i]) are the only candidates (bs sorted by sum).
        lo, hi = 0, nb
        while lo < hi:
            mid = (lo + hi) // 2
            if sb[mid] <= sa[i]:
                lo = mid + 1
            else:
                hi = mid
        cnt = 0
        for j in range(lo):
            if _dominates(bs, j, a, i, m):
                cnt += 1
        out[i] = cnt
    return out


def _cross_brute(a, b):
    sb = _row_sums(b)
    order = np.argsort(sb, kind="stable")
    bs = np.ascontiguousarray(b[order])
    return _cross_sorted(a, _row_sums(a), bs, np.ascontiguousarray(sb[order]))


def cross_domination_count(costs_a, costs_b):
    """How many rows of ``costs_b`` dominate each row of ``costs_a``.

    Parameters
    ----------
    costs_a : ndarray of shape (n_a, m)
    costs_b : ndarray of shape (n_b, m)
        Criteria to minimize, finite. Neither is mutated.

    Returns
    -------
    ndarray of int64, shape (n_a,)
    """
    a, b = _check_pair(costs_a, costs_b)
    na, nb = a.shape[0], b.shape[0]
    if na == 0 or nb == 0:
        return np.zeros(na, dtype=np.int64)
    m = a.shape[1]
    if m == 0:
        return np.zeros(na, dtype=np.int64)
    if m <= 3 and na * nb > _SMALL_PAIRS:
        from . import cpu

        both = np.concatenate((a, b))
        return (cpu.domination_count(both)[:na] - cpu.domination_count(a)).astype(np.int64)
    return _cross_brute(a, b)


def box(costs):
    """Per-column minimum and maximum ``(lo, hi)`` of a block (``None`` when it is empty)."""
    c = np.asarray(costs, dtype=np.float64)
    if c.shape[0] == 0:
        return None
    return c.min(axis=0), c.max(axis=0)


def box_relation(box_a, box_b):
    """What ``b``'s rows can do to ``a``'s rows, from their boxes: ``"none"`` (no row of ``b``
    dominates any row of ``a``), ``"all"`` (every row of ``b`` dominates every row of ``a``)
    or ``"some"`` (compare rows). An empty block relates as ``"none"``."""
    if box_a is None or box_b is None:
        return "none"
    lo_a, hi_a = box_a
    lo_b, hi_b = box_b
    if np.any(lo_b > hi_a):
        return "none"
    if np.all(hi_b <= lo_a) and np.any(hi_b < lo_a):
        return "all"
    return "some"


# ---------------------------------------------------------------------------------------
# Global order of the final rank: key = (-topsis_score, pareto_rank, row_id), ascending
# ---------------------------------------------------------------------------------------


@njit(inline="always")
def _key_less(s1, p1, i1, s2, p2, i2):
    if s1 != s2:
        return s1 > s2
    if p1 != p2:
        return p1 < p2
    return i1 < i2


@njit(cache=True, parallel=True)
def _count_preceding(qs, qp, qi, s, p, ids):
    n = qs.shape[0]
    out = np.empty(n, dtype=np.int64)
    for t in prange(n):
        lo, hi = 0, s.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            if _key_less(s[mid], p[mid], ids[mid], qs[t], qp[t], qi[t]):
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo
    return out


def sort_keys(score, prank, row_id):
    """Sort a block's ``(score, pareto_rank, row_id)`` by the final-rank key (best first)."""
    score = np.asarray(score, dtype=np.float64)
    prank = np.asarray(prank, dtype=np.int64)
    row_id = np.asarray(row_id, dtype=np.int64)
    order = np.lexsort((row_id, prank, -score))
    return (np.ascontiguousarray(score[order]), np.ascontiguousarray(prank[order]),
            np.ascontiguousarray(row_id[order]))


def count_preceding(score, prank, row_id, sorted_keys):
    """For each query row, how many rows of a block come before it in the final-rank order
    (TOPSIS score descending, then pareto_rank, then row_id). ``sorted_keys`` comes from
    :func:`sort_keys`. O(n log n_b)."""
    s, p, ids = sorted_keys
    return _count_preceding(np.ascontiguousarray(score, dtype=np.float64),
                            np.ascontiguousarray(prank, dtype=np.int64),
                            np.ascontiguousarray(row_id, dtype=np.int64), s, p, ids)


def count_preceding_reference(score, prank, row_id, block):
    """NumPy oracle of :func:`count_preceding` (``block`` = unsorted (score, prank, row_id))."""
    bs, bp, bi = (np.asarray(x) for x in block)
    s, p, i = (np.asarray(x)[:, None] for x in (score, prank, row_id))
    less = (bs > s) | ((bs == s) & ((bp < p) | ((bp == p) & (bi < i))))
    return less.sum(axis=1).astype(np.int64)
