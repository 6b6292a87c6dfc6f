"""``pareto_rank`` on the CPU (Numba): non-dominated sorting.

Contract: :func:`gpurank.kernels.reference.pareto_rank`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validate import check_costs, check_depth
from ._ens import ens_kd, ens_lex
from ._sort import lex_order
from .front import pareto_front

__all__ = ["pareto_rank"]

#: From this many columns on, fronts are held as grouped k-d parts (ENS ``ens_kd``); below,
#: as pruned blocks (``ens_lex``), whose kept projections stay few with two projected columns.
KD_MIN_M = 4


def pareto_rank(costs, *, depth=None):
    """Non-dominated sorting: the index of the front each row belongs to (front 0 first).

    Parameters
    ----------
    costs, depth
        As :func:`gpurank.kernels.reference.pareto_rank`; with ``depth`` only fronts ``0 ..
        depth-1`` are peeled.

    Returns
    -------
    ndarray of int32, shape (n,)

    Notes
    -----
    * m = 1: dense ranking, O(n log n).
    * m = 2: a lexicographic sweep keeping the last c1 of each front (binary search over
      the fronts), O(n log n).
    * m >= 3: ENS-BS over the lexicographic order (:mod:`._ens`): m = 3 with per-front
      pruned projections scanned in vectorized windows, O(n log F K m) for K kept
      projections per front; m >= 4 with fronts held as k-d ordered groups of 32 members,
      O(n log F (G + 32 V) m) for G corners tested and V groups scanned per query; for
      m = 4 the search over the fronts starts from a coarse grid's bounds on the rank
      (:mod:`._rank_grid`). O(n^2 m) worst case for both.
    * ``depth``: ``depth`` fronts peeled with :func:`~gpurank.kernels.cpu.pareto_front` on
      the rows not ranked yet, O(depth x front cost); the rows left get ``depth``.

    References
    ----------
    [Zhang2015] (``docs/references.md``).

    Examples
    --------
    >>> c = np.array([[0.0, 2.0, 2.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    >>> pareto_rank(c), pareto_rank(c, depth=1)
    (array([0, 0, 1, 2], dtype=int32), array([0, 0, 1, 1], dtype=int32))
    """
    c = check_costs(costs)
    depth = check_depth(depth)
    n, m = c.shape
    if depth is not None:
        return _peel(c, depth)
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if m == 0:
        return np.zeros(n, dtype=np.int32)
    if m == 1:
        return np.unique(c[:, 0], return_inverse=True)[1].reshape(-1).astype(np.int32)
    order = lex_order(c)
    if m == 2:
        return _rank_2d(c, order)
    return (ens_kd if m >= KD_MIN_M else ens_lex)(c, order)


def _peel(c, depth):
    """``min(pareto_rank, depth)`` by peeling ``depth`` fronts."""
    n = c.shape[0]
    rank = np.full(n, depth, dtype=np.int32)
    left = np.arange(n, dtype=np.int64)
    for r in range(depth):
        if left.size == 0:
            break
        on = pareto_front(c[left])
        rank[left[on]] = r
        left = left[~on]
    return rank


@njit(cache=True, nogil=True)
def _rank_2d(c, order):
    """m = 2 ranks in one sweep over the lexicographic order: members of one front have
    strictly decreasing c1 along the sweep, so front k is summed up by its last c1 (its
    tail) and tails increase with k; a row (group of equal rows) joins the first front
    whose tail is > its c1 (branch-free binary search), O(n log F) after the sort. The
    rows are gathered in sweep order first (sequential reads)."""
    n = c.shape[0]
    x = np.empty(n, dtype=c.dtype)
    y = np.empty(n, dtype=c.dtype)
    for t in range(n):
        r = order[t]
        x[t] = c[r, 0]
        y[t] = c[r, 1]
    rank = np.empty(n, dtype=np.int32)
    tails = np.empty(n + 1, dtype=c.dtype)
    nf = 0
    i = 0
    while i < n:
        xi = x[i]
        yi = y[i]
        j = i + 1
        while j < n and x[j] == xi and y[j] == yi:
            j += 1
        # first front whose tail is > yi (tails[0:nf] increasing)
        base = 0
        ln = nf
        while ln > 1:
            half = ln >> 1
            base = base + half if tails[base + half] <= yi else base
            ln -= half
        lo = base + 1 if (nf > 0 and tails[base] <= yi) else base
        tails[lo] = yi
        if lo == nf:
            nf += 1
        for t in range(i, j):
            rank[order[t]] = lo
        i = j
    return rank
