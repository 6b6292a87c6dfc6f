"""Exact domination counts on the device by a data-parallel divide and conquer (m >= 2).

The rows are sorted lexicographically, so every dominator of a row comes before it, and a
row ``j`` is dominated by an earlier row ``i`` exactly when ``i`` is at or below ``j`` in
every column but the first and is not equal to it. The divide and conquer counts, for each
sorted position ``j``, the earlier positions at or below it in columns ``1 .. m - 1``; the
earlier rows equal to it, found by one binary search over the sorted rows, are subtracted
at the end (so duplicates never dominate each other, as the CPU's multiplicity weights
ensure there).

The scheme is Bentley's multidimensional divide and conquer (the CPU's
:mod:`gpurank.kernels.cpu._cdq`) made data-parallel: every level is a bottom-up merge sort
in which each element finds its rank in the sibling run by a binary search (its own index
in its run plus that rank is its merged position: parallel merging by binary search, the
idea of "merge path"), one thread per element and one launch per merge pass for every run
pair of the pass at once.

* Positions (column 0): brute-force leaves of ``schedule.DNC_LEAF`` positions (their pair
  tests counted as such), then a merge sort of the positions on column 1. When two runs of
  width ``w`` are merged, the left run's elements may dominate the right run's: the pair's
  ``2 w`` elements in column-1 order are a new positional problem on columns ``2 ..`` with
  colours "left of the pair contributes, right of the pair asks" (AND-ed with the colours
  the elements already carry), merged sorted from width 1 to ``2 w`` in the same way.
* The last column is the binary search itself: when two runs are merged on it, an asking
  element of the right run adds the number of contributing elements of the left run whose
  key is at or below its own, read from the left run's inclusive prefix counts of
  contributors in its sorted order (carried along the merges: an element's prefix in the
  merged run is its prefix in its own run plus the sibling run's prefix at its rank).
* Keys are ``(value, sorted position)``: distinct, so every merge is a strict total order,
  and an earlier row with an equal value sorts first, so contributors (always earlier
  rows) with equal values count as at or below. The floats themselves are compared (no
  dense ranks); float32 and float64 input.

Each (contributor, asker) pair is counted at exactly one merge of every nesting depth, so
with ``L = log2(n / leaf)`` there are about ``L^(m-1) / (m-1)!`` counting passes of one
O(log w) binary search per element each: O(n log^m n) work, whatever the data. The binary
search is branch-uniform (a fixed number of halvings for a given run length), so the work
depends only on n, m and the leaf, which :func:`.schedule.dnc_work` counts on the host.

Memory: the sorted rows, column-major, and per row 34 bytes per column after the first
(two sets of keys, positions and flags per nesting level, float64 keys) and 32 bytes
besides (counts, order, the last column's prefix counts); ``dominated_count`` also holds a
negated copy of the input. 1e7 x 4 in float64: about 1.7 GB besides the input.

References (``docs/references.md``): [Bentley1980], [Green2012] (merging sorted runs in
parallel by binary searches of the sibling run), [Jensen2003] (the divide and conquer for
domination counts).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from . import schedule
from ._launch import TILE, blocks, device_array, gather_kernel, kernel, lex_order

__all__ = ["dnc_count_device"]

_CONTRIBUTES = 1  # flag bits of an element in the current positional problem
_ASKS = 2


@cuda.jit(device=True, inline=True)
def _rank(key, ids, lo, hi, kv, kid):
    """(number of elements of ``key[lo:hi]`` whose key ``(key, ids)`` is below ``(kv, kid)``,
    halvings done): a branch-uniform binary search of ``bit_length(hi - lo)`` halvings
    (greedy on powers of two, so every thread of a run does the same steps)."""
    ln = hi - lo
    step = 1
    while 2 * step <= ln:
        step *= 2
    pos = lo
    it = 0
    if ln > 0:
        while step > 0:
            q = pos + step - 1
            if q < hi:
                x = key[q]
                if x < kv or (x == kv and ids[q] < kid):
                    pos += step
            it += 1
            step //= 2
    return pos - lo, it


@cuda.jit(device=True, inline=True)
def _row_less(cs, a, b, m):
    """Sorted row ``a`` is lexicographically below sorted row ``b`` (column-major ``cs``)."""
    for k in range(m):
        x = cs[k, a]
        y = cs[k, b]
        if x < y:
            return True
        if x > y:
            return False
    return False


@kernel("void({f}[:, :], {f}[:, :])")
def negate_kernel(x, y):
    """y = -x (exact): ``dominated_count`` is the count on the negated rows."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        for k in range(x.shape[1]):
            y[i, k] = -x[i, k]


