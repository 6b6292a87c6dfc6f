"""CPU kernels compiled with Numba (``njit``, ``parallel=True`` where it pays).

Same names, signatures and contract as :mod:`gpurank.kernels.reference` (read the contract
there). Inputs are validated on the host by :mod:`._validate` before any compiled code runs,
except the finiteness check of ``pareto_front`` and ``topsis``, which is fused into their
first compiled pass (a non-finite value then raises ``_validate``'s message); inputs are
never mutated. No kernel allocates O(n^2): peak extra memory is O(n m).

Linear passes run serially below 400,000 rows (``_PAR_MIN``): on a busy 2-core machine
waking the thread pool costs more than it saves. Every kernel is ``cache=True`` (the m=3
rank recursion is an explicit stack for that reason), so only the first run on a machine
pays compilation.

This module must never import numba.cuda, cupy, cudf or cuml (a test pins that).

Algorithms (n rows, m criteria)
-------------------------------
* ``pareto_front``: m=1 a min scan, O(n). For m>=2 a pivot prefilter runs first
  (``_prefilter``): rounds of picking ~2m+2 pivot rows from a strided sample (minimizers of
  sum / max / corner scalarizations of per-column sample ranks, robust to heavy tails) plus
  up to 64 rows spread over the front of a 1024-4096-row sample (these dominate most rows
  of anti-correlated data), and dropping, in one pass with early exits, every row a pivot
  dominates; O(n P m) per round,
  rounds stop when one removes less than a third. It is exact (a row dominated by a dropped
  row is dominated by that row's pivot) and removes > 99% of the rows on realistic and
  independent data. The survivors then go to: m=2 a lexicographic sort and a sweep keeping
  the best second criterion, O(n log n). m=3 a lexicographic sort and a sweep keeping the
  2-D staircase of (c1, c2) over the front in a sorted array, O(n log S + |F| S), handing
  over to a sweep with a Fenwick tree of prefix minima of c2 over ranks of c1 (O(n log n))
  when the staircase passes 8192 stairs.
  m>=4 sort-filter-skyline (SFS): rows sorted by the sum of criteria (a topological order of
  dominance, equal sums ordered lexicographically), each compared only with the current
  front (stored column-major, 32 front rows per branch-free vectorized window), blocks of
  rows checked in parallel; O(n |F| m) worst case, ~O(n m) when the front is small. Once
  the front passes 40,000 rows (m=4) or 4000 rows (m>=5) it switches to the k-d tree with
  bounding-box pruning (``domination_count(cap=1)``).
* ``pareto_rank``: m=1 dense ranking, m=2 a lexicographic sweep with a Fenwick tree of
  prefix maxima of the rank, O(n log n). m=3 CDQ divide and conquer over the lexicographic
  order (longest chain in a 3-D partial order), O(n log^2 n). m=4 the same CDQ one level
  deeper (``_rank_4d``: each cross step is a static 3-D max-dominance query solved by a
  bottom-up CDQ with a max-Fenwick tree), O(n log^3 n) whatever the correlation. m>=5
  best-front search
  one pass in topological order over a static k-d tree whose nodes carry the best rank
  assigned so far: rank = 1 + max rank of the dominators, found by branch and bound
  (``_ens_bs``, ENS with binary search over fronts, is kept as a simpler alternative).
* ``domination_count`` / ``dominated_count``: m=1 sort + binary search, m=2 a Fenwick
  sweep, m=3 CDQ divide and conquer with a Fenwick tree, O(n log^2 n). m=4 exact counts
  (no cap, or a cap above 64) CDQ one level deeper, O(n log^3 n) (``_count_4d``). m>=5, and
  m=4 with a small cap, a k-d tree
  (median splits, leaves of 32 rows) traversed per leaf with bounding-box pruning: a node
  whose box lies wholly below the leaf's box is counted in O(1), a node that cannot reach
  it is skipped. ``cap=k`` stops a leaf's traversal once all its rows reached k.
  ``dominated_count(c) == domination_count(-c)``.
* ``topsis``: two passes, O(n m), no temporaries: column min/max/sum of squares (per-chunk
  float64 partials, register accumulators over row blocks; finiteness read off the results
  for free), then scaling, distances (accumulated column by column over blocks of 512 rows)
  and closeness (one square root per row) fused in one pass straight into the output.
* ``top_k``: ``argpartition`` + sort of the k selected, O(n + k log k).
"""

from __future__ import annotations

import types

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
    "smaa_topsis",
]

_dominates = njit(inline="always")(_shared.dominates)
_rows_equal = njit(inline="always")(_shared.rows_equal)

_CACHE = True
_PAR_MIN = 400_000  # below this many rows serial passes win (no thread wake-ups on a busy box)


def _serial(fn, name):
    """A serial (``prange`` runs as ``range``) cached twin of an ``njit(parallel=True)``
    kernel, under its own name so the two never share a cache entry."""
    f = getattr(fn, "py_func", fn)
    g = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    g.__qualname__ = name
    return njit(cache=_CACHE, nogil=True)(g)
