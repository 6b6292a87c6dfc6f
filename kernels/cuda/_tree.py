"""The device side of the tile schedule: the Z-order sort and the tree of tile boxes.

:func:`tree_layout` puts the rows of a validated device matrix in the order of
:func:`gpurank.kernels.cuda.schedule.sorted_order` (Z-order code, then lexicographic, then
row index), lays them out column-major and builds the bounding boxes of the tiles and of
the complete binary tree over them, with the scalar functions of :mod:`._tiles` and the
NumPy breakpoints of :mod:`.schedule`, so that the host mirror sees the same order, the
same boxes and therefore the same decisions. See :mod:`._tiles` for the scheme.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import _tiles, schedule
from ._launch import TILE, blocks, device_array, gather_kernel, kernel, sorted_rows, to_device

MAX_TILE = 128  # the largest tile (threads per block) the walk kernels' shared arrays hold

__all__ = ["MAX_TILE", "TreeLayout", "record_work", "rows_in", "scheduled_layout", "tree_layout",
           "stage_rows", "tile_dominates", "walk", "work_counters"]

walk = _tiles.compile_walk(cuda.jit(device=True, inline=True))
rows_in = cuda.jit(device=True, inline=True)(_tiles.rows_in)
_morton_code = cuda.jit(device=True, inline=True)(_tiles.morton_code)


@cuda.jit(device=True, inline=True)
def stage_rows(tile, cs, j0, rows, tx, m):
    """Thread ``tx`` copies sorted row ``j0 + tx`` (when ``tx < rows``) into column ``tx``
    of the shared tile: coalesced, consecutive threads reading consecutive rows. The caller
    waits for the block before reading the tile."""
    if tx < rows:
        for k in range(m):
            tile[k, tx] = cs[k, j0 + tx]


@cuda.jit(device=True, inline=True)
def tile_dominates(s, u, own, m, reverse):
    """Row ``u`` of the column-major staged tile ``s`` dominates the vector ``own`` (with
    ``reverse``: is dominated by it): the pair test of the walk kernels."""
    strict = False
    for k in range(m):
        x = s[k, u]
        y = own[k]
        if reverse:
            x, y = y, x
        if x > y:
            return False
        if x < y:
            strict = True
    return strict


@kernel("void({f}[:, :], float64[:, :], int64, int64[:])")
def codes_kernel(x, bp, bits, codes):
    """codes[i] = Z-order code of row i (the host mirror's ``morton_code``)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        codes[i] = _morton_code(x, i, bp, bp.shape[1], x.shape[1], bits)


@kernel("void({f}[:, :], int64, int64, int64, {f}[:, :], {f}[:, :])")
def leaf_box_kernel(cs, n, tile, npow, lo, hi):
    """Box of tile t (one thread per leaf): lo/hi[npow + t, k] over its sorted rows
    (+inf/-inf for the padding leaves beyond the last tile)."""
    t = cuda.grid(1)
    if t < npow:
        a = t * tile
        b = min(a + tile, n)
        for k in range(cs.shape[0]):
            mn = math.inf
            mx = -math.inf
            for j in range(a, b):
                v = cs[k, j]
                mn = min(mn, v)
                mx = max(mx, v)
            lo[npow + t, k] = mn
            hi[npow + t, k] = mx


@kernel("void({f}[:, :], {f}[:, :], int64, int64)")
def node_box_kernel(lo, hi, v0, count):
    """Boxes of the nodes v0 .. v0 + count - 1 of one tree level from their children."""
    v = v0 + cuda.grid(1)
    if v < v0 + count:
        for k in range(lo.shape[1]):
            lo[v, k] = min(lo[2 * v, k], lo[2 * v + 1, k])
            hi[v, k] = max(hi[2 * v, k], hi[2 * v + 1, k])


class TreeLayout:
    """The sorted rows and the tree of one device matrix.

    Attributes: ``order`` (int64, sorted position -> row), ``cs`` (the sorted rows,
    column-major (m, n)), ``lo``/``hi`` ((2 npow, m) boxes), ``npow`` (leaves), ``tile``,
    ``ntiles``.
    """

    __slots__ = ("cs", "hi", "lo", "npow", "ntiles", "order", "tile")

    def __init__(self, order, cs, lo, hi, npow, tile):
        self.order, self.cs, self.lo, self.hi = order, cs, lo, hi
        self.npow, self.tile = npow, tile
        self.ntiles = -(-cs.shape[1] // tile)


def sort_rows(d):
    """Row indices of ``d`` (n >= 1) in the schedule's order (int64 device array)."""
    n, m = d.shape
    rows = schedule.sample_rows(n)
    sample = device_array((m, rows.shape[0]), d.dtype)
    gather_kernel[blocks(rows.shape[0]), TILE](d, to_device(rows), sample)
    bp = to_device(schedule.breakpoints(sample.copy_to_host().T))  # m x s values
    codes = device_array(n, np.int64)
    codes_kernel[blocks(n), TILE](d, bp, schedule.code_bits(m), codes)
    return sorted_rows(d, codes)


def scheduled_layout(d, name):
    """The tile of ``schedule.<name>`` rows (checked against :data:`MAX_TILE`) and the
    :class:`TreeLayout` of the validated device matrix ``d`` (n >= 1) for it."""
    tile = int(getattr(schedule, name))
    if not 1 <= tile <= MAX_TILE:
        raise ValueError(f"{name} must be in [1, {MAX_TILE}]; got {tile}")
    return tile, tree_layout(d, tile)


def work_counters(n, work):
    """Per-sorted-row pair-test and corner counters of a walk kernel: n each when the caller
    records the work (``work`` a dict), empty otherwise."""
    k = n if work is not None else 0
    return device_array(k, np.int64), device_array(k, np.int64)


def record_work(work, lay, tests, corners, **results):
    """Copy the layout's order, the counters and the sorted-order ``results`` into ``work``
    (the schedule tests compare them with the host mirror); nothing when ``work`` is None."""
    if work is not None:
        work.update(order=lay.order.copy_to_host(), tests=tests.copy_to_host(),
                    corners=corners.copy_to_host(),
                    **{k: v.copy_to_host() for k, v in results.items()})


def tree_layout(d, tile):
    """The :class:`TreeLayout` of the validated device matrix ``d`` (n >= 1) for tiles of
    ``tile`` rows."""
    n, m = d.shape
    order = sort_rows(d)
    cs = device_array((m, n), d.dtype)
    gather_kernel[blocks(n), TILE](d, order, cs)
    ntiles = -(-n // tile)
    npow = 1
    while npow < ntiles:
        npow *= 2
    lo = device_array((2 * npow, m), d.dtype)
    hi = device_array((2 * npow, m), d.dtype)
    leaf_box_kernel[blocks(npow), TILE](cs, n, tile, npow, lo, hi)
    v = npow
    while v > 1:
        half = v // 2
        node_box_kernel[blocks(half), TILE](lo, hi, half, half)
        v = half
    return TreeLayout(order, cs, lo, hi, npow, tile)
