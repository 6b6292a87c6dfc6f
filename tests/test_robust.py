"""Robust rankings (SMAA over TOPSIS weights): weight sampling, the engine step, summary,
terminal, report and CLI; predicted values drawn in their intervals (model uncertainty)
against brute-force sampling, and the worked example of docs/robust.md."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.robust import (
    ValueUncertainty,
    robust_from_costs,
    robust_summary,
    sample_weights,
)
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


# -- model uncertainty: predicted values drawn in their intervals ----------------------------
def _draw_factors(lo, hi, samples, seed):
    """Each row's factor in each sample, as the robust step draws it (one per row, shared by
    the row's criteria)."""
    from gpurank.kernels._smaa import RowFactors, draw_moves

    n = lo.shape[0]
    return draw_moves(RowFactors(lo, hi, [1], seed=seed), 0, samples, np.arange(n))


def _brute_force(values, sense_max, expo, weights, factors, k, candidates):
    """SMAA the obvious way: per sample, every row's values drawn (value * f ** exponent),
    TOPSIS closeness with the point table's vector norms, ideal and anti-ideal (drawn values
    beyond them count as reaching them), every row ranked (ties: the weighted sum of the
    normalized drawn values, the drawn canonical rows, the row index). Returns p_top1,
    p_topk over all rows and the mean rank among ``candidates``."""
    n, m = values.shape
    sign = np.where(sense_max, -1.0, 1.0)
    point = values * sign
    norm = np.sqrt((point ** 2).sum(axis=0))
    ideal, anti = (point / norm).min(axis=0), (point / norm).max(axis=0)
    top1, topk = np.zeros(n), np.zeros(n)
    rank_sum = np.zeros(candidates.size)
    is_cand = np.zeros(n, dtype=bool)
    is_cand[candidates] = True
    for w, f in zip(weights, factors):
        drawn = values * f[:, None] ** expo[None, :] * sign
        r = drawn / norm
        d_plus = np.sqrt(((w * np.maximum(r - ideal, 0)) ** 2).sum(axis=1))
        d_minus = np.sqrt(((w * np.maximum(anti - r, 0)) ** 2).sum(axis=1))
        with np.errstate(invalid="ignore"):
            closeness = np.where(d_plus + d_minus > 0, d_minus / (d_plus + d_minus), 0.5)
        order = np.lexsort([np.arange(n)] + [drawn[:, j] for j in range(m - 1, -1, -1)]
                           + [r @ w, -closeness])
        top1[order[0]] += 1
        topk[order[:k]] += 1
        cand_order = order[is_cand[order]]
        ranks = np.empty(n)
        ranks[cand_order] = np.arange(1, cand_order.size + 1)
        rank_sum += ranks[candidates]
    s = len(weights)
    return top1 / s, topk / s, rank_sum / s


def _predicted_table(n, seed):
    """Time, cost and throughput of n configurations; about half predicted, with intervals
    of different widths."""
    rng = np.random.default_rng(seed)
    time = rng.uniform(50, 200, n)
    cost = time * rng.uniform(0.3, 0.8, n)
    thr = 1e4 / time * rng.uniform(0.8, 1.2, n)
    predicted = rng.random(n) < 0.5
    lo = np.where(predicted, rng.uniform(0.6, 1.0, n), 1.0)
    hi = np.where(predicted, rng.uniform(1.0, 1.6, n), 1.0)
    return np.stack([time, cost, thr], axis=1), lo, hi


EXPONENT = np.array([1.0, 1.0, -1.0])  # time and cost move with the factor, throughput against
SENSE_MAX = np.array([False, False, True])


@pytest.mark.parametrize("kernels", [cpu, ref], ids=["cpu", "reference"])
def test_drawn_values_equal_brute_force_for_the_same_draws(kernels):
    values, lo, hi = _predicted_table(40, seed=1)
    costs = values * np.where(SENSE_MAX, -1.0, 1.0)
    u = ValueUncertainty(lo, hi, EXPONENT, "the 80% prediction interval")
    samples, k, seed = 1500, 3, 9
    rb = robust_from_costs(costs, samples=samples, k=k, seed=seed, kernels=kernels,
                           uncertainty=u)
    assert rb.model_uncertainty["drawn"]
    w = sample_weights(3, samples, seed=seed)
    p1, pk, er = _brute_force(values, SENSE_MAX, EXPONENT, w, _draw_factors(lo, hi, samples,
                                                                            seed), k,
                              rb.candidates)
    np.testing.assert_array_equal(rb.column("p_top1"), p1)
    np.testing.assert_array_equal(rb.column("p_topk"), pk)
    np.testing.assert_allclose(rb.expected_rank, er, rtol=0, atol=1e-12)
    # the draws matter here: the undrawn ranking is another one
    plain = robust_from_costs(costs, samples=samples, k=k, seed=seed, kernels=kernels)
    assert plain.candidates.size < rb.candidates.size
    assert not np.array_equal(plain.column("p_top1"), rb.column("p_top1"))


