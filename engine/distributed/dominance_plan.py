"""The cuts and the cost of the exact divide and conquer of :mod:`.dominance`, said before
the work: which numbers of criteria it takes, the kinds of slabs of each criterion after the
first, the groups of consecutive partitions, and the plan (blocks, slabs, merge levels and a
bound on the tasks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["DominancePlan", "Kind", "groups", "kinds_for", "plan", "supported"]


def supported(m: int) -> bool:
    """Whether the divide and conquer handles ``m`` criteria (the merge steps compare at
    most three coordinates): 2 <= m <= 4."""
    return 2 <= m <= 4


@dataclass(frozen=True)
class Kind:
    """How the rows are cut along one criterion for the merge steps.

    Attributes
    ----------
    columns : tuple of int
        The lexicographic order the slabs are ranges of (a single column for the last
        criterion, whose slabs are ranges of values).
    exact : tuple of int
        Columns compared exactly inside a slab, ranked there; the first orders the slab.
    cells : tuple of int
        Earlier kinds whose slab numbers are compared strictly (the row's cells).
    sweep : bool
        The last criterion: slabs of values, swept in order with the cells in a Fenwick tree.
    """

    columns: tuple
    exact: tuple
    cells: tuple
    sweep: bool


def kinds_for(m: int) -> tuple:
    """The kinds of slabs for ``m`` criteria (criterion 0 orders the blocks)."""
    lex = tuple(Kind(columns=tuple(range(k, m)) + tuple(range(k)), exact=tuple(range(k, m)),
                     cells=tuple(range(k - 1)), sweep=False) for k in range(1, m - 1))
    return (*lex, Kind(columns=(m - 1,), exact=(m - 1,), cells=tuple(range(m - 2)),
                       sweep=True))


@dataclass(frozen=True)
class DominancePlan:
    """What an exact run costs, said before it starts: rows, partitions, groups, blocks,
    ``slabs`` per criterion after the first, ``levels`` of the merge tree (ceil(log2
    blocks)) and ``tasks``, a bound on the Dask tasks submitted."""

    rows: int
    partitions: int
    groups: int
    blocks: int
    slabs: int
    levels: int
    tasks: int

    def line(self) -> str:
        """The plan in one line, announced before the work."""
        return (f"exact Pareto ranks and domination counts: {_count(self.rows, 'row')} in "
                f"{_count(self.partitions, 'partition')} -> {_count(self.groups, 'group')}, "
                f"{_count(self.blocks, 'key block')} of <= ~{_per(self.rows, self.blocks):,} "
                f"rows, {_count(self.slabs, 'slab')} per criterion, "
                f"{_count(self.levels, 'merge level')}, about {_count(self.tasks, 'task')}")


def _per(n, k):
    return -(-n // max(k, 1))


def _count(n, what):
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def plan(n_each, m: int, *, block_rows: int) -> DominancePlan:
    """The shape of an exact run over partitions of ``n_each`` rows, with tasks of at most
    about ``block_rows`` rows, and a bound on its tasks (the run's own count is in its
    notes)."""
    b = int(block_rows)
    n = int(sum(n_each))
    k = max(1, -(-n // b))
    g = len(groups(n_each, b))
    nk = m - 1
    levels = math.ceil(math.log2(k)) if k > 1 else 0
    tasks = (4 * g + g * k + k  # groups, sample, block index and sizes; blocks
             + 2 * k + 3 * nk * k * k + nk * k  # slab index; pieces in and out of slabs
             + nk * k * k  # the left rows' ranks per piece
             + (nk + 1) * k * levels  # merge tasks over slabs, cell totals
             + nk * k * k + k * levels  # merge outputs per right block; one fold per node
             + 4 * k + g * (k + 1) + 2 * len(n_each))  # leaves, totals; results back
    return DominancePlan(rows=n, partitions=len(n_each), groups=g, blocks=k,
                         slabs=k if k > 1 else 1, levels=levels, tasks=int(tasks))


def groups(n_each, rows) -> list[tuple[int, int]]:
    """Consecutive partitions stacked while they fit in ``rows`` (a larger one alone): the
    ``(first, end)`` partition span of each group."""
    out, start, size = [], 0, 0
    for i, n in enumerate(n_each):
        if i > start and size + n > rows:
            out.append((start, i))
            start, size = i, 0
        size += int(n)
    out.append((start, len(n_each)))
    return out
