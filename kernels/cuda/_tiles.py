"""The tile schedule's scalar decisions, written once in plain Python for two targets.

The CUDA kernels (:mod:`.count`, :mod:`.rank`) compile these functions with
``numba.cuda.jit(device=True, inline=True)``; the host mirror (:mod:`.schedule`) compiles
the same functions with ``numba.njit``, so the host counts exactly the pair tests the device
performs, at sizes the simulator cannot reach. This module imports nothing.

The scheme
----------
Rows are put in Z-order (Morton order) of their quantized criteria, ties by lexicographic
order and then by row index. Quantizing each column through a monotone map (the number of
sampled breakpoints at or below the value) and interleaving the bits level by level keeps
the dominance order: if ``a`` dominates ``b`` then every quantized coordinate of ``a`` is
<= that of ``b``, so the first interleaved bit where the codes differ is 0 in ``a``'s code;
equal codes fall back to the lexicographic order, in which a dominator also comes first.
The order is therefore a linear extension of dominance: every dominator of a row precedes
it, which is what the rank sweep needs (the property ZSearch builds skylines on: Lee, Zheng,
Li & Lee, "Approaching the skyline in Z order", VLDB 2007). Z-order also keeps runs of
consecutive rows compact in every criterion (Orenstein & Merrett, PODS 1984), so the
bounding boxes of sorted tiles are small, which is what the pruning needs.

The sorted rows are cut into tiles of T rows; a complete binary tree over the tiles (heap
numbering: node 1 is the root, the leaves are ``npow + tile``) holds the bounding box of
every node. A tile of target rows walks that tree depth first over the tiles its
dominators can come from, and each node's corners decide it (:func:`box_relation`): none
of its rows can dominate any target row (skipped), all of them dominate every target row
(counted at once, or its maximum rank used at once), or undecided (children visited;
undecided leaves are tested row by row). This is the box pruning of skyline algorithms over
R-trees (BBS: Papadias, Tao, Fu & Seeger, SIGMOD 2003) and of the partition-pruned GPU
skylines (Bøgh, Chester & Assent, "Work-efficient parallel skyline computation for the
GPU", PVLDB 8(9), 2015), used here for counts and ranks rather than the front only.

Work: box pruning leaves the pairs near the boundary of each target tile's dominance
orthant to row tests, about n^(2 - 1/m) of them for spread-out data (the bound of k-d tree
orthant counting), against n^2 / 2 without pruning; the host mirror counts them.
"""

__all__ = ["SKIP", "ALL", "SPLIT", "DONE", "FULL", "LEAF", "SKIPPED", "PRUNED", "UNRANKED",
           "box_relation",
           "rows_in", "node_tiles", "compile_walk", "morton_code", "key_compare"]

SKIP = 0  # no row of the source node dominates any row of the target node
ALL = 1  # every row of the source node dominates every row of the target node
SPLIT = 2  # undecided by the corners

# walk() results
DONE = 0
FULL = 1  # a node (in range) whose rows all dominate every target row
LEAF = 2  # a tile (in range) to test row by row
SKIPPED = 3  # a node decided by its corners: nothing to add
PRUNED = 4  # a node whose largest rank cannot raise any target row's bound (ranks only)

#: The rank of a row the front-by-front peel has not ranked yet: above every front, and
#: safe to add 1 to in int32 (the walk compares ``nodemax + 1``).
UNRANKED = 2**30


def box_relation(lo, hi, a, b, m):
    """How the rows in the box of node ``a`` relate to those in the box of node ``b``.

    ``lo[v, k]`` and ``hi[v, k]`` are the smallest and largest value of column ``k`` over
    the rows of node ``v`` (+inf and -inf for an empty node). Exact comparisons only.

    Returns
    -------
    SKIP when some column has ``lo[a] > hi[b]`` (no row of ``a`` is <= any row of ``b``
    there), ALL when ``hi[a] <= lo[b]`` in every column and ``<`` in one (each pair is then
    <= everywhere and < somewhere), SPLIT otherwise.
    """
    le = True
    strict = False
    for k in range(m):
        if lo[a, k] > hi[b, k]:
            return SKIP
        if hi[a, k] > lo[b, k]:
            le = False
        elif hi[a, k] < lo[b, k]:
            strict = True
    if le and strict:
        return ALL
    return SPLIT


