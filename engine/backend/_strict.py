"""The strict stand-in backend: the GPU backend's device branches without a device.

The adapters that let the engine run on :mod:`.strict_device`'s arrays and
:mod:`.strict_frames`' frames as it runs on CuPy and cuDF: the CUDA kernels fed from the
stand-in's arrays, and cuML-like wrappers of scikit-learn's models.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..errors import BackendUnavailableError, UsageError
from . import strict_device as sd
from ._gpu import device_silhouette
from .base import Backend
from .strict_frames import xdf

__all__ = ["strict_device_backend"]


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
        return sd.StrictArray(self._model.labels_.astype(np.int32))

    def predict(self, X):
        return sd.StrictArray(
            self._model.predict(_model_input(X, name="X", finite=True)).astype(np.int32))


def _stand_in_silhouette(X, labels, *, sample_size, seed):
    from sklearn.metrics import silhouette_score

    def score(X, labels, *, chunksize):
        return silhouette_score(_model_input(X, name="X", finite=True),
                                _model_input(labels, name="labels", finite=False))

    return device_silhouette(sd.xp, score, X, labels, sample_size=sample_size, seed=seed)


def strict_device_backend(*, requested: str = "gpu") -> Backend:
    """The GPU backend's device branches, without CuPy, cuDF or cuML.

    Arrays and frames are :mod:`.strict_device` and :mod:`.strict_frames`' stand-ins, which behave like
    CuPy's and cuDF's where the engine's code could go wrong on a device (no implicit host
    conversion, no pandas object mixed into a device frame, cuDF's nulls and refusals; see
    that module for what they check and what they cannot). ``on_device`` is True, so every
    device branch of the engine runs. The kernels are ``gpurank.kernels.cuda``'s, where
    Numba runs them: under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` set before Numba
    is imported; small tables only, each CUDA thread runs in Python) or on a real device.
    The models are scikit-learn's behind cuML-like wrappers, so the results equal the CPU
    backend's. :func:`.strict_device.record_host_copies` records every
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
    return Backend(
        name="gpu-strict",
        xp=sd.xp,
        xdf=xdf,
        kernels=_StandInKernels(kernels),
        requested=requested,
        _ml={"random_forest": _StandInForest, "kmeans": _StandInKMeans,
             "silhouette": _stand_in_silhouette},
    )
