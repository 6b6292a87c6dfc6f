"""Results as plain JSON values: what ``summary.json``, the manifests and the model files
hold."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["to_jsonable"]


def to_jsonable(obj):
    """Turn results into JSON builtins: NumPy scalars and arrays, tuples, and NaN as null.

    JSON has no NaN; a missing figure is written as null rather than as invalid JSON.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if obj is None or isinstance(obj, str):
        return obj
    if obj is pd.NA or obj is pd.NaT:
        return None
    return str(obj)
