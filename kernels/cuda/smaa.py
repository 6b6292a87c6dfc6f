"""``smaa_topsis`` on the GPU.

Contract: :func:`gpurank.kernels.reference.smaa_topsis`.

The weight-independent part (normalization and gaps of the full table, candidates put in
tie-break order; see :mod:`gpurank.kernels._smaa`) is O(n m). A host matrix is prepared on
the host with ``_smaa``'s NumPy expressions. A device matrix never crosses to the host: the
full table's column min, max and sum of squares come from the TOPSIS reduction kernel (m
values each), the candidate rows are gathered on the device (smaa_gather, canonical
float64), put in tie-break order by the device merge sort and turned into gaps by smaa_gaps
with the same IEEE operations as NumPy. Only m-vectors and the c candidate positions come
back. The O(S c m + S c^2) part runs on the device, in batches of samples: smaa_score, one
thread per (sample, candidate) score; smaa_rank, one thread per (sample, candidate)
counting the candidates that beat it, tiles of scores staged in shared memory (candidate
position is the tie-break, so "beats" is q_j < q_i or q_j == q_i and j < i); smaa_accum, one
thread per candidate adding its batch's ranks in sample order (no atomics, deterministic).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .._smaa import canonical_stats, prepare, unit_map, unpermute
from .._validate import check_candidates, check_max_criteria, check_smaa_inputs, check_stats
from ._launch import (
    MAX_CRITERIA,
    TILE,
    blocks,
    device_array,
    host_array,
    is_device,
    kernel,
    lex_order,
    mul_rn,
    to_device,
    to_device_matrix,
)
from .topsis import column_sums

__all__ = ["smaa_topsis"]

SMAA_BATCH_BYTES = 256 * 2**20  # device scratch for one batch of scores and ranks


@kernel("void(float64[:, :], float64[:, :], float64[:, :], int64, float64[:, :])")
def smaa_score_kernel(p, nn, w, s0, q):
    """q[b, i] = D+ / D- of candidate i under weight sample s0 + b (kernels/_smaa.py)."""
    i = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    b = cuda.blockIdx.y
    s = s0 + b
    if i < p.shape[0] and b < q.shape[0] and s < w.shape[0]:
        dp = 0.0
        dm = 0.0
        for j in range(p.shape[1]):
            a = mul_rn(w[s, j], p[i, j])  # rounded products: the host's sums, bit for bit
            dp += mul_rn(a, a)
            bb = mul_rn(w[s, j], nn[i, j])
            dm += mul_rn(bb, bb)
        if dm > 0:
            q[b, i] = dp / dm
        elif dp == 0:
            q[b, i] = 1.0
        else:
            q[b, i] = math.inf


@kernel("void(float64[:, :], int64, int32[:, :])")
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


@kernel("void(int32[:, :], float64[:, :], int64, int64, int64, int64[:], int64[:], "
        "int64[:], int64[:], float64[:, :])")
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


@kernel("void({f}[:, :], int64[:], int8[:], float64[:, :])")
def smaa_gather_kernel(x, rows, neg, g):
    """g[t, j] = canonical float64 cost of row rows[t]: x[rows[t], j], negated where neg[j]
    (a benefit column), as kernels/_smaa.py's ``where(benefit, -x, x)``."""
    t = cuda.grid(1)
    if t < rows.shape[0]:
        r = rows[t]
        for j in range(x.shape[1]):
            v = np.float64(x[r, j])
            g[t, j] = -v if neg[j] != 0 else v


@kernel("void(float64[:, :], int64[:], float64[:], float64[:], float64[:], float64[:], "
        "float64[:, :], float64[:, :])")
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


