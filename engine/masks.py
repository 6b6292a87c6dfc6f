"""Boolean masks without missing values, on every backend.

On cuDF a comparison with a missing value (a null) gives a null, and ``&``, ``|`` and ``~``
keep it, where pandas gives False. A mask with a null cannot become a device array
(``to_cupy()`` raises ``Column must have no nulls``) and ``.loc`` silently leaves its null
rows out. Every mask built from comparisons of possibly-missing values goes through
:func:`definite` where it is built, so what reaches a device array or ``.loc`` is null-free.
"""

from __future__ import annotations

__all__ = ["definite"]


def definite(mask):
    """``mask`` with its missing values as False (a Series of the frame's library)."""
    return mask.fillna(False)
