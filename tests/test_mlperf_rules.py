"""Scoring rules and reference convergence points from mlperf-logging; log semantics table."""

import inspect

import pytest
from gpurank.engine.sources.mlperf.reader import score_runs
from gpurank.engine.sources.facts.mlperf_rules import (
    DROPPED_EACH_END,
    benchmark_info,
    benchmark_table,
    convert_count,
    known_benchmarks,
    reference_convergence,
    scoring_rule,
)


def test_rules_come_from_the_package():
    from mlperf_logging.benchmark_meta import get_result_file_counts

    counts = get_result_file_counts("training")
    assert set(known_benchmarks()) == set(counts)
    for name, n in counts.items():
        rule = scoring_rule(name)
        assert rule.required_runs == n and rule.source.startswith("mlperf-logging ")
    assert scoring_rule("unet3d").dropped_each_end == 4
    assert scoring_rule("bert").dropped_each_end == 1
    # the package knows benchmarks of rounds after the shared data (renames and new ones)
    assert {"retinanet", "rgat", "llama31_405b"} <= set(counts)
    assert scoring_rule("no_such_benchmark") is None


def test_dropped_runs_rule_is_the_summarizers():
    """DROPPED_EACH_END restates a rule mlperf-logging keeps in code; fail when it changes."""
    from mlperf_logging.rcp_checker import rcp_checker
    from mlperf_logging.result_summarizer import result_summarizer

    src = inspect.getsource(result_summarizer._compute_strong_score_standalone)
    assert 'max_dropped_scores = 4 if benchmark == "unet3d" else 1' in src
    assert DROPPED_EACH_END == {"unet3d": 4}
    rcp = inspect.getsource(rcp_checker.RCP_Checker.compute_rcp_stats)
    assert "samples_rejected = 4 if record_contents['Benchmark'] == 'unet3d' else 1" in rcp


def test_olympic_score_with_k_dropped_and_failed_runs():
    times = [float(t) for t in range(1, 41)]
    # 40 valid runs, k = 4: the middle 32
    assert score_runs(times, 40, 40, 4)[0] == pytest.approx(sum(range(5, 37)) / 32)
    # 2 failed runs count as the slowest: drop 4 fastest, 2 slowest of the 38 valid
    assert score_runs(times[:38], 40, 40, 4)[0] == pytest.approx(sum(range(5, 37)) / 32)
    assert score_runs(times[:35], 40, 40, 4) == (None, "5 of 40 runs failed (at most 4 allowed)")
    # gpt3: 3 runs, k = 1: the median run
    assert score_runs([3.0, 1.0, 2.0], 3, 3, 1)[0] == 2.0
    assert score_runs([3.0, 1.0], 3, 3, 1)[0] == 3.0  # one failed: the slower valid run
    assert score_runs([1.0] * 9, 9, 10, 1) == (None, "only 9 of 10 required runs present")


def test_reference_convergence_points():
    bert = reference_convergence("bert", "v4.0")
    assert bert["unit"].eq("samples").all() and bert["ruleset"].eq("4.0.0").all()
    at_256 = bert.loc[bert["global_batch"] == 256, "mean"].item()
    assert at_256 == pytest.approx(2549219.556, rel=1e-6)
    resnet = reference_convergence("resnet", "v3.1")
    assert resnet["unit"].eq("epochs").all()
    assert resnet.loc[resnet["global_batch"] == 1632, "mean"].item() == pytest.approx(35.0)
    # unet3d counted epochs in 3.0 and samples from 3.1 on; a round without its own table
    # uses the nearest earlier one
    assert reference_convergence("unet3d", "v3.0")["unit"].eq("epochs").all()
    assert reference_convergence("unet3d", "v3.1")["unit"].eq("samples").all()
    assert reference_convergence("maskrcnn", "v4.0")["ruleset"].eq("3.1.0").all()
    sd = reference_convergence("stable_diffusion", "v3.1")
    assert sd["unit"].eq("steps").all() and reference_convergence(
        "stable_diffusion", "v4.0")["unit"].eq("samples").all()
    lora = reference_convergence("llama2_70b_lora")
    assert lora["unit"].eq("samples").all() and len(lora) >= 4
    assert reference_convergence("no_such_benchmark").empty


def test_benchmark_table_is_complete_and_sourced():
    t = benchmark_table()
    assert t["benchmark"].is_unique and t["source"].str.len().gt(0).all()
    for name in t["benchmark"]:
        info = benchmark_info(name)
        assert info.quality_targets and info.throughput_unit.endswith("/s")
        assert scoring_rule(name) is not None, name
    sd = benchmark_info("stable_diffusion")
    assert sd.passes({"FID": 88.0, "CLIP": 0.16}) and not sd.passes({"FID": 91.0, "CLIP": 0.2})
    assert sd.passes({"FID": 80.0}) is None
    assert benchmark_info("no_such_benchmark") is None


def test_convert_count():
    c = convert_count(2.0, "epochs", samples_per_epoch=100)
    nan = pytest.approx(float("nan"), nan_ok=True)
    assert c == {"epochs": 2.0, "samples": 200.0, "tokens": nan}
    c = convert_count(4096.0, "tokens", tokens_per_sample=2048)
    assert c["samples"] == 2.0 and c["tokens"] == 4096.0
    assert convert_count(10.0, "steps", global_batch=512)["samples"] == 5120.0
