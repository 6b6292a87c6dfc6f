"""Cross-partition kernels: how the rows of one block are dominated by another block.

The Dask driver (:mod:`gpurank.engine.distributed`) computes exact domination counts and
Pareto ranks of a table it never gathers on one worker: rows are range-partitioned by a key
that never decreases along dominance (:func:`grid_key`), so a block can only be dominated
by itself and the blocks before it; each block's counts are its own plus the
:func:`cross_domination_count` of every earlier block whose :func:`box` can reach it
(:func:`box_relation`), and its ranks are :func:`seeded_rank` with lower bounds from the
:func:`cross_max_rank` of the earlier blocks. The final rank is a sample sort of the keys
(TOPSIS score, Pareto rank, row id): :func:`sort_keys` and :func:`count_preceding`, both by
the in-memory final rank's key (:func:`.select.rank_keys`).

Conventions of :mod:`gpurank.kernels.reference` (where the oracles live); blocks are
float64, finite, every criterion minimized.

Algorithms
----------
* m <= 4: the blocks stacked in lexicographic order and the 4-D divide and conquer of
  :mod:`._cdq` (only rows of ``costs_b`` contribute, only rows of ``costs_a`` are lifted),
  O((n_a + n_b) log^3).
* m >= 5 (and few pairs for the counts): :func:`cross_domination_count` scans, in parallel
  over the rows of ``costs_a``, the rows of ``costs_b`` in increasing row-sum order up to
  the row's own sum (a dominator never has a larger sum), O(n_a n_b m) worst case;
  :func:`cross_max_rank` and :func:`seeded_rank` use the k-d tree branch and bound of
  :mod:`._kdtree`.

References (``docs/references.md``): [Bentley1980], [Bentley1975].
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._validate import check_block, check_grids, check_pair, check_ranks
from ._cdq import cdq_chain_4d, cdq_count_4d
from ._kdtree import max_rank_of_dominators, seeded_ranks
from ._sort import count_before, dense_rank, dominates, row_sums
from .select import rank_keys, rank_order

__all__ = [
    "box",
    "box_relation",
    "count_preceding",
    "cross_domination_count",
    "cross_max_rank",
    "grid_key",
    "seeded_rank",
    "sort_keys",
]

#: Below this many pairs (n_a * n_b) the row-sum scan counts even for m <= 4: the divide and
#: conquer's sorts and allocations cost more than scanning ~1e6 pairs.
SMALL_PAIRS = 1 << 20


def cross_domination_count(costs_a, costs_b):
    """How many rows of ``costs_b`` dominate each row of ``costs_a``.

    Parameters
    ----------
    costs_a, costs_b
        As :func:`gpurank.kernels.reference.cross_domination_count`.

    Returns
    -------
    ndarray of int64, shape (n_a,)

    Examples
    --------
    A row equal to a row of the other block is not dominated by it:

    >>> cross_domination_count(np.array([[2.0, 2.0], [1.0, 1.0]]), np.array([[1.0, 1.0]]))
    array([1, 0])
    """
    a, b = check_pair(costs_a, costs_b)
    na, nb = a.shape[0], b.shape[0]
    if na == 0 or nb == 0 or a.shape[1] == 0:
        return np.zeros(na, dtype=np.int64)
    if a.shape[1] <= 4 and na * nb > SMALL_PAIRS:
        st = _Stacked(a, b)
        cnt = np.zeros(na + nb, dtype=np.int64)
        cdq_count_4d(st.y, st.z, st.w, st.is_b.astype(np.int64), st.is_a, cnt)
        return st.a_values(cnt)
    sb = row_sums(b)
    order = np.argsort(sb, kind="stable")
    return _scan_by_sum(a, row_sums(a), np.ascontiguousarray(b[order]),
                        np.ascontiguousarray(sb[order]))


@njit(cache=True, parallel=True, nogil=True)
def _scan_by_sum(a, sa, bs, sb):
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
            if dominates(bs, j, a, i, m):
                cnt += 1
        out[i] = cnt
    return out


class _Stacked:
    """Blocks ``a`` and ``b`` (m <= 4, zero-padded to 4 columns) stacked in lexicographic
    order, a row of ``a`` before an equal row of ``b`` (which does not dominate it), as the
    inputs of the 4-D divide and conquer: dense ranks ``y, z`` of columns 1 and 2, column 3
    ``w``, and which positions hold rows of ``a`` / ``b``."""

    def __init__(self, a, b):
        self.na = a.shape[0]
        c4 = _pad4(np.concatenate((a, b)))
        is_b = np.zeros(c4.shape[0], dtype=np.bool_)
        is_b[self.na:] = True
        self.order = np.lexsort((is_b, c4[:, 3], c4[:, 2], c4[:, 1], c4[:, 0]))
        self.y, self.z, self.w = _cdq_inputs(np.ascontiguousarray(c4[self.order]))
        self.is_b = np.ascontiguousarray(is_b[self.order])
        self.is_a = ~self.is_b

    def a_values(self, values):
        """Per-position ``values`` back to the row order of ``a``."""
        out = np.empty(self.na, dtype=values.dtype)
        out[self.order[self.is_a]] = values[self.is_a]
        return out


def _pad4(c):
    n, m = c.shape
    if m == 4:
        return c
    out = np.zeros((n, 4))
    out[:, :m] = c
    return out


def _cdq_inputs(cs):
    y, _ = dense_rank(np.ascontiguousarray(cs[:, 1]))
    z, _ = dense_rank(np.ascontiguousarray(cs[:, 2]))
    return y, z, np.ascontiguousarray(cs[:, 3])


def box(costs):
    """Per-column minimum and maximum ``(lo, hi)`` of a block, or ``None`` when it is empty.

    Examples
    --------
    >>> box(np.array([[1.0, 5.0], [3.0, 2.0]]))
    (array([1., 2.]), array([3., 5.]))
    """
    c = np.asarray(costs, dtype=np.float64)
    if c.shape[0] == 0:
        return None
    return c.min(axis=0), c.max(axis=0)


def box_relation(box_a, box_b):
    """What ``b``'s rows can do to ``a``'s rows, from their boxes, O(m).

    Returns
    -------
    {"none", "all", "some"}
        ``"none"`` when some column of ``b`` lies wholly above ``a`` (no row of ``b``
        dominates a row of ``a``; also when a block is empty), ``"all"`` when ``b``'s box
        lies wholly below ``a``'s (every row of ``b`` dominates every row of ``a``),
        ``"some"`` otherwise (compare rows).

    Examples
    --------
    >>> a = box(np.array([[2.0, 2.0], [3.0, 3.0]]))
    >>> box_relation(a, box(np.array([[0.0, 1.0]]))), box_relation(a, box(np.array([[4.0, 0.0]])))
    ('all', 'none')
    """
    if box_a is None or box_b is None:
        return "none"
    lo_a, hi_a = box_a
    lo_b, hi_b = box_b
    if np.any(lo_b > hi_a):
        return "none"
    if np.all(hi_b <= lo_a) and np.any(hi_b < lo_a):
        return "all"
    return "some"


def grid_key(costs, grids):
    """Partitioning key that never decreases along dominance.

    Sum over criteria of each value's position in a sorted grid of that criterion
    (``searchsorted(grids[k], costs[:, k], side="right")``): an approximate sum of
    per-column ranks, in exact integers, so a row that dominates another never has a larger
    key. Robust to heavy-tailed columns (grids are sample quantiles).

    Parameters
    ----------
    costs : ndarray of shape (n, m)
    grids : sequence of m sorted 1-D arrays

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> grid_key(np.array([[1.0, 10.0], [2.0, 30.0]]), (np.array([1.5]), np.array([20.0])))
    array([0, 2])
    """
    c = check_block(costs, "costs")
    check_grids(grids, c.shape[1])
    out = np.zeros(c.shape[0], dtype=np.int64)
    for k, g in enumerate(grids):
        out += np.searchsorted(np.asarray(g, dtype=np.float64), c[:, k], side="right")
    return out


def cross_max_rank(costs_a, costs_b, rank_b):
    """For each row of ``costs_a``, the largest ``rank_b`` among the rows of ``costs_b`` that
    dominate it, or -1 when no row of ``costs_b`` does.

    Parameters
    ----------
    costs_a, costs_b, rank_b
        As :func:`gpurank.kernels.reference.cross_max_rank`.

    Returns
    -------
    ndarray of int64, shape (n_a,)

    Examples
    --------
    >>> cross_max_rank(np.array([[3.0, 3.0], [1.0, 1.0]]), np.array([[2.0, 2.0]]), [7])
    array([ 7, -1])
    """
    a, b = check_pair(costs_a, costs_b)
    rb = check_ranks(rank_b, b.shape[0], "rank_b")
    na, nb = a.shape[0], b.shape[0]
    if na == 0 or nb == 0 or a.shape[1] == 0:
        return np.full(na, -1, dtype=np.int64)
    if a.shape[1] >= 5:
        return max_rank_of_dominators(a, b, rb)
    st = _Stacked(a, b)
    rank = np.full(na + nb, -1, dtype=np.int64)
    rank[st.is_b] = rb[st.order[st.is_b] - na]
    dom = np.full(na + nb, -1, dtype=np.int64)
    cdq_chain_4d(st.y, st.z, st.w, rank, dom, st.is_b, st.is_a)
    return st.a_values(dom)


def seeded_rank(costs, lower=None):
    """Longest dominance chains inside one block with lower bounds from outside.

    Parameters
    ----------
    costs, lower
        As :func:`gpurank.kernels.reference.seeded_rank`: ``rank[i] = max(lower[i], 1 +
        max(rank[j] for rows j of the block dominating i))``.

    Returns
    -------
    ndarray of int32, shape (n,)

    Notes
    -----
    m <= 4: equal rows grouped (they share their dominators; a group carries its largest
    lower bound), then the 4-D divide and conquer of longest chains over the groups in
    lexicographic order, O(n log^3 n). m >= 5: the rows in a topological order of dominance
    (row sum, then lexicographic), each ranked by branch and bound on a k-d tree of the rows
    ranked so far, O(n^2 m) worst case.

    Examples
    --------
    >>> seeded_rank(np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), [0, 6, 0])
    array([0, 6, 7], dtype=int32)
    """
    c = check_block(costs, "costs")
    n, m = c.shape
    low = np.zeros(n, dtype=np.int64) if lower is None else check_ranks(lower, n, "lower")
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    low = np.maximum(low, 0)
    if m == 0:
        return low.astype(np.int32)
    if m >= 5:
        keys = tuple(c[:, k] for k in range(m - 1, -1, -1)) + (row_sums(c),)
        return seeded_ranks(c, low, np.lexsort(keys))
    c4 = _pad4(c)
    order = np.lexsort((c4[:, 3], c4[:, 2], c4[:, 1], c4[:, 0]))
    cs = c4[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (cs[1:] != cs[:-1]).any(axis=1)
    gid = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    g = heads.shape[0]
    lo_sorted = low[order]
    lowmax = np.full(g, -1, dtype=np.int64)
    np.maximum.at(lowmax, gid, lo_sorted)
    y, z, w = _cdq_inputs(np.ascontiguousarray(cs[heads]))
    rank = lowmax.copy()
    dom = np.full(g, -1, dtype=np.int64)
    every = np.ones(g, dtype=np.bool_)
    cdq_chain_4d(y, z, w, rank, dom, every, every)
    out = np.empty(n, dtype=np.int32)
    out[order] = np.maximum(lo_sorted, dom[gid] + 1)
    return out


# ---------------------------------------------------------------------------------------
# Final rank order: the key of :func:`.select.rank_keys`
# ---------------------------------------------------------------------------------------


def sort_keys(score, prank, row_id):
    """A block's ``(score, pareto_rank, row_id)`` sorted by the final-rank key (best first:
    score descending, then Pareto rank, then row id; :func:`.select.rank_order`).

    Examples
    --------
    >>> sort_keys(np.array([0.5, 0.9, 0.5]), np.array([1, 0, 0]), np.array([7, 8, 9]))[2]
    array([8, 9, 7])
    """
    score = np.asarray(score, dtype=np.float64)
    prank = np.asarray(prank, dtype=np.int64)
    row_id = np.asarray(row_id, dtype=np.int64)
    order = rank_order(score, prank, row_id)
    return (np.ascontiguousarray(score[order]), np.ascontiguousarray(prank[order]),
            np.ascontiguousarray(row_id[order]))


def count_preceding(score, prank, row_id, sorted_keys):
    """For each query row, how many rows of a block come before it in the final-rank order
    (:func:`.select.rank_keys`: TOPSIS score descending, then Pareto rank, then row id).
    O(n_b + n log n_b).

    Parameters
    ----------
    score, prank, row_id, sorted_keys
        As :func:`gpurank.kernels.reference.count_preceding`, with ``sorted_keys`` from
        :func:`sort_keys`.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> keys = sort_keys(np.array([0.9, 0.5, 0.5]), np.array([3, 0, 0]), np.array([1, 2, 9]))
    >>> count_preceding(np.array([0.5]), np.array([0]), np.array([7]), keys)
    array([2])
    """
    # Both sides in the key's own terms (one negated copy of the block's scores), so the
    # search is a plain lexicographic one and the order is stated only in rank_keys.
    return count_before(rank_keys(score, prank, row_id), rank_keys(*sorted_keys))
