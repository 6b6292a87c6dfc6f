"""k-d trees ([Bentley1975]): median splits on the widest column, leaves of 32 rows.

Two layouts of the same idea, one per kind of query:

* A *tree with node boxes* (:func:`build_tree`): node t has children 2t+1 and 2t+2, every
  node keeps the bounding box (per-column min and max) of its rows. Queried by branch and
  bound against one row or one leaf box: a node that cannot reach the query is skipped, a
  node wholly (and somewhere strictly) below it answers in O(1). (The box tests are written
  out in each query loop: as Numba-inlined helpers taking arrays they cost reference
  counting at every node, measured 15-25% slower, and as plain compiled helpers a call at
  every node, measured 10-25% slower.)
  Used for domination counts (:func:`count_dominators`) and the largest rank of a
  dominator (:func:`max_rank_of_dominators`, :func:`seeded_ranks`).
* *Grouped parts* (:func:`part_build`, :func:`part_scan`): the rows themselves reordered so
  that every group of 32 consecutive rows is a leaf, stored column-major with the least
  corner of every group and of every superblock of 32 groups. Only "is some row weakly
  below x?" is asked, by testing corners and scanning the 1-2% of groups whose corner
  passes. Used for the fronts of the k-d ENS (:mod:`._ens`).

References: [Bentley1975] (``docs/references.md``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._sort import dominates, gather_rows

__all__ = ["LEAF", "build_tree", "count_dominators", "max_rank_of_dominators", "seeded_ranks",
           "weakly_below", "window_count", "part_layout", "part_scan", "part_build"]

LEAF = 32  # rows per leaf


@njit(inline="always")
def _quickselect(c, perm, rows, lo, hi, kth, dim, d, by_rows):
    """Reorder items [lo, hi) so that item ``kth`` holds the kth value of column ``dim``,
    the items before it no greater and the items after it no smaller. With ``by_rows``
    False an item is ``perm[i]``, a row index of ``c`` (only ``perm`` moves; ``c`` is never
    written, so it may be read-only); with ``by_rows`` True it is row ``i`` of ``rows``
    itself (contiguous swaps of ``d`` columns: the builds of small parts stay in cache).
    ``by_rows`` is a constant where it is called; the other arguments of the other mode
    are unused."""
    done = False
    while hi - lo > 1 and not done:
        a = rows[lo, dim] if by_rows else c[perm[lo], dim]
        b = rows[(lo + hi) >> 1, dim] if by_rows else c[perm[(lo + hi) >> 1], dim]
        z = rows[hi - 1, dim] if by_rows else c[perm[hi - 1], dim]
        if a > b:  # the pivot: median of the first, middle and last values
            a, b = b, a
        pivot = z if b > z else b
        pivot = a if pivot < a else pivot
        i = lo
        j = hi - 1
        while i <= j:
            while (rows[i, dim] if by_rows else c[perm[i], dim]) < pivot:
                i += 1
            while (rows[j, dim] if by_rows else c[perm[j], dim]) > pivot:
                j -= 1
            if i <= j:
                if by_rows:
                    for k in range(d):
                        u = rows[i, k]
                        rows[i, k] = rows[j, k]
                        rows[j, k] = u
                else:
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
            done = True


# ---------------------------------------------------------------------------------------
# Tree with node boxes
# ---------------------------------------------------------------------------------------


@njit(cache=True, parallel=True, nogil=True)
def _build(c, leaf):
    """Median-split tree over rows of c, built level by level (nodes of a level in
    parallel). Returns perm, start, end, lo, hi, depth; nodes of the last level are leaves."""
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
    no_rows = np.empty((0, 0), dtype=c.dtype)  # the rows stay, perm moves
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
                    _quickselect(c, perm, no_rows, s, e, mid, best, 0, False)
                start[2 * t + 1] = s
                end[2 * t + 1] = mid
                start[2 * t + 2] = mid
                end[2 * t + 2] = e
    return perm, start, end, lo, hi, depth


def build_tree(c):
    """The tree of ``c`` (n >= 1): ``(perm, cs, start, end, lo, hi, depth)`` with ``cs =
    c[perm]`` the rows in leaf order (node t holds ``cs[start[t]:end[t]]``). O(n log n m)."""
    perm, start, end, lo, hi, depth = _build(c, LEAF)
    return perm, gather_rows(c, perm), start, end, lo, hi, depth


@njit(cache=True, parallel=True, nogil=True)
def _count(cs, start, end, lo, hi, depth, cap):
    """For each row of ``cs`` (in leaf order) ``min(cap, rows dominating it)``: every leaf,
    in parallel, walks the tree with its box, nearest-corner child first, and stops once
    all its rows reached ``cap``."""
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
        acc = 0  # rows of nodes that dominate the whole leaf
        mincnt = 0
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        stack[0] = 0
        sp = 1
        while sp > 0:
            if acc + mincnt >= cap:
                break
            sp -= 1
            t = stack[sp]
            if end[t] <= start[t]:
                continue
            reach = True  # can a row of node t dominate a row of the leaf?
            for k in range(m):
                if lo[t, k] > hi[leaf, k]:
                    reach = False
                    break
            if not reach:
                continue
            below = True  # does every row of node t dominate every row of the leaf?
            strict = False
            for k in range(m):
                if hi[t, k] > lo[leaf, k]:
                    below = False
                    break
                if hi[t, k] < lo[leaf, k]:
                    strict = True
            if below and strict:
                acc += end[t] - start[t]
            elif t >= first_leaf:
                # duplicate-code: every row of the leaf against the leaf node t, the node
                # test of _best written out: as an inline helper taking arrays it costs
                # reference counting here, measured 14%
                mc = cap
                for u in range(nb):
                    i = s + u
                    if cnt[u] + acc < cap:
                        ok = True  # can rows of t reach row i; are they all below it
                        below = True
                        strict = False
                        for k in range(m):
                            v = cs[i, k]
                            if lo[t, k] > v:
                                ok = False
                                break
                            if hi[t, k] > v:
                                below = False
                            elif hi[t, k] < v:
                                strict = True
                        if ok and below and strict:
                            cnt[u] += end[t] - start[t]
                        elif ok:
                            for j in range(start[t], end[t]):
                                if dominates(cs, j, cs, i, m):
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


def count_dominators(c, cap):
    """``min(cap, rows dominating each row)`` of ``c`` (n >= 1) by the tree. O(n^2 m) worst
    case, near O(n log n) on correlated data; with a small cap each leaf stops early."""
    perm, cs, start, end, lo, hi, depth = build_tree(c)
    out = np.empty(c.shape[0], dtype=np.int64)
    out[perm] = _count(cs, start, end, lo, hi, depth, np.int64(cap))
    return out


@njit(cache=True, nogil=True)
def _best(cs, rank, start, end, lo, hi, depth, best_in, q, i, best, stack):
    """Largest rank among the tree's rows that dominate row ``i`` of ``q``, or ``best`` when
    none beats it (branch and bound on the nodes' largest ranks ``best_in``; rows with rank
    < 0 are not in the tree yet)."""
    m = cs.shape[1]
    first_leaf = (1 << depth) - 1
    stack[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        nd = stack[sp]
        if best_in[nd] <= best:
            continue
        # duplicate-code: the node test, written out as in _count (measured there)
        reach = True  # can a row of node nd dominate row i; do they all?
        below = True
        strict = False
        for k in range(m):
            v = q[i, k]
            if lo[nd, k] > v:
                reach = False
                break
            if hi[nd, k] > v:
                below = False
            elif hi[nd, k] < v:
                strict = True
        if not reach:
            continue
        if below and strict:
            best = best_in[nd]
        elif nd >= first_leaf:
            for j in range(start[nd], end[nd]):
                rj = rank[j]
                if rj > best and dominates(cs, j, q, i, m):
                    best = rj
        else:
            a = 2 * nd + 1
            b = 2 * nd + 2
            # the more promising child is popped first
            stack[sp] = b if best_in[a] >= best_in[b] else a
            stack[sp + 1] = a if best_in[a] >= best_in[b] else b
            sp += 2
    return best


@njit(cache=True, nogil=True)
def _max_rank(q, cs, rank, start, end, lo, hi, depth):
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
        out[i] = _best(cs, rank, start, end, lo, hi, depth, best_in, q, i, -1, stack)
    return out


def max_rank_of_dominators(q, c, rank):
    """For each row of ``q``, the largest ``rank`` of the rows of ``c`` (n >= 1) that dominate
    it (-1: none), by branch and bound on a tree over ``c``. O(n_q n m) worst case."""
    perm, cs, start, end, lo, hi, depth = build_tree(c)
    return _max_rank(q, cs, np.ascontiguousarray(rank[perm]), start, end, lo, hi, depth)


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
        r = _best(cs, rank, start, end, lo, hi, depth, best_in, cs, i, lower[i] - 1,
                  stack) + 1
        rank[i] = r
        nd = leaf_of[i]
        while best_in[nd] < r:  # the new rank climbs to the root
            best_in[nd] = r
            if nd == 0:
                break
            nd = (nd - 1) // 2
    return rank


def seeded_ranks(c, lower, topo):
    """``rank = max(lower, 1 + largest rank of the dominators)`` for the rows of ``c`` (n >=
    1) visited in the topological order ``topo``, each rank put in the tree as it is found.
    O(n^2 m) worst case."""
    perm, cs, start, end, lo, hi, depth = build_tree(c)
    inv = np.empty(c.shape[0], dtype=np.int64)
    inv[perm] = np.arange(c.shape[0])
    r = _seeded(cs, np.ascontiguousarray(lower[perm]), start, end, lo, hi, depth, inv[topo])
    out = np.empty(c.shape[0], dtype=np.int32)
    out[perm] = r
    return out


# ---------------------------------------------------------------------------------------
# Grouped parts (fronts of the k-d ENS)
# ---------------------------------------------------------------------------------------
# Compiled into the ENS kernel of each number of columns ``d`` (inline="always", ``d`` a
# constant there), so every column loop unrolls. Indices are unsigned in the hot loops (no
# negative-index wrap-around checks).


@njit(inline="always")
def _ctz64(v):
    """Index of the lowest set bit of a non-zero uint64: a binary search on the bits (a
    constant trip count, so the loop unrolls into six tests)."""
    t = 0
    s = 32
    while s > 0:
        if v & ((np.uint64(1) << np.uint64(s)) - np.uint64(1)) == 0:  # the low s bits are 0
            v >>= np.uint64(s)
            t += s
        s >>= 1
    return t


@njit(inline="always")
def weakly_below(a, b, stride, x, d, above):
    """The member at ``a[b]`` (column k at ``+ k stride``) is weakly below ``x`` in all ``d``
    columns (weakly above, with ``above``; a constant where it is called)."""
    w = a[b] >= x[0] if above else a[b] <= x[0]
    for k in range(1, d):
        v = a[b + np.uint64(k) * stride]
        w &= v >= x[k] if above else v <= x[k]
    return w


@njit(inline="always")
def window_count(a, b, stride, x, d, width, above):
    """How many of the ``width`` members from ``a[b]`` on pass :func:`weakly_below`: one
    branch-free pass that vectorizes over the members."""
    cnt = 0
    for f in range(width):
        cnt += weakly_below(a, b + np.uint64(f), stride, x, d, above)
    return cnt


@njit(inline="always")
def part_layout(size, d):
    """Layout of a part of ``size`` members: capacity (whole groups), superblocks, offset of
    the group least corners (column k at ``o_g + k * 32 nsb``, padded to whole superblocks
    with +inf), offset of the superblock least corners (column k at ``o_s + k * nsb``) and
    total length. Members: column k at ``k * cap``, +inf padded."""
    cap = ((size + 31) >> 5) << 5
    nsb = (size + 1023) >> 10
    o_g = d * cap
    o_s = o_g + d * (nsb << 5)
    return cap, nsb, o_g, o_s, o_s + d * nsb


@njit(inline="always")
def part_scan(part, size, x, d):
    """True when a member of the part (``size`` members) is weakly below ``x`` in all ``d``
    columns: superblock corners first, then the 32 group corners of a passing superblock in
    one branch-free window (a bit mask), then the groups whose corner passes."""
    cap, nsb, o_g, o_s, _ = part_layout(size, d)
    ucap = np.uint64(cap)
    ugp = np.uint64(nsb << 5)
    unsb = np.uint64(nsb)
    for sb in range(nsb):
        usb = np.uint64(sb)
        if not weakly_below(part, np.uint64(o_s) + usb, unsb, x, d, False):
            continue
        g0 = np.uint64(o_g) + (usb << np.uint64(5))
        mask = np.uint64(0)
        for t in range(32):
            ut = np.uint64(t)
            mask |= np.uint64(weakly_below(part, g0 + ut, ugp, x, d, False)) << ut
        while mask:
            b = (usb << np.uint64(10)) + (np.uint64(_ctz64(mask)) << np.uint64(5))
            mask &= mask - np.uint64(1)
            if window_count(part, b, ucap, x, d, 32, False):
                return True
    return False


@njit(inline="always")
def _split_groups(rows, size, d):
    """Reorder ``rows[:size]`` by median splits on the widest column at multiples of 32
    rows, so that every group of 32 is one leaf and every superblock a few neighbouring
    subtrees (explicit stack: depth <= log2(size / 32) < 64)."""
    stack = np.empty(256, dtype=np.int64)
    no_perm = stack[:0]  # rows move themselves
    stack[0] = 0
    stack[1] = size
    sp = 2
    mn = np.empty(d, dtype=rows.dtype)
    mx = np.empty(d, dtype=rows.dtype)
    while sp > 0:
        sp -= 2
        lo = stack[sp]
        hi = stack[sp + 1]
        if hi - lo <= 32:
            continue
        for k in range(d):
            mn[k] = rows[lo, k]
            mx[k] = rows[lo, k]
        for i in range(lo + 1, hi):
            for k in range(d):
                u = rows[i, k]
                mn[k] = min(mn[k], u)
                mx[k] = max(mx[k], u)
        best = 0
        for k in range(1, d):
            if mx[k] - mn[k] > mx[best] - mn[best]:
                best = k
        mid = lo + ((((hi - lo + 31) >> 5) + 1) >> 1 << 5)  # half of the groups, rounded up
        _quickselect(rows, no_perm, rows, lo, hi, mid, best, d, True)
        stack[sp] = lo
        stack[sp + 1] = mid
        stack[sp + 2] = mid
        stack[sp + 3] = hi
        sp += 4


@njit(inline="always")
def part_build(rows, size, d):
    """The part of ``rows[:size]`` (reordered in place; ``d`` columns): members column-major
    in group order, then the least corner of every group and superblock.
    O(size log size d)."""
    _split_groups(rows, size, d)
    cap, nsb, o_g, o_s, total = part_layout(size, d)
    gp = nsb << 5
    out = np.empty(total, dtype=rows.dtype)
    for k in range(d):
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