_LEAF = 32  # k-d tree leaf size
_CDQ_CAP = 64  # m=4 counts with a cap above this use the exact CDQ count, else the k-d tree
_SFS_MAX_FRONT = 4000  # SFS switches to the k-d tree beyond this front size (m >= 5)
_SFS_MAX_FRONT_4 = 40000  # the same for m = 4 (vectorized SFS beats the k-d tree longer)


# ---------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def _lex_less(c, a, b, m):
    for k in range(m):
        x = c[a, k]
        y = c[b, k]
        if x < y:
            return True
        if x > y:
            return False
    return False


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
def _order_by_key(c, key):
    """Argsort by ``key``; runs of equal key are then ordered lexicographically by row.

    With ``key = row sums`` this is a topological order of dominance (a dominator has a
    sum <= the dominated row's, and when equal it is lexicographically smaller); with
    ``key = c[:, 0]`` it is the lexicographic order.
    """
    n, m = c.shape
    order = np.argsort(key)  # ties are re-sorted lexicographically below
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


@njit(cache=_CACHE, parallel=True, nogil=True)
def _row_sums(c):
    n, m = c.shape
    s = np.empty(n, dtype=np.float64)
    for i in prange(n):
        acc = 0.0
        for k in range(m):
            acc += c[i, k]
        s[i] = acc
    return s


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, parallel=True, nogil=True)
def _gather_rows(c, order):
    n, m = c.shape
    out = np.empty((n, m), dtype=c.dtype)
    for t in prange(n):
        src = order[t]
        for k in range(m):
            out[t, k] = c[src, k]
    return out


_row_sums_ser = _serial(_row_sums, "_row_sums_ser")
_gather_rows_ser = _serial(_gather_rows, "_gather_rows_ser")


def _topo(c):
    """Rows in a topological order of dominance and the gathered sorted copy."""
    if c.shape[0] < _PAR_MIN:
        order = _order_by_key(c, _row_sums_ser(c))
        return order, _gather_rows_ser(c, order)
    order = _order_by_key(c, _row_sums(c))
    return order, _gather_rows(c, order)


# ---------------------------------------------------------------------------------------
# m = 1, 2, 3 sweeps
# ---------------------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, 3):
            j += 1
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


@njit(cache=_CACHE, nogil=True)
def _rank_2d_tails(c, order):
    """m=2 ranks in one sweep over the lexicographic order: members of one front have
    strictly decreasing c1 along the sweep, so front k is summed up by its last c1 (its
    tail) and tails increase with k; a row (group of equal rows) joins the first front
    whose tail is > its c1 (binary search), O(n log F) after the sort."""
    n = c.shape[0]
    rank = np.empty(n, dtype=np.int32)
    tails = np.empty(n)
    nf = 0
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, 2):
            j += 1
        y = c[head, 1]
        lo = 0
        hi = nf
        while lo < hi:
            mid = (lo + hi) >> 1
            if tails[mid] <= y:
                lo = mid + 1
            else:
                hi = mid
        tails[lo] = y
        if lo == nf:
            nf += 1
        for t in range(i, j):
            rank[order[t]] = lo
        i = j
    return rank


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
def _cdq_rank(y, z, rank, tree, uz):
    """Longest chain below each point (points in position order), CDQ divide and conquer
    run iteratively with an explicit stack (in-order: left half solved, then the left->right
    contribution, then the right half), so it can be cached. O(g log^2 g)."""
    g = y.shape[0]
    st_lo = np.empty(128, dtype=np.int64)
    st_hi = np.empty(128, dtype=np.int64)
    st_ph = np.empty(128, dtype=np.int64)
    sp = 0
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
        _cdq_rank_merge(y, z, rank, lo, mid, hi, tree, uz)
        st_lo[sp] = mid
        st_hi[sp] = hi
        st_ph[sp] = 0
        sp += 1


@njit(cache=_CACHE, nogil=True)
def _cdq_rank_merge(y, z, rank, lo, mid, hi, tree, uz):
    """Raise the ranks of points [mid, hi) by the chains ending in [lo, mid)."""
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


@njit(cache=_CACHE, nogil=True)
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
    _cdq_rank(y, z, rank, tree, uz)
    out = np.empty(n, dtype=np.int32)
    for r in range(n):
        out[r] = rank[group[r]]
    return out


