"""Exact Pareto ranks and domination counts across Dask workers: a divide and conquer over
key ranges (two to four criteria).

The table is never gathered: no task holds more than about ``block_rows`` rows. Steps
(``docs/distributed.md`` has the work and depth of each, and why the result is exact):
**groups** of consecutive partitions; **key ranges**, ``K`` blocks of the lexicographic
order cut by splitter rows of a sample (a row is dominated only by rows of its own block or
earlier ones), and per other criterion *slabs* whose values become dense ranks
(:func:`gpurank.kernels.cpu.ranges.range_index`); **leaves**, each block's own counts
(``cpu.domination_count``) and ranks by ENS with lower bounds
(:func:`~gpurank.kernels.cpu.ranges.chain_rank`); **merge steps** over a balanced binary
tree of the blocks, where node ``[lo, hi)`` adds to every row of ``[mid, hi)`` how many rows
of ``[lo, mid)`` lie below it and their largest rank, in tasks over slabs of at most about
``block_rows`` rows (counts and ranks from the same tasks; a block is ranked once every node
adding to it is done); and **back**, every block's results cut into the partitions' rows.

The cuts and their cost, said before the work, are planned in :mod:`.dominance_plan`.
:func:`exact_dominance` submits the steps phase by phase, one function each. Tasks are
module-level functions (pickled by reference); everything is submitted as one graph, so Dask
schedules it and recomputes what a lost worker held.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gpurank.kernels import cpu
from gpurank.kernels.cpu.ranges import (
    below,
    below_cells,
    cell_totals,
    chain_rank,
    order_of,
    range_index,
    slab_ranks,
)
from numba import get_num_threads, set_num_threads

from .dominance_plan import DominancePlan, groups, kinds_for, plan, supported

__all__ = ["BLOCK_ROWS", "SAMPLE_ROWS", "DominancePlan", "plan", "supported", "exact_dominance"]

#: The most rows one task holds: rows per group, block and slab, and per merge-step task.
#: A block's count leaf at 2.5M rows of four criteria takes ~9 s and ~0.5 GB on one core.
BLOCK_ROWS = 2_500_000
#: Rows of the strided sample the splitters are picked from.
SAMPLE_ROWS = 200_000
#: Task priority of the rank chain (the critical path); the count leaves run at 0.
CHAIN = 10


# -- worker tasks ---------------------------------------------------------------------------


def _stack(m, *parts):
    if not parts:
        return np.empty((0, m), dtype=np.float64)
    if len(parts) == 1:
        return np.ascontiguousarray(parts[0], dtype=np.float64)
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float64)


def _strided(costs, stride):
    return np.ascontiguousarray(costs[::stride])


def _runs(idx, count):
    """``idx``'s positions grouped by value (stable) as int32, and where each value starts."""

    order = order_of(idx).astype(np.int32)
    starts = np.searchsorted(idx[order], np.arange(count + 1)).astype(np.int64)
    return order, starts


def _x_index(costs, x_split):
    """The rows grouped by key block."""

    block = range_index(costs, x_split, list(range(costs.shape[1])))
    order, starts = _runs(block, len(x_split) + 1)
    return {"order": order, "starts": starts}


def _x_sizes(index):
    return np.diff(index["starts"])


def _block_piece(costs, index, b):
    return costs[index["order"][index["starts"][b]:index["starts"][b + 1]]]


def _slab_index(block, splits, kinds):
    """A block's rows grouped by slab, for every kind, and their cells (slab numbers)."""

    cells, runs = [], []
    for sp, kd in zip(splits, kinds):
        c = range_index(block, sp, list(kd.columns))
        runs.append(_runs(c, len(sp) + 1))
        cells.append(c.astype(np.int16))
    return {"cells": cells, "runs": runs}


def _slab_sizes(index):
    return [np.diff(r[1]) for r in index["runs"]]


