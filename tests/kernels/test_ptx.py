"""Every CUDA kernel (Pareto/TOPSIS and SMAA) compiles to real PTX for compute capability 9.0
(no GPU needed).

Runs in a subprocess without NUMBA_ENABLE_CUDASIM (the simulator cannot compile PTX)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = r"""
import sys
try:
    from numba import cuda
    from numba.cuda.cudadrv.nvvm import NVVM  # noqa: F401
    NVVM()
except Exception as e:  # toolkit (NVVM) missing
    print("SKIP", type(e).__name__, e)
    sys.exit(0)
import gpurank.kernels.cuda as kc
fns = kc.kernel_functions()
bad = []
signatures = kc.ptx_signatures(sys.argv[1].split(","))
assert signatures, sys.argv[1]
for name, sig in signatures:
    try:
        ptx, _ = cuda.compile_ptx(fns[name], sig, cc=(9, 0))
        assert ".target sm_90" in ptx, name
    except Exception as e:
        bad.append(f"{name} {sig}: {type(e).__name__}: {e}")
print("BAD" if bad else "OK", len(signatures))
print("\n".join(bad))
"""


# Every module that defines kernels, in two subprocesses of similar length.
MODULES = ["_launch,_tree,_dnc,count,rank,topsis,vikor", "smaa"]


def test_every_kernel_module_is_compiled():
    """The two groups below cover every module that defines kernels, and every kernel has
    at least one signature to compile."""
    import gpurank.kernels.cuda as kc

    fns = kc.kernel_functions()
    assert {fn.__module__.rsplit(".", 1)[-1] for fn in fns.values()} == set(
        ",".join(MODULES).split(","))
    assert {name for name, _ in kc.ptx_signatures()} == set(fns)


def _env():
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


@pytest.mark.parametrize("modules", MODULES)
def test_all_cuda_kernels_compile_to_ptx_for_sm90(modules):
    out = subprocess.run(
        [sys.executable, "-c", CODE, modules], capture_output=True, text=True, env=_env(),
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(f"numba-cuda toolkit (NVVM) not installed: {out.stdout.strip()}; "
                    "pip install 'numba-cuda[cu12]'")
    assert out.stdout.startswith("OK"), out.stdout


FMA_CODE = r"""
import sys
try:
    from numba import cuda
    from numba.cuda.cudadrv.nvvm import NVVM  # noqa: F401
    NVVM()
except Exception as e:
    print("SKIP", type(e).__name__, e)
    sys.exit(0)
import gpurank.kernels.cuda as kc
fns = kc.kernel_functions()
for name in sys.argv[1].split(","):
    sig = dict(kc.ptx_signatures())[name]
    if "{f}" in sig or "float32" in sig:
        sig = [s for n, s in kc.ptx_signatures() if n == name and "float64" in s][-1]
    ptx, _ = cuda.compile_ptx(fns[name], sig, cc=(9, 0))
    print(name, ptx.count("fma.rn.f64"), ptx.count("mul.rn.f64"))
"""


def test_score_kernels_round_every_product():
    """The kernels whose sums decide ties (TOPSIS closeness, the column sums of squares,
    SMAA scores) have no fused multiply-add in their PTX: each product is rounded on its
    own, as on the host (NVVM would otherwise contract ``a * b + c``)."""
    names = ["smaa_score", "closeness", "stats", "scaled_squares"]
    out = subprocess.run(
        [sys.executable, "-c", FMA_CODE, ",".join(names)], check=False, capture_output=True,
        text=True, env=_env(), timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(f"numba-cuda toolkit (NVVM) not installed: {out.stdout.strip()}")
    counts = {line.split()[0]: line.split()[1:] for line in out.stdout.strip().splitlines()}
    assert set(counts) == set(names), out.stdout
    for name, (fma, mul) in counts.items():
        assert int(fma) == 0 and int(mul) > 0, (name, fma, mul)
