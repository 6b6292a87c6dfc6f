"""``smaa_topsis``, ``smaa_topsis_drawn`` and ``smaa_interval_candidates`` on the GPU.

Contracts: :func:`gpurank.kernels.reference.smaa_topsis`,
:func:`gpurank.kernels.reference.smaa_topsis_drawn` and
:func:`gpurank.kernels.reference.smaa_interval_candidates`. The drawn kernels (values drawn
in their intervals) are described at :func:`smaa_topsis_drawn`.

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
from numba import config, cuda

from .._smaa import (
    EXP_TAYLOR,
    GOLDEN,
    LN2,
    capped_dominators,
    check_factors,
    corner_message,
    draw_params,
    effective_exponent,
    mix64,
    move_bounds,
    prepare,
    prepare_drawn,
    seed_key,
    unit_map,
    unpermute,
)
from .._topsis_stats import canonical_stats
from .._validate import (
    check_benefit,
    check_candidates,
    check_k,
    check_max_criteria,
    check_smaa_inputs,
    check_stats,
)
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
    nonfinite_kernel,
    to_device,
    to_device_matrix,
)
from .count import domination_count
from .topsis import column_sums

__all__ = ["smaa_interval_candidates", "smaa_topsis", "smaa_topsis_drawn"]

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


def _device_unit(d, b, norm, stats):
    """The normalization ``r = (g - off) / div`` of the device matrix ``d`` (benefit flags
    ``b``) and the normalized column minimum and maximum, ``(off, div, rmin, rmax)``, from
    ``stats`` or from the TOPSIS reduction kernel's column min, max and sum of squares."""
    m = d.shape[1]
    if stats is not None:
        # (x * pre - offset) / div with pre a power of two is (x - offset / pre) / (div /
        # pre), bit for bit, unless div / pre overflows (a column beyond ~1e154, vector norm)
        pre, off, div, rmin, rmax = unit_map(canonical_stats(stats, b), norm)
        return off / pre, div / pre, rmin, rmax
    lo_x, hi_x, ss = column_sums(d)
    lo, hi = np.where(b, -hi_x, lo_x), np.where(b, -lo_x, hi_x)  # canonical costs
    if norm == "vector":
        off, div = np.zeros(m), np.sqrt(ss)
    else:
        off, div = lo, hi - lo
    rmin = np.divide(lo - off, div, out=np.zeros(m), where=div > 0)
    rmax = np.divide(hi - off, div, out=np.zeros(m), where=div > 0)
    return off, div, rmin, rmax


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
    off, div, rmin, rmax = _device_unit(d, b, norm, stats)
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


# -- values drawn in their intervals ---------------------------------------------------------

capped_dominators_dev = cuda.jit(device=True, inline=True)(capped_dominators)

_U64 = np.uint64
_TAYLOR = EXP_TAYLOR

if config.ENABLE_CUDASIM:
    # The simulator runs device code as Python, where NumPy warns on uint64 wrap-around.

    @cuda.jit(device=True)
    def sample_key(key, s):
        """The key of sample ``s`` (kernels/_smaa.py's ``sample_keys``)."""
        with np.errstate(over="ignore"):
            return mix64(key + _U64(s + 1) * GOLDEN)

    @cuda.jit(device=True)
    def mix_pair(ks, kr):
        """The hash of a sample key and a row key (kernels/_smaa.py's ``uniforms``)."""
        with np.errstate(over="ignore"):
            return mix64(mix64(ks ^ kr) + GOLDEN)

else:
    mix = cuda.jit(device=True, inline=True)(mix64)

    @cuda.jit(device=True, inline=True)
    def sample_key(key, s):
        """The key of sample ``s`` (kernels/_smaa.py's ``sample_keys``)."""
        return mix(key + _U64(s + 1) * GOLDEN)

    @cuda.jit(device=True, inline=True)
    def mix_pair(ks, kr):
        """The hash of a sample key and a row key (kernels/_smaa.py's ``uniforms``)."""
        return mix(mix(ks ^ kr) + GOLDEN)


