import pytest

from gpurank.engine import AnalysisSpec, Criterion, SchemaError, UsageError, parse_criteria
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
        ("cost_usd", "criteria: 'cost_usd' is malformed"),
        ("", "criteria is empty"),
        ("a:min,a:max", "criteria names column 'a' twice"),
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


def test_default_criteria_are_the_ones_the_table_has():
    full = ["time_to_train_min", "throughput_per_accelerator", "scaling_efficiency"]
    assert [c.column for c in default_criteria(full)] == full
    assert default_criteria(full + ["cost_usd"])[-1] == Criterion("cost_usd", "min")
    # Measured runs without throughput: time, cost and energy.
    assert [str(c) for c in default_criteria(["time_to_train_min", "cost_usd",
                                              "energy_kwh"])] == [
        "time_to_train_min:min", "cost_usd:min", "energy_kwh:min"]
    with pytest.raises(SchemaError, match="none of the default criteria"):
        default_criteria(["x"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"clusters": 0}, "clusters must be None or an integer in [1, 1000] or one of 'auto'; got 0"),
        ({"clusters": "many"}, "clusters must be None or an integer in [1, 1000] or one of 'auto'; "
                               "got 'many'"),
        ({"top": 0}, "top must be an integer in [1, 2147483647]; got 0"),
        ({"seed": -3}, "seed must be an integer in [0, 4294967295]; got -3"),
        ({"seed": 2**32}, "seed must be an integer in [0, 4294967295]; got 4294967296"),
        ({"norm": "l1"}, "norm must be one of 'vector', 'minmax', 'log'; got 'l1'"),
        ({"sample_rows": 5}, "sample_rows must be an integer in [10, 2147483647]; got 5"),
        ({"rank_depth": 0}, "rank_depth must be None or an integer in [1, 2147483647]; got 0"),
        ({"rank_depth": 2**31}, "rank_depth must be None or an integer in [1, 2147483647]"),
        ({"count_cap": 2.5}, "count_cap must be None or an integer in [1, 9223372036854775807]; "
                             "got 2.5"),
        ({"count_cap": 2**63}, "count_cap must be None or an integer in [1, "),
        ({"target": ""}, "target must be None or a non-empty string; got ''"),
        ({"constraints": "a<"}, "constraints: 'a <' needs exactly one value"),
    ],
)
def test_bad_spec_values_are_named(kwargs, message):
    with pytest.raises(UsageError) as info:
        AnalysisSpec(**kwargs)
    assert message in str(info.value)


def test_criterion_round_trips_to_text():
    assert str(Criterion("cost_usd", "min", 0.3)) == "cost_usd:min:0.3"
    assert parse_criteria(str(Criterion("x", "max"))) == (Criterion("x", "max"),)
