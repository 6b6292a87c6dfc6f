"""Divide-and-conquer dominance counting ([Bentley1980]; "CDQ" divide and conquer).

Points come in position order, and the question is always about the *earlier* points that
weakly precede a point in two or three more coordinates:

* 3-D maxima (:func:`cdq_max_3d`): positions, then ``y`` and ``z``. A bottom-up
  merge sort over positions on ``y``; while two runs are merged, every left point adds its
  value into a Fenwick tree over ``z`` and every right point queries its prefix, so each
  pair of runs contributes exactly the pairs (left, right) with ``y`` and ``z`` in order.
  O(g log g log u) for g points and u distinct ``z`` (:func:`_merge_3d`, written for sums
  and maxima; the rank kernel's chains use the maxima).
* Sums for counting (:func:`sum_3d`, :func:`sum_3d_parallel`, :func:`cdq_count_4d`): the
  same schemes tuned for the hot path of ``domination_count`` (see the section on counting
  below).
* 4-D (:func:`cdq_chain_4d`, and :func:`cdq_count_4d` with its own merges): one level deeper. Positions are split in
  halves; the step left half -> right half is a static 3-D problem on ``(y, z, w)``, solved by
  sorting both halves on ``y`` (left first on ties) and running the 3-D loop on ``(z, w)``.
  O(g log^3 g) time, O(g) memory, however the data are correlated.

References (``docs/references.md``): [Bentley1980], [Jensen2003]. The offline divide and
conquer over positions with a Fenwick tree inside (known in competitive programming as "CDQ
divide and conquer", after Chen Danqi) is the same scheme with the last dimension in a tree
([Fenwick1994]).
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from ._sort import dense_rank, dense_ranks

__all__ = ["cdq_max_3d", "cdq_chain_4d", "LEAF_3D", "LEAF_4D", "MAX_3D", "depth", "sum_3d",
           "SUM_3D_WORDS", "sum_3d_parallel", "cdq_count_4d", "cut", "fill_prefix_counts",
           "merge_keys", "rank_left_run"]


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


# --- Counting (sums of weights): brute-force leaves, small Fenwick trees, both cores.
#
# Counting is the hot path of ``domination_count`` (a 1e6 x 4 sweep has about 2e11 dominance
# pairs, so nothing that lists pairs can compete). These changes make it several times
# cheaper than the plain merge above, with the same O(g log^3 g):
#
# * Leaves of ``LEAF_3D`` / ``LEAF_4D`` points are counted by comparing all their pairs (a
#   branch-free, vectorized loop): that removes the five or six lowest merge levels, whose
#   tree walks cost far more per point than a few dozen comparisons.
# * The Fenwick tree of a run pair spans the left run only: each run also carries its order
#   on the second key, merged bottom-up like the first, and that merge gives every left point
#   its rank among the left run and every right point the number of left points at or below
#   it. A tree of ``width`` entries stays in cache where one over all the keys (8 MB at 1e6
#   points) misses on nearly every access; only points that contribute touch it and only
#   points that ask query it.
# * The 4-D step's order on ``y`` is merged from those of its two halves (O(k) per step
#   instead of a sort), the many small steps of a level run in parallel, and the few large
#   steps at the top run their inner merge levels in parallel, one tree per thread.
# * Levels are balanced for any number of points (run ``i`` of depth ``d`` starts at
#   ``i k >> d``), so the two halves of a step and the steps of a level are equal in size
#   and the threads finish together (power-of-two widths left a 1e7-point top step with
#   8.4M points on one side and 1.6M on the other).
# * With unit weights (distinct rows, the usual case) the tree of a run pair is a bitmap of
#   the inserted local ranks under a Fenwick tree of its 64-bit words (``_insert``, ``_query``).
# * A key carries its point's two flags, and local ranks live in an int32 array: the loops
#   touch fewer and smaller arrays at random (1e7 points: 136 s -> 110 s CPU for the
#   preparation and key changes, measured).

#: Points per brute-force leaf of the 3-D and the 4-D divide and conquer (1e6 x 4 realistic
#: rows: 32 and 64 are near the optimum; a larger leaf costs O(leaf) comparisons per point).
LEAF_3D = 32
LEAF_4D = 64
#: A 3-D key is ``rank << 34 | position << 2 | contributes << 1 | asks``: distinct, ordered
#: by rank then position, and it carries the two flags a merge needs, so that the hot loops
#: read a point's own arrays (at random) only for weights other than 0 and 1.
_POS = (1 << 32) - 1
#: Ranks and positions of the 3-D sums must stay below this (the key layout above).
MAX_3D = 1 << 29


@njit(inline="always")
def cut(i, k, d):
    """Start of run ``i`` of the ``2**d`` runs at depth ``d`` over ``k`` positions: the runs
    of a depth differ in length by at most one, so every level of the divide and conquer is
    balanced (and the work of its run pairs shared evenly among threads) for any ``k``."""
    return (i * k) >> d


@njit(cache=True, nogil=True)
def depth(k, leaf):
    """The smallest depth whose runs hold at most ``leaf`` of ``k`` positions."""
    d = 0
    while ((k + (1 << d) - 1) >> d) > leaf:
        d += 1
    return d


@njit(cache=True, nogil=True)
def _start_3d(ka, kb, val, d, q0, q1, part, ia, ib):
    """Leaves ``q0 .. q1 - 1`` (the runs at depth ``d``): all pairs of positions ``i < j``
    of a leaf, ``part[j] += val[i]`` where ``a`` and ``b`` weakly precede; ``ia`` and ``ib``
    get the leaf's keys in order, placed by the ranks that the same comparisons give."""
    # duplicate-code: written out as _below's leaf is, with a sum in place of a count and
    # a maximum (the innermost compiled loop of both)
    k = ka.shape[0]
    for q in range(q0, q1):
        lo = cut(q, k, d)
        hi = cut(q + 1, k, d)
        for j in range(lo, hi):
            aj = ka[j]
            bj = kb[j]
            acc = 0
            ra = 0
            rb = 0
            for i in range(lo, j):  # a key holds the position too: < means "<= and earlier"
                la = ka[i] < aj
                lb = kb[i] < bj
                acc += val[i] * (la & lb)
                ra += la
                rb += lb
            for i in range(j + 1, hi):
                ra += ka[i] < aj
                rb += kb[i] < bj
            if aj & 1:
                part[j] += acc
            ia[lo + ra] = aj
            ib[lo + rb] = bj


