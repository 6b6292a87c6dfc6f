"""The device path without a device: the strict stand-in backend runs every entry point.

``strict_device_backend()`` gives the engine arrays that refuse implicit host conversion as
CuPy's do, frames that refuse what cuDF refuses, and the CUDA kernels under Numba's
simulator. The first tests pin the stand-in's own behaviour (so a device defect cannot pass
it silently); the rest run each public entry point on it and compare with the CPU backend:
Pareto ranks and domination counts exactly, TOPSIS scores within ``TOPSIS_ATOL``, the same
final ranks, cluster labels, profiles and importances.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DeviceMemoryError, Engine
from gpurank.engine import pipeline as pipeline_module
from gpurank.engine import ranking as ranking_module
from gpurank.engine.backend import MISSING_CODE, resolve_backend
from gpurank.engine.backend._gpu import (RMM_INITIAL_POOL_BYTES, _configure_device_memory,
                                         _cuml_kmeans, _cuml_random_forest)
from gpurank.engine.backend.strict_device import HostCopy, StrictArray, record_host_copies, xp
from gpurank.engine.backend.strict_frames import StrictFrame, StrictSeries, xdf
from gpurank.engine.errors import BackendUnavailableError, DataError
from gpurank.engine.importance import encode_features
from gpurank.engine.metrics import DERIVED_COLUMNS
from tables import config_table

#: TOPSIS scores of the two backends agree to this absolute tolerance (scores lie in [0, 1];
#: the kernels' reductions add in another order than NumPy's).
TOPSIS_ATOL = 1e-12
FAST = {"n_estimators": 5, "top": 3}



@pytest.fixture(scope="module")
def cpu():
    return resolve_backend("cpu")


def tricky_table(n=48, seed=3):
    """Ties (times in quarter minutes, repeated counts), duplicate rows, missing text values
    in two features, float32 columns, and one row without an accelerator (invalid: its
    speedup has no reference)."""
    df = config_table(n, seed=seed)
    df["time_to_train_min"] = np.ceil(df["time_to_train_min"] * 4) / 4
    df = pd.concat([df, df.iloc[:5]], ignore_index=True)
    df["cpu_cores_per_accelerator"] = df["cpu_cores_per_accelerator"].astype(np.float32)
    df["throughput"] = df["throughput"].astype(np.float32)
    df["host_cpu"] = df["host_cpu"].astype(object)
    df.loc[::5, "host_cpu"] = None
    df["framework"] = df["framework"].astype(object)
    df.loc[3::7, "framework"] = np.nan
    df["accelerator"] = df["accelerator"].astype(object)
    df.loc[7, "accelerator"] = None
    return df


def assert_same_analysis(g, c):
    """The strict backend's analysis equals the CPU's."""
    for col in ("pareto_rank", "domination_count", "rank", "cluster"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)
    np.testing.assert_allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                               atol=TOPSIS_ATOL)
    if c.clusters is not None:
        pd.testing.assert_frame_equal(g.clusters.profiles, c.clusters.profiles)
        assert g.clusters.silhouette == c.clusters.silhouette
    if c.importance is not None:
        pd.testing.assert_frame_equal(g.importance.table, c.importance.table)
    assert g.notes == c.notes


# -- the stand-in refuses what the device libraries refuse -----------------------------------


def test_arrays_never_become_host_arrays_implicitly():
    a = xp.asarray(np.arange(6.0))
    host = np.arange(6.0)
    refused = [
        lambda: np.asarray(a),
        lambda: host[xp.asarray(np.array([0, 2]))],  # a host array indexed with a device one
        lambda: a + host,
        lambda: host * a,
        lambda: np.stack([a, host]),
        lambda: xp.stack([a, host]),
        lambda: xp.where(a > 2, host, 0.0),
        lambda: a.__setitem__(slice(0, 2), np.zeros(2)),
        lambda: float(a),
        lambda: list(a),
        lambda: a.tolist(),
        lambda: pd.Series(a),
    ]
    for i, op in enumerate(refused):
        with pytest.raises(TypeError):
            op()
            pytest.fail(f"operation {i} was allowed")
    # What CuPy allows: device results, host indices copied to the device, 0-d reads.
    assert isinstance(a[np.array([0, 2])], StrictArray)
    assert isinstance(np.sum(a), StrictArray) and a.sum().ndim == 0
    assert isinstance(a + 1.0, StrictArray) and isinstance(np.sqrt(a), StrictArray)
    with record_host_copies() as log:
        assert float(a.max()) == 5.0
        np.testing.assert_array_equal(a.get(), host)
    assert [(c.what, c.size) for c in log] == [("scalar", 1), ("array", 6)]


def test_xp_asarray_copies_host_data_to_the_device():
    host = np.arange(3.0)
    a = xp.asarray(host)
    host[0] = 99.0
    assert a.get()[0] == 0.0


def test_frames_refuse_what_cudf_refuses():
    pdf = pd.DataFrame({"a": [1.0, 2.0, 3.0], "t": ["x", None, "y"]})
    f = xdf.from_pandas(pdf)
    s = f["a"]
    refused = [
        lambda: xdf.DataFrame(pdf),  # from_pandas is the only way in
        lambda: xdf.Series(pdf["a"]),
        lambda: s.map(pd.Series({1.0: 10.0})),  # cuDF maps a dict or a cuDF Series
        lambda: s.map(lambda v: v),
        lambda: list(s),
        lambda: s.tolist(),
        lambda: s.items(),
        lambda: list(f.index),
        lambda: np.asarray(s),
        lambda: np.asarray(f),
        lambda: f.iterrows(),
        lambda: s.iloc[np.array([0.0, 1.0])],  # non-integer location keys
        lambda: f.loc[pdf["a"] > 1],  # a pandas mask handed to a device frame
        lambda: f.assign(b=pdf["a"]),
        lambda: f["t"].to_cupy(),  # text must be encoded first
    ]
    for i, op in enumerate(refused):
        with pytest.raises(TypeError):
            op()
            pytest.fail(f"operation {i} was allowed")
    assert isinstance(s.values, StrictArray) and isinstance(s.to_cupy(), StrictArray)
    with record_host_copies() as log:  # the explicit ways to the host are recorded
        np.testing.assert_array_equal(s.to_numpy(), [1.0, 2.0, 3.0])
        pd.testing.assert_frame_equal(f.to_pandas(), pdf.astype({"t": "str"}))
    assert [(c.what, c.shape) for c in log] == [("series", (3,)), ("frame", (3, 2))]
    assert isinstance(s.map({1.0: 10.0}), StrictSeries)
    assert isinstance(s.iloc[xp.asarray(np.array([0, 2]))], StrictSeries)
    assert list(f) == ["a", "t"]  # a DataFrame iterates its column names, as cuDF's does
    with pytest.raises(TypeError, match="cannot move to the device"):
        xdf.from_pandas(pd.DataFrame({"mixed": [1, "a"]}))


def test_frames_keep_nulls_as_cudf_does():
    f = xdf.from_pandas(pd.DataFrame({"t": ["b", None, "a", "b"], "i": [1, 2, 3, 4]}))
    text = f["t"].astype("str")
    assert bool(text.isna().iloc[1])  # astype("str") keeps the null
    codes = text.astype("category").cat.codes
    assert bool(codes.isna().iloc[1])  # cuDF's codes are null, not -1, where missing
    ints = codes.astype("int32")  # an integer cast keeps the null
    arr = ints.to_cupy()  # ... and to_cupy() makes it NaN in float64
    assert arr.dtype == np.float64 and np.isnan(arr.get()[1])
    np.testing.assert_array_equal(ints.fillna(-1).to_cupy().get(), [1, -1, 0, 1])
    with pytest.raises(ValueError, match="Column must have no nulls"):
        f["t"].isna().where(f["i"] > 1).astype("bool").to_cupy()


def test_groupby_without_sort_is_not_in_first_appearance_order():
    f = xdf.from_pandas(pd.DataFrame({"k": ["b", "a", "b", "c"], "v": [1, 2, 3, 4]}))
    unsorted = f.groupby("k", sort=False)["v"].sum().to_pandas()
    assert list(unsorted.index) != ["b", "a", "c"]
    assert list(f.groupby("k", sort=True)["v"].sum().to_pandas().index) == ["a", "b", "c"]
    pd.testing.assert_series_equal(unsorted.sort_index(),
                                   pd.Series([2, 4, 4], index=pd.Index(["a", "b", "c"], name="k"),
                                             name="v"))


def test_kernels_get_device_arrays_and_results_are_recorded(strict):
    costs = xp.asarray(np.array([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0]]))
    with record_host_copies() as log:
        ranks = strict.kernels.pareto_rank(costs)
    np.testing.assert_array_equal(ranks, [0, 0, 1])
    assert [(c.what, c.shape) for c in log] == [("kernel result", (3,))]
    from gpurank.kernels import cuda

    with pytest.raises(TypeError):  # the kernels module itself refuses a stand-in array
        cuda.pareto_rank(costs)


# -- text features with missing values ---------------------------------------------------------


@pytest.mark.parametrize("values", [
    ["b", None, "a", np.nan, "b", "c"],
    ["10", "9", None, "10", "x", None],
])
def test_text_codes_with_missing_values_are_the_same_on_both_backends(strict, cpu, values):
    s = pd.Series(values, dtype=object, name="host_cpu")
    want = np.array([{"b": 1, "a": 0, "c": 2, "10": 0, "9": 1, "x": 2}.get(v, MISSING_CODE)
                     if isinstance(v, str) else MISSING_CODE for v in values], dtype=np.int32)
    got_cpu = cpu.codes(s)
    got_dev = strict.codes(xdf.from_pandas(s))
    assert isinstance(got_dev, StrictArray) and got_dev.dtype == np.int32
    np.testing.assert_array_equal(got_cpu, want)
    np.testing.assert_array_equal(got_dev.get(), want)


def test_encoded_features_have_no_nan_and_match_the_cpu(strict, cpu):
    df = tricky_table(30)
    feats = ("accelerator", "host_cpu", "framework", "n_accelerators")
    Xc, kc = encode_features(df, feats, backend=cpu)
    Xg, kg = encode_features(xdf.from_pandas(df), feats, backend=strict)
    assert kc == kg == list(feats)
    assert not np.isnan(Xg.get()).any()
    np.testing.assert_array_equal(Xg.get(), Xc)
    assert (Xc[:, 1] == MISSING_CODE).sum() == df["host_cpu"].isna().sum()


# -- every entry point, against the CPU -------------------------------------------------------


def test_analyze_matches_cpu_on_ties_duplicates_missing_text_and_float32(strict):
    df = tricky_table()
    g = Engine(backend=strict).analyze(df, drop_invalid=True, **FAST)
    c = Engine(backend="cpu").analyze(df, drop_invalid=True, **FAST)
    assert g.backend == "gpu-strict" and len(g.table) == len(df) - 1
    assert any("1 invalid rows dropped" in n for n in g.notes)
    assert_same_analysis(g, c)


def test_analyze_takes_the_backends_own_frame_and_a_path(strict, tmp_path):
    df = config_table(40, seed=4)
    c = Engine(backend="cpu").analyze(df, **FAST)
    g = Engine(backend=strict).analyze(xdf.from_pandas(df), **FAST)
    assert_same_analysis(g, c)
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    assert_same_analysis(Engine(backend=strict).analyze(path, **FAST), c)


def test_robust_matches_cpu(strict):
    df = tricky_table(40, seed=6)
    opts = {**FAST, "robust": True, "samples": 6, "rank_depth": 2, "drop_invalid": True}
    g = Engine(backend=strict).analyze(df, **opts)
    c = Engine(backend="cpu").analyze(df, **opts)
    assert_same_analysis(g, c)
    for col in ("p_top1", "p_topk", "expected_rank"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)


def test_robust_with_prediction_intervals_matches_cpu(strict):
    """The drawn SMAA path (predicted times inside their intervals) on the device."""
    df = tricky_table(40, seed=7)
    rng = np.random.default_rng(0)
    t = df["time_to_train_min"].to_numpy(float)
    df["time_to_train_min_lo"] = t * rng.uniform(0.6, 0.95, len(df))
    df["time_to_train_min_hi"] = t * rng.uniform(1.05, 1.6, len(df))
    df.loc[::4, ["time_to_train_min_lo", "time_to_train_min_hi"]] = np.nan  # measured rows
    opts = {**FAST, "robust": True, "samples": 6, "drop_invalid": True}
    g = Engine(backend=strict).analyze(df, **opts)
    c = Engine(backend="cpu").analyze(df, **opts)
    assert c.robust.model_uncertainty["drawn"]
    assert g.robust.model_uncertainty == c.robust.model_uncertainty
    for col in ("p_top1", "p_topk", "expected_rank"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)


def test_single_steps_take_pandas_and_the_backends_frame(strict):
    """derive, rank, cluster and importance move host input to the device once (at the
    entry point) and take the backend's own frame as it is."""
    raw = tricky_table(40, seed=8).drop(index=[7]).reset_index(drop=True)
    derived = Engine(backend=strict).derive(raw)
    assert isinstance(derived, StrictFrame)
    want = Engine(backend="cpu").derive(raw)
    got = derived.to_pandas()
    assert list(got.columns) == list(want.columns)
    numeric = [c for c in want.columns if want[c].dtype.kind in "iuf"]
    assert set(DERIVED_COLUMNS) <= set(numeric)
    pd.testing.assert_frame_equal(got[numeric], want[numeric])
    for data in (want, xdf.from_pandas(want)):
        g = Engine(backend=strict).rank(data)
        c = Engine(backend="cpu").rank(want)
        np.testing.assert_array_equal(g.pareto_rank, c.pareto_rank)
        np.testing.assert_array_equal(g.domination_count, c.domination_count)
        np.testing.assert_allclose(g.topsis_score, c.topsis_score, rtol=0, atol=TOPSIS_ATOL)
        np.testing.assert_array_equal(g.rank, c.rank)
        gk = Engine(backend=strict).cluster(data, k=3)
        ck = Engine(backend="cpu").cluster(want, k=3)
        np.testing.assert_array_equal(gk.labels, ck.labels)
        pd.testing.assert_frame_equal(gk.profiles, ck.profiles)
        gi = Engine(backend=strict).importance(data, n_estimators=5)
        ci = Engine(backend="cpu").importance(want, n_estimators=5)
        pd.testing.assert_frame_equal(gi.table, ci.table)
        assert list(gi.table["feature"][:3]) == list(ci.table["feature"][:3])


