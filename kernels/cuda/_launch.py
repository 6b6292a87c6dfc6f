"""Launch geometry, device transfers and the device helpers every CUDA kernel module shares.

Kernels are plain Python functions registered with :func:`kernel`, which hands back a lazy
``numba.cuda.jit`` dispatcher (compiled for the argument types of its first launch) and
records the PTX signatures the compile test (``tests/kernels/test_ptx.py``) builds for
sm_90. Under the CUDA simulator the same functions run as Python; the simulator swaps the
module global ``cuda`` of each kernel module for its per-thread fake, which is why every
kernel module imports ``cuda`` at module level.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import config, cuda

from .. import _shared
from .._validate import (
    check_costs,
    check_device_out,
    check_float_dtype,
    check_is_device,
    check_max_criteria,
    check_ndim2,
    not_finite_message,
)
from . import _tiles

__all__ = ["TILE", "MAX_CRITERIA", "LOW_OCCUPANCY_MESSAGE", "kernel", "kernel_functions",
           "ptx_signatures", "is_available", "blocks", "mul_rn", "iota_kernel", "fill_kernel",
           "gather_kernel", "scatter_i32_kernel",
           "scatter_i64_kernel", "nonfinite_kernel", "merge_pass_kernel",
           "CUDA_ERROR_OUT_OF_MEMORY", "device_array", "to_device", "is_device", "host_array",
           "shape_of", "to_device_matrix", "matrix_and_result", "device_out", "sorted_rows",
           "lex_order"]

TILE = 128  # threads per block and rows per shared-memory tile
MAX_CRITERIA = 16  # columns per row held in shared and local memory

_REGISTRY = {}  # kernel name -> (Python function, PTX signatures)

# numba-cuda warns on every launch of fewer than 128 blocks. The kernels size their grids
# by the data, so small grids are intended: a small table, the top levels of a tree, one
# block per tile of a short sort; the wide steps (one thread per row, one block per tile)
# fill the device whenever the table is large enough to. numba-cuda's own switch turns the
# warning off (its test suite does the same); the message filter covers a numba-cuda
# without that switch.
LOW_OCCUPANCY_MESSAGE = r"Grid size \d+ will likely result in GPU under-utilization"
warnings.filterwarnings("ignore", message=LOW_OCCUPANCY_MESSAGE)
try:
    from numba.cuda.core import config as _cuda_config
except ImportError:  # an older numba-cuda: the filter above does it
    _cuda_config = None
if _cuda_config is not None and hasattr(_cuda_config, "CUDA_LOW_OCCUPANCY_WARNINGS"):
    _cuda_config.CUDA_LOW_OCCUPANCY_WARNINGS = 0


def kernel(*signatures):
    """Register a kernel and return its ``numba.cuda.jit(cache=True)`` dispatcher.

    ``signatures`` are the Numba signatures compiled to PTX by the tests; ``{f}`` in one
    stands for both float32 and float64. The kernel's name is the function's, without a
    ``_kernel`` suffix.
    """

    def register(fn):
        sigs = []
        for s in signatures:
            sigs += [s.format(f=f) for f in ("float32", "float64")] if "{f}" in s else [s]
        _REGISTRY[fn.__name__.removesuffix("_kernel")] = (fn, sigs)
        # Compiled once per machine, not per process: the on-disk cache (NUMBA_CACHE_DIR,
        # else __pycache__ beside the module) keyed by signature and compute capability.
        return cuda.jit(fn, cache=True)

    return register


def kernel_functions():
    """The kernels' Python functions by name, e.g. for ``numba.cuda.compile_ptx``."""
    return {name: fn for name, (fn, _) in _REGISTRY.items()}


def ptx_signatures(modules=None):
    """(kernel name, signature) pairs to compile to PTX, for the kernels defined in the
    modules named in ``modules`` (e.g. ``["smaa"]``; every module when None)."""
    out = []
    for name, (fn, sigs) in _REGISTRY.items():
        if modules is None or fn.__module__.rsplit(".", 1)[-1] in modules:
            out += [(name, s) for s in sigs]
    return out


def is_available():
    """True when kernels can run: a CUDA device is visible, or the simulator is enabled."""
    try:
        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - any driver/toolkit failure means "not available"
        return False


