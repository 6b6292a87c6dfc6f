"""The errors gpurank raises, one class per kind of failure a user can act on.

Every message names the column or parameter, the offending value and what is allowed, in one
line, so the CLI can print it without a traceback. The CLI maps each class to an exit code.
"""

from __future__ import annotations

__all__ = [
    "GpurankError",
    "UsageError",
    "SchemaError",
    "DataError",
    "BackendUnavailableError",
    "UnsupportedOnGPU",
    "DeviceMemoryError",
]


class GpurankError(Exception):
    """Base class of every error gpurank raises on purpose."""

    exit_code = 1


class UsageError(GpurankError, ValueError):
    """A parameter has a value gpurank does not accept (exit code 2)."""

    exit_code = 2


class DataError(GpurankError, ValueError):
    """The table itself is unusable: missing, unreadable, empty or invalid values (exit code 3)."""

    exit_code = 3


class SchemaError(DataError):
    """A required column is missing or has the wrong type (exit code 3)."""


class BackendUnavailableError(GpurankError, RuntimeError):
    """The requested backend cannot run on this machine (exit code 4)."""

    exit_code = 4


class UnsupportedOnGPU(GpurankError, NotImplementedError):
    """An operation has no GPU implementation for these inputs.

    This is the only exception on which ``backend="auto"`` falls back to the CPU; the reason
    is recorded on the result.
    """

    exit_code = 4


class DeviceMemoryError(BackendUnavailableError):
    """The GPU ran out of memory during a step (exit code 4)."""
