import pytest

from gpurank.engine import AnalysisSpec, Criterion, UsageError, parse_criteria
from gpurank.engine.spec import default_criteria, normalize_weights


def test_parse_criteria_with_and_without_weights():
    crit = parse_criteria("time_to_train_min:min:0.4, cost_usd:min:0.3,scaling_efficiency:max:0.3")
    assert [c.column for c in crit] == ["time_to_train_min", "cost_usd", "scaling_efficiency"]
    assert [c.sense for c in crit] == ["min", "min", "max"]
    assert normalize_weights(crit) == pytest.approx((0.4, 0.3, 0.3))
    equal = parse_criteria("a:min,b:max")
    assert normalize_weights(equal) == (0.5, 0.5)


def test_weights_are_normalized():
    crit = parse_criteria("a:min:2,b:max:6")
    assert normalize_weights(crit) == pytest.approx((0.25, 0.75))


@pytest.mark.parametrize(
    "text, message",
    [
        ("cost_usd:up", "criterion 'cost_usd' has unknown sense 'up'; allowed: min, max"),
        ("cost_usd:min:-1", "criterion 'cost_usd' has weight -1.0; weights must be finite and >= 0"),
        ("cost_usd:min:abc", "criterion 'cost_usd' has weight 'abc', which is not a number"),
        ("cost_usd", "criterion 'cost_usd' is malformed"),
        ("", "--criteria is empty"),
        ("a:min,a:max", "criterion column 'a' is named twice"),
        ("a:min:nan", "criterion 'a' has weight nan"),
    ],
)
def test_bad_criteria_are_named(text, message):
    with pytest.raises(UsageError, match=None) as info:
        parse_criteria(text)
    assert message in str(info.value)


def test_all_zero_weights_rejected():
    with pytest.raises(UsageError, match=r"weights are all zero \(\[0.0, 0.0\]\)"):
        normalize_weights(parse_criteria("a:min:0,b:max:0"))


def test_mixed_weights_rejected():
    with pytest.raises(UsageError, match=r"criteria \['b'\] have no weight"):
        normalize_weights((Criterion("a", "min", 1.0), Criterion("b", "max")))


def test_default_criteria_adds_cost_only_when_present():
    assert [c.column for c in default_criteria(["x"])] == [
        "time_to_train_min", "throughput_per_accelerator", "scaling_efficiency"]
    assert default_criteria(["cost_usd"])[-1] == Criterion("cost_usd", "min")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"clusters": 0}, "--clusters must be a positive integer or 'auto'; got 0"),
        ({"clusters": "many"}, "--clusters must be a positive integer or 'auto'; got 'many'"),
        ({"top": 0}, "--top must be an integer >= 1; got 0"),
        ({"seed": -3}, "--seed must be a non-negative integer; got -3"),
        ({"norm": "l1"}, "--norm must be 'vector' or 'minmax'; got 'l1'"),
        ({"sample_rows": 5}, "--sample-rows must be an integer >= 10; got 5"),
        ({"rank_depth": 0}, "--rank-depth must be an integer >= 1; got 0"),
        ({"count_cap": 2.5}, "--count-cap must be an integer >= 1; got 2.5"),
    ],
)
def test_bad_spec_values_are_named(kwargs, message):
    with pytest.raises(UsageError) as info:
        AnalysisSpec(**kwargs)
    assert message in str(info.value)


def test_criterion_round_trips_to_text():
    assert str(Criterion("cost_usd", "min", 0.3)) == "cost_usd:min:0.3"
    assert parse_criteria(str(Criterion("x", "max"))) == (Criterion("x", "max"),)
