"""The kernel factories build each variant once, also when threads ask at the same time."""

import threading
import time

import numpy as np
from gpurank.kernels.cpu import _ens
from gpurank.kernels.cpu._jit import kernel_factory
from gpurank.kernels.cpu._sort import lex_order


def test_concurrent_first_calls_get_one_variant():
    built = []

    @kernel_factory
    def make(d):
        built.append(d)
        time.sleep(0.05)  # a compile: long enough for the other threads to arrive
        return object()

    got = [None] * 4
    barrier = threading.Barrier(4)

    def ask(i):
        barrier.wait()
        got[i] = make(3)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [3]
    assert all(g is got[0] for g in got)
    assert make(4) is not got[0] and built == [3, 4]


def test_ens_kernels_called_from_threads_at_once_agree():
    """The ranks and the front of one table from four threads at once (the engine runs the
    ranks beside other kernels): every thread gets the serial answer."""
    rng = np.random.default_rng(3)
    c = np.ascontiguousarray(rng.integers(0, 20, (3000, 5)).astype(float))
    order = lex_order(c)
    want_rank, want_front = _ens.ens_kd(c, order), _ens.ens_kd(c, order, True)
    out = [None] * 4
    barrier = threading.Barrier(4)

    def run(i):
        barrier.wait()
        out[i] = _ens.ens_kd(c, order, i % 2 == 1)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(out):
        np.testing.assert_array_equal(r, want_front if i % 2 else want_rank)
