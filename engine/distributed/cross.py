"""The work that crosses partitions: Pareto front, ranks and counts, the ranking method's
scores (TOPSIS, VIKOR), the final rank.

Each function takes the per-partition futures of the criteria matrix (every criterion
minimized, host NumPy on the workers) and returns per-partition futures of a result column,
so nothing of the size of the table reaches the client. The algorithms and why they are
exact are in ``docs/distributed.md``; the kernels are ``gpurank.kernels`` (CPU).

Tasks are module-level functions (pickled by reference).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np
from gpurank.kernels import VikorStats, cpu
from gpurank.kernels.cpu.blocks import (
    box,
    box_relation,
    count_preceding,
    cross_domination_count,
    cross_max_rank,
    grid_key,
    sort_keys,
)
from gpurank.kernels.cpu.ranges import chain_rank
from gpurank.kernels.cpu.select import rank_order

from ..methods import method_of
from ..ranking import score_input
from .tasks import cpu_backend

__all__ = [
    "pareto_front_rows",
    "KeyBlocks",
    "key_blocks",
    "exact_counts",
    "exact_ranks",
    "clipped",
    "method_scores",
    "top_rows_by_score",
    "final_ranks",
]

# -- worker tasks ---------------------------------------------------------------------------


def _front_positions(costs):
    """Positions and costs of one partition's local Pareto front (its only rows that can be
    on the global front)."""
    on = cpu.pareto_front(costs) if len(costs) else np.zeros(0, bool)
    return np.flatnonzero(on), costs[on]


def _stack_rows(m, *pieces):
    if not pieces:
        return np.empty((0, m), dtype=np.float64)
    return np.ascontiguousarray(np.concatenate(pieces), dtype=np.float64)


def _strided(costs, stride):
    return costs[::stride]


def _block_of_rows(costs, grids, thresholds):
    """Key block of each row of one partition: the rows' order sorted by block (stable) and
    where each block starts in it."""
    k = len(thresholds) + 1
    if len(costs) == 0:
        return np.zeros(0, np.int64), np.zeros(k + 1, np.int64)
    block = np.searchsorted(thresholds, grid_key(costs, grids), side="right")
    order = np.argsort(block, kind="stable")
    return order, np.searchsorted(block[order], np.arange(k + 1)).astype(np.int64)


def _block_starts(sorted_blocks):
    return sorted_blocks[1]


def _rows_in_block(costs, sorted_blocks, p):
    order, starts = sorted_blocks
    return costs[order[starts[p]:starts[p + 1]]]


def _bounding_box(costs):
    return box(costs)


def _count_within(costs):
    return cpu.domination_count(costs) if len(costs) else np.zeros(0, np.int64)


def _count_across(costs_a, costs_b):
    return cross_domination_count(costs_a, costs_b)


def _add_counts(within, whole_blocks, *across):
    out = within.copy()
    out += whole_blocks
    for c in across:
        out += c
    return out


def _max_rank_across(block, earlier, earlier_rank):
    """Largest rank among the rows of an earlier block that dominate each row (-1: none)."""
    if box_relation(box(block), box(earlier)) == "none":
        return np.full(len(block), -1, dtype=np.int64)
    return cross_max_rank(block, earlier, earlier_rank)


def _rank_block(block, *across):
    """Ranks of one key block: longest chains inside it, seeded with 1 + the largest rank
    of its dominators in earlier blocks (bounds that never decrease along dominance, as
    ``chain_rank`` needs: a row's dominators' dominators are its own)."""

    lower = np.zeros(len(block), dtype=np.int64)
    for c in across:
        np.maximum(lower, c + 1, out=lower)
    return chain_rank(block, lower)


def _rows_of(x, start, stop):
    return x[start:stop]


def _back_to_partition(sorted_blocks, dtype, *pieces):
    """One partition's results back in its row order from its pieces of every block."""
    order = sorted_blocks[0]
    out = np.empty(len(order), dtype=dtype)
    if len(order):
        out[order] = np.concatenate(pieces)
    return out


def _limited_values(costs, limit, what):
    """``min(pareto_rank, limit)`` (``what="rank"``) or ``min(domination_count, limit)``."""
    if len(costs) == 0:
        return np.zeros(0, np.int64)

    if what == "rank":
        return cpu.pareto_rank(costs, depth=limit)
    return cpu.domination_count(costs, cap=limit)


def _below_limit(costs, limit, what):
    """Candidates of one partition: positions and costs of the rows below the limit."""
    cand = np.flatnonzero(_limited_values(costs, limit, what) < limit)
    return cand, np.ascontiguousarray(costs[cand])


def _merge_limited(limit, what, m, *cand_costs):
    return _limited_values(_stack_rows(m, *cand_costs), limit, what)


