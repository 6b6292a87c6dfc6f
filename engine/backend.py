"""The one place that decides where the work runs: CPU (NumPy/pandas) or GPU (CuPy/cuDF).

A :class:`Backend` is resolved once at the entry point and passed down. It is the whole
dispatch surface: array module ``xp``, DataFrame module ``xdf``, the kernel module, and
factories for the two models. Nothing GPU is imported unless the GPU backend is asked for.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from .errors import BackendUnavailableError, DataError, UnsupportedOnGPU, UsageError

__all__ = [
    "Backend",
    "resolve_backend",
    "simulated_gpu_backend",
    "describe_environment",
    "BACKEND_NAMES",
    "gpu_unavailable_reason",
]

BACKEND_NAMES = ("auto", "cpu", "gpu")


@dataclass(frozen=True)
class Backend:
    """Where an analysis runs.

    Attributes
    ----------
    name : {"cpu", "gpu", "gpu-simulated"}
        "gpu-simulated" runs the CUDA kernels under Numba's CUDA simulator with NumPy and
        pandas standing in for CuPy and cuDF: the GPU path's orchestration, testable
        without a GPU.
    xp : module
        ``numpy`` or ``cupy``.
    xdf : module
        ``pandas`` or ``cudf``.
    kernels : module
        ``gpurank.kernels.cpu`` or ``gpurank.kernels.cuda``.
    requested : str
        What the user asked for ("auto", "cpu" or "gpu").
    reason : str
        Why this backend was chosen when it differs from the request (e.g. "auto" without a
        GPU); empty otherwise.
    """

    name: str
    xp: ModuleType
    xdf: ModuleType
    kernels: ModuleType
    requested: str = "cpu"
    reason: str = ""
    _ml: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def on_device(self) -> bool:
        """True when arrays live in GPU memory (CuPy), False for NumPy."""
        return self.xp is not np

    def check_supported(self, op: str, m: int) -> None:
        """Raise :class:`UnsupportedOnGPU` when this backend's kernels cannot run ``op`` on
        ``m`` criteria (the CUDA kernels keep a row's criteria in registers, so ``m`` is
        bounded there); the CPU kernels take any ``m``."""
        limit = getattr(self.kernels, "MAX_M", None)
        if limit is not None and m > limit:
            raise UnsupportedOnGPU(f"{m} criteria exceed the GPU kernels' limit of {limit}")

    def random_forest(self, **params):
        """A random-forest regressor; ``params`` use scikit-learn's names, all set explicitly."""
        return self._ml["random_forest"](**params)

    def kmeans(self, **params):
        """A KMeans estimator; ``params`` use scikit-learn's names, all set explicitly."""
        return self._ml["kmeans"](**params)

    def silhouette(self, X, labels, *, sample_size, seed):
        """Mean silhouette score of ``labels`` on ``sample_size`` rows of ``X`` drawn as
        scikit-learn's ``silhouette_score(..., sample_size=, random_state=seed)`` draws them,
        computed where ``X`` lives; NaN when fewer than two clusters are present."""
        return self._ml["silhouette"](X, labels, sample_size=sample_size, seed=seed)

    def to_host(self, x):
        """Return ``x`` as host data (NumPy array or pandas object)."""
        import pandas as pd

        if isinstance(x, (np.ndarray, np.generic, pd.DataFrame, pd.Series, pd.Index)):
            return x
        if hasattr(x, "to_pandas"):
            return x.to_pandas()
        if hasattr(x, "get"):
            return x.get()
        return x

    def asarray(self, x):
        """Return ``x`` as an array of this backend."""
        return self.xp.asarray(x)

    def as_frame(self, df):
        """``df`` as this backend's DataFrame: the one place a host table moves to the device.

        A pandas DataFrame is copied to the device once (``cudf.DataFrame.from_pandas``); a
        frame of this backend is returned as is; another library's frame with
        ``to_pandas`` (a cuDF frame on the CPU backend) comes to the host first.

        Raises
        ------
        UsageError
            ``df`` is not a DataFrame.
        """
        import pandas as pd

        if isinstance(df, self.xdf.DataFrame):
            return df
        if not isinstance(df, pd.DataFrame) and hasattr(df, "to_pandas"):
            df = df.to_pandas()
        if not isinstance(df, pd.DataFrame):
            raise UsageError(f"expected a DataFrame or a path to a table; got "
                             f"{type(df).__name__}")
        if self.xdf is pd:
            return df
        return self.xdf.from_pandas(df)

    def values(self, df, column, *, role):
        """``df[column]`` as a float64 array of this backend, NaN where a value is missing.

        Raises :class:`DataError` naming the column (and, on the CPU, the first row) when the
        column holds something that is not a number.
        """
        from .schema import numeric_values

        if not self.on_device:
            return numeric_values(df, column, role=role)
        s = df[column]
        if s.dtype.kind not in "iufb":
            raise DataError(f"{role} column '{column}' must be numeric; it has dtype {s.dtype}")
        return s.astype("float64").to_cupy(na_value=np.nan)

    def codes(self, series):
        """Sorted ordinal codes of a string or categorical column, as an int32 array."""
        s = series.astype("str").astype("category")
        codes = s.cat.codes
        if not self.on_device:
            return codes.to_numpy(dtype=np.int32)
        return codes.astype("int32").to_cupy()

    def sync(self) -> None:
        """Wait for queued device work (a no-op on the CPU); call before reading a timer."""
        if self.on_device:
            self.xp.cuda.get_current_stream().synchronize()


