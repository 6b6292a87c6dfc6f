"""Robust ranking (SMAA over TOPSIS weights) on a realistic simulated sweep.

    cd benchmarks && pytest bench_robust.py                  # 1,000,000 rows, 10,000 samples
    cd benchmarks && BENCH_QUICK=1 pytest bench_robust.py    # 20,000 rows, 500 samples

Target: 10,000 weight samples over 1,000,000 configurations with 4 criteria in under 30 s on
2 CPU cores, pruning included (``domination_count(costs, cap=k)`` then SMAA on the rows
dominated by fewer than k others). Each run also checks the answers: the fast kernel
against the reference on the same candidates (a few samples), and the pruning against brute
force on a row sample.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import QUICK
from gpurank.engine.backend import resolve_backend
from gpurank.engine.metrics import derive_metrics
from gpurank.engine.ranking import criteria_matrix
from gpurank.engine.robust import robust_from_costs, sample_weights
from gpurank.engine.sources.sweep.simulate import simulate
from gpurank.engine.spec import default_criteria
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref

N = 20_000 if QUICK else 1_000_000
SAMPLES = 500 if QUICK else 10_000
K = 10
TARGET_S = 30.0


@pytest.fixture(scope="module")
def costs():
    df = derive_metrics(simulate(N, seed=0))
    crit = default_criteria(df.columns)
    c = criteria_matrix(df, crit, backend=resolve_backend("cpu"))
    c = c[np.isfinite(c).all(axis=1)]
    assert c.shape[1] == 4
    # warm the JIT (compilation is not what we measure)
    robust_from_costs(c[:500], samples=5, k=K, kernels=cpu)
    return np.ascontiguousarray(c)


def test_robust_smaa_pruned(benchmark, costs):
    timings = {}

    def run():
        t0 = time.perf_counter()
        dom = cpu.domination_count(costs, cap=K)
        timings["prune_s"] = time.perf_counter() - t0
        res = robust_from_costs(costs, samples=SAMPLES, k=K, seed=0, kernels=cpu,
                                domination_count=dom)
        timings["total_s"] = time.perf_counter() - t0
        return res

    res = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(rows=int(costs.shape[0]), samples=SAMPLES, k=K,
                                candidates=int(res.candidates.size), **timings)
    print(f"\nSMAA: {costs.shape[0]:,} rows, {SAMPLES:,} samples, k={K}: "
          f"{res.candidates.size:,} candidates; pruning {timings['prune_s']:.2f} s, "
          f"total {timings['total_s']:.2f} s (target {TARGET_S:.0f} s)")
    assert res.p_topk.sum() == pytest.approx(K)
    # the answers agree with the reference on the same candidates (a few samples)
    w = sample_weights(4, 20, seed=9)
    got = cpu.smaa_topsis(costs, w, np.zeros(4, bool), k=K, candidates=res.candidates)
    want = ref.smaa_topsis(costs, w, np.zeros(4, bool), k=K, candidates=res.candidates)
    for a, b in zip(got[:4], want[:4]):
        np.testing.assert_array_equal(a, b)
    if not QUICK:
        assert timings["total_s"] < TARGET_S


def test_pruning_matches_brute_force_on_a_sample(costs):
    rows = np.random.default_rng(0).choice(costs.shape[0], 3000, replace=False)
    c = costs[rows]
    w = sample_weights(4, 50, seed=1)
    cand = np.flatnonzero(cpu.domination_count(c, cap=K) < K)
    full = cpu.smaa_topsis(c, w, np.zeros(4, bool), k=K)
    pruned = cpu.smaa_topsis(c, w, np.zeros(4, bool), k=K, candidates=cand)
    np.testing.assert_array_equal(pruned[1], full[1][cand])
    assert full[1].sum() == pruned[1].sum() == K * 50
