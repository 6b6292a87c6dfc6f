"""Host-side preparation shared by every ``smaa_topsis`` implementation.

SMAA over TOPSIS weights ranks the same rows under many weight vectors. Everything that does
not depend on the weights is computed here once, on the host, with the same NumPy
expressions for every implementation, so the reference, the Numba and the CUDA kernels see
bit-identical inputs and can be compared exactly (ties included).

The score used to rank rows under a weight vector ``w`` (normalized to sum to one)
------------------------------------------------------------------------------------
``C`` are the canonical costs (benefit columns negated), ``r`` the normalized costs of the
FULL table (``"vector"``: ``C / ||C||`` per column, ``"minmax"``: ``(C - min) / (max - min)``;
a column with zero norm or range is all zero), and for each row

    P[i, j] = r[i, j] - min_rows r[:, j]      (gap to the ideal,      >= 0)
    N[i, j] = max_rows r[:, j] - r[i, j]      (gap to the anti-ideal, >= 0)

with min and max taken over the full table (never over the candidates only). The full table's
column statistics are a :class:`~gpurank.kernels.TopsisStats` (``stats=``, e.g. merged over
the partitions of a table too large to hold, while only the candidate rows are passed), or
are computed from ``matrix``; every column is first brought to the unit range by the power
of two ``pre = 1 / scale`` (exact), so no column of huge or tiny values overflows or
underflows out of the ranking. The weighted
squared distances are ``D+ = sum_j (w_j P_ij)^2`` and ``D- = sum_j (w_j N_ij)^2`` (summed in
column order), and rows are ranked by

    q = D+ / D-        (lower is better; q = 1 when D+ = D- = 0, q = inf when only D- = 0)

which orders rows exactly as TOPSIS closeness ``d- / (d+ + d-) = 1 / (1 + sqrt(q))`` does.
Ties in ``q`` are broken by the lexicographic order of the canonical cost rows, then by the
lower row index. Every step above is monotone in floating point (subtraction, product with
``w_j >= 0``, square of a non-negative number, sum, division), so when row ``a`` dominates
row ``b`` the computed ``q_a <= q_b`` and the lexicographic tie-break puts ``a`` strictly
first: a row dominated by ``k`` or more rows can never be in the top ``k``, for any weights.

Values drawn in their intervals (``smaa_topsis_drawn``)
-------------------------------------------------------
When the rows' values are estimates (a model's predictions), each sample also draws one
factor ``f_i`` per row inside ``[lo_i, hi_i]`` (:class:`RowFactors`), shared by the row's
columns: column ``j`` moves to ``x_ij * f_i ** e_j`` (``e_j`` a small integer, computed as
``|e_j|`` rounded products and, for ``e_j < 0``, one division), or, where the matrix holds
logarithms of the values, to ``x_ij + e_j * t_i`` with ``t_i = log10(f_i)``. The draw is
log-linear with the point estimate at the median: ``u`` uniform on (0, 1), ``f = lo **
(1 - 2u)`` below one half and ``hi ** (2u - 1)`` above, clipped into ``[lo, hi]``. ``u`` is
a counter-based hash of (seed, sample, row id) and the power is :func:`exp2` of
``(1 - 2u) log2(lo)`` (additions, rounded products and a scaling by a power of two), so
every implementation computes each factor itself, bit for bit the same (:func:`draw_moves`
is the NumPy form): a row's factor in a sample does not depend on the other rows, the
candidate set, the batches or the number of threads.

The normalization, ideal and anti-ideal stay those of the undrawn table (its column
statistics, as above); a drawn value beyond the ideal (or the anti-ideal) of its column
counts as reaching it: ``P = max(r - rmin, 0)``, ``N = max(rmax - r, 0)``. Both stay
monotone in the drawn value. Clipping makes ties in ``q`` common (every row drawn beyond the
ideal in all weighted columns scores ``q = 0``), so they are broken by the weighted sum
``z = sum_j w_j r_j`` of the normalized drawn values (summed in column order; lower first:
farther beyond the ideal), then by the lexicographic order of the drawn canonical rows, then
by the lower row index. Each key is monotone in every drawn value, so a row whose drawn
values dominate another's ranks above it in that sample. Since every drawn row lies in the
box between its optimistic and pessimistic corners (:func:`corners`, computed with the same
operations), a row whose optimistic corner is dominated by the pessimistic corners of ``k``
or more rows is outside the top ``k`` in every sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._topsis_stats import stats_of
from ._validate import check_benefit, check_smaa_inputs

__all__ = [
    "EXP_TAYLOR",
    "GOLDEN",
    "LN2",
    "MAX_EXPONENT",
    "DrawnInput",
    "RowFactors",
    "capped_dominators",
    "check_factors",
    "corner_message",
    "corners",
    "draw_moves",
    "draw_params",
    "effective_exponent",
    "exp2",
    "gaps",
    "lex_order",
    "mix64",
    "move_bounds",
    "moved",
    "prepare",
    "prepare_drawn",
    "row_keys",
    "sample_keys",
    "seed_key",
    "uniforms",
    "unit_map",
    "unit_vectors",
    "unpermute",
    "winner_weight_sums",
]


def unit_map(stats, norm):
    """The per-column map ``r = (x * pre - offset) / div`` of the normalization, and the
    normalized column minimum and maximum ``(pre, offset, div, rmin, rmax)``, from the stats
    of the canonical costs; ``div`` is 0 for a column that cannot separate rows (all its
    ``r`` are 0)."""
    # The unit-range step of the TOPSIS scoring pass (``score_params``), with the norm or
    # range as a divisor: SMAA's quotient is rounded once, by NumPy and the CUDA kernels alike.
    scale = stats.scale
    e = np.frexp(scale)[1]
    pre = np.where(scale > 0, np.ldexp(1.0, np.minimum(1 - e, 1023)), 1.0)
    vlo, vhi = stats.lo * pre, stats.hi * pre
    if norm == "vector":
        offset, div = np.zeros_like(vlo), (scale * pre) * np.sqrt(stats.ssq)
    else:
        with np.errstate(invalid="ignore"):  # an empty table: inf - inf, no row to map
            offset, div = vlo, vhi - vlo
    with np.errstate(invalid="ignore"):
        rmin = np.divide(vlo - offset, div, out=np.zeros_like(div), where=div > 0)
        rmax = np.divide(vhi - offset, div, out=np.zeros_like(div), where=div > 0)
    return pre, offset, div, rmin, rmax


def unit_vectors(costs, norm, stats=None):
    """:func:`unit_map` of the canonical column statistics ``stats``, or of those of the
    canonical ``costs`` when None (None for a table without rows)."""
    if stats is None:
        if costs.shape[0] == 0:
            return None
        stats = stats_of(np.asarray(costs, dtype=np.float64))
    return unit_map(stats, norm)


def gaps(costs, norm, stats=None):
    """(P, N): gaps of every row of the canonical ``costs`` to the ideal and anti-ideal of
    the normalized FULL table, whose canonical column statistics are ``stats`` (those of
    ``costs`` when None)."""
    c = np.asarray(costs, dtype=np.float64)
    unit = unit_vectors(c, norm, stats)
    if unit is None:
        return c.copy(), c.copy()
    pre, offset, div, rmin, rmax = unit
    r = np.divide(c * pre - offset, div, out=np.zeros_like(c), where=div > 0)
    return np.ascontiguousarray(r - rmin), np.ascontiguousarray(rmax - r)


def lex_order(costs, rows):
    """``rows`` ordered by the lexicographic order of their cost rows, then by row index."""
    c = costs[rows]
    keys = [rows] + [c[:, j] for j in range(c.shape[1] - 1, -1, -1)]
    return rows[np.lexsort(keys)]


def prepare(matrix, weights_samples, benefit, *, k, norm, candidates, stats=None):
    """Everything the fast kernels need: (P, N for the candidates in tie-break order,
    weights, perm, k) with ``perm[t]`` the position in ``candidates`` of the t-th row."""
    costs, w, cand, k, stats = check_smaa_inputs(matrix, weights_samples, benefit, k=k,
                                                 norm=norm, candidates=candidates, stats=stats)
    p, nn = gaps(costs, norm, stats)
    pos = np.argsort(cand, kind="stable")  # positions; lex_order works on row ids
    ordered_rows = lex_order(costs, cand)
    perm = pos[np.searchsorted(cand[pos], ordered_rows)]
    return (np.ascontiguousarray(p[ordered_rows]), np.ascontiguousarray(nn[ordered_rows]), w,
            perm.astype(np.int64), k)


def unpermute(perm, *arrays):
    """Map outputs computed in tie-break order back to the order of ``candidates``."""
    out = []
    for a in arrays:
        r = np.empty_like(a)
        r[perm] = a
        out.append(r)
    return tuple(out)


# ---------------------------------------------------------------------------------------
# Values drawn in their intervals (model uncertainty)
# ---------------------------------------------------------------------------------------

#: Largest ``|exponent|``: a column moves as ``f ** e``, computed as ``|e|`` rounded products
#: (the same on the host and the device, where ``pow`` would not be bit-identical).
MAX_EXPONENT = 4

_U64 = np.uint64
GOLDEN = _U64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: the SplitMix64 increment
_ROWS = _U64(0xD1B54A32D192ED03)  # odd multiplier for the row keys
_STREAM = _U64(0x6A09E667F3BCC909)  # tags the factor draws apart from other uses of a seed


@dataclass(frozen=True)
class RowFactors:
    """How far each row's values may be off, drawn once per SMAA sample.

    Row ``i``'s values are estimates off by one unknown factor ``f_i`` in ``[lo_i, hi_i]``
    (``lo_i <= 1 <= hi_i``; both 1 for a row known exactly), shared by all its columns:
    matrix column ``j`` moves to ``x_ij * f_i ** exponent_j``, or with ``log10`` (a matrix
    of logarithms of the values) to ``x_ij + exponent_j * log10(f_i)``. A benefit column
    is negated after the move.

    Attributes
    ----------
    lo, hi : ndarray of float64, shape (n,)
        Factor bounds per matrix row, finite, ``0 < lo <= 1 <= hi``.
    exponent : ndarray of int, shape (m,)
        Integers with ``|exponent| <= MAX_EXPONENT`` (+1 for a time or a cost, -1 for a
        rate, 0 for a column the estimate does not move).
    seed : int >= 0
        Seed of the draws.
    row_ids : ndarray of int64, shape (n,), or None
        The keys of each row's draws (its position in the whole table, when the matrix
        holds some rows of it); None: 0 .. n - 1.
    log10 : bool
        The matrix holds base-10 logarithms of the values.

    Examples
    --------
    Two rows: the first predicted within 20% either way, the second measured; the first
    column moves with the factor, the second against it. The first row's factors stay in
    its interval, with the point estimate at the median; the second's are all 1:

    >>> f = RowFactors(lo=[0.8, 1.0], hi=[1.2, 1.0], exponent=[1, -1], seed=3)
    >>> moves = draw_moves(f, 0, 1000, [0, 1])
    >>> float(moves[:, 0].min()) >= 0.8, float(moves[:, 0].max()) <= 1.2
    (True, True)
    >>> abs(float(np.median(moves[:, 0])) - 1.0) < 0.02, bool((moves[:, 1] == 1.0).all())
    (True, True)
    """

    lo: np.ndarray
    hi: np.ndarray
    exponent: np.ndarray
    seed: int = 0
    row_ids: np.ndarray | None = None
    log10: bool = False


def check_factors(factors, n, m):
    """``factors`` as a :class:`RowFactors` for an (n, m) matrix, arrays made contiguous
    (float64 bounds, int64 exponents and row ids, row ids filled in), or ValueError."""
    if not isinstance(factors, RowFactors):
        raise ValueError(f"factors must be a RowFactors; got {type(factors).__name__}")
    lo = np.ascontiguousarray(factors.lo, dtype=np.float64).reshape(-1)
    hi = np.ascontiguousarray(factors.hi, dtype=np.float64).reshape(-1)
    for name, v in (("lo", lo), ("hi", hi)):
        if v.shape[0] != n:
            raise ValueError(f"factors.{name} must have one value per row ({n}); got "
                             f"{v.shape[0]}")
    bad = ~(np.isfinite(lo) & np.isfinite(hi) & (lo > 0) & (lo <= 1) & (hi >= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"factors must satisfy 0 < lo <= 1 <= hi (finite); row {i} has "
                         f"lo={float(lo[i])!r}, hi={float(hi[i])!r}")
    e = np.asarray(factors.exponent)
    if e.ndim != 1 or e.shape[0] != m:
        raise ValueError(f"factors.exponent must have one value per column ({m}); got shape "
                         f"{e.shape}")
    if e.size and (not np.isfinite(e.astype(np.float64)).all() or (e != np.round(e)).any()
                   or (np.abs(e) > MAX_EXPONENT).any()):
        raise ValueError(f"factors.exponent must be integers in [-{MAX_EXPONENT}, "
                         f"{MAX_EXPONENT}]; got {e.tolist()}")
    seed = factors.seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0 \
            or seed >= 2**63:
        raise ValueError(f"factors.seed must be an integer in [0, 2**63); got {seed!r}")
    if factors.row_ids is None:
        ids = np.arange(n, dtype=np.int64)
    else:
        ids = np.asarray(factors.row_ids)
        if ids.shape != (n,) or (ids.size and (not np.issubdtype(ids.dtype, np.integer)
                                               or ids.min() < 0)):
            raise ValueError(f"factors.row_ids must be {n} non-negative integers; got shape "
                             f"{ids.shape} of dtype {ids.dtype}")
        ids = np.ascontiguousarray(ids, dtype=np.int64)
    return RowFactors(lo, hi, np.ascontiguousarray(e, dtype=np.int64), int(seed), ids,
                      bool(factors.log10))


def mix64(z):
    """SplitMix64's finalizer (Steele, Lea & Flood 2014): a bijection of uint64 whose
    output bits each depend on every input bit (wrapping arithmetic; on NumPy arrays, and
    compiled as it is by the CPU and CUDA kernels)."""
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def seed_key(seed):
    """The draws' key of a seed (uint64): the hash of the seed tagged as a factor stream."""
    with np.errstate(over="ignore"):
        return mix64(np.array([seed], dtype=_U64) ^ _STREAM)[0]


