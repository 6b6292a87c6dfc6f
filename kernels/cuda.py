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
* ``pareto_rank``: repeated front peeling with the same tiled kernel restricted to the rows
  not ranked yet; one pass per front, O(R n^2 m / p).
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
from ._validate import check_cap, check_costs, check_k, check_scores, check_topsis_inputs

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

def peel_kernel(ct, n, m, rank, r, flag):
    """Rows not ranked yet (rank < 0) that no other unranked row dominates get flag 1."""
    tile = cuda.shared.array((MAX_M, TILE), dtype=ct.dtype)
    tile_alive = cuda.shared.array(TILE, dtype=np.int8)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * TILE + tx
    valid = i < n
    done = True
    if valid:
        done = rank[i] >= 0
    dominated = False
    for base in range(0, n, TILE):
        if cuda.syncthreads_and(1 if done else 0):
            break
        j = base + tx
        if j < n:
            for k in range(m):
                tile[k, tx] = ct[k, j]
            tile_alive[tx] = 1 if rank[j] < 0 else 0
        cuda.syncthreads()
        if not done:
            lim = min(TILE, n - base)
            for t in range(lim):
                if tile_alive[t] != 0 and _dominates_t(tile, t, ct, i, m):
                    dominated = True
                    done = True
                    break
    if valid:
        flag[i] = 1 if (rank[i] < 0 and not dominated) else 0

def assign_kernel(rank, flag, r, counter):
    i = cuda.grid(1)
    if i < rank.shape[0] and flag[i] != 0:
        rank[i] = r
        cuda.atomic.add(counter, 0, 1)

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
    "peel": peel_kernel,
    "assign": assign_kernel,
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
            ("peel", f"void({f}[:, :], int64, int64, int32[:], int32, int8[:])"),
            ("transpose", f"void({f}[:, :], {f}[:, :])"),
            ("nonfinite", f"void({f}[:, :], int64[:])"),
            ("stats", f"void({f}[:, :], float64[:, :, :])"),
            (
                "closeness",
                f"void({f}[:, :], float64[:], float64[:], float64[:], float64[:], float64[:])",
            ),
        ]
    out.append(("assign", "void(int32[:], int8[:], int32, int64[:])"))
    return out


def _bind():
    """Import numba.cuda and compile the shared helper as an inlined device function."""
    global cuda, _dominates_t
    if cuda is None:
        from numba import cuda as _cuda

        _dominates_t = _cuda.jit(device=True, inline=True)(_shared.dominates_t)
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
    alive = cuda.to_device(np.ones(n, dtype=np.int8))
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


def pareto_rank_device(costs):
    """:func:`pareto_rank` returning a device int32 array."""
    cuda, k = _kernels()
    d = _to_device_matrix(costs, name="costs")
    n, m = d.shape
    rank = cuda.to_device(np.full(n, -1, dtype=np.int32))
    if n == 0:
        return rank
    ct = _column_major(d)
    flag = cuda.device_array(n, dtype=np.int8)
    counter = cuda.to_device(np.zeros(1, dtype=np.int64))
    done = 0
    r = 0
    while done < n:
        k["peel"][_blocks(n), TILE](ct, n, m, rank, np.int32(r), flag)
        k["assign"][_blocks(n), TILE](rank, flag, np.int32(r), counter)
        done = int(counter.copy_to_host()[0])
        r += 1
    return rank


def pareto_rank(costs):
    """Non-dominated sorting by repeated front peeling on the device."""
    return pareto_rank_device(costs).copy_to_host()


def topsis_device(matrix, weights, benefit, *, norm="vector"):
    """:func:`topsis` returning a device float64 array."""
    cuda, k = _kernels()
    m_cols = _shape_of(matrix)[1]
    # weights/benefit/norm checks on the host with a placeholder 1-row matrix
    _, w, b = check_topsis_inputs(np.zeros((1, m_cols)), weights, benefit, norm=norm)
    d = _to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    if m > MAX_M:
        raise ValueError(f"matrix may have at most {MAX_M} columns on the GPU; got {m}")
    out = cuda.device_array(n, dtype=np.float64)
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


def topsis(matrix, weights, benefit, *, norm="vector"):
    """TOPSIS closeness: reduction kernel then a fused distance/closeness kernel."""
    return topsis_device(matrix, weights, benefit, norm=norm).copy_to_host()


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
# tie-break order; see kernels/_smaa.py) runs on the host, O(n m): a device matrix crosses
# to the host once. The O(S c m + S c^2) part runs on the device, in batches of samples:
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


_KERNELS.update({
    "smaa_score": smaa_score_kernel,
    "smaa_rank": smaa_rank_kernel,
    "smaa_accum": smaa_accum_kernel,
})


def smaa_ptx_signatures():
    """(kernel name, signature) pairs of the SMAA kernels for the PTX compile test."""
    f2 = "float64[:, :]"
    return [
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


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None,
                batch_bytes=None):
    """SMAA acceptability counts of TOPSIS over weight samples (contract:
    :func:`gpurank.kernels.reference.smaa_topsis`); NumPy, CuPy or Numba device inputs,
    NumPy outputs. ``batch_bytes`` bounds the device scratch per batch of samples."""
    from ._smaa import prepare, unpermute

    p, nn, w, perm, k = prepare(_host_array(matrix), _host_array(weights_samples),
                                _host_array(benefit), k=k, norm=norm,
                                candidates=_host_array(candidates))
    c, m = p.shape
    if m > MAX_M:
        raise ValueError(f"matrix may have at most {MAX_M} columns on the GPU; got {m}")
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    cuda, kern = _kernels()
    s_total = w.shape[0]
    dp, dn, dw = cuda.to_device(p), cuda.to_device(nn), cuda.to_device(w)
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
