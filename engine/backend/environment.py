"""What this machine offers the backends: the library versions, the GPU, and why the GPU
backend cannot run here when it cannot (``gpurank info``)."""

from __future__ import annotations

import importlib
import platform
from importlib import metadata

__all__ = ["describe_environment", "gpu_unavailable_reason"]


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


def describe_environment() -> dict:
    """Versions of every backend library, and the GPU or the reason there is none."""
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
