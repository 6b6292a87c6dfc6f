"""``smaa_topsis`` and ``smaa_topsis_drawn`` on the CPU (Numba, parallel over weight samples),
and ``smaa_interval_candidates``, the pruning of the drawn one.

Contracts: :func:`gpurank.kernels.reference.smaa_topsis`,
:func:`gpurank.kernels.reference.smaa_topsis_drawn` and
:func:`gpurank.kernels.reference.smaa_interval_candidates`.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from .._smaa import (
    EXP_TAYLOR,
    GOLDEN,
    LN2,
    capped_dominators,
    check_factors,
    corners,
    mix64,
    prepare,
    prepare_drawn,
    unpermute,
    winner_weight_sums,
)
from .._validate import check_benefit, check_costs, check_k, check_pair
from ._sort import row_sums
from .count import domination_count

__all__ = ["count_dominators", "interval_corners", "smaa_interval_candidates", "smaa_topsis",
           "smaa_topsis_drawn"]

_U64 = np.uint64


def smaa_topsis(matrix, weights_samples, benefit, *, k, norm="vector", candidates=None,
                stats=None):
    """SMAA acceptability counts of TOPSIS over weight samples (Lahdelma et al. 1998).

    Parameters
    ----------
    matrix, weights_samples, benefit, k, norm, candidates, stats
        As :func:`gpurank.kernels.reference.smaa_topsis`.

    Returns
    -------
    top1_counts, topk_counts, rank_sums, rank_sq_sums, central_weight_sums

    Notes
    -----
    The weight-independent part (normalization, gaps to the ideal and anti-ideal of the full
    table, candidates put in tie-break order; :mod:`gpurank.kernels._smaa`) runs once on the
    host; then the samples are split into one chunk per thread (``prange``), each with its
    own accumulators: per sample the scores of all c candidates, O(c m), a stable argsort,
    O(c log c), and the counts; the per-thread accumulators are summed at the end.
    O(S c (m + log c)) time, O(threads c m) extra memory.

    Examples
    --------
    Two candidates out of three rows, under three weight vectors:

    >>> x = np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    >>> w = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    >>> smaa_topsis(x, w, [False, False], k=1, candidates=[2, 0])[:3]
    (array([1, 2]), array([1, 2]), array([5, 4]))
    """
    p, nn, w, perm, k = prepare(matrix, weights_samples, benefit, k=k, norm=norm,
                                candidates=candidates, stats=stats)
    c, m = p.shape
    if c == 0 or w.shape[0] == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    nchunks = max(1, min(numba.get_num_threads(), w.shape[0]))
    return unpermute(perm, *_smaa_chunks(p, nn, w, k, nchunks))


@njit(cache=True, parallel=True, nogil=True)
def _smaa_chunks(p, nn, w, k, nchunks):
    c, m = p.shape
    s_total = w.shape[0]
    top1 = np.zeros((nchunks, c), dtype=np.int64)
    topk = np.zeros((nchunks, c), dtype=np.int64)
    rsum = np.zeros((nchunks, c), dtype=np.int64)
    rsq = np.zeros((nchunks, c), dtype=np.int64)
    cw = np.zeros((nchunks, c, m), dtype=np.float64)
    for t in prange(nchunks):
        s0 = t * s_total // nchunks
        s1 = (t + 1) * s_total // nchunks
        q = np.empty(c, dtype=np.float64)
        for s in range(s0, s1):
            for i in range(c):
                dp = 0.0
                dm = 0.0
                for j in range(m):
                    a = w[s, j] * p[i, j]
                    dp += a * a
                    bb = w[s, j] * nn[i, j]
                    dm += bb * bb
                if dm > 0:
                    q[i] = dp / dm
                elif dp == 0:
                    q[i] = 1.0
                else:
                    q[i] = np.inf
            # Stable: equal scores keep the tie-break order the candidates were put in.
            order = np.argsort(q, kind="mergesort")
            for r in range(c):
                i = order[r]
                rank = r + 1
                rsum[t, i] += rank
                rsq[t, i] += rank * rank
                if rank <= k:
                    topk[t, i] += 1
            i0 = order[0]
            top1[t, i0] += 1
            for j in range(m):
                cw[t, i0, j] += w[s, j]
    return (top1.sum(axis=0), topk.sum(axis=0), rsum.sum(axis=0), rsq.sum(axis=0),
            cw.sum(axis=0))


# -- values drawn in their intervals ---------------------------------------------------------


def smaa_topsis_drawn(matrix, weights_samples, benefit, factors, *, k, norm="vector",
                      candidates=None, stats=None):
    """SMAA acceptability counts of TOPSIS over weight samples, each row's values also
    drawn inside its interval.

    Parameters
    ----------
    matrix, weights_samples, benefit, factors, k, norm, candidates, stats
        As :func:`gpurank.kernels.reference.smaa_topsis_drawn`.

    Returns
    -------
    top1_counts, topk_counts, rank_sums, rank_sq_sums, central_weight_sums

    Notes
    -----
    The normalization of the full table, the candidates' canonical rows and their draw
    keys and bounds are prepared once on the host
    (:func:`gpurank.kernels._smaa.prepare_drawn`). The samples are split into one chunk per
    thread (``prange``): per sample each candidate's factor is drawn (the hash of seed,
    sample and row, and :func:`gpurank.kernels._smaa.exp2`: nothing depends on the chunks),
    its values moved and scored, O(c m), then a radix sort of the scores, O(c), whose runs
    of equal scores are sorted by (weighted sum, drawn row, row index). Each sample's
    winner is kept and the central weights are summed in sample order afterwards, so they
    do not depend on the number of threads either.

    Examples
    --------
    >>> from gpurank.kernels._smaa import RowFactors
    >>> x = np.array([[1.0, 1.0], [1.2, 1.2], [3.0, 3.0]])
    >>> f = RowFactors(lo=[0.5, 1.0, 1.0], hi=[2.0, 1.0, 1.0], exponent=[1, 1], seed=0)
    >>> smaa_topsis_drawn(x, [[0.5, 0.5]] * 100, [False, False], f, k=1)[0]
    array([64, 36,  0])
    """
    d = prepare_drawn(matrix, weights_samples, benefit, factors, k=k, norm=norm,
                      candidates=candidates, stats=stats)
    c, m = d.g.shape
    s_total = d.w.shape[0]
    if c == 0 or s_total == 0:
        return (np.zeros(c, np.int64), np.zeros(c, np.int64), np.zeros(c, np.int64),
                np.zeros(c, np.int64), np.zeros((c, m), np.float64))
    winners = np.empty(s_total, np.int64)
    nchunks = max(1, min(numba.get_num_threads(), s_total))
    counts = _drawn_chunks(d.g, d.exponent, d.factors.log10, *d.unit, d.w, d.k, nchunks,
                           d.key, *d.draw, winners)
    return unpermute(d.perm, *counts, winner_weight_sums(winners, d.w, c))


def smaa_interval_candidates(matrix, benefit, factors, *, k):
    """The rows that can be in the top ``k`` of some sample of :func:`smaa_topsis_drawn`.

    Parameters
    ----------
    matrix, benefit, factors, k
        As :func:`gpurank.kernels.reference.smaa_interval_candidates`.

    Returns
    -------
    ndarray of int64
        Row indices, increasing.

    Notes
    -----
    A row is pruned when the pessimistic corners of ``k`` or more rows dominate its
    optimistic corner. Only the pessimistic corners dominated by fewer than ``k``
    pessimistic corners (``near``: :func:`domination_count` with ``cap=k``) need to be
    counted: a corner outside ``near`` that dominates a row has ``k`` dominators in
    ``near`` (its first ``k`` dominators in any order that extends dominance), and they
    dominate the row too. So the count is :func:`count_dominators` of the optimistic
    corners against ``near``, capped at ``k``; ``near`` is about as small as the candidate
    set, and a row stops counting at ``k``.

    Examples
    --------
    >>> from gpurank.kernels._smaa import RowFactors
    >>> f = RowFactors(lo=[0.9, 1.0, 1.0], hi=[1.1, 2.0, 1.0], exponent=[1, 1])
    >>> x = np.array([[1.0, 1.0], [1.5, 1.5], [4.0, 4.0]])
    >>> smaa_interval_candidates(x, [False, False], f, k=2)
    array([0, 1])
    """
    k = check_k(k)
    opt, pess = interval_corners(matrix, benefit, factors)
    n = opt.shape[0]
    if n == 0 or k == 0:
        return np.zeros(0, np.int64)
    near = np.flatnonzero(domination_count(pess, cap=k) < k)
    count = count_dominators(opt, pess[near], cap=k)
    return np.flatnonzero(count < k).astype(np.int64)


def interval_corners(matrix, benefit, factors):
    """The optimistic and pessimistic corners of every row's box: each canonical column
    (benefit columns negated) at its best and at its worst over the row's factor interval.

    Parameters
    ----------
    matrix, benefit, factors
        As :func:`gpurank.kernels.reference.smaa_interval_candidates`.

    Returns
    -------
    (opt, pess) : ndarrays of float64, shape (n, m)
        Computed with the drawn kernels' operations, so every drawn row lies between them;
        a row is a candidate of the top ``k`` when fewer than ``k`` rows' ``pess``
        dominate its ``opt`` (also across partitions of a table: each row's corners are
        its own).

    Examples
    --------
    >>> from gpurank.kernels._smaa import RowFactors
    >>> f = RowFactors(lo=[0.5, 1.0], hi=[2.0, 1.0], exponent=[1, -1])
    >>> opt, pess = interval_corners(np.array([[4.0, 4.0], [1.0, 1.0]]), [False, False], f)
    >>> opt.tolist(), pess.tolist()
    ([[2.0, 2.0], [1.0, 1.0]], [[8.0, 8.0], [1.0, 1.0]])
    """
    x = check_costs(matrix, name="matrix").astype(np.float64, copy=False)
    n, m = x.shape
    b = check_benefit(benefit, m)
    return corners(np.where(b, -x, x), check_factors(factors, n, m), b)


def count_dominators(costs_a, costs_b, *, cap):
    """How many rows of ``costs_b`` dominate each row of ``costs_a``, at most ``cap``.

    Parameters
    ----------
    costs_a, costs_b : ndarray of shape (n_a, m), (n_b, m)
        Criteria to minimize, finite, with the same columns.
    cap : int >= 0, keyword-only

    Returns
    -------
    ndarray of int64, shape (n_a,)

    Notes
    -----
    The rows of ``costs_b`` sorted by row sum (summed in column order: floating-point
    addition in a fixed order is monotone, so a dominator never has a larger sum); each row
    of ``costs_a`` (in parallel) scans those whose sum is not larger than its own, and
    stops at ``cap``. O(n_a n_b m) worst case, O(n_a cap m) for rows many rows dominate.

    Examples
    --------
    >>> count_dominators(np.array([[2.0, 2.0], [0.0, 0.0]]),
    ...                  np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]]), cap=5)
    array([2, 0])
    """
    a, b = check_pair(costs_a, costs_b)
    cap = check_k(cap)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros(a.shape[0], np.int64)
    sb = row_sums(b)
    order = np.argsort(sb, kind="stable")
    return _count_capped(a, row_sums(a), np.ascontiguousarray(b[order]),
                         np.ascontiguousarray(sb[order]), cap)


_capped_dominators = njit(inline="always")(capped_dominators)


@njit(cache=True, parallel=True, nogil=True)
def _count_capped(a, sa, bs, sb, cap):
    out = np.zeros(a.shape[0], dtype=np.int64)
    for i in prange(a.shape[0]):
        out[i] = _capped_dominators(a, i, sa[i], bs, sb, cap)
    return out


_mix = njit(inline="always")(mix64)


@njit(inline="always")
def _exp2(y):
    """kernels/_smaa.py's ``exp2``, operation by operation."""
    k = np.floor(y + 0.5)
    z = (y - k) * LN2
    p = EXP_TAYLOR[13]
    for c in EXP_TAYLOR[12::-1]:
        p = p * z + c
    return math.ldexp(p, int(k))