def test_drawn_values_agree_with_an_independent_draw():
    """The same probabilities, within a few standard errors, from weights and factors drawn
    by another generator (Dirichlet weights; u uniform, f = lo ** (1 - 2u) below the median
    and hi ** (2u - 1) above)."""
    values, lo, hi = _predicted_table(30, seed=3)
    costs = values * np.where(SENSE_MAX, -1.0, 1.0)
    u = ValueUncertainty(lo, hi, EXPONENT, "the 80% prediction interval")
    s = 4000
    rb = robust_from_costs(costs, samples=s, k=3, seed=0, kernels=cpu, uncertainty=u)
    rng = np.random.default_rng(12345)
    w = rng.dirichlet(np.ones(3), size=s)
    uu = rng.random((s, 30))
    f = np.where(uu < 0.5, lo ** (1 - 2 * uu), hi ** (2 * uu - 1))
    p1, pk, er = _brute_force(values, SENSE_MAX, EXPONENT, w, f, 3, rb.candidates)
    for mine, theirs in ((rb.column("p_top1"), p1), (rb.column("p_topk"), pk)):
        se = np.sqrt((mine * (1 - mine) + theirs * (1 - theirs)) / s)
        assert (np.abs(mine - theirs) <= 4.5 * se + 2.0 / s).all()
    assert np.abs(rb.expected_rank - er).max() <= 4.5 * np.sqrt(2) * rb.expected_rank_se.max()
    assert pk.max() > 0.3 and (p1 > 0.05).sum() >= 2  # a contest, not one certain winner


# The worked example of docs/robust.md ("When the winner changes").
EXAMPLE = [  # configuration, time_to_train_min, cost_usd, factor_lo, factor_hi
    ("A 8x B200, predicted (family borrowed)", 96.0, 60.8, 0.70, 1.55),
    ("B 8x H200, measured", 101.0, 64.8, 1.0, 1.0),
    ("C 16x H100, predicted (family fitted)", 99.0, 66.0, 0.93, 1.08),
    ("D 8x MI355X, predicted (family borrowed)", 104.0, 62.4, 0.75, 1.45),
    ("E 8x H100, measured", 140.0, 70.0, 1.0, 1.0),
    ("F 4x H200, measured", 185.0, 61.7, 1.0, 1.0),
]


def test_worked_example_the_winner_changes_when_values_are_drawn():
    costs = np.array([[r[1], r[2]] for r in EXAMPLE])
    u = ValueUncertainty(np.array([r[3] for r in EXAMPLE]), np.array([r[4] for r in EXAMPLE]),
                         np.array([1.0, 1.0]), "the 80% prediction interval")
    names = ["time_to_train_min", "cost_usd"]
    point = robust_from_costs(costs, samples=10_000, k=3, seed=0, kernels=cpu, criteria=names)
    drawn = robust_from_costs(costs, samples=10_000, k=3, seed=0, kernels=cpu, criteria=names,
                              uncertainty=u)
    # A dominates every other row at its point estimate: first under every weight vector
    assert point.column("p_top1")[0] == 1.0
    # its interval is wide: drawn with it, A is first in under half of the samples, still
    # the likeliest winner, and the measured B is the surest of a top-3 place
    p1, pk = drawn.column("p_top1"), drawn.column("p_topk")
    assert 0.4 < p1[0] < 0.5 and p1[0] == p1.max()
    assert pk[1] == pk.max() > pk[0]
    assert drawn.candidates.tolist() == [0, 1, 2, 3, 4, 5]  # E can now reach the top 3


