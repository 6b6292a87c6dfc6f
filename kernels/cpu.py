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
  up to 64 (m<=3) / 32 rows spread over the front of a 1024-4096-row sample (these
  dominate most rows of anti-correlated data), and dropping, in one pass with early exits,
  every row a pivot dominates (the first pivot alone; for m<=4 in the first round then a
  grid over the first m-1 columns holding, per cell, the sample row (of up to 16,384) with
  the least last column among those weakly below the cell's corner, one O(1) look-up and
  one exact dominance check per row (``_grid_table``); then the other pivots 8 at a time
  in branch-free windows compiled per m; serial below 2,000,000 rows); O(n P m) per round,
  rounds stop when one removes less than a third or the survivors are few (65,536 for
  m<=3, whose final sweeps are O(k log k), 4096 for m>=4). It is exact (a row dominated by
  a dropped row is dominated by that row's pivot) and removes > 99% of the rows on
  realistic and independent data. The survivors then go to: m=2 a lexicographic sort and
  a sweep keeping the best second criterion, O(n log n). m=3 a lexicographic sort and a
  sweep keeping the 2-D staircase of (c1, c2) over the front in a sorted array,
  O(n log S + |F| S), handing over to a sweep with a Fenwick tree of prefix minima of c2
  over ranks of c1 (O(n log n)) when the staircase passes 8192 stairs. m>=4 the k-d
  ENS below restricted to front 0 (``_ens_kd(..., only_front=True)``): each row is
  compared with the front so far through k-d ordered groups of 32 members whose least
  corners rule out 98-99% of them; O(n (G + 32 V) m) for G corners tested and V groups
  scanned per row.
  (``_sfs_sorted``, sort-filter-skyline over the row-sum order with a hand-over to the
  k-d tree, is kept and tested as an independent check.)
* ``pareto_rank``: m=1 dense ranking, m=2 a lexicographic sweep keeping the last c1 of
  each front (binary search over fronts), O(n log n). m>=3 ENS-BS (efficient
  non-dominated sort with binary search over fronts) over the lexicographic order:
  every earlier row has c0 <= the current one's, so dominance reduces to weak dominance
  of the projections (c1..c_{m-1}) (groups of equal rows are ranked together). m=3
  (``_ens_lex``): each front keeps only the projections minimal among its members so far
  (a newer member weakly below an older one replaces it: it dominates every later row the
  older one dominates), column-major in blocks of a shared pool with the least value of
  every column per group of 32 members (a group whose least values are not all below the
  row is skipped; a front is sorted on c1 when it doubles or half of it came unsorted, so
  groups are compact), the other groups scanned in branch-free windows compiled per m.
  O(n log F K m) for K kept projections per front (the front's 2-D staircase), O(n^2 m)
  in the worst case. m>=4 (``_ens_kd``): most members of a large front stay minimal in
  three or more projected columns, so each front is a fresh block of 256 members plus k-d
  parts (logarithmic method: level l holds about 256 * 2**l members) cut into k-d leaves
  of 32 members with their least corners, and a query scans only the 1-2% of the groups
  whose corner is weakly below the row; O(n log F (G + 32 V) m) plus O(n log^2 n m) for
  the builds. (The CDQ divide
  and conquer and the k-d tree branch and bound lost to ENS on the benchmark grid; both
  live on in ``partition.seeded_rank``, which the tests use as an independent check.)
* ``domination_count`` / ``dominated_count``: m=1 sort + binary search, m=2 a Fenwick
  sweep, m=3 exact counts (no cap, or a cap above 64) CDQ divide and conquer with a Fenwick
  tree, O(n log^2 n). m=4 exact counts CDQ one level deeper, O(n log^3 n) (``_count_4d``).
  m>=5, and m=3 or 4 with a cap <= 64, a k-d tree
  (median splits, leaves of 32 rows) traversed per leaf with bounding-box pruning: a node
  whose box lies wholly below the leaf's box is counted in O(1), a node that cannot reach
  it is skipped. ``cap=k`` stops a leaf's traversal once all its rows reached k.
  ``dominated_count(c) == domination_count(-c)``.
* ``topsis``: two passes over the flat matrix, compiled per number of columns, O(n m), no
  temporaries, both at memory bandwidth: column min/max/sum of squares (per-chunk float64
  partials kept per lane of 8 m values; finiteness read off the results for free), then
  scaling, distances and closeness (one square root per row) fused in one vectorized row
  loop straight into the output.
* ``top_k``: ``argpartition`` + sort of the k selected, O(n + k log k).
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

from . import _shared
from ._validate import (
    check_cap,
    check_costs,
    check_k,
    check_out,
    check_scores,
    check_topsis_inputs,
)

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
_CDQ_CAP = 64  # m=3/4 counts with a cap above this use the exact CDQ count, else the k-d tree
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


def _order_by_key(c, key):
    """Argsort by ``key``; runs of equal key are then ordered lexicographically by row.

    With ``key = row sums`` this is a topological order of dominance (a dominator has a
    sum <= the dominated row's, and when equal it is lexicographically smaller); with
    ``key = c[:, 0]`` it is the lexicographic order. The argsort is NumPy's (vectorized
    sorting networks on AVX-512 machines, ~3x faster than Numba's own ``np.argsort``).
    """
    order = np.argsort(key)
    _sort_key_ties(c, key, order)
    return order


@njit(cache=_CACHE, nogil=True)
def _sort_key_ties(c, key, order):
    """Re-sort, lexicographically by row, each run of ``order`` with equal ``key``."""
    n, m = c.shape
    tmp = np.empty(0, dtype=order.dtype)
    i = 0
    while i < n:
        j = i + 1
        ki = key[order[i]]
        while j < n and key[order[j]] == ki:
            j += 1
        if j - i > 1:
            if tmp.shape[0] < n:
                tmp = np.empty(n, dtype=order.dtype)
            _lex_sort_segment(c, order, i, j, tmp, m)
        i = j


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


# ---------------------------------------------------------------------------------------
# Lexicographic ENS-BS with projection pruning (ranks for m = 3)
# ---------------------------------------------------------------------------------------
#
# Rows are swept in lexicographic order, so every earlier row has c0 <= the current one's
# and, groups of equal rows being handled together, an earlier row dominates the current
# row iff its projection (c1, ..., c_{m-1}) is weakly below the current row's projection.
# Each front keeps only the projections that are minimal among its members so far (a
# member whose projection is weakly above a newer member's can no longer be the only
# dominator of any later row: the newer member dominates everything it dominates), stored
# column-major in blocks of a shared pool. The helpers are compiled once per number of
# projected columns ``_D`` (``_spec_cols``), so the column loops unroll and the member loop
# vectorizes; pool indices are unsigned (no negative-index wrap-around in the hot loops).

_ENS_W = 32  # members per vectorized window
_ENS_RESORT = 2  # sort a front again once more than 1/_ENS_RESORT of it came unsorted
# set per specialization by _spec_cols: the number of (projected) columns, and the inlined
# helpers compiled for it
_D = 0
_ens_scan = _ens_prune = _ens_append = _piv_dominated = _first_piv = None


def _ens_scan_impl(pool, o, cp, e, x):
    """True when a member of the front block at ``o`` (column k at ``o + k cp``, members
    [0, e); then, at ``o + _D cp + k (cp >> 5)``, per 32-member group a lower bound of
    column k) is weakly below ``x`` in every projected column. Groups are visited newest
    first; a group whose bounds are not all <= ``x`` is skipped, the others are checked
    in one branch-free window."""
    ucp = np.uint64(cp)
    mo = np.uint64(o + _D * cp)
    ucg = np.uint64(cp >> 5)
    g = (e + 31) >> 5
    while g > 0:
        g -= 1
        ug = np.uint64(g)
        v = pool[mo + ug] <= x[0]
        for k in range(1, _D):
            v &= pool[mo + np.uint64(k) * ucg + ug] <= x[k]
        if not v:
            continue
        s = g << 5
        if s + _ENS_W <= e:
            b = np.uint64(o + s)
            cnt = 0
            for f in range(_ENS_W):
                uf = b + np.uint64(f)
                w = pool[uf] <= x[0]
                for k in range(1, _D):
                    w &= pool[uf + np.uint64(k) * ucp] <= x[k]
                cnt += w
            if cnt:
                return True
        else:
            for f in range(s, e):
                uf = np.uint64(o + f)
                w = pool[uf] <= x[0]
                for k in range(1, _D):
                    w &= pool[uf + np.uint64(k) * ucp] <= x[k]
                if w:
                    return True
    return False


def _ens_prune_impl(pool, o, cp, e, x):
    """Remove the members weakly above ``x`` in every projected column (the last member
    moves into the hole, lowering its group's least values if needed); returns the new
    member count. Windows without a hit cost one vectorized pass."""
    ucp = np.uint64(cp)
    mo = np.uint64(o + _D * cp)
    ucg = np.uint64(cp >> 5)
    s = 0
    while s < e:
        w = min(_ENS_W, e - s)
        b = np.uint64(o + s)
        cnt = 0
        for f in range(w):
            uf = b + np.uint64(f)
            v = pool[uf] >= x[0]
            for k in range(1, _D):
                v &= pool[uf + np.uint64(k) * ucp] >= x[k]
            cnt += v
        if cnt == 0:
            s += w
            continue
        f = s
        while f < s + w and f < e:
            uf = np.uint64(o + f)
            v = pool[uf] >= x[0]
            for k in range(1, _D):
                v &= pool[uf + np.uint64(k) * ucp] >= x[k]
            if v:
                e -= 1
                ue = np.uint64(o + e)
                ug = np.uint64(f >> 5)
                for k in range(_D):
                    u = pool[ue + np.uint64(k) * ucp]
                    pool[uf + np.uint64(k) * ucp] = u
                    um = mo + np.uint64(k) * ucg + ug
                    if u < pool[um]:
                        pool[um] = u
            else:
                f += 1
        s = f
    return e


def _ens_append_impl(pool, o, cp, sz, x):
    """Append ``x`` as member ``sz`` of the block at ``o`` (capacity ``cp``): its columns,
    and its group's least values (set by the group's first member, lowered after)."""
    for k in range(_D):
        pool[o + k * cp + sz] = x[k]
        gm = o + _D * cp + k * (cp >> 5) + (sz >> 5)
        if sz & 31 == 0 or x[k] < pool[gm]:
            pool[gm] = x[k]


@njit(cache=_CACHE, nogil=True)
def _ens_resort(pool, o, cp, sz, no, ncp, d, tmp):
    """Write the ``sz`` members of the block at ``o`` (capacity ``cp``) into the block at
    ``no`` (capacity ``ncp``; may be the same block) ordered by their first projected
    column, and set the exact least values of every 32-member group: sorted groups are
    compact in that column, so the scan skips most of them."""
    for t in range(d * sz):
        tmp[t] = pool[o + (t // sz) * cp + t % sz]
    srt = np.argsort(tmp[:sz])
    ng = ncp >> 5
    mo = no + d * ncp
    for k in range(d):
        for f in range(sz):
            pool[no + k * ncp + f] = tmp[k * sz + srt[f]]
        for g in range((sz + 31) >> 5):
            lo = np.inf
            for f in range(g << 5, min(sz, (g + 1) << 5)):
                lo = min(lo, pool[no + k * ncp + f])
            pool[mo + k * ng + g] = lo


@njit(cache=_CACHE, nogil=True)
def _ens_grow(pool, need):
    """``pool`` itself, or a copy at least ``need`` long (capacity doubling)."""
    if need <= pool.shape[0]:
        return pool
    nc = max(1024, pool.shape[0] * 2)
    while nc < need:
        nc *= 2
    p2 = np.empty(nc, dtype=pool.dtype)
    p2[: pool.shape[0]] = pool
    return p2


def _ens_lex_impl(c, order, only_front):
    """Non-dominated sorting by ENS-BS over the lexicographic ``order`` with pruned,
    column-major fronts: a group of equal rows gets the first front none of whose kept
    projections is weakly below its projection (binary search over the fronts: the
    predicate is monotone in the front index), then joins it (members it weakly dominates
    in projection are removed). With ``only_front`` only front 0 is kept and every other
    row gets rank 1 (a front test). O(n log F |F_max| m) worst case; the kept projections
    are the (m-1)-dimensional minima of each front, far fewer than its members. Each
    front's block also holds per 32-member group the least value of every column (lower
    bounds: kept exact on appends and sorts, lowered when a member moves in), and is
    sorted on its first projected column when it doubles or once more than half of it
    was appended unsorted (``_ENS_RESORT``), so that the scan can skip whole groups."""
    n, m = c.shape
    d = m - 1
    rank = np.empty(n, dtype=np.int32)
    nmax = 1 if only_front else n
    off = np.empty(nmax + 1, dtype=np.int64)
    cap = np.empty(nmax + 1, dtype=np.int64)
    size = np.zeros(nmax + 1, dtype=np.int64)
    pool = np.empty(max(1024, min(n, 65536) * d), dtype=c.dtype)
    fresh = np.zeros(nmax + 1, dtype=np.int64)  # members appended since the last sort
    tmp = np.empty(0, dtype=c.dtype)
    top = 0
    nf = 0
    x = np.empty(d, dtype=c.dtype)
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, m):
            j += 1
        for k in range(d):
            x[k] = c[head, k + 1]
        lo = 0
        hi = nf
        while lo < hi:
            mid = (lo + hi) >> 1
            if _ens_scan(pool, off[mid], cap[mid], size[mid], x):
                lo = mid + 1
            else:
                hi = mid
        rk = lo
        for t in range(i, j):
            rank[order[t]] = rk
        i = j
        if only_front and rk > 0:
            continue
        if rk == nf:
            nf += 1
            blk = 32 * d + d  # 32 members and one group minimum per column
            pool = _ens_grow(pool, top + blk)
            off[rk] = top
            cap[rk] = 32
            top += blk
            size[rk] = 0
            fresh[rk] = 0
        o = off[rk]
        cp = cap[rk]
        sz = _ens_prune(pool, o, cp, size[rk], x)
        if sz == cp:  # move to the end of the pool with twice the capacity, sorted
            ncp = 2 * cp
            blk = ncp * d + (ncp >> 5) * d
            pool = _ens_grow(pool, top + blk)
            if tmp.shape[0] < sz * d:
                tmp = np.empty(2 * sz * d, dtype=c.dtype)
            _ens_resort(pool, o, cp, sz, top, ncp, d, tmp)
            o = top
            cp = ncp
            off[rk] = o
            cap[rk] = cp
            top += blk
            fresh[rk] = 0
        elif fresh[rk] > 64 and _ENS_RESORT * fresh[rk] > sz:  # many unsorted members: sort again
            if tmp.shape[0] < sz * d:
                tmp = np.empty(2 * sz * d, dtype=c.dtype)
            _ens_resort(pool, o, cp, sz, o, cp, d, tmp)
            fresh[rk] = 0
        _ens_append(pool, o, cp, sz, x)
        fresh[rk] += 1
        size[rk] = sz + 1
    return rank


_ENS_LEX = {}


def _spec_cols(fn, d, glb, suffix="", **kw):
    """``fn`` compiled with ``_D = d`` (and the extra globals ``glb``) under its own name,
    so each specialization has its own cache entry."""
    g = dict(fn.__globals__)
    g["_D"] = d
    g.update(glb)
    name = f"{fn.__name__}_d{d}{suffix}"
    h = types.FunctionType(fn.__code__, g, name, fn.__defaults__, fn.__closure__)
    h.__qualname__ = name
    return njit(cache=_CACHE, nogil=True, **kw)(h)


def _ens_helpers(d):
    """The block helpers (scan, prune, append) inlined for ``d`` projected columns."""
    return {name: _spec_cols(fn, d, {}, inline="always") for name, fn in (
        ("_ens_scan", _ens_scan_impl), ("_ens_prune", _ens_prune_impl),
        ("_ens_append", _ens_append_impl))}


def _ens_lex(c, order, only_front=False):
    """Ranks (or, with ``only_front``, 0 on the front and 1 elsewhere) of a finite
    C-contiguous matrix with m >= 2 given its lexicographic order."""
    d = c.shape[1] - 1
    f = _ENS_LEX.get(d)
    if f is None:
        f = _ENS_LEX[d] = _spec_cols(_ens_lex_impl, d, _ens_helpers(d))
    return f(c, order, only_front)



# ---------------------------------------------------------------------------------------
# ENS-BS with k-d ordered fronts (ranks and the front for m >= 4)
# ---------------------------------------------------------------------------------------
#
# With three or more projected columns most members of a large front stay minimal, so the
# pruned fronts above grow to hundreds of thousands of projections, and a row that joins
# a front would scan all of them. Here a front is a fresh block of ``_KD_B`` members (the
# pruned layout above) plus k-d parts. A k-d part is cut into groups of 32 members that
# are the leaves of a median-split k-d tree, hence compact in every column, and
# superblocks of 32 consecutive groups; each group and superblock keeps its least value
# per column. A query tests superblock corners, then the 32 group corners of a passing
# superblock in one branch-free window, and scans only the groups whose least corner is
# weakly below the row (1-2% of the groups on the anticorrelated benchmark, against 30%
# for groups sorted on one column and 75% in arrival order). The k-d parts follow the
# logarithmic method: level l holds about ``_KD_B 2**l`` members, and a full fresh block
# is built, with the members of levels 0..l-1, into the first empty level l (a binary
# counter), so each member is rebuilt O(log(F / _KD_B)) times. Members of k-d parts are
# never pruned: a member weakly above a newer one in projection is redundant, not wrong,
# and looking for such members cost more than scanning them (measured: 4x slower).

_KD_B = 256  # members per fresh block (measured best among 128-1024)
_KD_MIN_M = 4  # ranks and the front use k-d fronts from this many columns on
_KD_LEVELS = 32  # levels per front: room for _KD_B * 2**32 members
# set per specialization by _spec_cols
_kd_layout = _kd_scan = _kd_build = _select_rows = None


@njit(cache=_CACHE, nogil=True, inline="always")
def _ctz64(v):
    """Index of the lowest set bit of a non-zero uint64 (binary search on the bits)."""
    t = 0
    if v & np.uint64(0xFFFFFFFF) == 0:
        v >>= np.uint64(32)
        t += 32
    if v & np.uint64(0xFFFF) == 0:
        v >>= np.uint64(16)
        t += 16
    if v & np.uint64(0xFF) == 0:
        v >>= np.uint64(8)
        t += 8
    if v & np.uint64(0xF) == 0:
        v >>= np.uint64(4)
        t += 4
    if v & np.uint64(0x3) == 0:
        v >>= np.uint64(2)
        t += 2
    if v & np.uint64(0x1) == 0:
        t += 1
    return t


def _kd_layout_impl(size):
    """Layout of a k-d part of ``size`` members: capacity (whole groups), superblocks,
    offset of the group least corners (column k at ``o_g + k * 32 nsb``, padded to whole
    superblocks with +inf), offset of the superblock least corners (column k at
    ``o_s + k * nsb``) and total length. Members: column k at ``k * cap``, +inf padded."""
    cap = ((size + 31) >> 5) << 5
    nsb = (size + 1023) >> 10
    o_g = _D * cap
    o_s = o_g + _D * (nsb << 5)
    return cap, nsb, o_g, o_s, o_s + _D * nsb


def _kd_scan_impl(part, size, x):
    """True when a member of the k-d part ``part`` (``size`` members) is weakly below
    ``x`` in every projected column."""
    cap, nsb, o_g, o_s, _ = _kd_layout(size)
    ucap = np.uint64(cap)
    ugp = np.uint64(nsb << 5)
    unsb = np.uint64(nsb)
    for sb in range(nsb):
        usb = np.uint64(sb)
        v = part[np.uint64(o_s) + usb] <= x[0]
        for k in range(1, _D):
            v &= part[np.uint64(o_s) + np.uint64(k) * unsb + usb] <= x[k]
        if not v:
            continue
        g0 = np.uint64(o_g) + (usb << np.uint64(5))
        mask = np.uint64(0)
        for t in range(32):
            ut = np.uint64(t)
            w = part[g0 + ut] <= x[0]
            for k in range(1, _D):
                w &= part[g0 + np.uint64(k) * ugp + ut] <= x[k]
            mask |= np.uint64(w) << ut
        while mask:
            b = (usb << np.uint64(10)) + (np.uint64(_ctz64(mask)) << np.uint64(5))
            mask &= mask - np.uint64(1)
            cnt = 0
            for f in range(32):
                uf = b + np.uint64(f)
                w = part[uf] <= x[0]
                for k in range(1, _D):
                    w &= part[uf + np.uint64(k) * ucap] <= x[k]
                cnt += w
            if cnt:
                return True
    return False


def _select_rows_impl(rows, lo, hi, kth, dim):
    """Quickselect on the rows of ``rows`` (row-major, ``_D`` columns): reorder rows
    [lo, hi) in place so that row ``kth`` holds the kth value of column ``dim``, the rows
    before it no greater and the rows after it no smaller (contiguous row swaps, not an
    index permutation: the builds stay in cache)."""
    while hi - lo > 1:
        a = rows[lo, dim]
        b = rows[(lo + hi) >> 1, dim]
        z = rows[hi - 1, dim]
        if a > b:
            a, b = b, a
        if b > z:
            b = z
            if a > b:
                b = a
        pivot = b
        i = lo
        j = hi - 1
        while i <= j:
            while rows[i, dim] < pivot:
                i += 1
            while rows[j, dim] > pivot:
                j -= 1
            if i <= j:
                for k in range(_D):
                    u = rows[i, k]
                    rows[i, k] = rows[j, k]
                    rows[j, k] = u
                i += 1
                j -= 1
        if kth <= j:
            hi = j + 1
        elif kth >= i:
            lo = i
        else:
            return


def _kd_build_impl(rows, size):
    """The k-d part of ``rows[:size]`` (reordered in place): median splits on the widest
    column at multiples of 32 rows, so that every group of 32 is one leaf and every
    superblock a few neighbouring subtrees. O(size log size _D)."""
    stack = np.empty(256, dtype=np.int64)  # depth <= log2(size / 32) < 64
    stack[0] = 0
    stack[1] = size
    sp = 2
    mn = np.empty(_D, dtype=rows.dtype)
    mx = np.empty(_D, dtype=rows.dtype)
    while sp > 0:
        sp -= 2
        lo = stack[sp]
        hi = stack[sp + 1]
        if hi - lo <= 32:
            continue
        for k in range(_D):
            mn[k] = rows[lo, k]
            mx[k] = rows[lo, k]
        for i in range(lo + 1, hi):
            for k in range(_D):
                u = rows[i, k]
                mn[k] = min(mn[k], u)
                mx[k] = max(mx[k], u)
        best = 0
        for k in range(1, _D):
            if mx[k] - mn[k] > mx[best] - mn[best]:
                best = k
        mid = lo + ((((hi - lo + 31) >> 5) + 1) >> 1 << 5)  # half of the groups, rounded up
        _select_rows(rows, lo, hi, mid, best)
        stack[sp] = lo
        stack[sp + 1] = mid
        stack[sp + 2] = mid
        stack[sp + 3] = hi
        sp += 4
    cap, nsb, o_g, o_s, total = _kd_layout(size)
    gp = nsb << 5
    out = np.empty(total, dtype=rows.dtype)
    for k in range(_D):
        for f in range(size):
            out[k * cap + f] = rows[f, k]
        for f in range(size, cap):
            out[k * cap + f] = np.inf
        for g in range(gp):
            a = np.inf
            for f in range(g << 5, min(size, (g + 1) << 5)):
                a = min(a, out[k * cap + f])
            out[o_g + k * gp + g] = a
        for s in range(nsb):
            a = np.inf
            for g in range(s << 5, (s + 1) << 5):
                a = min(a, out[o_g + k * gp + g])
            out[o_s + k * nsb + s] = a
    return out


def _ens_kd_impl(c, order, only_front):
    """Non-dominated sorting by ENS-BS over the lexicographic ``order``, as
    ``_ens_lex_impl`` (same contract), with every front held as a fresh block and k-d
    parts (see the comment above). O(n log F (G + 32 V) m) for G superblock and group
    corners tested and V groups visited per query, plus O(n log(n / _KD_B) log n m) for
    the builds; O(n m) memory: a fresh block starts at 32 members and doubles up to
    ``_KD_B``, and a front gets its ``_KD_LEVELS`` k-d slots only when its fresh block first
    fills (so a chain of n one-row fronts costs 32 projections per front, not 256 + 32 slots)."""
    n, m = c.shape
    d = m - 1
    nl = _KD_LEVELS
    nb = _KD_B
    rank = np.empty(n, dtype=np.int32)
    empty = np.empty(0, dtype=c.dtype)
    fresh = [empty for _ in range(0)]  # front f: its fresh block
    fcap = np.zeros(16, dtype=np.int64)  # capacity of each fresh block
    fsize = np.zeros(16, dtype=np.int64)  # members in each fresh block
    base = np.full(16, -1, dtype=np.int64)  # first k-d slot of each front, -1: none yet
    parts = [empty for _ in range(0)]  # k-d slots: level l of front f at base[f] + l
    psize = np.zeros(16 * nl, dtype=np.int64)  # members per slot
    rows = np.empty((nb, d), dtype=c.dtype)  # members being built into a level
    nf = 0
    x = np.empty(d, dtype=c.dtype)
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        while j < n and _rows_equal(c, order[j], head, m):
            j += 1
        for k in range(d):
            x[k] = c[head, k + 1]
        lo = 0
        hi = nf
        while lo < hi:
            mid = (lo + hi) >> 1
            hit = _ens_scan(fresh[mid], 0, fcap[mid], fsize[mid], x)
            q = base[mid]
            while not hit and q >= 0 and q < base[mid] + nl:
                hit = psize[q] > 0 and _kd_scan(parts[q], psize[q], x)
                q += 1
            if hit:
                lo = mid + 1
            else:
                hi = mid
        rk = lo
        for t in range(i, j):
            rank[order[t]] = rk
        i = j
        if only_front and rk > 0:
            continue
        if rk == nf:
            if nf == fsize.shape[0]:
                fcap = np.concatenate((fcap, np.zeros(nf, dtype=np.int64)))
                fsize = np.concatenate((fsize, np.zeros(nf, dtype=np.int64)))
                base = np.concatenate((base, np.full(nf, -1, dtype=np.int64)))
            nf += 1
            fresh.append(np.empty(32 * d + d, dtype=c.dtype))
            fcap[rk] = 32
        fr = fresh[rk]
        cp = fcap[rk]
        sz = _ens_prune(fr, 0, cp, fsize[rk], x)
        if sz == cp:  # twice the capacity (cp < nb: a full block of nb is carried below)
            ncp = 2 * cp
            fr2 = np.empty(ncp * d + (ncp >> 5) * d, dtype=c.dtype)
            for k in range(d):
                for f in range(sz):
                    fr2[k * ncp + f] = fr[k * cp + f]
                for g in range(cp >> 5):
                    fr2[d * ncp + k * (ncp >> 5) + g] = fr[d * cp + k * (cp >> 5) + g]
            fr = fr2
            cp = ncp
            fresh[rk] = fr
            fcap[rk] = cp
        _ens_append(fr, 0, cp, sz, x)
        sz += 1
        if sz == nb:  # carry the fresh block and levels 0..l-1 into the first empty level l
            if base[rk] < 0:
                base[rk] = len(parts)
                for _ in range(nl):
                    parts.append(empty)
                if psize.shape[0] < len(parts):
                    psize = np.concatenate((psize, np.zeros(psize.shape[0], dtype=np.int64)))
            q0 = base[rk]
            q = q0
            tot = sz
            while psize[q] > 0:
                tot += psize[q]
                q += 1
            if rows.shape[0] < tot:
                rows = np.empty((2 * tot, d), dtype=c.dtype)
            for f in range(sz):
                for k in range(d):
                    rows[f, k] = fr[k * cp + f]
            t = sz
            for p in range(q0, q):
                part = parts[p]
                pcap = _kd_layout(psize[p])[0]
                for f in range(psize[p]):
                    for k in range(d):
                        rows[t, k] = part[k * pcap + f]
                    t += 1
                parts[p] = empty
                psize[p] = 0
            parts[q] = _kd_build(rows, t)
            psize[q] = t
            sz = 0
        fsize[rk] = sz
    return rank


_ENS_KD = {}


def _ens_kd(c, order, only_front=False):
    """``_ens_lex`` with k-d ordered fronts (any m >= 2; used from ``_KD_MIN_M`` on)."""
    d = c.shape[1] - 1
    f = _ENS_KD.get(d)
    if f is None:
        lay = _spec_cols(_kd_layout_impl, d, {}, inline="always")
        f = _ENS_KD[d] = _spec_cols(
            _ens_kd_impl, d, {
                **_ens_helpers(d),
                "_kd_layout": lay,
                "_kd_scan": _spec_cols(_kd_scan_impl, d, {"_kd_layout": lay}, inline="always"),
                "_kd_build": _spec_cols(_kd_build_impl, d, {
                    "_kd_layout": lay, "_select_rows": _spec_cols(_select_rows_impl, d, {})}),
            },
        )
    return f(c, order, only_front)


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


_PIV_W = 8  # pivots per vectorized window of the prefilter check
# the prefilter passes are light (mostly one pivot per row) and run serially below this
# many rows: measured on the busy 2-core box, the serial pass beat the 2-thread one at 1e6
_PREFILTER_PAR_MIN = 2_000_000


def _first_piv_impl(pv, ups, x):
    """True when the first pivot (column-major in ``pv``, column stride ``ups``) dominates
    the row ``x`` (length ``_D``); stops at the first column where it is larger."""
    le = True
    lt = False
    for k in range(_D):
        v = pv[np.uint64(k) * ups]
        if v > x[k]:
            le = False
            break
        if v < x[k]:
            lt = True
    return le and lt


def _piv_dominated_impl(pv, ps, x):
    """True when a pivot dominates the row ``x`` (length ``_D``). Pivots are stored
    column-major in ``pv`` (column k at ``k ps``, padded with +inf to a multiple of 8) and
    checked 8 at a time in branch-free windows (``all(p <= x) and any(p < x)``), stopping
    after the first window that holds a dominator (the best pivots come first)."""
    ups = np.uint64(ps)
    # the first pivot (the rank-sum minimizer) alone drops most rows of correlated data
    if _first_piv(pv, ups, x):
        return True
    s = 0
    while s < ps:
        cnt = 0
        for p in range(_PIV_W):
            u = np.uint64(s + p)
            v = pv[u]
            le = v <= x[0]
            lt = v < x[0]
            for k in range(1, _D):
                v = pv[u + np.uint64(k) * ups]
                le &= v <= x[k]
                lt |= v < x[k]
            cnt += le & lt
        if cnt:
            return True
        s += _PIV_W
    return False


def _drop_dominated_by_impl(c, idx, pv, ps, out):
    """Compact into ``out`` the rows ``idx`` that no pivot dominates; returns the count
    kept and whether every value of the rows seen is finite. O(|idx| P m), early exits."""
    nk = idx.shape[0]
    nch = min(64, max(1, nk // 16384))
    cnt = np.zeros(nch, dtype=np.int64)
    fin = np.zeros(nch)  # 1.0 where a chunk holds a non-finite value
    keep = np.empty(nk, dtype=np.bool_)
    for q in prange(nch):
        s = q * nk // nch
        e = (q + 1) * nk // nch
        x = np.empty(_D, dtype=c.dtype)
        f = 0.0
        kk = 0
        for t in range(s, e):
            i = idx[t]
            for k in range(_D):
                v = c[i, k]
                x[k] = v
                if np.float64(v) - np.float64(v) != 0.0:  # NaN for inf / NaN
                    f = 1.0
            d = _piv_dominated(pv, ps, x)
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


def _drop_first_impl(c, pv, ps, gval, grow, glo, ginv, g, out):
    """First prefilter round over all rows of ``c``: each chunk writes the row numbers no
    pivot dominates at its own offset in ``out``, then the chunks are packed; returns the
    count kept and whether every value is finite. One read of ``c``, O(n P m). For m = 2
    and 3 (``g > 0``) a grid of sample rows (``_grid_table``) is consulted between the
    first pivot and the windowed check of the others: O(1) per row."""
    n = c.shape[0]
    nch = min(64, max(1, n // 16384))
    cnt = np.zeros(nch, dtype=np.int64)
    bad = np.zeros(nch, dtype=np.int64)
    ups = np.uint64(ps)
    for q in prange(nch):
        s = q * n // nch
        e = (q + 1) * n // nch
        x = np.empty(_D, dtype=c.dtype)
        f = 0
        o = s
        for i in range(s, e):
            for k in range(_D):
                v = c[i, k]
                x[k] = v
                if np.float64(v) - np.float64(v) != 0.0:  # NaN for inf / NaN
                    f = 1
            if _first_piv(pv, ups, x):  # drops most rows of correlated data
                continue
            if g > 0:  # the grid: the sample row with the least last column in the cell
                cell = 0
                for k in range(_D - 1):
                    b = (np.float64(x[k]) - glo[k]) * ginv[k]
                    if not (b >= 0.0):
                        cell = -1
                        break
                    cell = cell * g + (int(b) if b < g else g - 1)
                if cell >= 0 and gval[cell] < x[_D - 1]:
                    r = grow[cell]
                    le = True
                    lt = False
                    for k in range(_D):
                        v = c[r, k]
                        if v > x[k]:
                            le = False
                            break
                        if v < x[k]:
                            lt = True
                    if le and lt:
                        continue
            if not _piv_dominated(pv, ps, x):
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


@njit(cache=_CACHE, nogil=True)
def _grid_table(c, step, g):
    """For m = 2 or 3: a grid of g (m=2) or g x g (m=3) cells over the first m-1 columns
    (equal widths over the range of a strided sample of the rows) holding, per cell, the
    sample row with the least last column among the rows that lie weakly below the cell's
    lower corner (each sample row is placed in the first cell whose corner is >= it, then
    prefix minima). Every row of a cell whose value is below the cell's entry in the last
    column is dominated by that entry (checked exactly by the caller, which also guards
    against rounding at cell edges). Returns (values, rows, lower bounds, inverse widths)."""
    n, m = c.shape
    nb = m - 1
    lo = np.empty(nb)
    inv = np.empty(nb)
    for k in range(nb):
        a = np.inf
        b = -np.inf
        for i in range(0, n, step):
            v = np.float64(c[i, k])
            a = min(a, v)
            b = max(b, v)
        lo[k] = a
        inv[k] = g / (b - a) if b > a else 0.0
    ncell = g**nb
    gval = np.full(ncell, np.inf)
    grow = np.full(ncell, -1, dtype=np.int64)
    for i in range(0, n, step):
        cell = 0
        ok = True
        for k in range(nb):
            v = np.ceil((np.float64(c[i, k]) - lo[k]) * inv[k])
            if not (v >= 0.0 and v < g):
                ok = False
                break
            cell = cell * g + int(v)
        if ok and c[i, m - 1] < gval[cell]:
            gval[cell] = c[i, m - 1]
            grow[cell] = i
    # prefix minima along each axis in turn: the minimum over all cells weakly below
    stride = 1
    for _ in range(nb):
        for t in range(ncell):
            if (t // stride) % g > 0 and gval[t - stride] < gval[t]:
                gval[t] = gval[t - stride]
                grow[t] = grow[t - stride]
        stride *= g
    return gval, grow, lo, inv


_GRID = {2: 4096, 3: 128, 4: 24}  # grid cells per axis for m columns (m <= _GRID_MAX_M)
_GRID_MAX_M = 4  # measured: no gain from coarser grids for m >= 5

_DROP = {}


def _drop_fn(name, m, par):
    """The prefilter pass ``name`` ("first" or "idx") compiled for m columns, parallel or
    serial (each under its own cached name)."""
    key = (name, m, par)
    f = _DROP.get(key)
    if f is None:
        chk = _DROP.get(("chk", m))
        if chk is None:
            first = _DROP["first_piv", m] = _spec_cols(_first_piv_impl, m, {}, inline="always")
            chk = _DROP["chk", m] = _spec_cols(_piv_dominated_impl, m, {"_first_piv": first},
                                              inline="always")
        impl = _drop_first_impl if name == "first" else _drop_dominated_by_impl
        f = _DROP[key] = _spec_cols(
            impl, m, {"_piv_dominated": chk, "_first_piv": _DROP["first_piv", m]},
            suffix="_par" if par else "_ser", parallel=par
        )
    return f


def _pivot_block(c, piv):
    """Pivot rows ``piv`` of ``c`` column-major, padded with +inf to a multiple of 8."""
    m = c.shape[1]
    p_ = piv.shape[0]
    ps = max(_PIV_W, -(-p_ // _PIV_W) * _PIV_W)
    pv = np.full((m, ps), np.inf, dtype=c.dtype)
    pv[:, :p_] = c[piv].T
    return pv.reshape(-1), ps


def _prefilter(c):
    """Pivot prefilter with the fused finiteness check (rounds of: pick pivots among the
    survivors, drop every survivor a pivot dominates). Returns the indices of the rows no
    pivot dominates: a superset of the front (a row dominated by a dropped row is, by
    transitivity, dominated by that row's pivot, so the front of the survivors is the front
    of all rows). Stops when a round removes less than a third of the survivors, or when
    they are few (65,536 for m <= 3, 4096 for m >= 4)."""
    n, m = c.shape
    # first round straight over the rows (no index array), pivots from a strided sample
    nfs = _sample_front_rows(n)
    piv = _pivot_candidates(c, np.arange(0, n, max(1, n // nfs)), nfs)
    out = np.empty(n, dtype=np.int64)  # pages untouched beyond the survivors
    pv, ps = _pivot_block(c, piv)
    if m <= _GRID_MAX_M:
        g = _GRID[m]
        gval, grow, glo, ginv = _grid_table(c, max(1, n // 16384), g)
    else:
        g = 0
        gval = np.empty(0)
        grow = np.empty(0, dtype=np.int64)
        glo = ginv = np.zeros(1)
    kept, ok = _drop_fn("first", m, n >= _PREFILTER_PAR_MIN)(
        c, pv, ps, gval, grow, glo, ginv, g, out
    )
    if not ok:
        _raise_if_not_finite(c)
    idx = out[:kept]
    # more rounds pay only while the survivors are many: each picks new pivots (a sample
    # front, ~1 ms) and rereads them, while the final sweeps for m <= 3 are O(k log k)
    if kept <= (65536 if m <= 3 else 4096) or kept > (2 * n) // 3:
        return idx
    while True:
        k = idx.shape[0]
        piv = _pivot_candidates(c, idx, nfs)
        out = np.empty(k, dtype=np.int64)
        pv, ps = _pivot_block(c, piv)
        kept, ok = _drop_fn("idx", m, k >= _PREFILTER_PAR_MIN)(c, idx, pv, ps, out)
        idx = out[:kept]
        if kept <= 1024 or kept > (2 * k) // 3:
            return idx


def _front_of(c):
    """Front of a finite, C-contiguous (n >= 1, m >= 2) matrix (no prefilter)."""
    m = c.shape[1]
    if m == 2:
        return _front_2d(c, _order_by_key(c, np.ascontiguousarray(c[:, 0])))
    if m == 3:
        order = _order_by_key(c, np.ascontiguousarray(c[:, 0]))
        out, finished = _front_3d_stair(c, order, _STAIR_MAX)
        return out if finished else _front_3d(c, order)
    order = _order_by_key(c, np.ascontiguousarray(c[:, 0]))
    return (_ens_kd if m >= _KD_MIN_M else _ens_lex)(c, order, True) == 0


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
    finiteness checked in the same pass; for m<=4 the first round also looks each row up in
    a grid of sample rows, O(1)) drops the rows that sampled pivot rows dominate,
    then on the survivors: m=2 lexicographic sort + sweep O(n log n); m=3 lexicographic
    sort + staircase sweep O(n log S + |F| S), Fenwick sweep O(n log n) for big staircases;
    m>=4 the k-d lexicographic ENS restricted to front 0: each row against the front so
    far, through k-d ordered groups of 32 members and their least corners, O(n (G + 32 V) m)
    for G corners tested and V groups scanned per row.
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

    Algorithm: m=1 dense ranking O(n log n); m=2 lexicographic sweep keeping each front's
    last c1, O(n log n); m>=3 ENS-BS over the lexicographic order: m=3 with per-front
    pruned 2-D projections scanned in vectorized windows, O(n log F K m) for K kept
    projections per front; m>=4 with fronts held as k-d ordered groups of 32 members
    (logarithmic method), O(n log F (G + 32 V) m) for G corners tested and V groups scanned
    per query (O(n^2 m) worst case for both).
    """
    c = check_costs(costs)
    n, m = c.shape
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if m == 0:
        return np.zeros(n, dtype=np.int32)
    if m == 1:
        return _rank_1d(c[:, 0])
    order = _order_by_key(c, np.ascontiguousarray(c[:, 0]))
    if m == 2:
        return _rank_2d_tails(c, order)
    return (_ens_kd if m >= _KD_MIN_M else _ens_lex)(c, order)


def domination_count(costs, *, cap=None):
    """How many rows dominate each row (contract:
    :func:`gpurank.kernels.reference.domination_count`).

    ``cap=k`` returns ``min(count, k)`` and stops counting a row once it reached k.

    Algorithm: m=1 sort + binary search; m=2 Fenwick sweep O(n log n); m=3 without a cap (or
    a cap > 64) CDQ divide and conquer O(n log^2 n); m=4 without a cap (or a cap > 64)
    two-level CDQ O(n log^3 n); m>=5, and m=3 or 4 with a cap <= 64, k-d tree with
    bounding-box pruning (O(n^2 m) worst case, near O(n log n) on correlated data; with a
    cap, each leaf stops once all its rows reached it: 1e6 x 3 with cap=10 in 0.35-0.52 s
    against 1.8-2.4 s exact, measured).
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
    elif m == 3 and (cap is None or cap > _CDQ_CAP):
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


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness (contract: :func:`gpurank.kernels.reference.topsis`).

    Algorithm: two passes over the flat row-major matrix, compiled per number of columns
    (the column loops unroll, the row loops vectorize over interleaved columns), no
    temporaries. Pass 1 keeps min, max and sum of squares per lane of ``8 m`` consecutive
    values (lane j always holds column j mod m), so it streams the matrix with plain
    vector loads and no reduction inside the loop; the finiteness check is fused in (no
    separate validation pass). Pass 2 fuses scaling, weighted distances to the ideal and
    anti-ideal points and closeness ``dm2 / (sqrt(dp2 dm2) + dm2)`` (one square root per
    row), written straight to an output allocated by NumPy (huge pages). Both passes run
    at memory bandwidth; in parallel from 400,000 rows on, serially below (thread wake-ups
    cost more than they save on small inputs). O(n m) time, O(m) extra memory besides the
    output. With ``out`` no memory is allocated at all: a fresh output costs page faults
    on first touch (for 1e7 rows, 80 MB: about as long as the two passes when the kernel
    must compact memory for huge pages).
    """
    x = _as_costs(matrix, name="matrix")
    _, w, b = check_topsis_inputs(x[:0], weights, benefit, norm=norm)  # weights, flags, norm
    n, m = x.shape
    if out is not None:
        check_out(out, n, x)
    if n == 0:
        return np.zeros(0, dtype=np.float64) if out is None else out
    stats, scores = _topsis_fns(m, n >= _PAR_MIN)
    lo, hi, ss, ok = stats(x.reshape(-1), n)
    if not ok:
        check_costs(x, name="matrix")  # raises the canonical message
    scale, ideal, anti, offset = _topsis_params(lo, hi, ss, w, b, norm)
    if out is None:
        out = np.empty(n, dtype=np.float64)  # NumPy's allocator: transparent huge pages
    return scores(x.reshape(-1), scale, offset, ideal, anti, out)


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


_TOPSIS = {}


def _topsis_fns(m, par):
    """The two TOPSIS passes compiled for m columns, parallel or serial."""
    key = (m, par)
    f = _TOPSIS.get(key)
    if f is None:
        sfx = "_par" if par else "_ser"
        f = _TOPSIS[key] = (
            # NumPy's error model: no zero-division branch in the row loop, which would
            # keep it from vectorizing (the degenerate rows are selected away explicitly)
            _spec_cols(_col_stats_impl, m, {}, suffix=sfx, parallel=par, error_model="numpy"),
            _spec_cols(_topsis_scores_impl, m, {}, suffix=sfx, parallel=par,
                       error_model="numpy"),
        )
    return f


def _col_stats_impl(xf, n):
    """Column min, max and sum of squares (float64) of the flat row-major ``xf`` (n rows
    of ``_D`` columns) in one pass over row chunks. Each chunk keeps the three statistics
    per lane of ``8 _D`` consecutive values: lane j always holds column j mod ``_D``, so
    the inner loop is element-wise (plain vector loads, no horizontal reduction) and the
    lanes are folded into columns once per chunk."""
    nl = 8 * _D
    nchunks = min(64, max(1, n // 4096))
    los = np.empty((nchunks, nl))
    his = np.empty((nchunks, nl))
    sss = np.empty((nchunks, nl))
    for q in prange(nchunks):
        s = np.uint64((q * n // nchunks) * _D)
        e = np.uint64(((q + 1) * n // nchunks) * _D)
        lo = np.full(nl, np.inf)
        hi = np.full(nl, -np.inf)
        ss = np.zeros(nl)
        b = s
        while b + np.uint64(nl) <= e:
            for j in range(nl):
                v = np.float64(xf[b + np.uint64(j)])
                lo[j] = min(lo[j], v)
                hi[j] = max(hi[j], v)
                ss[j] += v * v
            b += np.uint64(nl)
        for j in range(e - b):  # a whole number of rows: lane j still holds column j mod _D
            v = np.float64(xf[b + np.uint64(j)])
            lo[j] = min(lo[j], v)
            hi[j] = max(hi[j], v)
            ss[j] += v * v
        for j in range(nl):
            los[q, j] = lo[j]
            his[q, j] = hi[j]
            sss[q, j] = ss[j]
    lo = np.full(_D, np.inf)
    hi = np.full(_D, -np.inf)
    ss = np.zeros(_D)
    for q in range(nchunks):
        for j in range(nl):
            k = j % _D
            lo[k] = min(lo[k], los[q, j])
            hi[k] = max(hi[k], his[q, j])
            ss[k] += sss[q, j]
    # finiteness for free: a NaN makes ss NaN, an infinity makes ss infinite (ok is also
    # False when a huge finite column overflows ss; the caller re-checks then)
    ok = True
    for k in range(_D):
        if not (np.isfinite(lo[k]) and np.isfinite(hi[k]) and np.isfinite(ss[k])):
            ok = False
    return lo, hi, ss, ok


def _topsis_scores_impl(xf, scale, offset, ideal, anti, out):
    """Closeness of every row of the flat row-major ``xf`` (``_D`` columns) into ``out``.
    One loop over the rows of a chunk; the column loop unrolls, so the row loop vectorizes
    with interleaved loads. The closeness ``dm / (dp + dm)`` is computed as
    ``dm2 / (sqrt(dp2 dm2) + dm2)`` (one square root and one division per row instead of
    two and one), selected branch-free against the degenerate rows (both distances 0)."""
    n = out.shape[0]
    nchunks = min(64, max(1, n // 4096))
    for q in prange(nchunks):
        s = q * n // nchunks
        e = (q + 1) * n // nchunks
        for i in range(s, e):
            r = np.uint64(i) * np.uint64(_D)
            p2 = 0.0
            m2 = 0.0
            for k in range(_D):
                vv = (np.float64(xf[r + np.uint64(k)]) - offset[k]) * scale[k]
                a = vv - ideal[k]
                bb = vv - anti[k]
                p2 += a * a
                m2 += bb * bb
            den = np.sqrt(p2 * m2) + m2
            out[i] = m2 / den if m2 > 0 else (0.0 if p2 > 0 else 0.5)
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