def _slab_piece(block, index, k, s, kind):
    """A block's rows in slab ``s`` of kind ``k``: their positions in the block, the values
    of the kind's exact columns and their cells."""
    order, starts = index["runs"][k]
    rows = order[starts[s]:starts[s + 1]]
    vals = np.ascontiguousarray(block[np.ix_(rows, list(kind.exact))])
    cells = (np.stack([index["cells"][c][rows] for c in kind.cells], axis=1) if kind.cells
             else np.zeros((len(rows), 0), dtype=np.int16))
    return {"pos": rows, "vals": vals, "cells": cells}


def _slab(kind, n_blocks, blocks, *pieces):
    """One slab (the pieces of the blocks ``blocks``, in that order): its rows' exact values
    as dense ranks (integers that compare the same), each block's rows sorted by the first
    exact column; where each block starts."""

    sizes = np.zeros(n_blocks, dtype=np.int64)
    sizes[list(blocks)] = [len(p["pos"]) for p in pieces]
    starts = np.concatenate(([0], np.cumsum(sizes)))
    ranks = slab_ranks(np.concatenate([p["vals"] for p in pieces]))
    pos = np.concatenate([p["pos"] for p in pieces])
    cells = np.concatenate([p["cells"] for p in pieces])
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi - lo > 1:
            o = lo + np.argsort(ranks[lo:hi, 0], kind="stable")
            ranks[lo:hi], pos[lo:hi], cells[lo:hi] = ranks[o], pos[o], cells[o]
    return {"starts": starts, "pos": pos, "ranks": ranks, "cells": cells}


def _slab_block(slab, b):
    """The rows of block ``b`` in one slab (copies: the slab is freed once cut)."""
    lo, hi = slab["starts"][b], slab["starts"][b + 1]
    return {"pos": slab["pos"][lo:hi].copy(), "ranks": slab["ranks"][lo:hi].copy(),
            "cells": slab["cells"][lo:hi].copy()}


def _count_leaf(costs):
    """The block's own domination counts, on one thread: the workers are the parallelism
    (two single-threaded workers on two cores, each count on two Numba threads, took 26 s
    a block of 2.5M rows against 11 s on one)."""

    if len(costs) == 0:
        return np.zeros(0, np.int64)
    before = get_num_threads()
    set_num_threads(1)  # for this thread only (Numba's setting is per thread)
    try:
        return cpu.domination_count(costs)
    finally:
        set_num_threads(before)


def _values(rank, piece):
    return rank[piece["pos"]]


def _fold(n, acc, *found):
    """Add one merge node's findings for a block's rows (one per task of the node that
    has rows of the block) to what the block has so far: the count of rows below it in
    earlier blocks, and the largest rank among them (-1: none). One fold per node and
    block keeps one (count, rank) pair per row alive between nodes, and writes it once per
    node (a fold per task rewrote it once per task: under memory pressure every copy was
    spilled)."""
    if acc is None:
        cnt, best = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int32)
    else:
        cnt, best = acc[0].copy(), acc[1].copy()
    for pos, c, b in found:  # a row is in one slab of a kind: distinct positions in each
        cnt[pos] += c
        best[pos] = np.maximum(best[pos], b)
    return cnt, best


def _rank_leaf(costs, acc):
    """The block's ranks: ENS seeded with 1 + the largest rank of each row's dominators in
    earlier blocks (from every merge step that adds to the block)."""

    n = len(costs)
    if n == 0:
        return np.zeros(0, np.int32)
    return chain_rank(costs, None if acc is None else acc[1].astype(np.int64) + 1)


def _count_total(leaf, acc):
    return leaf if acc is None else leaf + acc[0]


