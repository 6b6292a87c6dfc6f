"""``pareto_front`` on the CPU (Numba).

Contract: :func:`gpurank.kernels.reference.pareto_front`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validate import check_costs
from ._ens import ens_kd
from ._prefilter import prefilter
from ._sort import dense_rank, group_end, lex_order

__all__ = ["pareto_front"]

#: The m = 3 staircase sweep hands over to the Fenwick sweep beyond this many stairs: the
#: staircase costs O(S) per insertion, the Fenwick sweep O(log n) per row.
STAIR_MAX = 8192


def pareto_front(costs):
    """Mark the non-dominated rows.

    Parameters
    ----------
    costs
        As :func:`gpurank.kernels.reference.pareto_front`.

    Returns
    -------
    ndarray of bool, shape (n,)

    Notes
    -----
    m = 1: a min scan, O(n). m >= 2: the exact pivot prefilter (:mod:`._prefilter`, rounds
    of O(n P m); finiteness checked in the same pass) drops the rows that sampled pivot rows
    dominate, then on the survivors:

    * m = 2: lexicographic sort and a sweep keeping the best second criterion, O(n log n).
    * m = 3: lexicographic sort and a sweep keeping the 2-D staircase of (c1, c2) over the
      front in a sorted array, O(n log S + |F| S), handing over to a sweep with a Fenwick
      tree of prefix minima of c2 over ranks of c1 (O(n log n)) beyond ``STAIR_MAX`` stairs
      ([KLP1975], [Fenwick1994]).
    * m >= 4: the k-d ENS of :mod:`._ens` restricted to front 0: each row is compared with
      the front so far through k-d ordered groups of 32 members whose least corners rule out
      98-99% of them, O(n (G + 32 V) m) for G corners tested and V groups scanned per row.

    No O(n^2) memory: peak extra memory is O(n m).

    References
    ----------
    [KLP1975] (``docs/references.md``).

    Examples
    --------
    Duplicates of a front row are all on the front:

    >>> pareto_front(np.array([[3.0, 1.0], [1.0, 3.0], [1.0, 3.0], [3.0, 3.0]]))
    array([ True,  True,  True, False])
    """
    c = check_costs(costs, finite=False)  # the prefilter's first pass checks finiteness
    n, m = c.shape
    if n == 0 or m <= 1:
        c = check_costs(c)
        if n == 0:
            return np.zeros(0, dtype=bool)
        if m == 0:
            return np.ones(n, dtype=bool)
        return c[:, 0] == c[:, 0].min()
    keep = prefilter(c)
    if keep.shape[0] == n:
        return _front_of(c)
    out = np.zeros(n, dtype=bool)
    if keep.shape[0]:
        out[keep] = _front_of(np.ascontiguousarray(c[keep]))
    return out


def _front_of(c):
    """Front of a finite, C-contiguous (n >= 1, m >= 2) matrix without the prefilter."""
    m = c.shape[1]
    order = lex_order(c)
    if m == 2:
        return _front_2d(c, order)
    if m == 3:
        out, finished = _front_3d_stair(c, order, STAIR_MAX)
        return out if finished else _front_3d(c, order)
    return ens_kd(c, order, True) == 0


@njit(cache=True, nogil=True)
def _front_2d(c, order):
    """Lexicographic sweep: a row is on the front when its c1 is the least of its c0 group
    and below every c1 of the earlier groups."""
    n = c.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    best = np.inf  # min second criterion over rows with a strictly smaller first one
    i = 0
    while i < n:
        a = c[order[i], 0]
        gmin = c[order[i], 1]
        j = i
        while j < n and c[order[j], 0] == a:
            r = order[j]
            if c[r, 1] == gmin and best > gmin:
                out[r] = True
            j += 1
        if gmin < best:
            best = gmin
        i = j
    return out


@njit(cache=True, nogil=True)
def _front_3d(c, order):
    """Lexicographic sweep, Fenwick tree of prefix minima of c2 over dense ranks of c1."""
    n = c.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    r1, u = dense_rank(c[:, 1].copy())
    tree = np.full(u + 1, np.inf)
    i = 0
    while i < n:
        head = order[i]
        j = group_end(c, order, i, 3)
        # query prefix min over ranks <= r1[head]
        p = r1[head]
        q = np.inf
        while p > 0:
            if tree[p] < q:
                q = tree[p]
            p -= p & (-p)
        v = c[head, 2]
        if not (q <= v):
            for t in range(i, j):
                out[order[t]] = True
        p = r1[head]
        while p <= u:
            if v < tree[p]:
                tree[p] = v
            p += p & (-p)
        i = j
    return out


@njit(cache=True, nogil=True)
def _front_3d_stair(c, order, max_s):
    """Lexicographic sweep keeping the 2-D staircase of (c1, c2) over the front so far in
    a sorted array (c1 increasing, c2 strictly decreasing): a row is dominated iff the last
    stair with c1 <= its c1 has c2 <= its c2 (groups of equal rows are decided together).
    O(n log S + |F| S) for a staircase of S stairs; gives up (finished False) when S would
    pass ``max_s`` (the Fenwick sweep ``_front_3d`` then takes over)."""
    n = c.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    sy = np.empty(max_s + 1)
    sz = np.empty(max_s + 1)
    ns = 0
    i = 0
    while i < n:
        head = order[i]
        j = group_end(c, order, i, 3)
        y = c[head, 1]
        z = c[head, 2]
        # last stair with sy <= y
        lo = 0
        hi = ns
        while lo < hi:
            mid = (lo + hi) >> 1
            if sy[mid] <= y:
                lo = mid + 1
            else:
                hi = mid
        p = lo - 1
        if p >= 0 and sz[p] <= z:
            i = j
            continue
        for t in range(i, j):
            out[order[t]] = True
        if p >= 0 and sy[p] == y:
            lo = p  # that stair has a larger c2: replaced below
        # drop stairs from lo on that (y, z) weakly dominates: sy >= y and sz >= z
        q = lo
        while q < ns and sz[q] >= z:
            q += 1
        removed = q - lo
        if removed == 0:
            if ns >= max_s:
                return out, False
            for t in range(ns, lo, -1):
                sy[t] = sy[t - 1]
                sz[t] = sz[t - 1]
            ns += 1
        elif removed > 1:
            for t in range(q, ns):
                sy[t - removed + 1] = sy[t]
                sz[t - removed + 1] = sz[t]
            ns -= removed - 1
        sy[lo] = y
        sz[lo] = z
        i = j
    return out, True
