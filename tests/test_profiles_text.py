"""Group labels: a model is named only when it is a majority of its group."""

import numpy as np
import pandas as pd
import pytest
from gpurank.engine import resolve_backend
from gpurank.engine.clustering import (
    cluster_configurations,
    profile_clusters,
    relabel,
    stable_order,
)
from gpurank.engine.profiles_text import composition

CPU = resolve_backend("cpu")


def _group(models, *, n_acc=8, eff=0.9, ttt=10.0):
    """Rows of one group: ``models`` is a list of (accelerator, family, generation, rows)."""
    parts = []
    for name, fam, gen, rows in models:
        parts.append(pd.DataFrame({
            "accelerator": [name] * rows, "family": [fam] * rows, "generation": [gen] * rows,
            "n_accelerators": np.full(rows, n_acc), "time_to_train_min": np.full(rows, ttt),
            "scaling_efficiency": np.full(rows, eff),
        }))
    return pd.concat(parts, ignore_index=True)


#: 17 models of 6% or less each: the largest, "NVIDIA A100 PCIe 80GB", holds 6 of 100 rows.
_SPREAD = ([("NVIDIA A100 PCIe 80GB", "A100", "Ampere", 6)]
           + [(f"model {i}", f"family {i % 7}", f"gen {i % 3}", 6) for i in range(15)]
           + [("model x", "family x", "gen x", 4)])


def _label(df):
    return profile_clusters(df, np.zeros(len(df), dtype=np.int64))["label"].iloc[0]


def test_a_six_percent_model_does_not_name_its_group():
    df = _group(_SPREAD)
    assert df["accelerator"].value_counts(normalize=True).iloc[0] == pytest.approx(0.06)
    label = _label(df)
    assert "A100" not in label
    assert label == "8 x mixed accelerators, high efficiency"
    # the composition text still says who is there, with shares
    prof = profile_clusters(df, np.zeros(len(df), dtype=np.int64))
    assert prof["accelerators"].iloc[0] == "NVIDIA A100 PCIe 80GB (6%)"


def test_a_majority_model_names_its_group():
    df = _group([("H100 SXM", "H100", "Hopper", 51), ("A100 PCIe", "A100", "Ampere", 49)])
    assert _label(df) == "8 x H100 SXM, high efficiency"


def test_exactly_half_is_not_a_majority():
    df = _group([("H100 SXM", "H100", "Hopper", 50), ("H100 PCIe", "H100", "Hopper", 30),
                 ("A100 PCIe", "A100", "Ampere", 20)])
    assert _label(df) == "8 x H100 family, high efficiency"


def test_then_the_generation_then_mixed():
    gen = _group([("H100 SXM", "H100", "Hopper", 40), ("H200", "H200", "Hopper", 30),
                  ("A100", "A100", "Ampere", 30)], eff=0.5)
    assert _label(gen) == "8 x Hopper generation, low efficiency"
    mixed = _group([("H100 SXM", "H100", "Hopper", 40), ("A100", "A100", "Ampere", 35),
                    ("V100", "V100", "Volta", 25)], eff=0.7)
    assert _label(mixed) == "8 x mixed accelerators, medium efficiency"


def test_without_family_columns_the_rule_still_holds():
    df = _group(_SPREAD).drop(columns=["family", "generation"])
    assert _label(df) == "8 x mixed accelerators, high efficiency"
    df = _group([("H100 SXM", "H100", "Hopper", 60), ("A100", "A100", "Ampere", 40)])
    assert _label(df.drop(columns=["family", "generation"])) == "8 x H100 SXM, high efficiency"
    assert composition({}) == ""


def test_missing_values_are_not_counted():
    df = _group([("H100 SXM", "H100", "Hopper", 40), ("A100", "A100", "Ampere", 30)])
    df.loc[df.index[-30:], "accelerator"] = None  # 40 of the 40 known rows are H100 SXM
    assert _label(df).startswith("8 x H100 SXM")