@njit(inline="always")
def merge_keys(src, dst, s, mid, e):
    """Merge the sorted runs ``src[s:mid]`` and ``src[mid:e]`` into ``dst[s:e]``."""
    i, j = s, mid
    for t in range(s, e):
        if j >= e or (i < mid and src[i] < src[j]):
            dst[t] = src[i]
            i += 1
        else:
            dst[t] = src[j]
            j += 1


# Unit weights (every contributing point adds 1: distinct rows) replace the Fenwick tree of a
# run pair by a bitmap of the inserted local ranks and a Fenwick tree over its 64-bit words:
# an insertion sets a bit and walks log2(h / 64) nodes, a query adds that many nodes and
# the population count of one masked word, and the tree is 64 times smaller (it stays in
# cache at widths where the plain tree does not). ``tree[0 : nw + 1]`` is the word tree,
# ``tree[nw + 1 : 2 nw + 1]`` the bitmap.


@njit(inline="always")
def _popcount(x):
    """Set bits of an int64 (the SWAR sum; every shift is masked, so an arithmetic shift
    gives the same result as a logical one)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@njit(inline="always")
def _insert(tree, unit, nw, h, r, v):
    """Add ``v`` at local rank ``r``: a bit and the word tree (``unit``, where ``v`` is 1),
    or the Fenwick tree of weights over ranks ``1 .. h``."""
    if unit:
        w = r >> 6
        tree[nw + 1 + w] |= np.int64(1) << (r & 63)
        b = w + 1
        while b <= nw:
            tree[b] += 1
            b += b & (-b)
    else:
        while r <= h:
            tree[r] += v
            r += r & (-r)


@njit(inline="always")
def _query(tree, unit, nw, r):
    """The weight inserted at local ranks ``<= r``."""
    q = 0
    if unit:
        w = r >> 6
        q = _popcount(tree[nw + 1 + w] & ((np.int64(2) << (r & 63)) - 1))
        r = w
    while r > 0:
        q += tree[r]
        r -= r & (-r)
    return q


@njit(cache=True, nogil=True)
def _merge_pair(val, unit, part, ia, ib, ja, jb, loc, tree, s, mid, e, live):
    """One run pair: merge the keys on ``a`` (``ia`` -> ``ja``) and on ``b`` (``ib`` ->
    ``jb``); with ``live``, add to every asking right point the weights of the left points
    that weakly precede it in ``a`` and ``b``.

    A left position is smaller than a right one, so ``<`` on keys is "left first on ties"
    and a merge never reads the points' own arrays to compare.
    """
    if not live:
        merge_keys(ib, jb, s, mid, e)
        merge_keys(ia, ja, s, mid, e)
        return
    h = rank_left_run(ib, jb, loc, s, mid, e)
    _sweep(val, unit, part, ia, ja, loc, tree, s, mid, e, h)


@njit(cache=True, nogil=True)
def rank_left_run(ib, jb, loc, s, mid, e):
    """Merge the runs ``ib[s:mid]`` and ``ib[mid:e]`` of keys (layout above) into ``jb[s:e]``;
    the merge ranks the left points 1..h among themselves and gives each right point the
    number of left points with a key at or below its own (``loc``, by position). Returns h."""
    i, j, t, h = s, mid, s, 0
    while i < mid and j < e:
        x = ib[i]
        y = ib[j]
        if y < x:
            loc[(y >> 2) & _POS] = h
            jb[t] = y
            j += 1
        else:
            h += 1
            loc[(x >> 2) & _POS] = h
            jb[t] = x
            i += 1
        t += 1
    while i < mid:
        h += 1
        loc[(ib[i] >> 2) & _POS] = h
        jb[t] = ib[i]
        i += 1
        t += 1
    while j < e:
        loc[(ib[j] >> 2) & _POS] = h
        jb[t] = ib[j]
        j += 1
        t += 1
    return h


@njit(inline="always")
def _sweep(val, unit, part, ia, ja, loc, tree, s, mid, e, h):
    """The merge on ``a`` of a live run pair: a left point that contributes is inserted at
    its local rank on ``b``, a right point that asks adds what is inserted at or below its
    own (``unit`` is constant along the sweep, so its branches are predicted)."""
    nw = (h >> 6) + 1
    for r in range(2 * nw + 1 if unit else h + 1):
        tree[r] = 0
    # duplicate-code: boilerplate, the merge of two sorted runs (as _sort's), with the
    # sweep's insertions and queries
    i, j, t = s, mid, s
    while i < mid and j < e:
        x = ia[i]
        y = ia[j]
        if y < x:
            if y & 1:
                p = (y >> 2) & _POS
                part[p] += _query(tree, unit, nw, loc[p])
            ja[t] = y
            j += 1
        else:
            if x & 2:
                p = (x >> 2) & _POS
                _insert(tree, unit, nw, h, loc[p], 1 if unit else val[p])
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
            p = (y >> 2) & _POS
            part[p] += _query(tree, unit, nw, loc[p])
        ja[t] = y
        j += 1
        t += 1


@njit(cache=True, nogil=True)
def _prefix_counts(ka):
    k = ka.shape[0]
    cv = np.empty(k + 1, dtype=np.int64)
    ca = np.empty(k + 1, dtype=np.int64)
    fill_prefix_counts(ka, cv, ca)
    return cv, ca


@njit(cache=True, nogil=True)
def fill_prefix_counts(ka, cv, ca):
    """Prefix counts of the weighted (``cv``) and asked (``ca``) keys, each of ``k + 1``."""
    cv[0] = 0
    ca[0] = 0
    for t in range(ka.shape[0]):
        cv[t + 1] = cv[t] + ((ka[t] >> 1) & 1)
        ca[t + 1] = ca[t] + (ka[t] & 1)


@njit(cache=True, nogil=True)
def _level_3d(val, unit, part, ia, ib, ja, jb, loc, cv, ca, d, p0, p1):
    """Run pairs ``p0 .. p1 - 1`` of the runs at depth ``d`` (merged into depth d - 1)."""
    k = val.shape[0]
    run = (k + (1 << d) - 1) >> d  # the longest run at depth d
    tree = np.empty(max(run + 1, 2 * (run >> 6) + 3), dtype=np.int64)
    for p in range(p0, p1):
        s = cut(2 * p, k, d)
        mid = cut(2 * p + 1, k, d)
        e = cut(2 * p + 2, k, d)
        live = mid < e and cv[mid] != cv[s] and ca[e] != ca[mid]
        _merge_pair(val, unit, part, ia, ib, ja, jb, loc, tree, s, mid, e, live)


@njit(cache=True, nogil=True)
def _keys_3d(a, b, val, ask):
    """The keys on ``a`` and ``b`` (layout above), and whether every weight is 0 or 1."""
    k = a.shape[0]
    ka = np.empty(k, dtype=np.int64)
    kb = np.empty(k, dtype=np.int64)
    return ka, kb, _fill_keys_3d(a, b, val, ask, ka, kb)


@njit(cache=True, nogil=True)
def _fill_keys_3d(a, b, val, ask, ka, kb):
    """:func:`_keys_3d` into ``ka`` and ``kb``; returns whether every weight is 0 or 1."""
    unit = True
    for t in range(a.shape[0]):
        flags = (2 if val[t] != 0 else 0) | (1 if ask[t] else 0)
        ka[t] = (a[t] << 34) | (t << 2) | flags
        kb[t] = (b[t] << 34) | (t << 2) | flags
        unit = unit and val[t] <= 1
    return unit


@njit(cache=True, nogil=True)
def sum_3d(a, b, val, ask):
    """For every position ``j`` with ``ask[j]``: the sum of ``val[i]`` over positions ``i < j``
    with ``a[i] <= a[j]`` and ``b[i] <= b[j]``; 0 where not asked.

    ``a`` and ``b`` are int64 ranks in [0, ``MAX_3D``), ``val`` int64 >= 0 (0: contributes
    nothing), ``ask`` bool; fewer than ``MAX_3D`` positions. Bottom-up merges from
    brute-force leaves of ``LEAF_3D``, a Fenwick tree over the left run of each run pair.
    O(k log^2 k) time, O(k) memory.
    """
    k = a.shape[0]
    return _sum_3d_in(a, b, val, ask, np.empty(SUM_3D_WORDS * (k + 1), dtype=np.int64),
                      np.empty(k, dtype=np.int32))


#: int64 words per position of :func:`_sum_3d_in`'s workspace (seven arrays of k, two of k+1).
SUM_3D_WORDS = 9


@njit(cache=True, nogil=True)
def _sum_3d_in(a, b, val, ask, ws, loc):
    """:func:`sum_3d` in the caller's workspace: ``ws`` int64 of at least ``SUM_3D_WORDS *
    (k + 1)`` words and ``loc`` int32 of at least ``k``, reused from one call to the next
    (fresh memory for every step of the 4-D levels was 1.6M page faults at 1e7 rows).
    Returns a view of ``ws``, valid until its next use."""
    k = a.shape[0]
    w = k + 1
    ka = ws[0:k]
    kb = ws[w:w + k]
    unit = _fill_keys_3d(a, b, val, ask, ka, kb)
    part = ws[2 * w:2 * w + k]
    part[:] = 0
    ia = ws[3 * w:3 * w + k]
    ib = ws[4 * w:4 * w + k]
    ja = ws[5 * w:5 * w + k]
    jb = ws[6 * w:6 * w + k]
    d = depth(k, LEAF_3D)
    _start_3d(ka, kb, val, d, 0, 1 << d, part, ia, ib)
    cv = ws[7 * w:8 * w]
    ca = ws[8 * w:9 * w]
    fill_prefix_counts(ka, cv, ca)
    lc = loc[0:k]  # local ranks of the run pair being merged
    for lev in range(d, 0, -1):
        _level_3d(val, unit, part, ia, ib, ja, jb, lc, cv, ca, lev, 0, 1 << (lev - 1))
        ia, ja = ja, ia
        ib, jb = jb, ib
    return part


@njit(cache=True, nogil=True, parallel=True)
def sum_3d_parallel(a, b, val, ask, nth):
    """:func:`sum_3d` with the leaves and the run pairs of each level shared among ``nth``
    threads (the top levels, with fewer run pairs than threads, run on fewer)."""
    k = a.shape[0]
    ka, kb, unit = _keys_3d(a, b, val, ask)
    part = np.zeros(k, dtype=np.int64)
    ia = np.empty(k, dtype=np.int64)
    ib = np.empty(k, dtype=np.int64)
    ja = np.empty(k, dtype=np.int64)
    jb = np.empty(k, dtype=np.int64)
    d = depth(k, LEAF_3D)
    nleaf = 1 << d
    for ch in prange(nth):
        _start_3d(ka, kb, val, d, nleaf * ch // nth, nleaf * (ch + 1) // nth, part, ia, ib)
    cv, ca = _prefix_counts(ka)
    loc = np.empty(k, dtype=np.int32)
    flip = False
    for lev in range(d, 0, -1):
        pairs = 1 << (lev - 1)
        nch = min(nth, pairs)
        for ch in prange(nch):  # the keys alternate between the two pairs of buffers
            p0 = pairs * ch // nch
            p1 = pairs * (ch + 1) // nch
            if flip:
                _level_3d(val, unit, part, ja, jb, ia, ib, loc, cv, ca, lev, p0, p1)
            else:
                _level_3d(val, unit, part, ia, ib, ja, jb, loc, cv, ca, lev, p0, p1)
        flip = not flip
    return part


@njit(cache=True, nogil=True, parallel=True)
def _leaves_4d(y, z, wv, weight, lift, cnt, d):
    """All pairs ``i < j`` of each leaf (the runs at depth ``d``); returns every leaf's
    positions sorted on ``y`` (stable, from the ranks that the same comparisons give)."""
    g = y.shape[0]
    yo = np.empty(g, dtype=np.int64)
    for q in prange(1 << d):
        lo = cut(q, g, d)
        hi = cut(q + 1, g, d)
        for j in range(lo, hi):
            yj = y[j]
            zj = z[j]
            wj = wv[j]
            acc = 0
            ry = 0
            for i in range(lo, j):
                acc += weight[i] * ((y[i] <= yj) & (z[i] <= zj) & (wv[i] <= wj))
                ry += y[i] <= yj
            for i in range(j + 1, hi):
                ry += y[i] < yj
            if lift[j]:
                cnt[j] += acc
            yo[lo + ry] = j
    return yo


@njit(inline="always")
def _merge_on(key, src, dst, s, mid, e):
    """Merge ``src[s:mid]`` and ``src[mid:e]`` (each sorted on ``key``) into ``dst[s:e]``,
    left first on ties."""
    i, j = s, mid
    for t in range(s, e):
        if j >= e or (i < mid and key[src[i]] <= key[src[j]]):
            dst[t] = src[i]
            i += 1
        else:
            dst[t] = src[j]
            j += 1


@njit(cache=True, nogil=True)
def _prepare_4d(y, z, wv, weight, lift, yo, yo2, s, mid, e, live):
    """Merge the halves' orders on ``y`` (left first on ties); with ``live``, the static 3-D
    problem of the step in that order: ``z``, ``wv``, the left points' weights and the
    lifted right points."""
    k = e - s if live else 0
    return _prepare_4d_in(y, z, wv, weight, lift, yo, yo2, s, mid, e, live,
                          np.empty(k, dtype=np.int64), np.empty(k, dtype=wv.dtype),
                          np.empty(k, dtype=np.int64), np.empty(k, dtype=np.bool_))


@njit(cache=True, nogil=True)
def _prepare_4d_in(y, z, wv, weight, lift, yo, yo2, s, mid, e, live, zb, wb, vb, ab):
    """:func:`_prepare_4d` into the caller's buffers (of at least ``e - s`` each); returns
    views of them."""
    _merge_on(y, yo, yo2, s, mid, e)
    k = e - s if live else 0
    zz = zb[0:k]
    ww = wb[0:k]
    val = vb[0:k]
    ask = ab[0:k]
    for t in range(k):
        p = yo2[s + t]
        zz[t] = z[p]
        ww[t] = wv[p]
        left = p < mid
        val[t] = weight[p] if left else 0
        ask[t] = False if left else lift[p]
    return zz, ww, val, ask


@njit(cache=True, nogil=True)
def _finish_4d(yo2, part, cnt, s):
    for t in range(part.shape[0]):
        cnt[yo2[s + t]] += part[t]


@njit(cache=True, nogil=True, parallel=True)
def _level_4d(y, z, wv, weight, lift, cnt, cw, cl, yo, yo2, d, nth):
    """Every step of the runs at depth ``d`` (merged into depth d - 1), in parallel: each of
    ``nth`` threads takes an even share of the steps (they are balanced) and one workspace
    for all of them."""
    g = y.shape[0]
    steps = 1 << (d - 1)
    cap = (g + steps - 1) // steps  # the longest step (runs of a depth differ by at most 1)
    nch = min(nth, steps)
    for ch in prange(nch):
        ws = np.empty(SUM_3D_WORDS * (cap + 1), dtype=np.int64)
        loc = np.empty(cap, dtype=np.int32)
        zb = np.empty(cap, dtype=np.int64)
        wb = np.empty(cap, dtype=wv.dtype)
        vb = np.empty(cap, dtype=np.int64)
        ab = np.empty(cap, dtype=np.bool_)
        for q in range(steps * ch // nch, steps * (ch + 1) // nch):
            s = cut(2 * q, g, d)
            mid = cut(2 * q + 1, g, d)
            e = cut(2 * q + 2, g, d)
            live = mid < e and cw[mid] != cw[s] and cl[e] != cl[mid]
            zz, ww, val, ask = _prepare_4d_in(y, z, wv, weight, lift, yo, yo2, s, mid, e,
                                              live, zb, wb, vb, ab)
            if live:
                _finish_4d(yo2, _sum_3d_in(zz, ww, val, ask, ws, loc), cnt, s)


def cdq_count_4d(y, z, wv, weight, lift, cnt, *, w_ranked=False):
    """``cnt[p] +=`` the total ``weight`` of earlier points that weakly precede ``p`` in
    ``(y, z, wv)``, for every point with ``lift[p]``.

    ``y`` is compared only (int64 ranks or the float64 values), ``z`` int64 ranks, ``wv``
    float64 (or, with ``w_ranked``, its int64
    dense ranks), ``weight`` int64 (0: contributes nothing), ``lift`` bool, ``cnt`` int64,
    all of length g < ``MAX_3D``. Bottom-up over
    positions from brute-force leaves of at most ``LEAF_4D``; each step left half -> right
    half is a static 3-D problem on ``(y, z, wv)`` solved by :func:`sum_3d` in the step's
    order on ``y``. A step with no weight on the left or no lifted point on the right only
    merges. O(g log^3 g) time, O(g) memory.
    """
    g = y.shape[0]
    if g < 2:
        return
    lift = np.ascontiguousarray(lift, dtype=np.bool_)
    weight = np.ascontiguousarray(weight, dtype=np.int64)
    if not w_ranked:  # (callers that rank several columns at once pass the ranks)
        wv, _ = dense_ranks(wv)
    d = depth(g, LEAF_4D)
    yo = _leaves_4d(y, z, wv, weight, lift, cnt, d)
    cw = np.concatenate(([0], np.cumsum(weight != 0)))
    cl = np.concatenate(([0], np.cumsum(lift)))
    yo2 = np.empty_like(yo)
    nth = get_num_threads()
    for lev in range(d, 0, -1):
        if (1 << (lev - 1)) >= nth:  # a step per thread at least (the steps are balanced)
            _level_4d(y, z, wv, weight, lift, cnt, cw, cl, yo, yo2, lev, nth)
        else:  # fewer steps than threads: their inner levels run in parallel
            for q in range(1 << (lev - 1)):
                s, mid, e = (((2 * q + i) * g) >> lev for i in range(3))
                live = mid < e and cw[mid] != cw[s] and cl[e] != cl[mid]
                zz, ww, val, ask = _prepare_4d(y, z, wv, weight, lift, yo, yo2, s, mid, e, live)
                if live:
                    _finish_4d(yo2, sum_3d_parallel(zz, ww, val, ask, nth), cnt, s)
        yo, yo2 = yo2, yo
