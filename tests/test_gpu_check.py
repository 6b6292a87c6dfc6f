"""benchmarks/gpu_check.py runs under the GPU machine's conditions.

That machine has python3 with NumPy, pandas, pyarrow, scikit-learn, Numba, numba-cuda and
CuPy, a plain checkout, no network, and neither gpurank installed nor pytest, hypothesis,
cuDF or cuML. Here the script runs ``--simulate`` in a fresh interpreter (``-I``: no
PYTHONPATH, no user site, no current folder on the path) behind an import blocker that lets
through only the standard library, those packages and what they depend on, and hides the
installed gpurank: it must make gpurank importable from the checkout itself and exit 0.
"""

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The distributions of the GPU machine (CuPy is not installed here; the script runs without).
MACHINE = ("numpy", "pandas", "pyarrow", "scikit-learn", "numba", "numba-cuda")


def _name(req: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-")


def _closure(roots):
    """The distributions ``roots`` need, transitively (extras left out)."""
    from packaging.requirements import Requirement

    seen, todo = set(), [r.lower() for r in roots]
    while todo:
        dist = todo.pop()
        if dist in seen:
            continue
        try:
            reqs = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(dist)
        for raw in reqs:
            req = Requirement(raw)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            todo.append(_name(req.name))
    return seen


def allowed_modules():
    """Top-level import names of the machine's distributions and their dependencies."""
    dists = _closure(MACHINE)
    out = set()
    for module, owners in metadata.packages_distributions().items():
        if any(_name(o) in dists for o in owners):
            out.add(module)
    return sorted(out)


PREAMBLE = r"""
import importlib.abc, os, runpy, sys
# Modules the interpreter loaded at startup (site's .pth hooks) are already there.
ALLOWED = set(os.environ["GPU_CHECK_ALLOWED"].split(",")) | {
    m.partition(".")[0] for m in sys.modules}
ROOT = os.environ["GPU_CHECK_ROOT"]
# The installed gpurank (an editable install's finder, too) must not be found.
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in ALLOWED or top.startswith("_sysconfigdata"):
            return None
        if top == "gpurank" and name != "gpurank" and path and \
                all(str(p).startswith(ROOT) for p in path):
            return None  # the checkout's own package, set up by the script
        raise ModuleNotFoundError(f"No module named {name!r} (blocked: not on the GPU machine)",
                                  name=name)

sys.meta_path.insert(0, Blocker())
"""

PROBE = PREAMBLE + r"""
for name in ("gpurank", "pytest", "hypothesis", "dask", "cudf", "cuml", "cupy", "rich",
             "matplotlib"):
    try:
        __import__(name)
    except ImportError:
        continue
    sys.exit(f"{name} was importable")
import numpy, pandas, pyarrow, sklearn, numba  # noqa: E401
"""

RUN = PREAMBLE + r"""
sys.argv = ["benchmarks/gpu_check.py", *sys.argv[1:]]
runpy.run_path("benchmarks/gpu_check.py", run_name="__main__")
"""


def _env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_ENABLE_CUDASIM", "GPURANK_REAL_GPU")}
    env.update(GPU_CHECK_ALLOWED=",".join(allowed_modules()), GPU_CHECK_ROOT=str(ROOT),
               HOME=str(tmp_path))
    return env


def test_the_blocker_leaves_only_the_machines_packages(tmp_path):
    assert {"numpy", "pandas", "pyarrow", "sklearn", "scipy", "joblib", "threadpoolctl",
            "numba", "llvmlite", "numba_cuda"} <= set(allowed_modules())
    assert not {"pytest", "hypothesis", "gpurank", "dask", "rich"} & set(allowed_modules())
    proc = subprocess.run([sys.executable, "-I", "-c", PROBE], cwd=ROOT, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gpu_check_simulate_runs_from_a_bare_checkout(tmp_path):
    out = tmp_path / "gpu_check.json"
    proc = subprocess.run([sys.executable, "-I", "-c", RUN, "--simulate", "--json", str(out)],
                          cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"gpurank from {ROOT / 'engine'}" in proc.stdout
    assert "| step | rows | CPU time | GPU time | speed-up | parity | note |" in proc.stdout
    report = json.loads(out.read_text())
    assert report["simulate"] is True and report["status"] == 0
    rows = {r["step"]: r for r in report["rows"]}
    assert set(report["columns"]) == {"step", "rows", "cpu_s", "gpu_s", "speedup", "parity",
                                      "note"}
    for step in ("engine rank (derived metrics, device criteria matrix)",
                 "engine analyze (stand-in frames, CUDA kernels)",
                 "kernel parity realistic m=3", "kernel parity topsis vector"):
        assert rows[step]["parity"] == "PASS", rows[step]
    assert rows["engine analyze (cuDF, cuML)"]["parity"] == "skipped"
    assert not [r for r in report["rows"] if r["parity"] in ("FAIL", "ERROR")]
    # The timings come first (a cold run cannot spend the budget before them), rank and
    # count at each timing size, TOPSIS at each of its sizes; parity rows carry no times.
    steps = [r["step"] for r in report["rows"]]
    assert steps[:3] == ["timing pareto_rank realistic m=3",
                         "timing domination_count realistic m=3", "timing topsis m=4"]
    assert "launches" in report["rows"][0]["note"]
    assert all(r["speedup"] is None and r["gpu_s"] is None for r in report["rows"]
               if r["parity"] != "n/a")
    # One JSON summary, last.
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["gpu_check"] == "passed" and last["failed"] == []
    assert set(last["timings"]) == {f"{r['step']} n={r['rows']}" for r in report["rows"]
                                    if r["gpu_s"] is not None}


def _gpu_check_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" /
                                                  "gpu_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_compile_probe_says_in_one_line_that_nvvm_is_missing(monkeypatch):
    """Where numba-cuda has no NVVM, the probe (not every step) says so, with the fix."""
    from numba import cuda

    def no_nvvm(*args, **kwargs):
        raise RuntimeError("libNVVM cannot be found. Do `conda install cudatoolkit`:\n"
                           "library nvvm not found")

    monkeypatch.setattr(cuda, "compile_ptx", no_nvvm, raising=False)
    why = _gpu_check_module().compile_probe(simulate=False)
    assert why is not None and "\n" not in why
    assert "NVVM is missing" in why and "pip install 'numba-cuda[cu12]'" in why
