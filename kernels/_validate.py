"""Every input check of the kernels, on the host, before any compiled code runs.

One message shape everywhere: ``"<parameter> must be ...; got ..."``, naming the parameter,
what is allowed and the bad value, so that a bad input never reaches compiled code and the
caller learns what to fix. Every kernel module (reference, cpu, cuda) imports its checks
from here; this module imports NumPy and, for the checks of TOPSIS statistics, the
:class:`~gpurank.kernels.TopsisStats` module (``_topsis_stats``, which imports no other
kernels module; its merge keeps its own input check).
"""

from __future__ import annotations

import numpy as np

from ._topsis_stats import TopsisStats, canonical_stats

__all__ = ["NORMS", "not_finite_message", "check_ndim2", "check_float_dtype", "check_costs",
           "check_max_criteria", "check_block", "check_pair", "check_ranks", "check_grids",
           "check_k", "check_cap", "check_depth", "check_scores", "check_norm", "check_benefit",
           "check_weights", "check_criteria_args", "check_topsis_inputs", "check_stats",
           "check_out", "check_is_device", "check_device_out", "check_candidates",
           "check_weight_samples", "check_smaa_inputs", "check_within_stats", "check_coordinates",
           "check_flags", "check_splitters"]

_FLOATS = (np.float32, np.float64)
NORMS = ("vector", "minmax")


# -- criteria matrices ----------------------------------------------------------------------


def not_finite_message(name, row, col, value):
    """The one message for a NaN or infinite cell (host and device checks share it)."""
    return f"{name} must be finite; row {row}, column {col} is {float(value)!r}"


def check_ndim2(ndim, name):
    """Raise unless an array of ``ndim`` dimensions can be a (n, m) matrix."""
    if ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, m); got {ndim} dimension(s)")


def check_float_dtype(dtype, name):
    """Raise unless ``dtype`` is float32 or float64 (for device arrays, never converted)."""
    if dtype not in _FLOATS:
        raise ValueError(f"{name} must be float32 or float64; got dtype {dtype}")


def check_costs(costs, *, name="costs", finite=True):
    """Return ``costs`` as a C-contiguous float32/float64 array of shape (n, m).

    Other real dtypes are converted to float64. With ``finite=False`` the finiteness scan is
    left to the caller's first compiled pass, which must then call ``check_costs`` again
    when it sees a non-finite value (to raise this message).
    """
    c = np.asarray(costs)
    check_ndim2(c.ndim, name)
    if c.dtype not in _FLOATS:
        if not np.issubdtype(c.dtype, np.number) or np.issubdtype(c.dtype, np.complexfloating):
            raise ValueError(f"{name} must be float32 or float64; got dtype {c.dtype}")
        c = c.astype(np.float64)
    c = np.ascontiguousarray(c)
    if finite and c.size and not np.isfinite(c).all():
        r, k = np.argwhere(~np.isfinite(c))[0]
        raise ValueError(not_finite_message(name, r, k, c[r, k]))
    return c


def check_max_criteria(m, limit, *, name="costs"):
    """Raise when a matrix has more columns than a backend's kernels support."""
    if limit is not None and m > limit:
        raise ValueError(f"{name} must have at most {limit} columns on the GPU; got {m}")


def check_block(costs, name):
    """A block of the cross-partition kernels: finite float64, C-contiguous, (n, m)."""
    return check_costs(costs, name=name).astype(np.float64, copy=False)


def check_pair(costs_a, costs_b):
    """Two blocks with the same columns, as :func:`check_block` returns them."""
    a, b = check_block(costs_a, "costs_a"), check_block(costs_b, "costs_b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"costs_b must have as many columns as costs_a ({a.shape[1]}); got {b.shape[1]}"
        )
    return a, b


def check_ranks(rank, n, name):
    """Return one int64 rank per row, or raise naming ``name``."""
    r = np.ascontiguousarray(rank, dtype=np.int64)
    if r.shape != (n,):
        raise ValueError(f"{name} must have one entry per row ({n}); got shape {r.shape}")
    return r


def check_coordinates(arrays, names, limit):
    """Integer coordinates of the same points: each 1-D, as long as the first, every value
    in [0, ``limit``). Returns them as C-contiguous int64 arrays."""
    out = []
    n = None
    for a, name in zip(arrays, names):
        x = np.asarray(a)
        if x.ndim != 1 or (x.size and not np.issubdtype(x.dtype, np.integer)):
            raise ValueError(f"{name} must be a 1-D array of integers; got dtype {x.dtype} "
                             f"and shape {x.shape}")
        n = x.shape[0] if n is None else n
        if x.shape[0] != n:
            raise ValueError(f"{name} must have one entry per point ({n}); got {x.shape[0]}")
        if x.size and (x.min() < 0 or x.max() >= limit):
            bad = int(x.min()) if x.min() < 0 else int(x.max())
            raise ValueError(f"{name} must hold integers in [0, {limit}); got {bad}")
        out.append(np.ascontiguousarray(x, dtype=np.int64))
    return out


