"""Result-log parsing: every line format, validity rules and the defects a log can have."""

from pathlib import Path

import pytest

from gpurank.engine.sources.mlperf.logs import parse_result_log, parse_result_text

FIX = Path(__file__).parent / "fixtures" / "mlperf"
REPOS = FIX / "repos"


def test_mllog_run_facts():
    run = parse_result_log(REPOS / "training_results_v4.0/NVIDIA/results/dgxh100_ngc24.04_mxnet/resnet/result_0.txt")
    assert run.log_format == "mllog"
    assert run.valid and run.status == "success" and not run.problems
    assert run.minutes == pytest.approx(10.0)
    assert run.global_batch_size == 3200
    assert run.samples_per_epoch == 1281167
    assert run.epochs == 8  # epoch_num of the last eval_accuracy before run_stop
    assert run.final_accuracy == pytest.approx(0.76)
    # two epochs of 10 s and 20 s: median of 128116.7 and 64058.35 samples/s
    assert run.train_rate == pytest.approx((1281167 / 10 + 1281167 / 20) / 2)
    assert run.train_rate_source == "epoch_start/epoch_stop"
    assert run.e2e_throughput() == pytest.approx(8 * 1281167 / 600)


def test_mllog_aborted_run_is_invalid():
    run = parse_result_log(REPOS / "training_results_v4.0/Acme/results/rtx4090x2/resnet/result_1.txt")
    assert not run.valid and run.status == "aborted"
    assert "aborted" in run.invalid_reason
    assert run.problems == []  # a failed run is not a file defect


def test_mll_v06_format():
    run = parse_result_log(REPOS / "v0.6/NVIDIA/results/dgx1_ngc19.05_mxnet/resnet/result_0.txt")
    assert run.log_format == "mll"
    assert run.valid and run.minutes == pytest.approx(115.0)
    assert run.global_batch_size == 1664 and run.epochs == 60
    assert run.train_rate == pytest.approx(1281167 / 100)


def test_dated_v06_alibaba_format():
    run = parse_result_log(REPOS / "v0.6/Alibaba/results/sinian/resnet/result_1.txt")
    assert run.log_format == "dated"
    assert run.problems == []  # "Total runtime: ..." is a normal line
    # 4 run_start lines: the last one before run_stop counts
    assert run.minutes == pytest.approx(1460 / 60)
    assert run.final_accuracy == pytest.approx(0.7598)  # "75.98000%"
    assert run.valid  # no status in this format: accuracy >= 0.759
    assert run.epochs == 79 and run.global_batch_size is None
    assert run.train_rate is None


def test_mlp05_format_epochs_are_zero_based():
    d = REPOS / "v0.5/v0.5.0/google/cloud_v3.8/resnet-tpuv3-8/results/tpu/resnet"
    run = parse_result_log(d / "result_0.txt")
    assert run.log_format == "mlp05"
    assert run.problems == []  # "opt_learning_rate : {...}" (space before the colon) parses
    assert run.valid and run.minutes == pytest.approx(180.0)
    assert run.epochs == 62  # logged epoch 61, 0-based
    assert run.eval_target == pytest.approx(0.749)
    assert run.global_batch_size is None  # v0.5 logs no global batch size
    failed = parse_result_log(d / "result_4.txt")
    assert not failed.valid and "below target" in failed.invalid_reason


def test_prefixed_lines_and_multiple_run_starts():
    text = "\n".join(
        [
            '[1,0]<stdout>::::MLLOG {"time_ms": 1000, "key": "run_start", "value": null, "metadata": {}}',
            '[1,1]<stdout>::::MLLOG {"time_ms": 2000, "key": "run_start", "value": null, "metadata": {}}',
            '[1,0]<stdout>::::MLLOG {"time_ms": 62000, "key": "run_stop", "value": null, "metadata": {"status": "success"}}',
            '[1,0]<stdout>::::MLLOG {"time_ms": 99000, "key": "run_start", "value": null, "metadata": {}}',
        ]
    )
    run = parse_result_text(text)
    assert run.minutes == pytest.approx(1.0)  # last run_start before the first run_stop
    assert run.valid


def test_no_run_stop_is_a_problem():
    run = parse_result_log(FIX / "bad/v3.9/Broken/results/truncated/resnet/result_0.txt")
    assert not run.valid and run.stop_ms is None
    assert run.problems == ["no run_stop (log incomplete or run killed)"]


def test_truncated_line_is_reported_with_line_number():
    run = parse_result_log(FIX / "bad/v3.9/Broken/results/truncated/resnet/result_1.txt")
    assert run.valid  # the rest of the log is fine
    assert len(run.problems) == 1 and run.problems[0].startswith("line 14: truncated")


def test_truncated_needed_line():
    text = ':::MLLOG {"time_ms": 1000, "key": "run_start", "value": null, "metadata": {}}\n:::MLLOG {"time_ms": 5, "key": "run_st'
    run = parse_result_text(text)
    assert "line 2: truncated or malformed log line" in run.problems
    assert "no run_stop (log incomplete or run killed)" in run.problems


def test_not_a_log():
    run = parse_result_text("hello\nworld\n", "x.txt")
    assert not run.valid and run.problems == ["no MLPerf log lines recognised"]


def test_unreadable_file(tmp_path):
    run = parse_result_log(tmp_path / "missing.txt")
    assert not run.valid and run.problems[0].startswith("result log cannot be read")


def test_block_rule_subtracts_eval_time():
    lines = [
        (0, "run_start", {}),
        (0, "block_start", {"first_epoch_num": 1, "epoch_count": 2}),
        (8000, "eval_start", {}),
        (10000, "eval_stop", {}),
        (10000, "eval_accuracy", {"epoch_num": 2}),
        (10000, "block_stop", {"first_epoch_num": 3}),  # numbered differently: still closes the block
        (10001, "run_stop", {"status": "success"}),
    ]
    import json

    text = "\n".join(
        ":::MLLOG " + json.dumps({"time_ms": t, "key": k, "value": 0.8 if k == "eval_accuracy" else None, "metadata": m})
        for t, k, m in lines
    )
    run = parse_result_text(text)
    assert run.train_rate == pytest.approx(2 * 1281167 / 8.0)
    assert run.train_rate_source == "block_start/block_stop minus eval"
