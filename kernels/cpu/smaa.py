"""``smaa_topsis`` on the CPU (Numba, parallel over weight samples).

Contract: :func:`gpurank.kernels.reference.smaa_topsis`.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .._smaa import prepare, unpermute

__all__ = ["smaa_topsis"]


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