@njit(cache=_CACHE, nogil=True)
def _cdq_max_3d(y, z, w, uz):
    """Like ``_cdq_count_3d`` with max instead of sum: for each point the largest ``w`` of
    earlier points with y <= and z <= (-1 when none; pass w = -1 for points that are only
    queries)."""
    g = y.shape[0]
    cnt = np.full(g, -1, dtype=np.int64)
    idx = np.arange(g)
    buf = np.empty(g, dtype=np.int64)
    tree = np.full(uz + 1, -1, dtype=np.int64)
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
                        if w[a] > tree[p]:
                            tree[p] = w[a]
                        p += p & (-p)
                    buf[t] = a
                    i += 1
                else:
                    b = idx[j]
                    p = z[b]
                    q = -1
                    while p > 0:
                        if tree[p] > q:
                            q = tree[p]
                        p -= p & (-p)
                    if q > cnt[b]:
                        cnt[b] = q
                    buf[t] = b
                    j += 1
                t += 1
            for t in range(s, mid):
                a = idx[t]
                p = z[a]
                while p <= uz:
                    tree[p] = -1
                    p += p & (-p)
        tmp = idx
        idx = buf
        buf = tmp
        width *= 2
    return cnt


@njit(cache=_CACHE, nogil=True)
def _rank_4d(c, order):
    """Non-dominated sorting for m=4: distinct rows in lexicographic order, CDQ over
    positions run in order (left half final, then the left -> right step, then the right
    half; explicit stack). A cross step raises each right row's rank to 1 + the largest
    rank among the left rows that weakly precede it in (c1, c2, c3): sort both halves on
    c1 (left first on ties), then ``_cdq_max_3d`` on (c2, c3). O(n log^3 n)."""
    n = c.shape[0]
    heads, _, group = _unique_groups(c, order, 4)
    g = heads.shape[0]
    yv = np.empty(g)
    zv = np.empty(g)
    wv = np.empty(g)
    for t in range(g):
        yv[t] = c[heads[t], 1]
        zv[t] = c[heads[t], 2]
        wv[t] = c[heads[t], 3]
    y, _ = _dense_rank(yv)
    z, _ = _dense_rank(zv)
    rank = np.zeros(g, dtype=np.int64)
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
            val[t] = rank[p] if p < mid else -1
        wr, uw = _dense_rank(ww)
        part = _cdq_max_3d(zz, wr, val, uw)
        for t in range(k):
            p = lo + o[t]
            if p >= mid and part[t] + 1 > rank[p]:
                rank[p] = part[t] + 1
        st_lo[sp] = mid
        st_hi[sp] = hi
        st_ph[sp] = 0
        sp += 1
    out = np.empty(n, dtype=np.int32)
    for r in range(n):
        out[r] = rank[group[r]]
    return out


@njit(cache=_CACHE, nogil=True)
def _count_4d(c, order):
    """Exact domination counts for m=4: distinct rows in lexicographic order (so every
    dominator comes earlier), bottom-up CDQ over positions; each cross step (left block
    -> right block) is a static 3-D dominance count, solved by sorting both blocks on c1
    (left first on ties) and running the 3-D CDQ counter ``_cdq_count_3d`` on (c2, c3) with
    the right block's weights set to zero. O(n log^3 n) time, O(n) memory, independent of
    how the data are correlated."""
    n = c.shape[0]
    heads, weight, group = _unique_groups(c, order, 4)
    g = heads.shape[0]
    yv = np.empty(g)
    zv = np.empty(g)
    wv = np.empty(g)
    for t in range(g):
        yv[t] = c[heads[t], 1]
        zv[t] = c[heads[t], 2]
        wv[t] = c[heads[t], 3]
    y, _ = _dense_rank(yv)
    z, _ = _dense_rank(zv)
    cnt = np.zeros(g, dtype=np.int64)
    width = 1
    while width < g:
        for s in range(0, g, 2 * width):
            mid = min(s + width, g)
            e = min(s + 2 * width, g)
            if mid >= e:
                continue
            k = e - s
            key = np.empty(k, dtype=np.int64)
            for t in range(k):
                key[t] = 2 * y[s + t] + (1 if s + t >= mid else 0)
            o = np.argsort(key)
            zz = np.empty(k, dtype=np.int64)
            ww = np.empty(k)
            wt = np.empty(k, dtype=np.int64)
            for t in range(k):
                p = s + o[t]
                zz[t] = z[p]
                ww[t] = wv[p]
                wt[t] = weight[p] if p < mid else 0
            wr, uw = _dense_rank(ww)
            part = _cdq_count_3d(zz, wr, wt, uw)
            for t in range(k):
                p = s + o[t]
                if p >= mid:
                    cnt[p] += part[t]
        width *= 2
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = cnt[group[r]]
    return out


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, inline="always")
def _soa_equal(F, f, cs, i, m):
    for k in range(m):
        if F[k, f] != cs[i, k]:
            return False
    return True


