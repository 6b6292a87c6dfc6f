"""The host mirror of the GPU schedules: the tile schedule's order, boxes and decisions, and
the divide and conquer's passes, computed on the CPU at any size, to count the work of the
CUDA kernels without a GPU.

The decisions are the functions of :mod:`._tiles` compiled with ``numba.njit`` (the kernels
compile the same functions for the device), the order and the boxes are NumPy expressions
that give the same arrays as the device's (a strict total order has one sorted
permutation; minima and maxima are exact). The simulator tests check that the device's
per-row pair tests and corner decisions equal these, on small inputs.

Counting conventions, per kernel (ordered pairs (source row, target row), source before
target in the sorted order for ``pareto_front``, ``pareto_rank`` and ``domination_count``,
after it for ``dominated_count``; n (n - 1) / 2 pairs in all):

* ``pair_tests``: pairs compared row by row (in undecided leaf tiles, or inside the target
  tile itself);
* ``pairs_decided_by_corners``: pairs settled by a node's box without touching the rows;
* with a cap (``pareto_front`` is the count with cap 1) a row stops once it reached the
  cap, so the remaining pairs are neither tested nor counted;
* ``pareto_rank`` peels the fronts one step each: at step ``f`` each unranked row whose
  last dominator (its witness) is still unranked is settled without a test, the others stop
  at their first unranked dominator, and the nodes holding no unranked row are pruned (counted
  with the corners); its pair tests and corners are summed over the steps, which depend on
  the ranks: the mirror takes them from the CPU kernel (exact, so equal to the device's).
  Its pairs are not each decided once, so tests and corners do not add up to n (n - 1) / 2.

The exact counts for 2 <= m <= ``DNC_MAX_M`` columns without a cap or with a cap above
``DNC_CAP`` are the divide and conquer of :mod:`._dnc` instead (:func:`uses_dnc`). Its
``pair_tests`` are the row-by-row comparisons inside its leaves of ``DNC_LEAF`` sorted rows,
its ``pairs_decided_by_corners`` all the other pairs (decided in aggregate by the sorted
runs), and ``search_steps`` the halvings of its binary searches (one per element and merge
pass, plus one search per row for its first equal row): its searches are branch-uniform,
so all three depend on n, m and the leaf only (:func:`dnc_work`). The lexicographic sort
before it (as the Z-order sort of the tile schedule) is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .. import _shared, cpu
from .._validate import check_cap, check_costs
from . import _tiles

__all__ = [
    "COUNT_TILE",
    "DNC_CAP",
    "DNC_LEAF",
    "DNC_MAX_M",
    "RANK_TILE",
    "SAMPLE",
    "WorkCount",
    "breakpoints",
    "check_leaf",
    "code_bits",
    "count_work",
    "dnc_work",
    "row_work",
    "sample_rows",
    "sorted_order",
    "tree_boxes",
    "uses_dnc",
]

COUNT_TILE = 128  # rows per tile of the count kernel (threads per block)
RANK_TILE = 128  # rows per tile of the rank sweep (threads of its one block)
SAMPLE = 1024  # rows sampled for the quantization breakpoints of the Z-order
#: Sorted rows per brute-force leaf of the divide and conquer (its lowest merge levels): a
#: power of two, so that the leaves are the runs of its first counting merge.
DNC_LEAF = 64
#: Counts with a cap at or below this take the tile walk, which stops once a tile's rows
#: reached the cap; above it (and without a cap) the divide and conquer, whose cost does not
#: depend on the cap (as ``CDQ_CAP`` on the CPU).
DNC_CAP = 64
#: The most columns the divide and conquer serves: its passes grow as log^(m-1) n (1e7 rows:
#: 1.1e12 search halvings at m = 5, 5.9e12 at m = 6, where the tile walk's pair tests, each a
#: few comparisons from shared memory, are of the same order).
DNC_MAX_M = 5

_rows_in = njit(inline="always")(_tiles.rows_in)
_walk = _tiles.compile_walk(njit)
_NO_RANKS = np.full(1, -1, dtype=np.int32)  # what the count walks pass for nodemax
_morton_code = njit(inline="always")(_tiles.morton_code)


@dataclass(frozen=True)
class WorkCount:
    """The counted work of one kernel call (see the module docstring)."""

    kernel: str
    n: int
    m: int
    tile: int  # rows per tile; for the divide and conquer, rows per leaf
    pair_tests: int
    pairs_decided_by_corners: int
    search_steps: int = 0  # binary-search halvings (the divide and conquer only)
    scheme: str = "tiles"  # "tiles" or "dnc"


def code_bits(m):
    """Bits per column of the Z-order code: 62 bits in all, at most 16 per column."""
    return max(1, min(16, 62 // max(1, m)))


def sample_rows(n):
    """The evenly spaced rows whose values are the quantization breakpoints."""
    s = min(n, SAMPLE)
    return (np.arange(s, dtype=np.int64) * n) // max(s, 1)


def breakpoints(sample):
    """The sorted columns of the sampled rows (an (s, m) array): an (m, s) float64 array."""
    return np.ascontiguousarray(np.sort(np.asarray(sample, dtype=np.float64).T, axis=1))


@njit(parallel=True, cache=True)
def _codes(x, bp, bits):
    n, m = x.shape
    out = np.empty(n, dtype=np.int64)
    for i in prange(n):
        out[i] = _morton_code(x, i, bp, bp.shape[1], m, bits)
    return out


def sorted_order(x):
    """The device's order of the rows of ``x``: Z-order code, then lexicographic, then row
    index. Returns (order, codes) as int64 arrays."""
    n, m = x.shape
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    bp = breakpoints(x[sample_rows(n)])
    codes = _codes(x, bp, code_bits(m))
    keys = (np.arange(n),) + tuple(x[:, k] for k in range(m - 1, -1, -1)) + (codes,)
    return np.lexsort(keys).astype(np.int64), codes


def tree_boxes(xs, tile):
    """Boxes of the tree over the tiles of the sorted rows ``xs``: (lo, hi, npow), with
    ``lo``/``hi`` of shape (2 npow, m) in ``xs``'s dtype (node 0 unused, empty nodes
    +inf/-inf)."""
    n, m = xs.shape
    ntiles = max(1, -(-n // tile))
    npow = 1
    while npow < ntiles:
        npow *= 2
    lo = np.full((2 * npow, m), np.inf, dtype=xs.dtype)
    hi = np.full((2 * npow, m), -np.inf, dtype=xs.dtype)
    if n:
        starts = np.arange(0, n, tile)
        lo[npow : npow + len(starts)] = np.minimum.reduceat(xs, starts, axis=0)
        hi[npow : npow + len(starts)] = np.maximum.reduceat(xs, starts, axis=0)
    v = npow
    while v > 1:
        half = v // 2
        lo[half:v] = np.minimum(lo[v : 2 * v : 2], lo[v + 1 : 2 * v : 2])
        hi[half:v] = np.maximum(hi[v : 2 * v : 2], hi[v + 1 : 2 * v : 2])
        v = half
    return lo, hi, npow


@njit(parallel=True, cache=True)
def _walk_counts(lo, hi, n, tile, npow, m, reverse):
    """Per tile: (pair tests, pairs decided by corners) without a cap (box decisions only)."""
    ntiles = -(-n // tile)
    tests = np.zeros(ntiles, dtype=np.int64)
    corners = np.zeros(ntiles, dtype=np.int64)
    for t in prange(ntiles):
        tn = _rows_in(t, t + 1, n, tile)
        first, last = (t + 1, ntiles) if reverse else (0, t)
        stack = np.empty(64, dtype=np.int64)
        stack[0] = 1
        sp = 1
        te = tn * (tn - 1) // 2  # inside the tile
        co = 0
        while True:
            code, _v, a, b, sp = _walk(stack, sp, lo, hi, npow + t, first, last, npow, m,
                                       reverse, _NO_RANKS, -1)
            if code == _tiles.DONE:
                break
            r = _rows_in(a, b, n, tile) * tn
            if code == _tiles.LEAF:
                te += r
            else:
                co += r
        tests[t] = te
        corners[t] = co
    return tests, corners


_dominates = njit(inline="always")(_shared.dominates)


@njit(parallel=True, cache=True)
def _walk_capped(xs, lo, hi, tile, npow, cap, reverse):
    """Per sorted row: (count, pair tests, pairs decided by corners) as the count kernel
    runs with a cap: each step in the kernel's order, a row stopping at the cap."""
    n, m = xs.shape
    ntiles = -(-n // tile)
    cnt = np.zeros(n, dtype=np.int64)
    tests = np.zeros(n, dtype=np.int64)
    corners = np.zeros(n, dtype=np.int64)
    for t in prange(ntiles):
        p0 = t * tile
        tn = _rows_in(t, t + 1, n, tile)
        first, last = (t + 1, ntiles) if reverse else (0, t)
        # inside the tile: each row against the rows before it (after it with reverse)
        for r in range(tn):
            i = p0 + r
            lo_u, hi_u = (r + 1, tn) if reverse else (0, r)
            for u in range(lo_u, hi_u):
                if cnt[i] >= cap:
                    break
                tests[i] += 1
                d0, d1 = (i, p0 + u) if reverse else (p0 + u, i)  # dominator, dominated
                if _dominates(xs, d0, xs, d1, m):
                    cnt[i] += 1
        stack = np.empty(64, dtype=np.int64)
        stack[0] = 1
        sp = 1
        while True:
            alldone = True
            for r in range(tn):
                if cnt[p0 + r] < cap:
                    alldone = False
            if alldone:
                break
            code, _v, a, b, sp = _walk(stack, sp, lo, hi, npow + t, first, last, npow, m,
                                       reverse, _NO_RANKS, -1)
            if code == _tiles.DONE:
                break
            rows = _rows_in(a, b, n, tile)
            for r in range(tn):
                i = p0 + r
                if cnt[i] >= cap:
                    continue
                if code == _tiles.LEAF:
                    for j in range(a * tile, a * tile + rows):
                        if cnt[i] >= cap:
                            break
                        tests[i] += 1
                        d0, d1 = (i, j) if reverse else (j, i)
                        if _dominates(xs, d0, xs, d1, m):
                            cnt[i] += 1
                else:
                    corners[i] += rows
                    if code == _tiles.FULL:
                        cnt[i] += rows
    return np.minimum(cnt, cap), tests, corners


@njit(parallel=True, cache=True)
def _walk_peel(xs, rs, lo, hi, tile, npow, unranked):
    """Per sorted row: (pair tests, pairs decided without a row test) of the front-by-front
    peel, summed over its steps, given the final ranks ``rs`` of the sorted rows: at step
    ``f`` the unranked rows are those with ``rs >= f`` and ``nodemax`` holds the ranks below
    ``f`` (``unranked`` for the others), so every step is known in advance."""
    n, m = xs.shape
    ntiles = -(-n // tile)
    tests = np.zeros(n, dtype=np.int64)
    corners = np.zeros(n, dtype=np.int64)
    witness = np.full(n, -1, dtype=np.int64)
    nodemax = np.full(2 * npow, -1, dtype=np.int64)
    for f in range(rs.max() + 1):
        for t in range(npow):
            mx = -1
            for j in range(min(t * tile, n), min(t * tile + tile, n)):
                mx = max(mx, rs[j] if rs[j] < f else unranked)
            nodemax[npow + t] = mx
        for v in range(npow - 1, 0, -1):
            nodemax[v] = max(nodemax[2 * v], nodemax[2 * v + 1])
        for t in prange(ntiles):
            if nodemax[npow + t] < f:
                continue
            p0 = t * tile
            tn = _rows_in(t, t + 1, n, tile)
            done = np.empty(tn, dtype=np.bool_)
            for r in range(tn):
                i = p0 + r
                w = witness[i]
                done[r] = rs[i] < f or (w >= 0 and rs[w] >= f)
                for u in range(r):
                    if done[r]:
                        break
                    if rs[p0 + u] >= f:
                        tests[i] += 1
                        if _dominates(xs, p0 + u, xs, i, m):
                            done[r] = True
                            witness[i] = p0 + u
            stack = np.empty(64, dtype=np.int64)
            stack[0] = 1
            sp = 1
            while not done.all():
                code, _v, a, b, sp = _walk(stack, sp, lo, hi, npow + t, 0, t, npow, m, False,
                                           nodemax, f)
                if code == _tiles.DONE:
                    break
                rows = _rows_in(a, b, n, tile)
                for r in range(tn):
                    i = p0 + r
                    if done[r]:
                        continue
                    if code == _tiles.LEAF:
                        for j in range(a * tile, a * tile + rows):
                            if rs[j] >= f:
                                tests[i] += 1
                                if _dominates(xs, j, xs, i, m):
                                    done[r] = True
                                    witness[i] = j
                                    break
                    else:
                        corners[i] += rows
                        if code == _tiles.FULL:
                            done[r] = True
                            witness[i] = -1
    return tests, corners


def _rank_walk(xs, x, order, lo, hi, npow, tile):
    """:func:`_walk_peel` on the ranks of the CPU kernel (equal to the device's)."""
    rs = cpu.pareto_rank(x)[order].astype(np.int64)
    return _walk_peel(xs, rs, lo, hi, tile, npow, _tiles.UNRANKED)


def _prepare(costs, tile):
    x = check_costs(costs)
    order, _ = sorted_order(x)
    xs = np.ascontiguousarray(x[order])
    lo, hi, npow = tree_boxes(xs, tile)
    return xs, order, lo, hi, npow


_KERNELS = ("pareto_front", "pareto_rank", "domination_count", "dominated_count")


def _kernel_args(kernel, cap):
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}; got {kernel!r}")
    cap = check_cap(cap)
    if kernel == "pareto_front":
        cap = 1
    if kernel == "pareto_rank" and cap is not None:
        raise ValueError(f"cap applies to the count kernels, not pareto_rank; got {cap!r}")
    return cap, kernel == "dominated_count"


def row_work(costs, kernel, *, tile=None, cap=None):
    """Per row, in the sorted order: (count, pair tests, pairs decided by corners), by
    running the tile schedule with its row tests on the host (what the device kernels record
    when asked; ``count`` is the capped count, None for ``pareto_rank``). Also returns the
    order. O(pair tests) time: for small inputs and tests."""
    cap, reverse = _kernel_args(kernel, cap)
    tile = int(tile or (RANK_TILE if kernel == "pareto_rank" else COUNT_TILE))
    xs, order, lo, hi, npow = _prepare(costs, tile)
    n = xs.shape[0]
    if n == 0:
        z = np.zeros(0, np.int64)
        return z, z, z, order
    if kernel == "pareto_rank":
        tests, corners = _rank_walk(xs, check_costs(costs), order, lo, hi, npow, tile)
        return None, tests, corners, order
    cnt, tests, corners = _walk_capped(xs, lo, hi, tile, npow, n if cap is None else cap,
                                       reverse)
    return cnt, tests, corners, order


def check_leaf(leaf):
    """``leaf`` as an int after checking it is a power of two (the leaves must be the runs
    of a merge pass, or pairs across a leaf boundary would be counted twice or never)."""
    leaf = int(leaf)
    if leaf < 1 or leaf & (leaf - 1):
        raise ValueError(f"DNC_LEAF must be a power of two; got {leaf}")
    return leaf


def uses_dnc(kernel, m, cap):
    """Whether the device counts with the divide and conquer (else the tile walk): the
    count kernels, 2 <= m <= ``DNC_MAX_M``, no cap or a cap above ``DNC_CAP``."""
    return (kernel in ("domination_count", "dominated_count") and 2 <= m <= DNC_MAX_M
            and (cap is None or cap > DNC_CAP))


def _halvings(k):
    """Halvings of the device's binary search over ``k`` elements (0 for none)."""
    return int(k).bit_length()


def _pass_steps(n, width, final=False):
    """Halvings of one merge pass (runs of ``width`` into ``2 width``, aligned from 0 and
    cut at n): every element searches its sibling run; in the ``final`` pass of a problem
    on its last column only the right runs' elements do."""
    pair = 2 * width
    full, rest = divmod(n, pair)
    a = min(rest, width)
    b = rest - a
    if final:
        return full * width * _halvings(width) + b * _halvings(a)
    return full * pair * _halvings(width) + a * _halvings(b) + b * _halvings(a)


def dnc_work(n, m, *, leaf=None):
    """(pair tests, search steps) of the divide and conquer on n rows of m >= 2 columns.

    The leaves' pair tests (each row against the earlier rows of its leaf) and the halvings
    of every binary search: one per row for its first equal row over all n sorted rows,
    then one per element and merge pass. The problem on columns ``d ..`` merges from width 1
    to its segment width (n for the outermost, which starts counting at the leaf width);
    each of its passes on a column before the last starts the problem one column lower on
    segments of twice the pass width. On the last column, the final pass of a problem (its
    merged runs are not read) searches from the right runs only, and is skipped where it
    would not count (below the leaf width). Closed forms per pass: O(log^(m-1) n)
    arithmetic.

    Examples
    --------
    >>> dnc_work(8, 2, leaf=2)  # 4 leaves of 1 test; 8 * 4 + 8 * 1 + 8 * 2 + 4 * 3 halvings
    (4, 68)
    """
    n, m = int(n), int(m)
    if m < 2:
        raise ValueError(f"m must be at least 2 for the divide and conquer; got {m}")
    leaf = check_leaf(DNC_LEAF if leaf is None else leaf)
    if n == 0:
        return 0, 0
    full, rest = divmod(n, leaf)
    tests = full * (leaf * (leaf - 1) // 2) + rest * (rest - 1) // 2
    memo = {}

    def problem(d, wmax):
        if (d, wmax) not in memo:
            s, width = 0, 1
            while width < wmax:
                below_leaf = d == 1 and width < leaf
                if d < m - 1:
                    s += _pass_steps(n, width)
                    if not below_leaf:
                        s += problem(d + 1, 2 * width)
                elif 2 * width < wmax:
                    s += _pass_steps(n, width)
                elif not below_leaf:
                    s += _pass_steps(n, width, final=True)
                width *= 2
            memo[d, wmax] = s
        return memo[d, wmax]

    return tests, n * _halvings(n) + problem(1, n)


def count_work(costs, kernel, *, tile=None, cap=None, scheme=None, leaf=None):
    """The work of one CUDA kernel call on ``costs``, counted on the host.

    Parameters
    ----------
    costs : array_like, shape (n, m)
        As the kernels take it.
    kernel : {"pareto_front", "pareto_rank", "domination_count", "dominated_count"}
    tile : int, optional, keyword-only
        Rows per tile (the kernel module's setting by default).
    cap : int, optional, keyword-only
        The count kernels' cap (``pareto_front`` is the count with cap 1). With a cap the
        row tests run on the host, in the kernel's order; without one the boxes alone
        decide the schedule and only the tree is walked.
    scheme : {None, "tiles", "dnc"}, optional, keyword-only
        The scheme whose work is counted: the device's choice (:func:`uses_dnc`) by default;
        ``"dnc"`` for the count kernels and m >= 2 only.
    leaf : int, optional, keyword-only
        Rows per leaf of the divide and conquer (``DNC_LEAF`` by default).

    Returns
    -------
    WorkCount

    Examples
    --------
    >>> x = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [0.0, 5.0]])
    >>> w = count_work(x, "domination_count", tile=2, scheme="tiles")
    >>> w.pair_tests + w.pairs_decided_by_corners  # every ordered pair once: 4 * 3 / 2
    6
    >>> w = count_work(x, "domination_count", leaf=2)
    >>> w.scheme, w.pair_tests, w.pairs_decided_by_corners, w.search_steps
    ('dnc', 2, 4, 20)
    """
    cap, reverse = _kernel_args(kernel, cap)
    x = check_costs(costs)
    n, m = x.shape
    if scheme is None:
        scheme = "dnc" if uses_dnc(kernel, m, cap) else "tiles"
    if scheme == "dnc":
        if kernel not in ("domination_count", "dominated_count") or m < 2:
            raise ValueError(f"scheme='dnc' counts domination_count and dominated_count "
                             f"with m >= 2; got {kernel!r} with m={m}")
        leaf = check_leaf(DNC_LEAF if leaf is None else leaf)
        tests, steps = dnc_work(n, m, leaf=leaf)
        return WorkCount(kernel, n, m, leaf, tests, n * (n - 1) // 2 - tests, steps, "dnc")
    if scheme != "tiles":
        raise ValueError(f"scheme must be None, 'tiles' or 'dnc'; got {scheme!r}")
    tile = int(tile or (RANK_TILE if kernel == "pareto_rank" else COUNT_TILE))
    xs, order, lo, hi, npow = _prepare(x, tile)
    if n == 0:
        tests = corners = 0
    elif kernel == "pareto_rank":
        t, c = _rank_walk(xs, x, order, lo, hi, npow, tile)
        tests, corners = int(t.sum()), int(c.sum())
    elif cap is None:
        t, c = _walk_counts(lo, hi, n, tile, npow, m, reverse)
        tests, corners = int(t.sum()), int(c.sum())
    else:
        _, t, c = _walk_capped(xs, lo, hi, tile, npow, cap, reverse)
        tests, corners = int(t.sum()), int(c.sum())
    return WorkCount(kernel, n, m, tile, tests, corners)
