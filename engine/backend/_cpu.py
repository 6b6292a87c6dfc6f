"""The CPU backend: NumPy, pandas, scikit-learn and the Numba CPU kernels."""

from __future__ import annotations

import numpy as np
import pandas as pd
from gpurank.kernels import cpu as cpu_kernels
from gpurank.kernels.cpu.threads import concurrent_calls_safe

from .base import Backend

__all__ = ["cpu_backend", "concurrent_calls"]


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


def concurrent_calls() -> bool:
    """Whether calls started on threads of their own may run kernels at once (Numba's
    threading layer decides)."""
    return concurrent_calls_safe()


def cpu_backend(requested: str, reason: str = "") -> Backend:
    """The CPU backend; ``requested`` and ``reason`` say what was asked for and why this
    one was chosen."""
    return Backend(
        name="cpu",
        xp=np,
        xdf=pd,
        kernels=cpu_kernels,
        requested=requested,
        reason=reason,
        _ml={"random_forest": _cpu_random_forest, "kmeans": _cpu_kmeans,
             "silhouette": _cpu_silhouette},
        _concurrent=concurrent_calls,
    )