@njit(cache=_CACHE, parallel=True, nogil=True)
def _sfs_sorted(cs, max_front):
    """Front of rows ``cs`` given in a topological order; returns (bool per sorted row,
    finished). The front is stored column-major (one contiguous array per criterion) and
    a candidate is compared with 32 front rows at a time in branch-free, vectorizable
    loops (``all(F[:, f] <= x)`` as a byte mask), stopping after the first 32-row window
    that holds a dominator; in a topological order a front row weakly below the candidate
    dominates it unless the two rows are equal (duplicates stay on the front). Blocks of
    candidates are checked in parallel against the front as it was before the block, then
    the survivors serially against the rows the block added. Gives up (finished False)
    once the front exceeds ``max_front`` rows: SFS is O(n |F| m)."""
    n, m = cs.shape
    on = np.zeros(n, dtype=np.bool_)
    W = 32
    cap = min(n, max_front + 8192) + W
    F = np.empty((m, cap), dtype=cs.dtype)
    nf = 0
    pos = 0
    block = 256
    dom = np.zeros(8192, dtype=np.bool_)
    le = np.empty((8192, W), dtype=np.uint8)
    while pos < n:
        e = min(pos + block, n)
        nb = e - pos
        nf0 = nf
        for t in prange(nb):
            i = pos + t
            d = False
            a = le[t]
            s = 0
            while s < nf0 and not d:
                w = min(W, nf0 - s)
                for f in range(w):
                    a[f] = 1
                for k in range(m):
                    xk = cs[i, k]
                    for f in range(w):
                        a[f] &= F[k, s + f] <= xk
                hit = 0
                for f in range(w):
                    hit |= a[f]
                if hit:
                    for f in range(w):
                        if a[f] and not _soa_equal(F, s + f, cs, i, m):
                            d = True
                            break
                s += W
            dom[t] = d
        for t in range(nb):
            if dom[t]:
                continue
            i = pos + t
            d = False
            for f in range(nf0, nf):
                le_all = True
                for k in range(m):
                    if F[k, f] > cs[i, k]:
                        le_all = False
                        break
                if le_all and not _soa_equal(F, f, cs, i, m):
                    d = True
                    break
            if not d:
                on[i] = True
                for k in range(m):
                    F[k, nf] = cs[i, k]
                nf += 1
        pos = e
        if nf > max_front:
            return on, False
        if block < 8192:
            block *= 2
    return on, True


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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


@njit(cache=_CACHE, parallel=True, nogil=True)
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


@njit(cache=_CACHE, parallel=True, nogil=True)
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


@njit(cache=_CACHE, nogil=True)
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
# Input preparation with the finiteness check fused into the first pass, and the pivot
# prefilter for pareto_front
# ---------------------------------------------------------------------------------------


def _as_costs(costs, name="costs"):
    """``check_costs`` without its finiteness pass: shape and dtype checks, C-contiguous
    float array. The caller's first compiled pass checks finiteness (``_raise_if_not_finite``
    reports the first bad cell with ``check_costs``'s message)."""
    c = np.asarray(costs)
    if c.ndim != 2 or c.dtype not in (np.float32, np.float64):
        return check_costs(c, name=name)  # raises, or converts (and checks) other dtypes
    return np.ascontiguousarray(c)


def _raise_if_not_finite(c, name="costs"):
    check_costs(c, name=name)  # raises the canonical message
    raise AssertionError("unreachable: a non-finite value was detected")  # pragma: no cover


