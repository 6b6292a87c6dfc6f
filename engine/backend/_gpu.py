"""The GPU backend: CuPy arrays, cuDF frames, cuML's models (every parameter set from the
scikit-learn-style request) and one RMM memory pool shared by CuPy, cuDF and Numba.

Every device library is imported inside the function that needs it, so importing this
module touches no driver.
"""

from __future__ import annotations

import numpy as np

from .base import Backend

__all__ = ["gpu_backend", "device_silhouette", "CUML_N_BINS", "CUML_N_STREAMS",
           "CUML_KMEANS_INIT", "CUML_SILHOUETTE_CHUNK", "RMM_INITIAL_POOL_BYTES"]


# cuML's defaults differ from scikit-learn's and have changed between releases, so every
# parameter is set here from the scikit-learn-style request.
CUML_N_BINS = 128
#: Streams a cuML forest builds its trees on (cuML's default).
CUML_N_STREAMS = 4
#: scikit-learn's KMeans ``init`` names and cuML's: both have exact k-means++ (cuML since
#: 25.x as ``"k-means++"``, beside its default ``"scalable-k-means++"``, k-means||).
CUML_KMEANS_INIT = {"k-means++": "k-means++", "random": "random"}


def _cuml_random_forest(**params):
    from cuml.ensemble import RandomForestRegressor

    return RandomForestRegressor(
        n_estimators=params["n_estimators"],
        max_depth=params["max_depth"],
        max_features=params["max_features"],
        min_samples_leaf=params["min_samples_leaf"],
        bootstrap=params["bootstrap"],
        random_state=params["random_state"],
        n_bins=CUML_N_BINS,
        split_criterion="mse",
        # cuML 26.x builds the same forest for a given random_state whatever the number of
        # streams (the one-stream reproducibility caveat is gone from its docs), so the
        # forest keeps cuML's default of 4 streams, set here like every other parameter.
        n_streams=CUML_N_STREAMS,
    )


def _cuml_kmeans(**params):
    from cuml.cluster import KMeans

    init = params.get("init", "k-means++")
    return KMeans(
        n_clusters=params["n_clusters"],
        init=CUML_KMEANS_INIT.get(init, init) if isinstance(init, str) else init,
        n_init=params["n_init"],
        max_iter=params["max_iter"],
        tol=params["tol"],
        random_state=params["random_state"],
        output_type="cupy",
    )


#: Rows of the pairwise-distance block cuML's silhouette score works through at a time
#: (the score is O(n^2); chunking bounds its memory to chunksize x n).
CUML_SILHOUETTE_CHUNK = 2_000


def device_silhouette(xp, score, X, labels, *, sample_size, seed):
    """Mean silhouette of device arrays with ``score(X, labels, chunksize=)`` (cuML's
    ``silhouette_score``), on the rows scikit-learn's ``silhouette_score(sample_size=,
    random_state=seed)`` draws, so that both backends score the same sample."""
    labels = xp.asarray(labels)
    if int(xp.unique(labels).size) < 2:
        return float("nan")
    n = int(X.shape[0])
    if sample_size is not None:
        # scikit-learn permutes whenever a sample size is given (even sample_size == n, which
        # changes the order of the mean's terms); only the indices travel to the device.
        idx = xp.asarray(np.random.RandomState(seed).permutation(n)[:sample_size])
        X, labels = X[idx], labels[idx]
    return float(score(xp.ascontiguousarray(X), labels,
                       chunksize=min(CUML_SILHOUETTE_CHUNK, int(X.shape[0]))))


def _cuml_silhouette(X, labels, *, sample_size, seed):
    import cupy
    from cuml.metrics.cluster import silhouette_score

    return device_silhouette(cupy, silhouette_score, X, labels, sample_size=sample_size,
                              seed=seed)


_MEMORY_READY = []
#: The RMM pool's first reservation; it grows on demand up to the device's free memory.
#: RMM's default (half the device) would hold memory another process on a shared GPU needs.
RMM_INITIAL_POOL_BYTES = 256 * 2**20


def _no_pool_yet(rmm) -> bool:
    """True while RMM still allocates with its default resource (plain ``cudaMalloc``): no
    pool has been set by anyone (dask-cuda, cudf.pandas, the user), so setting one is safe.
    Replacing a resource that already handed out memory is undefined behaviour in RMM."""
    return type(rmm.mr.get_current_device_resource()) is rmm.mr.CudaMemoryResource


def _configure_device_memory(rmm, cupy, numba_cuda, rmm_cupy_allocator, rmm_numba_manager):
    """One allocator for CuPy, cuDF and the Numba kernels: an RMM pool (created only when no
    pool exists yet; it starts small and grows on demand), CuPy's allocations through it,
    and Numba's device allocations through
    RMM's External Memory Management plugin, so that running out of device memory raises
    RMM's ``MemoryError`` from every library. Numba binds its memory manager when it first
    creates a CUDA context, so this runs before any kernel launch."""
    if _no_pool_yet(rmm):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=RMM_INITIAL_POOL_BYTES)
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    numba_cuda.set_memory_manager(rmm_numba_manager)


def _setup_device_memory() -> None:
    """:func:`_configure_device_memory` once per process, where RMM is installed (without
    it, CuPy and Numba keep their own allocators)."""
    if _MEMORY_READY:
        return
    try:
        import rmm
        from rmm.allocators.cupy import rmm_cupy_allocator
        from rmm.allocators.numba import RMMNumbaManager
    except ImportError:
        _MEMORY_READY.append("no rmm")
        return
    import cupy
    from numba import cuda

    _configure_device_memory(rmm, cupy, cuda, rmm_cupy_allocator, RMMNumbaManager)
    _MEMORY_READY.append("rmm")


def _cupy_sync():
    import cupy

    cupy.cuda.get_current_stream().synchronize()


def gpu_backend(requested: str) -> Backend:
    """The GPU backend: CuPy, cuDF, cuML and the CUDA kernels, memory from one RMM pool."""
    import cudf
    import cupy

    _setup_device_memory()  # before the kernels' module creates anything on the device
    from gpurank.kernels import cuda as kernels

    return Backend(
        name="gpu",
        xp=cupy,
        xdf=cudf,
        kernels=kernels,
        requested=requested,
        _ml={"random_forest": _cuml_random_forest, "kmeans": _cuml_kmeans,
             "silhouette": _cuml_silhouette},
        _sync=_cupy_sync,
    )