def _cpu_random_forest(**params):
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(**params)


def _cpu_kmeans(**params):
    from sklearn.cluster import KMeans

    return KMeans(**params)


def _cpu_silhouette(X, labels, *, sample_size, seed):
    from sklearn.metrics import silhouette_score

    labels = np.asarray(labels)
    if len(np.unique(labels)) < 2:
        return float("nan")
    return float(silhouette_score(np.asarray(X), labels, sample_size=sample_size,
                                  random_state=seed))


def _cpu_backend(requested: str, reason: str = "") -> Backend:
    import pandas as pd

    kernels = importlib.import_module("gpurank.kernels.cpu")
    return Backend(
        name="cpu",
        xp=np,
        xdf=pd,
        kernels=kernels,
        requested=requested,
        reason=reason,
        _ml={"random_forest": _cpu_random_forest, "kmeans": _cpu_kmeans,
             "silhouette": _cpu_silhouette},
    )


# cuML's defaults differ from scikit-learn's and have changed between releases, so every
# parameter is set here from the scikit-learn-style request.
CUML_N_BINS = 128


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
        # One stream makes the forest reproducible for a given random_state.
        n_streams=1,
    )


def _cuml_kmeans(**params):
    from cuml.cluster import KMeans

    init = params.get("init", "k-means++")
    return KMeans(
        n_clusters=params["n_clusters"],
        init="scalable-k-means++" if init == "k-means++" else init,
        n_init=params["n_init"],
        max_iter=params["max_iter"],
        tol=params["tol"],
        random_state=params["random_state"],
        output_type="cupy",
    )


#: Rows of the pairwise-distance block cuML's silhouette score works through at a time
#: (the score is O(n^2); chunking bounds its memory to chunksize x n).
CUML_SILHOUETTE_CHUNK = 2_000


def _cuml_silhouette(X, labels, *, sample_size, seed):
    import cupy
    from cuml.metrics.cluster import silhouette_score

    labels = cupy.asarray(labels)
    if int(cupy.unique(labels).size) < 2:
        return float("nan")
    n = int(X.shape[0])
    if sample_size is not None and sample_size < n:
        # The rows scikit-learn's silhouette_score(sample_size=, random_state=seed) draws,
        # so both backends score the same sample; only the indices travel to the device.
        idx = cupy.asarray(np.random.RandomState(seed).permutation(n)[:sample_size])
        X, labels = X[idx], labels[idx]
    return float(silhouette_score(cupy.ascontiguousarray(X), labels,
                                  chunksize=min(CUML_SILHOUETTE_CHUNK, int(X.shape[0]))))


_RMM_READY = []


def _setup_device_memory() -> None:
    """Set an RMM pool once per process and route CuPy allocations through it."""
    if _RMM_READY:
        return
    import cupy
    import rmm
    from rmm.allocators.cupy import rmm_cupy_allocator

    rmm.reinitialize(pool_allocator=True)
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    _RMM_READY.append(True)


def _gpu_backend(requested: str) -> Backend:
    import cudf
    import cupy

    _setup_device_memory()
    kernels = importlib.import_module("gpurank.kernels.cuda")
    return Backend(
        name="gpu",
        xp=cupy,
        xdf=cudf,
        kernels=kernels,
        requested=requested,
        _ml={"random_forest": _cuml_random_forest, "kmeans": _cuml_kmeans,
             "silhouette": _cuml_silhouette},
    )