def _scatter_limited(n, limit, local, merged, start, dtype):
    out = np.full(n, limit, dtype=dtype)
    cand = local[0]
    out[cand] = merged[start:start + len(cand)]
    return out


def _count(x):
    return len(x[0])


def _scores(costs, criteria, norm, stats, weights):
    matrix, kernel_norm = score_input(costs, criteria, norm, backend=cpu_backend())
    if len(matrix) == 0:
        return np.zeros(0, dtype=np.float64)
    # every criterion is a cost here (canonicalized at the boundary)
    return cpu.topsis_from_stats(matrix, stats, weights, np.zeros(len(weights), bool),
                                 norm=kernel_norm)


def _vikor_sr(costs, criteria, norm, stats, weights):
    """VIKOR's second pass on one partition: S and R, and their :class:`VikorStats`."""
    matrix, _ = score_input(costs, criteria, norm, backend=cpu_backend())
    s, r = cpu.vikor_sr(matrix, stats, weights, np.zeros(len(weights), bool))
    return s, r, VikorStats.of(s, r)


def _vikor_q(sr, stats, v):
    """VIKOR's third pass on one partition: Q from S and R and the merged extremes."""
    return cpu.vikor_from_sr(sr[0], sr[1], stats, v=v)


def _local_top(score, first, k):
    if len(score) == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    idx = cpu.top_k(score, k)
    return idx + first, score[idx]


def _partition_keys(score, prank, first):
    return sort_keys(score, prank, np.arange(len(score), dtype=np.int64) + first)


def _key_sample(keys, stride):
    return tuple(x[::stride] for x in keys)


def _cut_positions(keys, splitters):
    """Where the splitters fall in one partition's sorted keys: bucket b of the partition
    is ``keys[cut[b]:cut[b+1]]``."""
    inner = count_preceding(*splitters, keys) if len(splitters[0]) else np.zeros(0, np.int64)
    return np.concatenate(([0], inner, [len(keys[0])])).astype(np.int64)


def _keys_in_bucket(keys, cuts, b):
    return tuple(x[cuts[b]:cuts[b + 1]] for x in keys)


def _rank_bucket(first_rank, *pieces):
    """Final ranks of one bucket (each key in it comes after ``first_rank - 1`` keys of the
    earlier buckets): ``(row_id, rank)`` ordered by row id."""
    s, p, ids = (np.concatenate([pc[j] for pc in pieces]) for j in range(3))
    ids = ids[rank_order(s, p, ids)]
    rank = np.arange(first_rank, first_rank + len(ids), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return ids[order], rank[order]


def _ranks_of_partition(bucket, lo, hi):
    ids, rank = bucket
    a, b = np.searchsorted(ids, [lo, hi])
    return ids[a:b], rank[a:b]


def _assemble_ranks(n, first, *pieces):
    out = np.empty(n, dtype=np.int64)
    for ids, rank in pieces:
        out[ids - first] = rank
    return out


# -- driver side ----------------------------------------------------------------------------


def pareto_front_rows(client, costs, firsts, m):
    """Row ids of the Pareto front: local fronts per partition, then one merge."""
    local = [client.submit(_front_positions, c) for c in costs]
    positions = client.gather([client.submit(operator.getitem, f, 0) for f in local])
    survivors = client.gather([client.submit(operator.getitem, f, 1) for f in local])
    stacked = _stack_rows(m, *survivors)
    on = cpu.pareto_front(stacked) if len(stacked) else np.zeros(0, bool)
    rows, pos = [], 0
    for first, p, sv in zip(firsts, positions, survivors):
        rows.append(first + p[on[pos:pos + len(sv)]])
        pos += len(sv)
    return np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64)


#: Rows of the strided cost sample the key grids and block boundaries are picked from.
KEY_SAMPLE_ROWS = 200_000
#: Quantile grid points per criterion for the rank-sum key.
KEY_GRID = 4096
#: Target rows per key block (at least 2 blocks per worker). Block pairs cost ~K N log^3 in
#: all, so blocks are large: a pair of 2 x 2.5M rows holds ~160 MB of costs plus ~0.5 GB of
#: divide-and-conquer work arrays.
BLOCK_ROWS = 2_500_000


@dataclass(frozen=True)
class KeyBlocks:
    """The rows regrouped into K blocks of consecutive ranges of a dominance-compatible key.

    Attributes
    ----------
    sorted_blocks : list of futures
        Per input partition: its rows' order sorted by block, and where each block starts.
    sizes : ndarray of int64, shape (P, K)
        Rows of partition i in block p.
    blocks : list of futures
        The costs of each block (pieces of every partition, concatenated).
    """

    sorted_blocks: list
    sizes: np.ndarray
    blocks: list

    @property
    def count(self) -> int:
        return self.sizes.shape[1]


