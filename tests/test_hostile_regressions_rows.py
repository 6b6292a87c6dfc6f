"""Round four of the hostile-input defects, continued from tests/test_hostile_regressions.py:
rows outside the model's domain (engine/sources/model/domain.py), broken intervals given to
``--robust``, MLPerf logs whose run ends before it starts, and the smaller points."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.cli import main
from gpurank.engine.sources.model.domain import domain_reasons
from gpurank.engine.sources.model.predict import predict

_BASE = dict(accelerator="H100-SXM5-80GB", n_accelerators=16, n_nodes=2,
             accelerators_per_node=8, global_batch_size=4096, price_per_accelerator_hour=3.0)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gpurank: error: "), err
    return lines[0]


def _predicted(**row):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # values near 1e308 give no NumPy warning either
        out = predict(pd.DataFrame([dict(_BASE, **row)]))
    return out.iloc[0]


# -- the domain of a row --------------------------------------------------------------------------
@pytest.mark.parametrize("row, reason", [
    (dict(n_nodes=0), "n_nodes must be a positive integer"),
    (dict(n_nodes=-2), "n_nodes must be a positive integer"),
    (dict(accelerators_per_node=0), "accelerators_per_node must be a positive integer"),
    (dict(accelerators_per_node=-8), "accelerators_per_node must be a positive integer"),
    (dict(n_accelerators=2.5, n_nodes=None, accelerators_per_node=None),
     "n_accelerators must be a positive integer"),
    (dict(accelerators_per_node=3, n_nodes=None),
     "n_accelerators 16 is not a whole number of nodes of accelerators_per_node 3"),
    (dict(n_nodes=3, accelerators_per_node=None),
     "n_accelerators 16 does not split into n_nodes 3 equal nodes"),
    (dict(n_nodes=3), "n_nodes 3 x accelerators_per_node 8 = 24, not n_accelerators 16"),
    (dict(global_batch_size=0), "global_batch_size must be a positive integer"),
    (dict(global_batch_size=-64), "global_batch_size must be a positive integer"),
    (dict(n_accelerators=1_000_000, n_nodes=1, accelerators_per_node=1_000_000),
     "accelerators_per_node 1,000,000 is more than the largest node of this accelerator"),
    (dict(price_per_accelerator_hour=-1.0), "price_per_accelerator_hour must be a finite"),
    (dict(bf16_dense_tflops=np.inf), "bf16_dense_tflops must be a finite number"),
    (dict(bf16_dense_tflops=-100.0), "bf16_dense_tflops must be a finite number"),
    (dict(mem_bw_tbps=0.0), "mem_bw_tbps must be a finite number"),
    (dict(mem_bw_tbps=np.inf), "mem_bw_tbps must be a finite number"),
    (dict(n_accelerators=1e308, n_nodes=1e308), "n_accelerators must be a positive integer"),
    (dict(bf16_dense_tflops=1.7e308), "bf16_dense_tflops must be a finite number in (0, 1e+09]"),
    (dict(epochs=-5.0), "epochs must be a finite number"),
])
def test_a_row_outside_the_domain_gets_no_number_and_its_reason(row, reason):
    r = _predicted(**row)
    assert np.isnan(r["predicted_time_to_train_min"]) and np.isnan(r["predicted_cost_usd"])
    assert reason in r["prediction_note"], r["prediction_note"]
    assert r["prediction_basis"] == ""


def test_a_row_inside_the_domain_is_predicted():
    r = _predicted()
    assert r["predicted_time_to_train_min"] > 0 and r["prediction_basis"] == "fitted"


def test_an_invalid_per_row_value_is_never_replaced_by_the_catalogs():
    good = _predicted(bf16_dense_tflops=989.0)
    assert good["predicted_time_to_train_min"] > 0
    for bad in (np.inf, -100.0, 0.0, "fast"):
        assert np.isnan(_predicted(bf16_dense_tflops=bad)["predicted_time_to_train_min"])


def test_an_accelerator_the_catalog_lacks_is_predicted_from_its_own_specs():
    r = _predicted(accelerator="Zeta Z1", bf16_dense_tflops=800.0, mem_bw_tbps=4.0, mem_gb=96.0)
    assert r["predicted_time_to_train_min"] > 0
    assert r["prediction_basis"].startswith("borrowed:")
    assert "no calibration rows" in r["prediction_note"]
    bare = _predicted(accelerator="Zeta Z2")
    assert np.isnan(bare["predicted_time_to_train_min"])
    assert "not in catalog" in bare["prediction_note"]
    # one row of the product gives its facts, the other does not: only the first is predicted
    both = predict(pd.DataFrame([
        dict(_BASE, accelerator="Zeta Z1", bf16_dense_tflops=800.0, mem_bw_tbps=4.0),
        dict(_BASE, accelerator="Zeta Z1", bf16_dense_tflops=800.0)]))
    assert both["predicted_time_to_train_min"].notna().tolist() == [True, False]
    assert both["prediction_note"][1].startswith("accelerator not in catalog, and the row does "
                                                 "not give its own dense peak")


def test_the_domain_is_declared_once_and_names_the_column():
    t = pd.DataFrame([dict(_BASE), dict(_BASE, n_nodes="two")])
    reasons = domain_reasons(t)
    assert reasons[0] == "" and reasons[1].startswith("n_nodes must be a positive integer")
    assert "got 'two'" in reasons[1]


def test_analyze_predict_gives_no_number_to_a_row_outside_the_domain(tmp_path, capsys):
    rows = [dict(_BASE, provider="a"), dict(_BASE, provider="b", n_nodes=-2),
            dict(_BASE, provider="c", n_accelerators=8, n_nodes=1)]
    pd.DataFrame(rows).to_parquet(tmp_path / "t.parquet")
    out = tmp_path / "p.parquet"
    assert main(["predict", str(tmp_path / "t.parquet"), "-o", str(out)]) == 0
    got = pd.read_parquet(out)
    assert got["predicted_time_to_train_min"].isna().tolist() == [False, True, False]
    assert got["prediction_note"][1].startswith("n_nodes must be a positive integer")


# -- --robust checks its intervals ----------------------------------------------------------------
def _with_intervals(tmp_path, lo, hi):
    from tables import config_table

    t = config_table(6, seed=3)
    t["time_to_train_min_lo"] = t["time_to_train_min"] * 0.8
    t["time_to_train_min_hi"] = t["time_to_train_min"] * 1.25
    t.loc[2, "time_to_train_min_lo"] = lo(t.loc[2, "time_to_train_min"])
    t.loc[2, "time_to_train_min_hi"] = hi(t.loc[2, "time_to_train_min"])
    path = tmp_path / "t.parquet"
    t.to_parquet(path)
    return path


@pytest.mark.parametrize("lo, hi, column", [
    (lambda v: v * 1.5, lambda v: v * 0.5, "time_to_train_min_lo"),  # inverted
    (lambda v: v * 0.5, lambda v: v * 0.9, "time_to_train_min_hi"),  # misses its estimate
    (lambda v: 0.0, lambda v: v * 2, "time_to_train_min_lo"),  # zero
    (lambda v: -v, lambda v: v * 2, "time_to_train_min_lo"),  # negative
    (lambda v: v * 0.5, lambda v: np.inf, "time_to_train_min_hi"),  # infinite
    (lambda v: v * 0.5, lambda v: np.nan, "time_to_train_min_hi"),  # half an interval
])
def test_robust_refuses_a_broken_interval_naming_its_column(tmp_path, capsys, lo, hi, column):
    path = _with_intervals(tmp_path, lo, hi)
    code = main(["analyze", str(path), "--robust", "--samples", "200", "--out",
                 str(tmp_path / "out"), "--no-report"])
    assert code == 3
    line = _one_line(capsys)
    assert f"column '{column}': 1 row with a broken interval" in line, line
    assert not (tmp_path / "out").exists()


def test_robust_draws_an_upper_bound_of_1e308_over_a_large_estimate(tmp_path):
    from gpurank.engine.robust import _check_intervals

    v = np.array([1e10, 0.5])
    lo = np.array([5e9, 0.25])
    hi = np.array([1e308, 1.0])
    _check_intervals("t", v, lo, hi, np.zeros(2, dtype=bool))  # both factors finite
    from gpurank.engine.errors import DataError

    with pytest.raises(DataError, match="spans more than a float64 can hold"):
        _check_intervals("t", np.array([0.5]), np.array([0.25]), np.array([1e308]),
                         np.zeros(1, dtype=bool))


# -- MLPerf logs whose run_stop precedes run_start ------------------------------------------------
def _mllog(key, t, value=None, **meta):
    import json

    return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": t, "event_type":
                                     "POINT_IN_TIME", "key": key, "value": value,
                                     "metadata": {"file": "train.py", "lineno": 1, **meta}})


def _log(start, stop):
    return "\n".join([_mllog("submission_benchmark", 1, "resnet"),
                      _mllog("global_batch_size", 2, 3200), _mllog("run_start", start),
                      _mllog("eval_accuracy", start + 10, 0.76, epoch_num=8),
                      _mllog("run_stop", stop, status="success")]) + "\n"


def test_a_log_whose_run_stop_precedes_run_start_is_an_invalid_run():
    from gpurank.engine.sources.mlperf.logs import parse_result_text

    run = parse_result_text(_log(1_700_000_000_000, 1_699_999_966_820), "result_3.txt")
    assert not run.valid and run.invalid_reason == "run_stop precedes run_start"
    assert run.minutes is None and run.e2e_throughput() is None
    assert any("precedes run_start" in p for p in run.problems)
    ok = parse_result_text(_log(1_700_000_000_000, 1_700_000_600_000), "result_0.txt")
    assert ok.valid and ok.minutes == pytest.approx(10.0)


def test_a_run_that_ends_before_it_starts_counts_as_failed_in_the_score(tmp_path):
    from gpurank.engine.sources.mlperf.logs import parse_result_log
    from gpurank.engine.sources.mlperf.scoring import score_runs

    minutes = [10.0, 11.0, 12.0, 13.0, 14.0]
    files = []
    for i, m in enumerate(minutes):
        start = 1_700_000_000_000
        stop = start + int(m * 60_000) if i != 2 else start - 553 * 60_000
        files.append(tmp_path / f"result_{i}.txt")
        files[-1].write_text(_log(start, stop))
    runs = [parse_result_log(f) for f in files]
    valid = [r.minutes for r in runs if r.valid]
    assert len(valid) == 4 and all(v > 0 for v in valid)
    score, why = score_runs(valid, len(runs), 5)
    # the failed run is one of the slowest: drop the fastest only, average 11, 13, 14
    assert why == "" and score == pytest.approx((11.0 + 13.0 + 14.0) / 3)
    assert "result_2.txt" in runs[2].path and runs[2].problems


# -- the smaller points ---------------------------------------------------------------------------
def test_a_replaced_output_that_cannot_be_removed_is_said_even_under_quiet(tmp_path, capsys,
                                                                            monkeypatch):
    from gpurank.engine import outputs
    from tables import config_table

    config_table(12, seed=2).to_parquet(tmp_path / "t.parquet")
    out = tmp_path / "out"
    argv = ["analyze", str(tmp_path / "t.parquet"), "--out", str(out), "--no-report"]
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""

    def refuse(path):  # a read-only folder (as root, chmod does not stop the removal)
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(outputs, "_remove", refuse)
    assert main([*argv, "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: could not remove the replaced output")
    assert main(argv) == 0
    captured = capsys.readouterr()
    notes = [ln for ln in (captured.err + captured.out).splitlines() if "could not remove" in ln]
    assert len(notes) == 1  # said once, not as a note and a warning


def test_figure_text_with_control_characters_warns_without_raw_bytes(recwarn):
    from gpurank.engine.report import plots

    with plots.figure_rc():
        fig = plots.tradeoff_figure(np.array([1.0, 2.0]), np.array([3.0, 4.0]),
                                    np.array([0, 1]), np.array([True, False]),
                                    xlabel="cost \x1b]0;owned\x07\r", ylabel="time \x9b31m")
        plots.to_png_data_uri(fig)
    texts = [str(w.message) for w in recwarn]
    assert not any(c in t for t in texts for c in "\x1b\r\x07\x9b"), texts
    assert plots._t("a\x1b[31mb\r") == "a\\x1b[31mb\\r"


def test_a_users_own_speedup_column_is_replaced_with_a_note():
    from gpurank.engine import Engine
    from tables import config_table

    t = config_table(12, seed=5).assign(speedup=7.0)
    res = Engine(backend="cpu").analyze(t)
    assert any("speedup" in n and "replaced them" in n for n in res.notes), res.notes


def test_two_catalog_rows_with_one_display_name_are_refused(tmp_path, capsys):
    from gpurank.engine.errors import DataError
    from gpurank.engine.sources.facts.catalog import merge_accelerator_catalog

    user = pd.DataFrame({"accelerator_id": ["zeta_a", "zeta_b"],
                         "display_name": ["Zeta", "Zeta"],
                         "bf16_dense_tflops": ["100", "200"], "mem_bw_tbps": ["1", "2"]})
    with pytest.raises(DataError, match="have one display_name 'zeta'"):
        merge_accelerator_catalog(user)
    clash = pd.DataFrame({"accelerator_id": ["zeta_c"], "display_name": ["NVIDIA H100 SXM5"]})
    from gpurank.engine.sources.facts.catalog import accelerator_catalog

    taken = accelerator_catalog()["display_name"].iloc[12]
    clash["display_name"] = taken
    with pytest.raises(DataError, match="have one display_name"):
        merge_accelerator_catalog(clash)


def test_every_simulated_row_lies_inside_the_domain():
    from gpurank.engine.sources.facts.catalog import accelerator_catalog
    from gpurank.engine.sources.model.domain import largest_node
    from gpurank.engine.sources.sweep.simulate import simulate

    t = simulate(3000, seed=4)
    acc = accelerator_catalog().set_index("accelerator_id", drop=False)
    A = acc.loc[t["accelerator_id"].astype(str)]
    reasons = domain_reasons(t, largest_node(A))
    assert (reasons == "").all(), pd.Series(reasons[reasons != ""]).value_counts().head()
