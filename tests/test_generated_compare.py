"""The comparisons that check committed generated files accept fit noise and nothing more."""

from generated import ERROR_ATOL, fit_differences, same_report


def test_same_report_allows_only_the_last_digit():
    assert same_report("| a | -52.9 | 1.4 |", "| a | -52.8 | 1.4 |")
    assert not same_report("| a | -52.9 | 1.4 |", "| a | -52.7 | 1.4 |")
    assert not same_report("| a | 52.9 |", "| b | 52.9 |")
    assert not same_report("| a | 2.30 |", "| a | 2.3 |")
    assert not same_report("| a | 1.4 |", "| a | 1.4 | 2.0 |")
    assert not same_report("| a | 12 |", "| a | 13 |")  # integers are counts: exact


def test_fit_differences_accept_fit_noise_only():
    fitted = {"intensity": 95.104708, "by": {"A100": 0.387846}, "n": 241, "at_bound": ["x"],
              "errors": [{"group": "V100", "p90": 131.97477430742003}], "test": None}
    noise = {"intensity": 95.104687, "by": {"A100": 0.387845}, "n": 241, "at_bound": ["x"],
             "errors": [{"group": "V100", "p90": 131.97477428371965}], "test": None}
    assert fit_differences(fitted, noise) == []
    assert fit_differences(fitted, {**noise, "intensity": 95.2}) == [
        ".intensity: 95.104708 against 95.2"]
    assert fit_differences(fitted, {**noise, "n": 240}) == [".n: 241 against 240"]
    assert fit_differences(fitted, {**noise, "at_bound": []}) == [".at_bound: 1 items against 0"]
    assert fit_differences(fitted, {**noise, "test": 0.0}) == [".test: None against 0.0"]
    assert fit_differences(fitted, {**noise, "by": {"A30": 0.387845}})
    assert fit_differences(fitted, {**noise, "errors": [{"group": "V10", "p90": 131.97}]})
    assert fit_differences({"flag": True}, {"flag": 1.0})  # a boolean is not a number here
    assert fit_differences({"x": 0.0}, {"x": 1e-12})  # no absolute floor unless asked for
    near_zero = {"errors": [{"ape": 0.12144466759366432}], "x": 0.12144466759366432}
    moved = {"errors": [{"ape": 0.12143122799539001}], "x": 0.12144466759366432}
    assert fit_differences(near_zero, moved)
    assert fit_differences(near_zero, moved, atol={"ape": ERROR_ATOL}) == []
    assert fit_differences(near_zero, {**moved, "x": 0.12143122799539001},
                           atol={"ape": ERROR_ATOL})  # only under the named key
    assert fit_differences(near_zero, {"errors": [{"ape": 0.1234}], "x": near_zero["x"]},
                           atol={"ape": ERROR_ATOL})
