"""``domination_count`` and ``dominated_count`` on the GPU: a divide and conquer, or a
block-pruned tile schedule.

Contracts: :func:`gpurank.kernels.reference.domination_count` and ``dominated_count``.

Exact counts of 2 .. ``schedule.DNC_MAX_M`` columns, without a cap or with a cap above
``schedule.DNC_CAP``, are the divide and conquer of :mod:`._dnc` (O(n log^m n) work however
the data are correlated, capped afterwards); everything else is the tile walk below, which
stops early with a small cap (the front is the count with cap 1).

The tile walk: the rows are sorted in Z-order (a linear extension of dominance: every
dominator of a row comes before it) and cut into tiles of ``schedule.COUNT_TILE`` rows with
a tree of bounding boxes over them (:mod:`._tree`, scheme in :mod:`._tiles`). One block per
target tile, one thread per target row: the block first compares its rows with each other,
then walks the tree over the tiles before it (after it for ``dominated_count``). Every
thread runs the same walk on the same boxes, so the block's control flow stays uniform: a
node whose corners rule dominance out is skipped, a node whose every row dominates every
target row adds its row count at once, and only the undecided leaf tiles are staged in
shared memory and tested row by row. With a cap a block leaves the walk once all its rows
reached it (``syncthreads_and``). :mod:`.schedule` counts the same work on the host.

Memory: O(n m) for the sorted copy and O(n / T m) for the boxes (no n x n matrix).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._validate import check_cap
from . import _tiles, schedule
from ._dnc import dnc_count_device
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    device_array,
    kernel,
    matrix_and_result,
    scatter_i64_kernel,
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

__all__ = [
    "dominated_count",
    "dominated_count_device",
    "domination_count",
    "domination_count_device",
]


_DONE, _FULL, _LEAF = _tiles.DONE, _tiles.FULL, _tiles.LEAF


@cuda.jit(device=True, inline=True)
def _count_staged(tile, u0, u1, own, m, reverse, cnt, cap, ntest):
    """``cnt`` plus the staged rows ``u0 .. u1 - 1`` that dominate ``own`` (reverse: that it
    dominates), stopping at ``cap``; and ``ntest`` plus the pair tests made."""
    for u in range(u0, u1):
        ntest += 1
        if tile_dominates(tile, u, own, m, reverse):
            cnt += 1
            if cnt >= cap:
                break
    return cnt, ntest


@kernel("void({f}[:, :], {f}[:, :], {f}[:, :], int64, int64, boolean, int64[:], int64[:], "
        "int64[:], int32[:])")
def tree_count_kernel(cs, lo, hi, npow, cap, reverse, out, tests, corners, nomax):
    """out[p] = min(cap, #rows dominating sorted row p) (reverse: dominated by it); the
    pair tests and corner-decided pairs of each row into ``tests``/``corners`` when they
    are not empty (what the host mirror counts)."""
    tile = cuda.shared.array((MAX_CRITERIA, MAX_TILE), dtype=cs.dtype)
    own = cuda.local.array(MAX_CRITERIA, dtype=cs.dtype)
    stack = cuda.local.array(64, dtype=np.int64)
    # duplicate-code: boilerplate, the walk kernels' block geometry (tile t, one row per
    # thread, the thread's row in ``own``), as in the rank kernel
    m = cs.shape[0]
    n = cs.shape[1]
    nt = cuda.blockDim.x
    t = cuda.blockIdx.x
    tx = cuda.threadIdx.x
    ntiles = (n + nt - 1) // nt
    p0 = t * nt
    tn = min(nt, n - p0)
    p = p0 + tx
    valid = tx < tn
    if valid:
        for k in range(m):
            own[k] = cs[k, p]
            tile[k, tx] = own[k]

    cuda.syncthreads()
    cnt = 0
    ntest = 0
    ncorner = 0
    done = not valid or cap <= 0
    # inside the tile: the sorted order puts dominators before the rows they dominate
    if not done:
        u0, u1 = (tx + 1, tn) if reverse else (0, tx)
        cnt, ntest = _count_staged(tile, u0, u1, own, m, reverse, cnt, cap, ntest)
        done = cnt >= cap
    first, last = (t + 1, ntiles) if reverse else (0, t)
    stack[0] = 1
    sp = 1
    while True:
        # also the barrier after which the staged tile may be overwritten
        if cuda.syncthreads_and(1 if done else 0):
            break
        code, _, a, b, sp = walk(stack, sp, lo, hi, npow + t, first, last, npow, m, reverse,
                                 nomax, -1)
        if code == _DONE:
            break
        rows = rows_in(a, b, n, nt)
        if code == _LEAF:
            stage_rows(tile, cs, a * nt, rows, tx, m)
            cuda.syncthreads()
            if not done:
                cnt, ntest = _count_staged(tile, 0, rows, own, m, reverse, cnt, cap, ntest)
                done = cnt >= cap
        elif not done:
            ncorner += rows
            if code == _FULL:
                cnt += rows
                if cnt >= cap:
                    done = True
    if valid:
        out[p] = min(cnt, cap)
        if tests.shape[0] > 0:
            tests[p] = ntest
            corners[p] = ncorner


def count_device(costs, cap, reverse, work=None, scheme=None):
    """The counts of a validated copy-free view of ``costs``: an int64 device array in row
    order. ``scheme`` is ``"tiles"``, ``"dnc"`` or None for the choice of
    :func:`.schedule.uses_dnc`. ``work``, a dict, receives what the scheme records for the
    schedule tests (:func:`._dnc.dnc_count_device`; for the tiles the layout and
    per-sorted-row ``tests`` and ``corners``, host arrays)."""
    d, out = matrix_and_result(costs, np.int64)
    n, m = d.shape
    name = "dominated_count" if reverse else "domination_count"
    if scheme is None:
        scheme = "dnc" if schedule.uses_dnc(name, m, cap) else "tiles"
    if scheme == "dnc":
        return dnc_count_device(d, out, cap, reverse, work=work)
    if scheme != "tiles":
        raise ValueError(f"scheme must be None, 'tiles' or 'dnc'; got {scheme!r}")
    if n == 0:
        return out
    tile, lay = scheduled_layout(d, "COUNT_TILE")
    out_s = device_array(n, np.int64)
    tests, corners = work_counters(n, work)
    tree_count_kernel[lay.ntiles, tile](lay.cs, lay.lo, lay.hi, lay.npow,
                                         n if cap is None else cap, reverse, out_s, tests,
                                         corners, device_array(1, np.int32))
    scatter_i64_kernel[blocks(n), TILE](lay.order, out_s, out)
    record_work(work, lay, tests, corners, counts=out_s)
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
        device. With a cap up to ``schedule.DNC_CAP`` (or m = 1, or m > ``DNC_MAX_M``) a
        block of the tile walk stops once all its rows reached ``cap``; otherwise the
        divide and conquer counts exactly and clips.

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