def sample_keys(seed, s0, s1):
    """The key of each sample ``s0 .. s1 - 1`` (uint64)."""
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps, as the hash means it to
        s = np.arange(s0, s1, dtype=_U64)
        return mix64(seed_key(seed) + (s + _U64(1)) * GOLDEN)


def row_keys(row_ids):
    """The key of each row id (uint64)."""
    with np.errstate(over="ignore"):
        return mix64((np.asarray(row_ids, dtype=np.int64).astype(_U64) + _U64(1)) * _ROWS)


def uniforms(seed, s0, s1, row_ids):
    """``u[s - s0, t]`` uniform on (0, 1) for samples ``s0 .. s1 - 1`` and the rows keyed
    ``row_ids``: a counter-based hash of (seed, sample, row id), ``mix(mix(sample key ^ row
    key) + gamma)``, so any block of samples and rows is drawn alone, in any order, on any
    device, with the same values (integer operations only).

    Examples
    --------
    >>> u = uniforms(7, 0, 3, np.array([0, 5]))
    >>> u.shape, bool(((u > 0) & (u < 1)).all())
    ((3, 2), True)
    >>> bool((uniforms(7, 1, 3, np.array([5])) == u[1:, 1:]).all())
    True
    """
    with np.errstate(over="ignore"):
        z = mix64(mix64(sample_keys(seed, s0, s1)[:, None] ^ row_keys(row_ids)[None, :])
                 + GOLDEN)
    return ((z >> _U64(11)).astype(np.float64) + 0.5) * 2.0**-53