def test_importance_refuses_nan_features_as_cuml_does(strict):
    """The stand-in's forest refuses NaN input as cuML's does, so a text column whose
    missing values reached it as NaN (cuDF's null codes) would fail here."""
    X = xp.asarray(np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="NaN"):
        strict.random_forest(n_estimators=2, max_depth=2, max_features=1.0,
                             min_samples_leaf=1, bootstrap=True, random_state=0,
                             n_jobs=1).fit(X, xp.asarray(np.arange(3.0)))


# -- device-to-host copies ----------------------------------------------------------------------


def table_sized_copies(log, n):
    """The copies of ``log`` that move as many rows as the table has, other than the
    results: the final table (with the results beside it) in ``Engine.analyze``, the
    launchers' per-row results, and the cluster labels."""
    allowed = {("frame", "gpurank.engine.api:analyze"),
               ("array", "gpurank.engine.clustering:predict"),
               ("array", "gpurank.engine.clustering:fit_cluster_model")}
    return [c for c in log if c.shape and c.shape[0] >= n and c.what != "kernel result"
            and (c.what, c.site) not in allowed]


def test_the_copy_check_flags_table_sized_copies():
    n = 50
    log = [HostCopy("frame", (n, 12), n * 12, "gpurank.engine.api:analyze"),
           HostCopy("kernel result", (n,), n, "gpurank.engine.ranking:rank_configurations"),
           HostCopy("series", (5,), 5, "gpurank.engine.clustering:profile_clusters"),
           HostCopy("array", (n,), n, "gpurank.engine.importance:encode_features"),
           HostCopy("frame", (n, 3), 3 * n, "gpurank.engine.prepare:prepare_rows")]
    assert table_sized_copies(log, n) == log[3:]


