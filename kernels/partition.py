"""Cross-partition dominance kernels: how rows of one block are dominated by another block.

Used by the Dask path (:mod:`gpurank.engine.distributed`) to compute exact domination counts
and Pareto ranks without gathering the table on one worker. Same conventions as
:mod:`gpurank.kernels.reference`: ``costs`` are (n, m) float64, every criterion minimized,
``b`` dominates ``a`` when ``b <= a`` everywhere and ``b < a`` somewhere; equal rows never
dominate each other.

Each fast function has its slow NumPy oracle beside it (``*_reference``).

Algorithms
----------
* :func:`cross_domination_count` (``a`` by ``b``): for m <= 4 a CDQ divide and conquer over
  ``a`` and ``b`` stacked in lexicographic order (only ``b`` rows counted, only ``a`` rows
  counted into; steps with nothing to carry skipped), O((n_a + n_b) log^3); for m >= 5 (and small inputs) a Numba kernel, parallel over the
  rows of ``a``, that scans ``b`` in increasing row-sum order and stops at the first row
  whose sum exceeds the row of ``a`` (a dominator never has a larger sum: floating-point
  addition in a fixed order is monotone), O(n_a n_b m) worst case.
* :func:`box_relation`: bounding-box test of two blocks, O(m): ``"none"`` when some column of
  ``b`` is wholly above ``a`` (no row of ``b`` can dominate a row of ``a``), ``"all"`` when
  ``b``'s box lies wholly below ``a``'s (every row of ``b`` dominates every row of ``a``),
  ``"some"`` otherwise.
* :func:`grid_key` (used by the Dask path) and :func:`dominance_key`: ``sum_k (c_k - lo_k) * inv_k`` with ``inv_k >= 0``, summed in a
  fixed order by a compiled loop. Every step is a monotone IEEE operation, so a dominator
  never has a larger key: range-partitioning rows by this key makes dominance flow only from
  lower to equal-or-higher key partitions.
* :func:`cross_max_rank` (``a`` by ranked ``b``): for each row of ``a`` the largest rank
  among the rows of ``b`` that dominate it (-1 when none). A static k-d tree over ``b``
  (median splits, leaves of 32 rows) whose nodes carry their largest rank, queried by branch
  and bound: a node is skipped when its box cannot reach the row or its largest rank cannot
  improve the answer; a node whose box lies wholly (and strictly somewhere) below the row
  answers with its largest rank in O(1). O(n_a n_b m) worst case, far less on real data.
* :func:`seeded_rank`: non-dominated sorting of one block that takes lower bounds from
  outside: rows in a topological order (row sum, then lexicographic), ``rank = max(lower,
  1 + largest rank of the block's rows that dominate it)``, found with the same k-d tree
  updated as ranks are assigned. With ``lower = 0`` it is ``pareto_rank``.
* :func:`pareto_rank_upto`: ``min(pareto_rank, depth)`` by peeling ``depth`` fronts with
  ``cpu.pareto_front`` on the rows not ranked yet, O(depth x front cost); rows left after
  ``depth`` fronts get ``depth``. Its filters compose: a row's rank inside any subset of the
  rows is at most its rank in the whole table, and the first ``depth`` fronts of the table
  are closed under "dominates a row of rank < depth", so ranking the union of per-partition
  candidates (local rank < depth) gives the exact ``min(rank, depth)`` of the whole table.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _shared
# Building blocks shared with the single-table kernels (one implementation each).
from .cpu import _build_kdtree, _cdq_max_3d, _dense_rank, _row_sums

__all__ = [
    "box",
    "box_relation",
    "count_preceding",
    "count_preceding_reference",
    "cross_domination_count",
    "cross_domination_count_reference",
    "cross_max_rank",
    "cross_max_rank_reference",
    "dominance_key",
    "grid_key",
    "pareto_rank_upto",
    "pareto_rank_upto_reference",
    "seeded_rank",
    "seeded_rank_reference",
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


@njit(cache=True, parallel=True, nogil=True)
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
    if m <= 4 and na * nb > _SMALL_PAIRS:
        return _cross_count_cdq(a, b)
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
# Longest dominance chains across blocks: key partitioning, cross max rank, seeded ranks
# ---------------------------------------------------------------------------------------

_LEAF = 32


@njit(cache=True, nogil=True)
def _dominance_key(c, lo, inv):
    n, m = c.shape
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(m):
            s += (c[i, k] - lo[k]) * inv[k]
        out[i] = s
    return out


def grid_key(costs, grids):
    """Sum over criteria of each value's position in a sorted grid of that criterion
    (``searchsorted(grids[k], costs[:, k], side="right")``): an approximate sum of
    per-column ranks, in exact integers, so a row that dominates another never has a larger
    key. Robust to heavy-tailed columns (grids are sample quantiles). Returns int64[n]."""
    c = _as_costs(costs, "costs")
    if len(grids) != c.shape[1]:
        raise ValueError(f"grids has {len(grids)} entries and costs {c.shape[1]} columns")
    out = np.zeros(c.shape[0], dtype=np.int64)
    for k, g in enumerate(grids):
        out += np.searchsorted(np.asarray(g, dtype=np.float64), c[:, k], side="right")
    return out


def dominance_key(costs, lo, inv):
    """``sum_k (costs[:, k] - lo[k]) * inv[k]`` in a fixed order (``inv >= 0``): a row that
    dominates another never has a larger key (every operation is monotone)."""
    c = _as_costs(costs, "costs")
    lo = np.ascontiguousarray(lo, dtype=np.float64)
    inv = np.ascontiguousarray(inv, dtype=np.float64)
    if lo.shape != (c.shape[1],) or inv.shape != (c.shape[1],) or np.any(inv < 0):
        raise ValueError("lo and inv must have one entry per column and inv must be >= 0")
    return _dominance_key(c, lo, inv)


@njit(cache=True, nogil=True)
def _kd_best(cs, rank, start, end, lo, hi, depth, best_in, q, i, best, stack):
    """Largest rank among the tree's rows that dominate row ``i`` of ``q``, or ``best`` when
    none beats it (branch and bound; rows with rank < 0 are not there yet)."""
    m = cs.shape[1]
    first_leaf = (1 << depth) - 1
    stack[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        nd = stack[sp]
        if best_in[nd] <= best:
            continue
        skip = False
        below = True
        strict = False
        for k in range(m):
            v = q[i, k]
            if lo[nd, k] > v:
                skip = True
                break
            if hi[nd, k] > v:
                below = False
            elif hi[nd, k] < v:
                strict = True
        if skip:
            continue
        if below and strict:
            best = best_in[nd]
            continue
        if nd >= first_leaf:
            for j in range(start[nd], end[nd]):
                rj = rank[j]
                if rj > best and _dominates(cs, j, q, i, m):
                    best = rj
        else:
            a = 2 * nd + 1
            b = 2 * nd + 2
            if best_in[a] >= best_in[b]:  # the more promising child is popped first
                stack[sp] = b
                stack[sp + 1] = a
            else:
                stack[sp] = a
                stack[sp + 1] = b
            sp += 2
    return best


@njit(cache=True, nogil=True)
def _cross_max(q, cs, rank, start, end, lo, hi, depth):
    nnodes = start.shape[0]
    first_leaf = (1 << depth) - 1
    best_in = np.full(nnodes, -1, dtype=np.int64)
    for t in range(first_leaf, nnodes):
        for j in range(start[t], end[t]):
            best_in[t] = max(best_in[t], rank[j])
    for t in range(first_leaf - 1, -1, -1):
        best_in[t] = max(best_in[2 * t + 1], best_in[2 * t + 2])
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    out = np.empty(q.shape[0], dtype=np.int64)
    for i in range(q.shape[0]):
        out[i] = _kd_best(cs, rank, start, end, lo, hi, depth, best_in, q, i, -1, stack)
    return out


@njit(cache=True, nogil=True)
def _gather(c, perm):
    n, m = c.shape
    out = np.empty((n, m))
    for t in range(n):
        for k in range(m):
            out[t, k] = c[perm[t], k]
    return out


def _check_ranks(rank, n, name):
    r = np.ascontiguousarray(rank, dtype=np.int64)
    if r.shape != (n,):
        raise ValueError(f"{name} must have one entry per row ({n}); got shape {r.shape}")
    return r


def cross_max_rank(costs_a, costs_b, rank_b):
    """For each row of ``costs_a``, the largest ``rank_b`` among the rows of ``costs_b`` that
    dominate it, or -1 when no row of ``costs_b`` does.

    Parameters
    ----------
    costs_a : ndarray of shape (n_a, m)
    costs_b : ndarray of shape (n_b, m)
        Criteria to minimize, finite. Not mutated.
    rank_b : ndarray of int, shape (n_b,), >= 0

    Returns
    -------
    ndarray of int64, shape (n_a,)
    """
    a, b = _check_pair(costs_a, costs_b)
    rb = _check_ranks(rank_b, b.shape[0], "rank_b")
    na, nb = a.shape[0], b.shape[0]
    if na == 0 or nb == 0 or a.shape[1] == 0:
        return np.full(na, -1, dtype=np.int64)
    if a.shape[1] <= 4:
        return _cross_cdq(a, b, rb)
    perm, start, end, lo, hi, depth = _build_kdtree(b, _LEAF)
    return _cross_max(a, _gather(b, perm), np.ascontiguousarray(rb[perm]), start, end, lo,
                      hi, depth)


def cross_max_rank_reference(costs_a, costs_b, rank_b):
    """NumPy oracle of :func:`cross_max_rank` (O(n_a n_b m) memory)."""
    a, b = _check_pair(costs_a, costs_b)
    rb = _check_ranks(rank_b, b.shape[0], "rank_b")
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.full(a.shape[0], -1, dtype=np.int64)
    le = np.all(b[None, :, :] <= a[:, None, :], axis=2)
    lt = np.any(b[None, :, :] < a[:, None, :], axis=2)
    dom = le & lt
    return np.where(dom, rb[None, :], -1).max(axis=1).astype(np.int64)


@njit(cache=True, nogil=True)
def _seeded(cs, lower, start, end, lo, hi, depth, topo):
    n = cs.shape[0]
    nnodes = start.shape[0]
    first_leaf = (1 << depth) - 1
    leaf_of = np.empty(n, dtype=np.int64)
    for t in range(first_leaf, nnodes):
        for p in range(start[t], end[t]):
            leaf_of[p] = t
    best_in = np.full(nnodes, -1, dtype=np.int64)
    rank = np.full(n, -1, dtype=np.int64)
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    for t in range(n):
        i = topo[t]
        r = _kd_best(cs, rank, start, end, lo, hi, depth, best_in, cs, i, lower[i] - 1,
                     stack) + 1
        rank[i] = r
        nd = leaf_of[i]
        while best_in[nd] < r:
            best_in[nd] = r
            if nd == 0:
                break
            nd = (nd - 1) // 2
    return rank


# -- m <= 4: CDQ divide and conquer over the lexicographic order ---------------------------


@njit(cache=True, nogil=True)
def _cdq_sum_3d(y, z, w, uz, out):
    """``out[b] +=`` the sum of ``w`` over earlier points with y <= and z <= (merge sort on y,
    Fenwick sums on z)."""
    g = y.shape[0]
    idx = np.arange(g)
    buf = np.empty(g, dtype=np.int64)
    tree = np.zeros(uz + 1, dtype=np.int64)
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
                    if w[a]:
                        p = z[a]
                        while p <= uz:
                            tree[p] += w[a]
                            p += p & (-p)
                    buf[t] = a
                    i += 1
                else:
                    b = idx[j]
                    p = z[b]
                    q = 0
                    while p > 0:
                        q += tree[p]
                        p -= p & (-p)
                    out[b] += q
                    buf[t] = b
                    j += 1
                t += 1
            for t in range(s, mid):
                a = idx[t]
                if w[a]:
                    p = z[a]
                    while p <= uz:
                        tree[p] = 0
                        p += p & (-p)
        tmp = idx
        idx = buf
        buf = tmp
        width *= 2


@njit(cache=True, nogil=True)
def _chain4_count(y, z, wv, contrib, lift, cnt):
    """Like :func:`_chain4` with counts: each lifted point gets ``cnt +=`` the number of
    contributing points before it in position that weakly precede it in (y, z, wv)."""
    g = y.shape[0]
    cc = np.zeros(g + 1, dtype=np.int64)
    cl = np.zeros(g + 1, dtype=np.int64)
    for t in range(g):
        cc[t + 1] = cc[t] + (1 if contrib[t] else 0)
        cl[t + 1] = cl[t] + (1 if lift[t] else 0)
    st_lo = np.empty(128, dtype=np.int64)
    st_hi = np.empty(128, dtype=np.int64)
    st_lo[0] = 0
    st_hi[0] = g
    sp = 1
    while sp > 0:  # order does not matter for counts
        sp -= 1
        lo = st_lo[sp]
        hi = st_hi[sp]
        if hi - lo <= 1:
            continue
        mid = (lo + hi) // 2
        st_lo[sp] = lo
        st_hi[sp] = mid
        st_lo[sp + 1] = mid
        st_hi[sp + 1] = hi
        sp += 2
        if cc[mid] - cc[lo] == 0 or cl[hi] - cl[mid] == 0:
            continue
        k = hi - lo
        key = np.empty(k, dtype=np.int64)
        for t in range(k):
            key[t] = 2 * y[lo + t] + (1 if lo + t >= mid else 0)
        o = np.argsort(key)
        zz = np.empty(k, dtype=np.int64)
        ww = np.empty(k)
        val = np.zeros(k, dtype=np.int64)
        part = np.zeros(k, dtype=np.int64)
        for t in range(k):
            p = lo + o[t]
            zz[t] = z[p]
            ww[t] = wv[p]
            if p < mid and contrib[p]:
                val[t] = 1
        wr, uw = _dense_rank(ww)
        _cdq_sum_3d(zz, wr, val, uw, part)
        for t in range(k):
            p = lo + o[t]
            if p >= mid and lift[p]:
                cnt[p] += part[t]


@njit(cache=True, nogil=True)
def _chain4(y, z, wv, rank, dom, contrib, lift):
    """Points in lexicographic order (column 0 implied by the position; y, z dense ranks of
    columns 1, 2; wv column 3). CDQ over positions run in order (left half final, then the
    left -> right step, then the right half). A step gives each right point with ``lift``
    the largest ``rank`` q among left points with ``contrib`` that weakly precede it in
    (y, z, wv): ``dom = max(dom, q)``, ``rank = max(rank, q + 1)``; a step with no
    contributing point on the left or no lifted point on the right is skipped.
    O(n log^3 n)."""
    g = y.shape[0]
    cc = np.zeros(g + 1, dtype=np.int64)  # prefix counts of contributing / lifted points
    cl = np.zeros(g + 1, dtype=np.int64)
    for t in range(g):
        cc[t + 1] = cc[t] + (1 if contrib[t] else 0)
        cl[t + 1] = cl[t] + (1 if lift[t] else 0)
    st_lo = np.empty(128, dtype=np.int64)
    st_hi = np.empty(128, dtype=np.int64)
    st_ph = np.empty(128, dtype=np.int64)
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
        if cc[mid] - cc[lo] == 0 or cl[hi] - cl[mid] == 0:
            st_lo[sp] = mid  # nothing flows from the left half to the right half
            st_hi[sp] = hi
            st_ph[sp] = 0
            sp += 1
            continue
        k = hi - lo
        key = np.empty(k, dtype=np.int64)
        for t in range(k):
            key[t] = 2 * y[lo + t] + (1 if lo + t >= mid else 0)
        o = np.argsort(key)
        zz = np.empty(k, dtype=np.int64)
        ww = np.empty(k)
        val = np.empty(k, dtype=np.int64)
        for t in range(k):
            p = lo + o[t]
            zz[t] = z[p]
            ww[t] = wv[p]
            val[t] = rank[p] if (p < mid and contrib[p]) else -1
        wr, uw = _dense_rank(ww)
        part = _cdq_max_3d(zz, wr, val, uw)
        for t in range(k):
            p = lo + o[t]
            if p >= mid and lift[p] and part[t] >= 0:
                q = part[t]
                dom[p] = max(dom[p], q)
                rank[p] = max(rank[p], q + 1)
        st_lo[sp] = mid
        st_hi[sp] = hi
        st_ph[sp] = 0
        sp += 1


def _cross_count_cdq(a, b):
    """cross_domination_count for m <= 4: a and b stacked in lexicographic order (a row of
    ``a`` before an equal row of ``b``), b rows counted into the a rows they weakly precede."""
    na, nb = a.shape[0], b.shape[0]
    c4 = _pad4(np.concatenate((a, b)))
    is_b = np.zeros(na + nb, dtype=np.bool_)
    is_b[na:] = True
    order = np.lexsort((is_b, c4[:, 3], c4[:, 2], c4[:, 1], c4[:, 0]))
    y, z, w = _cdq_inputs(np.ascontiguousarray(c4[order]))
    contrib = np.ascontiguousarray(is_b[order])
    cnt = np.zeros(na + nb, dtype=np.int64)
    _chain4_count(y, z, w, contrib, ~contrib, cnt)
    out = np.empty(na, dtype=np.int64)
    lifted = ~contrib
    out[order[lifted]] = cnt[lifted]
    return out


def _pad4(c):
    n, m = c.shape
    if m == 4:
        return c
    out = np.zeros((n, 4))
    out[:, :m] = c
    return out


def _cdq_inputs(cs):
    y, _ = _dense_rank(np.ascontiguousarray(cs[:, 1]))
    z, _ = _dense_rank(np.ascontiguousarray(cs[:, 2]))
    return y, z, np.ascontiguousarray(cs[:, 3])


def _seeded_cdq(c, low):
    """seeded_rank for m <= 4: equal rows grouped (they share dominators; a group
    contributes its largest rank), CDQ over the groups in lexicographic order."""
    n = c.shape[0]
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
    ones = np.ones(g, dtype=np.bool_)
    _chain4(y, z, w, rank, dom, ones, ones)
    out = np.empty(n, dtype=np.int32)
    out[order] = np.maximum(lo_sorted, dom[gid] + 1)
    return out


def _cross_cdq(a, b, rb):
    """cross_max_rank for m <= 4: a and b stacked in lexicographic order (a row of ``a``
    before an equal row of ``b``, which does not dominate it); b rows contribute, a rows
    are lifted."""
    na, nb = a.shape[0], b.shape[0]
    c4 = _pad4(np.concatenate((a, b)))
    is_b = np.zeros(na + nb, dtype=np.bool_)
    is_b[na:] = True
    order = np.lexsort((is_b, c4[:, 3], c4[:, 2], c4[:, 1], c4[:, 0]))
    cs = np.ascontiguousarray(c4[order])
    y, z, w = _cdq_inputs(cs)
    contrib = np.ascontiguousarray(is_b[order])
    rank = np.full(na + nb, -1, dtype=np.int64)
    rank[contrib] = rb[order[contrib] - na]
    dom = np.full(na + nb, -1, dtype=np.int64)
    _chain4(y, z, w, rank, dom, contrib, ~contrib)
    out = np.empty(na, dtype=np.int64)
    lifted = ~contrib
    out[order[lifted]] = dom[lifted]
    return out


def _topo_order(c):
    """A topological order of dominance: row sum (compiled, fixed order), then
    lexicographic."""
    keys = tuple(c[:, k] for k in range(c.shape[1] - 1, -1, -1)) + (_row_sums(c),)
    return np.lexsort(keys)


def seeded_rank(costs, lower=None):
    """Longest dominance chains inside one block with lower bounds from outside:
    ``rank[i] = max(lower[i], 1 + max(rank[j] for rows j of the block dominating i))``
    (``lower`` defaults to 0: plain ``pareto_rank``). Returns int32[n].
    """
    c = _as_costs(costs, "costs")
    n, m = c.shape
    low = np.zeros(n, dtype=np.int64) if lower is None else _check_ranks(lower, n, "lower")
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    low = np.maximum(low, 0)
    if m == 0:
        return low.astype(np.int32)
    if m <= 4:
        return _seeded_cdq(c, low)
    perm, start, end, lo, hi, depth = _build_kdtree(c, _LEAF)
    cs = _gather(c, perm)
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    topo = inv[_topo_order(c)]
    r = _seeded(cs, np.ascontiguousarray(low[perm]), start, end, lo, hi, depth, topo)
    out = np.empty(n, dtype=np.int32)
    out[perm] = r
    return out


def seeded_rank_reference(costs, lower=None):
    """NumPy oracle of :func:`seeded_rank`: the all-pairs dominance matrix and a fixed-point
    iteration (O(n^2 m) memory)."""
    c = _as_costs(costs, "costs")
    n = c.shape[0]
    low = np.zeros(n, dtype=np.int64) if lower is None else _check_ranks(lower, n, "lower")
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    le = np.all(c[None, :, :] <= c[:, None, :], axis=2)
    lt = np.any(c[None, :, :] < c[:, None, :], axis=2)
    dom = le & lt  # dom[i, j]: row j dominates row i
    # least fixed point of rank = max(lower, 1 + max rank of dominators): longest chains
    rank = np.maximum(low, 0)
    while True:
        cand = np.where(dom, rank[None, :] + 1, 0).max(axis=1)
        new = np.maximum(rank, cand)
        if np.array_equal(new, rank):
            return rank.astype(np.int32)
        rank = new


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


@njit(cache=True, parallel=True, nogil=True)
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


def pareto_rank_upto(costs, depth):
    """``min(pareto_rank(costs), depth)``: fronts 0 .. depth-1 exactly, later rows ``depth``.

    Parameters
    ----------
    costs : array of shape (n, m)
        Finite costs, every criterion minimized.
    depth : int
        Fronts to peel, >= 1.

    Returns
    -------
    ndarray of int32, shape (n,)
    """
    from . import cpu

    c = _as_costs(costs, "costs")
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1; got {depth!r}")
    n = c.shape[0]
    rank = np.full(n, depth, dtype=np.int32)
    left = np.arange(n, dtype=np.int64)
    for r in range(int(depth)):
        if left.size == 0:
            break
        on = cpu.pareto_front(c[left])
        rank[left[on]] = r
        left = left[~on]
    return rank


def pareto_rank_upto_reference(costs, depth):
    """Oracle of :func:`pareto_rank_upto`: the full reference ranks, clipped."""
    from . import reference

    return np.minimum(reference.pareto_rank(np.asarray(costs, dtype=np.float64)),
                      depth).astype(np.int32)
