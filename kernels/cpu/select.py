"""``top_k`` on the CPU (NumPy), and the final rank's order (:func:`rank_keys`,
:func:`rank_order`), which both drivers rank by.

Contract: :func:`gpurank.kernels.reference.top_k`.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_k, check_scores
from ._sort import argsort_then

__all__ = ["top_k", "rank_keys", "rank_order"]


def _matching(values, scores, name):
    v = np.asarray(values)
    if v.shape != scores.shape:
        raise ValueError(f"{name} must have the shape of scores {scores.shape}; got {v.shape}")
    return v.astype(np.int64, copy=False)


def rank_keys(scores, ties, ids=None):
    """The final-rank key of each row, as columns compared in turn, each ascending:
    ``-scores`` (the best score first), then ``ties``, then ``ids`` (when given; otherwise
    the row's position breaks the last ties).

    The one statement of the final rank's order (score descending, then Pareto rank, then
    row id; a ranking method whose smaller scores are better passes them negated) for both
    drivers: :func:`rank_order` sorts by it, and
    :func:`gpurank.kernels.cpu.blocks.count_preceding` searches the sorted keys of a block
    for it.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Finite.
    ties : array_like of int, shape (n,)
    ids : array_like of int, shape (n,), optional

    Returns
    -------
    tuple of ndarray
        ``(-scores as float64, ties as int64)``, and ``ids`` as int64 when given.

    Examples
    --------
    >>> rank_keys(np.array([0.5, 0.9]), np.array([1, 0]), np.array([7, 3]))[0]
    array([-0.5, -0.9])
    """
    s = check_scores(scores)
    keys = (-s.astype(np.float64, copy=False), _matching(ties, s, "ties"))
    return keys if ids is None else (*keys, _matching(ids, s, "ids"))


def rank_order(scores, ties, ids=None):
    """Row indices best first by :func:`rank_keys`: by ``scores`` descending, ties by
    ``ties`` ascending, then by ``ids`` (by default the lower index), as
    ``np.lexsort((ids, ties, -scores))`` but several times faster.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Finite.
    ties : array_like of int, shape (n,)
    ids : array_like of int, shape (n,), optional

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> rank_order(np.array([0.5, 0.9, 0.5, 0.5]), np.array([2, 0, 1, 1]))
    array([1, 2, 3, 0])
    >>> rank_order(np.array([0.5, 0.9, 0.5, 0.5]), np.array([2, 0, 1, 1]), [0, 1, 9, 4])
    array([1, 3, 2, 0])
    """
    return argsort_then(*rank_keys(scores, ties, ids))


def top_k(scores, k):
    """Indices of the ``k`` largest scores, best first, ties broken by the lower index.

    Parameters
    ----------
    scores, k
        As :func:`gpurank.kernels.reference.top_k`.

    Returns
    -------
    ndarray of int64, shape (min(k, n),)

    Notes
    -----
    ``argpartition`` O(n), then the selected k (with the tied rows at the boundary taken in
    index order) sorted, O(k log k).

    Examples
    --------
    >>> top_k(np.array([0.2, 0.7, 0.7, 0.1]), 10)  # k beyond n: every row
    array([1, 2, 0, 3])
    """
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
