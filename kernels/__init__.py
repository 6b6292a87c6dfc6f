"""gpurank's numeric kernels: Pareto dominance, TOPSIS and VIKOR; one contract, three
implementations.

==================  =====================================================================
``reference``       slow, obvious NumPy oracles; the contract of every kernel lives in
                    their docstrings
``cpu``             Numba CPU kernels (a package, one module per contract)
``cuda``            Numba CUDA kernels (same names; host or device input, host results;
                    ``cuda.device`` returns device arrays)
``datagen``         synthetic inputs for the tests and benchmarks
``_validate``       every input check, one message shape
``_shared``         scalar helpers compiled by both ``njit`` and ``cuda.jit``
``_smaa``           the host-side SMAA preparation shared by every implementation, and
                    :class:`RowFactors`, the rows' intervals of the drawn SMAA
``_topsis_stats``   :class:`TopsisStats`, the mergeable column statistics of TOPSIS
``_vikor_stats``    :class:`VikorStats`, the mergeable extremes of VIKOR's S and R
==================  =====================================================================

Every implementation exports the names in :data:`CONTRACTS` plus ``MAX_CRITERIA`` (the
largest number of criteria it takes, ``None`` for no limit). The inputs they share are
exported here: :class:`TopsisStats`, :class:`RowFactors` and ``MAX_EXPONENT`` (the largest
exponent of a row's factor). Submodules are imported on first use, so ``import
gpurank.kernels`` never imports numba.cuda.
"""

from __future__ import annotations

import importlib

#: The kernels every implementation (reference, cpu, cuda) provides, with one contract.
CONTRACTS = (
    "pareto_front",
    "pareto_rank",
    "domination_count",
    "dominated_count",
    "topsis",
    "topsis_stats",
    "topsis_from_stats",
    "vikor",
    "vikor_sr",
    "vikor_from_sr",
    "top_k",
    "smaa_topsis",
    "smaa_topsis_drawn",
    "smaa_interval_candidates",
)

__all__ = ["reference", "cpu", "cuda", "CONTRACTS", "TopsisStats", "VikorStats", "RowFactors",
           "MAX_EXPONENT"]

_SUBMODULES = ("reference", "cpu", "cuda", "datagen")
_SHARED = ("TopsisStats", "VikorStats", "RowFactors", "MAX_EXPONENT")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "TopsisStats":
        from ._topsis_stats import TopsisStats

        return TopsisStats
    if name == "VikorStats":
        from ._vikor_stats import VikorStats

        return VikorStats
    if name in ("RowFactors", "MAX_EXPONENT"):
        from . import _smaa

        return getattr(_smaa, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_SHARED))