def test_analyze_copies_no_table_sized_data_to_the_host(strict):
    """Every device-to-host copy during analyze: none as large as the table except the
    results, and their number does not grow with the table (no per-row host reads)."""
    counts = {}
    for n in (40, 80):
        df = tricky_table(n, seed=2)
        rows = len(df) - 1  # one invalid row dropped
        with record_host_copies() as log:
            Engine(backend=strict).analyze(df, drop_invalid=True, robust=True, samples=4,
                                           **FAST)
        # Half the table or more counts as table-sized (groups and clusters are a few rows).
        assert table_sized_copies(log, rows // 2) == []
        finals = [c for c in log if c.what == "frame" and c.site.endswith("api:analyze")]
        assert len(finals) == 1 and finals[0].shape[0] == rows
        counts[n] = len(log)
    assert counts[40] == counts[80], counts


# -- Dask: the workers run on the CPU ---------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client():
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_refuses_an_explicit_gpu_request(strict, dask_client, tmp_path):
    path = tmp_path / "t.parquet"
    config_table(30, seed=9).to_parquet(path)
    with pytest.raises(BackendUnavailableError,
                       match="--backend gpu cannot be combined with --dask"):
        Engine(backend=strict, dask=dask_client).analyze_dataset(path, **FAST)


def test_dask_with_auto_runs_on_cpu_workers_and_records_it(strict, dask_client, tmp_path):
    path = tmp_path / "t.parquet"
    df = config_table(30, seed=9)
    df.to_parquet(path)
    from gpurank.engine.distributed import analyze_dataset
    from gpurank.engine.spec import AnalysisSpec

    auto = replace(strict, requested="auto")
    res = Engine(backend=auto, dask=dask_client).analyze_dataset(path, **FAST)
    assert any("Dask workers ran on the CPU" in f for f in res.summary["fallbacks"])
    res = analyze_dataset(path, client=dask_client, spec=AnalysisSpec(**FAST), backend=auto,
                          return_columns=True)
    ref = Engine(backend="cpu").analyze(df, **FAST)
    for col in ("pareto_rank", "domination_count", "rank"):
        np.testing.assert_array_equal(res.columns[col].to_numpy(), ref.table[col].to_numpy())


# -- out of device memory ---------------------------------------------------------------------


class CudaAPIError(RuntimeError):
    """numba.cuda.cudadrv.driver.CudaAPIError's shape (the simulator's has no code)."""

    def __init__(self, code, msg):
        self.code, self.msg = code, msg
        super().__init__(code, msg)

    def __str__(self):
        return f"[{self.code}] {self.msg}"


class OutOfMemoryError(MemoryError):
    """cupy.cuda.memory.OutOfMemoryError's base class is MemoryError."""


def test_out_of_memory_is_recognised_from_every_device_library(strict, cpu):
    from cuda.bindings.driver import CUresult

    oom = [OutOfMemoryError("Out of memory allocating 1,024 bytes"),
           MemoryError("std::bad_alloc: out_of_memory: RMM failure"),
           CudaAPIError(CUresult.CUDA_ERROR_OUT_OF_MEMORY,
                        "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")]
    other = [CudaAPIError(CUresult.CUDA_ERROR_INVALID_VALUE, "Call to cuMemcpy results in "
                          "CUDA_ERROR_INVALID_VALUE"), ValueError("bad"), RuntimeError("x")]
    assert all(strict.out_of_memory(e) for e in oom)
    assert not any(strict.out_of_memory(e) for e in other)
    assert not any(cpu.out_of_memory(e) for e in oom)  # the host's MemoryError stays one


@pytest.mark.parametrize("step", ["analyze", "rank"])
def test_numba_out_of_memory_becomes_the_engines_message(strict, monkeypatch, step):
    from cuda.bindings.driver import CUresult

    def oom(*args, **kwargs):
        raise CudaAPIError(CUresult.CUDA_ERROR_OUT_OF_MEMORY,
                           "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")

    # the step calls the name the pipeline imported
    monkeypatch.setattr(ranking_module, "rank_configurations", oom)
    monkeypatch.setattr(pipeline_module, "rank_configurations", oom)
    if step == "rank":
        from gpurank.engine import api

        monkeypatch.setattr(api, "rank_configurations", oom)
    eng = Engine(backend=strict)
    df = Engine(backend="cpu").derive(config_table(20))
    with pytest.raises(DeviceMemoryError) as info:
        eng.analyze(df, **FAST) if step == "analyze" else eng.rank(df)
    msg = str(info.value)
    assert "the GPU ran out of memory in step 'rank' on 20 rows" in msg
    assert "CUDA_ERROR_OUT_OF_MEMORY" in msg and "--dask" in msg


def test_device_memory_pool_is_created_only_where_none_exists():
    """RMM's pool is set only over RMM's default resource (a dask-cuda worker's pool is
    kept); CuPy and Numba allocate through RMM either way."""

    class CudaMemoryResource:
        pass

    class PoolMemoryResource:
        pass

    calls = []

    def fake(resource):
        rmm = type("rmm", (), {})()
        rmm.mr = type("mr", (), {"CudaMemoryResource": CudaMemoryResource,
                                 "get_current_device_resource": staticmethod(resource)})()
        rmm.reinitialize = lambda **kw: calls.append(("reinitialize", kw))
        cupy = type("cupy", (), {})()
        cupy.cuda = type("cuda", (), {"set_allocator": staticmethod(
            lambda a: calls.append(("cupy", a)))})()
        numba_cuda = type("numba_cuda", (), {"set_memory_manager": staticmethod(
            lambda m: calls.append(("numba", m)))})()
        return rmm, cupy, numba_cuda

    _configure_device_memory(*fake(CudaMemoryResource), "rmm_cupy_allocator",
                             "RMMNumbaManager")
    assert calls == [("reinitialize", {"pool_allocator": True,
                                       "initial_pool_size": RMM_INITIAL_POOL_BYTES}),
                     ("cupy", "rmm_cupy_allocator"), ("numba", "RMMNumbaManager")]
    # The pool starts small (RMM's default would reserve half the device at start).
    assert RMM_INITIAL_POOL_BYTES <= 2**30 and RMM_INITIAL_POOL_BYTES % 256 == 0
    calls.clear()
    _configure_device_memory(*fake(PoolMemoryResource), "rmm_cupy_allocator",
                             "RMMNumbaManager")
    assert calls == [("cupy", "rmm_cupy_allocator"), ("numba", "RMMNumbaManager")]


def test_kernel_limit_is_the_kernels_max_criteria(strict):
    from gpurank.engine.errors import UnsupportedOnGPU

    b = replace(strict, kernels=type("kernels", (), {"MAX_CRITERIA": 4})())
    b.check_supported("rank", 4)
    with pytest.raises(UnsupportedOnGPU, match="5 criteria exceed the GPU kernels' limit of 4"):
        b.check_supported("rank", 5)
    replace(strict, kernels=type("kernels", (), {"MAX_CRITERIA": None})()).check_supported(
        "rank", 100)


def test_values_of_a_text_column_on_the_device_is_a_clear_error(strict):
    f = xdf.from_pandas(pd.DataFrame({"x": ["a", "b"]}))
    with pytest.raises(DataError, match="criterion column 'x' must be numeric"):
        strict.values(f, "x", role="criterion")


def test_cuml_models_get_exact_kmeans_plus_plus_and_cuml_default_streams(monkeypatch):
    """scikit-learn's ``init="k-means++"`` is cuML's exact k-means++ (not k-means||); the
    forest keeps cuML's default streams (its fits are deterministic for any number)."""
    import sys
    import types

    made = {}

    def model(name):
        return type(name, (), {"__init__": lambda self, **kw: made.__setitem__(name, kw)})

    cuml = types.ModuleType("cuml")
    cluster = types.ModuleType("cuml.cluster")
    ensemble = types.ModuleType("cuml.ensemble")
    cluster.KMeans, ensemble.RandomForestRegressor = model("KMeans"), model("Forest")
    for name, mod in (("cuml", cuml), ("cuml.cluster", cluster), ("cuml.ensemble", ensemble)):
        monkeypatch.setitem(sys.modules, name, mod)
    km = {"n_clusters": 3, "n_init": 2, "max_iter": 50, "tol": 1e-4, "random_state": 0}
    _cuml_kmeans(**km, init="k-means++")
    assert made["KMeans"]["init"] == "k-means++"
    _cuml_kmeans(**km, init="random")
    assert made["KMeans"]["init"] == "random"
    _cuml_random_forest(n_estimators=5, max_depth=None, max_features=1.0, min_samples_leaf=1,
                        bootstrap=True, random_state=0)
    assert made["Forest"]["n_streams"] == 4 and made["Forest"]["n_bins"] == 128
