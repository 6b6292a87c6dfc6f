"""The GPU path: parity with the CPU path on a real GPU, and its device branches without one.

Without a GPU, the device branches run on ``strict_device_backend()``: strict stand-ins for
CuPy and cuDF with the CUDA kernels under Numba's CUDA simulator (on a real device with
``GPURANK_REAL_GPU=1``). tests/test_strict_device.py pins the stand-in itself and runs every
entry point on it. On a machine with a GPU, cuDF and cuML, the parity tests compare each
step with the CPU path: Pareto exact, TOPSIS within 1e-12, KMeans adjusted Rand index >= 0.95
on well-separated data, importance with the same top-3 features and Spearman >= 0.9.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DeviceMemoryError, Engine, UnsupportedOnGPU
from gpurank.engine import pipeline as pipeline_module
from gpurank.engine import ranking as ranking_module
from gpurank.engine.backend import (
    MISSING_CODE,
    gpu_unavailable_reason,
    resolve_backend,
)
from tables import config_table

_GPU_REASON = gpu_unavailable_reason()
needs_gpu = pytest.mark.skipif(_GPU_REASON is not None, reason=f"no GPU path: {_GPU_REASON}")
TOPSIS_ATOL = 1e-12



@pytest.mark.parametrize("n, seed", [(1, 0), (12, 1), (45, 2)])
def test_strict_device_orchestration_matches_cpu(strict, n, seed):
    df = config_table(n, seed=seed)
    g = Engine(backend=strict).analyze(df, n_estimators=5, top=3)
    c = Engine(backend="cpu").analyze(df, n_estimators=5, top=3)
    for col in ("pareto_rank", "domination_count", "rank", "cluster"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)
    np.testing.assert_allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                               atol=TOPSIS_ATOL)
    assert g.backend == "gpu-strict"
    if n >= 10:
        pd.testing.assert_frame_equal(g.clusters.profiles, c.clusters.profiles)
        assert g.clusters.silhouette == c.clusters.silhouette
        pd.testing.assert_frame_equal(g.importance.table, c.importance.table)


def test_strict_device_cluster_and_importance_sampling_match_cpu(strict, monkeypatch):
    """The device-side row sampling (positions drawn on the host), grouped profiles and the
    backend's silhouette give the CPU path's results, with missing values and ties."""
    from gpurank.engine import clustering
    from gpurank.engine.metrics import derive_metrics

    monkeypatch.setattr(clustering, "FIT_ROWS", 150)
    monkeypatch.setattr(clustering, "SCAN_ROWS", 120)
    monkeypatch.setattr(clustering, "SILHOUETTE_ROWS", 90)
    df = derive_metrics(config_table(400, seed=5))
    df.loc[::9, "accelerator"] = None
    df.loc[::7, "time_to_train_min"] = np.nan
    df.loc[::11, "throughput_per_accelerator"] = np.nan
    df = df.set_axis(np.arange(len(df)) * 2 + 1)  # an index that is not 0..n-1
    for k in (3, "auto"):
        g = Engine(backend=strict).cluster(df, k=k)
        c = Engine(backend="cpu").cluster(df, k=k)
        np.testing.assert_array_equal(g.labels, c.labels)
        pd.testing.assert_frame_equal(g.profiles, c.profiles)
        assert g.silhouette == c.silhouette and g.note == c.note
        assert "fitted on a seeded sample of 150 rows" in c.note
    g = Engine(backend=strict).importance(df, sample_rows=200, n_estimators=5)
    c = Engine(backend="cpu").importance(df, sample_rows=200, n_estimators=5)
    pd.testing.assert_frame_equal(g.table, c.table)
    assert g.note == c.note and "seeded sample of 200" in c.note


def test_importance_without_impurity_importances_falls_back_with_a_note(strict):
    """A cuML forest older than 25.12 has no feature_importances_: the permutation
    importance is still reported, the impurity column is NaN and the note says why."""
    from gpurank.engine.metrics import derive_metrics

    class OldForest:
        def __init__(self, **params):
            self._model = strict._ml["random_forest"](**params)

        def fit(self, X, y):
            self._model.fit(X, y)
            return self

        def predict(self, X):
            return self._model.predict(X)

    old = replace(strict, _ml={**strict._ml, "random_forest": OldForest})
    df = derive_metrics(config_table(200, seed=3))
    g = Engine(backend=old).importance(df, n_estimators=5)
    c = Engine(backend="cpu").importance(df, n_estimators=5)
    assert g.table["impurity"].isna().all()
    assert "no feature_importances_" in g.note
    got = g.table.set_index("feature")["permutation"]
    want = c.table.set_index("feature")["permutation"]
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index())


def test_strict_device_rank_depth_and_robust_match_cpu(strict):
    df = config_table(40, seed=6)
    opts = {"n_estimators": 5, "top": 3, "rank_depth": 2, "robust": True, "samples": 4}
    g = Engine(backend=strict).analyze(df, **opts)
    c = Engine(backend="cpu").analyze(df, **opts)
    for col in ("pareto_rank", "rank", "p_top1", "p_topk", "expected_rank"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)
    assert g.table["pareto_rank"].max() <= 2


def test_smaa_on_a_device_matrix_stays_on_the_device(strict, monkeypatch):
    """robust_from_costs on a device cost matrix: the CPU path's results, and no
    device-to-host copy as large as the table (only m-vectors, candidates and results)."""
    from gpurank.engine.robust import robust_from_costs
    from gpurank.kernels import cpu
    from gpurank.kernels import cuda as kc
    from numba import cuda

    rng = np.random.default_rng(7)
    costs = rng.integers(0, 9, size=(70, 3)).astype(np.float64)  # ties; exact in any order
    want = robust_from_costs(costs, samples=5, k=3, seed=2, kernels=cpu)
    d = cuda.to_device(costs)
    copies = []
    original = type(d).copy_to_host

    def recording(self, *args, **kwargs):
        copies.append(int(np.prod(self.shape)))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(d), "copy_to_host", recording)
    # The Pareto kernels copy a sample of at most schedule.SAMPLE rows to the host for their
    # Z-order breakpoints: a small sample here, so that only table-sized copies reach the
    # bound below.
    from gpurank.kernels.cuda import schedule

    monkeypatch.setattr(schedule, "SAMPLE", 16)
    for norm in ("vector", "minmax"):
        copies.clear()
        got = robust_from_costs(d, samples=5, k=3, seed=2, kernels=kc, norm=norm)
        ref = want if norm == "vector" else robust_from_costs(costs, samples=5, k=3, seed=2,
                                                             kernels=cpu, norm=norm)
        np.testing.assert_array_equal(got.candidates, ref.candidates)
        for col in ("p_top1", "p_topk", "expected_rank"):
            np.testing.assert_array_equal(getattr(got, col), getattr(ref, col), col)
        assert got.candidates.size < costs.shape[0]
        assert copies and max(copies) < costs.size, copies


def _many_criteria(n=30, m=17, seed=0):
    rng = np.random.default_rng(seed)
    df = config_table(n, seed=seed)
    cols = {f"c{j}": rng.integers(0, 5, n).astype(float) for j in range(m)}
    return pd.concat([df, pd.DataFrame(cols)], axis=1), ",".join(f"c{j}:min" for j in range(m))


def test_auto_falls_back_per_step_only_on_unsupported_on_gpu(strict):
    df, crit = _many_criteria()
    auto = replace(strict, requested="auto")
    r = Engine(backend=auto).analyze(df, criteria=crit, n_estimators=5)
    assert any(f.startswith("rank ran on the CPU: 17 criteria exceed the GPU kernels' limit of 16")
               for f in r.fallbacks)
    expected = Engine(backend="cpu").analyze(df, criteria=crit, n_estimators=5)
    np.testing.assert_array_equal(r.table["rank"], expected.table["rank"])


def test_gpu_never_falls_back_silently(strict):
    df, crit = _many_criteria()
    with pytest.raises(UnsupportedOnGPU, match="17 criteria exceed the GPU kernels' limit of 16"):
        Engine(backend=strict).analyze(df, criteria=crit, n_estimators=5)


def test_fallback_reason_is_written_to_summary(strict, tmp_path):
    import json

    df, crit = _many_criteria()
    eng = Engine(backend=replace(strict, requested="auto"))
    eng.write(eng.analyze(df, criteria=crit, n_estimators=5), tmp_path, report=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert any("rank ran on the CPU" in f for f in summary["fallbacks"])


def test_device_out_of_memory_is_a_clear_error(strict, monkeypatch):
    def oom(*args, **kwargs):
        raise MemoryError("Out of memory allocating 8,589,934,592 bytes")

    monkeypatch.setattr(ranking_module, "rank_configurations", oom)
    monkeypatch.setattr(pipeline_module, "rank_configurations", oom)
    with pytest.raises(DeviceMemoryError) as info:
        Engine(backend=strict).analyze(config_table(20), n_estimators=5)
    msg = str(info.value)
    assert "the GPU ran out of memory in step 'rank' on 20 rows" in msg
    assert "8,589,934,592 bytes" in msg and "--dask" in msg


# -- parity on a real GPU --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu():
    return resolve_backend("gpu")


@needs_gpu
def test_gpu_ranking_parity(gpu):
    df = Engine(backend="cpu").derive(config_table(3000, seed=11))  # the default criteria
    c = Engine(backend="cpu").rank(df)
    for data in (df, gpu.as_frame(df)):  # host input, and the backend's own frame
        g = Engine(backend=gpu).rank(data)
        np.testing.assert_array_equal(g.pareto_rank, c.pareto_rank)
        np.testing.assert_array_equal(g.domination_count, c.domination_count)
        np.testing.assert_allclose(g.topsis_score, c.topsis_score, rtol=0, atol=TOPSIS_ATOL)


@needs_gpu
def test_gpu_kmeans_parity_on_separated_data(gpu):
    from sklearn.metrics import adjusted_rand_score

    from test_clustering import _blobs

    df = _blobs(3)
    g = Engine(backend=gpu).cluster(gpu.as_frame(df), k=3)
    c = Engine(backend="cpu").cluster(df, k=3)
    assert adjusted_rand_score(c.labels, g.labels) >= 0.95


@needs_gpu
def test_gpu_importance_parity(gpu):
    from scipy.stats import spearmanr

    from gpurank.engine.metrics import derive_metrics

    df = derive_metrics(config_table(4000, seed=12))
    g = Engine(backend=gpu).importance(gpu.as_frame(df), target="throughput_per_accelerator",
                                       n_estimators=50)
    c = Engine(backend="cpu").importance(df, target="throughput_per_accelerator",
                                         n_estimators=50)
    assert list(g.table["feature"][:3]) == list(c.table["feature"][:3])
    merged = c.table.merge(g.table, on="feature", suffixes=("_cpu", "_gpu"))
    assert spearmanr(merged["permutation_cpu"], merged["permutation_gpu"]).statistic >= 0.9


@needs_gpu
def test_gpu_text_features_with_missing_values(gpu):
    """cuDF keeps a missing text value as a null through astype("str") and cat.codes; it
    must reach cuML's forest as MISSING_CODE, as on the CPU, never as NaN."""
    from gpurank.engine.importance import encode_features
    from gpurank.engine.metrics import derive_metrics

    df = derive_metrics(config_table(2000, seed=14))
    df["host_cpu"] = df["host_cpu"].astype(object)
    df.loc[::4, "host_cpu"] = None
    df["framework"] = df["framework"].astype(object)
    df.loc[1::9, "framework"] = np.nan
    cpu = resolve_backend("cpu")
    for col in ("host_cpu", "framework"):
        want = cpu.codes(df[col])
        got = gpu.codes(gpu.as_frame(df)[col]).get()
        np.testing.assert_array_equal(got, want)
        assert (got == MISSING_CODE).sum() == df[col].isna().sum()
    X, kept = encode_features(gpu.as_frame(df), ("host_cpu", "framework"), backend=gpu)
    assert kept == ["host_cpu", "framework"] and not bool(gpu.xp.isnan(X).any())
    g = Engine(backend=gpu).importance(df, n_estimators=20)
    assert {"host_cpu", "framework"} <= set(g.table["feature"])


@needs_gpu
def test_gpu_end_to_end_from_parquet(gpu, tmp_path):
    path = tmp_path / "t.parquet"
    config_table(2000, seed=13).to_parquet(path)
    g = Engine(backend=gpu).analyze(path, n_estimators=20)
    c = Engine(backend="cpu").analyze(path, n_estimators=20)
    np.testing.assert_array_equal(g.table["pareto_rank"], c.table["pareto_rank"])
    np.testing.assert_allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                               atol=TOPSIS_ATOL)
    assert g.backend == "gpu"


@needs_gpu
def test_gpu_analyze_takes_a_cudf_frame(gpu):
    df = config_table(500, seed=15)
    g = Engine(backend=gpu).analyze(gpu.as_frame(df), n_estimators=10)
    c = Engine(backend="cpu").analyze(df, n_estimators=10)
    np.testing.assert_array_equal(g.table["pareto_rank"], c.table["pareto_rank"])
    np.testing.assert_array_equal(g.table["domination_count"], c.table["domination_count"])