@cuda.jit(device=True, inline=True)
def exp2_rn(y):
    """kernels/_smaa.py's ``exp2``, every product rounded on its own (no FMA)."""
    k = math.floor(y + 0.5)
    z = mul_rn(y - k, LN2)
    p = _TAYLOR[13]
    for i in range(12, -1, -1):
        p = mul_rn(p, z) + _TAYLOR[i]
    return math.ldexp(p, int(k))


@cuda.jit(device=True, inline=True)
def draw(ks, kr, dlo, dhi, clo, chi, log10):
    """One row's move in one sample (kernels/_smaa.py's ``draw_moves``), on the device."""
    z = mix_pair(ks, kr)
    u = mul_rn(np.float64(z >> _U64(11)) + 0.5, 1.1102230246251565e-16)  # * 2 ** -53
    if u < 0.5:
        y = mul_rn(1.0 - mul_rn(2.0, u), dlo)
    else:
        y = mul_rn(mul_rn(2.0, u) - 1.0, dhi)
    if log10 == 0:
        y = exp2_rn(y)
    return min(max(y, clo), chi)


@cuda.jit(device=True, inline=True)
def moved(v, t, e, log10):
    """A canonical value ``v`` moved by ``t`` (kernels/_smaa.py's ``moved``): ``|e|``
    rounded products and one IEEE division, or a rounded product and an addition, so the
    value is the host's bit for bit."""
    if log10 != 0:
        return v + mul_rn(np.float64(e), t)
    p = 1.0
    for _ in range(abs(e)):
        p = mul_rn(p, t)
    if e < 0:
        p = 1.0 / p
    return mul_rn(v, p)


@cuda.jit(device=True, inline=True)
def drawn_before(g, mv, e, log10, b, j, i):
    """Under sample b, candidate j's drawn row sorts before candidate i's: lexicographic,
    ties by the lower position (row index)."""
    for col in range(g.shape[1]):
        x = moved(g[j, col], mv[b, j], e[col], log10)
        y = moved(g[i, col], mv[b, i], e[col], log10)
        if x < y:
            return True
        if x > y:
            return False
    return j < i


@kernel("void(float64[:, :], uint64, uint64[:], float64[:], float64[:], float64[:], "
        "float64[:], int64[:], int64, float64[:], float64[:], float64[:], float64[:], "
        "float64[:], float64[:, :], int64, float64[:, :], float64[:, :], float64[:, :])")
def smaa_drawn_score_kernel(g, key, kr, dlo, dhi, clo, chi, e, log10, pre, off, div, rmin,
                            rmax, w, s0, mv, q, z):
    """Candidate i under sample s0 + b: its factor drawn (mv[b, i]), its values moved and
    scored, q[b, i] = D+ / D- with gaps clipped at 0, and z[b, i] = sum_j w_j r_j, the
    first tie-break (kernels/_smaa.py)."""
    i = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    b = cuda.blockIdx.y
    s = s0 + b
    if i < g.shape[0] and b < q.shape[0] and s < w.shape[0]:
        t = draw(sample_key(key, s), kr[i], dlo[i], dhi[i], clo[i], chi[i], log10)
        mv[b, i] = t
        dp = 0.0
        dm = 0.0
        zz = 0.0
        for j in range(g.shape[1]):
            v = moved(g[i, j], t, e[j], log10)
            r = 0.0
            if div[j] > 0:
                r = (mul_rn(v, pre[j]) - off[j]) / div[j]
            gp = r - rmin[j]
            if gp < 0:
                gp = 0.0
            gn = rmax[j] - r
            if gn < 0:
                gn = 0.0
            a = mul_rn(w[s, j], gp)
            dp += mul_rn(a, a)
            bb = mul_rn(w[s, j], gn)
            dm += mul_rn(bb, bb)
            zz += mul_rn(w[s, j], r)
        z[b, i] = zz
        if dm > 0:
            q[b, i] = dp / dm
        elif dp == 0:
            q[b, i] = 1.0
        else:
            q[b, i] = math.inf