@kernel("void({f}[:, :], int64, int64[:], int64[:], int64[:])")
def leaf_kernel(cs, leaf, cnt, tests, steps):
    """cnt[p] = (earlier positions of p's leaf at or below it in columns 1..m-1) minus
    (earlier rows equal to row p, all of them, found by a binary search for the first row
    of p's run of equal rows); the pair tests and search halvings into ``tests``/``steps``
    when they are not empty."""
    p = cuda.grid(1)
    m = cs.shape[0]
    n = cs.shape[1]
    if p < n:
        s = (p // leaf) * leaf
        c = 0
        for i in range(s, p):
            le = True
            for k in range(1, m):
                if cs[k, i] > cs[k, p]:
                    le = False
                    break
            if le:
                c += 1
        # first row equal to row p: the number of rows strictly below it (branch-uniform)
        step = 1
        while 2 * step <= n:
            step *= 2
        pos = 0
        it = 0
        while step > 0:
            q = pos + step - 1
            if q < n and _row_less(cs, q, p, m):
                pos += step
            it += 1
            step //= 2
        cnt[p] = c - (p - pos)
        if tests.shape[0] > 0:
            tests[p] = p - s
            steps[p] = it


@kernel("void({f}[:, :], {f}[:], int64[:], int8[:], int32[:])")
def start_kernel(cs, key, ids, flag, inc):
    """The outermost problem: sorted position p with its column-1 key, contributing and
    asking; ``inc`` (when not empty) its prefix count of contributors in its run of 1."""
    p = cuda.grid(1)
    if p < key.shape[0]:
        key[p] = cs[1, p]
        ids[p] = p
        flag[p] = _CONTRIBUTES | _ASKS
        if inc.shape[0] > 0:
            inc[p] = 1


@cuda.jit(device=True, inline=True)
def _place(key, ids, width, p):
    """Merge geometry of element p: (sibling run lo, hi, merged position, in the left run,
    halvings)."""
    n = key.shape[0]
    start = (p // (2 * width)) * (2 * width)
    mid = min(start + width, n)
    end = min(start + 2 * width, n)
    left = p < mid
    if left:
        lo = mid
        hi = end
    else:
        lo = start
        hi = mid
    r, it = _rank(key, ids, lo, hi, key[p], ids[p])
    q = p + r if left else start + (p - mid) + r
    return lo, r, q, left, it


@kernel("void({f}[:], int64[:], int8[:], int64, {f}[:], int64[:], int8[:], int64[:])")
def merge_keys_kernel(key, ids, flag, width, key2, ids2, flag2, steps):
    """One merge pass (runs of ``width`` into runs of ``2 width``) that only sorts."""
    p = cuda.grid(1)
    if p < key.shape[0]:
        _, _, q, _, it = _place(key, ids, width, p)
        key2[q] = key[p]
        ids2[q] = ids[p]
        flag2[q] = flag[p]
        if steps.shape[0] > 0:
            steps[ids[p]] += it


@kernel("void({f}[:], int64[:], int8[:], int64, {f}[:], int64[:], int8[:], {f}[:, :], int64, "
        "{f}[:], int64[:], int8[:], int32[:], int64[:])")
def merge_nest_kernel(key, ids, flag, width, key2, ids2, flag2, cs, dim, ckey, cids, cflag,
                      cinc, steps):
    """One merge pass that also starts the problem one column lower on every merged run
    pair: at its merged position, an element with its column-``dim`` key, contributing if
    it contributes here and comes from the left run, asking if it asks here and comes from
    the right run (``cinc``, when not empty, its prefix count in its run of 1)."""
    p = cuda.grid(1)
    if p < key.shape[0]:
        _, _, q, left, it = _place(key, ids, width, p)
        i = ids[p]
        f = flag[p]
        key2[q] = key[p]
        ids2[q] = i
        flag2[q] = f
        cf = (f & _CONTRIBUTES) if left else (f & _ASKS)
        ckey[q] = cs[dim, i]
        cids[q] = i
        cflag[q] = cf
        if cinc.shape[0] > 0:
            cinc[q] = cf & _CONTRIBUTES
        if steps.shape[0] > 0:
            steps[i] += it


@kernel("void({f}[:], int64[:], int8[:], int32[:], int64, {f}[:], int64[:], int8[:], int32[:], "
        "int64[:], boolean, boolean, int64[:])")
def merge_count_kernel(key, ids, flag, inc, width, key2, ids2, flag2, inc2, cnt, count, final,
                       steps):
    """One merge pass on the last column: with ``count``, an asking element of a right run
    adds the contributors of the left run at or below its key to ``cnt``; every element
    carries its prefix count of contributors into the merged run. The ``final`` pass of a
    problem, whose merged runs nobody reads, only counts: the left runs do nothing."""
    p = cuda.grid(1)
    if p < key.shape[0]:
        if final and p < min((p // (2 * width)) * (2 * width) + width, key.shape[0]):
            return
        lo, r, q, left, it = _place(key, ids, width, p)
        i = ids[p]
        f = flag[p]
        before = 0 if r == 0 else inc[lo + r - 1]  # contributors of the sibling run below
        if count and not left and (f & _ASKS):
            cnt[i] += before
        if steps.shape[0] > 0:
            steps[i] += it
        if final:
            return
        key2[q] = key[p]
        ids2[q] = i
        flag2[q] = f
        inc2[q] = inc[p] + before


@kernel("void(int64[:], int64[:], int64, int64[:])")
def finish_kernel(order, cnt, cap, out):
    """out[order[p]] = min(cnt[p], cap): the counts back in the caller's row order."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        out[order[p]] = min(cnt[p], cap)


class _Buffers:
    """The two sets of arrays (keys, sorted positions, flags, prefix counts) that one
    positional problem's merge passes alternate between."""

    __slots__ = ("dst", "src")

    def __init__(self, n, dtype, last):
        k = n if last else 0  # prefix counts only where the last column is merged

        def one():
            return (device_array(n, dtype), device_array(n, np.int64),
                    device_array(n, np.int8), device_array(k, np.int32))

        self.src, self.dst = one(), one()

    def swap(self):
        self.src, self.dst = self.dst, self.src


def _solve(st, d, wmax):
    """Merge passes of the problem on columns ``d ..`` (in ``st.levels[d - 1].src``) from
    width 1 to ``wmax`` (n for the outermost); each pass on a column before the last starts
    and solves the problem one column lower on its merged run pairs."""
    b = st.levels[d - 1]
    n, m, steps = st.n, st.m, st.steps
    last = d == m - 1
    width = 1
    while width < wmax:
        below_leaf = d == 1 and width < st.leaf  # the leaves counted those pairs
        (key, ids, flag, inc), (key2, ids2, flag2, inc2) = b.src, b.dst
        if last:
            final = 2 * width >= wmax  # the problem's last pass: its merged runs are not read
            if not (final and below_leaf):  # (nothing to count, nothing to sort)
                merge_count_kernel[blocks(n), TILE](key, ids, flag, inc, width, key2, ids2,
                                                    flag2, inc2, st.cnt, not below_leaf, final,
                                                    steps)
        elif below_leaf:
            merge_keys_kernel[blocks(n), TILE](key, ids, flag, width, key2, ids2, flag2, steps)
        else:
            ckey, cids, cflag, cinc = st.levels[d].src
            merge_nest_kernel[blocks(n), TILE](key, ids, flag, width, key2, ids2, flag2, st.cs,
                                               d + 1, ckey, cids, cflag, cinc, steps)
            _solve(st, d + 1, 2 * width)
        b.swap()
        width *= 2


class _State:
    """What every merge pass of one call reads: sizes, the sorted rows, counts, buffers."""

    __slots__ = ("cnt", "cs", "leaf", "levels", "m", "n", "steps")


def dnc_count_device(d, out, cap, reverse, work=None):
    """Exact counts of the validated device matrix ``d`` (n x m, m >= 2) into ``out`` (an
    int64 device vector, returned), in row order: ``min(count, cap)`` (``cap`` None:
    uncapped); with ``reverse``, how many rows each row dominates. ``work``, a dict,
    receives the sorted ``order``, the per-sorted-position leaf pair ``tests`` and
    binary-search halvings ``search_steps``, and the sorted uncapped ``counts`` (host
    arrays) for the tests of :func:`.schedule.dnc_work`."""
    n, m = d.shape
    if m < 2:
        raise ValueError(f"the divide and conquer needs at least 2 columns; got {m}")
    if n == 0:
        return out
    leaf = schedule.check_leaf(schedule.DNC_LEAF)
    x = d
    if reverse:
        x = device_array((n, m), d.dtype)
        negate_kernel[blocks(n), TILE](d, x)
    order = lex_order(x)
    st = _State()
    st.n, st.m, st.leaf = n, m, leaf
    st.cs = device_array((m, n), x.dtype)
    gather_kernel[blocks(n), TILE](x, order, st.cs)
    del x
    k = n if work is not None else 0
    tests, st.steps = device_array(k, np.int64), device_array(k, np.int64)
    st.cnt = device_array(n, np.int64)
    leaf_kernel[blocks(n), TILE](st.cs, leaf, st.cnt, tests, st.steps)
    st.levels = [_Buffers(n, st.cs.dtype, c == m - 1) for c in range(1, m)]
    key, ids, flag, inc = st.levels[0].src
    start_kernel[blocks(n), TILE](st.cs, key, ids, flag, inc)
    _solve(st, 1, n)
    # no count exceeds n - 1, so a cap beyond n clips nothing (and fits the kernel's int64)
    finish_kernel[blocks(n), TILE](order, st.cnt, n if cap is None else min(cap, n), out)
    if work is not None:
        work.update(order=order.copy_to_host(), tests=tests.copy_to_host(),
                    search_steps=st.steps.copy_to_host(), counts=st.cnt.copy_to_host())
    return out