@njit(inline="always")
def _draw(sample_key, row_key, dlo, dhi, clo, chi, log10):
    """One row's move in one sample (kernels/_smaa.py's ``draw_moves``)."""
    z = _mix(_mix(sample_key ^ row_key) + GOLDEN)
    u = (np.float64(z >> _U64(11)) + 0.5) * 2.0**-53
    if u < 0.5:
        y = (1.0 - 2.0 * u) * dlo
    else:
        y = (2.0 * u - 1.0) * dhi
    if not log10:
        y = _exp2(y)
    return min(max(y, clo), chi)


@njit(inline="always")
def _moved(v, t, e, log10):
    """A canonical value ``v`` moved by ``t`` (kernels/_smaa.py's ``moved``)."""
    if log10:
        return v + np.float64(e) * t
    p = 1.0
    for _ in range(abs(e)):
        p = p * t
    if e < 0:
        p = 1.0 / p
    return v * p


@njit(inline="always")
def _before(a, b, q, z, x):
    """Candidate ``a`` ranks before ``b``: lower score, then lower weighted sum of its
    normalized drawn values, then lexicographically smaller drawn row, then lower position
    (= row index)."""
    if q[a] != q[b]:
        return q[a] < q[b]
    if z[a] != z[b]:
        return z[a] < z[b]
    for j in range(x.shape[1]):
        if x[a, j] != x[b, j]:
            return x[a, j] < x[b, j]
    return a < b