def _prepare_device(matrix, weights_samples, benefit, *, k, norm, candidates, stats=None):
    """:func:`gpurank.kernels._smaa.prepare` for a device matrix, without moving it to the
    host.

    Returns (P, N device arrays of the candidates in tie-break order, weights, perm, k).
    The column min and max are exact whatever the reduction order, and the normalized
    column min and max follow from them (division by a positive number and subtraction are
    monotone in floating point). The vector norm's sum of squares is reduced on the device
    (block partials in a fixed order), so for non-integer data it may differ from NumPy's in
    the last bits; every property the pruning relies on is monotonicity, which holds for any
    norm.
    """
    d = to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    # weights, benefit, norm and k checked on a 0-row stand-in: the rows were checked above
    _, w, _, k, _ = check_smaa_inputs(np.zeros((0, m)), host_array(weights_samples),
                                      host_array(benefit), k=k, norm=norm, candidates=None)
    if stats is not None:
        check_stats(stats, m, n)
    b = np.asarray(host_array(benefit), dtype=bool).reshape(-1)
    cand = check_candidates(host_array(candidates), n)
    c = cand.shape[0]
    empty = device_array((c, m), np.float64)
    if c == 0:
        return empty, empty, w, np.zeros(0, np.int64), k
    if stats is not None:
        # (x * pre - offset) / div with pre a power of two is (x - offset / pre) / (div /
        # pre), bit for bit, unless div / pre overflows (a column beyond ~1e154, vector norm)
        pre, off, div, rmin, rmax = unit_map(canonical_stats(stats, b), norm)
        off, div = off / pre, div / pre
    else:
        lo_x, hi_x, ss = column_sums(d)
        lo, hi = np.where(b, -hi_x, lo_x), np.where(b, -lo_x, hi_x)  # canonical costs
        if norm == "vector":
            off, div = np.zeros(m), np.sqrt(ss)
        else:
            off, div = lo, hi - lo
        rmin = np.divide(lo - off, div, out=np.zeros(m), where=div > 0)
        rmax = np.divide(hi - off, div, out=np.zeros(m), where=div > 0)
    # Gathered in row-id order, so the merge sort's tie-break by position is by row id.
    pos = np.argsort(cand, kind="stable")
    g = device_array((c, m), np.float64)
    smaa_gather_kernel[blocks(c), TILE](d, to_device(cand[pos]),
                                        to_device(b.astype(np.int8)), g)
    order = lex_order(g)
    dp = device_array((c, m), np.float64)
    dn = device_array((c, m), np.float64)
    smaa_gaps_kernel[blocks(c), TILE](g, order, to_device(off), to_device(div),
                                      to_device(rmin), to_device(rmax), dp, dn)
    perm = pos[order.copy_to_host()]  # c positions: what unpermute needs on the host
    return dp, dn, w, perm.astype(np.int64), k


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None,
                stats=None, batch_bytes=None):
    """SMAA acceptability counts of TOPSIS over weight samples (Lahdelma et al. 1998).

    Parameters
    ----------
    matrix, weights_samples, benefit, k, norm, candidates, stats
        As :func:`gpurank.kernels.reference.smaa_topsis`; NumPy, CuPy or Numba device
        inputs. A host matrix is prepared on the host (bit-identical to the other
        implementations); a device matrix stays on the device.
    batch_bytes : int, optional, keyword-only
        Bound on the device scratch per batch of samples (``SMAA_BATCH_BYTES``).

    Returns
    -------
    top1_counts, topk_counts, rank_sums, rank_sq_sums, central_weight_sums
        NumPy arrays, in the order of ``candidates``.

    Examples
    --------
    >>> from numba import cuda
    >>> x = cuda.to_device(np.array([[1.0, 3.0], [3.0, 1.0], [3.0, 3.0]]))
    >>> smaa_topsis(x, [[1, 0], [0, 1]], [False, False], k=1)[0]  # top-1 counts
    array([1, 1, 0])
    """
    if is_device(matrix):
        dp, dn, w, perm, k = _prepare_device(matrix, weights_samples, benefit, k=k, norm=norm,
                                             candidates=candidates, stats=stats)
        c, m = dp.shape
    else:
        p, nn, w, perm, k = prepare(matrix, host_array(weights_samples),
                                    host_array(benefit), k=k, norm=norm,
                                    candidates=host_array(candidates), stats=stats)
        c, m = p.shape
        check_max_criteria(m, MAX_CRITERIA, name="matrix")
        dp, dn = (to_device(p), to_device(nn)) if c else (None, None)
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    s_total = w.shape[0]
    dw = to_device(w)
    top1 = to_device(np.zeros(c, np.int64))
    topk = to_device(np.zeros(c, np.int64))
    rsum = to_device(np.zeros(c, np.int64))
    rsq = to_device(np.zeros(c, np.int64))
    cw = to_device(np.zeros((c, m), np.float64))
    budget = SMAA_BATCH_BYTES if batch_bytes is None else int(batch_bytes)
    batch = int(max(1, min(s_total, 65535, budget // (12 * c))))
    q = device_array((batch, c), np.float64)
    rank = device_array((batch, c), np.int32)
    for s0 in range(0, s_total, batch):
        nb = min(batch, s_total - s0)
        grid = (blocks(c), nb)
        smaa_score_kernel[grid, TILE](dp, dn, dw, s0, q)
        smaa_rank_kernel[grid, TILE](q, nb, rank)
        smaa_accum_kernel[blocks(c), TILE](rank, dw, s0, nb, k, top1, topk, rsum, rsq, cw)
    out = (top1.copy_to_host(), topk.copy_to_host(), rsum.copy_to_host(), rsq.copy_to_host(),
           cw.copy_to_host())
    return unpermute(perm, *out)
