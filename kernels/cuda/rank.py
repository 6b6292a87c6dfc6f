"""``pareto_rank`` on the GPU: the fronts peeled one launch each, every tile at once.

Contract: :func:`gpurank.kernels.reference.pareto_rank`.

The rows are sorted in Z-order, a linear extension of dominance (every dominator of a row
comes before it; :mod:`._tiles`), and cut into tiles of ``schedule.RANK_TILE`` rows with a
tree of bounding boxes (:mod:`._tree`). Front ``f`` is the set of rows that no row still
unranked at the start of step ``f`` dominates (non-dominated sorting by successive
skylines). Step ``f`` is one launch of one block per
tile, all tiles at once: the block of tile ``t`` tests its unranked rows against the
unranked rows of its own tile (staged in shared memory) and walks the tree over the tiles
before it (dominators come earlier in the order), as the count kernel does with ``cap=1``:
a node whose corners rule dominance out is skipped, a node that holds no unranked row
(``nodemax``, the largest rank under it, with unranked rows as :data:`UNRANKED`, below
``f``) is pruned, a node whose every row dominates every row of the tile settles the whole
tile at once, and an undecided leaf tile is staged and tested row by row; a row stops at
its first unranked dominator and the block leaves the walk once all its rows have one. A
row with none gets rank ``f``. Each row keeps the dominator it found (its witness): while
the witness stays unranked, the row is settled at the next step without a test, so a row
walks again only when its witness was just ranked. Rows ranked ``f`` during the launch
still count as unranked for it (``rank >= f``), so the blocks never race. Two small
launches then rebuild ``nodemax`` (one thread per tile, then one per tree node over its
tiles: O(tiles log tiles)), and the host reads the root's value to know whether rows are
left.

Work: a row walks once per front until it is ranked, less the steps its witness settles;
the host mirror (:func:`.schedule.row_work`) counts the pair tests: at 1e6 realistic rows
with 4 criteria, 5.4e9 (218 fronts), against 3.7e7 for ``pareto_front``'s single walk.

Launches per call: the layout's ``5 + ceil(log2 n) + log2(leaves)`` (:mod:`._tree`),
three fills, three per front and one scatter (plus one clip with ``depth``): O(fronts +
log n), each step as wide as the table (:func:`launch_count`). With ``depth`` the peel
stops after ``depth`` fronts and the rows left get ``depth``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .._validate import check_depth
from . import _tiles, schedule
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

__all__ = ["pareto_rank", "pareto_rank_device", "launch_count", "UNRANKED"]

UNRANKED = _tiles.UNRANKED

_DONE, _FULL, _LEAF = _tiles.DONE, _tiles.FULL, _tiles.LEAF
_node_tiles = cuda.jit(device=True, inline=True)(_tiles.node_tiles)


@cuda.jit(device=True, inline=True)
def _stage(tile, tile_rank, cs, rank_s, j0, rows, tx, m):
    """Sorted rows ``j0 .. j0 + rows - 1`` and their ranks into shared memory (thread tx
    copies one); the caller waits for the block before reading them."""
    stage_rows(tile, cs, j0, rows, tx, m)
    if tx < rows:
        tile_rank[tx] = rank_s[j0 + tx]


@cuda.jit(device=True, inline=True)
def _unranked_dominator(tile, tile_rank, rows, own, m, f):
    """(u, pair tests): the first of the first ``rows`` staged rows that is unranked at step
    ``f`` (rank >= f) and dominates ``own`` (-1 for none)."""
    tests = 0
    for u in range(rows):
        if tile_rank[u] >= f:
            tests += 1
            if tile_dominates(tile, u, own, m, False):
                return u, tests
    return -1, tests


@kernel("void({f}[:, :], {f}[:, :], {f}[:, :], int64, int64, int32[:], int32[:], int64[:], "
        "int64[:], int64[:])")
def peel_kernel(cs, lo, hi, npow, f, rank_s, nodemax, witness, tests, corners):
    """Step ``f`` of the peel for tile ``blockIdx.x`` (one thread per tile row): its
    unranked rows that no unranked row dominates get rank ``f``. ``witness[p]`` is the
    dominator row p found last (-1: none, or a whole node): while it stays unranked, p is
    settled without a test. ``tests``/``corners`` (when not empty) add up each row's pair
    tests and the rows its nodes decided."""
    tile = cuda.shared.array((MAX_CRITERIA, MAX_TILE), dtype=cs.dtype)
    tile_rank = cuda.shared.array(MAX_TILE, dtype=np.int32)
    own = cuda.local.array(MAX_CRITERIA, dtype=cs.dtype)
    stack = cuda.local.array(64, dtype=np.int64)
    t = cuda.blockIdx.x
    if nodemax[npow + t] < f:
        return  # every row of the tile is ranked (the same answer for the whole block)
    m = cs.shape[0]
    n = cs.shape[1]
    nt = cuda.blockDim.x
    tx = cuda.threadIdx.x
    p0 = t * nt
    tn = min(nt, n - p0)
    p = p0 + tx
    valid = tx < tn
    mine = False
    if valid:
        mine = rank_s[p] >= f
        for k in range(m):
            own[k] = cs[k, p]
    done = not mine
    if mine:
        w = witness[p]
        done = w >= 0 and rank_s[w] >= f  # last step's dominator is still unranked
    ntest = 0
    ncorner = 0
    stack[0] = 1
    sp = 1
    own_tile = True  # first the tile's own rows: only earlier ones can dominate
    while True:
        # one barrier per node: every thread finished reading the staged tile
        if cuda.syncthreads_and(1 if done else 0):
            break
        if own_tile:
            own_tile = False
            code, a, rows, limit = _LEAF, t, tn, tx
        else:
            code, v, a, b, sp = walk(stack, sp, lo, hi, npow + t, 0, t, npow, m, False,
                                     nodemax, f)
            if code == _DONE:
                break
            rows = rows_in(a, b, n, nt)
            limit = rows
        if code != _LEAF:
            if not done:
                ncorner += rows  # decided by the node, without a row test
                # FULL and not pruned: the node holds an unranked row, which dominates all
                if code == _FULL:
                    done = True
                    witness[p] = -1
        else:
            _stage(tile, tile_rank, cs, rank_s, a * nt, rows, tx, m)
            cuda.syncthreads()
            if not done:
                u, k = _unranked_dominator(tile, tile_rank, limit, own, m, f)
                ntest += k
                if u >= 0:
                    done = True
                    witness[p] = a * nt + u
    if mine and not done:
        rank_s[p] = f
    if valid and tests.shape[0] > 0:
        tests[p] += ntest
        corners[p] += ncorner


@kernel("void(int32[:], int64, int64, int32[:])")
def leaf_max_kernel(rank_s, tile, npow, nodemax):
    """nodemax[npow + t] = the largest rank of tile t's rows (-1 for the padding leaves)."""
    t = cuda.grid(1)
    if t < npow:
        n = rank_s.shape[0]
        mx = -1
        for j in range(min(t * tile, n), min(t * tile + tile, n)):
            mx = max(mx, rank_s[j])
        nodemax[npow + t] = mx


