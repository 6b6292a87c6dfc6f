"""The CPU path must never import a GPU library."""

import json
import subprocess
import sys

GPU_MODULES = ("cupy", "cudf", "cuml", "numba.cuda", "rmm", "dask_cudf", "dask_cuda")

SCRIPT = """
import json, sys
import pandas as pd
sys.path.insert(0, {tests!r})
from tables import config_table
from gpurank.engine import Engine
Engine(backend="cpu").analyze(config_table(40), n_estimators=5)
import gpurank.kernels.cpu, gpurank.kernels.reference
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {roots!r} or m.startswith("numba.cuda"))))
"""


def test_cpu_analysis_imports_no_gpu_module():
    from pathlib import Path

    roots = ["cupy", "cudf", "cuml", "rmm", "dask_cudf", "dask_cuda"]
    code = SCRIPT.format(tests=str(Path(__file__).parent), roots=roots)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], f"CPU path imported GPU modules: {loaded}"
