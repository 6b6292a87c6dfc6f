"""``pareto_rank`` on the GPU: a sorted sweep over tiles, pruned by the tree of tile boxes.

Contract: :func:`gpurank.kernels.reference.pareto_rank`.

The rows are sorted in Z-order, a linear extension of dominance (every dominator of a row
comes before it; :mod:`._tiles`), and cut into tiles of ``schedule.RANK_TILE`` rows with a
tree of bounding boxes (:mod:`._tree`). The front index is the longest dominance chain
ending at a row, ``rank[i] = 1 + max(rank[j] : j dominates i)`` (0 when nothing dominates
i), which only depends on earlier rows, so the tiles are resolved in order, one launch of
one block each: the presorted sweep of efficient non-dominated sorting (ENS, [Zhang2015]),
which assigns each row once all rows that can dominate it are assigned, with a tile of rows
per step. The block of tile t walks the tree
over the tiles before it, whose ranks are final: a node whose corners rule dominance out is
skipped, a node whose every row dominates every row of the tile raises each row's bound to
the node's largest rank + 1 at once (each node keeps the largest rank of its rows,
``nodemax``), and an undecided leaf tile is staged in shared memory and tested row by row.
The rows inside the tile are then resolved in order, one barrier per row, and the tile's
largest rank is pushed up the tree. The pair tests are those of ``domination_count``'s
schedule (:mod:`.schedule` counts them on the host); a row's test is skipped when the
other row's rank cannot raise its bound. With ``depth`` a block leaves the walk once all
its rows reached it, and ranks are kept clipped (``min(depth, 1 + max(...))`` of clipped
ranks is the clipped rank).

n / T sequential launches of one block; O(n m) memory and no host round trip.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._validate import check_depth
from . import _tiles
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    device_array,
    fill_kernel,
    kernel,
    matrix_and_result,
    scatter_i32_kernel,
)
from ._tree import (
    MAX_TILE,
    record_work,
    rows_in,
    scheduled_layout,
    stage_rows,
    tile_dominates,
    walk,
    work_counters,
)

__all__ = ["pareto_rank", "pareto_rank_device"]

_NO_DEPTH = 2**31 - 1

_DONE, _FULL, _LEAF = _tiles.DONE, _tiles.FULL, _tiles.LEAF


@kernel("void({f}[:, :], {f}[:, :], {f}[:, :], int64, int64, int64, int32[:], int32[:], "
        "int64[:], int64[:])")
def tree_rank_kernel(cs, lo, hi, npow, t, depth, rank_s, nodemax, tests, corners):
    """Final (clipped) ranks of the sorted rows of tile ``t`` (one block, one thread per
    tile row), from the final ranks of the earlier tiles; then the tile's largest rank
    into ``nodemax`` of its leaf and every ancestor. ``tests``/``corners`` as in the count
    kernel (written when not empty)."""
    tile = cuda.shared.array((MAX_CRITERIA, MAX_TILE), dtype=cs.dtype)
    tile_rank = cuda.shared.array(MAX_TILE, dtype=np.int32)
    bc = cuda.shared.array((MAX_CRITERIA, 2), dtype=cs.dtype)
    bc_rank = cuda.shared.array(2, dtype=np.int32)
    tmax = cuda.shared.array(1, dtype=np.int32)
    fl = cuda.shared.array(2, dtype=np.int32)
    own = cuda.local.array(MAX_CRITERIA, dtype=cs.dtype)
    stack = cuda.local.array(64, dtype=np.int64)
    # duplicate-code: boilerplate, the walk kernels' block geometry (tile t, one row per
    # thread, the thread's row in ``own``), as in the count kernel
    m = cs.shape[0]
    n = cs.shape[1]
    nt = cuda.blockDim.x
    tx = cuda.threadIdx.x
    p0 = t * nt
    tn = min(nt, n - p0)
    p = p0 + tx
    valid = tx < tn
    if valid:
        for k in range(m):
            own[k] = cs[k, p]

    if tx == 0:
        tmax[0] = 0
    lb = 0
    ntest = 0
    ncorner = 0
    done = not valid or depth <= 0
    stack[0] = 1
    sp = 1
    it = 0
    while True:
        # The tile's smallest bound, reduced into one of two slots used alternately: slot
        # it & 1 was last read in step it - 2, before every thread passed the first barrier
        # of step it - 1, so resetting it now cannot race with a slow reader.
        f = it & 1
        it += 1
        if tx == 0:
            fl[f] = _NO_DEPTH
        if cuda.syncthreads_and(1 if done else 0):
            break
        if valid:
            cuda.atomic.min(fl, f, np.int32(lb))
        cuda.syncthreads()
        floor = fl[f]  # nodes whose largest rank + 1 is at most this are pruned
        code, v, a, b, sp = walk(stack, sp, lo, hi, npow + t, 0, t, npow, m, False, nodemax,
                                 floor)
        if code == _DONE:
            break
        rows = rows_in(a, b, n, nt)
        if code == _LEAF:
            j0 = a * nt
            stage_rows(tile, cs, j0, rows, tx, m)
            if tx < rows:
                tile_rank[tx] = rank_s[j0 + tx]
            cuda.syncthreads()
            if not done:
                for u in range(rows):
                    ntest += 1
                    r1 = tile_rank[u] + 1
                    if r1 > lb and tile_dominates(tile, u, own, m, False):
                        lb = r1
                        if lb >= depth:
                            done = True
                            break
        elif not done:
            ncorner += rows  # skipped or pruned: decided without a row test
            if code == _FULL:
                lb = max(lb, nodemax[v] + 1)
                if lb >= depth:
                    done = True
    # inside the tile, in order: at step r thread r's rank is final; it publishes its row
    # and rank and every later row it dominates raises its own. Two broadcast slots used
    # alternately make one barrier per step enough (a slot is rewritten two steps later).
    cand = min(lb, depth)
    for r in range(tn):
        s = r & 1
        if tx == r:
            for k in range(m):
                bc[k, s] = own[k]
            bc_rank[s] = cand
        cuda.syncthreads()
        if valid and tx > r:
            ntest += 1
            r1 = bc_rank[s] + 1
            if r1 > cand and tile_dominates(bc, s, own, m, False):
                cand = min(r1, depth)
    if valid:
        rank_s[p] = cand
        cuda.atomic.max(tmax, 0, cand)
        if tests.shape[0] > 0:
            tests[p] = ntest
            corners[p] = ncorner
    cuda.syncthreads()
    if tx == 0:
        v = npow + t
        while v >= 1:
            nodemax[v] = max(nodemax[v], tmax[0])
            v //= 2


def rank_device(costs, depth=None, work=None):
    """The sweep on a validated copy-free view of ``costs``: int32 device ranks in row
    order, clipped at ``depth``. ``work`` as in :func:`.count.count_device`."""
    d, rank = matrix_and_result(costs, np.int32)
    n = d.shape[0]
    if n == 0:
        return rank
    tile, lay = scheduled_layout(d, "RANK_TILE")
    rank_s = device_array(n, np.int32)
    nodemax = device_array(2 * lay.npow, np.int32)
    fill_kernel[blocks(2 * lay.npow), TILE](nodemax, np.int32(-1))
    tests, corners = work_counters(n, work)
    dep = _NO_DEPTH if depth is None else int(depth)
    for t in range(lay.ntiles):
        tree_rank_kernel[1, tile](lay.cs, lay.lo, lay.hi, lay.npow, t, dep, rank_s, nodemax,
                                  tests, corners)
    scatter_i32_kernel[blocks(n), TILE](lay.order, rank_s, rank)
    record_work(work, lay, tests, corners, ranks=rank_s)
    return rank


def pareto_rank_device(costs, *, depth=None):
    """:func:`pareto_rank` returning an int32 device array (no host round trip)."""
    return rank_device(costs, check_depth(depth))


def pareto_rank(costs, *, depth=None):
    """Non-dominated sorting by a pruned sorted sweep on the device (front 0 first).

    Parameters
    ----------
    costs, depth
        As :func:`gpurank.kernels.reference.pareto_rank`, ``costs`` on the host or the
        device. With ``depth`` a tile stops walking once all its rows reached it.

    Returns
    -------
    ndarray of int32, shape (n,), on the host

    Examples
    --------
    >>> c = np.array([[4, 4], [1, 1], [2, 2], [1, 1], [3, 0]], dtype=np.float32)
    >>> pareto_rank(c), pareto_rank(c, depth=1)
    (array([2, 0, 1, 0, 0], dtype=int32), array([1, 0, 1, 0, 0], dtype=int32))
    """
    return pareto_rank_device(costs, depth=depth).copy_to_host()
