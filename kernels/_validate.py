"""Input checks shared by every kernel implementation.

They run on the host before any kernel is launched, so a bad input never reaches compiled
code. Messages name the parameter, the bad value and what is allowed.
"""

from __future__ import annotations

import numpy as np

_FLOATS = (np.float32, np.float64)


def check_costs(costs, *, name="costs"):
    """Return ``costs`` as a C-contiguous float array of shape (n, m), or raise ValueError."""
    c = np.asarray(costs)
    if c.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, m); got {c.ndim} dimension(s)")
    if c.dtype not in _FLOATS:
        if not np.issubdtype(c.dtype, np.number) or np.issubdtype(c.dtype, np.complexfloating):
            raise ValueError(f"{name} must be float32 or float64; got dtype {c.dtype}")
        c = c.astype(np.float64)
    c = np.ascontiguousarray(c)
    if c.size and not np.isfinite(c).all():
        bad = np.argwhere(~np.isfinite(c))[0]
        raise ValueError(
            f"{name} must be finite; row {bad[0]}, column {bad[1]} is {float(c[bad[0], bad[1]])!r}"
        )
    return c


def check_topsis_inputs(matrix, weights, benefit, *, norm):
    """Validate TOPSIS inputs; return (matrix, normalized weights float64, benefit bool)."""
    x = check_costs(matrix, name="matrix")
    m = x.shape[1]
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    b = np.asarray(benefit, dtype=bool).reshape(-1)
    if w.shape[0] != m:
        raise ValueError(f"weights must have one value per column ({m}); got {w.shape[0]}")
    if b.shape[0] != m:
        raise ValueError(f"benefit must have one flag per column ({m}); got {b.shape[0]}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be finite and >= 0; got {w.tolist()}")
    if m and w.sum() <= 0:
        raise ValueError(f"weights must not all be zero; got {w.tolist()}")
    if norm not in ("vector", "minmax"):
        raise ValueError(f"norm must be 'vector' or 'minmax'; got {norm!r}")
    if m:
        w = w / w.sum()
    return x, w, b


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
        raise ValueError("out must be C-contiguous and writeable")
    if isinstance(matrix, np.ndarray) and np.may_share_memory(out, matrix):
        raise ValueError("out must not share memory with matrix")
    return out


def check_k(k):
    """Return ``k`` as a non-negative int, or raise ValueError."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer; got {k!r}")
    return int(k)


def check_scores(scores, *, name="scores"):
    """Return ``scores`` as a 1-D float array without NaN, or raise ValueError."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got {s.ndim} dimension(s)")
    if not np.issubdtype(s.dtype, np.number) or np.issubdtype(s.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric; got dtype {s.dtype}")
    if s.size and np.isnan(s).any():
        bad = int(np.flatnonzero(np.isnan(s))[0])
        raise ValueError(f"{name} must not contain NaN; element {bad} is nan")
    return s


def check_cap(cap):
    """Return ``cap`` as None or a non-negative int, or raise ValueError."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 0:
        raise ValueError(f"cap must be None or a non-negative integer; got {cap!r}")
    return int(cap)