def test_summary_says_what_was_drawn():
    import pandas as pd

    costs = np.array([[r[1], r[2]] for r in EXAMPLE])
    u = ValueUncertainty(np.array([r[3] for r in EXAMPLE]), np.array([r[4] for r in EXAMPLE]),
                         np.array([1.0, 1.0]), "the 80% prediction interval")
    rb = robust_from_costs(costs, samples=500, k=3, seed=0, kernels=cpu,
                           criteria=["time_to_train_min", "cost_usd"], uncertainty=u)
    table = pd.DataFrame({"configuration": [r[0] for r in EXAMPLE]})
    s = robust_summary(rb, table, ["configuration"], top=3)
    json.dumps(s)  # summary.json material
    mu = s["model_uncertainty"]
    assert mu["drawn"] is True and mu["criteria"] == {"time_to_train_min": 1, "cost_usd": 1}
    assert mu["rows_with_interval"] == 3 and "log-uniform" in mu["distribution"]
    assert mu["text"].startswith("model uncertainty: time_to_train_min, cost_usd drawn in the "
                                 "80% prediction interval (3 of 6 rows predicted")
    assert s["method"] == "SMAA over TOPSIS weights and predicted values"
    assert "every draw of the predicted values" in s["expected_rank_among"]
    by_row = {r["row"]: r["value_factor"] for r in s["top"]}
    assert by_row.get(0, [0.7, 1.55]) == [0.7, 1.55] and by_row.get(1, [1, 1]) == [1.0, 1.0]
    plain = robust_summary(robust_from_costs(costs, samples=500, k=3, kernels=cpu), table,
                           ["configuration"], top=3)
    assert plain["model_uncertainty"] is None and "value_factor" not in plain["top"][0]
    assert plain["method"] == "SMAA over TOPSIS weights"


def test_intervals_that_move_nothing_change_nothing():
    values, lo, hi = _predicted_table(60, seed=5)
    costs = values * np.where(SENSE_MAX, -1.0, 1.0)
    want = robust_from_costs(costs, samples=300, k=4, seed=2, kernels=cpu)
    cases = [(np.ones(60), np.ones(60), EXPONENT, "no analyzed row has an interval"),
             (lo, hi, np.zeros(3), "no criterion depends on the predicted values")]
    for flo, fhi, e, why in cases:
        got = robust_from_costs(costs, samples=300, k=4, seed=2, kernels=cpu,
                                uncertainty=ValueUncertainty(flo, fhi, e, "an interval"))
        for col in ("candidates", "p_top1", "p_topk", "expected_rank", "central_weights"):
            np.testing.assert_array_equal(getattr(got, col), getattr(want, col), col)
        assert got.model_uncertainty["drawn"] is False and why in got.model_uncertainty["text"]
        assert got.factor_interval is None


def test_candidate_rows_alone_draw_what_the_whole_table_draws():
    """The Dask driver's form: the candidate rows, the whole table's stats, their row ids
    (the keys of their draws) and their intervals give the in-memory result."""
    from gpurank.engine.robust import robust_from_candidates

    values, lo, hi = _predicted_table(80, seed=6)
    costs = values * np.where(SENSE_MAX, -1.0, 1.0)
    u = ValueUncertainty(lo, hi, EXPONENT, "the 80% prediction interval")
    want = robust_from_costs(costs, samples=400, k=3, seed=4, kernels=cpu, uncertainty=u)
    c = want.candidates
    got = robust_from_candidates(
        costs[c], c, cpu.topsis_stats(costs), n_rows=80, samples=400, k=3, seed=4,
        kernels=cpu, uncertainty=ValueUncertainty(lo[c], hi[c], EXPONENT, u.source),
        rows_with_interval=u.rows_with_interval())
    for col in ("candidates", "p_top1", "p_topk", "expected_rank", "central_weights",
                "factor_interval"):
        np.testing.assert_array_equal(getattr(got, col), getattr(want, col), col)
    assert got.model_uncertainty == want.model_uncertainty


