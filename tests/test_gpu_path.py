"""The GPU path: parity with the CPU path on a real GPU, and its orchestration without one.

Without a GPU, the orchestration runs with the CUDA kernels under Numba's CUDA simulator and
NumPy/pandas standing in for CuPy/cuDF (``simulated_gpu_backend``). On a machine with a GPU,
cuDF and cuML, the parity tests compare each step with the CPU path:
Pareto exact, TOPSIS allclose, KMeans adjusted Rand index >= 0.95 on well-separated data,
importance with the same top-3 features and Spearman >= 0.9.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DeviceMemoryError, Engine, UnsupportedOnGPU
from gpurank.engine import api as api_module
from gpurank.engine.backend import gpu_unavailable_reason, resolve_backend, simulated_gpu_backend
from tables import config_table

_GPU_REASON = gpu_unavailable_reason()
needs_gpu = pytest.mark.skipif(_GPU_REASON is not None, reason=f"no GPU path: {_GPU_REASON}")


@pytest.fixture(scope="module")
def sim():
    return simulated_gpu_backend()


@pytest.mark.parametrize("n, seed", [(1, 0), (12, 1), (45, 2)])
def test_simulated_gpu_orchestration_matches_cpu(sim, n, seed):
    df = config_table(n, seed=seed)
    g = Engine(backend=sim).analyze(df, n_estimators=5, top=3)
    c = Engine(backend="cpu").analyze(df, n_estimators=5, top=3)
    for col in ("pareto_rank", "domination_count", "rank", "cluster"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)
    np.testing.assert_allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                               atol=1e-12)
    assert g.backend == "gpu-simulated"


def _many_criteria(n=30, m=17, seed=0):
    rng = np.random.default_rng(seed)
    df = config_table(n, seed=seed)
    cols = {f"c{j}": rng.integers(0, 5, n).astype(float) for j in range(m)}
    return pd.concat([df, pd.DataFrame(cols)], axis=1), ",".join(f"c{j}:min" for j in range(m))


def test_auto_falls_back_per_step_only_on_unsupported_on_gpu(sim):
    df, crit = _many_criteria()
    auto = replace(sim, requested="auto")
    r = Engine(backend=auto).analyze(df, criteria=crit, n_estimators=5)
    assert any(f.startswith("rank ran on the CPU: 17 criteria exceed the GPU kernels' limit of 16")
               for f in r.fallbacks)
    expected = Engine(backend="cpu").analyze(df, criteria=crit, n_estimators=5)
    np.testing.assert_array_equal(r.table["rank"], expected.table["rank"])


def test_gpu_never_falls_back_silently(sim):
    df, crit = _many_criteria()
    with pytest.raises(UnsupportedOnGPU, match="17 criteria exceed the GPU kernels' limit of 16"):
        Engine(backend=sim).analyze(df, criteria=crit, n_estimators=5)


def test_fallback_reason_is_written_to_summary(sim, tmp_path):
    import json

    df, crit = _many_criteria()
    eng = Engine(backend=replace(sim, requested="auto"))
    eng.write(eng.analyze(df, criteria=crit, n_estimators=5), tmp_path, report=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert any("rank ran on the CPU" in f for f in summary["fallbacks"])


def test_device_out_of_memory_is_a_clear_error(sim, monkeypatch):
    def oom(*args, **kwargs):
        raise MemoryError("Out of memory allocating 8,589,934,592 bytes")

    monkeypatch.setattr(api_module, "rank_configurations", oom)
    with pytest.raises(DeviceMemoryError) as info:
        Engine(backend=sim).analyze(config_table(20), n_estimators=5)
    msg = str(info.value)
    assert "the GPU ran out of memory in step 'rank' on 20 rows" in msg
    assert "8,589,934,592 bytes" in msg and "--dask" in msg


# -- parity on a real GPU --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu():
    return resolve_backend("gpu")


@needs_gpu
def test_gpu_ranking_parity(gpu):
    df = config_table(3000, seed=11)
    g = Engine(backend=gpu).rank(df)
    c = Engine(backend="cpu").rank(df)
    np.testing.assert_array_equal(g.pareto_rank, c.pareto_rank)
    np.testing.assert_array_equal(g.domination_count, c.domination_count)
    np.testing.assert_allclose(g.topsis_score, c.topsis_score, rtol=1e-9, atol=1e-12)


@needs_gpu
def test_gpu_kmeans_parity_on_separated_data(gpu):
    from sklearn.metrics import adjusted_rand_score

    from test_clustering import _blobs

    df = _blobs(3)
    g = Engine(backend=gpu).cluster(df, k=3)
    c = Engine(backend="cpu").cluster(df, k=3)
    assert adjusted_rand_score(c.labels, g.labels) >= 0.95


@needs_gpu
def test_gpu_importance_parity(gpu):
    from scipy.stats import spearmanr

    from gpurank.engine.metrics import derive_metrics

    df = derive_metrics(config_table(4000, seed=12))
    g = Engine(backend=gpu).importance(df, target="throughput_per_accelerator", n_estimators=50)
    c = Engine(backend="cpu").importance(df, target="throughput_per_accelerator",
                                         n_estimators=50)
    assert list(g.table["feature"][:3]) == list(c.table["feature"][:3])
    merged = c.table.merge(g.table, on="feature", suffixes=("_cpu", "_gpu"))
    assert spearmanr(merged["permutation_cpu"], merged["permutation_gpu"]).statistic >= 0.9


@needs_gpu
def test_gpu_end_to_end_from_parquet(gpu, tmp_path):
    path = tmp_path / "t.parquet"
    config_table(2000, seed=13).to_parquet(path)
    g = Engine(backend=gpu).analyze(path, n_estimators=20)
    c = Engine(backend="cpu").analyze(path, n_estimators=20)
    np.testing.assert_array_equal(g.table["pareto_rank"], c.table["pareto_rank"])
    assert g.backend == "gpu"
