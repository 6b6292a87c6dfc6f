"""Hardware facts the project maintains: accelerators, with the source of every number.

The table ships as ``gpurank/engine/data/accelerators.csv``. Users can pass their own file with
the same columns.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

__all__ = ["accelerator_catalog"]


@lru_cache(maxsize=8)
def _read(path: str | None) -> pd.DataFrame:
    if path is None:
        with resources.files("gpurank.engine.data").joinpath("accelerators.csv").open("rb") as fh:
            return pd.read_csv(fh)
    return pd.read_csv(Path(path))


def accelerator_catalog(path=None) -> pd.DataFrame:
    """Return the accelerator catalog as a new DataFrame, one row per ``accelerator_id``.

    Parameters
    ----------
    path : str or Path, optional
        A CSV with the same columns as the built-in catalog; the built-in one when omitted.
    """
    return _read(None if path is None else str(path)).copy()
