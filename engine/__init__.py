"""gpurank engine: evaluate, group and rank deep-learning training configurations.

The public API is flat::

    from gpurank.engine import Engine, analyze, AnalysisSpec, Criterion

Nothing here imports a GPU library; the GPU backend is built only when asked for.
"""

from .api import Engine, analyze
from .backend import Backend, resolve_backend
from .errors import (
    BackendUnavailableError,
    DataError,
    DeviceMemoryError,
    GpurankError,
    SchemaError,
    UnsupportedOnGPU,
    UsageError,
)
from .io import read_table, write_table
from .metrics import derive_metrics
from .results import AnalysisResult, ClusterResult, ImportanceResult, RankResult
from .spec import AnalysisSpec, Criterion, parse_criteria

__all__ = [
    "Engine",
    "analyze",
    "Backend",
    "resolve_backend",
    "AnalysisSpec",
    "Criterion",
    "parse_criteria",
    "derive_metrics",
    "read_table",
    "write_table",
    "AnalysisResult",
    "ClusterResult",
    "ImportanceResult",
    "RankResult",
    "GpurankError",
    "UsageError",
    "DataError",
    "SchemaError",
    "BackendUnavailableError",
    "UnsupportedOnGPU",
    "DeviceMemoryError",
]