def check_flags(flags, n, name):
    """One bool per point, or raise naming ``name``."""
    f = np.asarray(flags)
    if f.shape != (n,) or f.dtype != np.bool_:
        raise ValueError(f"{name} must be a bool array with one entry per point ({n}); got "
                         f"dtype {f.dtype} and shape {f.shape}")
    return np.ascontiguousarray(f)


def check_splitters(splitters, columns, m):
    """Splitter rows for a lexicographic range key: a finite float matrix with one column
    per entry of ``columns``, rows sorted lexicographically; ``columns`` distinct indices
    of the m columns of the costs."""
    cols = np.asarray(columns)
    if cols.ndim != 1 or not np.issubdtype(cols.dtype, np.integer) or len(set(cols.tolist())) \
            != len(cols) or (cols.size and (cols.min() < 0 or cols.max() >= m)):
        raise ValueError(f"columns must be distinct column indices in [0, {m}); got "
                         f"{cols.tolist()}")
    s = check_costs(np.asarray(splitters, dtype=np.float64).reshape(-1, len(cols)),
                    name="splitters").astype(np.float64, copy=False)
    if len(s) > 1:
        keys = [s[:, k] for k in range(s.shape[1] - 1, -1, -1)]
        if not np.array_equal(np.lexsort(keys), np.arange(len(s))):
            raise ValueError("splitters must be sorted lexicographically in the order of "
                             "columns")
    return s, np.ascontiguousarray(cols, dtype=np.int64)


def check_grids(grids, m):
    """Raise unless there is one grid per criterion."""
    if len(grids) != m:
        raise ValueError(f"grids must have one grid per column of costs ({m}); got {len(grids)}")


# -- options --------------------------------------------------------------------------------