def rows_in(a, b, n, t):
    """Rows of the tiles ``[a, b)`` of ``t`` rows each over ``n`` sorted rows."""
    return min(b * t, n) - min(a * t, n)


def node_tiles(v, npow):
    """The tiles ``[a, b)`` under node ``v`` of the heap-numbered tree over ``npow`` leaves."""
    d = 1
    span = npow
    while 2 * d <= v:
        d *= 2
        span //= 2
    a = (v - d) * span
    return a, a + span


def compile_walk(jit):
    """:func:`walk` compiled by ``jit`` (``numba.njit`` or ``numba.cuda.jit(device=True)``)
    with its helpers compiled by the same decorator (a compiled function can only call
    compiled functions)."""
    relation = jit(box_relation)
    tiles_of = jit(node_tiles)

    def walk(stack, sp, lo, hi, target, first, last, npow, m, reverse, nodemax, floor):
        """Advance the depth-first walk of a target tile over the source tiles ``[first, last)``.

        ``stack[:sp]`` holds the nodes still to visit (start with ``stack[0] = 1, sp = 1``).
        ``target`` is the target tile's leaf node; with ``reverse`` the target rows are the
        candidate dominators (``dominated_count``). Nodes wholly outside the range are dropped
        (the order decides them); the next node that needs the caller is returned.
        For the rank sweep, ``nodemax[v]`` is the largest rank of node ``v``'s rows and
        ``floor`` the smallest bound of the target rows: a whole node with ``nodemax[v] + 1
        <= floor`` cannot raise any bound and is pruned, and the later child is visited
        first (the dominators nearest in the order tend to have the largest ranks). The
        count kernels pass ``floor = -1`` (never prunes; earlier child first).

        Returns
        -------
        (code, node, a, b, sp): ``code`` is FULL, LEAF or SKIPPED for node ``node`` covering the
        tiles ``[a, b)`` (cut to the range), DONE when the walk is over; ``sp`` the new stack
        size. Earlier tiles are visited first (the left child is popped first).
        """
        while sp > 0:
            sp -= 1
            v = stack[sp]
            a0, b0 = tiles_of(v, npow)
            if b0 <= first or a0 >= last:
                continue
            if reverse:
                rel = relation(lo, hi, target, v, m)
            else:
                rel = relation(lo, hi, v, target, m)
            a = max(a0, first)
            b = min(b0, last)
            if rel == SKIP:
                return SKIPPED, v, a, b, sp
            whole = a == a0 and b == b0  # a node cut by the range is split
            if whole and floor >= 0 and nodemax[v] + 1 <= floor:
                return PRUNED, v, a, b, sp
            if rel == ALL and whole:
                return FULL, v, a, b, sp
            if v >= npow:
                return LEAF, v, a, b, sp
            if floor >= 0:
                stack[sp] = 2 * v
                stack[sp + 1] = 2 * v + 1
            else:
                stack[sp] = 2 * v + 1
                stack[sp + 1] = 2 * v
            sp += 2
        return DONE, 0, 0, 0, 0

    return jit(walk)


def morton_code(x, i, bp, nbp, m, bits):
    """Z-order code of row ``i`` of ``x``: column ``k`` quantized to ``bits`` bits by the
    number of its sorted breakpoints ``bp[k, :nbp]`` at or below the value (a monotone map),
    the bits interleaved from the highest level down, column 0 first within a level."""
    code = 0
    for k in range(m):
        v = x[i, k]
        lo = 0
        hi = nbp
        while lo < hi:  # bisect_right
            h = (lo + hi) // 2
            if bp[k, h] <= v:
                lo = h + 1
            else:
                hi = h
        q = (lo << bits) // (nbp + 1)
        for level in range(bits):
            code |= ((q >> level) & 1) << (level * m + (m - 1 - k))
    return code


def key_compare(codes, x, a, b, m):
    """-1, 0 or 1 as row ``a`` sorts before, with or after row ``b``: Z-order code, then
    lexicographic order of the criteria (ties left to the row index)."""
    if codes[a] < codes[b]:
        return -1
    if codes[a] > codes[b]:
        return 1
    for k in range(m):
        if x[a, k] < x[b, k]:
            return -1
        if x[a, k] > x[b, k]:
            return 1
    return 0
