"""Kernels compiled once per machine: every CUDA kernel is jitted with ``cache=True``, and a
second process loads a compiled CPU kernel from Numba's on-disk cache instead of compiling
it again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_CHECK_CUDA = textwrap.dedent("""
    import importlib
    from gpurank.kernels.cuda import _launch
    importlib.import_module("gpurank.kernels.cuda")
    for name, fn in _launch.kernel_functions().items():
        disp = getattr(importlib.import_module(fn.__module__), fn.__name__)
        cache = type(disp._cache).__name__
        assert cache != "NullCache", (name, cache)
    print(len(_launch.kernel_functions()), "kernels cached")
""")

_RUN_CPU = textwrap.dedent("""
    import numpy as np
    from gpurank.kernels import cpu
    c = np.array([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0], [0.5, 3.0]])
    print([cpu.pareto_rank(c).tolist(), cpu.domination_count(c).tolist()])
""")


def _run(code, env):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_every_cuda_kernel_has_the_disk_cache_on(tmp_path):
    """Without the simulator (numba-cuda's real dispatchers, compiled lazily: no GPU needed
    to build them) every registered kernel's dispatcher has a disk cache."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    out = _run(_CHECK_CUDA, env)
    assert "kernels cached" in out and int(out.split()[0]) >= 20, out


def test_a_second_process_loads_the_compiled_cpu_kernels(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    first = _run(_RUN_CPU, env)
    assert "data saved to" in first
    index = list(tmp_path.rglob("*.nbi"))
    assert index and list(tmp_path.rglob("*.nbc")), sorted(tmp_path.rglob("*"))
    second = _run(_RUN_CPU, env)
    assert "data loaded from" in second
    assert "data saved to" not in second  # nothing compiled again
    result = [line for line in first.splitlines() if line.startswith("[[")]
    assert result and result == [line for line in second.splitlines() if line.startswith("[[")]
