"""The pivot prefilter of ``pareto_front``: drop, in a few linear passes, the rows that a
handful of sampled pivot rows dominate.

Rounds of: pick ~2m+2 pivot rows among the survivors (minimizers of sum / max / corner
scalarizations of per-column sample ranks, robust to heavy tails) plus up to 64 (m <= 3) /
32 rows spread over the front of a 1024-4096-row sample (these dominate most rows of
anti-correlated data), then drop in one pass with early exits every survivor a pivot
dominates: the first pivot alone, for m <= 4 in the first round a grid over the first m-1
columns (per cell, the sample row with the least last column among those weakly below the
cell's corner: one O(1) look-up and one exact dominance check per row), then the other
pivots 8 at a time in branch-free windows. O(n P m) per round; rounds stop when one removes
less than a third, or when the survivors are few (65,536 for m <= 3, whose final sweeps are
O(k log k), 4096 for m >= 4).

It is exact: a row dominated by a dropped row is, by transitivity, dominated by that row's
pivot, so the front of the survivors is the front of all rows. It removes > 99% of the rows
on realistic and independent data. The first pass also checks that every value is finite
(no separate validation pass over the input).

The two passes are compiled per number of columns and per serial/parallel variant by
:func:`_passes` (closures over ``d``: see :mod:`._jit`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._validate import check_costs
from ._jit import compile_variant, kernel_factory
from ._sort import dominates

__all__ = ["SAMPLE_PIVOTS", "PIV_W", "PAR_MIN", "GRID", "GRID_MAX_M", "prefilter"]

SAMPLE_PIVOTS = 64  # rows of the sample's front added to the pivots (half for m >= 4)
PIV_W = 8  # pivots per vectorized window of the check
#: The passes run serially below this many rows: they are light (mostly one pivot test per
#: row) and waking the thread pool costs more than it saves. Measured on 2 cores (median of
#: calls after idle): first pass 1e6 x 3 serial 9.9 ms, parallel 20 ms; 2e6 x 3 19 ms vs
#: 25 ms; even at 4e6 (docs/architecture-kernels.md has the table).
PAR_MIN = 2_000_000
GRID = {2: 4096, 3: 128, 4: 24}  # grid cells per axis for m columns (m <= GRID_MAX_M)
GRID_MAX_M = 4  # measured: no gain from coarser grids for m >= 5


def _sample_front_rows(n):
    """Sample size for the sample-front pivots: 1024 rows, growing to 4096 from 1e6 rows
    (a bigger sample has a front closer to the real one, at O(s |F_s| m) cost)."""
    return min(4096, max(1024, n // 256))


@njit(cache=True, nogil=True)
def _scalarization_pivots(c, idx):
    """Rows of a strided sample of up to 1024 rows of ``idx`` minimizing sum, max and two
    per-criterion corner scalarizations of their per-column sample ranks: 2 + 2m row
    indices of ``c`` (rank-sum minimizer first, possibly repeated)."""
    k = idx.shape[0]
    m = c.shape[1]
    step = max(1, k // 1024)
    s = (k + step - 1) // step
    r = np.empty((s, m))
    col = np.empty(s)
    for j in range(m):
        for t in range(s):
            col[t] = c[idx[t * step], j]
        o = np.argsort(col)
        for t in range(s):
            r[o[t], j] = t / s
    nsc = 2 + 2 * m
    best = np.full(nsc, np.inf)
    arg = np.zeros(nsc, dtype=np.int64)
    for t in range(s):
        sm = 0.0
        mx = 0.0
        for j in range(m):
            sm += r[t, j]
            if r[t, j] > mx:
                mx = r[t, j]
        if sm < best[0]:
            best[0] = sm
            arg[0] = t
        if mx < best[1]:
            best[1] = mx
            arg[1] = t
        for j in range(m):
            v = sm + 3.0 * r[t, j]
            if v < best[2 + 2 * j]:
                best[2 + 2 * j] = v
                arg[2 + 2 * j] = t
            v = max(mx, 2.0 * r[t, j])
            if v < best[3 + 2 * j]:
                best[3 + 2 * j] = v
                arg[3 + 2 * j] = t
    out = np.empty(nsc, dtype=np.int64)
    for q in range(nsc):
        out[q] = idx[arg[q] * step]
    return out


@njit(cache=True, nogil=True)
def _sample_front(c, idx, nfs):
    """Up to 256 rows of the Pareto front of a strided sample of ``nfs`` rows of ``idx``
    (SFS over the row-sum order, O(s |F_s| m)): on anti-correlated data the scalarization
    minimizers dominate little, the sample front as a whole most rows."""
    k = idx.shape[0]
    m = c.shape[1]
    step = max(1, k // nfs)
    s = (k + step - 1) // step
    sums = np.empty(s)
    for t in range(s):
        acc = 0.0
        for j in range(m):
            acc += c[idx[t * step], j]
        sums[t] = acc
    so = np.argsort(sums)
    fr = np.empty(s, dtype=np.int64)
    nfr = 0
    for u in range(s):
        a = idx[so[u] * step]
        d = False
        for v in range(nfr):
            if dominates(c, fr[v], c, a, m):
                d = True
                break
        if not d:
            fr[nfr] = a
            nfr += 1
            if nfr >= 256:  # enough to choose from; bounds the O(s |F_s| m) cost
                break
    return fr[:nfr].copy()


def _pivots(c, idx, nfs):
    """Pivot rows for one round over rows ``idx`` of ``c``: the scalarization minimizers,
    then up to 64 (m <= 3) or 32 rows spread over the sample front, duplicates removed."""
    m = c.shape[1]
    fr = _sample_front(c, idx, nfs)
    nx = min(fr.shape[0], SAMPLE_PIVOTS if m <= 3 else SAMPLE_PIVOTS // 2)
    spread = fr[(np.arange(nx) * fr.shape[0]) // nx] if nx else fr[:0]
    rows = np.concatenate((_scalarization_pivots(c, idx), spread))
    _, first = np.unique(rows, return_index=True)
    return rows[np.sort(first)]  # first occurrences, in order


def _pivot_block(c, piv):
    """Pivot rows ``piv`` of ``c`` column-major, padded with +inf to a multiple of 8."""
    m = c.shape[1]
    p_ = piv.shape[0]
    ps = max(PIV_W, -(-p_ // PIV_W) * PIV_W)
    pv = np.full((m, ps), np.inf, dtype=c.dtype)
    pv[:, :p_] = c[piv].T
    return pv.reshape(-1), ps


@njit(cache=True, nogil=True)
def _grid_table(c, step, g):
    """For m = 2 to 4: a grid of g^(m-1) cells over the first m-1 columns (equal widths over
    the range of a strided sample of the rows) holding, per cell, the sample row with the
    least last column among the rows that lie weakly below the cell's lower corner (each
    sample row is placed in the first cell whose corner is >= it, then prefix minima).
    Every row of a cell whose value is below the cell's entry in the last column is
    dominated by that entry (checked exactly by the caller, which also guards against
    rounding at cell edges). Returns (values, rows, lower bounds, inverse widths)."""
    n, m = c.shape
    nb = m - 1
    lo = np.empty(nb)
    inv = np.empty(nb)
    for k in range(nb):
        a = np.inf
        b = -np.inf
        for i in range(0, n, step):
            v = np.float64(c[i, k])
            a = min(a, v)
            b = max(b, v)
        lo[k] = a
        inv[k] = g / (b - a) if b > a else 0.0
    ncell = g**nb
    gval = np.full(ncell, np.inf)
    grow = np.full(ncell, -1, dtype=np.int64)
    for i in range(0, n, step):
        cell = 0
        ok = True
        for k in range(nb):
            v = np.ceil((np.float64(c[i, k]) - lo[k]) * inv[k])
            if not (v >= 0.0 and v < g):
                ok = False
                break
            cell = cell * g + int(v)
        if ok and c[i, m - 1] < gval[cell]:
            gval[cell] = c[i, m - 1]
            grow[cell] = i
    # prefix minima along each axis in turn: the minimum over all cells weakly below
    stride = 1
    for _ in range(nb):
        for t in range(ncell):
            if (t // stride) % g > 0 and gval[t - stride] < gval[t]:
                gval[t] = gval[t - stride]
                grow[t] = grow[t - stride]
        stride *= g
    return gval, grow, lo, inv


# -- the passes (inlined into the per-m variants below) --------------------------------------


@njit(inline="always")
def _load_row(c, i, x, d):
    """Copy row ``i`` into ``x``; False when a value is NaN or infinite."""
    fin = True
    for k in range(d):
        v = c[i, k]
        x[k] = v
        if np.float64(v) - np.float64(v) != 0.0:  # NaN for inf / NaN
            fin = False
    return fin


@njit(inline="always")
def _vector_dominates(a, b, stride, x, d):
    """True when the vector ``a[b + k stride]`` (k < d) dominates ``x``; stops at the first
    column where it is larger."""
    le = True
    lt = False
    for k in range(d):
        v = a[b + np.uint64(k) * stride]
        if v > x[k]:
            le = False
            break
        if v < x[k]:
            lt = True
    return le and lt


@njit(inline="always")
def _pivot_dominates(pv, ps, x, d):
    """True when a pivot dominates ``x``. Pivots are column-major in ``pv`` (column k at
    ``k ps``, +inf padded to a multiple of 8) and checked 8 at a time in branch-free windows
    (``all(p <= x) and any(p < x)``), stopping after the first window that holds a
    dominator (the best pivots come first)."""
    ups = np.uint64(ps)
    # the first pivot (the rank-sum minimizer) alone drops most rows of correlated data
    if _vector_dominates(pv, np.uint64(0), ups, x, d):
        return True
    s = 0
    while s < ps:
        cnt = 0
        for p in range(PIV_W):
            u = np.uint64(s + p)
            v = pv[u]
            le = v <= x[0]
            lt = v < x[0]
            for k in range(1, d):
                v = pv[u + np.uint64(k) * ups]
                le &= v <= x[k]
                lt |= v < x[k]
            cnt += le & lt
        if cnt:
            return True
        s += PIV_W
    return False


@kernel_factory
def _passes(d, parallel):
    """(first-round pass, later-round pass) compiled for ``d`` columns, parallel or serial:
    closures over ``d`` (see :mod:`._jit`), built once per process."""
    def drop_first(c, pv, ps, gval, grow, glo, ginv, g, out):
        """First round over all rows of ``c``: each chunk writes the row numbers no pivot
        dominates at its own offset in ``out``, then the chunks are packed; returns the
        count kept and whether every value is finite. One read of ``c``, O(n P m). For m <=
        4 (``g > 0``) the grid is consulted between the first pivot and the others."""
        n = c.shape[0]
        nch = min(64, max(1, n // 16384))
        cnt = np.zeros(nch, dtype=np.int64)
        bad = np.zeros(nch, dtype=np.int64)
        ups = np.uint64(ps)
        for q in prange(nch):
            s = q * n // nch
            e = (q + 1) * n // nch
            x = np.empty(d, dtype=c.dtype)
            f = 0
            o = s
            for i in range(s, e):
                if not _load_row(c, i, x, d):
                    f = 1
                if _vector_dominates(pv, np.uint64(0), ups, x, d):  # most correlated rows
                    continue
                # The grid: the sample row with the least last column in the cell of x.
                # Written out here: as an inline helper with several exits it costs
                # reference counting in this loop (measured 5x slower).
                if g > 0:
                    cell = 0
                    for k in range(d - 1):
                        b = (np.float64(x[k]) - glo[k]) * ginv[k]
                        if not (b >= 0.0):
                            cell = -1
                            break
                        cell = cell * g + (int(b) if b < g else g - 1)
                    if cell >= 0 and gval[cell] < x[d - 1]:
                        r = grow[cell]
                        le = True
                        lt = False
                        for k in range(d):
                            v = c[r, k]
                            if v > x[k]:
                                le = False
                                break
                            if v < x[k]:
                                lt = True
                        if le and lt:
                            continue
                if not _pivot_dominates(pv, ps, x, d):
                    out[o] = i
                    o += 1
            cnt[q] = o - s
            bad[q] = f
        tot = 0
        ok = True
        for q in range(nch):
            s = q * n // nch
            for t in range(cnt[q]):
                out[tot + t] = out[s + t]
            tot += cnt[q]
            if bad[q]:
                ok = False
        return tot, ok

    def drop_indexed(c, idx, pv, ps, out):
        """A later round: compact into ``out`` the rows ``idx`` that no pivot dominates;
        returns the count kept and whether every value seen is finite. O(|idx| P m)."""
        nk = idx.shape[0]
        nch = min(64, max(1, nk // 16384))
        cnt = np.zeros(nch, dtype=np.int64)
        fin = np.zeros(nch)  # 1.0 where a chunk holds a non-finite value
        keep = np.empty(nk, dtype=np.bool_)
        for q in prange(nch):
            s = q * nk // nch
            e = (q + 1) * nk // nch
            x = np.empty(d, dtype=c.dtype)
            f = 0.0
            kk = 0
            for t in range(s, e):
                if not _load_row(c, idx[t], x, d):
                    f = 1.0
                dom = _pivot_dominates(pv, ps, x, d)
                keep[t] = not dom
                if not dom:
                    kk += 1
            cnt[q] = kk
            fin[q] = f
        ok = True
        for q in range(nch):
            if fin[q] != 0.0:
                ok = False
        start = np.zeros(nch + 1, dtype=np.int64)
        for q in range(nch):
            start[q + 1] = start[q] + cnt[q]
        for q in prange(nch):
            s = q * nk // nch
            e = (q + 1) * nk // nch
            o = start[q]
            for t in range(s, e):
                if keep[t]:
                    out[o] = idx[t]
                    o += 1
        return start[nch], ok

    tag = f"m{d}_{'par' if parallel else 'ser'}"
    return (compile_variant(drop_first, tag, parallel=parallel),
            compile_variant(drop_indexed, tag, parallel=parallel))


def prefilter(c):
    """Indices of the rows of ``c`` (n >= 1, m >= 2, float, C-contiguous) that no pivot
    dominates: a superset of the front. Raises ``check_costs``'s message when a value is not
    finite."""
    n, m = c.shape
    # first round straight over the rows (no index array), pivots from a strided sample
    nfs = _sample_front_rows(n)
    piv = _pivots(c, np.arange(0, n, max(1, n // nfs)), nfs)
    out = np.empty(n, dtype=np.int64)  # pages untouched beyond the survivors
    pv, ps = _pivot_block(c, piv)
    if m <= GRID_MAX_M:
        g = GRID[m]
        gval, grow, glo, ginv = _grid_table(c, max(1, n // 16384), g)
    else:
        g = 0
        gval = np.empty(0)
        grow = np.empty(0, dtype=np.int64)
        glo = ginv = np.zeros(1)
    kept, ok = _passes(m, n >= PAR_MIN)[0](c, pv, ps, gval, grow, glo, ginv, g, out)
    if not ok:
        check_costs(c)  # raises the canonical message
    idx = out[:kept]
    # more rounds pay only while the survivors are many: each picks new pivots (a sample
    # front, ~1 ms) and rereads them, while the final sweeps for m <= 3 are O(k log k)
    if kept <= (65536 if m <= 3 else 4096) or kept > (2 * n) // 3:
        return idx
    while True:
        k = idx.shape[0]
        piv = _pivots(c, idx, nfs)
        out = np.empty(k, dtype=np.int64)
        pv, ps = _pivot_block(c, piv)
        kept, ok = _passes(m, k >= PAR_MIN)[1](c, idx, pv, ps, out)
        idx = out[:kept]
        if kept <= 1024 or kept > (2 * k) // 3:
            return idx