#: 1 / n! for n = 0 .. 13: e^z on |z| <= ln(2) / 2 to within 4e-18 (Taylor's remainder)
EXP_TAYLOR = tuple(1.0 / math.factorial(i) for i in range(14))
LN2 = 0.6931471805599453


def exp2(y):
    """``2 ** y`` from additions, rounded products and an exact scaling only (so every
    device computes the same bits): ``k`` the nearest integer, ``e^((y - k) ln 2)`` by
    Horner's rule on :data:`EXP_TAYLOR`, times ``2 ** k``. Within a few units in the last
    place of the exact value."""
    k = np.floor(y + 0.5)
    z = (y - k) * LN2
    p = np.full_like(z, EXP_TAYLOR[13])
    for c in EXP_TAYLOR[12::-1]:
        p = p * z + c
    return np.ldexp(p, k.astype(np.int64))


def move_bounds(factors, rows=None):
    """Per row (of ``rows``, all when None) the least and largest move: the factor bounds
    ``(lo, hi)``, or ``(log10(lo), log10(hi))`` for a matrix of logarithms."""
    lo = np.asarray(factors.lo, dtype=np.float64)
    hi = np.asarray(factors.hi, dtype=np.float64)
    if rows is not None:
        lo, hi = lo[rows], hi[rows]
    if factors.log10:
        return np.log10(lo), np.log10(hi)
    return lo, hi


