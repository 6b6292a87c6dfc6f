import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, derive_metrics
from gpurank.engine import metrics
from gpurank.engine.metrics import plan_metrics


def _table():
    return pd.DataFrame(
        {
            "accelerator": ["A", "A", "A", "B", "B"],
            "n_accelerators": [8, 8, 64, 4, 0],
            "time_to_train_min": [100.0, 80.0, 20.0, 50.0, 500.0],
            "throughput": [1000.0, 1250.0, 5000.0, 2000.0, 200.0],
            "price_per_accelerator_hour": [2.0, 2.0, 2.0, 1.0, 1.0],
            "power_w": [400.0, 400.0, 400.0, 300.0, 300.0],
        }
    )


def test_accelerator_hours_and_throughput_per_accelerator():
    df = _table()
    np.testing.assert_allclose(metrics.accelerator_hours(df)[:4], [8 * 100 / 60, 8 * 80 / 60,
                                                                  64 * 20 / 60, 4 * 50 / 60])
    np.testing.assert_allclose(metrics.throughput_per_accelerator(df)[:4],
                               [125.0, 156.25, 78.125, 500.0])


def test_speedup_against_fastest_of_the_fewest_accelerators_per_model():
    df = _table()
    # Model A: reference is the faster of the two 8-accelerator rows (80 min).
    np.testing.assert_allclose(metrics.speedup(df)[:3], [0.8, 1.0, 4.0])
    np.testing.assert_allclose(metrics.scaling_efficiency(df)[:3], [0.8, 1.0, 0.5])


def test_zero_accelerator_rows_get_nan_not_infinity():
    out = derive_metrics(_table())
    row = out.iloc[4]
    assert np.isnan(row["throughput_per_accelerator"])
    assert np.isnan(row["accelerator_hours"])
    assert np.isnan(row["scaling_efficiency"])


def test_cost_and_energy():
    out = derive_metrics(_table())
    np.testing.assert_allclose(out["cost_usd"][:2], [8 * 100 / 60 * 2.0, 8 * 80 / 60 * 2.0])
    np.testing.assert_allclose(out["energy_kwh"][0], 8 * 400 * (100 / 60) / 1000)


def test_existing_cost_column_is_kept():
    df = _table().assign(cost_usd=[1.0, 2.0, 3.0, 4.0, 5.0])
    out = derive_metrics(df)
    assert out["cost_usd"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_optional_metrics_absent_without_inputs():
    out = derive_metrics(_table().drop(columns=["price_per_accelerator_hour", "power_w"]))
    assert "cost_usd" not in out and "energy_kwh" not in out


def test_input_is_not_modified():
    df = _table()
    before = df.copy()
    derive_metrics(df)
    pd.testing.assert_frame_equal(df, before)


def test_input_is_not_modified_when_it_holds_metric_columns_already():
    df = _table()
    for col in ("speedup", "scaling_efficiency", "accelerator_hours",
                "throughput_per_accelerator"):
        df[col] = -1.0
    before = df.copy()
    out = derive_metrics(df)
    pd.testing.assert_frame_equal(df, before)
    out.loc[0, "throughput"] = 0.0  # neither is a view of the other's data
    assert df.loc[0, "throughput"] == before.loc[0, "throughput"]


def test_each_metric_needs_only_its_inputs():
    out = derive_metrics(_table().drop(columns=["throughput"]))
    assert "throughput_per_accelerator" not in out.columns
    assert {"accelerator_hours", "speedup", "scaling_efficiency"} <= set(out.columns)
    derived, skipped = plan_metrics(["time_to_train_min", "cost_usd", "energy_kwh"])
    assert derived == ()
    assert skipped["throughput_per_accelerator"] == "needs throughput, n_accelerators"
    assert skipped["cost_usd"] == "the table has its own cost_usd"


def test_empty_table_gets_empty_metrics():
    out = derive_metrics(_table().iloc[:0])
    assert len(out) == 0 and "scaling_efficiency" in out.columns


def test_a_bad_reference_row_does_not_take_its_model_down():
    # The smallest configuration of a model has no valid time: the reference is the next
    # smallest valid one, and every other row keeps its efficiency.
    df = _table()
    small = df["n_accelerators"].idxmin()
    df.loc[small, "time_to_train_min"] = np.nan
    out = derive_metrics(df)
    acc = df.loc[small, "accelerator"]
    same = (df["accelerator"] == acc) & (df.index != small)
    assert out.loc[same, "scaling_efficiency"].notna().all()


def test_non_numeric_required_column_named():
    df = _table().astype({"time_to_train_min": "string"})
    df.loc[2, "time_to_train_min"] = "fast"
    with pytest.raises(DataError, match="column 'time_to_train_min' must be numeric"):
        derive_metrics(df)


def test_reference_tables_of_parts_merge_to_the_whole():
    df = _table()
    whole = metrics.reference_table(df)
    parts = [metrics.reference_table(df.iloc[:1]), metrics.reference_table(df.iloc[1:3]),
             metrics.reference_table(df.iloc[3:])]
    merged = metrics.merge_reference_tables(parts)
    pd.testing.assert_frame_equal(merged, whole)
    pd.testing.assert_frame_equal(derive_metrics(df.iloc[3:], reference=merged),
                                  derive_metrics(df).iloc[3:])
