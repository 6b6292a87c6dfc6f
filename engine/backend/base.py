"""The seam every step runs through: :class:`Backend`, what it holds and what it does.

A :class:`Backend` is built by :func:`gpurank.engine.backend.resolve_backend` (or
:func:`~gpurank.engine.backend.strict_device_backend`) and passed down; its factories live in
:mod:`._cpu`, :mod:`._gpu` and :mod:`._strict`. This module imports no device library.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from ..errors import DataError, UnsupportedOnGPU, UsageError
from ..masks import definite
from ..schema import numeric_values

__all__ = ["Backend", "MISSING_CODE", "CUDA_ERROR_OUT_OF_MEMORY", "is_device_oom"]

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
    _concurrent: object = field(default=None, repr=False, compare=False)

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
        return self._concurrent is not None and bool(self._concurrent())

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
        return self.on_device and is_device_oom(exc)

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
        if not self.on_device:
            return numeric_values(df, column, role=role)
        s = df[column]
        if s.dtype.kind not in "iufb":
            # Text that holds numbers is read as numbers, as on the CPU; the first value that
            # is not one is named (a null mask is filled before it reaches the device).
            s = self._numbers_of_text(s, column, role=role)
        return s.astype("float64").to_cupy(na_value=np.nan)

    def _numbers_of_text(self, s, column, *, role):
        """A text column's values as numbers (missing stays missing), or the CPU's error
        naming the first value that is not a number."""
        number = self.xdf.to_numeric(s, errors="coerce")
        bad = definite(number.isna() & s.notna())
        if bool(bad.any()):
            i = int(self.xp.flatnonzero(bad.to_cupy())[0])
            raise DataError(f"{role} column '{column}' must be numeric; row {i} holds "
                            f"{s.iloc[i]!r}")
        return number

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


def is_device_oom(exc: BaseException) -> bool:
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
