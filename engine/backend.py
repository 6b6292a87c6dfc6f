"""The one place that decides where the work runs: CPU (NumPy/pandas) or GPU (CuPy/cuDF).

A :class:`Backend` is resolved once at the entry point and passed down. It is the whole
dispatch surface: array module ``xp``, DataFrame module ``xdf``, the kernel module, and
factories for the two models. Nothing GPU is imported unless the GPU backend is asked for.

Three backends exist: ``cpu``, ``gpu`` (CuPy, cuDF, cuML and the CUDA kernels; memory from
one RMM pool), and :func:`strict_device_backend`, which runs the GPU backend's device
branches without a device (see :mod:`gpurank.engine.strict_device`).
"""

from __future__ import annotations

import importlib
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from .errors import BackendUnavailableError, DataError, UnsupportedOnGPU, UsageError

__all__ = [
    "Backend",
    "resolve_backend",
    "strict_device_backend",
    "describe_environment",
    "BACKEND_NAMES",
    "MISSING_CODE",
    "gpu_unavailable_reason",
]

BACKEND_NAMES = ("auto", "cpu", "gpu")

#: The code of a missing value in an encoded text column, on every backend (sorted codes of
#: the present values are 0, 1, ...): a model sees "missing" as one more category, never NaN.
MISSING_CODE = -1


