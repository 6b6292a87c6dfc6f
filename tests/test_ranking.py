import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, SchemaError, parse_criteria, resolve_backend
from gpurank.engine.ranking import criteria_matrix, final_rank, rank_configurations
from gpurank.kernels import reference

CPU = resolve_backend("cpu")


def _df():
    return pd.DataFrame(
        {
            "time": [10.0, 20.0, 30.0, 10.0, 40.0],
            "cost": [5.0, 2.0, 1.0, 5.0, 6.0],
            "eff": [0.9, 0.8, 0.95, 0.9, 0.1],
        }
    )


def test_max_criteria_are_negated_once():
    crit = parse_criteria("time:min,eff:max")
    np.testing.assert_array_equal(criteria_matrix(_df(), crit, backend=CPU)[:, 1], -_df()["eff"].to_numpy())


def test_rank_matches_reference_kernels():
    df = _df()
    crit = parse_criteria("time:min,cost:min,eff:max")
    r = rank_configurations(df, crit, backend=CPU)
    costs = criteria_matrix(df, crit, backend=CPU)
    np.testing.assert_array_equal(r.pareto_rank, reference.pareto_rank(costs))
    np.testing.assert_array_equal(r.domination_count, reference.domination_count(costs))
    # Row 4 is dominated by every other row; duplicates 0 and 3 are both on the front.
    assert r.domination_count[4] == 4
    assert r.pareto_rank[0] == r.pareto_rank[3] == 0
    assert r.front_size == 4


def test_topsis_on_negated_matrix_equals_topsis_with_benefit_flags():
    df = _df()
    crit = parse_criteria("time:min:1,cost:min:2,eff:max:3")
    r = rank_configurations(df, crit, backend=CPU)
    expected = reference.topsis(df[["time", "cost", "eff"]].to_numpy(), np.array([1, 2, 3.0]),
                                np.array([False, False, True]))
    np.testing.assert_allclose(r.topsis_score, expected)


def test_final_rank_breaks_ties_by_pareto_rank_then_row_order():
    score = np.array([0.5, 0.9, 0.5, 0.5])
    pr = np.array([1, 0, 0, 1], dtype=np.int32)
    assert final_rank(score, pr).tolist() == [3, 1, 2, 4]


def test_ideal_and_anti_ideal_in_original_units():
    r = rank_configurations(_df(), parse_criteria("time:min,eff:max"), backend=CPU)
    assert r.ideal == {"time": 10.0, "eff": 0.95}
    assert r.anti_ideal == {"time": 40.0, "eff": 0.1}


def test_missing_criterion_column_lists_columns():
    with pytest.raises(SchemaError) as info:
        rank_configurations(_df(), parse_criteria("thruput:max"), backend=CPU)
    assert str(info.value) == ("criterion column 'thruput' is not in the table; "
                               "its columns: time, cost, eff")


def test_missing_criterion_column_of_a_wide_table_names_the_three_closest():
    wide = pd.DataFrame({f"metric_{i:03d}": [float(i)] * 5 for i in range(500)})
    df = pd.concat([_df(), wide], axis=1).assign(throughput=1.0)
    with pytest.raises(SchemaError) as info:
        rank_configurations(df, parse_criteria("thruput:max"), backend=CPU)
    text = str(info.value)
    assert text.startswith("criterion column 'thruput' is not in the table; the closest of its "
                           "504 columns: throughput, ")
    assert text.count(",") == 2 and len(text) < 150


def test_nan_and_inf_criteria_named_with_row_count():
    df = _df()
    df.loc[1, "cost"] = np.nan
    df.loc[2, "eff"] = np.inf
    with pytest.raises(DataError) as info:
        rank_configurations(df, parse_criteria("time:min,cost:min,eff:max"), backend=CPU)
    assert str(info.value).startswith("2 rows have missing or infinite values in criteria cost, eff")
    assert "--drop-invalid" in str(info.value)


def test_constant_criterion_named():
    df = _df().assign(flat=3.0)
    with pytest.raises(DataError, match="criterion column 'flat' is constant \\(every value is 3\\)"):
        rank_configurations(df, parse_criteria("time:min,flat:max"), backend=CPU)


def test_non_numeric_criterion_names_row_and_value():
    df = _df().astype({"cost": "object"})
    df.loc[3, "cost"] = "cheap"
    with pytest.raises(DataError, match="criterion column 'cost' must be numeric; row 3 holds 'cheap'"):
        rank_configurations(df, parse_criteria("cost:min"), backend=CPU)


def test_one_row_is_ranked():
    r = rank_configurations(_df().iloc[:1], parse_criteria("time:min,cost:min"), backend=CPU)
    assert r.pareto_rank.tolist() == [0] and r.rank.tolist() == [1]
    assert r.domination_count.tolist() == [0]


def test_backend_runs_independent_calls_together_and_keeps_their_order():
    """On the CPU the rank step's kernels run on threads of their own when Numba's
    threading layer allows it; results come back in call order and errors propagate."""
    import threading

    from gpurank.engine.backend import resolve_backend
    from gpurank.kernels.cpu.threads import concurrent_calls_safe

    cpu = resolve_backend("cpu")
    seen = []

    def call(v):
        seen.append(threading.get_ident())
        return v

    assert cpu.together(lambda: call(1), lambda: call(2), lambda: call(3)) == [1, 2, 3]
    if concurrent_calls_safe():
        assert threading.get_ident() not in seen
    with pytest.raises(ZeroDivisionError):
        cpu.together(lambda: 1, lambda: 1 / 0)


def test_rank_step_results_do_not_depend_on_concurrency(monkeypatch):
    from gpurank.engine.backend import _cpu, resolve_backend
    from gpurank.engine.spec import Criterion

    rng = np.random.default_rng(7)
    df = pd.DataFrame(rng.integers(0, 6, (3000, 4)).astype(float), columns=list("abcd"))
    crit = [Criterion(c, "min") for c in "abc"] + [Criterion("d", "max")]
    together = rank_configurations(df, crit, backend=resolve_backend("cpu"))
    monkeypatch.setattr(_cpu, "concurrent_calls_safe", lambda: False)
    serial = rank_configurations(df, crit, backend=resolve_backend("cpu"))
    for name in ("pareto_rank", "domination_count", "topsis_score", "rank"):
        np.testing.assert_array_equal(getattr(together, name), getattr(serial, name))
