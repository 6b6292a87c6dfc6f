"""Kernels of the key-range divide and conquer: exact Pareto ranks and domination counts of a
table that no single task holds (the Dask driver, :mod:`gpurank.engine.distributed.dominance`).

The table is cut into key ranges of a lexicographic order (:func:`range_index`): a row can
only be dominated by rows of its own range or of earlier ones. Inside a range the in-memory
kernels run (``domination_count``, and :func:`chain_rank` for the ranks, seeded with what
the earlier ranges imply). What earlier ranges contribute is a static question between two
sets of points, the *contributors* (rows of the earlier ranges, with their ranks) and the
*askers*: for each asker, how many contributors lie weakly below it in the remaining
columns, and the largest rank among them. :func:`below` answers it for three coordinates,
:func:`below_cells` when all but one coordinate are small cell numbers compared strictly
(with :func:`cell_totals` carrying the cells of earlier stretches of the exact coordinate).
The driver composes them; ``docs/distributed.md`` has the scheme, its cost and why it is
exact.

Conventions of :mod:`gpurank.kernels.reference`, where the oracles live. A strict
comparison of small integers ``u < v`` is the weak one ``2u + 1 <= 2v`` of the doubled
values (the contributor's side odd), which is how the driver asks :func:`below` for "in an
earlier cell".

References (``docs/references.md``): [Jensen2003] and [Buzdalov2014] (divide and conquer
over the first criterion, the merge steps one dimension lower), [Bentley1980], [Zhang2015]
(ENS, here with lower bounds).
"""

from __future__ import annotations

import numpy as np

from .._validate import (
    check_block,
    check_coordinates,
    check_flags,
    check_ranks,
    check_splitters,
)
from ._below import cell_totals as _cell_totals
from ._below import range_index as _range_index
from ._below import sum_max_3d, sweep_cells
from ._ens import ens_kd, ens_lex
from ._sort import dense_ranks, lex_order

__all__ = ["range_index", "slab_ranks", "order_of", "below", "below_cells", "cell_totals",
           "chain_rank", "MAX_COORD"]

#: Coordinates of :func:`below` are ranks below this (they are packed into 64-bit keys).
MAX_COORD = 1 << 29


def order_of(key):
    """Positions of an int ``key`` in [0, 2**31), ascending, ties by position (a stable
    argsort): key and position packed into one int64 and sorted (NumPy's vectorized sort of
    plain integers, about 8x faster than a stable argsort at millions of points).

    Examples
    --------
    >>> order_of(np.array([3, 1, 3, 0]))
    array([3, 1, 0, 2])
    """
    (k,) = check_coordinates((key,), ("key",), 1 << 31)
    if k.shape[0] >= 1 << 32:
        raise ValueError(f"key must have fewer than 2**32 entries; got {k.shape[0]}")
    packed = (k << 32) | np.arange(k.shape[0], dtype=np.int64)
    packed.sort()
    return packed & 0xFFFFFFFF


def slab_ranks(values):
    """Dense ranks (1 = smallest; equal values share a rank) of every column of a finite
    float matrix, as int32: integers that compare as the values do.

    Examples
    --------
    >>> slab_ranks(np.array([[0.5, 2.0], [0.1, 2.0], [0.5, -1.0]]))
    array([[2, 2],
           [1, 2],
           [2, 1]], dtype=int32)
    """
    v = check_block(values, "values")
    out = np.empty(v.shape, dtype=np.int32)
    for j in range(v.shape[1]):
        out[:, j] = dense_ranks(np.ascontiguousarray(v[:, j]))[0] if len(v) else 0
    return out


