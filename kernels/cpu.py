"""CPU kernels compiled with Numba (``njit``, ``parallel=True`` where it pays).

Same names, signatures and contract as :mod:`gpurank.kernels.reference` (read the contract
there). Inputs are validated on the host by :mod:`._validate` before any compiled code runs;
inputs are never mutated. No kernel allocates O(n^2): peak extra memory is O(n m).

This module must never import numba.cuda, cupy, cudf or cuml (a test pins that).

Algorithms (n rows, m criteria)
-------------------------------
* ``pareto_front``: m=1 a min scan, O(n). m=2 a lexicographic sort and a sweep keeping the
  best second criterion, O(n log n). m=3 a lexicographic sort and a sweep with a Fenwick
  tree of prefix minima of the third criterion over ranks of the second, O(n log n).
  m>=4 sort-filter-skyline (SFS): rows sorted by the sum of criteria (a topological order of
  dominance, equal sums ordered lexicographically), each compared only with the current
  front, blocks of rows checked in parallel; O(n |F| m) worst case, ~O(n m) when the front
  is small. Once the front passes 3000 rows it switches to the k-d tree with bounding-box
  pruning (``domination_count(cap=1)``).
* ``pareto_rank``: m=1 dense ranking, m=2 a lexicographic sweep with a Fenwick tree of
  prefix maxima of the rank, O(n log n). m=3 CDQ divide and conquer over the lexicographic
  order (longest chain in a 3-D partial order), O(n log^2 n). m>=4 best-front search
  one pass in topological order over a static k-d tree whose nodes carry the best rank
  assigned so far: rank = 1 + max rank of the dominators, found by branch and bound
  (``_ens_bs``, ENS with binary search over fronts, is kept as a simpler alternative).
* ``domination_count`` / ``dominated_count``: m=1 sort + binary search, m=2 a Fenwick
  sweep, m=3 CDQ divide and conquer with a Fenwick tree, O(n log^2 n). m>=4 a k-d tree
  (median splits, leaves of 32 rows) traversed per leaf with bounding-box pruning: a node
  whose box lies wholly below the leaf's box is counted in O(1), a node that cannot reach
  it is skipped. ``cap=k`` stops a leaf's traversal once all its rows reached k.
  ``dominated_count(c) == domination_count(-c)``.
* ``topsis``: two parallel passes, O(n m): column min/max/sum of squares, then distances
  and closeness fused in one pass.
* ``top_k``: ``argpartition`` + sort of the k selected, O(n + k log k).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _shared
from ._validate import check_cap, check_costs, check_k, check_scores, check_topsis_inputs

__all__ = [
    "pareto_front",
    "pareto_rank",
    "domination_count",
    "dominated_count",
    "topsis",
    "top_k",
]

_dominates = njit(inline="always")(_shared.dominates)
_rows_equal = njit(inline="always")(_shared.rows_equal)

_CACHE = True
_LEAF = 32  # k-d tree leaf size
_SFS_MAX_FRONT = 3000  # SFS switches to the k-d tree beyond this front size


# ---------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE)
def _lex_less(c, a, b, m):
    for k in range(m):
        x = c[a, k]
        y = c[b, k]
        if x < y:
            return True
        if x > y:
            return False
    return False


@njit(cache=_CACHE)
def _lex_sort_segment(c, order, lo, hi, tmp, m):
    """Stable lexicographic sort of ``order[lo:hi]`` (insertion sort for short runs,
    bottom-up merge sort otherwise)."""
    size = hi - lo
    if size <= 24:
        for i in range(lo + 1, hi):
            v = order[i]
            j = i - 1
            while j >= lo and _lex_less(c, v, order[j], m):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = v
        return
    width = 1
    while width < size:
        for s in range(lo, hi, 2 * width):
            mid = min(s + width, hi)
            e = min(s + 2 * width, hi)
            i, j, t = s, mid, s
            while i < mid and j < e:
                if _lex_less(c, order[j], order[i], m):
                    tmp[t] = order[j]
                    j += 1
                else:
                    tmp[t] = order[i]
                    i += 1
                t += 1
            while i < mid:
                tmp[t] = order[i]
                i += 1
                t += 1
            while j < e:
                tmp[t] = order[j]
                j += 1
                t += 1
        for t in range(lo, hi):
            order[t] = tmp[t]
        width *= 2


@njit(cache=_CACHE)
def _order_by_key(c, key):
    """Argsort by ``key``; runs of equal key are then ordered lexicographically by row.

    With ``key = row sums`` this is a topological order of dominance (a dominator has a
    sum <= the dominated row's, and when equal it is lexicographically smaller); with
    ``key = c[:, 0]`` it is the lexicographic order.
    """
    n, m = c.shape
    order = np.argsort(key, kind="mergesort")
    tmp = np.empty(n, dtype=order.dtype)
    i = 0
    while i < n:
        j = i + 1
        ki = key[order[i]]
        while j < n and key[order[j]] == ki:
            j += 1
        if j - i > 1:
            _lex_sort_segment(c, order, i, j, tmp, m)
        i = j
    return order


@njit(cache=_CACHE, parallel=True)
def _row_sums(c):
    n, m = c.shape
    s = np.empty(n, dtype=np.float64)
    for i in prange(n):
        acc = 0.0
        for k in range(m):
            acc += c[i, k]
        s[i] = acc
    return s


@njit(cache=_CACHE)
def _dense_rank(x):
    """1-based dense ranks of ``x`` (equal values share a rank) and the number of values."""
    n = x.shape[0]
    order = np.argsort(x)
    r = np.empty(n, dtype=np.int64)
    cur = 0
    for t in range(n):
        if t == 0 or x[order[t]] != x[order[t - 1]]:
            cur += 1
        r[order[t]] = cur
    return r, cur


@njit(cache=_CACHE, parallel=True)
def _gather_rows(c, order):
    n, m = c.shape
    out = np.empty((n, m), dtype=c.dtype)
    for t in prange(n):
        src = order[t]
        for k in range(m):
            out[t, k] = c[src, k]
    return out


def _topo(c):
    """Rows in a topological order of dominance and the gathered sorted copy."""
    order = _order_by_key(c, _row_sums(c))
    return order, _gather_rows(c, order)


# ---------------------------------------------------------------------------------------
# m = 1, 2, 3 sweeps
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE)
def _front_2d(c, order):
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


@njit(cache=_CACHE)
def _front_3d(c, order):
    """Lexicographic sweep, Fenwick tree of prefix minima of c2 over dense ranks of c1."""
    n = c.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    r1, u = _dense_rank(c[:, 1].copy())
    tree = np.full(u + 1, np.inf)
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, 3):
            j += 1
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


@njit(cache=_CACHE)
def _rank_2d(c, order):
    """Lexicographic sweep, Fenwick tree of prefix maxima of the rank over ranks of c1."""
    n = c.shape[0]
    rank = np.empty(n, dtype=np.int32)
    r1, u = _dense_rank(c[:, 1].copy())
    tree = np.full(u + 1, -1, dtype=np.int32)
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, 2):
            j += 1
        p = r1[head]
        q = -1
        while p > 0:
            if tree[p] > q:
                q = tree[p]
            p -= p & (-p)
        rk = q + 1
        for t in range(i, j):
            rank[order[t]] = rk
        p = r1[head]
        while p <= u:
            if rk > tree[p]:
                tree[p] = rk
            p += p & (-p)
        i = j
    return rank


@njit(cache=_CACHE)
def _count_2d(c, order):
    """Lexicographic sweep, Fenwick tree of counts over ranks of c1."""
    n = c.shape[0]
    cnt = np.empty(n, dtype=np.int64)
    r1, u = _dense_rank(c[:, 1].copy())
    tree = np.zeros(u + 1, dtype=np.int64)
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, 2):
            j += 1
        p = r1[head]
        q = 0
        while p > 0:
            q += tree[p]
            p -= p & (-p)
        for t in range(i, j):
            cnt[order[t]] = q
        p = r1[head]
        while p <= u:
            tree[p] += j - i
            p += p & (-p)
        i = j
    return cnt


@njit(cache=_CACHE)
def _unique_groups(c, order, m):
    """Group identical consecutive rows of ``order``: returns (heads, weights, group of row)."""
    n = order.shape[0]
    heads = np.empty(n, dtype=np.int64)
    weight = np.empty(n, dtype=np.int64)
    group = np.empty(n, dtype=np.int64)
    g = -1
    for t in range(n):
        r = order[t]
        if t == 0 or not _rows_equal(c, r, order[t - 1], m):
            g += 1
            heads[g] = r
            weight[g] = 0
        weight[g] += 1
        group[r] = g
    return heads[: g + 1].copy(), weight[: g + 1].copy(), group


@njit(cache=_CACHE)
def _cdq_count_3d(y, z, w, uz):
    """Points in position order (the lexicographic order of distinct rows); for each point
    count the weight of earlier points with y <= and z <= (bottom-up CDQ merge sort)."""
    g = y.shape[0]
    cnt = np.zeros(g, dtype=np.int64)
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
                take_left = j >= e or (i < mid and y[idx[i]] <= y[idx[j]])
                if take_left:
                    a = idx[i]
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
                    cnt[b] += q
                    buf[t] = b
                    j += 1
                t += 1
            for t in range(s, mid):
                a = idx[t]
                p = z[a]
                while p <= uz:
                    tree[p] -= w[a]
                    p += p & (-p)
        tmp = idx
        idx = buf
        buf = tmp
        width *= 2
    return cnt


@njit  # not cached: Numba's cache of self-recursive functions crashes on reload
def _cdq_rank_rec(y, z, rank, lo, hi, tree, uz, ia, ib):
    """Longest chain below each point, points [lo, hi) in position order."""
    if hi - lo <= 1:
        return
    mid = (lo + hi) // 2
    _cdq_rank_rec(y, z, rank, lo, mid, tree, uz, ia, ib)
    # left points sorted by y, right points sorted by y
    nl = mid - lo
    nr = hi - mid
    left = np.arange(lo, mid)
    right = np.arange(mid, hi)
    ly = np.empty(nl, dtype=np.int64)
    for t in range(nl):
        ly[t] = y[lo + t]
    ry = np.empty(nr, dtype=np.int64)
    for t in range(nr):
        ry[t] = y[mid + t]
    lo_ord = left[np.argsort(ly, kind="mergesort")]
    ro_ord = right[np.argsort(ry, kind="mergesort")]
    i = 0
    for t in range(nr):
        b = ro_ord[t]
        while i < nl and y[lo_ord[i]] <= y[b]:
            a = lo_ord[i]
            p = z[a]
            v = rank[a]
            while p <= uz:
                if v > tree[p]:
                    tree[p] = v
                p += p & (-p)
            i += 1
        p = z[b]
        q = -1
        while p > 0:
            if tree[p] > q:
                q = tree[p]
            p -= p & (-p)
        if q + 1 > rank[b]:
            rank[b] = q + 1
    for t in range(i):
        p = z[lo_ord[t]]
        while p <= uz:
            tree[p] = -1
            p += p & (-p)
    _cdq_rank_rec(y, z, rank, mid, hi, tree, uz, ia, ib)


@njit
def _rank_3d(c, order):
    n = c.shape[0]
    heads, weight, group = _unique_groups(c, order, 3)
    g = heads.shape[0]
    yv = np.empty(g)
    zv = np.empty(g)
    for t in range(g):
        yv[t] = c[heads[t], 1]
        zv[t] = c[heads[t], 2]
    y, _ = _dense_rank(yv)
    z, uz = _dense_rank(zv)
    rank = np.zeros(g, dtype=np.int64)
    tree = np.full(uz + 1, -1, dtype=np.int64)
    dummy = np.empty(0, dtype=np.int64)
    _cdq_rank_rec(y, z, rank, 0, g, tree, uz, dummy, dummy)
    out = np.empty(n, dtype=np.int32)
    for r in range(n):
        out[r] = rank[group[r]]
    return out


@njit(cache=_CACHE)
def _count_3d(c, order):
    n = c.shape[0]
    heads, weight, group = _unique_groups(c, order, 3)
    g = heads.shape[0]
    yv = np.empty(g)
    zv = np.empty(g)
    for t in range(g):
        yv[t] = c[heads[t], 1]
        zv[t] = c[heads[t], 2]
    y, _ = _dense_rank(yv)
    z, uz = _dense_rank(zv)
    cnt = _cdq_count_3d(y, z, weight, uz)
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = cnt[group[r]]
    return out


# ---------------------------------------------------------------------------------------
# SFS (front) and ENS-BS (ranks) for m >= 4
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE, parallel=True)
def _sfs_sorted(cs, max_front):
    """Front of rows ``cs`` given in a topological order; returns (bool per sorted row,
    finished). Gives up (finished False) once the front exceeds ``max_front`` rows: SFS is
    O(n |F|), and large fronts are better served by the k-d tree."""
    n, m = cs.shape
    on = np.zeros(n, dtype=np.bool_)
    front = np.empty((n, m), dtype=cs.dtype)
    nf = 0
    pos = 0
    block = 256
    dom = np.zeros(8192, dtype=np.bool_)
    while pos < n:
        e = min(pos + block, n)
        nb = e - pos
        nf0 = nf
        for t in prange(nb):
            i = pos + t
            d = False
            for f in range(nf0):
                if _dominates(front, f, cs, i, m):
                    d = True
                    break
            dom[t] = d
        for t in range(nb):
            if dom[t]:
                continue
            i = pos + t
            d = False
            for f in range(nf0, nf):
                if _dominates(front, f, cs, i, m):
                    d = True
                    break
            if not d:
                on[i] = True
                for k in range(m):
                    front[nf, k] = cs[i, k]
                nf += 1
        pos = e
        if nf > max_front:
            return on, False
        if block < 8192:
            block *= 2
    return on, True


@njit(cache=_CACHE)
def _ens_bs(cs):
    """Efficient non-dominated sort with binary search over fronts (rows in topological
    order). A row's rank is the first front none of whose members dominates it; that
    predicate is monotone in the front index, hence the binary search."""
    n, m = cs.shape
    rank = np.empty(n, dtype=np.int32)
    # per-front singly linked list of rows (newest first: in topological order recent
    # members are the likeliest dominators of the next rows)
    head = np.full(n + 1, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    nfronts = 0
    for i in range(n):
        lo = 0
        hi = nfronts  # answer in [lo, hi]; fronts < lo dominate i, front hi is new
        while lo < hi:
            mid = (lo + hi) // 2
            d = False
            f = head[mid]
            while f >= 0:
                if _dominates(cs, f, cs, i, m):
                    d = True
                    break
                f = nxt[f]
            if d:
                lo = mid + 1
            else:
                hi = mid
        rank[i] = lo
        nxt[i] = head[lo]
        head[lo] = i
        if lo == nfronts:
            nfronts += 1
    return rank


# ---------------------------------------------------------------------------------------
# k-d tree with bounding-box pruning (domination counts, large fronts)
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE)
def _select(c, perm, lo, hi, kth, dim):
    """Quickselect: reorder perm[lo:hi] so perm[kth] holds the kth value of c[:, dim]."""
    while hi - lo > 1:
        a = c[perm[lo], dim]
        b = c[perm[(lo + hi) // 2], dim]
        d = c[perm[hi - 1], dim]
        if a > b:
            a, b = b, a
        if b > d:
            b = d
            if a > b:
                b = a
        pivot = b
        i = lo
        j = hi - 1
        while i <= j:
            while c[perm[i], dim] < pivot:
                i += 1
            while c[perm[j], dim] > pivot:
                j -= 1
            if i <= j:
                tmp = perm[i]
                perm[i] = perm[j]
                perm[j] = tmp
                i += 1
                j -= 1
        if kth <= j:
            hi = j + 1
        elif kth >= i:
            lo = i
        else:
            return


@njit(cache=_CACHE, parallel=True)
def _build_kdtree(c, leaf):
    """Median-split k-d tree over rows of c. Node t has children 2t+1, 2t+2; nodes of the
    last level are leaves. Returns perm, start, end, lo, hi, depth."""
    n, m = c.shape
    depth = 0
    while (n >> depth) > leaf:
        depth += 1
    nnodes = (1 << (depth + 1)) - 1
    start = np.zeros(nnodes, dtype=np.int64)
    end = np.zeros(nnodes, dtype=np.int64)
    lo = np.empty((nnodes, m), dtype=c.dtype)
    hi = np.empty((nnodes, m), dtype=c.dtype)
    perm = np.arange(n)
    start[0] = 0
    end[0] = n
    for d in range(depth + 1):
        first = (1 << d) - 1
        count = 1 << d
        for q in prange(count):
            t = first + q
            s = start[t]
            e = end[t]
            if e > s:
                for k in range(m):
                    lo[t, k] = c[perm[s], k]
                    hi[t, k] = c[perm[s], k]
                for p in range(s + 1, e):
                    r = perm[p]
                    for k in range(m):
                        v = c[r, k]
                        if v < lo[t, k]:
                            lo[t, k] = v
                        if v > hi[t, k]:
                            hi[t, k] = v
            else:
                for k in range(m):
                    lo[t, k] = np.inf
                    hi[t, k] = -np.inf
            if d < depth:
                mid = (s + e) // 2
                best = 0
                spread = -1.0
                for k in range(m):
                    sp = hi[t, k] - lo[t, k] if e > s else 0.0
                    if sp > spread:
                        spread = sp
                        best = k
                if e - s > 1:
                    _select(c, perm, s, e, mid, best)
                start[2 * t + 1] = s
                end[2 * t + 1] = mid
                start[2 * t + 2] = mid
                end[2 * t + 2] = e
    return perm, start, end, lo, hi, depth


@njit(cache=_CACHE, parallel=True)
def _kd_count(cs, start, end, lo, hi, depth, cap):
    """For each row of ``cs`` (already in k-d leaf order) count dominating rows, stopping
    once ``cap`` is reached (results are min(count, cap))."""
    n, m = cs.shape
    nnodes = start.shape[0]
    first_leaf = (1 << depth) - 1
    nleaves = 1 << depth
    out = np.zeros(n, dtype=np.int64)
    for q in prange(nleaves):
        leaf = first_leaf + q
        s = start[leaf]
        e = end[leaf]
        if e <= s:
            continue
        nb = e - s
        cnt = np.zeros(nb, dtype=np.int64)
        acc = 0
        mincnt = 0
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        sp = 0
        stack[sp] = 0
        sp += 1
        while sp > 0:
            if acc + mincnt >= cap:
                break
            sp -= 1
            t = stack[sp]
            if end[t] <= start[t]:
                continue
            # can any row of node t be <= any row of the leaf?
            skip = False
            for k in range(m):
                if lo[t, k] > hi[leaf, k]:
                    skip = True
                    break
            if skip:
                continue
            # is every row of node t strictly dominating every row of the leaf?
            allbelow = True
            strict = False
            for k in range(m):
                if hi[t, k] > lo[leaf, k]:
                    allbelow = False
                    break
                if hi[t, k] < lo[leaf, k]:
                    strict = True
            if allbelow and strict:
                acc += end[t] - start[t]
                continue
            if t >= first_leaf:
                mc = cap
                for u in range(nb):
                    i = s + u
                    if cnt[u] + acc < cap:
                        # row-level box test
                        ok = True
                        below = True
                        st = False
                        for k in range(m):
                            v = cs[i, k]
                            if lo[t, k] > v:
                                ok = False
                                break
                            if hi[t, k] > v:
                                below = False
                            elif hi[t, k] < v:
                                st = True
                        if ok:
                            if below and st:
                                cnt[u] += end[t] - start[t]
                            else:
                                for j in range(start[t], end[t]):
                                    if _dominates(cs, j, cs, i, m):
                                        cnt[u] += 1
                    if cnt[u] < mc:
                        mc = cnt[u]
                mincnt = mc
            else:
                a = 2 * t + 1
                b = 2 * t + 2
                sa = 0.0
                sb = 0.0
                for k in range(m):
                    sa += lo[a, k]
                    sb += lo[b, k]
                # visit the child with the smaller lower corner first (pushed last)
                if sa <= sb:
                    stack[sp] = b
                    stack[sp + 1] = a
                else:
                    stack[sp] = a
                    stack[sp + 1] = b
                sp += 2
        for u in range(nb):
            v = cnt[u] + acc
            out[s + u] = v if v < cap else cap
    return out


@njit(cache=_CACHE)
def _kd_rank(cs, start, end, lo, hi, depth, topo):
    """Ranks by one pass in topological order over a static k-d tree whose nodes carry the
    largest rank assigned so far inside them: rank[i] = 1 + max rank of its dominators,
    found by branch and bound (a node is skipped when its box cannot reach row i or its
    best rank cannot improve the current answer)."""
    n, m = cs.shape
    nnodes = start.shape[0]
    first_leaf = (1 << depth) - 1
    nleaves = 1 << depth
    leaf_of = np.empty(n, dtype=np.int64)
    for q in range(nleaves):
        for p in range(start[first_leaf + q], end[first_leaf + q]):
            leaf_of[p] = first_leaf + q
    best_in = np.full(nnodes, -1, dtype=np.int64)
    rank = np.full(n, -1, dtype=np.int64)
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    for t in range(n):
        i = topo[t]
        best = -1
        sp = 0
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
                v = cs[i, k]
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
                    if rj > best and _dominates(cs, j, cs, i, m):
                        best = rj
            else:
                a = 2 * nd + 1
                b = 2 * nd + 2
                # visit the child with the larger best rank first (pushed last)
                if best_in[a] >= best_in[b]:
                    stack[sp] = b
                    stack[sp + 1] = a
                else:
                    stack[sp] = a
                    stack[sp + 1] = b
                sp += 2
        r = best + 1
        rank[i] = r
        nd = leaf_of[i]
        while best_in[nd] < r:
            best_in[nd] = r
            if nd == 0:
                break
            nd = (nd - 1) // 2
    return rank


def _kd_pareto_rank(c):
    n = c.shape[0]
    perm, start, end, lo, hi, depth = _build_kdtree(c, _LEAF)
    cs = _gather_rows(c, perm)
    topo = _order_by_key(cs, _row_sums(cs))
    r = _kd_rank(cs, start, end, lo, hi, depth, topo)
    out = np.empty(n, dtype=np.int32)
    out[perm] = r
    return out


def _kd_domination_count(c, cap):
    n = c.shape[0]
    perm, start, end, lo, hi, depth = _build_kdtree(c, _LEAF)
    cs = _gather_rows(c, perm)
    cnt_sorted = _kd_count(cs, start, end, lo, hi, depth, np.int64(cap))
    out = np.empty(n, dtype=np.int64)
    out[perm] = cnt_sorted
    return out


# ---------------------------------------------------------------------------------------
# m = 1
# ---------------------------------------------------------------------------------------


def _count_1d(x):
    s = np.sort(x)
    return np.searchsorted(s, x, side="left").astype(np.int64)


def _rank_1d(x):
    u, inv = np.unique(x, return_inverse=True)
    return inv.reshape(-1).astype(np.int32)


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------


def pareto_front(costs):
    """Mark the non-dominated rows (contract: :func:`gpurank.kernels.reference.pareto_front`).

    Algorithm: m=1 min scan O(n); m=2 lexicographic sort + sweep O(n log n); m=3
    lexicographic sort + Fenwick sweep O(n log n); m>=4 sort-filter-skyline over the
    row-sum order with parallel block checks, O(n |F| m), switching to the k-d tree
    (bounding-box pruning) when the front grows past 3000 rows.
    """
    c = check_costs(costs)
    n, m = c.shape
    if n == 0:
        return np.zeros(0, dtype=bool)
    if m == 0:
        return np.ones(n, dtype=bool)
    if m == 1:
        return c[:, 0] == c[:, 0].min()
    if m == 2:
        return _front_2d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 3:
        return _front_3d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    order, cs = _topo(c)
    on_sorted, finished = _sfs_sorted(cs, _SFS_MAX_FRONT)
    if not finished:
        return _kd_domination_count(c, 1) == 0
    out = np.empty(n, dtype=bool)
    out[order] = on_sorted
    return out


def pareto_rank(costs):
    """Non-dominated sorting (contract: :func:`gpurank.kernels.reference.pareto_rank`).

    Algorithm: m=1 dense ranking O(n log n); m=2 lexicographic sweep with a Fenwick tree of
    prefix maxima O(n log n); m=3 CDQ divide and conquer O(n log^2 n); m>=4 a k-d tree
    branch-and-bound pass in topological order (O(n^2 m) worst case, far less in practice).
    """
    c = check_costs(costs)
    n, m = c.shape
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if m == 0:
        return np.zeros(n, dtype=np.int32)
    if m == 1:
        return _rank_1d(c[:, 0])
    if m == 2:
        return _rank_2d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 3:
        return _rank_3d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    return _kd_pareto_rank(c)


def domination_count(costs, *, cap=None):
    """How many rows dominate each row (contract:
    :func:`gpurank.kernels.reference.domination_count`).

    ``cap=k`` returns ``min(count, k)`` and stops counting a row once it reached k.

    Algorithm: m=1 sort + binary search; m=2 Fenwick sweep O(n log n); m=3 CDQ divide and
    conquer O(n log^2 n); m>=4 k-d tree with bounding-box pruning (O(n^2 m) worst case,
    near O(n log n) on correlated data; with a cap, each leaf stops once all its rows reached
    it).
    """
    c = check_costs(costs)
    cap = check_cap(cap)
    n, m = c.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if m == 0:
        out = np.zeros(n, dtype=np.int64)
    elif m == 1:
        out = _count_1d(c[:, 0])
    elif m == 2:
        out = _count_2d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    elif m == 3:
        out = _count_3d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    else:
        return _kd_domination_count(c, n if cap is None else cap)
    if cap is not None:
        np.minimum(out, cap, out=out)
    return out


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates (contract:
    :func:`gpurank.kernels.reference.dominated_count`): ``domination_count(-costs)``."""
    c = check_costs(costs)
    return domination_count(np.negative(c), cap=cap)


def topsis(matrix, weights, benefit, *, norm="vector"):
    """TOPSIS closeness (contract: :func:`gpurank.kernels.reference.topsis`).

    Algorithm: pass 1 (parallel over row chunks) column min, max and sum of squares; pass 2
    (parallel over rows) fused scaling, weighted distances to ideal and anti-ideal, and
    closeness. O(n m) time, O(m) extra memory besides the output.
    """
    x, w, b = check_topsis_inputs(matrix, weights, benefit, norm=norm)
    n, m = x.shape
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    lo, hi, ss = _col_stats(x)
    scale, ideal, anti, offset = _topsis_params(lo, hi, ss, w, b, norm)
    return _topsis_scores(x, scale, offset, ideal, anti)


def _topsis_params(lo, hi, ss, w, b, norm):
    """Per-column affine map v = (x - offset) * scale and the ideal / anti-ideal points."""
    if norm == "vector":
        nrm = np.sqrt(ss)
        scale = np.divide(w, nrm, out=np.zeros_like(w), where=nrm > 0)
        offset = np.zeros_like(w)
    else:
        rng = hi - lo
        scale = np.divide(w, rng, out=np.zeros_like(w), where=rng > 0)
        offset = lo.copy()
    vmax = (hi - offset) * scale
    vmin = (lo - offset) * scale
    ideal = np.where(b, vmax, vmin)
    anti = np.where(b, vmin, vmax)
    return scale, ideal, anti, offset


@njit(cache=_CACHE, parallel=True)
def _col_stats(x):
    n, m = x.shape
    nchunks = min(64, max(1, n // 4096))
    los = np.empty((nchunks, m))
    his = np.empty((nchunks, m))
    sss = np.zeros((nchunks, m))
    for q in prange(nchunks):
        s = q * n // nchunks
        e = (q + 1) * n // nchunks
        lo = np.full(m, np.inf)
        hi = np.full(m, -np.inf)
        ss = np.zeros(m)
        for i in range(s, e):
            for k in range(m):
                v = np.float64(x[i, k])
                if v < lo[k]:
                    lo[k] = v
                if v > hi[k]:
                    hi[k] = v
                ss[k] += v * v
        los[q] = lo
        his[q] = hi
        sss[q] = ss
    lo = np.full(m, np.inf)
    hi = np.full(m, -np.inf)
    ss = np.zeros(m)
    for q in range(nchunks):
        for k in range(m):
            lo[k] = min(lo[k], los[q, k])
            hi[k] = max(hi[k], his[q, k])
            ss[k] += sss[q, k]
    return lo, hi, ss


@njit(cache=_CACHE, parallel=True)
def _topsis_scores(x, scale, offset, ideal, anti):
    n, m = x.shape
    out = np.empty(n, dtype=np.float64)
    for i in prange(n):
        dp = 0.0
        dm = 0.0
        for k in range(m):
            v = (np.float64(x[i, k]) - offset[k]) * scale[k]
            a = v - ideal[k]
            bb = v - anti[k]
            dp += a * a
            dm += bb * bb
        dp = np.sqrt(dp)
        dm = np.sqrt(dm)
        tot = dp + dm
        out[i] = dm / tot if tot > 0 else 0.5
    return out


def top_k(scores, k):
    """Indices of the k largest scores, best first, ties by lower index (contract:
    :func:`gpurank.kernels.reference.top_k`). ``argpartition`` O(n), then the selected k
    (plus the tied rows at the boundary) sorted, O(k log k)."""
    s = check_scores(scores)
    k = check_k(k)
    n = s.shape[0]
    if k == 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= n:
        return np.lexsort((np.arange(n), -s)).astype(np.int64)
    part = np.argpartition(-s, k - 1)[:k]
    t = s[part].min()
    greater = np.flatnonzero(s > t)
    equal = np.flatnonzero(s == t)[: k - greater.shape[0]]
    sel = np.concatenate((greater, equal))
    sel = sel[np.lexsort((sel, -s[sel]))]
    return sel.astype(np.int64)
