"""Static "how many and how high below" kernels of the key-range divide and conquer.

Every question here is about two kinds of points, the *contributors* (rows of earlier key
ranges, whose ranks are known) and the *askers* (rows of later ranges): for each asker, how
many contributors lie weakly below it in every coordinate, and the largest value (Pareto
rank) among them. Nothing changes while the question is answered (the problem is static),
so one pass answers every asker.

* :func:`sum_max_3d`: the points in the order of the first coordinate (contributors first
  on ties), then the 3-D scheme of :mod:`._cdq`'s counting (brute-force leaves of
  ``LEAF_3D`` positions, bottom-up merges on the second coordinate with a Fenwick tree over
  the left run's local ranks on the third), with the count and the maximum kept together:
  one sort, one set of merges and one tree walk for both. O(k log^2 k).
* :func:`sweep_cells`: one coordinate exact and the others as small cell numbers (the key
  range a point lies in along another column, compared strictly): a sweep in the exact
  coordinate with a 2-D Fenwick tree of counts and of maxima over the cells, started from
  the totals of the cells before the sweep. O(k log^2 G) for G cells a side.
* :func:`cell_totals`: how many contributors each cell holds and their largest value.
* :func:`range_index`: the key range of each row, by binary search over splitter rows in a
  lexicographic order of the columns.

References (``docs/references.md``): [Bentley1980] (the divide and conquer), [Fenwick1994]
(the prefix tree).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._cdq import LEAF_3D, cut, depth, fill_prefix_counts, merge_keys, rank_left_run

__all__ = ["sum_max_3d", "sweep_cells", "cell_totals", "range_index"]

#: Same key layout as the 3-D counts of :mod:`._cdq`: ``rank << 34 | position << 2 |
#: contributes << 1 | asks``; ranks and positions below 2**29.
_POS = (1 << 32) - 1


@njit(cache=True, nogil=True)
def sum_max_3d(a, b, flags, val):
    """For every asking position ``j``: how many contributing positions ``i < j`` have
    ``a[i] <= a[j]`` and ``b[i] <= b[j]``, and the largest ``val[i]`` among them (-1: none).

    ``a``, ``b``: int64 ranks in [0, 2**29); ``flags``: int64, bit 1 contributes, bit 0
    asks; ``val``: int64 values of the contributors. Fewer than 2**29 positions.

    Returns
    -------
    (count int64, best int64), both of length k (0 and -1 where not asked).
    """
    k = a.shape[0]
    ka = np.empty(k, dtype=np.int64)
    kb = np.empty(k, dtype=np.int64)
    for t in range(k):
        f = flags[t] & 3
        ka[t] = (a[t] << 34) | (t << 2) | f
        kb[t] = (b[t] << 34) | (t << 2) | f
    cnt = np.zeros(k, dtype=np.int64)
    best = np.full(k, -1, dtype=np.int64)
    if k < 2:
        return cnt, best
    ia = np.empty(k, dtype=np.int64)
    ib = np.empty(k, dtype=np.int64)
    ja = np.empty(k, dtype=np.int64)
    jb = np.empty(k, dtype=np.int64)
    d = depth(k, LEAF_3D)
    _leaves(ka, kb, val, d, cnt, best, ia, ib)
    cv = np.empty(k + 1, dtype=np.int64)
    ca = np.empty(k + 1, dtype=np.int64)
    fill_prefix_counts(ka, cv, ca)
    loc = np.empty(k, dtype=np.int32)
    run = (k + (1 << d) - 1) >> d
    for lev in range(d, 0, -1):
        run = (k + (1 << (lev - 1)) - 1) >> (lev - 1)
        tree = np.empty(2 * run + 2, dtype=np.int64)
        for p in range(1 << (lev - 1)):
            s = cut(2 * p, k, lev)
            mid = cut(2 * p + 1, k, lev)
            e = cut(2 * p + 2, k, lev)
            if mid < e and cv[mid] != cv[s] and ca[e] != ca[mid]:
                _pair(val, cnt, best, ia, ib, ja, jb, loc, tree, s, mid, e)
            else:
                merge_keys(ib, jb, s, mid, e)
                merge_keys(ia, ja, s, mid, e)
        ia, ja = ja, ia
        ib, jb = jb, ib
    return cnt, best


@njit(cache=True, nogil=True)
def _leaves(ka, kb, val, d, cnt, best, ia, ib):
    """All pairs ``i < j`` of every leaf (the runs at depth ``d``); ``ia`` and ``ib`` get
    each leaf's keys in order, placed by the ranks the same comparisons give."""
    # duplicate-code: the leaf of _cdq's sums written out with a count and a maximum in the
    # same compiled loop (one pass over the pairs; a shared helper would return three values
    # per pair from the innermost loop)
    k = ka.shape[0]
    for q in range(1 << d):
        lo = cut(q, k, d)
        hi = cut(q + 1, k, d)
        for j in range(lo, hi):
            aj = ka[j]
            bj = kb[j]
            c = 0
            m = -1
            ra = 0
            rb = 0
            for i in range(lo, j):  # a key holds the position too: < means "<= and earlier"
                la = ka[i] < aj
                lb = kb[i] < bj
                hit = la & lb & (((ka[i] >> 1) & 1) == 1)
                c += hit
                v = val[i] if hit else -1
                m = v if v > m else m
                ra += la
                rb += lb
            for i in range(j + 1, hi):
                ra += ka[i] < aj
                rb += kb[i] < bj
            if aj & 1:
                cnt[j] += c
                if m > best[j]:
                    best[j] = m
            ia[lo + ra] = aj
            ib[lo + rb] = bj


