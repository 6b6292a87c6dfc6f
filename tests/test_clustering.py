import numpy as np
import pandas as pd
import pytest

from gpurank.engine import UsageError, resolve_backend
from gpurank.engine.clustering import cluster_configurations, fit_cluster_model, profile_clusters

CPU = resolve_backend("cpu")


def _blobs(seed=0):
    # Three well-separated groups of configurations.
    rng = np.random.default_rng(seed)
    groups = [
        ("H100", 8, 10.0, 3000.0, 0.95),
        ("A100", 64, 5.0, 1500.0, 0.7),
        ("V100", 1024, 1.0, 400.0, 0.3),
    ]
    parts = []
    for name, n_acc, ttt, tpa, eff in groups:
        m = 60
        parts.append(pd.DataFrame({
            "accelerator": name,
            "n_accelerators": np.full(m, n_acc),
            "time_to_train_min": ttt * rng.lognormal(0, 0.05, m),
            "throughput_per_accelerator": tpa * rng.lognormal(0, 0.05, m),
            "scaling_efficiency": eff + rng.normal(0, 0.01, m),
        }))
    return pd.concat(parts, ignore_index=True)


def test_well_separated_groups_are_recovered_and_numbered_stably():
    df = _blobs()
    r = cluster_configurations(df, k=3, backend=CPU, seed=0)
    # Clusters are numbered by median accelerator count: H100 x8 first.
    expected = np.repeat([0, 1, 2], 60)
    np.testing.assert_array_equal(r.labels, expected)
    labels = r.profiles["label"].tolist()
    assert labels[0] == "8 x H100, high efficiency"
    # The thousand-accelerator group trains fastest but least efficiently.
    assert labels[2] == "1024 x V100, low efficiency, fastest"


def test_auto_k_picks_three_for_three_blobs():
    r = cluster_configurations(_blobs(1), k="auto", backend=CPU, k_range=(2, 6), seed=0)
    assert r.k == 3
    assert set(r.silhouette) == {2, 3, 4, 5, 6}
    assert max(r.silhouette, key=r.silhouette.get) == 3


def test_log_scale_for_wide_ranges():
    model = fit_cluster_model(_blobs(), k=3, backend=CPU,
                              features=["n_accelerators", "scaling_efficiency"])
    assert model.names == ("log10(n_accelerators)", "scaling_efficiency")
    _, valid = model.transform(_blobs(), backend=CPU)
    assert valid.all()


def test_a_fitted_model_labels_other_tables_like_its_own():
    df = _blobs(2)
    model = fit_cluster_model(df, k=3, backend=CPU)
    whole = cluster_configurations(df, k=3, backend=CPU)
    np.testing.assert_array_equal(model.predict(df, backend=CPU), whole.labels)
    part = df.iloc[::3].reset_index(drop=True)
    np.testing.assert_array_equal(model.predict(part, backend=CPU), whole.labels[::3])


def test_labels_returned_by_the_fit_are_the_models_labels_of_its_table():
    df = _blobs(3)
    df.loc[[4, 17], "scaling_efficiency"] = np.nan
    model, labels = fit_cluster_model(df, k=3, backend=CPU, return_labels=True)
    assert labels.dtype == np.int32
    np.testing.assert_array_equal(labels, model.predict(df, backend=CPU))
    assert (labels[[4, 17]] == -1).all()


def test_rows_with_missing_features_get_minus_one():
    df = _blobs()
    df.loc[5, "scaling_efficiency"] = np.nan
    r = cluster_configurations(df, k=3, backend=CPU)
    assert r.labels[5] == -1 and (r.labels >= 0).sum() == len(df) - 1
    assert "1 rows with missing cluster features got cluster -1" in r.note


def test_more_clusters_than_rows_is_a_usage_error():
    with pytest.raises(UsageError, match="clusters is 50, more than the rows that can be "
                                         "clustered \\(10\\)"):
        cluster_configurations(_blobs().iloc[:10], k=50, backend=CPU)


def test_profiles_report_size_share_and_medians():
    df = _blobs()
    prof = profile_clusters(df, np.repeat([0, 1, 2], 60))
    assert prof["size"].tolist() == [60, 60, 60]
    np.testing.assert_allclose(prof["share"], [1 / 3] * 3)
    assert prof["median_n_accelerators"].tolist() == [8.0, 64.0, 1024.0]
    assert prof["accelerators"].tolist() == ["H100 (100%)", "A100 (100%)", "V100 (100%)"]