def _coordinates(kind, piece, left):
    """A piece's sweep key and its two other coordinates for :func:`below`: cells first
    (doubled, the contributors' odd, so that <= means an earlier cell), then the exact ranks
    after the first; a missing coordinate is 0."""
    r, c = piece["ranks"], piece["cells"]
    cols = [2 * c[:, j].astype(np.int64) + (1 if left else 0) for j in range(c.shape[1])]
    cols += [r[:, j].astype(np.int64) for j in range(1, r.shape[1])]
    while len(cols) < 2:
        cols.append(np.zeros(len(r), dtype=np.int64))
    return r[:, 0].astype(np.int64), cols[0], cols[1]


def _merge_slabs(kind, n_right, slabs):
    """One merge-step task over some slabs of a lexicographic kind: for every asker (a row
    of the node's right half) the rows of the left half below it in the slab.

    ``slabs``: per slab, ``(left, right)`` with ``left`` a list of (piece, values) and
    ``right`` a list of (right block number, piece). Returns per right block (by number)
    the (positions, counts, largest ranks) of its rows, over all the slabs.
    """

    found = [[] for _ in range(n_right)]
    for left, right in slabs:
        if not left or not right:
            continue
        parts = [(_coordinates(kind, p, True), _or_zeros(v, p)) for p, v in left]
        parts += [(_coordinates(kind, p, False), _or_zeros(None, p)) for _, p in right]
        first, second, third = (np.concatenate([q[0][i] for q in parts]) for i in range(3))
        value = np.concatenate([v for _, v in parts])
        nl = sum(len(p["pos"]) for p, _ in left)
        contributes = np.zeros(len(first), dtype=np.bool_)
        contributes[:nl] = True
        cnt, best = below(first, second, third, contributes, value)
        at = nl
        for j, p in right:
            k = len(p["pos"])
            found[j].append((p["pos"], cnt[at:at + k], best[at:at + k]))
            at += k
    return [_join(f) for f in found]


def _or_zeros(values, piece):
    """The left rows' ranks, or zeros when only counts are asked for (or for askers)."""
    return values if values is not None else np.zeros(len(piece["pos"]), np.int64)


def _join(found):
    """(positions, counts, largest ranks) of one right block over a task's slabs, int32."""
    if not found:
        return tuple(np.zeros(0, np.int32) for _ in range(3))
    return tuple(np.concatenate([f[i] for f in found]).astype(np.int32, copy=False)
                 for i in range(3))


def _sweep_cells_of(piece, left, shape):
    """A piece's cells for :func:`below_cells`: a missing cell is 0 for contributors and 1
    for askers (always below)."""
    c = piece["cells"]
    out = []
    for j in range(2):
        if j < c.shape[1]:
            out.append(c[:, j].astype(np.int64))
        else:
            out.append(np.full(len(c), 0 if left else 1, dtype=np.int64))
    return out


def grid_shape(kind, n_slabs):
    """The cell grid of the sweep kind: one side per strict cell (a missing one has two
    cells: contributors 0, askers 1)."""
    return tuple(n_slabs[c] if c is not None else 2 for c in
                 (list(kind.cells) + [None, None])[:2])


def _cell_histogram(shape, pieces):
    """Count and largest rank of a node's left rows per cell, over some sweep slabs."""

    cnt = np.zeros(shape, dtype=np.int64)
    best = np.full(shape, -1, dtype=np.int64)
    for p, v in pieces:
        cy, cz = _sweep_cells_of(p, True, shape)
        c, b = cell_totals(cy, cz, _or_zeros(v, p), shape)
        cnt += c
        np.maximum(best, b, out=best)
    return cnt, best


