"""pytest-benchmark suite: each kernel and each peer on the same data.

    cd benchmarks && pytest bench_kernels.py                     # full (hours)
    cd benchmarks && BENCH_QUICK=1 pytest bench_kernels.py       # smoke run, answers checked

Sizes n in {1e4, 1e5, 1e6} (TOPSIS also 1e7), m in {2, 3, 4, 6}, shapes independent,
anticorrelated, realistic. Peer cells that would take more than ~60 s are skipped with the
reason (O(n^2) peers above 1e5 rows, moocore ranks at 1e6 with m=6).
"""

from __future__ import annotations

import numpy as np
import pytest

from compare_peers import PEERS, agree, have
from conftest import QUICK
from gpurank.kernels import cpu
from gpurank.kernels.datagen import SHAPES, make_costs, make_topsis

SIZES = [2000] if QUICK else [10**4, 10**5, 10**6]
TOPSIS_SIZES = [2000] if QUICK else [10**4, 10**5, 10**6, 10**7]
MS = [2, 4] if QUICK else [2, 3, 4, 6]
SHAPE_LIST = ["anticorrelated", "realistic"] if QUICK else list(SHAPES)
ROUNDS = 1 if QUICK else 3

_data = {}


def costs(n, m, shape):
    key = (n, m, shape)
    if key not in _data:
        _data.clear()  # keep one matrix in memory at a time
        _data[key] = make_costs(n, m, shape)
    return _data[key]


def too_slow(kernel, impl, n, m):
    """Reason to skip a peer cell predicted to take more than ~60 s, else None."""
    if impl in ("paretoset", "pymoo", "botorch") and n > 10**5:
        return f"{impl} is O(n^2) here: > 60 s at n={n:.0e}"
    if impl == "moocore" and kernel == "pareto_rank" and n >= 10**6 and m >= 4:
        return "moocore pareto_rank takes 30-120 s at n=1e6, m>=4"
    return None


def _impls(kernel):
    out = ["gpurank"]
    for name, mod, _fn, _e in PEERS[kernel]:
        out.append(name)
    return out


def _peer_fn(kernel, name):
    for pname, mod, fn, _e in PEERS[kernel]:
        if pname == name:
            if not have(mod) or (mod == "botorch" and not have("torch")):
                pytest.skip(f"{name} not installed")
            return fn
    raise KeyError(name)


@pytest.mark.parametrize("impl", _impls("pareto_front"))
@pytest.mark.parametrize("shape", SHAPE_LIST)
@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", SIZES)
def test_pareto_front(benchmark, n, m, shape, impl):
    _run(benchmark, "pareto_front", n, m, shape, impl)


@pytest.mark.parametrize("impl", _impls("pareto_rank"))
@pytest.mark.parametrize("shape", SHAPE_LIST)
@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", SIZES)
def test_pareto_rank(benchmark, n, m, shape, impl):
    _run(benchmark, "pareto_rank", n, m, shape, impl)


def _run(benchmark, kernel, n, m, shape, impl):
    benchmark.group = f"{kernel} n={n} m={m} {shape}"
    c = costs(n, m, shape)
    ours = getattr(cpu, kernel)
    if impl == "gpurank":
        ours(c[:100])  # compile outside the timing
        benchmark.pedantic(ours, args=(c,), rounds=ROUNDS, warmup_rounds=0)
        return
    reason = too_slow(kernel, impl, n, m)
    if reason:
        pytest.skip(reason)
    fn = _peer_fn(kernel, impl)
    got = benchmark.pedantic(fn, args=(c,), rounds=ROUNDS, warmup_rounds=0)
    assert agree(kernel, ours(c), got), f"{impl} disagrees with gpurank on {kernel}"


@pytest.mark.parametrize("cap", [None, 1, 10])
@pytest.mark.parametrize("shape", SHAPE_LIST)
@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", SIZES)
def test_domination_count(benchmark, n, m, shape, cap):
    if not QUICK and cap is None and shape == "anticorrelated" and m >= 4 and n >= 10**6:
        pytest.skip("exact counts on 1e6 anticorrelated rows with m>=4: several minutes")
    benchmark.group = f"domination_count n={n} m={m} {shape}"
    c = costs(n, m, shape)
    cpu.domination_count(c[:100], cap=cap)
    got = benchmark.pedantic(lambda: cpu.domination_count(c, cap=cap), rounds=1, warmup_rounds=0)
    if n <= 2000:
        from gpurank.kernels import reference

        np.testing.assert_array_equal(got, reference.domination_count(c, cap=cap))


@pytest.mark.parametrize("impl", _impls("topsis"))
@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", TOPSIS_SIZES)
def test_topsis(benchmark, n, m, impl):
    benchmark.group = f"topsis n={n} m={m}"
    x, w, b = make_topsis(n, m)
    if impl == "gpurank":
        cpu.topsis(x[:100], w, b)
        benchmark.pedantic(cpu.topsis, args=(x, w, b), rounds=ROUNDS, warmup_rounds=0)
        return
    if impl == "scikit-criteria" and n >= 10**7:
        pytest.skip("scikit-criteria at 1e7 rows needs > 10 GB and minutes")
    fn = _peer_fn("topsis", impl)
    got = benchmark.pedantic(fn, args=(x, w, b), rounds=ROUNDS, warmup_rounds=0)
    assert agree("topsis", cpu.topsis(x, w, b), got)


@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", TOPSIS_SIZES)
def test_topsis_into_out(benchmark, n, m):
    """TOPSIS writing into a caller's array: no allocation, as the copy floor below."""
    benchmark.group = f"topsis n={n} m={m}"
    x, w, b = make_topsis(n, m)
    out = np.empty(n)
    cpu.topsis(x, w, b, out=out)
    benchmark.pedantic(cpu.topsis, args=(x, w, b), kwargs={"out": out}, rounds=max(ROUNDS, 5),
                       warmup_rounds=0)
    np.testing.assert_array_equal(out, cpu.topsis(x, w, b))


@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("n", TOPSIS_SIZES)
def test_topsis_copy_floor(benchmark, n, m):
    """The memory-copy floor TOPSIS is held to: one read and one write of the matrix."""
    benchmark.group = f"topsis n={n} m={m}"
    x, _, _ = make_topsis(n, m)
    dst = np.empty_like(x)
    benchmark.pedantic(np.copyto, args=(dst, x), rounds=max(ROUNDS, 5), warmup_rounds=1)
    np.testing.assert_array_equal(dst, x)