def blocks(n, tpb=TILE):
    """Blocks of ``tpb`` threads covering ``n`` items (at least one)."""
    return max(1, (n + tpb - 1) // tpb)


# -- device helpers compiled into the kernels --------------------------------------------------

_lex_compare = cuda.jit(device=True, inline=True)(_shared.lex_compare)
_key_compare = cuda.jit(device=True, inline=True)(_tiles.key_compare)


# Products rounded on their own. NVVM contracts a product feeding an addition into one fused
# multiply-add by default (libNVVM's -fma=1), which rounds once instead of twice, so sums of
# squares and weighted distances would differ from the host's in the last bits, and exact
# ties between rows (equal scores, broken by index) could fall differently on the two
# backends. libdevice's dmul_rn is an explicitly rounded multiplication that is never
# contracted; the simulator runs kernels as Python, whose float multiplication is the same
# IEEE operation (its libdevice functions are stubs).
if config.ENABLE_CUDASIM:

    @cuda.jit(device=True, inline=True)
    def mul_rn(a, b):
        """a * b, rounded (float64)."""
        return a * b

else:
    from numba.cuda import libdevice

    @cuda.jit(device=True, inline=True)
    def mul_rn(a, b):
        """a * b, rounded on its own (float64; never fused into an FMA)."""
        return libdevice.dmul_rn(a, b)


# -- small kernels -------------------------------------------------------------------------------


@kernel("void(int64[:])")
def iota_kernel(a):
    """a[i] = i: the identity permutation the merge sort starts from."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = i


@kernel("void(int32[:], int32)", "void(int8[:], int8)", "void(int64[:], int64)")
def fill_kernel(a, v):
    """a[:] = v on the device (no host buffer to copy from)."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = v


@kernel("void({f}[:, :], int64[:], {f}[:, :])")
def gather_kernel(x, order, cs):
    """cs[k, p] = x[order[p], k]: the rows in sorted order, column-major (coalesced later)."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        r = order[p]
        for k in range(x.shape[1]):
            cs[k, p] = x[r, k]


@kernel("void(int64[:], int32[:], int32[:])")
def scatter_i32_kernel(order, src, dst):
    """dst[order[p]] = src[p]: ranks back to the caller's row order."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        dst[order[p]] = src[p]


@kernel("void(int64[:], int64[:], int64[:])")
def scatter_i64_kernel(order, src, dst):
    """dst[order[p]] = src[p]: counts back to the caller's row order."""
    p = cuda.grid(1)
    if p < order.shape[0]:
        dst[order[p]] = src[p]


@kernel("void({f}[:, :], int64[:])")
def nonfinite_kernel(x, first):
    """first[0] = smallest flat index (row-major) of a NaN/inf entry."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        for k in range(x.shape[1]):
            v = x[i, k]
            if v != v or v == math.inf or v == -math.inf:
                cuda.atomic.min(first, 0, i * x.shape[1] + k)
                break


@kernel("void({f}[:, :], int64[:], int64, int64, int64[:], int64[:])")
def merge_pass_kernel(x, codes, m, width, src, dst):
    """One pass of a bottom-up merge sort of the row indices of ``x``: runs of ``width``
    sorted rows are merged pairwise into runs of ``2 * width``. Rows sort by ``codes`` first
    when it holds one per row (empty: lexicographic order alone), then lexicographically,
    ties by index. Each thread places one element: its offset in its own run plus a binary
    search for how many rows of the other run sort before it (the index makes the order
    strict, so both runs agree on every position; [Green2012])."""
    n = src.shape[0]
    p = cuda.grid(1)
    if p < n:
        i = src[p]
        start = (p // (2 * width)) * (2 * width)
        mid = min(start + width, n)
        end = min(start + 2 * width, n)
        if p < mid:
            lo = mid
            hi = end
        else:
            lo = start
            hi = mid
        first = lo
        while lo < hi:
            h = (lo + hi) // 2
            j = src[h]
            if codes.shape[0] > 0:
                c = _key_compare(codes, x, j, i, m)
            else:
                c = _lex_compare(x, j, i, m)
            if c < 0 or (c == 0 and j < i):
                lo = h + 1
            else:
                hi = h
        before = lo - first  # rows of the other run that sort before row i
        if p < mid:
            dst[p + before] = i
        else:
            dst[start + (p - mid) + before] = i


# -- host side -----------------------------------------------------------------------------------

#: ``CUresult.CUDA_ERROR_OUT_OF_MEMORY``: the code of numba-cuda's ``CudaAPIError`` when an
#: allocation fails after its retry (numba-cuda frees pending deallocations and tries once
#: more before raising it).
CUDA_ERROR_OUT_OF_MEMORY = 2


def _allocation_failed(exc):
    """Whether ``exc`` is numba-cuda's out-of-memory driver error (by name and code, so
    that the error path imports nothing)."""
    if type(exc).__name__ != "CudaAPIError":
        return False
    try:
        return int(getattr(exc, "code", -1)) == CUDA_ERROR_OUT_OF_MEMORY
    except (TypeError, ValueError):
        return "CUDA_ERROR_OUT_OF_MEMORY" in str(exc)


def _nbytes(shape, dtype):
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def _out_of_memory(nbytes, exc):
    return MemoryError(f"GPU out of memory: could not allocate {nbytes} bytes on the device "
                       f"({type(exc).__name__}: {exc})")


def device_array(shape, dtype):
    """``numba.cuda.device_array`` whose allocation failure is a ``MemoryError`` (what the
    engine turns into its device-memory error) instead of the driver's ``CudaAPIError``;
    every kernel module allocates through this function or :func:`to_device`."""
    try:
        return cuda.device_array(shape, dtype=dtype)
    except Exception as exc:
        if _allocation_failed(exc):
            raise _out_of_memory(_nbytes(shape, dtype), exc) from exc
        raise


def to_device(a):
    """``numba.cuda.to_device`` with the allocation failure of :func:`device_array`."""
    try:
        return cuda.to_device(a)
    except Exception as exc:
        if _allocation_failed(exc):
            a = np.asarray(a)
            raise _out_of_memory(a.nbytes, exc) from exc
        raise



def is_device(x):
    """True for a Numba device array or a foreign ``__cuda_array_interface__`` object."""
    return hasattr(x, "copy_to_host") or (
        hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray))


def host_array(x):
    """``x`` on the host (device arrays are copied; anything else is returned as is)."""
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "get") and not isinstance(x, np.ndarray):  # CuPy
        return x.get()
    if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
        return cuda.as_cuda_array(x).copy_to_host()
    return x


def shape_of(x, name):
    """The (n, m) shape of a host or device matrix, without moving it."""
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.asarray(x).shape
    check_ndim2(len(shape), name)
    return shape


def to_device_matrix(x, *, name, limit=True):
    """A 2-D float device array for ``x`` (no copy for device inputs), validated before any
    compute kernel runs: NaN/inf rejected naming row and column, at most ``MAX_CRITERIA``
    columns (unless ``limit`` is False)."""
    if hasattr(x, "copy_to_host"):  # a Numba device array (real or simulated)
        d = x
    elif is_device(x):
        d = cuda.as_cuda_array(x)  # CuPy array, cuDF column: zero copy
    else:
        d = to_device(check_costs(x, name=name))
        if limit:
            check_max_criteria(d.shape[1], MAX_CRITERIA, name=name)
        return d
    check_ndim2(d.ndim, name)
    check_float_dtype(d.dtype, name)
    if limit:
        check_max_criteria(d.shape[1], MAX_CRITERIA, name=name)
    _check_finite(d, name)
    return d


def matrix_and_result(costs, dtype):
    """The validated device matrix of ``costs`` and an uninitialized device vector of one
    ``dtype`` result per row."""
    d = to_device_matrix(costs, name="costs")
    return d, device_array(d.shape[0], dtype)


def _check_finite(d, name):
    n, m = d.shape
    if n == 0 or m == 0:
        return
    first = to_device(np.array([n * m], dtype=np.int64))
    nonfinite_kernel[blocks(n), TILE](d, first)
    f = int(first.copy_to_host()[0])
    if f < n * m:
        r, c = divmod(f, m)
        value = d[r : r + 1, c : c + 1].copy_to_host()[0, 0]
        raise ValueError(not_finite_message(name, r, c, value))


def device_out(out, n):
    """``out`` as a Numba device array after checking it can take n float64 scores."""
    check_is_device(is_device(out), out, "out")
    # a Numba device array (real or simulated) as it is, a CuPy array without a copy
    o = out if hasattr(out, "copy_to_host") else cuda.as_cuda_array(out)
    check_device_out(o, n)
    return o


def sorted_rows(d, codes):
    """Row indices of the device matrix ``d`` sorted by ``codes`` (an int64 device array,
    one per row; empty for none), then lexicographically, ties by index (int64 device
    array): a bottom-up merge sort on the device, ceil(log2 n) passes of one
    binary-searching thread per row, O(n log^2 n m) comparisons."""
    n, m = d.shape
    src = device_array(n, np.int64)
    dst = device_array(n, np.int64)
    iota_kernel[blocks(n), TILE](src)
    width = 1
    while width < n:
        merge_pass_kernel[blocks(n), TILE](d, codes, m, width, src, dst)
        src, dst = dst, src
        width *= 2
    return src


def lex_order(d):
    """Row indices of the device matrix ``d`` in lexicographic order, ties by index (int64
    device array; :func:`sorted_rows` without codes)."""
    return sorted_rows(d, device_array(0, np.int64))
