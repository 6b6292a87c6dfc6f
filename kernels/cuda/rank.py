"""``pareto_rank`` on the GPU: a sorted sweep whose work does not grow with the number of
fronts.

Contract: :func:`gpurank.kernels.reference.pareto_rank`.

The rows are put in lexicographic order on the device (ties by index): a dominator is <= in
every column and < in one, so it always comes earlier; equal rows do not dominate each
other, so their relative order does not matter. The front index is then the longest
dominance chain ending at a row, ``rank[i] = 1 + max(rank[j] : j dominates i)`` (0 when
nothing dominates i), which only depends on earlier rows. The sorted order is cut into
tiles of ``RANK_TILE`` rows, processed one after the other: the bound kernel compares the
tile (one thread per row) with all earlier rows, whose ranks are final, split over a wave
of blocks that stage shared-memory tiles of earlier rows with coalesced loads and combine
with an atomic max; the chain kernel (one block) then resolves the dominators inside the
tile in order, one barrier per row. About n^2 / 2 pair tests of O(m) each, whatever the
number of fronts, in n / RANK_TILE sequential steps of two launches; O(n m) memory and no
host round trip.

Sizes, for an H100/H200 (132 SMs, 2048 threads and 228 KiB of shared memory per SM, 48 KiB
of static shared memory per block):

- ``RANK_TILE`` rows per tile, one thread per tile row in both kernels. The sweep runs n / T
  tiles one after the other, two launches each, so T sets the sequential part: 512 makes
  the launches few (n = 1e6: ~2,000 tiles) while the chain kernel, one barrier per tile
  row, stays ~20-40 us per tile, and four 512-thread blocks fill an SM.
- ``RANK_STAGE`` earlier rows staged per shared-memory tile: 256 rows x 16 columns of
  float64 is 32 KiB, under the 48 KiB static limit, and four resident blocks use 132 KiB of
  the SM's 228 KiB, so shared memory does not cap occupancy.
- ``RANK_MIN_CHUNK``: a bound block compares its tile with at least this many earlier rows,
  so that early tiles do not launch hundreds of blocks for a few comparisons each.
- ``RANK_BLOCKS``: blocks per bound launch; None means one wave of resident blocks of the
  current device (SMs x 2048 / T): every block gets an equal chunk, so a single wave ends
  together. Tests set it (and ``RANK_TILE``) small to reach every code path at simulator
  sizes.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._validate import check_depth
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    fill_kernel,
    gather_kernel,
    kernel,
    lex_order,
    matrix_and_result,
    scatter_i32_kernel,
    sm_count,
)

__all__ = ["pareto_rank", "pareto_rank_device"]

RANK_TILE = 512
RANK_STAGE = 256
RANK_MIN_CHUNK = 128
RANK_BLOCKS = None


@cuda.jit(device=True, inline=True)
def _dominates_own(s, u, own, m):
    """Row ``u`` of the column-major tile ``s``, which sorts before ``own``, dominates the
    vector ``own`` (first m columns).

    Sorting lexicographically already put ``s[0, u] <= own[0]``, so column 0 only decides
    strictness: one load and one comparison fewer per pair.
    """
    if m == 0:
        return False
    strict = s[0, u] < own[0]
    for k in range(1, m):
        x = s[k, u]
        y = own[k]
        if x > y:
            return False
        if x < y:
            strict = True
    return strict


@kernel("void({f}[:, :], int32[:], int64, int64, int64, int64, int32[:])")
def rank_bound_kernel(cs, rank_s, n, m, p0, chunk, lb):
    """For the tile starting at sorted position ``p0`` (one thread per tile row, blockDim
    rows): lb[p] = max(lb[p], 1 + max rank of the rows dominating row p among the earlier
    rows [blockIdx * chunk, (blockIdx + 1) * chunk) cut at p0, whose ranks are final).

    Each block stages RANK_STAGE earlier rows at a time in shared memory with coalesced
    loads of the column-major ``cs``; every thread then reads them as broadcasts. A row
    whose rank cannot raise the bound is skipped before the dominance test."""
    stage = cuda.shared.array((MAX_CRITERIA, RANK_STAGE), dtype=cs.dtype)
    stage_rank = cuda.shared.array(RANK_STAGE, dtype=np.int32)
    own = cuda.local.array(MAX_CRITERIA, dtype=cs.dtype)
    tx = cuda.threadIdx.x
    nt = cuda.blockDim.x
    p = p0 + tx
    valid = p < n
    if valid:
        for k in range(m):
            own[k] = cs[k, p]
    best = 0
    lo = cuda.blockIdx.x * chunk
    hi = min(lo + chunk, p0)
    for base in range(lo, hi, RANK_STAGE):
        lim = min(RANK_STAGE, hi - base)
        cuda.syncthreads()  # every thread is done with the previous stage
        u = tx
        while u < lim:
            j = base + u
            for k in range(m):
                stage[k, u] = cs[k, j]  # consecutive threads, consecutive j
            stage_rank[u] = rank_s[j]
            u += nt
        cuda.syncthreads()
        if valid:
            for u in range(lim):
                r1 = stage_rank[u] + 1
                if r1 > best and _dominates_own(stage, u, own, m):
                    best = r1
    if valid and best > 0:
        cuda.atomic.max(lb, p, best)


@kernel("void({f}[:, :], int64, int64, int64, int32[:], int32[:])")
def rank_chain_kernel(cs, n, m, p0, lb, rank_s):
    """Final ranks of the tile starting at sorted position ``p0`` (one block, one thread per
    tile row): rank = max(lb, 1 + rank of each dominator inside the tile).

    Dominators come earlier in the order, so the rows are resolved in order: at step r,
    thread r (whose rank is final, having received every earlier row's push) publishes its
    row and rank in shared memory and every later thread it dominates raises its own. Two
    broadcast slots used alternately make one barrier per step enough (a slot is rewritten
    two steps later, after every thread has passed the barrier in between)."""
    bc = cuda.shared.array((MAX_CRITERIA, 2), dtype=cs.dtype)
    bc_rank = cuda.shared.array(2, dtype=np.int32)
    own = cuda.local.array(MAX_CRITERIA, dtype=cs.dtype)
    tx = cuda.threadIdx.x
    tn = min(cuda.blockDim.x, n - p0)
    p = p0 + tx
    valid = tx < tn
    cand = 0
    if valid:
        for k in range(m):
            own[k] = cs[k, p]
        cand = lb[p]
    for r in range(tn):
        s = r & 1
        if tx == r:
            for k in range(m):
                bc[k, s] = own[k]
            bc_rank[s] = cand
        cuda.syncthreads()
        if valid and tx > r:
            r1 = bc_rank[s] + 1
            if r1 > cand and _dominates_own(bc, s, own, m):
                cand = r1
    if valid:
        rank_s[p] = cand


def _resident_blocks(threads):
    """Blocks of ``threads`` threads that one wave of the current device holds."""
    if RANK_BLOCKS is not None:
        return int(RANK_BLOCKS)
    return max(1, sm_count() * max(1, 2048 // threads))


def pareto_rank_device(costs):
    """:func:`pareto_rank` returning an int32 device array (no host round trip).

    Sorted sweep: lexicographic order on the device, then per tile of ``RANK_TILE`` sorted
    rows one bound launch over all earlier rows and one chain launch inside the tile (see
    the module docstring). O(n^2 m / 2) comparisons at most, n / RANK_TILE sequential
    steps, O(n m) memory.
    """
    d, rank = matrix_and_result(costs, np.int32)
    n, m = d.shape
    if n == 0:
        return rank
    order = lex_order(d)
    cs = cuda.device_array((m, n), dtype=d.dtype)
    gather_kernel[blocks(n), TILE](d, order, cs)
    rank_s = cuda.device_array(n, dtype=np.int32)
    lb = cuda.device_array(n, dtype=np.int32)
    fill_kernel[blocks(n), TILE](lb, np.int32(0))
    tile = int(RANK_TILE)
    for p0 in range(0, n, tile):
        tn = min(tile, n - p0)
        if p0:
            nblocks = max(1, min(_resident_blocks(tn), -(-p0 // RANK_MIN_CHUNK)))
            chunk = -(-p0 // nblocks)
            rank_bound_kernel[nblocks, tn](cs, rank_s, n, m, p0, chunk, lb)
        rank_chain_kernel[1, tn](cs, n, m, p0, lb, rank_s)
    scatter_i32_kernel[blocks(n), TILE](order, rank_s, rank)
    return rank


def pareto_rank(costs, *, depth=None):
    """Non-dominated sorting by a sorted sweep on the device (front 0 first).

    Parameters
    ----------
    costs, depth
        As :func:`gpurank.kernels.reference.pareto_rank`, ``costs`` on the host or the
        device. With ``depth`` the full ranks are clipped on the host: the sweep costs the
        same whatever the number of fronts.

    Returns
    -------
    ndarray of int32, shape (n,), on the host

    Examples
    --------
    >>> c = np.array([[4, 4], [1, 1], [2, 2], [1, 1], [3, 0]], dtype=np.float32)
    >>> pareto_rank(c), pareto_rank(c, depth=1)
    (array([2, 0, 1, 0, 0], dtype=int32), array([1, 0, 1, 0, 0], dtype=int32))
    """
    depth = check_depth(depth)
    rank = pareto_rank_device(costs).copy_to_host()
    return rank if depth is None else np.minimum(rank, depth).astype(np.int32)