def draw_params(factors, rows):
    """Per row of ``rows`` what a kernel needs to draw its move: (row key, exponent of the
    lower and of the upper bound, clip bounds), ``(uint64, float64 x 4)``: ``log2`` of the
    factor bounds and the bounds themselves, or ``log10`` of them twice for a matrix of
    logarithms (computed once, here, so every implementation uses the same values)."""
    rows = np.asarray(rows, dtype=np.int64)
    keys = rows if factors.row_ids is None else np.asarray(factors.row_ids)[rows]
    lo, hi = move_bounds(factors, rows)
    if factors.log10:
        dlo, dhi = lo, hi
    else:
        dlo, dhi = np.log2(lo), np.log2(hi)
    return tuple(np.ascontiguousarray(v) for v in (row_keys(keys), dlo, dhi, lo, hi))


def draw_moves(factors, s0, s1, rows):
    """The moves of rows ``rows`` (matrix rows) in samples ``s0 .. s1 - 1``, shape
    ``(s1 - s0, len(rows))``: the factor ``f``, or ``log10(f)`` with ``factors.log10``.

    Log-linear between the bounds with the point estimate at the median: with ``u`` from
    :func:`uniforms`, ``a = |1 - 2u|`` and ``d`` the exponent of the lower bound when
    ``u < 1/2``, of the upper one otherwise (:func:`draw_params`), the move is ``a * d``
    (a matrix of logarithms) or ``2 ** (a * d)`` (:func:`exp2`), i.e. ``lo ** (1 - 2u)`` or
    ``hi ** (2u - 1)``, clipped into the bounds. The kernels compute the same expression
    for each (sample, row), operation by operation."""
    key, dlo, dhi, clo, chi = draw_params(factors, rows)
    with np.errstate(over="ignore"):
        z = mix64(mix64(sample_keys(factors.seed, s0, s1)[:, None] ^ key[None, :]) + GOLDEN)
    u = ((z >> _U64(11)).astype(np.float64) + 0.5) * 2.0**-53
    low = u < 0.5
    y = np.where(low, 1.0 - 2.0 * u, 2.0 * u - 1.0) * np.where(low, dlo, dhi)
    move = y if factors.log10 else exp2(y)
    return np.minimum(np.maximum(move, clo), chi)