#: bits per pass of the radix sort of scores (6 passes of 11 bits cover a float64)
RADIX_BITS = 11
#: runs of tied scores up to this long are insertion-sorted, longer ones merge-sorted
SHORT_RUN = 32


@njit(cache=True, nogil=True)
def _sort_run(idx, tmp, lo, hi, q, z, x):
    """idx[lo:hi] sorted by :func:`_before`: insertion sort, or merges of insertion-sorted
    runs of ``SHORT_RUN`` through ``tmp[lo:hi]``."""
    for a in range(lo, hi, SHORT_RUN):
        b = min(a + SHORT_RUN, hi)
        for i in range(a + 1, b):
            v = idx[i]
            j = i - 1
            while j >= a and _before(v, idx[j], q, z, x):
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = v
    src, dst = idx, tmp
    width = SHORT_RUN
    while width < hi - lo:
        for a in range(lo, hi, 2 * width):
            mid = min(a + width, hi)
            b = min(a + 2 * width, hi)
            i, j, o = a, mid, a
            while i < mid and j < b:
                if _before(src[j], src[i], q, z, x):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < b:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    if src is not idx:
        idx[lo:hi] = src[lo:hi]


@njit(cache=True, nogil=True)
def _rank_order(q, z, x, idx, tmp, count):
    """Candidate positions in rank order (:func:`_before`), in ``idx``.

    Scores are non-negative floats (or +inf), whose IEEE bit patterns sort as the numbers
    do: a stable LSD radix sort of those bits (passes where every score has the same digit
    skipped) orders them by score, then by position; each run of equal scores is then
    sorted by the full rule, which only runs on ties. ``tmp`` and ``count`` (``2 **
    RADIX_BITS``) are scratch."""
    c = q.shape[0]
    keys = q.view(np.uint64)
    mask = np.uint64((1 << RADIX_BITS) - 1)
    for i in range(c):
        idx[i] = i
    src, dst = idx, tmp
    for shift in range(0, 64, RADIX_BITS):
        sh = np.uint64(shift)
        count[:] = 0
        for i in range(c):
            count[np.int64((keys[i] >> sh) & mask)] += 1
        if count[np.int64((keys[0] >> sh) & mask)] == c:
            continue  # one digit for all: this pass would keep the order
        total = 0
        for d in range(count.shape[0]):
            n_d = count[d]
            count[d] = total
            total += n_d
        for i in range(c):
            v = src[i]
            d = np.int64((keys[v] >> sh) & mask)
            dst[count[d]] = v
            count[d] += 1
        src, dst = dst, src
    if src is not idx:
        idx[:] = src
    a = 0
    while a < c:
        b = a + 1
        while b < c and q[idx[b]] == q[idx[a]]:
            b += 1
        if b - a > 1:
            _sort_run(idx, tmp, a, b, q, z, x)
        a = b
    return idx


