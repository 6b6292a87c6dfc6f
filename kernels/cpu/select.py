"""``top_k`` on the CPU (NumPy).

Contract: :func:`gpurank.kernels.reference.top_k`.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_k, check_scores
from ._sort import argsort_then

__all__ = ["top_k", "rank_order"]


def rank_order(scores, ties):
    """Row indices best first: by ``scores`` descending, ties by ``ties`` ascending, then by
    the lower index (``np.lexsort((np.arange(n), ties, -scores))``, several times faster).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Finite.
    ties : array_like of int, shape (n,)

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> rank_order(np.array([0.5, 0.9, 0.5, 0.5]), np.array([2, 0, 1, 1]))
    array([1, 2, 3, 0])
    """
    s = check_scores(scores)
    t = np.asarray(ties)
    if t.shape != s.shape:
        raise ValueError(f"ties must have the shape of scores {s.shape}; got {t.shape}")
    return argsort_then(-s, t.astype(np.int64, copy=False))


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
