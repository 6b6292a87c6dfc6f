"""The CPU kernels never pull in GPU libraries; the CUDA module imports without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

GPU_MODULES = ("numba.cuda", "cupy", "cudf", "cuml")


@pytest.mark.parametrize("module", ["gpurank.kernels.cpu", "gpurank.kernels.reference"])
def test_host_kernels_do_not_import_gpu_modules(module):
    code = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        f"bad = [m for m in {GPU_MODULES!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"{module} imported {out.stdout.strip()}"


def test_cuda_module_imports_without_a_gpu():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = "import gpurank.kernels.cuda as k; print(k.is_available() in (True, False))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
