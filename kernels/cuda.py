"""CUDA kernels (Numba CUDA) and host launchers.

Same names, signatures and contract as :mod:`gpurank.kernels.reference`. The public
launchers accept NumPy arrays, Numba device arrays or any object exposing
``__cuda_array_interface__`` (CuPy arrays, null-free cuDF columns) without copying the input,
and return NumPy arrays on the host; the ``*_device`` variants return Numba device arrays.

This is the only kernels module that imports ``numba.cuda``, and it does so lazily: importing
this module needs no GPU and compiles nothing. Kernels are compiled on first launch.

Algorithms
----------
* ``domination_count`` / ``dominated_count`` / ``pareto_front``: a tiled pairwise kernel,
  one thread per row. The criteria are first laid out column-major (``ct[k, i]``) so that a
  warp's loads are coalesced; each block stages a tile of ``TILE`` rows in shared memory and
  every thread compares its row with the tile. With a cap (the front uses ``cap=1``) a
  block leaves the tile loop as soon as all its threads reached the cap
  (``syncthreads_and``). O(n^2 m / p) time, O(n m) memory (no n x n matrix).
* ``pareto_rank``: a sorted sweep whose work does not grow with the number of fronts. The
  rows are put in lexicographic order on the device (bottom-up merge sort, one
  binary-searching thread per row and pass, ties by index; O(n log^2 n m)), so that every
  dominator of a row comes before it, and gathered column-major in that order. The front
  index is the longest dominance chain ending at a row, ``rank[i] = 1 + max(rank[j] : j
  dominates i)`` (0 when none), which only depends on earlier rows. The order is cut into
  tiles of ``RANK_TILE`` rows, processed one after the other: the bound kernel compares the
  tile (one thread per row) with all earlier rows, whose ranks are final, split over a wave
  of blocks that stage shared-memory tiles of earlier rows with coalesced loads and combine
  with an atomic max; the chain kernel (one block) then resolves the dominators inside the
  tile in order, one barrier per row. About n^2 / 2 pair tests of O(m) each, whatever the
  number of fronts, in n / RANK_TILE sequential steps of two launches; O(n m) memory and no
  host round trip. Equal rows never dominate each other, so their order does not matter.
* ``topsis``: fused two-pass: a grid-stride reduction kernel for the column min, max and sum
  of squares (block partials combined on the host, m values), then one kernel computing
  scaled values, both distances and the closeness per row. O(n m), reads the matrix twice.
* ``top_k``: on the host (``argpartition`` + sort of the k).

At most ``MAX_M`` (16) criteria on the GPU; NaN/inf are rejected by a device scan before
any kernel runs, with the same message as the host checks.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import _shared
from ._validate import (
    check_cap,
    check_costs,
    check_k,
    check_out,
    check_scores,
    check_topsis_inputs,
)

__all__ = [
    "pareto_front",
    "pareto_rank",
    "domination_count",
    "dominated_count",
    "topsis",
    "top_k",
    "pareto_front_device",
    "pareto_rank_device",
    "domination_count_device",
    "topsis_device",
    "is_available",
    "smaa_topsis",
]

TILE = 128  # threads per block and rows per shared-memory tile
MAX_M = 16

# pareto_rank's sorted sweep, sized for an H100/H200 (132 SMs, 2048 threads and 228 KiB of
# shared memory per SM, 48 KiB of static shared memory per block):
# - RANK_TILE rows per tile, one thread per tile row in both kernels. The sweep runs n / T
#   tiles one after the other, two launches each, so T sets the sequential part: 512 makes
#   the launches few (n = 1e6: ~2,000 tiles) while the chain kernel, one barrier per tile
#   row, stays ~20-40 us per tile, and four 512-thread blocks fill an SM.
# - RANK_STAGE earlier rows staged per shared-memory tile: 256 rows x MAX_M columns of
#   float64 is 32 KiB, under the 48 KiB static limit, and four resident blocks use 132 KiB of
#   the SM's 228 KiB, so shared memory does not cap occupancy.
# - RANK_MIN_CHUNK: a bound block compares its tile with at least this many earlier rows, so
#   that early tiles do not launch hundreds of blocks for a few comparisons each.
# - RANK_BLOCKS: blocks per bound launch; None means one wave of resident blocks of the
#   current device (SMs x 2048 / T): every block gets an equal chunk, so a single wave ends
#   together. Tests set it (and RANK_TILE) small to reach every code path at simulator sizes.
RANK_TILE = 512
RANK_STAGE = 256
RANK_MIN_CHUNK = 128
RANK_BLOCKS = None


def is_available():
    """True when kernels can run: a CUDA device is visible, or the simulator is enabled."""
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - any driver/toolkit failure means "not available"
        return False


# ---------------------------------------------------------------------------------------
# Kernel sources (plain Python, compiled lazily by _kernels())
# ---------------------------------------------------------------------------------------


# Bound by _bind() on first use, so importing this module imports no numba.cuda. The
# kernels below refer to them as globals (the CUDA simulator swaps the global ``cuda``).
cuda = None
_dominates_t = None
_row_less_d = None
_dominates_own_d = None


def count_kernel(ct, n, m, cap, reverse, alive, out):
    """out[i] = min(cap, #rows j (alive) dominating i) (reverse: dominated by i)."""
    tile = cuda.shared.array((MAX_M, TILE), dtype=ct.dtype)
    tile_alive = cuda.shared.array(TILE, dtype=np.int8)
    own = cuda.local.array(MAX_M, dtype=ct.dtype)
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
                    hit = _dominates_t(tile, t, ct, i, m)
                if hit:
                    cnt += 1
                    if cnt >= cap:
                        done = True
                        break
    if valid:
        out[i] = cnt

# -- pareto_rank: sorted sweep --------------------------------------------------------------
#
# Rows are first put in lexicographic order (ties by row index): a dominator is <= in every
# column and < in one, so it is lexicographically smaller and always comes earlier; equal
# rows do not dominate each other, so their relative order does not matter. The front index
# is then rank[i] = 1 + max(rank[j] : j dominates i) (0 when nothing dominates i), the
# longest dominance chain ending at i, and it only depends on earlier rows. The sorted order
# is cut into tiles of RANK_TILE rows: the bound kernel takes every earlier tile into account
# in one wide launch, the chain kernel resolves the dominators inside the tile in order.


def _row_less(x, a, b, m):
    """Row ``a`` of ``x`` sorts before row ``b``: lexicographic, ties by the lower index."""
    for k in range(m):
        u = x[a, k]
        v = x[b, k]
        if u < v:
            return True
        if u > v:
            return False
    return a < b


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


def iota_kernel(a):
    """a[i] = i: the identity permutation the merge sort starts from."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = i


def fill_kernel(a, v):
    """a[:] = v on the device (no host buffer to copy from)."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = v


def merge_pass_kernel(x, n, m, width, src, dst):
    """One pass of a bottom-up merge sort of row indices: runs of ``width`` sorted rows are
    merged pairwise into runs of ``2 * width``. Each thread places one element: its offset in
    its own run plus a binary search for how many rows of the other run sort before it
    (ties by index make the order strict, so both runs agree on every position)."""
    p = cuda.grid(1)
    if p < n:
        i = src[p]
        start = (p // (2 * width)) * (2 * width)
        mid = min(start + width, n)
        end = min(start + 2 * width, n)
        if p < mid:
            lo = mid
            hi = end
        else:
            lo = start
            hi = mid
        first = lo
        while lo < hi:
            h = (lo + hi) // 2
            if _row_less_d(x, src[h], i, m):
                lo = h + 1
            else:
                hi = h
        before = lo - first  # rows of the other run that sort before row i
        if p < mid:
            dst[p + before] = i
        else:
            dst[start + (p - mid) + before] = i


def gather_kernel(x, order, cs):
    """cs[k, p] = x[order[p], k]: the rows in sorted order, column-major (coalesced later)."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        r = order[p]
        for k in range(x.shape[1]):
            cs[k, p] = x[r, k]


def scatter_i32_kernel(order, src, dst):
    """dst[order[p]] = src[p]: ranks back to the caller's row order."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        dst[order[p]] = src[p]


def rank_bound_kernel(cs, rank_s, n, m, p0, chunk, lb):
    """For the tile starting at sorted position ``p0`` (one thread per tile row, blockDim
    rows): lb[p] = max(lb[p], 1 + max rank of the rows dominating row p among the earlier
    rows [blockIdx * chunk, (blockIdx + 1) * chunk) cut at p0, whose ranks are final).

    Each block stages RANK_STAGE earlier rows at a time in shared memory with coalesced
    loads of the column-major ``cs``; every thread then reads them as broadcasts. A row
    whose rank cannot raise the bound is skipped before the dominance test."""
    stage = cuda.shared.array((MAX_M, RANK_STAGE), dtype=cs.dtype)
    stage_rank = cuda.shared.array(RANK_STAGE, dtype=np.int32)
    own = cuda.local.array(MAX_M, dtype=cs.dtype)
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
                if r1 > best and _dominates_own_d(stage, u, own, m):
                    best = r1
    if valid and best > 0:
        cuda.atomic.max(lb, p, best)


def rank_chain_kernel(cs, n, m, p0, lb, rank_s):
    """Final ranks of the tile starting at sorted position ``p0`` (one block, one thread per
    tile row): rank = max(lb, 1 + rank of each dominator inside the tile).

    Dominators come earlier in the order, so the rows are resolved in order: at step r,
    thread r (whose rank is final, having received every earlier row's push) publishes its
    row and rank in shared memory and every later thread it dominates raises its own. Two
    broadcast slots used alternately make one barrier per step enough (a slot is rewritten
    two steps later, after every thread has passed the barrier in between)."""
    bc = cuda.shared.array((MAX_M, 2), dtype=cs.dtype)
    bc_rank = cuda.shared.array(2, dtype=np.int32)
    own = cuda.local.array(MAX_M, dtype=cs.dtype)
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
            if r1 > cand and _dominates_own_d(bc, s, own, m):
                cand = r1
    if valid:
        rank_s[p] = cand

def transpose_kernel(src, dst):
    """dst[k, i] = src[i, k] for any strides of src (C, F or views)."""
    i = cuda.grid(1)
    if i < src.shape[0]:
        for k in range(src.shape[1]):
            dst[k, i] = src[i, k]

def nonfinite_kernel(x, first):
    """first[0] = smallest flat index (row-major) of a NaN/inf entry."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        for k in range(x.shape[1]):
            v = x[i, k]
            if v != v or v == math.inf or v == -math.inf:
                cuda.atomic.min(first, 0, i * x.shape[1] + k)
                break

def stats_kernel(x, part):
    """Per-block partial column min, max and sum of squares: part[b, 0|1|2, k]."""
    smin = cuda.shared.array((MAX_M, TILE), dtype=np.float64)
    smax = cuda.shared.array((MAX_M, TILE), dtype=np.float64)
    sss = cuda.shared.array((MAX_M, TILE), dtype=np.float64)
    tx = cuda.threadIdx.x
    n = x.shape[0]
    m = x.shape[1]
    for k in range(m):
        smin[k, tx] = math.inf
        smax[k, tx] = -math.inf
        sss[k, tx] = 0.0
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        for k in range(m):
            v = np.float64(x[i, k])
            smin[k, tx] = min(smin[k, tx], v)
            smax[k, tx] = max(smax[k, tx], v)
            sss[k, tx] += v * v
        i += stride
    cuda.syncthreads()
    s = TILE // 2
    while s > 0:
        if tx < s:
            for k in range(m):
                smin[k, tx] = min(smin[k, tx], smin[k, tx + s])
                smax[k, tx] = max(smax[k, tx], smax[k, tx + s])
                sss[k, tx] += sss[k, tx + s]
        cuda.syncthreads()
        s //= 2
    if tx == 0:
        b = cuda.blockIdx.x
        for k in range(m):
            part[b, 0, k] = smin[k, 0]
            part[b, 1, k] = smax[k, 0]
            part[b, 2, k] = sss[k, 0]

def closeness_kernel(x, scale, offset, ideal, anti, out):
    """Scaled values, weighted distances to ideal and anti-ideal, closeness: one pass."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        dp = 0.0
        dm = 0.0
        for k in range(x.shape[1]):
            v = (np.float64(x[i, k]) - offset[k]) * scale[k]
            a = v - ideal[k]
            b = v - anti[k]
            dp += a * a
            dm += b * b
        dp = math.sqrt(dp)
        dm = math.sqrt(dm)
        tot = dp + dm
        out[i] = dm / tot if tot > 0 else 0.5


_KERNELS = {
    "count": count_kernel,
    "iota": iota_kernel,
    "fill": fill_kernel,
    "merge_pass": merge_pass_kernel,
    "gather": gather_kernel,
    "scatter_i32": scatter_i32_kernel,
    "rank_bound": rank_bound_kernel,
    "rank_chain": rank_chain_kernel,
    "transpose": transpose_kernel,
    "nonfinite": nonfinite_kernel,
    "stats": stats_kernel,
    "closeness": closeness_kernel,
}


def ptx_signatures():
    """(kernel name, Numba signature string) pairs used by the PTX compile test."""
    out = []
    for f in ("float32", "float64"):
        out += [
            ("count", f"void({f}[:, :], int64, int64, int64, boolean, int8[:], int64[:])"),
            ("merge_pass", f"void({f}[:, :], int64, int64, int64, int64[:], int64[:])"),
            ("gather", f"void({f}[:, :], int64[:], {f}[:, :])"),
            ("rank_bound",
             f"void({f}[:, :], int32[:], int64, int64, int64, int64, int32[:])"),
            ("rank_chain", f"void({f}[:, :], int64, int64, int64, int32[:], int32[:])"),
            ("transpose", f"void({f}[:, :], {f}[:, :])"),
            ("nonfinite", f"void({f}[:, :], int64[:])"),
            ("stats", f"void({f}[:, :], float64[:, :, :])"),
            (
                "closeness",
                f"void({f}[:, :], float64[:], float64[:], float64[:], float64[:], float64[:])",
            ),
        ]
    out += [
        ("iota", "void(int64[:])"),
        ("fill", "void(int32[:], int32)"),
        ("fill", "void(int8[:], int8)"),
        ("scatter_i32", "void(int64[:], int32[:], int32[:])"),
    ]
    return out


def _bind():
    """Import numba.cuda and compile the scalar helpers as inlined device functions."""
    global cuda, _dominates_t, _row_less_d, _dominates_own_d
    if cuda is None:
        from numba import cuda as _cuda

        _dominates_t = _cuda.jit(device=True, inline=True)(_shared.dominates_t)
        _row_less_d = _cuda.jit(device=True, inline=True)(_row_less)
        _dominates_own_d = _cuda.jit(device=True, inline=True)(_dominates_own)
        cuda = _cuda
    return cuda


def kernel_functions():
    """The kernel Python functions by name (globals bound), e.g. for ``compile_ptx``."""
    _bind()
    return dict(_KERNELS)


@functools.lru_cache(maxsize=1)
def _kernels():
    c = _bind()
    return c, {name: c.jit(fn) for name, fn in _KERNELS.items()}


# ---------------------------------------------------------------------------------------
# Host side: inputs, validation, launches
# ---------------------------------------------------------------------------------------


def _blocks(n, tpb=TILE):
    return max(1, (n + tpb - 1) // tpb)


def _to_device_matrix(x, *, name):
    """A 2-D float device array for ``x`` (no copy for device inputs), validated: NaN/inf
    rejected naming row and column, before any compute kernel runs."""
    cuda, k = _kernels()
    if hasattr(x, "copy_to_host"):  # a Numba device array (real or simulated)
        d = x
    elif hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
        d = cuda.as_cuda_array(x)  # CuPy array, cuDF column: zero copy
    else:
        return cuda.to_device(check_costs(x, name=name))
    if d.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, m); got {d.ndim} dimension(s)")
    if d.dtype not in (np.float32, np.float64):
        raise ValueError(f"{name} must be float32 or float64; got dtype {d.dtype}")
    _check_finite_device(d, name)
    return d


def _check_finite_device(d, name):
    cuda, k = _kernels()
    n, m = d.shape
    if n == 0 or m == 0:
        return
    first = cuda.to_device(np.array([n * m], dtype=np.int64))
    k["nonfinite"][_blocks(n), TILE](d, first)
    f = int(first.copy_to_host()[0])
    if f < n * m:
        r, c = divmod(f, m)
        v = float(d[r : r + 1, c : c + 1].copy_to_host()[0, 0])
        raise ValueError(f"{name} must be finite; row {r}, column {c} is {v!r}")


def _column_major(d):
    cuda, k = _kernels()
    n, m = d.shape
    if m > MAX_M:
        raise ValueError(f"costs may have at most {MAX_M} columns on the GPU; got {m}")
    ct = cuda.device_array((m, n), dtype=d.dtype)
    if n:
        k["transpose"][_blocks(n), TILE](d, ct)
    return ct


def _count_device(costs, cap, reverse):
    cuda, k = _kernels()
    d = _to_device_matrix(costs, name="costs")
    n, m = d.shape
    out = cuda.device_array(n, dtype=np.int64)
    if n == 0:
        return out
    ct = _column_major(d)
    alive = cuda.device_array(n, dtype=np.int8)
    k["fill"][_blocks(n), TILE](alive, np.int8(1))
    c = n if cap is None else cap
    k["count"][_blocks(n), TILE](ct, n, m, c, reverse, alive, out)
    return out


def domination_count_device(costs, *, cap=None):
    """:func:`domination_count` returning a device array."""
    return _count_device(costs, check_cap(cap), False)


def domination_count(costs, *, cap=None):
    """How many rows dominate each row (tiled pairwise kernel; ``cap`` stops early)."""
    return domination_count_device(costs, cap=cap).copy_to_host()


def dominated_count(costs, *, cap=None):
    """How many rows each row dominates (tiled pairwise kernel, reversed test)."""
    return _count_device(costs, check_cap(cap), True).copy_to_host()


def pareto_front_device(costs):
    """:func:`pareto_front` on the device: the int64 device array ``min(count, 1)``, which
    is 0 exactly on the front (no host round trip)."""
    return _count_device(costs, 1, False)


def pareto_front(costs):
    """Non-dominated rows: the count kernel with cap=1 (a block stops at the first
    dominator of all its rows)."""
    return pareto_front_device(costs).copy_to_host() == 0


def _resident_blocks(threads):
    """Blocks of ``threads`` threads that one wave of the current device holds (SMs x
    2048 / threads); 132 SMs (an H100 SXM) where the device cannot say (the simulator)."""
    if RANK_BLOCKS is not None:
        return int(RANK_BLOCKS)
    return max(1, _sm_count() * max(1, 2048 // threads))


@functools.lru_cache(maxsize=1)
def _sm_count():
    cuda, _ = _kernels()
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # noqa: BLE001 - the simulator's device has no attributes
        return 132


def _lex_order(d):
    """Row indices of the device matrix ``d`` in lexicographic order, ties by index (int64
    device array): a bottom-up merge sort on the device, ceil(log2 n) passes of one
    binary-searching thread per row, O(n log^2 n m) comparisons."""
    cuda, k = _kernels()
    n, m = d.shape
    src = cuda.device_array(n, dtype=np.int64)
    dst = cuda.device_array(n, dtype=np.int64)
    k["iota"][_blocks(n), TILE](src)
    width = 1
    while width < n:
        k["merge_pass"][_blocks(n), TILE](d, n, m, width, src, dst)
        src, dst = dst, src
        width *= 2
    return src


def pareto_rank_device(costs):
    """:func:`pareto_rank` returning a device int32 array (no host round trip).

    Sorted sweep: lexicographic order on the device, then per tile of ``RANK_TILE`` sorted
    rows one bound launch over all earlier rows and one chain launch inside the tile; see
    the module docstring. O(n^2 m / 2) comparisons at most, n / RANK_TILE sequential steps,
    O(n m) memory.
    """
    cuda, k = _kernels()
    d = _to_device_matrix(costs, name="costs")
    n, m = d.shape
    if m > MAX_M:
        raise ValueError(f"costs may have at most {MAX_M} columns on the GPU; got {m}")
    rank = cuda.device_array(n, dtype=np.int32)
    if n == 0:
        return rank
    order = _lex_order(d)
    cs = cuda.device_array((m, n), dtype=d.dtype)
    k["gather"][_blocks(n), TILE](d, order, cs)
    rank_s = cuda.device_array(n, dtype=np.int32)
    lb = cuda.device_array(n, dtype=np.int32)
    k["fill"][_blocks(n), TILE](lb, np.int32(0))
    tile = int(RANK_TILE)
    for p0 in range(0, n, tile):
        tn = min(tile, n - p0)
        if p0:
            nblocks = max(1, min(_resident_blocks(tn), -(-p0 // RANK_MIN_CHUNK)))
            chunk = -(-p0 // nblocks)
            k["rank_bound"][nblocks, tn](cs, rank_s, n, m, p0, chunk, lb)
        k["rank_chain"][1, tn](cs, n, m, p0, lb, rank_s)
    k["scatter_i32"][_blocks(n), TILE](order, rank_s, rank)
    return rank


def pareto_rank(costs):
    """Non-dominated sorting by a sorted sweep on the device (front 0 first, int32)."""
    return pareto_rank_device(costs).copy_to_host()


def topsis_device(matrix, weights, benefit, *, norm="vector", out=None):
    """:func:`topsis` returning a device float64 array: ``out`` when given (a C-contiguous
    float64 device array of shape (n,), e.g. CuPy's, that must not overlap ``matrix``)."""
    cuda, k = _kernels()
    m_cols = _shape_of(matrix)[1]
    # weights/benefit/norm checks on the host with a placeholder 1-row matrix
    _, w, b = check_topsis_inputs(np.zeros((1, m_cols)), weights, benefit, norm=norm)
    d = _to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    if m > MAX_M:
        raise ValueError(f"matrix may have at most {MAX_M} columns on the GPU; got {m}")
    out = cuda.device_array(n, dtype=np.float64) if out is None else _device_out(out, n)
    if n == 0:
        return out
    nblocks = min(_blocks(n), 1024)
    part = cuda.device_array((nblocks, 3, m), dtype=np.float64)
    k["stats"][nblocks, TILE](d, part)
    p = part.copy_to_host()
    lo, hi, ss = p[:, 0].min(axis=0), p[:, 1].max(axis=0), p[:, 2].sum(axis=0)
    from .cpu import _topsis_params  # host arithmetic on m values only

    scale, ideal, anti, offset = _topsis_params(lo, hi, ss, w, b, norm)
    k["closeness"][_blocks(n), TILE](
        d,
        cuda.to_device(scale),
        cuda.to_device(offset),
        cuda.to_device(ideal),
        cuda.to_device(anti),
        out,
    )
    return out


def topsis(matrix, weights, benefit, *, norm="vector", out=None):
    """TOPSIS closeness: reduction kernel then a fused distance/closeness kernel; the
    scores are copied into ``out`` (a host array, as in the reference) when given."""
    if out is not None:
        check_out(out, _shape_of(matrix)[0], matrix)
    dev = topsis_device(matrix, weights, benefit, norm=norm)
    return dev.copy_to_host() if out is None else dev.copy_to_host(out)


def _device_out(out, n):
    """``out`` as a Numba device array after checking it can take n float64 scores."""
    cuda, _ = _kernels()
    if hasattr(out, "copy_to_host"):  # a Numba device array (real or simulated)
        o = out
    elif hasattr(out, "__cuda_array_interface__") and not isinstance(out, np.ndarray):
        o = cuda.as_cuda_array(out)  # CuPy array: zero copy
    else:
        raise ValueError(f"out must be a device array; got {type(out).__name__}")
    if o.dtype != np.float64 or o.shape != (n,) or not o.is_c_contiguous():
        raise ValueError(f"out must be a C-contiguous float64 device array of shape ({n},); "
                         f"got {o.dtype} with shape {o.shape}")
    return o


def top_k(scores, k):
    """Indices of the k largest scores, best first, ties by lower index (on the host)."""
    if hasattr(scores, "copy_to_host"):
        scores = scores.copy_to_host()
    elif hasattr(scores, "get"):  # CuPy
        scores = scores.get()
    s = check_scores(scores)
    check_k(k)
    from .cpu import top_k as host_top_k

    return host_top_k(s, k)


def _shape_of(x):
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.asarray(x).shape
    if len(shape) != 2:
        raise ValueError(f"matrix must be a 2-D array of shape (n, m); got {len(shape)} dimension(s)")
    return shape


# ---------------------------------------------------------------------------------------
# SMAA over TOPSIS weights (robust rankings)
# ---------------------------------------------------------------------------------------
#
# The weight-independent part (normalization and gaps of the full table, candidates put in
# tie-break order; see kernels/_smaa.py) is O(n m). A host matrix is prepared on the host
# with kernels/_smaa.py's NumPy expressions. A device matrix never crosses to the host: the
# full table's column min, max and sum of squares come from the stats kernel (m values each),
# the candidate rows are gathered on the device (smaa_gather, canonical float64), put in
# tie-break order by the device merge sort and turned into gaps by smaa_gaps with the same
# IEEE operations as NumPy. Only m-vectors and the c candidate positions come back. The
# O(S c m + S c^2) part runs on the device, in batches of samples:
# smaa_score: one thread per (sample, candidate) score; smaa_rank: one thread per (sample,
# candidate) counting the candidates that beat it, tiles of scores staged in shared memory
# (candidate position is the tie-break, so "beats" is q_j < q_i or q_j == q_i and j < i);
# smaa_accum: one thread per candidate adding its batch's ranks in sample order (no atomics,
# deterministic).

SMAA_BATCH_BYTES = 256 * 2**20  # device scratch for one batch of scores and ranks


def smaa_score_kernel(p, nn, w, s0, q):
    """q[b, i] = D+ / D- of candidate i under weight sample s0 + b (kernels/_smaa.py)."""
    i = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    b = cuda.blockIdx.y
    s = s0 + b
    if i < p.shape[0] and b < q.shape[0] and s < w.shape[0]:
        dp = 0.0
        dm = 0.0
        for j in range(p.shape[1]):
            a = w[s, j] * p[i, j]
            dp += a * a
            bb = w[s, j] * nn[i, j]
            dm += bb * bb
        if dm > 0:
            q[b, i] = dp / dm
        elif dp == 0:
            q[b, i] = 1.0
        else:
            q[b, i] = math.inf


def smaa_rank_kernel(q, nb, rank):
    """rank[b, i] = 1 + #candidates j beating i under sample b (q lower, then lower j)."""
    tile = cuda.shared.array(TILE, dtype=np.float64)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + tx
    b = cuda.blockIdx.y
    c = q.shape[1]
    valid = i < c and b < nb
    own = 0.0
    if valid:
        own = q[b, i]
    cnt = 0
    for base in range(0, c, TILE):
        j = base + tx
        if j < c and b < nb:
            tile[tx] = q[b, j]
        cuda.syncthreads()
        if valid:
            lim = min(TILE, c - base)
            for t in range(lim):
                v = tile[t]
                if v < own or (v == own and base + t < i):
                    cnt += 1
        cuda.syncthreads()
    if valid:
        rank[b, i] = cnt + 1


def smaa_accum_kernel(rank, w, s0, nb, k, top1, topk, rsum, rsq, cw):
    """Add the ranks of samples s0 .. s0 + nb - 1 into candidate i's accumulators."""
    i = cuda.grid(1)
    if i < rank.shape[1]:
        t1 = 0
        tk = 0
        rs = 0
        r2 = 0
        for b in range(nb):
            r = np.int64(rank[b, i])
            rs += r
            r2 += r * r
            if r <= k:
                tk += 1
            if r == 1:
                t1 += 1
                for j in range(w.shape[1]):
                    cw[i, j] += w[s0 + b, j]
        top1[i] += t1
        topk[i] += tk
        rsum[i] += rs
        rsq[i] += r2


def smaa_gather_kernel(x, rows, neg, g):
    """g[t, j] = canonical float64 cost of row rows[t]: x[rows[t], j], negated where neg[j]
    (a benefit column), as kernels/_smaa.py's ``where(benefit, -x, x)``."""
    t = cuda.grid(1)
    if t < rows.shape[0]:
        r = rows[t]
        for j in range(x.shape[1]):
            v = np.float64(x[r, j])
            g[t, j] = -v if neg[j] != 0 else v


def smaa_gaps_kernel(g, order, off, div, rmin, rmax, p, nn):
    """Gaps of the candidates in tie-break order: r = (g - off) / div (0 where div == 0),
    p = r - rmin, nn = rmax - r; the operations of kernels/_smaa.py's ``gaps`` (``off`` is 0
    for the vector norm, where ``div`` is the column norm), so the values are the host's."""
    t = cuda.grid(1)
    if t < order.shape[0]:
        i = order[t]
        for j in range(g.shape[1]):
            r = 0.0
            if div[j] > 0:
                r = (g[i, j] - off[j]) / div[j]
            p[t, j] = r - rmin[j]
            nn[t, j] = rmax[j] - r


_KERNELS.update({
    "smaa_gather": smaa_gather_kernel,
    "smaa_gaps": smaa_gaps_kernel,
    "smaa_score": smaa_score_kernel,
    "smaa_rank": smaa_rank_kernel,
    "smaa_accum": smaa_accum_kernel,
})


def smaa_ptx_signatures():
    """(kernel name, signature) pairs of the SMAA kernels for the PTX compile test."""
    f2 = "float64[:, :]"
    f1 = "float64[:]"
    gather = [("smaa_gather", f"void({f}[:, :], int64[:], int8[:], {f2})")
              for f in ("float32", "float64")]
    return gather + [
        ("merge_pass", f"void({f2}, int64, int64, int64, int64[:], int64[:])"),
        ("smaa_gaps", f"void({f2}, int64[:], {f1}, {f1}, {f1}, {f1}, {f2}, {f2})"),
        ("smaa_score", f"void({f2}, {f2}, {f2}, int64, {f2})"),
        ("smaa_rank", f"void({f2}, int64, int32[:, :])"),
        ("smaa_accum", ("void(int32[:, :], float64[:, :], int64, int64, int64, int64[:], "
                        "int64[:], int64[:], int64[:], float64[:, :])")),
    ]


def _host_array(x):
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "get") and not isinstance(x, np.ndarray):  # CuPy
        return x.get()
    if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
        cuda, _ = _kernels()
        return cuda.as_cuda_array(x).copy_to_host()
    return x


def _is_device(x):
    """True for a Numba device array or a foreign ``__cuda_array_interface__`` object."""
    return hasattr(x, "copy_to_host") or (
        hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray))




def _prepare_device(matrix, weights_samples, benefit, *, k, norm, candidates):
    """kernels/_smaa.py's ``prepare`` for a device matrix, without moving it to the host.

    Returns (P, N device arrays of the candidates in tie-break order, weights, perm, k).
    The column min and max are exact whatever the reduction order, and the normalized
    column min and max follow from them (division by a positive number and subtraction are
    monotone in floating point). The vector norm's sum of squares is reduced on the device
    (block partials in a fixed order), so for non-integer data it may differ from NumPy's in
    the last bits; every property the pruning relies on is monotonicity, which holds for any
    norm.
    """
    from ._smaa import check_candidates, check_smaa_inputs

    cuda, kern = _kernels()
    d = _to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    if m > MAX_M:
        raise ValueError(f"matrix may have at most {MAX_M} columns on the GPU; got {m}")
    # weights, benefit, norm and k checked on a 0-row stand-in: the rows were checked above
    _, w, _, k = check_smaa_inputs(np.zeros((0, m)), _host_array(weights_samples),
                                   _host_array(benefit), k=k, norm=norm, candidates=None)
    b = np.asarray(_host_array(benefit), dtype=bool).reshape(-1)
    cand = check_candidates(_host_array(candidates), n)
    c = cand.shape[0]
    empty = cuda.device_array((c, m), dtype=np.float64)
    if c == 0:
        return empty, empty, w, np.zeros(0, np.int64), k
    nblocks = min(_blocks(n), 1024)
    part = cuda.device_array((nblocks, 3, m), dtype=np.float64)
    kern["stats"][nblocks, TILE](d, part)
    st = part.copy_to_host()  # 3 m values per block
    lo_x, hi_x, ss = st[:, 0].min(axis=0), st[:, 1].max(axis=0), st[:, 2].sum(axis=0)
    lo, hi = np.where(b, -hi_x, lo_x), np.where(b, -lo_x, hi_x)  # canonical costs
    if norm == "vector":
        off, div = np.zeros(m), np.sqrt(ss)
    else:
        off, div = lo, hi - lo
    rmin = np.divide(lo - off, div, out=np.zeros(m), where=div > 0)
    rmax = np.divide(hi - off, div, out=np.zeros(m), where=div > 0)
    # Gathered in row-id order, so the merge sort's tie-break by position is by row id.
    pos = np.argsort(cand, kind="stable")
    g = cuda.device_array((c, m), dtype=np.float64)
    kern["smaa_gather"][_blocks(c), TILE](d, cuda.to_device(cand[pos]),
                                          cuda.to_device(b.astype(np.int8)), g)
    order = _lex_order(g)
    dp = cuda.device_array((c, m), dtype=np.float64)
    dn = cuda.device_array((c, m), dtype=np.float64)
    kern["smaa_gaps"][_blocks(c), TILE](g, order, cuda.to_device(off), cuda.to_device(div),
                                        cuda.to_device(rmin), cuda.to_device(rmax), dp, dn)
    perm = pos[order.copy_to_host()]  # c positions: what unpermute needs on the host
    return dp, dn, w, perm.astype(np.int64), k


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None,
                batch_bytes=None):
    """SMAA acceptability counts of TOPSIS over weight samples (contract:
    :func:`gpurank.kernels.reference.smaa_topsis`); NumPy, CuPy or Numba device inputs,
    NumPy outputs. ``batch_bytes`` bounds the device scratch per batch of samples.

    A host matrix is prepared on the host (bit-identical to the other implementations); a
    device matrix stays on the device (see :func:`_prepare_device`).
    """
    from ._smaa import prepare, unpermute

    cuda, kern = _kernels()
    if _is_device(matrix):
        dp, dn, w, perm, k = _prepare_device(matrix, weights_samples, benefit, k=k, norm=norm,
                                             candidates=candidates)
        c, m = dp.shape
    else:
        p, nn, w, perm, k = prepare(matrix, _host_array(weights_samples),
                                    _host_array(benefit), k=k, norm=norm,
                                    candidates=_host_array(candidates))
        c, m = p.shape
        if m > MAX_M:
            raise ValueError(f"matrix may have at most {MAX_M} columns on the GPU; got {m}")
        dp, dn = (cuda.to_device(p), cuda.to_device(nn)) if c else (None, None)
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    s_total = w.shape[0]
    dw = cuda.to_device(w)
    top1 = cuda.to_device(np.zeros(c, np.int64))
    topk = cuda.to_device(np.zeros(c, np.int64))
    rsum = cuda.to_device(np.zeros(c, np.int64))
    rsq = cuda.to_device(np.zeros(c, np.int64))
    cw = cuda.to_device(np.zeros((c, m), np.float64))
    budget = SMAA_BATCH_BYTES if batch_bytes is None else int(batch_bytes)
    batch = int(max(1, min(s_total, 65535, budget // (12 * c))))
    q = cuda.device_array((batch, c), dtype=np.float64)
    rank = cuda.device_array((batch, c), dtype=np.int32)
    for s0 in range(0, s_total, batch):
        nb = min(batch, s_total - s0)
        grid = (_blocks(c), nb)
        kern["smaa_score"][grid, TILE](dp, dn, dw, s0, q)
        kern["smaa_rank"][grid, TILE](q, nb, rank)
        kern["smaa_accum"][_blocks(c), TILE](rank, dw, s0, nb, k, top1, topk, rsum, rsq, cw)
    out = (top1.copy_to_host(), topk.copy_to_host(), rsum.copy_to_host(), rsq.copy_to_host(),
           cw.copy_to_host())
    return unpermute(perm, *out)
