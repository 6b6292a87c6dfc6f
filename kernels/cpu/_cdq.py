"""Divide-and-conquer dominance counting (Bentley 1980; "CDQ" divide and conquer).

Points come in position order, and the question is always about the *earlier* points that
weakly precede a point in two or three more coordinates:

* 3-D (:func:`cdq_sum_3d`, :func:`cdq_max_3d`): positions, then ``y`` and ``z``. A bottom-up
  merge sort over positions on ``y``; while two runs are merged, every left point adds its
  value into a Fenwick tree over ``z`` and every right point queries its prefix, so each
  pair of runs contributes exactly the pairs (left, right) with ``y`` and ``z`` in order.
  O(g log g log u) for g points and u distinct ``z``. The merge/Fenwick loop is written once
  (:func:`_merge_3d`) for sums and for maxima.
* 4-D (:func:`cdq_count_4d`, :func:`cdq_chain_4d`): one level deeper. Positions are split in
  halves; the step left half -> right half is a static 3-D problem on ``(y, z, w)``, solved by
  sorting both halves on ``y`` (left first on ties) and running the 3-D loop on ``(z, w)``.
  O(g log^3 g) time, O(g) memory, however the data are correlated.

References
----------
J. L. Bentley, "Multidimensional divide-and-conquer", *Communications of the ACM* 23(4),
1980.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._sort import dense_rank


@njit(inline="always")
def _merge_3d(y, z, w, uz, out, use_max):
    """``out[b] (+)= w[a]`` over earlier points ``a`` with ``y[a] <= y[b]`` and ``z[a] <=
    z[b]``; ``(+)`` is ``+`` or, with ``use_max``, ``max``. A point whose value is the
    identity (0 for sums, -1 for maxima) adds nothing and is never put in the tree.

    ``use_max`` is a constant at every call site, so each of the two entry points below
    compiles to its own branch-free loop.
    """
    g = y.shape[0]
    none = -1 if use_max else 0
    idx = np.arange(g)
    buf = np.empty(g, dtype=np.int64)
    tree = np.full(uz + 1, none, dtype=np.int64)
    width = 1
    while width < g:
        for s in range(0, g, 2 * width):
            mid = min(s + width, g)
            e = min(s + 2 * width, g)
            if mid >= e:
                for t in range(s, e):
                    buf[t] = idx[t]
                continue
            i, j, t = s, mid, s
            while i < mid or j < e:
                if j >= e or (i < mid and y[idx[i]] <= y[idx[j]]):
                    a = idx[i]
                    if w[a] != none:
                        p = z[a]
                        while p <= uz:
                            if use_max:
                                tree[p] = max(tree[p], w[a])
                            else:
                                tree[p] += w[a]
                            p += p & (-p)
                    buf[t] = a
                    i += 1
                else:
                    b = idx[j]
                    p = z[b]
                    q = none
                    while p > 0:
                        if use_max:
                            q = max(q, tree[p])
                        else:
                            q += tree[p]
                        p -= p & (-p)
                    if use_max:
                        out[b] = max(out[b], q)
                    else:
                        out[b] += q
                    buf[t] = b
                    j += 1
                t += 1
            for t in range(s, mid):  # empty the tree for the next pair of runs
                a = idx[t]
                if w[a] != none:
                    p = z[a]
                    while p <= uz:
                        tree[p] = none
                        p += p & (-p)
        tmp = idx
        idx = buf
        buf = tmp
        width *= 2


@njit(cache=True, nogil=True)
def cdq_sum_3d(y, z, w, uz, out):
    """``out[b] +=`` the sum of ``w`` over earlier points with ``y <=`` and ``z <=``.

    ``y`` and ``z`` are int64 ranks (``z`` in 1..uz), ``w`` int64 weights (0: a point that
    only asks), ``out`` int64, all of length g.
    """
    _merge_3d(y, z, w, uz, out, False)


@njit(cache=True, nogil=True)
def cdq_max_3d(y, z, w, uz, out):
    """``out[b] = max(out[b], largest w of earlier points with y <= and z <=)``; ``w = -1``
    marks a point that only asks (start ``out`` at -1 for "none")."""
    _merge_3d(y, z, w, uz, out, True)


@njit(cache=True, nogil=True)
def _step(y, z, wv, lo, mid, hi):
    """The static 3-D problem of the 4-D step [lo, mid) -> [mid, hi): the positions sorted
    on ``y`` (left half first on ties) as offsets ``o`` from ``lo``, their ``z`` and the
    dense ranks ``wr`` (of ``uw`` values) of their ``wv``."""
    k = hi - lo
    key = np.empty(k, dtype=np.int64)
    for t in range(k):
        key[t] = 2 * y[lo + t] + (1 if lo + t >= mid else 0)
    o = np.argsort(key)
    zz = np.empty(k, dtype=np.int64)
    ww = np.empty(k)
    for t in range(k):
        p = lo + o[t]
        zz[t] = z[p]
        ww[t] = wv[p]
    wr, uw = dense_rank(ww)
    return o, zz, wr, uw


@njit(cache=True, nogil=True)
def cdq_count_4d(y, z, wv, weight, lift, cnt):
    """``cnt[p] +=`` the total ``weight`` of earlier points that weakly precede ``p`` in
    ``(y, z, wv)``, for every point with ``lift[p]``.

    ``y`` and ``z`` are int64 ranks, ``wv`` float64, ``weight`` int64 (0: contributes
    nothing). Bottom-up over positions; a step with no weight on the left or no lifted point
    on the right is skipped. O(g log^3 g).
    """
    g = y.shape[0]
    cw = np.zeros(g + 1, dtype=np.int64)  # prefix counts of contributing / lifted points
    cl = np.zeros(g + 1, dtype=np.int64)
    for t in range(g):
        cw[t + 1] = cw[t] + (1 if weight[t] != 0 else 0)
        cl[t + 1] = cl[t] + (1 if lift[t] else 0)
    width = 1
    while width < g:
        for s in range(0, g, 2 * width):
            mid = min(s + width, g)
            e = min(s + 2 * width, g)
            if mid >= e or cw[mid] == cw[s] or cl[e] == cl[mid]:
                continue
            o, zz, wr, uw = _step(y, z, wv, s, mid, e)
            k = e - s
            val = np.zeros(k, dtype=np.int64)
            for t in range(k):
                if s + o[t] < mid:
                    val[t] = weight[s + o[t]]
            part = np.zeros(k, dtype=np.int64)
            cdq_sum_3d(zz, wr, val, uw, part)
            for t in range(k):
                p = s + o[t]
                if p >= mid and lift[p]:
                    cnt[p] += part[t]
        width *= 2


@njit(cache=True, nogil=True)
def cdq_chain_4d(y, z, wv, rank, dom, contrib, lift):
    """Longest chains: ``dom[p] = max(dom[p], q)`` and ``rank[p] = max(rank[p], q + 1)`` for
    ``q`` the largest ``rank`` of an earlier point with ``contrib`` that weakly precedes a
    point ``p`` with ``lift`` in ``(y, z, wv)``.

    Ranks grow along chains, so the positions are processed in order: left half final,
    then the step left -> right, then the right half (an explicit stack: the recursion depth
    is log2 g). A step with no contributing point on the left or no lifted point on the
    right is skipped. O(g log^3 g).
    """
    g = y.shape[0]
    cc = np.zeros(g + 1, dtype=np.int64)  # prefix counts of contributing / lifted points
    cl = np.zeros(g + 1, dtype=np.int64)
    for t in range(g):
        cc[t + 1] = cc[t] + (1 if contrib[t] else 0)
        cl[t + 1] = cl[t] + (1 if lift[t] else 0)
    st_lo = np.empty(128, dtype=np.int64)
    st_hi = np.empty(128, dtype=np.int64)
    st_ph = np.empty(128, dtype=np.int64)  # 0: split [lo, hi); 1: its step, then the right
    st_lo[0] = 0
    st_hi[0] = g
    st_ph[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        lo = st_lo[sp]
        hi = st_hi[sp]
        ph = st_ph[sp]
        if hi - lo <= 1:
            continue
        mid = (lo + hi) // 2
        if ph == 0:
            st_lo[sp] = lo
            st_hi[sp] = hi
            st_ph[sp] = 1
            st_lo[sp + 1] = lo
            st_hi[sp + 1] = mid
            st_ph[sp + 1] = 0
            sp += 2
            continue
        if cc[mid] != cc[lo] and cl[hi] != cl[mid]:
            o, zz, wr, uw = _step(y, z, wv, lo, mid, hi)
            k = hi - lo
            val = np.empty(k, dtype=np.int64)
            for t in range(k):
                p = lo + o[t]
                val[t] = rank[p] if (p < mid and contrib[p]) else -1
            part = np.full(k, -1, dtype=np.int64)
            cdq_max_3d(zz, wr, val, uw, part)
            for t in range(k):
                p = lo + o[t]
                if p >= mid and lift[p] and part[t] >= 0:
                    q = part[t]
                    dom[p] = max(dom[p], q)
                    rank[p] = max(rank[p], q + 1)
        st_lo[sp] = mid  # then the right half
        st_hi[sp] = hi
        st_ph[sp] = 0
        sp += 1