def test_grouped_profiles_number_and_label_the_groups():
    # the grouped aggregations cuDF runs on a GPU, here on the CPU backend's pandas frame
    df = pd.concat([_group(_SPREAD, n_acc=64, ttt=2.0),
                    _group([("H100 SXM", "H100", "Hopper", 70), ("H200", "H100", "Hopper", 30)],
                           n_acc=8, ttt=9.0)], ignore_index=True)
    raw = np.repeat([0, 1], [100, 100]).astype(np.int32)
    labels = relabel(raw, stable_order(df, raw, 2, backend=CPU))
    assert labels.tolist() == [1] * 100 + [0] * 100  # numbered by median accelerator count
    prof = profile_clusters(df, labels, backend=CPU)
    assert prof["size"].tolist() == [100, 100]
    assert prof["label"].tolist() == ["8 x H100 SXM, high efficiency",
                                      "64 x mixed accelerators, high efficiency, fastest"]
    assert "_shares" not in prof.columns


def test_cluster_configurations_labels_follow_the_rule():
    a = _group(_SPREAD, n_acc=512, ttt=1.0, eff=0.3)
    b = _group([("H100 SXM", "H100", "Hopper", 100)], n_acc=8, ttt=20.0, eff=0.95)
    df = pd.concat([a, b], ignore_index=True)
    rng = np.random.default_rng(0)
    df["throughput_per_accelerator"] = np.where(df["n_accelerators"] > 8, 400.0, 3000.0)
    df["time_to_train_min"] *= rng.lognormal(0, 0.05, len(df))
    r = cluster_configurations(df, k=2, backend=CPU, seed=0, k_range=(2, 3))
    assert r.profiles["label"].tolist() == ["8 x H100 SXM, high efficiency",
                                            "512 x mixed accelerators, low efficiency, fastest"]


def _mixed_table(n, seed):
    """Rows with missing values in every profiled column, for the two ways of grouping."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "n_accelerators": rng.choice([1, 2, 8, 64, 512], n).astype(float),
        "time_to_train_min": rng.lognormal(2, 1, n),
        "scaling_efficiency": rng.uniform(0, 1, n).round(2),  # ties
        "cost_usd": rng.lognormal(3, 1, n),
    })
    for col in df.columns:
        df.loc[rng.random(n) < 0.1, col] = np.nan
    df.loc[rng.random(n) < 0.02, "cost_usd"] = np.nan
    return df


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("missing", [True, False])
def test_host_cluster_medians_equal_the_grouped_aggregations(seed, missing):
    from gpurank.engine.clustering import _frame_cluster_medians, _host_cluster_medians

    df = _mixed_table(400, seed)
    raw = np.random.default_rng(seed).integers(-1, 4, len(df)).astype(np.int32)
    raw[raw == 2] = 3  # a label with no rows
    if missing:
        df.loc[raw == 1, "cost_usd"] = np.nan  # a cluster whose column is all missing
    else:  # the path that slices without dropping missing values
        df = df.fillna(1.5)
    cols = list(df.columns)
    got = _host_cluster_medians(df, raw, cols, "n_accelerators")
    want = _frame_cluster_medians(df, raw, cols, CPU, "n_accelerators")
    pd.testing.assert_series_equal(got[0], want[0], check_names=False, check_index_type=False,
                                   check_dtype=False)
    pd.testing.assert_frame_equal(got[1], want[1], check_names=False, check_index_type=False,
                                  rtol=1e-15)
    for g, w in zip(got[2], want[2]):
        pd.testing.assert_series_equal(g, w, check_names=False, check_index_type=False,
                                       rtol=1e-15)
    assert np.isnan(got[1].loc[1, "cost_usd"]) == missing


@pytest.mark.parametrize("seed", [0, 1])
def test_category_shares_equal_the_shares_of_the_same_values(seed):
    from gpurank.engine.profiles_text import cluster_shares

    rng = np.random.default_rng(seed)
    n = 500
    values = rng.choice(["H100", "A100", "MI300X", "L4"], n, p=[0.4, 0.3, 0.2, 0.1])
    values = values.astype(object)
    values[rng.random(n) < 0.05] = None
    obj = pd.DataFrame({"accelerator": pd.Series(values, dtype=object)})
    cat = pd.DataFrame({"accelerator": pd.Categorical(values, categories=[
        "B200", "H100", "A100", "MI300X", "L4"])})  # an unused category
    raw = rng.integers(-1, 3, n).astype(np.int32)
    raw[:8] = 0  # equal counts in group 0 are ordered by first appearance
    got = cluster_shares(cat, raw, "accelerator", CPU)
    want = cluster_shares(obj, raw, "accelerator", CPU)
    assert got.keys() == want.keys()
    for g in want:
        pd.testing.assert_series_equal(got[g], want[g], check_names=False,
                                       check_index_type=False)
