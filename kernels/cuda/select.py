"""``top_k`` for the GPU backend: on the host.

Contract: :func:`gpurank.kernels.reference.top_k`. k is small and the scores are one
column: bringing them to the host and running the CPU kernel beats a device selection.
"""

from __future__ import annotations

from .._validate import check_k, check_scores
from ..cpu import top_k as host_top_k
from ._launch import host_array

__all__ = ["top_k"]


def top_k(scores, k):
    """Indices of the k largest scores, best first, ties by the lower index.

    Parameters
    ----------
    scores, k
        As :func:`gpurank.kernels.reference.top_k`, ``scores`` on the host or the device.

    Returns
    -------
    ndarray of int64, shape (min(k, n),), on the host

    Examples
    --------
    >>> from numba import cuda
    >>> top_k(cuda.to_device(np.array([0.1, 0.4, 0.4, 0.3])), 2)
    array([1, 2])
    """
    s = check_scores(host_array(scores))
    check_k(k)
    return host_top_k(s, k)
