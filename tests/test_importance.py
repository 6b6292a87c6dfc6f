import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, SchemaError, resolve_backend
from gpurank.engine.importance import encode_features, feature_importance, permutation_importance
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


def _shuffled_one_at_a_time(model, X, y, *, repeats, seed):
    """The obvious permutation importance: one forest call per shuffled copy."""
    rng = np.random.default_rng(seed)

    y64 = y.astype(np.float64)

    def r2(pred):
        return 1.0 - np.sum((y64 - pred) ** 2) / np.sum((y64 - y64.mean()) ** 2)

    base = r2(model.predict(X))
    drops = np.zeros((X.shape[1], repeats))
    for j in range(X.shape[1]):
        for r in range(repeats):
            Xp = X.copy()
            Xp[:, j] = X[rng.permutation(X.shape[0]), j]
            drops[j, r] = base - r2(model.predict(Xp))
    return drops.mean(axis=1), drops.std(axis=1)


@pytest.mark.parametrize("max_rows", [1, 250, 1 << 18])
def test_permutation_importance_batches_draw_the_same_shuffles(max_rows):
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = (3 * X[:, 0] + X[:, 2] ** 2).astype(np.float32)
    model = RandomForestRegressor(n_estimators=8, random_state=0).fit(X[:200], y[:200])
    Xt, yt = X[200:].copy(), y[200:]
    before = Xt.copy()
    mean, std = permutation_importance(model, Xt, yt, repeats=3, seed=4, max_rows=max_rows)
    want_mean, want_std = _shuffled_one_at_a_time(model, Xt, yt, repeats=3, seed=4)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(std, want_std, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(Xt, before)  # the caller's matrix is left as it was
    assert mean[0] > mean[2] > max(mean[1], mean[3])