def key_blocks(client, costs, n_rows, m) -> KeyBlocks:
    """Regroup the costs into key blocks: block p can only be dominated by rows of blocks
    0..p (see ``docs/distributed.md``: the key of a dominator is never larger)."""
    from distributed import wait

    P = len(costs)
    stride = max(1, n_rows // KEY_SAMPLE_ROWS)
    smp = [x for x in client.gather([client.submit(_strided, c, stride) for c in costs])
           if len(x)]
    smp = np.concatenate(smp) if smp else np.empty((0, m))
    qs = np.linspace(0.0, 1.0, KEY_GRID + 1)[1:-1]
    grids = tuple(np.unique(np.quantile(smp[:, j], qs, method="lower")) if len(smp)
                  else np.empty(0) for j in range(m))
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    want = max(2 * n_workers, -(-n_rows // BLOCK_ROWS))
    keys = np.sort(grid_key(smp, grids)) if len(smp) else np.empty(0, np.int64)
    thresholds = (np.unique(keys[(len(keys) * np.arange(1, want)) // want]) if len(keys)
                  else np.empty(0, np.int64))
    thresholds = thresholds[thresholds > keys[0]] if len(keys) else thresholds
    K = len(thresholds) + 1
    sorted_blocks = [client.submit(_block_of_rows, c, grids, thresholds) for c in costs]
    starts = client.gather([client.submit(_block_starts, b) for b in sorted_blocks])
    sizes = np.diff(np.array(starts).reshape(P, K + 1), axis=1)
    blocks = []
    for p in range(K):
        pieces = [client.submit(_rows_in_block, costs[i], sorted_blocks[i], p)
                  for i in range(P) if sizes[i, p]]
        blocks.append(client.submit(_stack_rows, m, *pieces))
    wait(blocks + sorted_blocks)
    return KeyBlocks(sorted_blocks=sorted_blocks, sizes=sizes, blocks=blocks)


def _to_partitions(client, kb, per_block, dtype, priority=0):
    """Per-block arrays back to the input partitions, in their row order."""
    out = []
    for i in range(kb.sizes.shape[0]):
        pieces = []
        for p in range(kb.count):
            if kb.sizes[i, p]:
                start = int(kb.sizes[:i, p].sum())
                pieces.append(client.submit(_rows_of, per_block[p], start,
                                            start + int(kb.sizes[i, p]), priority=priority))
        out.append(client.submit(_back_to_partition, kb.sorted_blocks[i], dtype, *pieces,
                                 priority=priority))
    return out


def exact_counts(client, kb: KeyBlocks):
    """Domination counts per partition (futures): each block's own counts plus the counts
    from each earlier block (later blocks cannot dominate), a pair settled by the blocks'
    bounding boxes when they are disjoint or one lies wholly below the other.

    Returns
    -------
    (futures, pairs compared, pairs settled by boxes)
    """
    total = kb.sizes.sum(axis=0)
    boxes = client.gather([client.submit(_bounding_box, b) for b in kb.blocks])
    per_block, pairs, settled = [], 0, 0
    for p in range(kb.count):
        within = client.submit(_count_within, kb.blocks[p])
        whole, across = 0, []
        for j in range(p):
            if not total[p] or not total[j]:
                continue
            relation = box_relation(boxes[p], boxes[j])
            if relation == "none":
                settled += 1
            elif relation == "all":
                whole += int(total[j])
                settled += 1
            else:
                pairs += 1
                across.append(client.submit(_count_across, kb.blocks[p], kb.blocks[j]))
        per_block.append(client.submit(_add_counts, within, whole, *across))
    return _to_partitions(client, kb, per_block, np.int64), pairs, settled


def exact_ranks(client, kb: KeyBlocks):
    """Exact Pareto ranks per partition (futures) without one round trip per front: block p
    is ranked once every earlier block is, with lower bounds from each earlier block. The
    whole graph is submitted at once (priority 1: the chain of blocks is the critical path).

    Returns
    -------
    (futures, cross-block tasks)
    """
    total = kb.sizes.sum(axis=0)
    ranked, pairs = [], 0
    for p in range(kb.count):
        across = []
        if total[p]:
            for j in range(p):
                if total[j]:
                    pairs += 1
                    across.append(client.submit(_max_rank_across, kb.blocks[p], kb.blocks[j],
                                                ranked[j], priority=1))
        ranked.append(client.submit(_rank_block, kb.blocks[p], *across, priority=1))
    return _to_partitions(client, kb, ranked, np.int32, priority=1), pairs


def clipped(client, costs, n_rows_each, limit, what, m):
    """``min(pareto_rank, limit)`` (``what="rank"``) or ``min(domination_count, limit)``
    (``"count"``) per partition: a local filter per partition, one merge of the candidates.

    A row's rank (count) inside a subset of the table is at most its value in the whole
    table, and the rows below the limit are closed under "dominates such a row", so the
    candidates hold every row below the limit with the dominators that decide it.

    Returns
    -------
    (futures, candidate rows merged)
    """
    dtype = np.int32 if what == "rank" else np.int64
    local = [client.submit(_below_limit, c, limit, what) for c in costs]
    sizes = client.gather([client.submit(_count, f) for f in local])
    cand = [client.submit(operator.getitem, f, 1) for f in local]
    merged = client.submit(_merge_limited, limit, what, m, *cand, priority=1)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    out = [client.submit(_scatter_limited, int(n), limit, f, merged, int(s), dtype)
           for n, f, s in zip(n_rows_each, local, starts)]
    return out, int(np.sum(sizes))


def method_scores(client, costs, spec, stats, weights):
    """The scores of ``spec.method`` per partition, and their merits (larger is better, the
    final rank's key): two lists of futures. ``stats`` are the
    :class:`~gpurank.kernels.TopsisStats` of the whole table merged on the client.

    TOPSIS scores each partition from ``stats`` in one pass. VIKOR takes two: S and R per
    partition, whose :class:`~gpurank.kernels.VikorStats` are merged on the client (four
    numbers each), then Q per partition.
    """
    method, criteria, norm = method_of(spec.method), spec.criteria, spec.norm
    if method.name == "vikor":
        sr = [client.submit(_vikor_sr, c, criteria, norm, stats, weights) for c in costs]
        merged = VikorStats.merge(client.gather(
            [client.submit(operator.itemgetter(2), f) for f in sr]))
        scores = [client.submit(_vikor_q, f, merged, spec.vikor_v) for f in sr]
    else:
        scores = [client.submit(_scores, c, criteria, norm, stats, weights) for c in costs]
    if method.higher_is_better:
        return scores, scores
    return scores, [client.submit(method.merit, s) for s in scores]


def top_rows_by_score(client, scores, firsts, k):
    """Row ids of the ``k`` largest scores (ties by row id): per-partition top k, merged."""
    tops = client.gather([client.submit(_local_top, s, int(f), k)
                          for s, f in zip(scores, firsts)])
    ids = np.concatenate([t[0] for t in tops])
    vals = np.concatenate([t[1] for t in tops])
    # The lists come in partition order (row ids increasing), each best first with ties by
    # row id, so among equal scores a lower position is a lower row id: the kernel's ties
    # by position are the ties by row id.
    return ids[cpu.top_k(vals, k)]


#: Keys of the final-rank sample the splitters are picked from, and rows per bucket.
RANK_SAMPLE_ROWS = 200_000
RANK_BUCKET_ROWS = 4_000_000


def final_ranks(client, scores, pareto_ranks, firsts, n_rows_each, n_rows):
    """``rank`` (1 = best by -score, pareto_rank, row id) of every row, per partition.

    A sample sort: each partition sorts its keys; splitters from a strided sample of the
    sorted keys cut the key range into buckets of ~4M rows; bucket b gathers its pieces
    from every partition, sorts them and numbers them after the rows of the earlier buckets
    (counted from the partitions' cut positions); the ranks go back by row id. O(N log N).

    Returns
    -------
    (futures, buckets)
    """
    P = len(scores)
    keys = [client.submit(_partition_keys, s, r, int(f))
            for s, r, f in zip(scores, pareto_ranks, firsts)]
    stride = max(1, n_rows // RANK_SAMPLE_ROWS)
    smp = client.gather([client.submit(_key_sample, k, stride) for k in keys])
    ss, sp, si = sort_keys(*(np.concatenate([x[j] for x in smp]) for j in range(3)))
    B = int(min(max(1, -(-n_rows // RANK_BUCKET_ROWS)), max(1, len(ss))))
    pick = (len(ss) * np.arange(1, B)) // B
    splitters = (ss[pick], sp[pick], si[pick])
    cuts = [client.submit(_cut_positions, k, splitters) for k in keys]
    sizes = np.diff(np.array(client.gather(cuts)).reshape(P, B + 1), axis=1)
    first_rank = 1 + np.concatenate(([0], np.cumsum(sizes.sum(axis=0))[:-1]))
    buckets = []
    for b in range(B):
        pieces = [client.submit(_keys_in_bucket, keys[i], cuts[i], b)
                  for i in range(P) if sizes[i, b]]
        buckets.append(client.submit(_rank_bucket, int(first_rank[b]), *pieces))
    out = []
    for i in range(P):
        lo, hi = int(firsts[i]), int(firsts[i] + n_rows_each[i])
        pieces = [client.submit(_ranks_of_partition, buckets[b], lo, hi)
                  for b in range(B) if sizes[i, b]]
        out.append(client.submit(_assemble_ranks, int(n_rows_each[i]), lo, *pieces))
    return out, B