@dataclass(frozen=True)
class Backend:
    """Where an analysis runs.

    Attributes
    ----------
    name : {"cpu", "gpu", "gpu-strict"}
        "gpu-strict" is :func:`strict_device_backend`: the GPU path's device branches with
        strict stand-ins for CuPy and cuDF, testable without a GPU.
    xp : module
        ``numpy`` or ``cupy`` (or the stand-in's namespace).
    xdf : module
        ``pandas`` or ``cudf`` (or the stand-in's namespace).
    kernels : module
        ``gpurank.kernels.cpu`` or ``gpurank.kernels.cuda`` (or an adapter feeding the
        stand-in's arrays to ``gpurank.kernels.cuda``).
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
    _sync: object = field(default=None, repr=False, compare=False)

    @property
    def on_device(self) -> bool:
        """True when arrays live in GPU memory (CuPy, or the stand-in's), False for NumPy."""
        return self.xp is not np

    @property
    def overlaps(self) -> bool:
        """True when calls started with :meth:`start` run beside the caller: on the CPU,
        where the compiled kernels release the GIL and Numba's threading layer is thread
        safe. On a device calls run one after another (they share the stream and the
        device's memory)."""
        return self.name == "cpu" and _cpu_concurrent()

    def start(self, call) -> Future:
        """The zero-argument ``call`` as a :class:`~concurrent.futures.Future`: running from
        now on, on a thread of its own, where :attr:`overlaps`; otherwise run, in the
        caller's thread, when its result is first asked for.

        The thread is a daemon: an error in the caller's own work ends the process without
        waiting for a long kernel whose result nobody will read.
        """
        if not self.overlaps:
            return _Deferred(call)
        fut = Future()
        threading.Thread(target=_settle, args=(fut, call), name="gpurank-start",
                         daemon=True).start()
        return fut

    def together(self, *calls):
        """The results of the zero-argument ``calls``, in order.

        Where :attr:`overlaps`, each call runs on a thread of its own: a serial kernel then
        overlaps a parallel one instead of leaving a core idle. Elsewhere they run one
        after another.
        """
        if len(calls) < 2:
            return [call() for call in calls]
        futures = [self.start(call) for call in calls]
        return [f.result() for f in futures]

    def check_supported(self, op: str, m: int) -> None:
        """Raise :class:`UnsupportedOnGPU` when this backend's kernels cannot run ``op`` on
        ``m`` criteria (the CUDA kernels keep a row's criteria in registers, so ``m`` is
        bounded there); the CPU kernels take any ``m``."""
        limit = self.kernels.MAX_CRITERIA
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
        """Return ``x`` as host data (NumPy array or pandas object): the explicit copy."""
        import pandas as pd

        if isinstance(x, (np.ndarray, np.generic, pd.DataFrame, pd.Series, pd.Index)):
            return x
        if hasattr(x, "to_pandas"):
            return x.to_pandas()
        if hasattr(x, "copy_to_host"):  # a Numba device array
            return x.copy_to_host()
        if hasattr(x, "get"):
            return x.get()
        return x

    def out_of_memory(self, exc: BaseException) -> bool:
        """True when ``exc`` is the device running out of memory: CuPy's
        ``OutOfMemoryError`` and RMM's allocation failure (both ``MemoryError``), or Numba's
        ``CudaAPIError`` with ``CUDA_ERROR_OUT_OF_MEMORY``. Always False on the CPU, whose
        ``MemoryError`` is the host's."""
        return self.on_device and _is_device_oom(exc)

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
        """Ordinal codes of a text or categorical column, as an int32 array of the backend.

        The present values, as text, get 0, 1, ... in sorted order; a missing value gets
        :data:`MISSING_CODE`, the same on every backend (cuDF's ``cat.codes`` is null there,
        pandas' is -1, and a null would reach the model as NaN).
        """
        # Missing values stay missing through the cast (pandas < 3 would write "nan").
        text = series.astype("str").where(series.notna())
        codes = text.astype("category").cat.codes.fillna(MISSING_CODE).astype("int32")
        if not self.on_device:
            return codes.to_numpy(dtype=np.int32)
        return codes.to_cupy()

    def sync(self) -> None:
        """Wait for queued device work (a no-op on the CPU); call before reading a timer."""
        if self._sync is not None:
            self._sync()


#: ``CUresult.CUDA_ERROR_OUT_OF_MEMORY``, the code of Numba's ``CudaAPIError``.
CUDA_ERROR_OUT_OF_MEMORY = 2
_OOM_TEXT = ("CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "out_of_memory")


def _is_device_oom(exc: BaseException) -> bool:
    """Whether ``exc`` says the device ran out of memory (by type and code: importing the
    CUDA libraries just to test an exception would touch the driver on the error path)."""
    if isinstance(exc, MemoryError):  # cupy.cuda.memory.OutOfMemoryError, rmm's bad_alloc
        return True
    name = type(exc).__name__
    if name == "CudaAPIError":  # numba.cuda's driver error carries the CUresult code
        code = getattr(exc, "code", None)
        try:
            return int(code) == CUDA_ERROR_OUT_OF_MEMORY
        except (TypeError, ValueError):
            return any(t in str(exc) for t in _OOM_TEXT)
    if name in ("CUDARuntimeError", "CUDADriverError"):  # CuPy's raw CUDA errors
        return any(t in str(exc) for t in _OOM_TEXT)
    return False


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


def _settle(fut, call) -> None:
    """Run ``call`` into ``fut``: its result, or the exception it raised."""
    if fut.set_running_or_notify_cancel():
        try:
            fut.set_result(call())
        except BaseException as exc:  # handed to whoever reads the result
            fut.set_exception(exc)


class _Deferred(Future):
    """A future whose call runs when its result is first asked for (:meth:`Backend.start`
    where calls cannot overlap)."""

    def __init__(self, call):
        super().__init__()
        self._call = call

    def result(self, timeout=None):
        if not (self.running() or self.done()):
            _settle(self, self._call)
        return super().result(timeout)


def _cpu_concurrent() -> bool:
    from gpurank.kernels.cpu.threads import concurrent_calls_safe

    return concurrent_calls_safe()


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


def _device_silhouette(xp, score, X, labels, *, sample_size, seed):
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

    return _device_silhouette(cupy, silhouette_score, X, labels, sample_size=sample_size,
                              seed=seed)


_MEMORY_READY = []


def _no_pool_yet(rmm) -> bool:
    """True while RMM still allocates with its default resource (plain ``cudaMalloc``): no
    pool has been set by anyone (dask-cuda, cudf.pandas, the user), so setting one is safe.
    Replacing a resource that already handed out memory is undefined behaviour in RMM."""
    return type(rmm.mr.get_current_device_resource()) is rmm.mr.CudaMemoryResource


def _configure_device_memory(rmm, cupy, numba_cuda, rmm_cupy_allocator, rmm_numba_manager):
    """One allocator for CuPy, cuDF and the Numba kernels: an RMM pool (created only when no
    pool exists yet), CuPy's allocations through it, and Numba's device allocations through
    RMM's External Memory Management plugin, so that running out of device memory raises
    RMM's ``MemoryError`` from every library. Numba binds its memory manager when it first
    creates a CUDA context, so this runs before any kernel launch."""
    if _no_pool_yet(rmm):
        rmm.reinitialize(pool_allocator=True)
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
        _sync=_cupy_sync,
    )


# -- the strict stand-in -----------------------------------------------------------------


class _StandInKernels:
    """``gpurank.kernels.cuda`` fed from the stand-in's arrays.

    On the GPU, CuPy arrays reach the launchers without a copy through
    ``__cuda_array_interface__``; the stand-in's arrays reach them as Numba device arrays
    of their data (``numba.cuda.to_device``: the simulator's, or a real device's). The
    launchers' host results (a result per row, or a few numbers) are recorded as host copies.
    Every other name is the module's own.
    """

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if name.startswith("_") or isinstance(attr, type) or not callable(attr):
            return attr
        from numba import cuda

        from . import strict_device as sd

        def to_kernel(x):
            if isinstance(x, sd.StrictArray):
                a = x._a  # C or Fortran order kept, as a CuPy array reaches the kernels
                contiguous = a.flags.c_contiguous or a.flags.f_contiguous
                return cuda.to_device(a if contiguous else np.ascontiguousarray(a))
            if sd.is_device_object(x):
                raise TypeError(f"kernels.{name} takes arrays; got {type(x).__name__}")
            return x

        def from_kernel(r):
            if isinstance(r, np.ndarray):
                sd.note_host_copy("kernel result", r.shape)
            elif isinstance(r, tuple):
                for v in r:
                    from_kernel(v)
            return r

        def launcher(*args, **kwargs):
            return from_kernel(attr(*[to_kernel(a) for a in args],
                                    **{k: to_kernel(v) for k, v in kwargs.items()}))

        launcher.__name__ = name
        launcher.__doc__ = attr.__doc__
        return launcher


def _model_input(x, *, name, finite):
    """A model's input from the stand-in's device arrays, checked as cuML checks it."""
    from . import strict_device as sd

    if isinstance(x, sd.StrictArray):
        x = x._a
    elif sd.is_device_object(x):
        raise TypeError(f"the model takes arrays; {name} is a {type(x).__name__}")
    x = np.asarray(x)
    if x.dtype.kind == "f" and finite and not np.isfinite(x).all():
        # cuML's check_inputs(ensure_all_finite=True) refuses NaN and infinities.
        raise ValueError(f"Input {name} contains NaN or infinity.")
    return x


class _StandInForest:
    """cuML's ``RandomForestRegressor`` as the engine uses it, computed by scikit-learn:
    device arrays in and out, NaN refused, impurity importances as a host array."""

    def __init__(self, **params):
        from sklearn.ensemble import RandomForestRegressor

        self._model = RandomForestRegressor(**params)

    def fit(self, X, y):
        self._model.fit(_model_input(X, name="X", finite=True),
                        _model_input(y, name="y", finite=True))
        return self

    def predict(self, X):
        from . import strict_device as sd

        return sd.StrictArray(self._model.predict(_model_input(X, name="X", finite=True)))

    @property
    def feature_importances_(self):
        return self._model.feature_importances_


class _StandInKMeans:
    """cuML's ``KMeans(output_type="cupy")`` as the engine uses it, computed by
    scikit-learn: device arrays in, int32 device labels out."""

    def __init__(self, **params):
        from sklearn.cluster import KMeans

        self._model = KMeans(**params)

    def fit(self, X):
        self._model.fit(_model_input(X, name="X", finite=True))
        return self

    @property
    def labels_(self):
        from . import strict_device as sd

        return sd.StrictArray(self._model.labels_.astype(np.int32))

    def predict(self, X):
        from . import strict_device as sd

        return sd.StrictArray(
            self._model.predict(_model_input(X, name="X", finite=True)).astype(np.int32))


def _stand_in_silhouette(X, labels, *, sample_size, seed):
    from sklearn.metrics import silhouette_score

    from . import strict_device as sd

    def score(X, labels, *, chunksize):
        return silhouette_score(_model_input(X, name="X", finite=True),
                                _model_input(labels, name="labels", finite=False))

    return _device_silhouette(sd.xp, score, X, labels, sample_size=sample_size, seed=seed)


def strict_device_backend(*, requested: str = "gpu") -> Backend:
    """The GPU backend's device branches, without CuPy, cuDF or cuML.

    Arrays and frames are :mod:`gpurank.engine.strict_device`'s stand-ins, which behave like
    CuPy's and cuDF's where the engine's code could go wrong on a device (no implicit host
    conversion, no pandas object mixed into a device frame, cuDF's nulls and refusals; see
    that module for what they check and what they cannot). ``on_device`` is True, so every
    device branch of the engine runs. The kernels are ``gpurank.kernels.cuda``'s, where
    Numba runs them: under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` set before Numba
    is imported; small tables only, each CUDA thread runs in Python) or on a real device.
    The models are scikit-learn's behind cuML-like wrappers, so the results equal the CPU
    backend's. :func:`gpurank.engine.strict_device.record_host_copies` records every
    device-to-host copy.

    Parameters
    ----------
    requested : {"gpu", "auto"}, keyword-only
        What the backend stands for: an explicit GPU request, or "auto" (which falls back
        to the CPU where the GPU cannot run a step).

    Raises
    ------
    BackendUnavailableError
        Numba can run no CUDA kernel here: no simulator enabled and no device.
    """
    if requested not in ("gpu", "auto"):
        raise UsageError(f"requested must be 'gpu' or 'auto'; got {requested!r}")
    kernels = importlib.import_module("gpurank.kernels.cuda")
    if not kernels.is_available():
        raise BackendUnavailableError(
            "the strict device backend runs the CUDA kernels, and Numba can run none here: set "
            "NUMBA_ENABLE_CUDASIM=1 before numba is imported, or use a machine with a GPU")
    from . import strict_device as sd

    return Backend(
        name="gpu-strict",
        xp=sd.xp,
        xdf=sd.xdf,
        kernels=_StandInKernels(kernels),
        requested=requested,
        _ml={"random_forest": _StandInForest, "kmeans": _StandInKMeans,
             "silhouette": _stand_in_silhouette},
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
            return (f"{mod} is not installed (use the RAPIDS container or pip install "
                    "'gpurank[gpu]')")
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