def simulated_gpu_backend() -> Backend:
    """The GPU path's orchestration with the CUDA kernels under Numba's CUDA simulator.

    NumPy and pandas stand in for CuPy and cuDF, scikit-learn for cuML. Only for tests on
    small tables: the simulator runs each CUDA thread in Python.

    Raises
    ------
    BackendUnavailableError
        ``NUMBA_ENABLE_CUDASIM=1`` was not set before Numba was imported.
    """
    import os

    import pandas as pd

    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise BackendUnavailableError(
            "the simulated GPU backend needs NUMBA_ENABLE_CUDASIM=1 set before numba is imported"
        )
    kernels = importlib.import_module("gpurank.kernels.cuda")
    return Backend(
        name="gpu-simulated",
        xp=np,
        xdf=pd,
        kernels=kernels,
        requested="gpu",
        _ml={"random_forest": _cpu_random_forest, "kmeans": _cpu_kmeans,
             "silhouette": _cpu_silhouette},
    )


def gpu_unavailable_reason() -> str | None:
    """Why the GPU backend cannot run here, or ``None`` when it can.

    An import is not a GPU check (CuPy and cuDF import without a device), so this asks the
    CUDA driver for a device count.
    """
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed (pip install 'gpurank[gpu]')"
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - any driver failure means "no usable device"
        return f"no CUDA device is visible ({type(exc).__name__}: {exc})"
    if count < 1:
        return "no CUDA device is visible"
    for mod in ("cudf", "cuml"):
        try:
            importlib.import_module(mod)
        except ImportError:
            return f"{mod} is not installed (use the RAPIDS container or pip install 'gpurank[gpu]')"
    return None


def resolve_backend(name: str = "auto") -> Backend:
    """Resolve a backend name to a :class:`Backend`.

    Parameters
    ----------
    name : {"auto", "cpu", "gpu"}
        ``"cpu"`` always means the CPU. ``"gpu"`` means the GPU or a
        :class:`BackendUnavailableError` that says how to fix it. ``"auto"`` uses the GPU when
        one is usable and the CPU otherwise, recording the reason.
    """
    if isinstance(name, Backend):
        return name
    if name not in BACKEND_NAMES:
        raise UsageError(f"--backend must be one of {', '.join(BACKEND_NAMES)}; got {name!r}")
    if name == "cpu":
        return _cpu_backend("cpu")
    reason = gpu_unavailable_reason()
    if reason is None:
        return _gpu_backend(name)
    if name == "gpu":
        raise BackendUnavailableError(
            f"backend='gpu' was asked for but {reason}; use --backend auto to fall back to the CPU"
        )
    return _cpu_backend("auto", reason=f"GPU not used: {reason}")


def describe_environment() -> dict:
    """Versions of every backend library, and the GPU or the reason there is none."""
    import platform
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    libs = {}
    for name, dists in {
        "gpurank": ["gpurank"],
        "numpy": ["numpy"],
        "pandas": ["pandas"],
        "pyarrow": ["pyarrow"],
        "scikit-learn": ["scikit-learn"],
        "numba": ["numba"],
        "numba-cuda": ["numba-cuda"],
        "cupy": ["cupy-cuda12x", "cupy-cuda13x", "cupy"],
        "cudf": ["cudf-cu12", "cudf-cu13", "cudf"],
        "cuml": ["cuml-cu12", "cuml-cu13", "cuml"],
        "dask": ["dask"],
        "distributed": ["distributed"],
    }.items():
        libs[name] = next((v for v in map(version, dists) if v), None)
    info = {"python": platform.python_version(), "libraries": libs, "gpu": None}
    reason = gpu_unavailable_reason()
    devices = _gpu_devices()
    if devices:
        info["gpu"] = devices
    info["gpu_backend"] = "available" if reason is None else f"unavailable: {reason}"
    return info


def _gpu_devices() -> list[dict]:
    try:
        import cupy

        out = []
        for i in range(cupy.cuda.runtime.getDeviceCount()):
            props = cupy.cuda.runtime.getDeviceProperties(i)
            name = props["name"]
            out.append({
                "index": i,
                "name": name.decode() if isinstance(name, bytes) else str(name),
                "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
                "compute_capability": f"{props['major']}.{props['minor']}",
            })
        return out
    except Exception:  # noqa: BLE001 - no CuPy or no driver: no devices to describe
        return []
