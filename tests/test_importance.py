import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, SchemaError, resolve_backend
from gpurank.engine.importance import encode_features, feature_importance
from gpurank.engine.metrics import derive_metrics
from tables import config_table

CPU = resolve_backend("cpu")


def test_drivers_of_per_accelerator_throughput_are_found():
    # In the test table, per-accelerator throughput depends on the accelerator model and on
    # host CPU cores per accelerator; host CPU brand and framework are noise.
    df = derive_metrics(config_table(600, seed=1))
    r = feature_importance(df, target="throughput_per_accelerator", backend=CPU, seed=0,
                           n_estimators=40)
    top2 = set(r.table["feature"].head(2))
    assert top2 == {"accelerator", "cpu_cores_per_accelerator"}
    noise = r.table.set_index("feature").loc[["host_cpu", "framework"], "permutation"]
    assert (noise < 0.02).all()
    assert r.holdout_r2 > 0.9
    assert not r.sampled


def test_same_seed_same_importance():
    df = derive_metrics(config_table(300, seed=2))
    a = feature_importance(df, target="throughput", backend=CPU, seed=5, n_estimators=20)
    b = feature_importance(df, target="throughput", backend=CPU, seed=5, n_estimators=20)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_large_tables_are_sampled_and_say_so():
    df = derive_metrics(config_table(400, seed=3))
    r = feature_importance(df, target="throughput", backend=CPU, sample_rows=100, n_estimators=10)
    assert r.sampled and r.n_rows == 100
    assert "seeded sample of 100 of 400 rows" in r.note


def test_missing_target_named():
    with pytest.raises(SchemaError, match="target column 'speed' is not in the table"):
        feature_importance(config_table(50), target="speed", backend=CPU)


def test_constant_target_named():
    df = config_table(50).assign(flat=2.0)
    with pytest.raises(DataError, match="target column 'flat' is constant \\(every value is 2\\)"):
        feature_importance(df, target="flat", backend=CPU)


def test_non_numeric_target_named():
    df = config_table(50)
    with pytest.raises(DataError, match="target column 'host_cpu' must be numeric; row 0 holds"):
        feature_importance(df, target="host_cpu", backend=CPU)


def test_constant_features_left_out_with_note():
    df = derive_metrics(config_table(200).assign(framework="PyTorch"))
    r = feature_importance(df, target="throughput", backend=CPU, n_estimators=10)
    assert "framework" not in set(r.table["feature"])
    assert "constant features left out: framework" in r.note


def test_encode_features_orders_categories_and_fills_missing():
    df = pd.DataFrame({"a": ["z", "x", "y", "x"], "b": [1.0, np.nan, 3.0, 5.0]})
    X, kept = encode_features(df, ["a", "b"], backend=CPU)
    assert kept == ["a", "b"]
    np.testing.assert_array_equal(X[:, 0], [2, 0, 1, 0])
    np.testing.assert_array_equal(X[:, 1], [1, 3, 3, 5])