def _check_int(value, name, low, none_ok):
    """``value`` as an int >= ``low`` (or None when ``none_ok``), or raise ValueError."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        allowed = "a non-negative integer" if low == 0 else f"an integer >= {low}"
        raise ValueError(f"{name} must be {'None or ' if none_ok else ''}{allowed}; "
                         f"got {value!r}")
    return int(value)


def check_k(k):
    """Return ``k`` as a non-negative int, or raise ValueError."""
    return _check_int(k, "k", 0, False)


def check_cap(cap):
    """Return ``cap`` as None or a non-negative int, or raise ValueError."""
    return _check_int(cap, "cap", 0, True)


def check_depth(depth):
    """Return ``depth`` as None or an int >= 1, or raise ValueError."""
    return _check_int(depth, "depth", 1, True)


def check_scores(scores, *, name="scores"):
    """Return ``scores`` as a 1-D real array without NaN, or raise ValueError."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got {s.ndim} dimension(s)")
    if not np.issubdtype(s.dtype, np.number) or np.issubdtype(s.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric; got dtype {s.dtype}")
    if s.size and np.isnan(s).any():
        bad = int(np.flatnonzero(np.isnan(s))[0])
        raise ValueError(f"{name} must not contain NaN; element {bad} is nan")
    return s


# -- TOPSIS ---------------------------------------------------------------------------------


def check_norm(norm):
    """Raise unless ``norm`` names a TOPSIS normalization."""
    if norm not in NORMS:
        raise ValueError(f"norm must be 'vector' or 'minmax'; got {norm!r}")


def check_benefit(benefit, m):
    """Return one bool flag per column."""
    b = np.asarray(benefit, dtype=bool).reshape(-1)
    if b.shape[0] != m:
        raise ValueError(f"benefit must have one flag per column ({m}); got {b.shape[0]}")
    return b


def check_weights(weights, m):
    """Return the weights as float64 normalized to sum to 1 (when m > 0)."""
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape[0] != m:
        raise ValueError(f"weights must have one value per column ({m}); got {w.shape[0]}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be finite and >= 0; got {w.tolist()}")
    if m and w.sum() <= 0:
        raise ValueError(f"weights must not all be zero; got {w.tolist()}")
    return w / w.sum() if m else w


def check_criteria_args(m, weights, benefit, norm):
    """TOPSIS arguments other than the matrix: (normalized weights, benefit flags)."""
    w = check_weights(weights, m)
    b = check_benefit(benefit, m)
    check_norm(norm)
    return w, b


def check_topsis_inputs(matrix, weights, benefit, *, norm):
    """Validate TOPSIS inputs; return (matrix, normalized weights float64, benefit bool)."""
    x = check_costs(matrix, name="matrix")
    w, b = check_criteria_args(x.shape[1], weights, benefit, norm)
    return x, w, b


def check_stats(stats, m, n):
    """Raise unless ``stats`` are TOPSIS statistics of a table with ``m`` columns that can
    normalize ``n`` rows."""
    if not isinstance(stats, TopsisStats):
        raise ValueError(f"stats must be a TopsisStats; got {type(stats).__name__}")
    if stats.lo.shape != (m,):
        raise ValueError(f"stats must describe {m} columns; got {stats.lo.shape[0]}")
    if n and stats.n == 0:
        raise ValueError("stats must describe at least one row; got the stats of an empty table")
    return stats


def check_out(out, n, matrix):
    """Return ``out`` if it can take ``n`` float64 results in place without touching
    ``matrix``, or raise ValueError."""
    if not isinstance(out, np.ndarray):
        raise ValueError(f"out must be a NumPy array; got {type(out).__name__}")
    if out.dtype != np.float64 or out.shape != (n,):
        raise ValueError(
            f"out must be a float64 array of shape ({n},); got {out.dtype} with shape {out.shape}"
        )
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be C-contiguous and writeable; got a strided or read-only array")
    if isinstance(matrix, np.ndarray) and np.may_share_memory(out, matrix):
        raise ValueError("out must not share memory with matrix; got a view of matrix")
    return out


def check_is_device(is_device, value, name):
    """Raise unless ``value`` is a device array (``is_device``, as the caller found it)."""
    if not is_device:
        raise ValueError(f"{name} must be a device array; got {type(value).__name__}")


def check_device_out(out, n):
    """Raise unless the device array ``out`` can take ``n`` float64 scores."""
    if out.dtype != np.float64 or out.shape != (n,) or not out.is_c_contiguous():
        raise ValueError(f"out must be a C-contiguous float64 device array of shape ({n},); "
                         f"got {out.dtype} with shape {out.shape}")


# -- SMAA -----------------------------------------------------------------------------------


def check_candidates(candidates, n):
    """Candidates as distinct int64 row ids in [0, n) (every row when None)."""
    if candidates is None:
        return np.arange(n, dtype=np.int64)
    cand = np.asarray(candidates)
    if cand.ndim != 1 or (cand.size and not np.issubdtype(cand.dtype, np.integer)):
        raise ValueError("candidates must be a 1-D array of row indices; "
                         f"got shape {cand.shape} of dtype {cand.dtype}")
    cand = cand.astype(np.int64)
    if cand.size and (cand.min() < 0 or cand.max() >= n):
        raise ValueError(
            f"candidates must be row indices in [0, {n}); got {cand.min()}..{cand.max()}"
        )
    u, counts = np.unique(cand, return_counts=True)
    if u.size != cand.size:
        raise ValueError(f"candidates must not repeat a row; got row {u[counts > 1][0]} twice")
    return cand


def check_weight_samples(weights_samples, m):
    """Weight samples (S, m), each row normalized to sum to 1."""
    w = np.asarray(weights_samples, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != m:
        raise ValueError(
            f"weights_samples must be a 2-D array of shape (samples, {m}); got shape {w.shape}"
        )
    if w.size and (not np.isfinite(w).all() or (w < 0).any()):
        bad = int(np.flatnonzero(~(np.isfinite(w) & (w >= 0)).all(axis=1))[0])
        raise ValueError(f"weights_samples must be finite and >= 0; got row {bad}: "
                         f"{w[bad].tolist()}")
    sums = w.sum(axis=1)
    if m and (sums <= 0).any():
        bad = int(np.flatnonzero(sums <= 0)[0])
        raise ValueError(f"weights_samples rows must each hold a weight > 0; got row {bad}, "
                         "all zero")
    return np.ascontiguousarray(w / sums[:, None]) if m else np.ascontiguousarray(w)


def check_smaa_inputs(matrix, weights_samples, benefit, *, k, norm, candidates, stats=None):
    """Validate; return (canonical costs float64 (n, m), weights (S, m) rows summing to 1,
    candidates int64 (c,), k, the canonical costs' TOPSIS stats or None)."""
    x = check_costs(matrix, name="matrix").astype(np.float64, copy=False)
    n, m = x.shape
    b = check_benefit(benefit, m)
    check_norm(norm)
    w = check_weight_samples(weights_samples, m)
    k = check_k(k)
    cand = check_candidates(candidates, n)
    if stats is not None:
        check_stats(stats, m, n)
        check_within_stats(x, stats)
        stats = canonical_stats(stats, b)
    return np.ascontiguousarray(np.where(b, -x, x)), w, cand, k, stats


def check_within_stats(x, stats):
    """Raise unless every value of ``x`` lies in the column range ``stats`` describe (the
    rows must belong to the table whose statistics normalize them)."""
    if x.shape[0] == 0:
        return
    out = (x.min(axis=0) < stats.lo) | (x.max(axis=0) > stats.hi)
    if out.any():
        j = int(np.flatnonzero(out)[0])
        raise ValueError(f"matrix column {j} has values outside [{stats.lo[j]:g}, "
                         f"{stats.hi[j]:g}], the range its stats describe: stats must be the "
                         "topsis_stats of a table that holds these rows")