@njit(cache=True, parallel=True, nogil=True)
def _drawn_chunks(g, e, log10, pre, off, div, rmin, rmax, w, k, nchunks, key, row_key, dlo,
                  dhi, clo, chi, winners):
    c, m = g.shape
    s_total = w.shape[0]
    top1 = np.zeros((nchunks, c), dtype=np.int64)
    topk = np.zeros((nchunks, c), dtype=np.int64)
    rsum = np.zeros((nchunks, c), dtype=np.int64)
    rsq = np.zeros((nchunks, c), dtype=np.int64)
    for t in prange(nchunks):
        s0 = t * s_total // nchunks
        s1 = (t + 1) * s_total // nchunks
        x = np.empty((c, m), dtype=np.float64)
        q = np.empty(c, dtype=np.float64)
        z = np.empty(c, dtype=np.float64)
        idx = np.empty(c, dtype=np.int64)
        tmp = np.empty(c, dtype=np.int64)
        count = np.empty(1 << RADIX_BITS, dtype=np.int64)
        for s in range(s0, s1):
            sample_key = _mix(key + _U64(s + 1) * GOLDEN)
            for i in range(c):
                mv = _draw(sample_key, row_key[i], dlo[i], dhi[i], clo[i], chi[i], log10)
                dp = 0.0
                dm = 0.0
                zz = 0.0
                for j in range(m):
                    v = _moved(g[i, j], mv, e[j], log10)
                    x[i, j] = v
                    r = 0.0
                    if div[j] > 0:
                        r = (v * pre[j] - off[j]) / div[j]
                    gp = r - rmin[j]  # clipped: a value beyond the ideal counts as at it
                    if gp < 0:
                        gp = 0.0
                    gn = rmax[j] - r
                    if gn < 0:
                        gn = 0.0
                    a = w[s, j] * gp
                    dp += a * a
                    bb = w[s, j] * gn
                    dm += bb * bb
                    zz += w[s, j] * r
                z[i] = zz
                if dm > 0:
                    q[i] = dp / dm
                elif dp == 0:
                    q[i] = 1.0
                else:
                    q[i] = np.inf
            order = _rank_order(q, z, x, idx, tmp, count)
            for r in range(c):
                i = order[r]
                rank = r + 1
                rsum[t, i] += rank
                rsq[t, i] += rank * rank
                if rank <= k:
                    topk[t, i] += 1
            top1[t, order[0]] += 1
            winners[s] = order[0]
    return top1.sum(axis=0), topk.sum(axis=0), rsum.sum(axis=0), rsq.sum(axis=0)