@kernel("void(float64[:, :], float64[:, :], float64[:, :], float64[:, :], int64[:], int64, "
        "int64, int32[:, :])")
def smaa_drawn_rank_kernel(q, z, g, mv, e, log10, nb, rank):
    """rank[b, i] = 1 + #candidates j beating i under sample b: q lower; or equal q and z
    lower; or equal q and z and a smaller drawn row (recomputed only then); or equal rows
    and a lower j."""
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
                if v < own:
                    cnt += 1
                elif v == own and base + t != i:
                    zj = z[b, base + t]
                    zi = z[b, i]
                    if zj < zi or (zj == zi and drawn_before(g, mv, e, log10, b, base + t, i)):
                        cnt += 1
        cuda.syncthreads()
    if valid:
        rank[b, i] = cnt + 1


@kernel("void({f}[:, :], int8[:], float64[:], float64[:], int64[:], int64, float64[:, :], "
        "float64[:, :])")
def smaa_corners_kernel(x, neg, mlo, mhi, e, log10, opt, pess):
    """opt / pess [i, j]: the least / largest canonical value of row i, column j over its
    moves [mlo[i], mhi[i]] (the kernels' own operations, so every drawn value lies between
    them)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        for j in range(x.shape[1]):
            v = np.float64(x[i, j])
            if neg[j] != 0:
                v = -v
            a = moved(v, mlo[i], e[j], log10)
            bb = moved(v, mhi[i], e[j], log10)
            opt[i, j] = min(a, bb)
            pess[i, j] = max(a, bb)


@kernel("void(float64[:, :], float64[:])")
def smaa_row_sums_kernel(x, s):
    """s[i] = sum of row i in column order (monotone: a dominator's sum is never larger)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
        s[i] = acc


@kernel("void(float64[:, :], float64[:], float64[:, :], float64[:], int64, int64[:])")
def smaa_box_count_kernel(a, sa, b, sb, cap, out):
    """out[i] = #rows of b dominating row i of a, at most cap; b sorted by row sum, so only
    its rows with a sum <= sa[i] are scanned."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = capped_dominators_dev(a, i, sa[i], b, sb, cap)


def _row_sums(d):
    s = device_array(d.shape[0], np.float64)
    if d.shape[0]:
        smaa_row_sums_kernel[blocks(d.shape[0]), TILE](d, s)
    return s


def _gather(d, rows, neg):
    g = device_array((rows.shape[0], d.shape[1]), np.float64)
    if rows.shape[0]:
        smaa_gather_kernel[blocks(rows.shape[0]), TILE](d, to_device(rows), to_device(neg), g)
    return g


def _check_corners(f, d, neg, opt, pess):
    """Refuse factors that move a value out of the float range (the host's message)."""
    n, m = opt.shape
    for corner in (opt, pess):
        first = to_device(np.array([n * m], dtype=np.int64))
        nonfinite_kernel[blocks(n), TILE](corner, first)
        bad = int(first.copy_to_host()[0])
        if bad < n * m:
            i, j = divmod(bad, m)
            v = float(d[i : i + 1, j : j + 1].copy_to_host()[0, 0])
            raise ValueError(corner_message(f, i, j, -v if neg[j] else v))


def _device_corners(d, b, f):
    """(opt, pess) device corners of the device matrix ``d``, checked finite."""
    n, m = d.shape
    neg = b.astype(np.int8)
    mlo, mhi = move_bounds(f)
    opt = device_array((n, m), np.float64)
    pess = device_array((n, m), np.float64)
    if n:
        smaa_corners_kernel[blocks(n), TILE](d, to_device(neg), to_device(mlo), to_device(mhi),
                                             to_device(effective_exponent(f, b)),
                                             int(f.log10), opt, pess)
        _check_corners(f, d, neg, opt, pess)
    return opt, pess


def smaa_interval_candidates(matrix, benefit, factors, *, k):
    """The rows that can be in the top ``k`` of some sample of :func:`smaa_topsis_drawn`.

    Parameters
    ----------
    matrix, benefit, factors, k
        As :func:`gpurank.kernels.reference.smaa_interval_candidates`; the matrix a NumPy,
        CuPy or Numba device array.

    Returns
    -------
    ndarray of int64
        Row indices, increasing.

    Notes
    -----
    As :func:`gpurank.kernels.cpu.smaa.smaa_interval_candidates`, on the device: the
    corners (smaa_corners, the drawn kernels' operations), the pessimistic corners
    dominated by fewer than ``k`` of them (:func:`domination_count` with ``cap=k``),
    gathered and sorted by row sum (a few thousand rows: their sums sorted on the host),
    then one thread per row counting those that dominate its optimistic corner, stopping
    at ``k`` (smaa_box_count). Only the n counts come back.

    Examples
    --------
    >>> from numba import cuda
    >>> from gpurank.kernels._smaa import RowFactors
    >>> f = RowFactors(lo=[0.9, 1.0, 1.0], hi=[1.1, 2.0, 1.0], exponent=[1, 1])
    >>> x = cuda.to_device(np.array([[1.0, 1.0], [1.5, 1.5], [4.0, 4.0]]))
    >>> smaa_interval_candidates(x, [False, False], f, k=2)
    array([0, 1])
    """
    d = to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    b = check_benefit(host_array(benefit), m)
    k = check_k(k)
    f = check_factors(factors, n, m)
    opt, pess = _device_corners(d, b, f)
    if n == 0 or k == 0:
        return np.zeros(0, np.int64)
    near = np.flatnonzero(domination_count(pess, cap=k) < k).astype(np.int64)
    plain = np.zeros(m, np.int8)
    near_rows = _gather(pess, near, plain)
    order = np.argsort(_row_sums(near_rows).copy_to_host(), kind="stable").astype(np.int64)
    bs = _gather(pess, near[order], plain)
    count = device_array(n, np.int64)
    smaa_box_count_kernel[blocks(n), TILE](opt, _row_sums(opt), bs, _row_sums(bs), k, count)
    return np.flatnonzero(count.copy_to_host() < k).astype(np.int64)


def _prepare_drawn_device(matrix, weights_samples, benefit, factors, *, k, norm, candidates,
                          stats=None):
    """:func:`gpurank.kernels._smaa.prepare_drawn` for a device matrix, without moving it to
    the host: (canonical candidate rows in row order on the device, unit vectors, effective
    exponents, factors, weights, rows, perm, k). The normalization is that of
    :func:`_prepare_device` (``pre`` = 1)."""
    d = to_device_matrix(matrix, name="matrix")
    n, m = d.shape
    _, w, _, k, _ = check_smaa_inputs(np.zeros((0, m)), host_array(weights_samples),
                                      host_array(benefit), k=k, norm=norm, candidates=None)
    if stats is not None:
        check_stats(stats, m, n)
    b = check_benefit(host_array(benefit), m)
    cand = check_candidates(host_array(candidates), n)
    f = check_factors(factors, n, m)
    perm = np.argsort(cand, kind="stable").astype(np.int64)
    rows = cand[perm]
    if n:
        _device_corners(d, b, f)  # refuses factors that move a value out of the float range
    if rows.shape[0] == 0:
        unit = tuple(np.zeros(m) for _ in range(5))
    else:
        off, div, rmin, rmax = _device_unit(d, b, norm, stats)
        unit = (np.ones(m), off, div, rmin, rmax)
    g = _gather(d, rows, b.astype(np.int8))
    return g, unit, effective_exponent(f, b), f, w, rows, perm, k


def smaa_topsis_drawn(matrix, weights_samples, benefit, factors, *, k, norm="vector",
                      candidates=None, stats=None, batch_bytes=None):
    """SMAA acceptability counts of TOPSIS over weight samples, each row's values also
    drawn inside its interval.

    Parameters
    ----------
    matrix, weights_samples, benefit, factors, k, norm, candidates, stats
        As :func:`gpurank.kernels.reference.smaa_topsis_drawn`; NumPy, CuPy or Numba device
        inputs. A host matrix is prepared on the host (bit-identical to the other
        implementations); a device matrix stays on the device (its normalization as in
        :func:`smaa_topsis`).
    batch_bytes : int, optional, keyword-only
        Bound on the device scratch per batch of samples (``SMAA_BATCH_BYTES``).

    Returns
    -------
    top1_counts, topk_counts, rank_sums, rank_sq_sums, central_weight_sums
        NumPy arrays, in the order of ``candidates``.

    Notes
    -----
    The factors are drawn on the device: only the seed's key and, per candidate, its row
    key and the exponents of its bounds cross (:func:`gpurank.kernels._smaa.draw_params`).
    Per batch of samples: smaa_drawn_score, one thread per (sample, candidate) hashing
    (seed, sample, row id), drawing the factor (the polynomial ``exp2``), moving the
    candidate's values and scoring them, every product rounded on its own (``dmul_rn``)
    and every division and reciprocal IEEE, so factors, values and scores are the host's bit
    for bit; it also keeps the factor and the weighted sum that breaks ties.
    smaa_drawn_rank, one thread per (sample, candidate) counting the candidates that beat
    it, the drawn rows compared only on an exact tie of score and sum; smaa_accum as in
    :func:`smaa_topsis` (ranks and central weights in sample order).

    Examples
    --------
    >>> from numba import cuda
    >>> from gpurank.kernels._smaa import RowFactors
    >>> x = cuda.to_device(np.array([[1.0, 1.0], [1.2, 1.2], [3.0, 3.0]]))
    >>> f = RowFactors(lo=[0.5, 1.0, 1.0], hi=[2.0, 1.0, 1.0], exponent=[1, 1], seed=0)
    >>> smaa_topsis_drawn(x, [[0.5, 0.5]] * 100, [False, False], f, k=1)[0]
    array([64, 36,  0])
    """
    if is_device(matrix):
        dg, unit, e, f, w, rows, perm, k = _prepare_drawn_device(
            matrix, weights_samples, benefit, factors, k=k, norm=norm, candidates=candidates,
            stats=stats)
    else:
        p = prepare_drawn(matrix, host_array(weights_samples), host_array(benefit), factors,
                          k=k, norm=norm, candidates=host_array(candidates), stats=stats)
        check_max_criteria(p.g.shape[1], MAX_CRITERIA, name="matrix")
        dg, unit, e, f, w, rows, perm, k = (to_device(p.g), p.unit, p.exponent, p.factors,
                                            p.w, p.rows, p.perm, p.k)
    c, m = dg.shape
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    s_total = w.shape[0]
    dw = to_device(w)
    de = to_device(np.ascontiguousarray(e, dtype=np.int64))
    pre, off, div, rmin, rmax = (to_device(np.ascontiguousarray(v, dtype=np.float64))
                                 for v in unit)
    kr, dlo, dhi, clo, chi = (to_device(v) for v in draw_params(f, rows))
    key = seed_key(f.seed)
    acc = [to_device(np.zeros(c, np.int64)) for _ in range(4)]
    cw = to_device(np.zeros((c, m), np.float64))
    budget = SMAA_BATCH_BYTES if batch_bytes is None else int(batch_bytes)
    batch = int(max(1, min(s_total, 65535, budget // (28 * c))))
    mv = device_array((batch, c), np.float64)
    q = device_array((batch, c), np.float64)
    z = device_array((batch, c), np.float64)
    rank = device_array((batch, c), np.int32)
    for s0 in range(0, s_total, batch):
        nb = min(batch, s_total - s0)
        grid = (blocks(c), nb)
        smaa_drawn_score_kernel[grid, TILE](dg, key, kr, dlo, dhi, clo, chi, de,
                                            int(f.log10), pre, off, div, rmin, rmax, dw, s0,
                                            mv, q, z)
        smaa_drawn_rank_kernel[grid, TILE](q, z, dg, mv, de, int(f.log10), nb, rank)
        smaa_accum_kernel[blocks(c), TILE](rank, dw, s0, nb, k, *acc, cw)
    return unpermute(perm, *(a.copy_to_host() for a in acc), cw.copy_to_host())
