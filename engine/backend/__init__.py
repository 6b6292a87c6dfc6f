"""The one place that decides where the work runs: CPU (NumPy/pandas) or GPU (CuPy/cuDF).

A :class:`Backend` is resolved once at the entry point and passed down. It is the whole
dispatch surface: array module ``xp``, DataFrame module ``xdf``, the kernel module, and
factories for the two models. Nothing GPU is imported unless the GPU backend is asked for.

==================  =======================================================================
``base``            :class:`Backend` (the seam every step calls), ``MISSING_CODE``, the
                    device out-of-memory test
``_cpu``            the CPU backend: NumPy, pandas, scikit-learn, ``gpurank.kernels.cpu``
``_gpu``            the GPU backend: CuPy, cuDF, cuML's models, one RMM pool
``_strict``         :func:`strict_device_backend`: the GPU backend's device branches on the
                    stand-in, testable without a device
``strict_device``   the stand-in's arrays (CuPy's place) and the host-copy log
``strict_frames``   the stand-in's frames (cuDF's place)
``environment``     library versions, the GPU, :func:`gpu_unavailable_reason`
==================  =======================================================================

Only this package and ``gpurank.kernels.cuda`` import CuPy, cuDF, cuML, RMM or numba.cuda,
each inside the function that needs it.
"""

from __future__ import annotations

from ..errors import BackendUnavailableError
from ..params import Options, check_param
from ._cpu import cpu_backend
from ._gpu import gpu_backend
from ._strict import strict_device_backend
from .base import MISSING_CODE, Backend
from .environment import describe_environment, gpu_unavailable_reason

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


def resolve_backend(name: str = "auto") -> Backend:
    """Resolve a backend name to a :class:`Backend`.

    Parameters
    ----------
    name : {"auto", "cpu", "gpu"} or Backend
        The API's ``backend`` parameter (``--backend`` on the command line); a
        :class:`Backend` is returned as it is. ``"cpu"`` always means the CPU. ``"gpu"``
        means the GPU or a :class:`BackendUnavailableError` that says how to fix it.
        ``"auto"`` uses the GPU when one is usable and the CPU otherwise, recording the
        reason.

    Raises
    ------
    ParamError
        ``backend must be one of 'auto', 'cpu', 'gpu'; got ...`` for any other name (the
        command line shows it with ``--backend``).
    """
    if isinstance(name, Backend):
        return name
    check_param("backend", name, Options(BACKEND_NAMES))
    if name == "cpu":
        return cpu_backend("cpu")
    reason = gpu_unavailable_reason()
    if reason is None:
        return gpu_backend(name)
    if name == "gpu":
        raise BackendUnavailableError(
            f"backend='gpu' was asked for but {reason}; use backend='auto' (--backend auto) to "
            "fall back to the CPU"
        )
    return cpu_backend("auto", reason=f"GPU not used: {reason}")