def effective_exponent(factors, benefit):
    """The exponents that move the canonical columns: a benefit column's logarithm is
    negated after the move, so it moves by ``-exponent``; a product commutes with the
    negation."""
    e = factors.exponent
    return np.where(np.asarray(benefit, dtype=bool), -e, e) if factors.log10 else e.copy()


def moved(x, t, exponent, log10):
    """Rows ``x`` (c, m) moved by ``t`` (c,): ``x * t ** e`` per column as ``|e|`` rounded
    products from 1 (and ``1 / p`` for ``e < 0``), or ``x + e * t``: the kernels' operations,
    element by element."""
    out = np.empty_like(x)
    for j in range(x.shape[1]):
        e = int(exponent[j])
        if log10:
            out[:, j] = x[:, j] + float(e) * t
            continue
        p = np.ones_like(t)
        for _ in range(abs(e)):
            p = p * t
        out[:, j] = x[:, j] * (1.0 / p if e < 0 else p)
    return out


def corners(costs, factors, benefit):
    """(optimistic, pessimistic) corners of every row's box: the least and largest value
    each canonical column of ``costs`` takes over the row's factor interval, so every
    drawn row lies between them (with the kernels' rounding).

    Raises
    ------
    ValueError
        A corner is not finite (the bounds move a value out of the float range).
    """
    lo, hi = move_bounds(factors)
    e = effective_exponent(factors, benefit)
    with np.errstate(over="ignore"):
        a = moved(costs, lo, e, factors.log10)
        b = moved(costs, hi, e, factors.log10)
    bad = ~(np.isfinite(a) & np.isfinite(b))
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(corner_message(factors, i, j, costs[i, j]))
    return np.minimum(a, b), np.maximum(a, b)


