"""Robust rankings (SMAA over TOPSIS weights): weight sampling, the engine step, summary,
terminal, report and CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.errors import UsageError
from gpurank.engine.robust import robust_from_costs, sample_weights
from gpurank.engine.spec import AnalysisSpec, parse_weight_ranges
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from tables import config_table

CRIT = "time_to_train_min:min,cost_usd:min,throughput_per_accelerator:max"


# -- weight sampling ---------------------------------------------------------------------
def test_uniform_weights_are_on_the_simplex_and_seeded():
    w = sample_weights(4, 20_000, seed=3)
    assert w.shape == (20_000, 4) and (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w.mean(axis=0), 0.25, atol=0.01)  # Dirichlet(1) mean 1/m
    np.testing.assert_array_equal(w, sample_weights(4, 20_000, seed=3))
    assert not np.array_equal(w, sample_weights(4, 20_000, seed=4))


def test_bounded_weights_respect_bounds_and_are_uniform_inside():
    bounds = [(0.1, 0.5), (0.0, 1.0), (0.2, 0.3)]
    w = sample_weights(3, 5000, seed=0, bounds=bounds)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    for j, (lo, hi) in enumerate(bounds):
        assert (w[:, j] >= lo - 1e-12).all() and (w[:, j] <= hi + 1e-12).all()
    # uniform on the restricted simplex == uniform draws filtered by the bounds
    u = sample_weights(3, 400_000, seed=1)
    ok = u[((u >= [b[0] for b in bounds]) & (u <= [b[1] for b in bounds])).all(axis=1)]
    np.testing.assert_allclose(w.mean(axis=0), ok.mean(axis=0), atol=0.01)


def test_narrow_but_feasible_bounds_are_sampled():
    w = sample_weights(4, 1000, seed=0, bounds=[(0.24, 0.26)] * 4)
    assert np.abs(w - 0.25).max() <= 0.01 + 1e-12


@pytest.mark.parametrize("bounds, message", [
    ([(0.6, 1.0), (0.5, 1.0)], "lower bounds sum to 1.1 > 1"),
    ([(0.0, 0.3), (0.0, 0.3)], "upper bounds sum to 0.6 < 1"),
])
def test_infeasible_bounds_are_a_clear_error(bounds, message):
    with pytest.raises(UsageError, match=message):
        sample_weights(2, 10, bounds=bounds)


def test_bounds_with_no_volume_fail_instead_of_looping():
    with pytest.raises(UsageError, match="too small a part of the weight simplex"):
        sample_weights(3, 10, bounds=[(0.0, 0.5), (0.0, 0.5), (0.0, 1e-9)])


# -- spec ------------------------------------------------------------------------------
def test_weight_ranges_parse_and_validate():
    assert parse_weight_ranges(["cost_usd=0.1:0.5", "a=0:1,b=0.2:0.2"]) == (
        ("a", 0.0, 1.0), ("b", 0.2, 0.2), ("cost_usd", 0.1, 0.5))
    assert parse_weight_ranges({"x": (0, 0.5)}) == (("x", 0.0, 0.5),)
    for bad, msg in [("cost_usd=0.1", "items are 'column=low:high'"), ("c=a:b", "must be numbers"),
                     ("c=0.5:0.2", "0 <= low <= high <= 1"), ("c=0:1,c=0:1", "twice"),
                     ("a=0.6:1,b=0.6:1", "lower bounds sum to 1.2 > 1")]:
        with pytest.raises(UsageError, match=msg):
            parse_weight_ranges([bad])
    spec = AnalysisSpec(robust=True, weight_ranges=("cost_usd=0.1:0.5",))
    assert spec.weight_ranges == (("cost_usd", 0.1, 0.5),) and spec.samples == 10_000
    with pytest.raises(UsageError, match="set robust=True"):
        AnalysisSpec(weight_ranges=("cost_usd=0.1:0.5",))
    with pytest.raises(UsageError, match=r"samples must be an integer in \[1, "):
        AnalysisSpec(robust=True, samples=0)


# -- the SMAA step on a cost matrix --------------------------------------------------------
def test_robust_from_costs_figures_and_standard_errors():
    rng = np.random.default_rng(0)
    costs = rng.integers(0, 6, size=(300, 3)).astype(float)
    a = robust_from_costs(costs, samples=500, k=3, seed=1, kernels=cpu)
    b = robust_from_costs(costs, samples=500, k=3, seed=1, kernels=ref)
    np.testing.assert_array_equal(a.candidates, b.candidates)
    np.testing.assert_array_equal(a.p_topk, b.p_topk)
    np.testing.assert_array_equal(a.expected_rank, b.expected_rank)
    assert (cpu.domination_count(costs)[a.candidates] < 3).all()
    assert a.p_top1.sum() == pytest.approx(1.0) and a.p_topk.sum() == pytest.approx(3.0)
    np.testing.assert_allclose(a.p_topk_se, np.sqrt(a.p_topk * (1 - a.p_topk) / 500))
    assert (a.expected_rank >= 1).all() and (a.expected_rank_se >= 0).all()
    first = a.p_top1 > 0
    np.testing.assert_allclose(a.central_weights[first].sum(axis=1), 1.0)
    assert np.isnan(a.central_weights[~first]).all()
    full = a.column("p_topk")
    assert full.shape == (300,) and full.sum() == pytest.approx(3.0)
    assert np.isnan(a.column("expected_rank")).sum() == 300 - a.candidates.size


def test_more_samples_shrink_the_standard_error():
    costs = np.random.default_rng(2).random((200, 3))
    small = robust_from_costs(costs, samples=100, k=5, kernels=cpu)
    big = robust_from_costs(costs, samples=10_000, k=5, kernels=cpu)
    i = int(np.argmax(big.p_topk_se))
    j = int(np.flatnonzero(small.candidates == big.candidates[i])[0])
    assert big.p_topk_se[i] < small.p_topk_se[j] or small.p_topk_se[j] == 0
    assert abs(big.p_topk[i] - small.p_topk[j]) < 5 * small.p_topk_se[j] + 0.05


# -- the engine, summary, console, report and CLI -------------------------------------------
@pytest.fixture(scope="module")
def robust_result():
    eng = Engine(backend="cpu")
    res = eng.analyze(config_table(120, seed=4), criteria=CRIT, top=4, robust=True,
                      samples=800, clusters=2, n_estimators=10,
                      weight_ranges=("cost_usd=0.1:0.6",))
    return eng, res


def test_analysis_adds_robust_columns_and_summary(robust_result, tmp_path):
    eng, res = robust_result
    rb = res.robust
    assert rb.samples == 800 and rb.k == 4 and rb.weight_ranges == {"cost_usd": (0.1, 0.6)}
    t = res.table
    pruned = res.ranking.domination_count >= 4
    assert (t["p_top1"][pruned] == 0).all() and (t["p_topk"][pruned] == 0).all()
    assert t["expected_rank"][pruned].isna().all() and t["expected_rank"][~pruned].notna().all()
    assert t["p_topk"].sum() == pytest.approx(4.0)
    assert "robust" in res.timings
    summary = eng.write(res, tmp_path / "o")
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["robust"]["samples"] == 800 and len(s["robust"]["top"]) == 4
    top = s["robust"]["top"]
    assert [r["p_topk"] for r in top] == sorted((r["p_topk"] for r in top), reverse=True)
    for key in ("p_topk_se", "p_top1", "p_top1_se", "expected_rank", "expected_rank_se",
                "central_weights", "row", "rank"):
        assert key in top[0]
    assert summary["robust"]["candidates"] + summary["robust"]["pruned"] == 120
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Robust ranking (SMAA)" in html
    import pandas as pd

    back = pd.read_parquet(tmp_path / "o" / "ranking.parquet")
    assert {"p_top1", "p_topk", "expected_rank"} <= set(back.columns)


def test_without_robust_nothing_changes():
    res = Engine(backend="cpu").analyze(config_table(40, seed=1), criteria=CRIT, clusters=2,
                                        n_estimators=10)
    assert res.robust is None and "p_topk" not in res.table.columns
    from gpurank.engine.summary import build_summary

    assert build_summary(res)["robust"] is None


def test_unknown_weight_range_column_names_the_criteria():
    with pytest.raises(UsageError, match="'energy', which is not a criterion; criteria are: time_to_train_min"):
        Engine(backend="cpu").analyze(config_table(40, seed=1), criteria=CRIT, clusters=2,
                                      n_estimators=10, robust=True, samples=10,
                                      weight_ranges=("energy=0:0.5",))


@pytest.fixture()
def table_csv(tmp_path):
    path = tmp_path / "configs.csv"
    config_table(80, seed=7).to_csv(path, index=False)
    return path


def test_cli_robust_prints_table_and_writes_summary(table_csv, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(out), "--top", "3",
                 "--criteria", CRIT, "--robust", "--samples", "300", "--no-report",
                 "--clusters", "2", "--weights-range", "cost_usd=0.1:0.5",
                 "--weights-range", "time_to_train_min=0.2:0.8"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Robust top 3 (SMAA, 300 weight samples" in printed
    s = json.loads((out / "summary.json").read_text())
    assert s["robust"]["weight_ranges"] == {"cost_usd": [0.1, 0.5],
                                            "time_to_train_min": [0.2, 0.8]}


def test_cli_infeasible_weight_ranges_exit_2(table_csv, tmp_path, capsys):
    code = main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(tmp_path / "o"),
                 "--criteria", CRIT, "--robust", "--weights-range",
                 "cost_usd=0.7:1,time_to_train_min=0.5:1"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == ("gpurank: error: --weights-range lower bounds sum to 1.2 > 1; weights sum "
                   "to 1, so no weight vector satisfies them: lower some bounds")