def _sweep_slabs(shape, n_right, earlier, slabs):
    """One merge-step task of the sweep kind over consecutive value slabs: the left rows
    before these slabs come in as cell totals (``earlier``), then a sweep in value order."""

    init_c = np.zeros(shape, dtype=np.int64)
    init_b = np.full(shape, -1, dtype=np.int64)
    for c, b in earlier:
        init_c += c
        np.maximum(init_b, b, out=init_b)
    keys, ys, zs, conts, vals, rights = [], [], [], [], [], []
    base = at = 0
    for left, right in slabs:  # slabs of values in order: a later slab's keys come after
        top = 0
        for p, v, is_left in [(p, v, True) for p, v in left] + [(p, j, False) for j, p in right]:
            cy, cz = _sweep_cells_of(p, is_left, shape)
            keys.append(p["ranks"][:, 0].astype(np.int64) + base)
            ys.append(cy)
            zs.append(cz)
            conts.append(np.full(len(cy), is_left, np.bool_))
            vals.append(_or_zeros(v if is_left else None, p))
            if not is_left:
                rights.append((v, p["pos"], at))
            at += len(cy)
            top = max(top, int(p["ranks"][:, 0].max(initial=0)))
        base += top + 1
    found = [[] for _ in range(n_right)]
    if rights:
        cnt, best = below_cells(np.concatenate(keys), np.concatenate(ys), np.concatenate(zs),
                                np.concatenate(conts), np.concatenate(vals), init_c, init_b)
        for j, pos, at in rights:
            found[j].append((pos, cnt[at:at + len(pos)], best[at:at + len(pos)]))
    return [_join(f) for f in found]


def _pick(items, j):
    return items[j]


def _block_results(counts, ranks):
    return counts, ranks


def _cut_results(results, lo, hi):
    return tuple(None if r is None else r[lo:hi].copy() for r in results)


def _group_results(n, x_index, want, *pieces):
    """A group's counts and ranks (those in ``want``) in its row order from its pieces of
    every block."""
    order = x_index["order"]
    out = []
    for j, dtype in enumerate((np.int64, np.int32)):
        if not want[j]:
            out.append(None)
            continue
        col = np.empty(n, dtype=dtype)
        if n:
            col[order] = np.concatenate([p[j] for p in pieces])
        out.append(col)
    return tuple(out)


def _rows(results, which, lo, hi):
    return results[which][lo:hi].copy()


# -- driver side ----------------------------------------------------------------------------


