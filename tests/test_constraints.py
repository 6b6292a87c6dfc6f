"""Limits before ranking (``--require``, ``constraints=``) and tables of a user's own shape."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, Engine, UsageError
from gpurank.engine.cli import main
from gpurank.engine.constraints import Constraint, parse_constraints
from tables import config_table


@pytest.fixture(scope="module")
def df():
    t = config_table(300, seed=11)
    t["provider"] = np.array(["AWS", "Azure", "GCP", "Lambda"])[np.arange(len(t)) % 4]
    return t


def _analyze(df, **kw):
    return Engine(backend="cpu").analyze(df, n_estimators=5, k_range=(2, 3), **kw)


@pytest.mark.parametrize("op, keep", [
    ("<=", lambda v, x: v <= x), ("<", lambda v, x: v < x), (">=", lambda v, x: v >= x),
    (">", lambda v, x: v > x), ("==", lambda v, x: v == x), ("!=", lambda v, x: v != x)])
def test_each_numeric_comparison_keeps_the_rows_it_says(df, op, keep):
    x = 64.0
    r = _analyze(df, constraints=f"n_accelerators{op}{x:g}")
    want = df.loc[keep(df["n_accelerators"], x)]
    assert len(r.table) == len(want)
    assert keep(r.table["n_accelerators"], x).all()
    removed = len(df) - len(want)
    assert r.preparation.constraints == ((f"n_accelerators{op}64", removed),)
    assert any(f"n_accelerators{op}64 left out {removed:,}" in n for n in r.notes)


def test_text_sets_and_derived_columns(df):
    r = _analyze(df, constraints="provider in {AWS, GCP}, cost_usd<=500, "
                                 "accelerator not in {V100-SXM2-32GB}")
    t = r.table
    assert set(t["provider"]) <= {"AWS", "GCP"}
    assert (t["cost_usd"] <= 500).all() and "V100-SXM2-32GB" not in set(t["accelerator"])
    expected = df.assign(cost_usd=df["n_accelerators"] * df["time_to_train_min"] / 60 *
                         df["price_per_accelerator_hour"])
    expected = expected[expected["provider"].isin(["AWS", "GCP"]) & (expected["cost_usd"] <= 500)
                        & (expected["accelerator"] != "V100-SXM2-32GB")]
    assert len(t) == len(expected)
    # Efficiency keeps the reference of the whole table (the constraints come after it).
    full = _analyze(df)
    merged = t.merge(full.table, on=list(df.columns), suffixes=("", "_full"))
    np.testing.assert_allclose(merged["scaling_efficiency"], merged["scaling_efficiency_full"])
    r2 = _analyze(df, constraints="provider==AWS")
    assert set(r2.table["provider"]) == {"AWS"}


def test_empty_feasible_set_names_the_tightest_constraint(df):
    with pytest.raises(DataError) as info:
        _analyze(df, constraints="cost_usd<=1e9, time_to_train_min<0.0001, provider in {AWS}")
    msg = str(info.value)
    assert msg.startswith("no row meets every constraint: the tightest is time_to_train_min<0.0001")
    assert "\n" not in msg


def test_missing_values_do_not_meet_a_constraint(df):
    t = df.copy()
    t.loc[:9, "provider"] = None
    r = _analyze(t, constraints="provider in {AWS, Azure, GCP, Lambda}")
    assert len(r.table) == len(t) - 10


@pytest.mark.parametrize("text, message", [
    ("cost_usd<=abc", "needs a number"), ("provider<{AWS}", "compares a text value"),
    ("<=5", "starts with a column name"), ("cost_usd", "needs a comparison"),
    ("cost_usd<=nan", "finite number"), ("a<=1,,b<=2", "empty item")])
def test_malformed_constraints_are_named(text, message):
    with pytest.raises(UsageError, match=message):
        parse_constraints(text)


def test_constraint_columns_and_types_are_checked(df):
    with pytest.raises(DataError, match="constraint column 'nope' is not in the table"):
        _analyze(df, constraints="nope<=3")
    with pytest.raises(DataError, match="column 'provider' holds text"):
        _analyze(df, constraints="provider<=3")
    with pytest.raises(DataError, match="column 'n_nodes' is numeric"):
        _analyze(df, constraints="n_nodes in {a, b}")


def test_quoted_column_names():
    c = parse_constraints('"cost:usd"<=5, "a,b" in {x}')
    assert c == (Constraint("cost:usd", "<=", 5.0), Constraint("a,b", "in", ("x",)))


def test_cli_require_and_summary(df, tmp_path, capsys):
    src = tmp_path / "t.parquet"
    df.to_parquet(src)
    out = tmp_path / "out"
    assert main(["analyze", str(src), "--out", str(out), "--quiet", "--no-report",
                 "--require", "time_to_train_min<=120,cost_usd<=500,n_accelerators<=64"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["constraints"] == ["time_to_train_min<=120", "cost_usd<=500",
                                                  "n_accelerators<=64"]
    counts = summary["preparation"]["constraints"]
    assert [c["constraint"] for c in counts] == summary["settings"]["constraints"]
    assert summary["rows"] == summary["preparation"]["rows_analyzed"] < len(df)
    assert main(["analyze", str(src), "--out", str(tmp_path / "o2"), "--quiet",
                 "--require", "time_to_train_min<0"]) == 3
    err = capsys.readouterr().err
    assert "no row meets every constraint" in err and err.count("\n") == 1
    assert main(["analyze", str(src), "--out", str(tmp_path / "o3"), "--require", "x<<2"]) == 2
    assert capsys.readouterr().err.startswith("gpurank: error: --require: ")


def test_a_table_of_time_cost_and_energy_ranks_end_to_end(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 40
    t = pd.DataFrame({"configuration": [f"run-{i}" for i in range(n)],
                      "time_to_train_min": rng.uniform(10, 1000, n),
                      "cost_usd": rng.uniform(5, 500, n),
                      "energy_kwh": rng.uniform(1, 90, n)})
    src = tmp_path / "runs.csv"
    t.to_csv(src, index=False)
    out = tmp_path / "out"
    assert main(["analyze", str(src), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [c["column"] for c in summary["criteria"]] == ["time_to_train_min", "cost_usd",
                                                         "energy_kwh"]
    assert summary["settings"]["target"] == "time_to_train_min"
    assert summary["importance"] is None  # no configuration variable to explain it with
    assert any("importance skipped" in n for n in summary["notes"])
    assert any("derived metrics skipped" in n for n in summary["notes"])
    assert summary["clusters"]["features"]  # grouped on its criteria
    ranking = pd.read_parquet(out / "ranking.parquet")
    assert sorted(ranking["rank"]) == list(range(1, n + 1))
    assert (out / "report.html").is_file()


@pytest.mark.parametrize("limits", ["n_accelerators<=64,provider in {AWS, GCP}",
                                    "cost_usd>20"])
def test_dask_with_constraints_equals_in_memory(df, limits):
    pytest.importorskip("distributed")
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from gpurank.engine.distributed import analyze_dataset
    from gpurank.engine.spec import AnalysisSpec

    spec = AnalysisSpec(n_estimators=5, k_range=(2, 3), constraints=limits, top=5)
    ref = Engine(backend="cpu").analyze(df, spec)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        res = analyze_dataset(dd.from_pandas(df, npartitions=3, sort=False), client=client,
                              spec=spec, return_columns=True)
    got = res.columns
    for col in ("pareto_rank", "domination_count", "rank"):
        np.testing.assert_array_equal(got[col].to_numpy(), ref.table[col].to_numpy())
    assert res.summary["preparation"]["constraints"] == [
        {"constraint": c, "rows_left_out": n} for c, n in ref.preparation.constraints]
    assert res.summary["rows"] == len(ref.table)


def test_a_table_of_several_benchmarks_is_refused_unless_one_is_chosen():
    t = pd.concat([config_table(40, seed=1).assign(benchmark="resnet"),
                   config_table(40, seed=2).assign(benchmark="bert",
                                                   time_to_train_min=lambda d: d[
                                                       "time_to_train_min"] * 3)],
                  ignore_index=True)
    with pytest.raises(DataError, match=r"holds results of 2 benchmarks \(bert, resnet\); .* "
                                        "--benchmark NAME"):
        _analyze(t)
    r = _analyze(t, benchmark="bert")
    assert len(r.table) == 40 and set(r.table["benchmark"]) == {"bert"}
    assert "40 rows with benchmark other than 'bert' left out (--benchmark)" in r.notes
    # Efficiency is measured within the benchmark: the same as analysing bert alone.
    alone = _analyze(t[t["benchmark"] == "bert"].reset_index(drop=True))
    np.testing.assert_allclose(r.table["scaling_efficiency"], alone.table["scaling_efficiency"])
    with pytest.raises(DataError, match="benchmark 'gpt3' matches no row; the table has: bert, "
                                        "resnet"):
        _analyze(t, benchmark="gpt3")