@njit(cache=True, nogil=True)
def _pair(val, cnt, best, ia, ib, ja, jb, loc, tree, s, mid, e):
    """One run pair: the merge on ``b`` ranks the left points 1..h among themselves and
    gives each right point the number of left points at or below it; the merge on ``a``
    inserts every contributing left point at its local rank into a Fenwick tree of counts
    and maxima side by side (``tree[2 r]``, ``tree[2 r + 1]``: one walk for both; the
    bitmap of :mod:`._cdq`'s unit counts with a separate tree of maxima was no faster) and
    queries the prefix of every asking right point."""
    h = rank_left_run(ib, jb, loc, s, mid, e)
    for r in range(2 * h + 2):
        tree[r] = 0 if (r & 1) == 0 else -1
    # duplicate-code: boilerplate, the merge of two sorted runs (as _cdq's), with a count
    # and a maximum per insertion and query
    i, j, t = s, mid, s
    while i < mid and j < e:
        x = ia[i]
        y = ia[j]
        if y < x:
            if y & 1:
                _ask(tree, loc, cnt, best, (y >> 2) & _POS)
            ja[t] = y
            j += 1
        else:
            if x & 2:
                p = (x >> 2) & _POS
                r = loc[p]
                v = val[p]
                while r <= h:  # count and maximum side by side: one walk for both
                    tree[2 * r] += 1
                    if tree[2 * r + 1] < v:
                        tree[2 * r + 1] = v
                    r += r & (-r)
            ja[t] = x
            i += 1
        t += 1
    while i < mid:
        ja[t] = ia[i]
        i += 1
        t += 1
    while j < e:
        y = ia[j]
        if y & 1:
            _ask(tree, loc, cnt, best, (y >> 2) & _POS)
        ja[t] = y
        j += 1
        t += 1


@njit(inline="always")
def _ask(tree, loc, cnt, best, p):
    """An asking right point adds the count and the maximum of its prefix."""
    r = loc[p]
    c = 0
    m = best[p]
    while r > 0:
        c += tree[2 * r]
        if tree[2 * r + 1] > m:
            m = tree[2 * r + 1]
        r -= r & (-r)
    cnt[p] += c
    best[p] = m


@njit(cache=True, nogil=True)
def sweep_cells(order, cy, cz, contributes, val, init_count, init_best):
    """For every asker along ``order`` (the sweep order of the exact coordinate,
    contributors first on ties): the contributors before it whose cell ``(cy, cz)`` is
    strictly below its own in both, counted, and their largest ``val`` (-1: none).

    ``cy``, ``cz``: int64 cells in [0, gy) x [0, gz); ``init_count``, ``init_best``: (gy,
    gz) totals of the contributors that come before the whole sweep (earlier ranges of the
    exact coordinate). Points that do not contribute ask.

    Returns
    -------
    (count int64, best int64) per point (0 and -1 for contributors).
    """
    n = order.shape[0]
    gy, gz = init_count.shape
    tc = np.zeros((gy + 1, gz + 1), dtype=np.int64)  # Fenwick trees, index 0 unused
    tm = np.full((gy + 1, gz + 1), -1, dtype=np.int64)
    for y in range(gy):
        for z in range(gz):
            if init_count[y, z] > 0:
                _raise_2d(tc, tm, y + 1, z + 1, init_count[y, z], init_best[y, z])
    cnt = np.zeros(n, dtype=np.int64)
    best = np.full(n, -1, dtype=np.int64)
    for t in range(n):
        p = order[t]
        if contributes[p]:
            _raise_2d(tc, tm, cy[p] + 1, cz[p] + 1, 1, val[p])
        else:
            c = 0
            m = -1
            i = cy[p]
            while i > 0:
                k = cz[p]
                while k > 0:
                    c += tc[i, k]
                    if tm[i, k] > m:
                        m = tm[i, k]
                    k -= k & (-k)
                i -= i & (-i)
            cnt[p] = c
            best[p] = m
    return cnt, best


@njit(inline="always")
def _raise_2d(tc, tm, y, z, c, v):
    gy = tc.shape[0]
    gz = tc.shape[1]
    i = y
    while i < gy:
        k = z
        while k < gz:
            tc[i, k] += c
            if tm[i, k] < v:
                tm[i, k] = v
            k += k & (-k)
        i += i & (-i)


@njit(cache=True, nogil=True)
def cell_totals(cy, cz, val, gy, gz):
    """How many points each cell ``(cy, cz)`` of a (gy, gz) grid holds, and their largest
    ``val`` (-1: none)."""
    cnt = np.zeros((gy, gz), dtype=np.int64)
    best = np.full((gy, gz), -1, dtype=np.int64)
    for t in range(cy.shape[0]):
        cnt[cy[t], cz[t]] += 1
        if val[t] > best[cy[t], cz[t]]:
            best[cy[t], cz[t]] = val[t]
    return cnt, best


@njit(cache=True, nogil=True)
def range_index(c, cols, splitters):
    """For each row of ``c``: how many rows of ``splitters`` (sorted, each of
    ``len(cols)`` values) are lexicographically <= the row read in column order ``cols``."""
    n = c.shape[0]
    s = splitters.shape[0]
    w = cols.shape[0]
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        lo = 0
        hi = s
        while lo < hi:  # the first splitter lexicographically greater than the row
            mid = (lo + hi) >> 1
            le = True
            for k in range(w):
                a = splitters[mid, k]
                v = c[i, cols[k]]
                if a != v:
                    le = a < v
                    break
            if le:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
    return out