def _lex_splitters(sample, columns, k):
    """``k - 1`` rows of ``sample`` at its lexicographic quantiles in the order ``columns``
    (fewer when rows repeat), as a (s, len(columns)) array."""
    if len(sample) == 0 or k <= 1:
        return np.empty((0, len(columns)))
    cols = sample[:, list(columns)]
    order = np.lexsort(tuple(cols[:, j] for j in range(cols.shape[1] - 1, -1, -1)))
    picked = cols[order[(len(order) * np.arange(1, k)) // k]]
    keep = np.ones(len(picked), dtype=bool)
    keep[1:] = (picked[1:] != picked[:-1]).any(axis=1)
    return np.ascontiguousarray(picked[keep])


def _slab_groups(sizes, rows):
    """Consecutive slabs (indices with a non-zero size) grouped while they fit in ``rows``."""
    out, cur, total = [], [], 0
    for s, n in enumerate(sizes):
        if n == 0:
            continue
        if cur and total + n > rows:
            out.append(cur)
            cur, total = [], 0
        cur.append(s)
        total += int(n)
    if cur:
        out.append(cur)
    return out


@dataclass
class _Graph:
    """What the driver builds, phase by phase, and the merge tree is built from (futures and
    sizes); ``tasks`` counts every task submitted."""

    client: object
    kinds: tuple
    rows: int
    want_ranks: bool = True
    blocks: list = None  # blocks[b]: future of the block's criteria matrix
    block_rows: list = None  # block_rows[b]: its rows
    pieces: list = None  # pieces[k][s][b]: future or None
    psize: list = None  # psize[k]: (slabs, blocks) rows
    values: list = None  # values[k][s][b]: future of the left rows' ranks
    acc: list = None  # acc[b]: future of the block's (counts, largest ranks) so far
    ranks: list = None
    tasks: int = 0

    def submit(self, fn, *args, priority=CHAIN):
        self.tasks += 1
        return self.client.submit(fn, *args, priority=priority, pure=False)


@dataclass(frozen=True)
class _KeyRanges:
    """Where the rows go (phase 2): per group, its rows' block (``index``, futures); the rows
    of each group in each block (``sizes``, (groups, blocks)) and where they start there
    (``offsets``); per kind, the splitters of its slabs (``splits``)."""

    index: list
    sizes: np.ndarray
    offsets: np.ndarray
    splits: list


def exact_dominance(client, costs, n_each, m, *, counts=True, ranks=True, block_rows=None,
                    announce=None):
    """Exact domination counts and Pareto ranks per partition (futures), for 2 <= m <= 4.

    Parameters
    ----------
    client : distributed.Client
    costs : list of futures
        Per partition, its criteria matrix (float64, every criterion minimized).
    n_each : sequence of int
        Rows per partition.
    m : int
        Criteria.
    counts, ranks : bool
        Which to compute (the other is returned as None). Without ranks the merge steps wait
        for no rank and no block is ranked; without counts no block counts its own rows.
    block_rows : int, optional
        The most rows a task holds (default :data:`BLOCK_ROWS`).
    announce : callable, optional
        Called with one line (:meth:`DominancePlan.line`) before any work.

    Returns
    -------
    (counts, ranks, info)
        Lists of futures per partition (int64, int32) and a dict (``blocks``, ``slabs``,
        ``groups``, ``tasks``, ``fronts`` is left to the caller).
    """
    if not supported(m):
        raise ValueError(f"m must be 2, 3 or 4 for the divide and conquer; got {m}")
    rows = int(block_rows or BLOCK_ROWS)
    n_each = [int(n) for n in n_each]
    pl = plan(n_each, m, block_rows=rows)
    if announce is not None:
        announce(pl.line())
    gr = _Graph(client=client, kinds=kinds_for(m), rows=rows, want_ranks=bool(ranks))
    spans, gcosts = _stack_groups(gr, costs, n_each, m)
    keys = _key_ranges(gr, gcosts, m, sum(n_each))
    _cut_blocks(gr, gcosts, keys, m)
    del gcosts  # each phase waits, so that what it leaves behind is freed before the next
    _cut_slabs(gr, keys.splits)
    results = _leaves_and_merges(gr, counts)
    out_counts, out_ranks = _to_partitions(gr, results, spans, keys, n_each, (counts, ranks))
    info = {"blocks": len(gr.blocks), "slabs": max(len(p) for p in gr.pieces),
            "groups": len(spans), "tasks": gr.tasks, "plan": pl}
    return out_counts if counts else None, out_ranks if ranks else None, info


def _stack_groups(gr, costs, n_each, m):
    """Phase 1: consecutive partitions stacked into groups of at most about ``rows`` rows;
    the groups' partition spans and criteria matrices (futures)."""
    spans, gcosts = groups(n_each, gr.rows), []
    for a, b in spans:
        if b - a == 1:
            gcosts.append(costs[a])
        else:
            gcosts.append(gr.client.submit(_stack, m, *costs[a:b], pure=False))
            gr.tasks += 1
    return spans, gcosts


def _key_ranges(gr, gcosts, m, n):
    """Phase 2: splitters from a strided sample (of the key blocks, and of every kind's
    slabs) and every row's block."""
    client, G = gr.client, len(gcosts)
    K = max(1, -(-n // gr.rows))
    stride = max(1, n // SAMPLE_ROWS)
    smp = [x for x in client.gather([client.submit(_strided, c, stride) for c in gcosts])
           if len(x)]
    gr.tasks += G
    smp = np.concatenate(smp) if smp else np.empty((0, m))
    x_split = _lex_splitters(smp, tuple(range(m)), K)
    splits = []
    for kd in gr.kinds:
        if kd.sweep:
            col = smp[:, kd.columns[0]]
            qs = np.unique(np.quantile(col, np.arange(1, K) / K, method="lower")) if \
                len(col) and K > 1 else np.empty(0)
            splits.append(np.ascontiguousarray(qs.reshape(-1, 1)))
        else:
            splits.append(_lex_splitters(smp, kd.columns, K))
    K = len(x_split) + 1
    x_index = [client.submit(_x_index, c, x_split, pure=False) for c in gcosts]
    xs = np.array(client.gather([client.submit(_x_sizes, ix) for ix in x_index]),
                  dtype=np.int64).reshape(G, K)
    gr.tasks += 2 * G
    offsets = np.vstack([np.zeros(K, np.int64), np.cumsum(xs, axis=0)[:-1]]) if G else xs
    return _KeyRanges(index=x_index, sizes=xs, offsets=offsets, splits=splits)


def _cut_blocks(gr, gcosts, keys, m):
    """Every block stacked from its rows of each group (``gr.blocks``, ``gr.block_rows``);
    waits for them."""
    from distributed import wait

    client, xs = gr.client, keys.sizes
    gr.blocks, gr.block_rows = [], [int(x) for x in xs.sum(axis=0)]
    for b in range(xs.shape[1]):
        parts = [client.submit(_block_piece, gcosts[g], keys.index[g], b, pure=False)
                 for g in range(len(gcosts)) if xs[g, b]]
        gr.blocks.append(client.submit(_stack, m, *parts, pure=False))
        gr.tasks += len(parts) + 1
    wait(gr.blocks)


def _cut_slabs(gr, splits):
    """Phase 3: every block's rows by slab; every slab ranked and cut into one piece per
    block (``gr.pieces``, ``gr.psize``), one kind at a time (each waited for)."""
    from distributed import wait

    client, K = gr.client, len(gr.blocks)
    s_index = [client.submit(_slab_index, blk, splits, gr.kinds, pure=False)
               for blk in gr.blocks]
    ssz = client.gather([client.submit(_slab_sizes, ix) for ix in s_index])
    gr.tasks += 2 * K
    gr.psize, gr.pieces = [], []
    for k, kd in enumerate(gr.kinds):
        n_slabs = len(splits[k]) + 1
        ks = np.array([z[k] for z in ssz], dtype=np.int64).reshape(K, n_slabs).T
        row = []
        for s in range(n_slabs):
            have = [b for b in range(K) if ks[s, b]]
            parts = [client.submit(_slab_piece, gr.blocks[b], s_index[b], k, s, kd, pure=False)
                     for b in have]
            slab = client.submit(_slab, kd, K, have, *parts, pure=False) if have else None
            row.append([client.submit(_slab_block, slab, b, pure=False) if ks[s, b] else None
                        for b in range(K)])
            gr.tasks += 2 * len(have) + (1 if have else 0)
        wait([p for r in row for p in r if p is not None])
        gr.psize.append(ks)
        gr.pieces.append(row)


def _leaves_and_merges(gr, counts):
    """Phases 3-4, one graph: each block's own counts (leaves), the merge tree over the
    blocks (ranking each block once every node adding to it is submitted), and each block's
    results (futures of (counts, ranks))."""
    K = len(gr.blocks)
    gr.values = [[[None] * K for _ in pieces] for pieces in gr.pieces]
    gr.acc, gr.ranks = [None] * K, [None] * K
    leaves = [gr.submit(_count_leaf, blk, priority=0) for blk in gr.blocks] if counts else None
    _visit(gr, 0, K)
    totals = ([gr.submit(_count_total, leaves[b], gr.acc[b], priority=1) for b in range(K)]
              if counts else [None] * K)
    return [gr.submit(_block_results, totals[b], gr.ranks[b]) for b in range(K)]


def _to_partitions(gr, results, spans, keys, n_each, want):
    """Phase 5: the blocks' results back to the groups, then to the partitions (lists of
    futures of counts and of ranks, each empty when not ``want``-ed)."""
    out_counts, out_ranks = [], []
    for g, (a, b_) in enumerate(spans):
        lo, size = keys.offsets[g], keys.sizes[g]
        pieces_g = [gr.submit(_cut_results, results[b], int(lo[b]), int(lo[b] + size[b]))
                    for b in range(len(results)) if size[b]]
        res_g = gr.submit(_group_results, sum(n_each[a:b_]), keys.index[g], want, *pieces_g)
        at = 0
        for i in range(a, b_):
            if want[0]:
                out_counts.append(gr.submit(_rows, res_g, 0, at, at + n_each[i]))
            if want[1]:
                out_ranks.append(gr.submit(_rows, res_g, 1, at, at + n_each[i]))
            at += n_each[i]
    return out_counts, out_ranks


def _visit(gr, lo, hi):
    """The tree in order: a leaf is ranked once every node adding to it is submitted."""
    if hi - lo == 1:
        if not gr.want_ranks:
            return
        gr.ranks[lo] = gr.submit(_rank_leaf, gr.blocks[lo], gr.acc[lo])
        for k in range(len(gr.kinds)):
            for s, row in enumerate(gr.pieces[k]):
                if row[lo] is not None:
                    gr.values[k][s][lo] = gr.submit(_values, gr.ranks[lo], row[lo])
        return
    mid = (lo + hi) // 2
    _visit(gr, lo, mid)
    _merge(gr, lo, mid, hi)
    _visit(gr, mid, hi)


def _merge(gr, lo, mid, hi):
    """The merge step of node ``[lo, hi)``: tasks over slabs of each kind, each holding at
    most about ``rows`` rows; their findings folded into each right block once."""
    right = list(range(mid, hi))
    found = {b: [] for b in right}
    for k, kd in enumerate(gr.kinds):
        ps = gr.psize[k]
        left_n = ps[:, lo:mid].sum(axis=1)
        right_n = ps[:, mid:hi].sum(axis=1)
        if kd.sweep:
            # every slab with left rows matters to later askers: totals per group of slabs
            sizes = np.where((left_n > 0) | (right_n > 0), left_n + right_n, 0)
        else:
            sizes = np.where((left_n > 0) & (right_n > 0), left_n + right_n, 0)
        slab_groups = _slab_groups(sizes, gr.rows)
        earlier, seen_left = [], False
        shape = grid_shape(kd, [len(gr.pieces[c]) for c in range(len(gr.kinds))])
        for grp in slab_groups:
            slab_args = []
            for s in grp:
                left = [(gr.pieces[k][s][b], gr.values[k][s][b]) for b in range(lo, mid)
                        if gr.pieces[k][s][b] is not None]
                rgt = [(b - mid, gr.pieces[k][s][b]) for b in right
                       if gr.pieces[k][s][b] is not None]
                slab_args.append((left, rgt))
            has_right = any(r for _, r in slab_args)
            has_left = any(lft for lft, _ in slab_args)
            if kd.sweep:
                seen_left = seen_left or has_left
                if has_right and seen_left:
                    out = gr.submit(_sweep_slabs, shape, len(right), list(earlier), slab_args)
                    _collect(gr, out, right, grp, k, found)
                lefts = [lp for lft, _ in slab_args for lp in lft]
                if lefts:
                    earlier.append(gr.submit(_cell_histogram, shape, lefts))
            elif has_right:
                out = gr.submit(_merge_slabs, kd, len(right), slab_args)
                _collect(gr, out, right, grp, k, found)
    for b in right:
        if found[b]:
            gr.acc[b] = gr.submit(_fold, gr.block_rows[b], gr.acc[b], *found[b])


def _collect(gr, out, right, grp, k, found):
    """One getitem per right block that has rows in the task's slabs."""
    for j, b in enumerate(right):
        if any(gr.pieces[k][s][b] is not None for s in grp):
            found[b].append(gr.submit(_pick, out, j))
