"""``domination_count`` and ``dominated_count`` on the CPU (Numba).

Contracts: :func:`gpurank.kernels.reference.domination_count` and
:func:`gpurank.kernels.reference.dominated_count`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads, njit

from .._validate import check_cap, check_costs
from ._cdq import MAX_3D, cdq_count_4d, sum_3d, sum_3d_parallel
from ._kdtree import count_dominators
from ._sort import dense_ranks, group_end, lex_order, unique_groups_parallel

__all__ = ["domination_count", "dominated_count"]

#: m = 3 and 4 with a cap above this use the exact divide and conquer (whose cost does not
#: depend on the cap), at or below it the k-d tree, whose leaves stop once all their rows
#: reached the cap: 1e6 x 3 with cap=10 in 0.35-0.52 s against 1.8-2.4 s exact (measured).
CDQ_CAP = 64


def domination_count(costs, *, cap=None):
    """How many rows dominate each row.

    Parameters
    ----------
    costs, cap
        As :func:`gpurank.kernels.reference.domination_count`; counting a row stops once it
        reached ``cap``.

    Returns
    -------
    ndarray of int64, shape (n,)

    Notes
    -----
    * m = 1: sort and binary search, O(n log n).
    * m = 2: lexicographic sweep with a Fenwick tree of counts over ranks of c1, O(n log n).
    * m = 3 without a cap (or a cap > ``CDQ_CAP``): divide and conquer over the distinct
      rows in lexicographic order (:func:`._cdq.sum_3d`), O(n log^2 n), both cores from
      ``PARALLEL_3D`` distinct rows on.
    * m = 4 without a cap (or a cap > ``CDQ_CAP``): the same one level deeper
      (:func:`._cdq.cdq_count_4d`), O(n log^3 n); brute-force leaves, a Fenwick tree per run
      pair over its left run only, and both cores (the small steps of a level shared among
      the threads, the inner levels of the large ones too).
    * m >= 5, and m = 3 or 4 with a cap <= ``CDQ_CAP``: a k-d tree with bounding-box pruning
      (:mod:`._kdtree`), traversed per leaf: O(n^2 m) worst case, near O(n log n) on
      correlated data; with a cap each leaf stops once all its rows reached it.

    References
    ----------
    ``docs/references.md``: [Bentley1980] (dominance counting in O(n log^(m-1) n)),
    [KLP1975] (the sweep-and-split scheme for m = 3), [Jensen2003] (the same divide and
    conquer for domination counts and ranks), [Bentley1975] (k-d trees).

    Examples
    --------
    Equal rows do not dominate each other:

    >>> domination_count(np.array([[1, 2], [1, 2], [2, 2], [3, 3]]))
    array([0, 0, 2, 3])
    """
    c = check_costs(costs)
    cap = check_cap(cap)
    n, m = c.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if m == 0:
        out = np.zeros(n, dtype=np.int64)
    elif m == 1:
        out = np.searchsorted(np.sort(c[:, 0]), c[:, 0], side="left").astype(np.int64)
    elif m == 2:
        out = _count_2d(c, lex_order(c), *dense_ranks(c[:, 1]))
    elif m in (3, 4) and (cap is None or cap > CDQ_CAP) and n < MAX_3D:
        out = (_count_3d if m == 3 else _count_4d)(c, lex_order(c))
    else:
        return count_dominators(c, n if cap is None else cap)
    if cap is not None:
        np.minimum(out, cap, out=out)
    return out


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates: ``domination_count(-costs, cap=cap)``.

    Parameters and algorithms as in :func:`domination_count`.

    Examples
    --------
    >>> dominated_count(np.array([[1, 2], [1, 2], [2, 2], [3, 3]]), cap=2)
    array([2, 2, 1, 0])
    """
    return domination_count(np.negative(check_costs(costs)), cap=cap)


@njit(cache=True, nogil=True)
def _count_2d(c, order, r1, u):
    """Lexicographic sweep, Fenwick tree of counts over the ranks ``r1`` (of ``u`` values)
    of c1."""
    n = c.shape[0]
    cnt = np.empty(n, dtype=np.int64)
    tree = np.zeros(u + 1, dtype=np.int64)
    i = 0
    while i < n:
        head = order[i]
        j = group_end(c, order, i, 2)
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


def _distinct_ranks(c, order, m, ranked):
    """The distinct rows in lexicographic order (each with its multiplicity), the group of
    every row, and the dense ranks of the ``ranked`` columns of the distinct rows.

    The rankings are independent sorts that release the GIL, so they share two threads (at
    1e7 rows each is about a second).
    """
    heads, weight, group = unique_groups_parallel(c, order, m)
    with ThreadPoolExecutor(2) as pool:
        ranks = list(pool.map(dense_ranks, (c[heads, k] for k in ranked)))
    return heads, weight, group, [r for r, _ in ranks]


#: Below this many distinct rows the 3-D count runs on one thread (thread start-up dominates).
PARALLEL_3D = 20_000


def _count_3d(c, order):
    """Exact counts for m = 3: distinct rows in lexicographic order (every dominator comes
    earlier), then the 3-D divide and conquer on the ranks of (c1, c2)."""
    _, weight, group, (y, z) = _distinct_ranks(c, order, 3, (1, 2))
    ask = np.ones(y.shape[0], dtype=np.bool_)
    if y.shape[0] >= PARALLEL_3D:
        cnt = sum_3d_parallel(y, z, weight, ask, get_num_threads())
    else:
        cnt = sum_3d(y, z, weight, ask)
    return cnt[group]


def _count_4d(c, order):
    """Exact counts for m = 4: the 4-D divide and conquer over the distinct rows in
    lexicographic order, every distinct row weighted by its multiplicity."""
    heads, weight, group, (z, w) = _distinct_ranks(c, order, 4, (2, 3))
    y = c[heads, 1]  # only compared (ranks of z and w are packed into keys)
    cnt = np.zeros(y.shape[0], dtype=np.int64)
    cdq_count_4d(y, z, w, weight, np.ones(y.shape[0], dtype=np.bool_), cnt, w_ranked=True)
    return cnt[group]
