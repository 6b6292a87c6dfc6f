"""``top_k`` for the GPU backend: on the host.

Contract: :func:`gpurank.kernels.reference.top_k`. k is small and the scores are one
column: bringing them to the host and running the CPU kernel beats a device selection.
"""

from __future__ import annotations

from .._validate import check_k, check_scores
from ._launch import host_array

__all__ = ["top_k"]


def top_k(scores, k):
    """Indices of the k largest scores, best first, ties by lower index (host or device
    scores, host result).

    Examples
    --------
    >>> import numpy as np
    >>> top_k(np.array([0.5, 0.9, 0.5, 0.1, 0.9]), 3)
    array([1, 4, 0])
    """
    s = check_scores(host_array(scores))
    check_k(k)
    from ..cpu import top_k as host_top_k  # NumPy only; imported on first use

    return host_top_k(s, k)
