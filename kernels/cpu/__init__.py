"""CPU kernels compiled with Numba (``njit``, ``parallel=True`` where it pays).

Same names, signatures and contracts as :mod:`gpurank.kernels.reference` (read the
contracts there), one public module per contract:

==============  ==========================================================================
``front``       :func:`pareto_front`: pivot prefilter, then 2-D / 3-D sweeps or k-d ENS
``rank``        :func:`pareto_rank`: lexicographic sweeps and ENS-BS, or peeled fronts
``count``       :func:`domination_count`, :func:`dominated_count`: Fenwick sweeps, divide
                and conquer, k-d tree
``topsis``      :func:`topsis`, :func:`topsis_stats`, :func:`topsis_from_stats`
``vikor``       :func:`vikor`, :func:`vikor_sr`, :func:`vikor_from_sr`
``select``      :func:`top_k`; the final rank's order (:func:`~.select.rank_keys`,
                :func:`~.select.rank_order`), not a contract
``smaa``        :func:`smaa_topsis`, :func:`smaa_topsis_drawn`,
                :func:`smaa_interval_candidates`
``blocks``      the cross-partition kernels of the Dask driver (not a contract: CPU only)
``threads``     :func:`~.threads.concurrent_calls_safe`: may kernels run on two threads at once
==============  ==========================================================================

and the algorithms they share in private modules: ``_sort`` (orders, ranks, gathers),
``_cdq`` (divide-and-conquer dominance counting), ``_kdtree`` (k-d trees), ``_ens``
(ENS-BS), ``_prefilter`` (the front's pivot prefilter), ``_jit`` (per-variant compilation).

Inputs are validated on the host by :mod:`gpurank.kernels._validate` before any compiled
code runs (where a first compiled pass reads every value anyway, the finiteness check is
fused into it); inputs are never mutated; no kernel allocates O(n^2). Every kernel is
``cache=True``, so only the first run on a machine pays compilation.

This package never imports numba.cuda, cupy, cudf or cuml (a test pins that).
"""

from .. import CONTRACTS

# The contracts, re-exported (__all__ is built from CONTRACTS, which linters cannot see).
from .count import dominated_count, domination_count  # noqa: F401
from .front import pareto_front  # noqa: F401
from .rank import pareto_rank  # noqa: F401
from .select import top_k  # noqa: F401
from .smaa import smaa_interval_candidates, smaa_topsis, smaa_topsis_drawn  # noqa: F401
from .topsis import topsis, topsis_from_stats, topsis_stats  # noqa: F401
from .vikor import vikor, vikor_from_sr, vikor_sr  # noqa: F401

#: No limit on the number of criteria.
MAX_CRITERIA = None

__all__ = [*CONTRACTS, "MAX_CRITERIA"]