def test_log_norm_draws_the_values_not_their_logarithms():
    """With norm="log" the step ranks sign * log10(value); a factor moves that by
    sign * exponent * log10(f). Same draws, the same ranking as drawing the values and
    taking their logarithms (brute force with min-max normalization of the point table)."""
    from gpurank.engine.robust import robust_from_costs_spec
    from gpurank.engine.spec import parse_criteria

    values, lo, hi = _predicted_table(40, seed=8)
    costs = values * np.where(SENSE_MAX, -1.0, 1.0)
    criteria = parse_criteria("time_to_train_min:min,cost_usd:min,throughput:max")
    spec = AnalysisSpec(criteria=criteria, robust=True, samples=800, top=3, seed=5, norm="log")
    backend = Engine(backend="cpu").backend
    u = ValueUncertainty(lo, hi, EXPONENT, "the 80% prediction interval")
    rb = robust_from_costs_spec(costs, criteria, None, spec=spec, backend=backend,
                                uncertainty=u)
    w = sample_weights(3, 800, seed=5)
    f = _draw_factors(lo, hi, 800, 5)
    sign = np.where(SENSE_MAX, -1.0, 1.0)
    logs = np.log10(values) * sign
    lmin, lmax = logs.min(axis=0), logs.max(axis=0)
    top1 = np.zeros(40)
    for ws, fs in zip(w, f):
        drawn = np.log10(values * fs[:, None] ** EXPONENT) * sign
        r = (drawn - lmin) / (lmax - lmin)
        dp = np.sqrt(((ws * np.maximum(r, 0)) ** 2).sum(axis=1))
        dm = np.sqrt(((ws * np.maximum(1 - r, 0)) ** 2).sum(axis=1))
        # ties (rows drawn beyond the ideal in every criterion): the weighted sum
        top1[np.lexsort([r @ ws, -dm / (dp + dm)])[0]] += 1
    np.testing.assert_array_equal(rb.column("p_top1"), top1 / 800)


@pytest.mark.parametrize("field, bad, message", [
    ("factor_lo", np.array([0.5, 1.2]), r"factor_lo must be in \(0, 1\]; row 1 has 1.2"),
    ("factor_hi", np.array([1.0, 0.9]), r"factor_hi must be in \[1, inf\); row 1 has 0.9"),
    ("factor_hi", np.array([1.0, 1.0, 1.0]), r"factor_hi must have one value per row \(2\)"),
    ("exponent", np.array([0.5, 1.0]),
     r"exponent must be an integer in \[-4, 4\]; criterion 0 has 0.5"),
    ("exponent", np.array([1.0]), r"exponent must have one value per criterion \(2\)"),
])
def test_bad_model_uncertainty_is_a_data_error(field, bad, message):
    good = {"factor_lo": np.array([0.5, 1.0]), "factor_hi": np.array([2.0, 1.0]),
            "exponent": np.array([1.0, 0.0]), "source": "the interval"}
    with pytest.raises(DataError, match=message):
        robust_from_costs(np.array([[1.0, 2.0], [2.0, 1.0]]), samples=10, k=1, kernels=cpu,
                          uncertainty=ValueUncertainty(**{**good, field: bad}))


def test_intervals_from_predicted_bounds():
    u = ValueUncertainty.from_bounds([100.0, 50.0, 80.0], [70.0, np.nan, 80.0],
                                     [150.0, np.nan, 96.0], exponent=[1, 1, -1],
                                     source="the 80% prediction interval")
    assert u.factor_lo.tolist() == [0.7, 1.0, 1.0] and u.factor_hi.tolist() == [1.5, 1.0, 1.2]
    assert u.rows_with_interval() == 2 and u.moves()
    with pytest.raises(DataError, match=r"row 0's interval \[110, 150\] must be positive, "
                                        "finite and contain its value 100"):
        ValueUncertainty.from_bounds([100.0], [110.0], [150.0], exponent=[1], source="x")


def test_drawn_values_on_a_device_matrix_match_the_cpu():
    from gpurank.kernels import cuda as kc

    if not kc.is_available():
        pytest.skip("no CUDA device and the Numba CUDA simulator is not enabled")
    from numba import cuda

    values, lo, hi = _predicted_table(12, seed=9)
    costs = np.round(values * np.where(SENSE_MAX, -1.0, 1.0))  # exact sums in any order
    u = ValueUncertainty(lo, hi, EXPONENT, "the 80% prediction interval")
    want = robust_from_costs(costs, samples=3, k=2, seed=1, kernels=cpu, uncertainty=u)
    got = robust_from_costs(cuda.to_device(costs), samples=3, k=2, seed=1, kernels=kc,
                            uncertainty=u)
    for col in ("candidates", "p_top1", "p_topk", "expected_rank", "central_weights"):
        np.testing.assert_array_equal(getattr(got, col), getattr(want, col), col)
