"""The CUDA kernels that take and return device arrays (no host round trip).

Each takes what its host twin in :mod:`gpurank.kernels.cuda` takes (NumPy arrays, Numba
device arrays, CuPy arrays, null-free cuDF columns) and returns a Numba device array, so
that results can stay on the device (wrap them with ``cupy.asarray`` for zero-copy CuPy).
:func:`~gpurank.kernels.cuda.topsis_stats` reads a device matrix in place and returns host
m-vectors already.
"""

from __future__ import annotations

from .count import dominated_count_device, domination_count_device
from .front import pareto_front_device
from .rank import pareto_rank_device
from .topsis import topsis_device, topsis_from_stats_device

__all__ = [
    "pareto_front_device",
    "pareto_rank_device",
    "domination_count_device",
    "dominated_count_device",
    "topsis_device",
    "topsis_from_stats_device",
]