def corner_message(factors, i, j, value):
    """The one message for a factor interval that moves a value out of the float range."""
    return (f"factors move row {i}, column {j} out of the float range ({float(value)!r} "
            f"with factors in [{float(factors.lo[i])!r}, {float(factors.hi[i])!r}])")


@dataclass(frozen=True)
class DrawnInput:
    """What the fast drawn kernels need (:func:`prepare_drawn`).

    ``g`` the candidates' canonical rows in row order (ties are broken by position, i.e.
    by row index), ``rows`` their matrix rows (increasing), ``unit`` the normalization
    ``(pre, offset, div, rmin, rmax)`` of the full table, ``exponent`` the effective
    exponents, ``factors`` checked, ``draw`` the candidates' :func:`draw_params`, ``key``
    the :func:`seed_key`, ``w`` the weights, ``perm[t]`` the position in ``candidates`` of
    the t-th row."""

    g: np.ndarray
    rows: np.ndarray
    unit: tuple
    exponent: np.ndarray
    factors: RowFactors
    draw: tuple
    key: np.uint64
    w: np.ndarray
    perm: np.ndarray
    k: int


def prepare_drawn(matrix, weights_samples, benefit, factors, *, k, norm, candidates,
                  stats=None):
    """Validate the inputs of ``smaa_topsis_drawn`` and prepare them (:class:`DrawnInput`)."""
    costs, w, cand, k, stats = check_smaa_inputs(matrix, weights_samples, benefit, k=k,
                                                 norm=norm, candidates=candidates, stats=stats)
    n, m = costs.shape
    b = check_benefit(benefit, m)
    f = check_factors(factors, n, m)
    perm = np.argsort(cand, kind="stable").astype(np.int64)
    rows = cand[perm]
    g = np.ascontiguousarray(costs[rows])
    unit = unit_vectors(costs, norm, stats)
    if unit is None:  # no rows, hence no candidates
        unit = tuple(np.zeros(m) for _ in range(5))
    corners(costs, f, b)  # raises when a drawn value could leave the float range
    return DrawnInput(g, rows, tuple(np.ascontiguousarray(v, dtype=np.float64) for v in unit),
                      np.ascontiguousarray(effective_exponent(f, b), dtype=np.int64), f,
                      draw_params(f, rows), seed_key(f.seed), w, perm, k)


def capped_dominators(a, i, s, b, sb, cap):
    """How many rows of ``b`` dominate row ``i`` of ``a`` (minimization), counting stops at
    ``cap``: ``b``'s rows sorted by their row sums ``sb``, ``s`` row ``i``'s sum (all summed
    in column order: floating-point addition in a fixed order is monotone, so a dominator
    never has a larger sum, and only the rows of ``b`` up to ``s`` are scanned).

    Plain Python without calls, compiled by the CPU (``njit``) and CUDA (device function)
    kernels alike."""
    lo = 0
    hi = b.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if sb[mid] <= s:
            lo = mid + 1
        else:
            hi = mid
    count = 0
    for j in range(lo):
        if count >= cap:
            break
        strict = False
        below = True
        for col in range(a.shape[1]):
            x = b[j, col]
            y = a[i, col]
            if x > y:
                below = False
                break
            if x < y:
                strict = True
        if below and strict:
            count += 1
    return count


def winner_weight_sums(winners, w, c):
    """Central-weight sums: each sample's weights added to its winner's row, in sample
    order (the order the reference and the device add them in, so the sums agree)."""
    cw = np.zeros((c, w.shape[1]), dtype=np.float64)
    np.add.at(cw, winners, w)
    return cw
