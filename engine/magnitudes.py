"""Power-of-two rescaling of columns whose squares or sums would overflow or underflow.

Standardizing a column (its mean and variance), projecting it (an SVD) or fitting a float32
model on it squares and sums its values: above ~1e154 the squares overflow to inf, below
~1e-154 they underflow to 0, and a sum of values near 1.8e308 overflows. Multiplying a
column by a power of two first changes only the exponents, so it is exact (a subnormal value
gains exact bits), keeps the order and the ratios of the values, and brings the largest
magnitude near one; what is computed from the scaled column and is scale-free (standardized
values, distances between them, R^2, a tree's split order) is unchanged. The TOPSIS kernels
hold their column norms the same way (``kernels/_topsis_stats.py``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MOMENTS_SAFE", "column_scales", "unit_scale"]

#: Largest magnitudes a column may have for its mean and variance (sums of squares over up
#: to ~1e100 rows) to neither overflow nor underflow; columns outside are rescaled first.
MOMENTS_SAFE = (1e-100, 1e100)


def unit_scale(top: float) -> float:
    """The power of two that brings a largest magnitude ``top`` near one.

    ``2**-e`` for ``top = f * 2**e`` (``f`` in [0.5, 1)), so ``top * scale`` lies in
    [0.5, 1). The exponent is clipped to float64's normal range: the scale itself is always a
    finite normal number, and a subnormal ``top`` lands in [2**-52, 1), a ``top`` above 2**1022
    in [1, 4). 1.0 for zero, NaN and infinities, which no scaling helps.

    Examples
    --------
    >>> unit_scale(3.0), unit_scale(0.0), unit_scale(float("inf"))
    (0.25, 1.0, 1.0)
    >>> 1e-310 * unit_scale(1e-310) > 2.0**-52
    True
    """
    top = abs(float(top))
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    exponent = math.frexp(top)[1]
    return math.ldexp(1.0, min(max(-exponent, -1022), 1023))


def column_scales(tops, *, low: float, high: float) -> tuple:
    """:func:`unit_scale` of each column whose largest magnitude is outside ``[low, high]``
    (1.0 for the others), or ``()`` when no column needs one.

    Parameters
    ----------
    tops : array_like of float
        The largest magnitude of each column (on the host).
    low, high : float
        The magnitudes the caller's arithmetic holds without overflow or underflow.
    """
    tops = np.abs(np.asarray(tops, dtype=np.float64)).ravel()
    scales = tuple(unit_scale(t) if np.isfinite(t) and (t > high or 0 < t < low) else 1.0
                   for t in tops)
    return scales if any(s != 1.0 for s in scales) else ()