def range_index(costs, splitters, columns):
    """The key range of every row: how many splitter rows are lexicographically <= the row
    read in the column order ``columns``.

    Any lexicographic order of the columns is a linear extension of dominance (a dominator
    is <= in every column, so it is never later), so a row's range is never before the
    range of a row it dominates, and equal rows share their range.

    Parameters
    ----------
    costs : ndarray of shape (n, m)
    splitters : ndarray of shape (s, len(columns))
        Sorted lexicographically.
    columns : sequence of int
        Distinct column indices: the order in which rows are compared.

    Returns
    -------
    ndarray of int32, shape (n,), values in [0, s]

    Examples
    --------
    >>> c = np.array([[1.0, 5.0], [2.0, 0.0], [2.0, 9.0]])
    >>> range_index(c, [[2.0, 1.0]], [0, 1])
    array([0, 0, 1], dtype=int32)
    >>> range_index(c, [[1.0]], [1])
    array([1, 0, 1], dtype=int32)
    """
    c = check_block(costs, "costs")
    s, cols = check_splitters(splitters, columns, c.shape[1])
    if c.shape[0] == 0:
        return np.zeros(0, dtype=np.int32)
    return _range_index(c, cols, s)


def below(first, second, third, contributes, value):
    """For every asker (a point that does not contribute): how many contributors are <= it
    in all three coordinates, and the largest ``value`` among them.

    Parameters
    ----------
    first, second, third : 1-D int arrays of equal length
        Integer coordinates in [0, ``MAX_COORD``) (ranks).
    contributes : 1-D bool array
        True for a contributor, False for an asker.
    value : 1-D int array
        Non-negative values of the contributors (ignored for askers).

    Returns
    -------
    count : ndarray of int64
        0 for contributors.
    best : ndarray of int64
        -1 where no contributor is below (and for contributors).

    Notes
    -----
    The points sorted by ``first`` (contributors first on ties, so that equal values
    count), then the merges of the 3-D divide and conquer on ``second`` with Fenwick trees
    over ``third`` (:mod:`._below`), the count and the maximum in one pass. O(k log^2 k).

    Examples
    --------
    >>> below([0, 1, 1], [0, 0, 2], [3, 3, 3], np.array([True, False, True]), [7, 0, 2])
    (array([0, 1, 0]), array([-1,  7, -1]))
    """
    a, b, c = check_coordinates((first, second, third), ("first", "second", "third"),
                                MAX_COORD)
    n = a.shape[0]
    cont = check_flags(contributes, n, "contributes")
    (val,) = check_coordinates((value,), ("value",), np.iinfo(np.int64).max)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    asks = ~cont
    order = order_of(2 * a + asks)
    flags = (2 * cont + asks)[order]
    cnt, best = sum_max_3d(b[order], c[order], flags, val[order])
    out_c = np.empty(n, dtype=np.int64)
    out_b = np.empty(n, dtype=np.int64)
    out_c[order] = cnt
    out_b[order] = best
    return out_c, out_b


def below_cells(exact, cell_y, cell_z, contributes, value, init_count=None, init_best=None):
    """For every asker: the contributors with ``exact`` <= its own and both cells strictly
    below its own, counted, with the largest ``value`` among them; ``init_count`` and
    ``init_best`` add the contributors of cells before the sweep (their count and largest
    value per cell), which are below every asker in ``exact``.

    Parameters
    ----------
    exact : 1-D int array
        Integers in [0, ``MAX_COORD``) (compared weakly).
    cell_y, cell_z : 1-D int arrays
        Cells in [0, gy) and [0, gz), compared strictly.
    contributes : 1-D bool array
    value : 1-D int array, >= 0
    init_count, init_best : int arrays of shape (gy, gz), optional
        Default: no earlier contributors, a grid one larger than the largest cells.

    Returns
    -------
    (count, best) as in :func:`below`.

    Notes
    -----
    A sweep in ``exact`` order with 2-D Fenwick trees of counts and maxima over the cells,
    O(k log k + k log^2 G) for G cells a side.

    Examples
    --------
    >>> below_cells([5, 6, 6], [0, 1, 1], [0, 1, 0], np.array([True, False, False]),
    ...             [4, 0, 0])
    (array([0, 1, 0]), array([-1,  4, -1]))
    """
    (ex,) = check_coordinates((exact,), ("exact",), MAX_COORD)
    cont = check_flags(contributes, ex.shape[0], "contributes")
    if init_count is None:
        gy = int(np.max(cell_y, initial=0)) + 1
        gz = int(np.max(cell_z, initial=0)) + 1
        init_count = np.zeros((gy, gz), dtype=np.int64)
        init_best = np.full((gy, gz), -1, dtype=np.int64)
    ic = np.ascontiguousarray(init_count, dtype=np.int64)
    ib = np.ascontiguousarray(init_best, dtype=np.int64)
    if ic.ndim != 2 or ib.shape != ic.shape:
        raise ValueError(f"init_best must have the shape of init_count {ic.shape}; got "
                         f"{ib.shape}")
    cy, cz = check_coordinates((cell_y, cell_z), ("cell_y", "cell_z"), max(ic.shape))
    for x, g, name in ((cy, ic.shape[0], "cell_y"), (cz, ic.shape[1], "cell_z")):
        if x.size and x.max() >= g:
            raise ValueError(f"{name} must hold integers in [0, {g}); got {int(x.max())}")
    (val,) = check_coordinates((value,), ("value",), np.iinfo(np.int64).max)
    n = ex.shape[0]
    if cy.shape[0] != n or val.shape[0] != n:
        raise ValueError(f"cell_y, cell_z and value must have one entry per point ({n})")
    order = order_of(2 * ex + ~cont)
    return sweep_cells(order, cy, cz, cont, val, ic, ib)