def _sample_front_rows(n):
    """Sample size for the sample-front pivots: 1024 rows, growing to 4096 from 1e6 rows
    (a bigger sample has a front closer to the real one, at O(s |F_s| m) cost)."""
    return min(4096, max(1024, n // 256))


_SAMPLE_PIVOTS = 64  # rows of the sample's front added to the prefilter pivots (half for m>=4)


@njit(cache=_CACHE, nogil=True)
def _pivot_candidates(c, idx, nfs):
    """Pivot rows for one prefilter round over rows ``idx`` of ``c``: a strided sample of
    up to 1024 rows is turned into per-column ranks (robust to heavy tails), and the sample
    rows minimizing a few rank scalarizations (sum, max, and per-criterion corners) are
    returned as row indices of ``c`` (rank-sum pivot first, duplicates removed), followed
    by up to 64 (m <= 3) or 32 rows spread over the Pareto front of a strided sample of
    ``nfs`` rows (SFS, at most 256 front rows kept): on anti-correlated data the
    scalarization minimizers dominate little, the sample front as a whole most rows."""
    k = idx.shape[0]
    m = c.shape[1]
    step = max(1, k // 1024)
    s = (k + step - 1) // step
    r = np.empty((s, m))
    col = np.empty(s)
    for j in range(m):
        for t in range(s):
            col[t] = c[idx[t * step], j]
        o = np.argsort(col)
        for t in range(s):
            r[o[t], j] = t / s
    nsc = 2 + 2 * m
    best = np.full(nsc, np.inf)
    arg = np.zeros(nsc, dtype=np.int64)
    for t in range(s):
        sm = 0.0
        mx = 0.0
        for j in range(m):
            sm += r[t, j]
            if r[t, j] > mx:
                mx = r[t, j]
        if sm < best[0]:
            best[0] = sm
            arg[0] = t
        if mx < best[1]:
            best[1] = mx
            arg[1] = t
        for j in range(m):
            v = sm + 3.0 * r[t, j]
            if v < best[2 + 2 * j]:
                best[2 + 2 * j] = v
                arg[2 + 2 * j] = t
            v = max(mx, 2.0 * r[t, j])
            if v < best[3 + 2 * j]:
                best[3 + 2 * j] = v
                arg[3 + 2 * j] = t
    # the sample's own Pareto front (SFS over the rank-sum order, O(s |F_s| m)): on
    # anti-correlated data the scalarization minimizers dominate little, the sample front
    # as a whole dominates most rows
    step2 = max(1, k // nfs)
    s2 = (k + step2 - 1) // step2
    sums = np.empty(s2)
    for t in range(s2):
        acc = 0.0
        for j in range(m):
            acc += c[idx[t * step2], j]
        sums[t] = acc
    so = np.argsort(sums)
    fr = np.empty(s2, dtype=np.int64)
    nfr = 0
    for u in range(s2):
        a = idx[so[u] * step2]
        d = False
        for v in range(nfr):
            if _dominates(c, fr[v], c, a, m):
                d = True
                break
        if not d:
            fr[nfr] = a
            nfr += 1
            if nfr >= 256:  # enough to choose from; bounds the O(s |F_s| m) cost
                break
    nx = min(nfr, _SAMPLE_PIVOTS if m <= 3 else _SAMPLE_PIVOTS // 2)
    out = np.empty(nsc + nx, dtype=np.int64)
    np_ = 0
    for q in range(nsc + nx):
        if q < nsc:
            row = idx[arg[q] * step]
        else:
            row = fr[((q - nsc) * nfr) // nx]  # spread over the sample front
        dup = False
        for u in range(np_):
            if out[u] == row:
                dup = True
        if not dup:
            out[np_] = row
            np_ += 1
    return out[:np_].copy()


def _drop_dominated_by_impl(c, idx, piv, out):
    """Compact into ``out`` the rows ``idx`` that no pivot row dominates; returns the count
    kept and whether every value of the rows seen is finite. O(|idx| P m), early exits."""
    nk = idx.shape[0]
    m = c.shape[1]
    p_ = piv.shape[0]
    pv = np.empty((p_, m), dtype=c.dtype)
    for p in range(p_):
        for k in range(m):
            pv[p, k] = c[piv[p], k]
    nch = min(64, max(1, nk // 16384))
    cnt = np.zeros(nch, dtype=np.int64)
    fin = np.zeros(nch)  # 1.0 where a chunk holds a non-finite value
    keep = np.empty(nk, dtype=np.bool_)
    for q in prange(nch):
        s = q * nk // nch
        e = (q + 1) * nk // nch
        f = 0.0
        kk = 0
        for t in range(s, e):
            i = idx[t]
            for k in range(m):
                v = np.float64(c[i, k])
                if v - v != 0.0:  # NaN for inf / NaN, 0 otherwise
                    f = 1.0
            d = False
            for p in range(p_):
                if _dominates(pv, p, c, i, m):
                    d = True
                    break
            keep[t] = not d
            if not d:
                kk += 1
        cnt[q] = kk
        fin[q] = f
    ok = True
    for q in range(nch):
        if fin[q] != 0.0:
            ok = False
    start = np.zeros(nch + 1, dtype=np.int64)
    for q in range(nch):
        start[q + 1] = start[q] + cnt[q]
    for q in prange(nch):
        s = q * nk // nch
        e = (q + 1) * nk // nch
        o = start[q]
        for t in range(s, e):
            if keep[t]:
                out[o] = idx[t]
                o += 1
    return start[nch], ok


_drop_par = njit(cache=_CACHE, parallel=True, nogil=True)(_drop_dominated_by_impl)
_drop_ser = _serial(_drop_dominated_by_impl, "_drop_ser")


def _drop_first_impl(c, piv, out):
    """First prefilter round over all rows of ``c``: each chunk writes the row numbers no
    pivot dominates at its own offset in ``out``, then the chunks are packed; returns the
    count kept and whether every value is finite. One read of ``c``, O(n P m)."""
    n, m = c.shape
    p_ = piv.shape[0]
    pv = np.empty((p_, m), dtype=c.dtype)
    for p in range(p_):
        for k in range(m):
            pv[p, k] = c[piv[p], k]
    nch = min(64, max(1, n // 16384))
    cnt = np.zeros(nch, dtype=np.int64)
    bad = np.zeros(nch, dtype=np.int64)
    for q in prange(nch):
        s = q * n // nch
        e = (q + 1) * n // nch
        f = 0
        o = s
        for i in range(s, e):
            for k in range(m):
                v = np.float64(c[i, k])
                if v - v != 0.0:  # NaN for inf / NaN, 0 otherwise
                    f = 1
            d = False
            for p in range(p_):
                if _dominates(pv, p, c, i, m):
                    d = True
                    break
            if not d:
                out[o] = i
                o += 1
        cnt[q] = o - s
        bad[q] = f
    tot = 0
    ok = True
    for q in range(nch):
        s = q * n // nch
        for t in range(cnt[q]):
            out[tot + t] = out[s + t]
        tot += cnt[q]
        if bad[q]:
            ok = False
    return tot, ok


_drop_first_par = njit(cache=_CACHE, parallel=True, nogil=True)(_drop_first_impl)
_drop_first_ser = _serial(_drop_first_impl, "_drop_first_ser")


def _prefilter(c):
    """Pivot prefilter with the fused finiteness check (rounds of: pick pivots among the
    survivors, drop every survivor a pivot dominates). Returns the indices of the rows no
    pivot dominates: a superset of the front (a row dominated by a dropped row is, by
    transitivity, dominated by that row's pivot, so the front of the survivors is the front
    of all rows). Stops when a round removes less than a third of the survivors."""
    n = c.shape[0]
    # first round straight over the rows (no index array), pivots from a strided sample
    nfs = _sample_front_rows(n)
    piv = _pivot_candidates(c, np.arange(0, n, max(1, n // nfs)), nfs)
    out = np.empty(n, dtype=np.int64)  # pages untouched beyond the survivors
    kept, ok = (_drop_first_par if n >= _PAR_MIN else _drop_first_ser)(c, piv, out)
    if not ok:
        _raise_if_not_finite(c)
    idx = out[:kept]
    if kept <= 1024 or kept > (2 * n) // 3:
        return idx
    while True:
        k = idx.shape[0]
        piv = _pivot_candidates(c, idx, nfs)
        out = np.empty(k, dtype=np.int64)
        kept, ok = (_drop_par if k >= _PAR_MIN else _drop_ser)(c, idx, piv, out)
        idx = out[:kept]
        if kept <= 1024 or kept > (2 * k) // 3:
            return idx


def _front_of(c):
    """Front of a finite, C-contiguous (n >= 1, m >= 2) matrix (no prefilter)."""
    n, m = c.shape
    if m == 2:
        return _front_2d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 3:
        order = _order_by_key(c, np.ascontiguousarray(c[:, 0]))
        out, finished = _front_3d_stair(c, order, _STAIR_MAX)
        return out if finished else _front_3d(c, order)
    order, cs = _topo(c)
    sfs = _sfs_sorted if n >= _SFS_PAR_MIN else _sfs_sorted_ser
    on_sorted, finished = sfs(cs, _SFS_MAX_FRONT if m > 4 else _SFS_MAX_FRONT_4)
    if not finished:
        return _kd_domination_count(c, 1) == 0
    out = np.empty(n, dtype=bool)
    out[order] = on_sorted
    return out


_sfs_sorted_ser = _serial(_sfs_sorted, "_sfs_sorted_ser")
_SFS_PAR_MIN = 20_000
_STAIR_MAX = 8192  # the m=3 staircase sweep hands over to the Fenwick sweep beyond this

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

    Algorithm: m=1 min scan O(n). m>=2: the exact pivot prefilter (rounds of O(n P m),
    finiteness checked in the same pass) drops the rows that sampled pivot rows dominate,
    then on the survivors: m=2 lexicographic sort + sweep O(n log n); m=3 lexicographic
    sort + staircase sweep O(n log S + |F| S), Fenwick sweep O(n log n) for big staircases;
    m>=4 sort-filter-skyline over the row-sum order (column-major front compared 32 rows
    at a time in vectorized loops; blocks checked in parallel from 20,000 survivors),
    O(n |F| m), switching to the k-d tree (bounding-box pruning) when the front grows past
    40,000 rows (m=4) or 4000 rows (m>=5).
    """
    c = _as_costs(costs)
    n, m = c.shape
    if n == 0 or m <= 1:
        c = check_costs(c)
        if n == 0:
            return np.zeros(0, dtype=bool)
        if m == 0:
            return np.ones(n, dtype=bool)
        return c[:, 0] == c[:, 0].min()
    keep = _prefilter(c)  # also checks finiteness
    if keep.shape[0] == n:
        return _front_of(c)
    out = np.zeros(n, dtype=bool)
    if keep.shape[0]:
        out[keep] = _front_of(np.ascontiguousarray(c[keep]))
    return out


def pareto_rank(costs):
    """Non-dominated sorting (contract: :func:`gpurank.kernels.reference.pareto_rank`).

    Algorithm: m=1 dense ranking O(n log n); m=2 lexicographic sweep with a Fenwick tree of
    prefix maxima O(n log n); m=3 CDQ divide and conquer O(n log^2 n) (iterative, cached);
    m=4 two-level CDQ O(n log^3 n); m>=5 a k-d tree branch-and-bound pass in topological
    order (O(n^2 m) worst case, far less in practice).
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
        return _rank_2d_tails(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 3:
        return _rank_3d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 4:
        return _rank_4d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    return _kd_pareto_rank(c)


def domination_count(costs, *, cap=None):
    """How many rows dominate each row (contract:
    :func:`gpurank.kernels.reference.domination_count`).

    ``cap=k`` returns ``min(count, k)`` and stops counting a row once it reached k.

    Algorithm: m=1 sort + binary search; m=2 Fenwick sweep O(n log n); m=3 CDQ divide and
    conquer O(n log^2 n); m=4 without a cap (or a cap > 64) two-level CDQ O(n log^3 n);
    m>=5, and m=4 with a small cap, k-d tree with bounding-box pruning (O(n^2 m) worst case,
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
    elif m == 4 and (cap is None or cap > _CDQ_CAP):
        out = _count_4d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
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

    Algorithm: two passes over the matrix, no temporaries. Pass 1 (row chunks, per-chunk
    partials in float64, blocks of 2048 rows walked column by column with 4 independent
    register accumulators) column min, max and sum of squares, with the finiteness check
    fused in (no separate validation pass). Pass 2 (blocks of 512 rows, distances
    accumulated column by column in vectorizable loops) fused scaling, weighted distances
    to ideal and anti-ideal, and closeness ``dm2 / (sqrt(dp2 dm2) + dm2)`` (one square root
    per row), written straight to an output allocated by NumPy (huge pages). Both passes
    run in parallel from 400,000 rows on, serially below (thread wake-ups cost more than
    they save on small inputs). O(n m) time, O(m) extra memory besides the output.
    """
    x = _as_costs(matrix, name="matrix")
    _, w, b = check_topsis_inputs(x[:0], weights, benefit, norm=norm)  # weights, flags, norm
    n = x.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    par = n >= _PAR_MIN
    lo, hi, ss, ok = (_col_stats if par else _col_stats_ser)(x)
    if not ok:
        check_costs(x, name="matrix")  # raises the canonical message
    scale, ideal, anti, offset = _topsis_params(lo, hi, ss, w, b, norm)
    out = np.empty(n, dtype=np.float64)  # NumPy's allocator: transparent huge pages
    return (_topsis_scores if par else _topsis_scores_ser)(x, scale, offset, ideal, anti, out)


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


@njit(cache=_CACHE, parallel=True, nogil=True)
def _col_stats(x):
    """Column min, max and sum of squares (float64) in one pass over row chunks. Each chunk
    walks blocks of 2048 rows column by column with 4 independent accumulators per statistic
    (scalars kept in registers, no loop-carried dependency through memory)."""
    n, m = x.shape
    nchunks = min(64, max(1, n // 4096))
    los = np.empty((nchunks, m))
    his = np.empty((nchunks, m))
    sss = np.empty((nchunks, m))
    blk = 2048
    for q in prange(nchunks):
        s = q * n // nchunks
        e = (q + 1) * n // nchunks
        for k in range(m):
            los[q, k] = np.inf
            his[q, k] = -np.inf
            sss[q, k] = 0.0
        for bs in range(s, e, blk):
            be = min(bs + blk, e)
            for k in range(m):
                l0 = l1 = l2 = l3 = np.inf
                h0 = h1 = h2 = h3 = -np.inf
                s0 = s1 = s2 = s3 = 0.0
                i = bs
                while i + 4 <= be:
                    v0 = np.float64(x[i, k])
                    v1 = np.float64(x[i + 1, k])
                    v2 = np.float64(x[i + 2, k])
                    v3 = np.float64(x[i + 3, k])
                    l0 = min(l0, v0)
                    l1 = min(l1, v1)
                    l2 = min(l2, v2)
                    l3 = min(l3, v3)
                    h0 = max(h0, v0)
                    h1 = max(h1, v1)
                    h2 = max(h2, v2)
                    h3 = max(h3, v3)
                    s0 += v0 * v0
                    s1 += v1 * v1
                    s2 += v2 * v2
                    s3 += v3 * v3
                    i += 4
                while i < be:
                    v0 = np.float64(x[i, k])
                    l0 = min(l0, v0)
                    h0 = max(h0, v0)
                    s0 += v0 * v0
                    i += 1
                los[q, k] = min(los[q, k], min(min(l0, l1), min(l2, l3)))
                his[q, k] = max(his[q, k], max(max(h0, h1), max(h2, h3)))
                sss[q, k] += (s0 + s1) + (s2 + s3)
    lo = np.full(m, np.inf)
    hi = np.full(m, -np.inf)
    ss = np.zeros(m)
    for q in range(nchunks):
        for k in range(m):
            lo[k] = min(lo[k], los[q, k])
            hi[k] = max(hi[k], his[q, k])
            ss[k] += sss[q, k]
    # finiteness for free: a NaN makes ss NaN, an infinity makes ss infinite (ok is also
    # False when a huge finite column overflows ss; the caller re-checks then)
    ok = True
    for k in range(m):
        if not (np.isfinite(lo[k]) and np.isfinite(hi[k]) and np.isfinite(ss[k])):
            ok = False
    return lo, hi, ss, ok


@njit(cache=_CACHE, parallel=True, nogil=True)
def _topsis_scores(x, scale, offset, ideal, anti, out):
    """Closeness of every row into ``out``. Row chunks are processed in blocks of 512 rows:
    each column is loaded into a contiguous buffer and the squared distances accumulated
    column by column in per-block arrays (vectorizable loops), then the closeness
    ``dm / (dp + dm)`` is computed as ``dm2 / (sqrt(dp2 dm2) + dm2)`` (one square root and
    one division per row instead of two and one)."""
    n, m = x.shape
    nchunks = min(64, max(1, n // 4096))
    blk = 512
    for q in prange(nchunks):
        s = q * n // nchunks
        e = (q + 1) * n // nchunks
        dp = np.empty(blk)
        dm = np.empty(blk)
        v = np.empty(blk)
        for bs in range(s, e, blk):
            nb = min(bs + blk, e) - bs
            for t in range(nb):
                dp[t] = 0.0
                dm[t] = 0.0
            for k in range(m):
                sk = scale[k]
                ok_ = offset[k]
                ik = ideal[k]
                ak = anti[k]
                for t in range(nb):
                    v[t] = np.float64(x[bs + t, k])
                for t in range(nb):
                    vv = (v[t] - ok_) * sk
                    a = vv - ik
                    bb = vv - ak
                    dp[t] += a * a
                    dm[t] += bb * bb
            for t in range(nb):
                p2 = dp[t]
                m2 = dm[t]
                den = np.sqrt(p2 * m2) + m2
                out[bs + t] = m2 / den if m2 > 0 else (0.0 if p2 > 0 else 0.5)
    return out


_col_stats_ser = _serial(_col_stats, "_col_stats_ser")
_topsis_scores_ser = _serial(_topsis_scores, "_topsis_scores_ser")


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


# ---------------------------------------------------------------------------------------
# SMAA over TOPSIS weights (robust rankings)
# ---------------------------------------------------------------------------------------


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None):
    """SMAA acceptability counts of TOPSIS over weight samples (contract:
    :func:`gpurank.kernels.reference.smaa_topsis`).

    Algorithm: the weight-independent part (normalization, gaps to the ideal and anti-ideal
    of the full table, candidates put in tie-break order) once on the host; then samples are
    split into one chunk per thread (``prange``), each with its own accumulators: per sample
    the scores of all c candidates, O(c m), a stable argsort, O(c log c), and the counts;
    the per-thread accumulators are summed at the end. O(S c (m + log c)) time,
    O(threads c m) extra memory.
    """
    from ._smaa import prepare, unpermute

    p, nn, w, perm, k = prepare(matrix, weights_samples, benefit, k=k, norm=norm,
                                candidates=candidates)
    c, m = p.shape
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    import numba

    nchunks = max(1, min(numba.get_num_threads(), w.shape[0]))
    out = _smaa_chunks(p, nn, w, k, nchunks)
    return unpermute(perm, *out)


@njit(cache=_CACHE, parallel=True, nogil=True)
def _smaa_chunks(p, nn, w, k, nchunks):
    c, m = p.shape
    s_total = w.shape[0]
    top1 = np.zeros((nchunks, c), dtype=np.int64)
    topk = np.zeros((nchunks, c), dtype=np.int64)
    rsum = np.zeros((nchunks, c), dtype=np.int64)
    rsq = np.zeros((nchunks, c), dtype=np.int64)
    cw = np.zeros((nchunks, c, m), dtype=np.float64)
    for t in prange(nchunks):
        s0 = t * s_total // nchunks
        s1 = (t + 1) * s_total // nchunks
        q = np.empty(c, dtype=np.float64)
        for s in range(s0, s1):
            for i in range(c):
                dp = 0.0
                dm = 0.0
                for j in range(m):
                    a = w[s, j] * p[i, j]
                    dp += a * a
                    bb = w[s, j] * nn[i, j]
                    dm += bb * bb
                if dm > 0:
                    q[i] = dp / dm
                elif dp == 0:
                    q[i] = 1.0
                else:
                    q[i] = np.inf
            # Stable: equal scores keep the tie-break order the candidates were put in.
            order = np.argsort(q, kind="mergesort")
            for r in range(c):
                i = order[r]
                rank = r + 1
                rsum[t, i] += rank
                rsq[t, i] += rank * rank
                if rank <= k:
                    topk[t, i] += 1
            i0 = order[0]
            top1[t, i0] += 1
            for j in range(m):
                cw[t, i0, j] += w[s, j]
    return (top1.sum(axis=0), topk.sum(axis=0), rsum.sum(axis=0), rsq.sum(axis=0),
            cw.sum(axis=0))
