"""Whether the CPU kernels may run on several Python threads at once (Numba's threading
layer), for callers that overlap independent kernels."""

from __future__ import annotations

import numba
from numba import njit, prange

__all__ = ["concurrent_calls_safe"]


@njit(cache=True, parallel=True)
def _first_launch(n):
    s = 0
    for i in prange(n):
        s += i
    return s


def concurrent_calls_safe():
    """Whether two Python threads may run parallel kernels at the same time.

    Numba's ``omp`` and ``tbb`` threading layers are thread safe; ``workqueue`` is not (it
    stops the process on concurrent use). The layer is chosen at the first parallel launch,
    so one tiny kernel is launched first when none has run yet.
    """
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run in this process yet
        _first_launch(2)
        layer = numba.threading_layer()
    return layer in ("omp", "tbb")
