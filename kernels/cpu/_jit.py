"""Compiling the per-variant kernels that the CPU factories build.

A kernel that wants a constant baked into its machine code (the number of columns, so that
the column loops unroll) is written as a closure over that constant inside a factory
function, and the factory is called once per value; Numba freezes closure variables like
globals. Numba's disk cache identifies a function by its qualified name, its bytecode and
the values it closes over, not by its compiler options, so two variants of one closure that
differ only in ``parallel=`` would share a cache entry: :func:`compile_variant` gives each
variant a name of its own.
"""

from __future__ import annotations

import functools
import threading

from numba import njit

__all__ = ["kernel_factory", "compile_variant"]

_FACTORY_LOCK = threading.RLock()


def kernel_factory(factory):
    """``functools.cache`` for a factory of kernels, safe when threads call it at once.

    Two threads making the same variant at the same time would get two dispatchers of one
    closure; both load one disk-cache entry, whose compiled code finds its environment by
    name, and the environment one of them registers is freed with the dispatcher that
    loses the cache: the other's next return fails ("In 'NRT_adapt_ndarray_to_python',
    'descr' is NULL", seen with the ranks running beside the Dask workers' fronts). One
    lock for every factory: a variant is built once per process, by one thread.
    """
    cached = functools.cache(factory)

    @functools.wraps(factory)
    def variant(*args):
        with _FACTORY_LOCK:
            return cached(*args)

    return variant


def compile_variant(fn, tag, **options):
    """``njit(cache=True, nogil=True, **options)(fn)`` under the name ``<fn name>_<tag>``.

    Parameters
    ----------
    fn : function
        A closure made by a factory (a fresh function object per call).
    tag : str
        What tells this variant from the others, e.g. ``"m4_par"``.
    **options
        Further ``numba.njit`` options (``parallel``, ``error_model``, ...).
    """
    fn.__name__ = f"{fn.__name__}_{tag}"
    fn.__qualname__ = f"{fn.__qualname__}_{tag}"
    return njit(cache=True, nogil=True, **options)(fn)

