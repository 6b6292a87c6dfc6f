"""CUDA kernels (Numba CUDA) with host launchers.

Same names, signatures and contracts as :mod:`gpurank.kernels.reference` (and the same
``__all__`` as :mod:`gpurank.kernels.cpu`). Every function accepts NumPy arrays, Numba
device arrays or any object exposing ``__cuda_array_interface__`` (CuPy arrays, null-free
cuDF columns) without copying the input, and returns NumPy arrays on the host; the variants
in :mod:`.device` return device arrays. At most ``MAX_CRITERIA`` (16) criteria; NaN and
infinities are rejected by a device scan before any kernel runs, with the host checks'
message.

==============  ==========================================================================
``front``       :func:`pareto_front`: the count kernel with cap=1
``rank``        :func:`pareto_rank`: Z-order sweep, tiles resolved in order, tree-pruned
``count``       :func:`domination_count`, :func:`dominated_count`: divide and conquer
                (m = 2..5, no small cap) or block-pruned tiles
``topsis``      :func:`topsis`, :func:`topsis_stats`, :func:`topsis_from_stats`: a reduction
                kernel and a fused scoring kernel
``vikor``       :func:`vikor`, :func:`vikor_sr`, :func:`vikor_from_sr`: TOPSIS's
                reduction, a fused S-and-R kernel, the reduction again, a Q kernel
``select``      :func:`top_k` (on the host)
``smaa``        :func:`smaa_topsis`, :func:`smaa_topsis_drawn`,
                :func:`smaa_interval_candidates`: batched score, rank and accumulate kernels
``device``      the ``*_device`` variants
``schedule``    the host mirror of the schedules: counts the pair tests on the CPU
``_dnc``        the divide-and-conquer counts: merge passes by binary search
``_tiles``      the schedule's decisions, compiled for the device and the host
``_tree``       the Z-order sort and the tree of tile boxes on the device
``_launch``     launch geometry, transfers (out of memory raises MemoryError), the shared
                small kernels, PTX signatures
==============  ==========================================================================

Importing this package imports numba.cuda (no GPU needed, nothing is compiled: each kernel
compiles on its first launch); :mod:`gpurank.kernels` itself imports it only on demand.
"""

from .. import CONTRACTS

# The contracts, re-exported (__all__ is built from CONTRACTS, which linters cannot see), and
# the device probe and what the PTX test compiles, which are not contracts.
from ._launch import MAX_CRITERIA, is_available, kernel_functions, ptx_signatures  # noqa: F401
from .count import dominated_count, domination_count  # noqa: F401
from .front import pareto_front  # noqa: F401
from .rank import pareto_rank  # noqa: F401
from .select import top_k  # noqa: F401
from .smaa import smaa_interval_candidates, smaa_topsis, smaa_topsis_drawn  # noqa: F401
from .topsis import topsis, topsis_from_stats, topsis_stats  # noqa: F401
from .vikor import vikor, vikor_from_sr, vikor_sr  # noqa: F401

__all__ = [*CONTRACTS, "MAX_CRITERIA"]