@kernel("void(int64, int32[:])")
def node_max_kernel(npow, nodemax):
    """nodemax[v] for every inner node v (one thread each) over the leaves under it."""
    v = cuda.grid(1)
    if 1 <= v < npow:
        a, b = _node_tiles(v, npow)
        mx = -1
        for t in range(a, b):
            mx = max(mx, nodemax[npow + t])
        nodemax[v] = mx


@kernel("void(int32[:], int32)")
def clip_kernel(rank_s, depth):
    """rank_s[p] = min(rank_s[p], depth): the rows left after ``depth`` fronts."""
    p = cuda.grid(1)
    if p < rank_s.shape[0]:
        rank_s[p] = min(rank_s[p], depth)


def launch_count(n, fronts, *, tile=None, clipped=False):
    """Kernel launches of one ``pareto_rank`` call on ``n`` rows (n >= 1) that peels
    ``fronts`` fronts (``clipped``: stopped by ``depth`` with rows left).

    Examples
    --------
    At 1e7 rows in tiles of 128, with the 405 fronts of the realistic 4-criteria shape:

    >>> launch_count(10_000_000, 405, tile=128)
    1265
    """
    tile = int(tile or schedule.RANK_TILE)
    ntiles = -(-n // tile)
    npow = 1 << max(0, math.ceil(math.log2(ntiles)))
    layout = 5 + max(0, math.ceil(math.log2(n))) + int(math.log2(npow))
    return layout + 3 + 3 * fronts + 1 + int(clipped)


def rank_device(costs, depth=None, work=None):
    """The peel on a validated copy-free view of ``costs``: int32 device ranks in row
    order, clipped at ``depth``. ``work`` (a dict) receives what
    :func:`.count.count_device`'s does (order, per-row pair tests and corners, summed over
    the steps, and the sorted ranks), the fronts peeled and the launches."""
    d, rank = matrix_and_result(costs, np.int32)
    n = d.shape[0]
    if n == 0:
        return rank
    tile, lay = scheduled_layout(d, "RANK_TILE")
    rank_s = device_array(n, np.int32)
    fill_kernel[blocks(n), TILE](rank_s, np.int32(UNRANKED))
    nodemax = device_array(2 * lay.npow, np.int32)
    fill_kernel[blocks(2 * lay.npow), TILE](nodemax, np.int32(UNRANKED))
    witness = device_array(n, np.int64)
    fill_kernel[blocks(n), TILE](witness, np.int64(-1))
    tests, corners = work_counters(n, work)
    if work is not None:
        fill_kernel[blocks(n), TILE](tests, np.int64(0))
        fill_kernel[blocks(n), TILE](corners, np.int64(0))
    dep = UNRANKED if depth is None else int(depth)
    f = 0
    left = True
    while left and f < dep:
        peel_kernel[lay.ntiles, tile](lay.cs, lay.lo, lay.hi, lay.npow, f, rank_s, nodemax,
                                      witness, tests, corners)
        leaf_max_kernel[blocks(lay.npow), TILE](rank_s, tile, lay.npow, nodemax)
        node_max_kernel[blocks(lay.npow), TILE](lay.npow, nodemax)
        f += 1
        left = int(nodemax[1:2].copy_to_host()[0]) == UNRANKED
    if left:
        clip_kernel[blocks(n), TILE](rank_s, np.int32(dep))
    scatter_i32_kernel[blocks(n), TILE](lay.order, rank_s, rank)
    record_work(work, lay, tests, corners, ranks=rank_s)
    if work is not None:
        # the two fills of the work counters are launches only a recording call makes
        work.update(fronts=f, launches=launch_count(n, f, tile=tile, clipped=left) + 2)
    return rank


def pareto_rank_device(costs, *, depth=None):
    """:func:`pareto_rank` returning an int32 device array (no host round trip)."""
    return rank_device(costs, check_depth(depth))


def pareto_rank(costs, *, depth=None):
    """Non-dominated sorting on the device, one front per step (front 0 first).

    Parameters
    ----------
    costs, depth
        As :func:`gpurank.kernels.reference.pareto_rank`, ``costs`` on the host or the
        device. With ``depth`` the peel stops after ``depth`` fronts.

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
