"""ENS-BS non-dominated sorting over the lexicographic order ([Zhang2015]).

Rows are swept in lexicographic order, so every earlier row has c0 <= the current one's and,
groups of equal rows being handled together, an earlier row dominates the current row iff
its projection (c1, ..., c_{m-1}) is weakly below the current row's projection. A group gets
the first front none of whose members is weakly below it in projection, found by binary
search over the fronts (the predicate is monotone in the front index), then joins it.
``only_front=True`` keeps front 0 alone and gives every other row rank 1: a front test.

Lower bounds (``low``, the rows of one key range of a larger table, ranked after the ranges
before it): ``rank = max(low, 1 + largest rank of the row's dominators here)``, exact when
``low`` never decreases along dominance (a row's bound is at least the bound of every row
that dominates it; 1 + the largest rank of its dominators elsewhere is such a bound). The
search then starts at the row's own bound: for fronts ``f >= low`` "front ``f`` holds a
dominator" implies the same of front ``f - 1`` whenever ``f - 1 >= low``, because a row of
front ``f`` that dominates the current row either has a dominator of front ``f - 1`` here
(which dominates the current row too) or got ``f`` from its own bound, which would make the
current row's bound larger than ``f``. Fronts below the bound may be empty here.

Two ways to hold a front, one kernel each:

* :func:`ens_lex` (ranks for m = 3): each front keeps only the projections minimal among its
  members so far (a member weakly above a newer one can no longer be the only dominator of
  any later row), column-major in blocks of a shared pool with the least value of every
  column per group of 32 members; a group whose least values are not all below the row is
  skipped, the others are checked in one branch-free window. A front is sorted on its first
  projected column when it doubles or once more than half of it came unsorted, so groups
  stay compact. O(n log F K m) for K kept projections per front (the front's 2-D
  staircase), O(n^2 m) worst case.
* :func:`ens_kd` (ranks and the front for m >= 4): with three or more projected columns most
  members of a large front stay minimal, so pruned fronts grow to hundreds of thousands of
  projections. Here a front is a fresh block of up to ``KD_FRESH`` members (the pruned
  layout above) plus grouped k-d parts (:mod:`._kdtree`) whose group corners rule out
  98-99% of the groups (1-2% of the groups scanned on the anticorrelated benchmark, against
  30% for groups sorted on one column and 75% in arrival order). The parts follow the
  logarithmic method: level l holds about ``KD_FRESH * 2**l`` members, and a full fresh
  block is built, with the members of levels 0..l-1, into the first empty level l (a binary
  counter), so each member is rebuilt O(log(F / KD_FRESH)) times. Members of k-d parts are
  never pruned: a member weakly above a newer one is redundant, not wrong, and looking for
  such members cost more than scanning them (measured: 4x slower). O(n log F (G + 32 V) m)
  for G corners tested and V groups scanned per query, plus O(n log^2 n m) for the builds.

Both kernels are compiled once per number of projected columns ``d`` by a factory memoized
with :func:`._jit.kernel_factory` (``_make_ens_lex``, ``_make_ens_kd``): each returns a
closure over the constant ``d``, which Numba freezes into the machine code, so that every
column loop of the inlined helpers below (they take ``d`` as an argument) unrolls and the
member loops vectorize. Numba's disk cache keys a closure by its name, its code and the values it closes
over, so each ``d`` is compiled once per machine. The kernels are long because they are the
hot loop: every helper is inlined, and what is left is the sweep and its bookkeeping.

References: [Zhang2015] (``docs/references.md``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._jit import kernel_factory
from ._kdtree import part_build, part_layout, part_scan, weakly_below, window_count
from ._rank_grid import grid_cell, grid_cuts, grid_max, grid_raise
from ._sort import rows_equal

__all__ = ["W", "RESORT", "KD_FRESH", "KD_LEVELS", "ens_lex", "ens_kd"]

W = 32  # members per vectorized window and per group
RESORT = 2  # sort a front again once more than 1/RESORT of it came unsorted
KD_FRESH = 256  # members per fresh block of a k-d front (measured best among 128-1024)
KD_LEVELS = 32  # levels per k-d front: room for KD_FRESH * 2**32 members

# -- pruned blocks: column k at ``o + k cp`` (members [0, e)), then at ``o + d cp + k (cp >>
#    5)`` the least value of column k of every 32-member group (a lower bound) -------------


@njit(inline="always")
def _block_scan(pool, o, cp, e, x, d):
    """True when a member of the block at ``o`` (capacity ``cp``, ``e`` members) is weakly
    below ``x`` in every projected column. Groups are visited newest first; a group whose
    bounds are not all <= ``x`` is skipped, the others are checked in one branch-free
    window."""
    ucp = np.uint64(cp)
    mo = np.uint64(o + d * cp)
    ucg = np.uint64(cp >> 5)
    g = (e + 31) >> 5
    while g > 0:
        g -= 1
        if not weakly_below(pool, mo + np.uint64(g), ucg, x, d, False):
            continue
        s = g << 5
        if s + W <= e:
            if window_count(pool, np.uint64(o + s), ucp, x, d, W, False):
                return True
        else:
            for f in range(s, e):
                if weakly_below(pool, np.uint64(o + f), ucp, x, d, False):
                    return True
    return False


@njit(inline="always")
def _block_prune(pool, o, cp, e, x, d):
    """Remove the members weakly above ``x`` in every projected column (the last member
    moves into the hole, lowering its group's least values if needed); returns the new
    member count. Windows without a hit cost one vectorized pass."""
    ucp = np.uint64(cp)
    mo = np.uint64(o + d * cp)
    ucg = np.uint64(cp >> 5)
    s = 0
    while s < e:
        w = min(W, e - s)
        if window_count(pool, np.uint64(o + s), ucp, x, d, w, True) == 0:
            s += w
            continue
        f = s
        while f < s + w and f < e:
            uf = np.uint64(o + f)
            if weakly_below(pool, uf, ucp, x, d, True):
                e -= 1
                ue = np.uint64(o + e)
                ug = np.uint64(f >> 5)
                for k in range(d):
                    u = pool[ue + np.uint64(k) * ucp]
                    pool[uf + np.uint64(k) * ucp] = u
                    um = mo + np.uint64(k) * ucg + ug
                    if u < pool[um]:
                        pool[um] = u
            else:
                f += 1
        s = f
    return e


@njit(inline="always")
def _block_append(pool, o, cp, sz, x, d):
    """Append ``x`` as member ``sz`` of the block at ``o`` (capacity ``cp``): its columns,
    and its group's least values (set by the group's first member, lowered after)."""
    for k in range(d):
        pool[o + k * cp + sz] = x[k]
        gm = o + d * cp + k * (cp >> 5) + (sz >> 5)
        if sz & 31 == 0 or x[k] < pool[gm]:
            pool[gm] = x[k]


@njit(cache=True, nogil=True)
def _block_resort(pool, o, cp, sz, no, ncp, d, tmp):
    """Write the ``sz`` members of the block at ``o`` (capacity ``cp``) into the block at
    ``no`` (capacity ``ncp``; may be the same block) ordered by their first projected
    column, and set the exact least values of every 32-member group: sorted groups are
    compact in that column, so the scan skips most of them."""
    for t in range(d * sz):
        tmp[t] = pool[o + (t // sz) * cp + t % sz]
    srt = np.argsort(tmp[:sz])
    ng = ncp >> 5
    mo = no + d * ncp
    for k in range(d):
        for f in range(sz):
            pool[no + k * ncp + f] = tmp[k * sz + srt[f]]
        for g in range((sz + 31) >> 5):
            lo = np.inf
            for f in range(g << 5, min(sz, (g + 1) << 5)):
                lo = min(lo, pool[no + k * ncp + f])
            pool[mo + k * ng + g] = lo


@njit(inline="always")
def _group_low(low, order, i, j):
    """The largest lower bound among the equal rows ``order[i:j]`` (equal rows share their
    dominators, so their bounds agree when they come from them)."""
    b = 0
    for t in range(i, j):
        b = max(b, low[order[t]])
    return b


@njit(cache=True, nogil=True)
def _grow(pool, need):
    """``pool`` itself, or a copy at least ``need`` long (capacity doubling)."""
    if need <= pool.shape[0]:
        return pool
    nc = max(1024, pool.shape[0] * 2)
    while nc < need:
        nc *= 2
    p2 = np.empty(nc, dtype=pool.dtype)
    p2[: pool.shape[0]] = pool
    return p2


# -- ENS over pruned blocks in one pool ------------------------------------------------------


@kernel_factory
def _make_ens_lex(d):
    @njit(cache=True, nogil=True)
    def ens_lex_kernel(c, order, only_front, low):
        n, m = c.shape
        rank = np.empty(n, dtype=np.int32)
        seeded = low.shape[0] > 0
        nmax = 1 if only_front else n + (low.max() if seeded else 0)
        off = np.empty(nmax + 1, dtype=np.int64)
        cap = np.empty(nmax + 1, dtype=np.int64)
        size = np.zeros(nmax + 1, dtype=np.int64)
        pool = np.empty(max(1024, min(n, 65536) * d), dtype=c.dtype)
        fresh = np.zeros(nmax + 1, dtype=np.int64)  # members appended since the last sort
        tmp = np.empty(0, dtype=c.dtype)
        top = 0
        # duplicate-code: the sweep and its per-group steps are written out in both ENS
        # kernels: Numba-inlined helpers taking arrays cost reference counting per group
        # here, measured up to 1.9x slower, and plain compiled ones a call per group,
        # measured 9%; they would not see d either
        nf = 0
        x = np.empty(d, dtype=c.dtype)
        i = 0
        while i < n:
            head = order[i]
            j = i + 1
            while j < n and rows_equal(c, order[j], head, m):
                j += 1
            for k in range(d):
                x[k] = c[head, k + 1]
            lo = 0
            hi = nf
            if seeded:  # search from the group's bound (see the module docstring)
                lo = _group_low(low, order, i, j)
                hi = max(hi, lo)
            while lo < hi:  # the first front none of whose members is weakly below x
                mid = (lo + hi) >> 1
                if _block_scan(pool, off[mid], cap[mid], size[mid], x, d):
                    lo = mid + 1
                else:
                    hi = mid
            rk = lo
            for t in range(i, j):
                rank[order[t]] = rk
            i = j
            if only_front and rk > 0:
                continue
            while rk >= nf:  # a new front (and, below a bound, the empty ones before it)
                f_new = nf
                nf += 1
                blk = 32 * d + d  # 32 members and one group minimum per column
                pool = _grow(pool, top + blk)
                off[f_new] = top
                cap[f_new] = 32
                top += blk
                size[f_new] = 0
                fresh[f_new] = 0
            o = off[rk]
            cp = cap[rk]
            sz = _block_prune(pool, o, cp, size[rk], x, d)
            if sz == cp:  # move to the end of the pool with twice the capacity, sorted
                ncp = 2 * cp
                blk = ncp * d + (ncp >> 5) * d
                pool = _grow(pool, top + blk)
                if tmp.shape[0] < sz * d:
                    tmp = np.empty(2 * sz * d, dtype=c.dtype)
                _block_resort(pool, o, cp, sz, top, ncp, d, tmp)
                o = top
                cp = ncp
                off[rk] = o
                cap[rk] = cp
                top += blk
                fresh[rk] = 0
            elif fresh[rk] > 64 and RESORT * fresh[rk] > sz:  # many unsorted: sort again
                if tmp.shape[0] < sz * d:
                    tmp = np.empty(2 * sz * d, dtype=c.dtype)
                _block_resort(pool, o, cp, sz, o, cp, d, tmp)
                fresh[rk] = 0
            _block_append(pool, o, cp, sz, x, d)
            fresh[rk] += 1
            size[rk] = sz + 1
        return rank

    return ens_lex_kernel


# -- ENS over fresh blocks and grouped k-d parts ---------------------------------------------


@njit(inline="always")
def _doubled(fr, cp, sz, d):
    """The fresh block ``fr`` (capacity ``cp``, ``sz`` members) copied into one of twice
    the capacity."""
    ncp = 2 * cp
    fr2 = np.empty(ncp * d + (ncp >> 5) * d, dtype=fr.dtype)
    for k in range(d):
        for f in range(sz):
            fr2[k * ncp + f] = fr[k * cp + f]
        for g in range(cp >> 5):
            fr2[d * ncp + k * (ncp >> 5) + g] = fr[d * cp + k * (cp >> 5) + g]
    return fr2


@njit(inline="always")
def _carry(fr, cp, sz, q0, parts, psize, rows, empty, d):
    """Build the full fresh block and the levels q0.. of a front up to its first empty
    level into that level (binary-counter carry). Returns the scratch ``rows`` (grown if
    needed)."""
    q = q0
    tot = sz
    while psize[q] > 0:
        tot += psize[q]
        q += 1
    if rows.shape[0] < tot:
        rows = np.empty((2 * tot, d), dtype=rows.dtype)
    for f in range(sz):
        for k in range(d):
            rows[f, k] = fr[k * cp + f]
    t = sz
    for p in range(q0, q):
        part = parts[p]
        pcap = part_layout(psize[p], d)[0]
        for f in range(psize[p]):
            for k in range(d):
                rows[t, k] = part[k * pcap + f]
            t += 1
        parts[p] = empty
        psize[p] = 0
    parts[q] = part_build(rows, t, d)
    psize[q] = t
    return rows


@kernel_factory
def _make_ens_kd(d):
    # Memory stays O(n m): a fresh block starts at 32 members and doubles up to KD_FRESH,
    # and a front gets its KD_LEVELS k-d slots only when its fresh block first fills (so a
    # chain of n one-row fronts costs 32 projections per front, not 256 + 32 slots).
    @njit(cache=True, nogil=True)
    def ens_kd_kernel(c, order, only_front, cuts, low):
        n, m = c.shape
        seeded = low.shape[0] > 0
        nl = KD_LEVELS
        rank = np.empty(n, dtype=np.int32)
        empty = np.empty(0, dtype=c.dtype)
        fresh = [empty for _ in range(0)]  # front f: its fresh block
        fcap = np.zeros(16, dtype=np.int64)  # capacity of each fresh block
        fsize = np.zeros(16, dtype=np.int64)  # members in each fresh block
        base = np.full(16, -1, dtype=np.int64)  # first k-d slot of each front, -1: none yet
        parts = [empty for _ in range(0)]  # k-d slots: level l of front f at base[f] + l
        psize = np.zeros(16 * nl, dtype=np.int64)  # members per slot
        rows = np.empty((KD_FRESH, d), dtype=c.dtype)  # members being built into a level
        g1 = cuts.shape[1] + 2  # cells + 1: a Fenwick tree of maxima (:mod:`._rank_grid`)
        tree = np.full(g1 * g1 * g1 if d == 3 else 0, -1, dtype=np.int32)
        # duplicate-code: the sweep and its per-group steps written out, as in the kernel
        # above (measured there)
        nf = 0
        x = np.empty(d, dtype=c.dtype)
        i = 0
        while i < n:
            head = order[i]
            j = i + 1
            while j < n and rows_equal(c, order[j], head, m):
                j += 1
            for k in range(d):
                x[k] = c[head, k + 1]
            lo = 0
            hi = nf
            ca = cb = cc = 0
            if d == 3:  # the grid's bounds on the rank (d is a constant of this closure)
                ca = grid_cell(cuts, 0, x[0])
                cb = grid_cell(cuts, 1, x[1])
                cc = grid_cell(cuts, 2, x[2])
                lo = grid_max(tree, g1, ca, cb, cc) + 1
                hi = min(nf, grid_max(tree, g1, ca + 1, cb + 1, cc + 1) + 1)
            if seeded:  # search from the group's bound (see the module docstring)
                lo = max(lo, _group_low(low, order, i, j))
                hi = max(hi, lo)
            while lo < hi:  # the first front none of whose members is weakly below x
                mid = (lo + hi) >> 1
                hit = _block_scan(fresh[mid], 0, fcap[mid], fsize[mid], x, d)
                q = base[mid]
                while not hit and q >= 0 and q < base[mid] + nl:
                    hit = psize[q] > 0 and part_scan(parts[q], psize[q], x, d)
                    q += 1
                if hit:
                    lo = mid + 1
                else:
                    hi = mid
            rk = lo
            for t in range(i, j):
                rank[order[t]] = rk
            i = j
            if d == 3:
                grid_raise(tree, g1, ca, cb, cc, rk)
            if only_front and rk > 0:
                continue
            while rk >= nf:  # a new front (and, below a bound, the empty ones before it)
                if nf == fsize.shape[0]:
                    fcap = np.concatenate((fcap, np.zeros(nf, dtype=np.int64)))
                    fsize = np.concatenate((fsize, np.zeros(nf, dtype=np.int64)))
                    base = np.concatenate((base, np.full(nf, -1, dtype=np.int64)))
                fresh.append(np.empty(32 * d + d, dtype=c.dtype))
                fcap[nf] = 32
                nf += 1
            fr = fresh[rk]
            cp = fcap[rk]
            sz = _block_prune(fr, 0, cp, fsize[rk], x, d)
            if sz == cp:  # twice the capacity (cp < KD_FRESH: a full block is carried below)
                fr = _doubled(fr, cp, sz, d)
                cp = 2 * cp
                fresh[rk] = fr
                fcap[rk] = cp
            _block_append(fr, 0, cp, sz, x, d)
            sz += 1
            if sz == KD_FRESH:  # carry into the first empty level
                if base[rk] < 0:
                    base[rk] = len(parts)
                    for _ in range(nl):
                        parts.append(empty)
                    if psize.shape[0] < len(parts):
                        psize = np.concatenate((psize, np.zeros(psize.shape[0], dtype=np.int64)))
                rows = _carry(fr, cp, sz, base[rk], parts, psize, rows, empty, d)
                sz = 0
            fsize[rk] = sz
        return rank

    return ens_kd_kernel


_NO_BOUNDS = np.zeros(0, dtype=np.int32)


def ens_lex(c, order, only_front=False, low=None):
    """Ranks (or, with ``only_front``, 0 on the front and 1 elsewhere) of a finite
    C-contiguous matrix with m >= 2, given its lexicographic ``order``; pruned fronts.
    ``low``: int32 lower bounds per row, never decreasing along dominance (see the module
    docstring), or None."""
    low = _NO_BOUNDS if low is None else low
    return _make_ens_lex(c.shape[1] - 1)(c, order, only_front, low)


def ens_kd(c, order, only_front=False, low=None):
    """:func:`ens_lex` with fronts held as a fresh block and grouped k-d parts; for four
    columns the search over the fronts is narrowed by :mod:`._rank_grid`'s bounds."""
    d = c.shape[1] - 1
    cuts = (grid_cuts(c, order) if d == 3 and not only_front
            else np.empty((3, 0), dtype=c.dtype))
    low = _NO_BOUNDS if low is None else low
    return _make_ens_kd(d)(c, order, only_front, cuts, low)
