"""``domination_count`` and ``dominated_count`` on the GPU: a tiled pairwise kernel.

Contracts: :func:`gpurank.kernels.reference.domination_count` and ``dominated_count``.

One thread per row. The criteria are first laid out column-major (``ct[k, i]``) so that a
warp's loads are coalesced; each block stages a tile of ``TILE`` rows in shared memory and
every thread compares its row with the tile. With a cap a block leaves the tile loop as
soon as all its threads reached it (``syncthreads_and``). O(n^2 m / p) time, O(n m) memory
(no n x n matrix).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._validate import check_cap
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    column_major,
    dominates_t,
    fill_kernel,
    kernel,
    matrix_and_result,
)

__all__ = [
    "domination_count",
    "dominated_count",
    "domination_count_device",
    "dominated_count_device",
]


@kernel("void({f}[:, :], int64, int64, int64, boolean, int8[:], int64[:])")
def count_kernel(ct, n, m, cap, reverse, alive, out):
    """out[i] = min(cap, #rows j (alive) dominating i) (reverse: dominated by i)."""
    tile = cuda.shared.array((MAX_CRITERIA, TILE), dtype=ct.dtype)
    tile_alive = cuda.shared.array(TILE, dtype=np.int8)
    own = cuda.local.array(MAX_CRITERIA, dtype=ct.dtype)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + tx
    valid = i < n
    if valid:
        for k in range(m):
            own[k] = ct[k, i]
    cnt = 0
    done = True
    if valid:
        done = cap <= 0 or alive[i] == 0
    for base in range(0, n, TILE):
        if cuda.syncthreads_and(1 if done else 0):
            break
        j = base + tx
        if j < n:
            for k in range(m):
                tile[k, tx] = ct[k, j]  # coalesced: consecutive threads, consecutive j
            tile_alive[tx] = alive[j]
        cuda.syncthreads()
        if not done:
            lim = min(TILE, n - base)
            for t in range(lim):
                if tile_alive[t] == 0:
                    continue
                if reverse:
                    hit = True
                    strict = False
                    for k in range(m):
                        if own[k] > tile[k, t]:
                            hit = False
                            break
                        if own[k] < tile[k, t]:
                            strict = True
                    hit = hit and strict
                else:
                    hit = dominates_t(tile, t, ct, i, m)
                if hit:
                    cnt += 1
                    if cnt >= cap:
                        done = True
                        break
    if valid:
        out[i] = cnt


def count_device(costs, cap, reverse):
    """The count kernel on a validated copy-free view of ``costs``: an int64 device array."""
    d, out = matrix_and_result(costs, np.int64)
    n, m = d.shape
    if n == 0:
        return out
    ct = column_major(d)
    alive = cuda.device_array(n, dtype=np.int8)
    fill_kernel[blocks(n), TILE](alive, np.int8(1))
    count_kernel[blocks(n), TILE](ct, n, m, n if cap is None else cap, reverse, alive, out)
    return out


def domination_count_device(costs, *, cap=None):
    """:func:`domination_count` returning an int64 device array."""
    return count_device(costs, check_cap(cap), False)


def dominated_count_device(costs, *, cap=None):
    """:func:`dominated_count` returning an int64 device array."""
    return count_device(costs, check_cap(cap), True)


def domination_count(costs, *, cap=None):
    """How many rows dominate each row.

    Parameters
    ----------
    costs, cap
        As :func:`gpurank.kernels.reference.domination_count`; ``costs`` on the host or the
        device. A block stops once all its rows reached ``cap``.

    Returns
    -------
    ndarray of int64, shape (n,), on the host

    Examples
    --------
    A device array is read in place:

    >>> from numba import cuda
    >>> d = cuda.to_device(np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 0.0]]))
    >>> domination_count(d), domination_count(d, cap=0)
    (array([0, 1, 0]), array([0, 0, 0]))
    """
    return domination_count_device(costs, cap=cap).copy_to_host()


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates: the count kernel with the test reversed.

    Parameters and result as :func:`domination_count`.

    Examples
    --------
    >>> dominated_count(np.array([[1, 1], [2, 2], [0.5, 3]], dtype=np.float32))
    array([1, 0, 0])
    """
    return dominated_count_device(costs, cap=cap).copy_to_host()
