"""Row comparisons, lexicographic orders, dense ranks and gathers shared by the CPU kernels.

The dominance sweeps of ``front``, ``rank`` and ``count`` all start from the lexicographic
order of the rows: a dominator is <= in every column and < in one, so it always comes
first, and a sweep only ever looks back.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _shared

__all__ = ["dominates", "rows_equal", "group_end", "lex_order", "order_keys", "argsort_values",
           "argsort_then", "count_before", "dense_ranks", "row_sums", "dense_rank", "gather_rows",
           "unique_groups_parallel", "unique_groups"]

#: ``dominates(a, i, b, j, m)`` and ``rows_equal(a, i, j, m)``, inlined where they are called.
#: Only such scalar predicates are Numba-inlined into the per-row loops of the kernels: an
#: ``inline="always"`` helper that takes arrays costs reference counting at each call there
#: (measured 15% to 5x slower). A plain compiled helper such as ``group_end`` borrows its
#: arrays instead, at the cost of a call (docs/architecture-kernels.md has the numbers).
dominates = njit(inline="always")(_shared.dominates)
rows_equal = njit(inline="always")(_shared.rows_equal)


@njit(cache=True, nogil=True)
def group_end(c, order, i, m):
    """End of the run of rows equal to row ``order[i]`` in ``order``: a sweep decides a
    group of equal rows at once (they neither dominate each other nor differ otherwise)."""
    n = order.shape[0]
    head = order[i]
    j = i + 1
    while j < n and rows_equal(c, order[j], head, m):
        j += 1
    return j


_lex_compare = njit(inline="always")(_shared.lex_compare)


@njit(cache=True, nogil=True)
def _lex_less(c, a, b, m):
    return _lex_compare(c, a, b, m) < 0


@njit(cache=True, nogil=True)
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
    # duplicate-code: boilerplate, the bottom-up merge of sorted runs under this sort's own
    # order (smaa._sort_run and _cdq._sweep merge under theirs; a merge generic over the
    # comparison would cost Numba a call per comparison)
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


def lex_order(c):
    """Row indices of ``c`` (n >= 1, m >= 1) in lexicographic order.

    The order of the first column (:func:`argsort_values`), then every run of equal first
    values sorted on the whole row. O(n log n).
    """
    packed, bits = _packed(order_keys(c[:, 0]))
    return _refine_rows(c, packed, bits)


@njit(cache=True, nogil=True)
def _refine_rows(c, packed, bits):
    """The positions of ``packed`` (first column's high bits, then position) in the
    lexicographic order of the rows of ``c``: every run with equal high bits sorted on the
    whole row, stably (the run is in position order already). Only such a run can hold
    equal first values, and it is read in sorted order, so no tie scan reads at random."""
    n, m = c.shape
    order = packed & ((np.int64(1) << bits) - 1)
    tmp = np.empty(0, dtype=order.dtype)
    i = 0
    while i < n:
        hi = packed[i] >> bits
        j = i + 1
        while j < n and packed[j] >> bits == hi:
            j += 1
        if j - i > 1:
            if tmp.shape[0] < n:
                tmp = np.empty(n, dtype=order.dtype)
            _lex_sort_segment(c, order, i, j, tmp, m)
        i = j
    return order


_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


def order_keys(x):
    """Order-preserving int64 keys of a finite float vector: ``x[i] < x[j]`` exactly when
    ``key[i] < key[j]``, and equal values (``0.0`` and ``-0.0`` too) get equal keys.

    The IEEE 754 bit pattern read as a signed integer already orders non-negative values;
    flipping the magnitude bits of the negative ones reverses their order.
    """
    f = np.asarray(x, dtype=np.float64) + 0.0  # -0.0 + 0.0 is +0.0
    i = f.view(np.int64)
    return i ^ ((i >> 63) & _MAGNITUDE)


def _packed(key):
    """``key`` with its low bits replaced by the position, sorted, and the number of
    position bits: one sort of plain int64 (NumPy's vectorized quicksort, 3-4x faster than
    an argsort of the same values) orders the positions by the key's high bits."""
    n = key.shape[0]
    bits = max(1, (n - 1).bit_length())
    packed = ((key >> bits) << bits) | np.arange(n, dtype=np.int64)
    packed.sort()
    return packed, bits


@njit(cache=True, nogil=True)
def _sort_runs(runs, order, second):
    """Within every run of equal ``runs[t]`` along ``order``, a stable sort of ``order`` on
    ``second`` (in place; returns ``order``)."""
    n = order.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and runs[j] == runs[i]:
            j += 1
        if j - i > 1:
            run = order[i:j].copy()
            sub = np.argsort(second[run], kind="mergesort")
            for t in range(j - i):
                order[i + t] = run[sub[t]]
        i = j
    return order


def _argsort_keys(key):
    """Positions of ``key`` (int64) ascending, ties by position: the packed sort orders
    them by the high bits, and the runs equal there (the run is in position order already)
    are sorted again, stably, on the whole key."""
    if key.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    packed, bits = _packed(key)
    return _sort_runs(packed >> bits, packed & ((np.int64(1) << bits) - 1), key)


def argsort_values(x):
    """Positions of the finite float vector ``x`` in ascending order, ties by position (a
    stable argsort), through :func:`order_keys` and one packed integer sort."""
    return _argsort_keys(order_keys(x))


def argsort_then(x, *then):
    """Positions ordered by the finite float vector ``x``, ties by each integer vector of
    ``then`` in turn, then by position: ``np.lexsort((*reversed(then), x))`` through one
    packed integer sort (:func:`argsort_values`), several times faster at millions of rows.

    Only the runs of rows equal on the keys so far are sorted again on the next key, so a
    key that breaks few ties costs little more than the pass that finds the runs.
    """
    key = order_keys(x)
    order = _argsort_keys(key)
    runs = key[order]
    for k, second in enumerate(then):
        second = np.ascontiguousarray(second)
        order = _sort_runs(runs, order, second)
        if k + 1 < len(then) and len(order):
            # The next key's runs: rows equal on every key so far, numbered, so that one
            # vector tells equality on several keys.
            s = second[order]
            change = (runs[1:] != runs[:-1]) | (s[1:] != s[:-1])
            runs = np.concatenate(([0], np.cumsum(change)))
    return order


@njit(cache=True, parallel=True, nogil=True)
def _count_before(q0, q1, q2, k0, k1, k2):
    n = q0.shape[0]
    out = np.empty(n, dtype=np.int64)
    for t in prange(n):
        q = (q0[t], q1[t], q2[t])
        lo, hi = 0, k0.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            if (k0[mid], k1[mid], k2[mid]) < q:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo
    return out


def count_before(queries, keys):
    """For each query row, how many rows of ``keys`` sort strictly before it: a binary
    search in lexicographic order, O(log n) per query.

    Parameters
    ----------
    queries, keys : tuple of three 1-D arrays
        Columns of the same kinds (a float column, then two integer ones); the rows of
        ``keys`` sorted lexicographically, ascending.

    Returns
    -------
    ndarray of int64, one count per query row
    """
    q0, q1, q2 = (np.ascontiguousarray(c) for c in queries)
    k0, k1, k2 = (np.ascontiguousarray(c) for c in keys)
    return _count_before(q0, q1, q2, k0, k1, k2)


@njit(cache=True, nogil=True)
def _ranks_in_order(key, order):
    """1-based dense ranks of ``key`` given its ascending ``order``, and their number."""
    n = order.shape[0]
    r = np.empty(n, dtype=np.int64)
    cur = 0
    for t in range(n):
        if t == 0 or key[order[t]] != key[order[t - 1]]:
            cur += 1
        r[order[t]] = cur
    return r, cur


def dense_ranks(x):
    """:func:`dense_rank` of a finite float vector, from :func:`argsort_values` (called from
    Python: the large sorts of the count kernels' preparation)."""
    key = order_keys(x)
    return _ranks_in_order(key, _argsort_keys(key))


@njit(cache=True, parallel=True, nogil=True)
def row_sums(c):
    """Row sums in column order (floating-point addition in a fixed order is monotone, so a
    dominator never has a larger sum)."""
    n, m = c.shape
    s = np.empty(n, dtype=np.float64)
    for i in prange(n):
        acc = 0.0
        for k in range(m):
            acc += c[i, k]
        s[i] = acc
    return s


@njit(cache=True, nogil=True)
def dense_rank(x):
    """1-based dense ranks of ``x`` (equal values share a rank) and the number of values."""
    return _ranks_in_order(x, np.argsort(x))


@njit(cache=True, parallel=True, nogil=True)
def gather_rows(c, order):
    """``c[order]`` in parallel (C-contiguous)."""
    n, m = c.shape
    out = np.empty((n, m), dtype=c.dtype)
    for t in prange(n):
        src = order[t]
        for k in range(m):
            out[t, k] = c[src, k]
    return out


@njit(cache=True, nogil=True, parallel=True)
def unique_groups_parallel(c, order, m):
    """:func:`unique_groups` on both cores: the comparisons of neighbouring rows (two rows
    read at random each) in parallel, then one prefix sum numbers the groups."""
    n = order.shape[0]
    head = np.empty(n, dtype=np.int64)
    for t in prange(n):
        head[t] = 1 if t == 0 or not rows_equal(c, order[t], order[t - 1], m) else 0
    gid = np.cumsum(head) - 1
    g = gid[n - 1] + 1 if n else 0
    heads = np.empty(g, dtype=np.int64)
    start = np.empty(g + 1, dtype=np.int64)
    start[g] = n
    group = np.empty(n, dtype=np.int64)
    for t in prange(n):
        if head[t]:
            heads[gid[t]] = order[t]
            start[gid[t]] = t
        group[order[t]] = gid[t]
    return heads, np.diff(start), group


@njit(cache=True, nogil=True)
def unique_groups(c, order, m):
    """Group identical consecutive rows of ``order``: returns (heads, weights, group of row)."""
    n = order.shape[0]
    heads = np.empty(n, dtype=np.int64)
    weight = np.empty(n, dtype=np.int64)
    group = np.empty(n, dtype=np.int64)
    g = -1
    for t in range(n):
        r = order[t]
        if t == 0 or not rows_equal(c, r, order[t - 1], m):
            g += 1
            heads[g] = r
            weight[g] = 0
        weight[g] += 1
        group[r] = g
    return heads[: g + 1].copy(), weight[: g + 1].copy(), group
