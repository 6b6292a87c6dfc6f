"""Import hygiene: the CPU kernels never pull in GPU libraries, ``import gpurank.kernels``
imports no backend, the CUDA package imports without a GPU, and the layout rules hold (same
public names on every backend, no private names imported across modules)."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import gpurank.kernels as K
import pytest

GPU_MODULES = ("numba.cuda", "cupy", "cudf", "cuml")
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _imported_after(statement):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(m for m in {GPU_MODULES!r} if m in sys.modules))\n"
        "print(','.join(m for m in ('gpurank.kernels.cpu', 'gpurank.kernels.cuda', 'numba')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    gpu, backends = out.stdout.splitlines()
    return gpu, backends


@pytest.mark.parametrize("module", ["gpurank.kernels.cpu", "gpurank.kernels.reference",
                                    "gpurank.kernels.cpu.blocks"])
def test_host_kernels_do_not_import_gpu_modules(module):
    gpu, _ = _imported_after(f"import {module}")
    assert gpu == "", f"{module} imported {gpu}"


def test_the_package_imports_no_backend():
    gpu, backends = _imported_after("import gpurank.kernels; gpurank.kernels.CONTRACTS")
    assert gpu == "" and backends == ""


def test_cuda_package_imports_without_a_gpu():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = "import gpurank.kernels.cuda as k; print(k.is_available() in (True, False))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_every_backend_exports_the_contracts():
    from gpurank.kernels import cpu, reference

    assert list(cpu.__all__) == [*K.CONTRACTS, "MAX_CRITERIA"]
    for name in [*K.CONTRACTS, "MAX_CRITERIA"]:
        assert name in reference.__all__ and hasattr(reference, name), name
    assert cpu.MAX_CRITERIA is None and reference.MAX_CRITERIA is None
    assert set(K.__all__) <= set(dir(K))


def test_cuda_exports_what_cpu_exports(cuda_impl):
    from gpurank.kernels import cpu

    assert cuda_impl.__all__ == cpu.__all__
    assert cuda_impl.MAX_CRITERIA == 16
    for name in cuda_impl.__all__:
        assert hasattr(cuda_impl, name), name


def _private_imports(path):
    """(line, module, name) of every underscore name imported from a module whose own name
    has no leading underscore, in one file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            last = node.module.rsplit(".", 1)[-1]
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__") \
                        and not last.startswith("_"):
                    out.append((node.lineno, node.module, a.name))
    return out


def test_no_private_names_cross_module_boundaries():
    """A kernels module imports underscore names only from private helper modules; the
    engine and the benchmarks import no private kernel name or module at all."""
    bad = []
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        bad += [(path.name, *b) for b in _private_imports(path)]
    for folder in ("engine", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "gpurank.kernels"):
                    names = [node.module] + [a.name for a in node.names]
                    if any(p.startswith("_") for n in names for p in n.split(".")):
                        bad.append((path.name, node.lineno, node.module))
    assert bad == []