def cell_totals(cell_y, cell_z, value, shape):
    """How many points each cell of a grid of ``shape`` holds, and their largest ``value``
    (-1 for an empty cell): the ``init_count`` and ``init_best`` of :func:`below_cells`.

    Examples
    --------
    >>> cell_totals([0, 0, 1], [1, 1, 0], [3, 5, 2], (2, 2))
    (array([[0, 2],
           [1, 0]]), array([[-1,  5],
           [ 2, -1]]))
    """
    gy, gz = (int(g) for g in shape)
    cy, cz = check_coordinates((cell_y, cell_z), ("cell_y", "cell_z"), max(gy, gz, 1))
    for x, g, name in ((cy, gy, "cell_y"), (cz, gz, "cell_z")):
        if x.size and x.max() >= g:
            raise ValueError(f"{name} must hold integers in [0, {g}); got {int(x.max())}")
    (val,) = check_coordinates((value,), ("value",), np.iinfo(np.int64).max)
    return _cell_totals(cy, cz, val, gy, gz)


def chain_rank(costs, lower=None):
    """Pareto ranks of one key range, seeded with what the earlier ranges imply:
    ``rank[i] = max(lower[i], 1 + max(rank[j] for rows j here dominating i))``.

    Parameters
    ----------
    costs : ndarray of shape (n, m)
    lower : 1-D int array or None
        Lower bounds, >= 0, never decreasing along dominance: a row's bound is at least the
        bound of every row here that dominates it (not checked). ``1 +`` the largest rank
        of the row's dominators in earlier ranges (0 when none) is such a bound, and with it
        the result is the row's rank in the whole table.

    Returns
    -------
    ndarray of int32, shape (n,)

    Notes
    -----
    ENS-BS over the lexicographic order (:mod:`._ens`), each row's binary search over the
    fronts starting at its bound (the module docstring there says why that is exact); the
    same cost as ``pareto_rank``.

    Examples
    --------
    >>> chain_rank(np.array([[1.0, 1.0], [2.0, 2.0], [0.0, 3.0]]), [4, 4, 0])
    array([4, 5, 0], dtype=int32)
    """
    c = check_block(costs, "costs")
    n, m = c.shape
    low = np.zeros(n, dtype=np.int64) if lower is None else check_ranks(lower, n, "lower")
    if n and low.min() < 0:
        raise ValueError(f"lower must be >= 0; got {int(low.min())}")
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if low.max() >= np.iinfo(np.int32).max - n:
        raise ValueError(f"lower must be below {np.iinfo(np.int32).max - n}; got "
                         f"{int(low.max())}")
    if m == 0:
        return low.astype(np.int32)
    if m == 1:  # a constant second column changes no dominance
        c = np.ascontiguousarray(np.column_stack((c, np.zeros(n))))
    low32 = np.ascontiguousarray(low, dtype=np.int32)
    order = lex_order(c)
    return (ens_kd if c.shape[1] >= 4 else ens_lex)(c, order, False, low32)
