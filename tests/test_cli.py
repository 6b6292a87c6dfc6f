import json
import subprocess
import sys

import pytest

from gpurank.engine.cli import main
from tables import config_table


@pytest.fixture()
def table_csv(tmp_path):
    path = tmp_path / "configs.csv"
    config_table(80, seed=7).to_csv(path, index=False)
    return path


def test_analyze_writes_outputs_and_prints_summary(table_csv, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(out), "--top", "3",
                 "--criteria", "time_to_train_min:min:0.5,cost_usd:min:0.5"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Top 3 configurations" in printed and "groups, medians per group (KMeans" in printed
    assert "What drives throughput_per_accelerator" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert [c["column"] for c in summary["criteria"]] == ["time_to_train_min", "cost_usd"]
    assert (out / "ranking.parquet").exists()


def test_json_flag_prints_machine_readable_summary(table_csv, tmp_path, capsys):
    code = main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(tmp_path / "o"),
                 "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 80


def test_rank_depth_and_count_cap_clip_the_columns(table_csv, tmp_path, capsys):
    import pandas as pd

    full, lim = tmp_path / "full", tmp_path / "lim"
    assert main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(full),
                 "--quiet", "--no-report"]) == 0
    assert main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(lim), "--quiet",
                 "--no-report", "--rank-depth", "2", "--count-cap", "3"]) == 0
    a = pd.read_parquet(full / "ranking.parquet")
    b = pd.read_parquet(lim / "ranking.parquet")
    assert a["pareto_rank"].max() > 2 and a["domination_count"].max() > 3
    assert (b["pareto_rank"] == a["pareto_rank"].clip(upper=2)).all()
    assert (b["domination_count"] == a["domination_count"].clip(upper=3)).all()
    notes = json.loads((lim / "summary.json").read_text())["notes"]
    assert any("--rank-depth" in n for n in notes) and any("--count-cap" in n for n in notes)


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--criteria", "thruput:max"], 3, "criterion column 'thruput' is not in the table"),
        (["--criteria", "cost_usd:up"], 2, "unknown sense 'up'; allowed: min, max"),
        (["--criteria", "cost_usd:min:-2"], 2, "weight -2.0; weights must be finite and >= 0"),
        (["--criteria", "cost_usd:min:0,time_to_train_min:min:0"], 2, "weights are all zero"),
        (["--clusters", "500"], 2, "--clusters is 500, more than the rows that can be clustered"),
        (["--target", "speed"], 3, "target column 'speed' is not in the table"),
        (["--backend", "gpu"], 4, "backend='gpu' was asked for but"),
    ],
)
def test_errors_are_one_line_with_exit_codes(table_csv, tmp_path, capsys, args, code, message):
    rc = main(["analyze", str(table_csv), "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert rc == code
    assert message in err
    assert err.startswith("gpurank: error: ") and err.count("\n") == 1
    assert "Traceback" not in err
    assert not (tmp_path / "o" / "ranking.parquet").exists()


def test_usage_errors_from_argparse_are_one_line_with_exit_2(capsys):
    assert main(["analyze"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpurank: error: the following arguments are required: table")
    assert err.count("\n") == 1  # no usage block
    assert main(["demo", "--n", "0"]) == 2
    assert capsys.readouterr().err == "gpurank: error: --n must be an integer >= 1; got 0\n"


def test_missing_file_exits_3(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "none.parquet"), "--backend", "cpu"]) == 3
    assert "does not exist" in capsys.readouterr().err


def test_verbose_shows_traceback(tmp_path, capsys):
    rc = main(["--verbose", "analyze", str(tmp_path / "none.parquet"), "--backend", "cpu"])
    assert rc == 3
    assert "Traceback" in capsys.readouterr().err


def test_python_dash_m_entry_point(table_csv, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gpurank.engine", "analyze", str(table_csv), "--backend", "cpu",
         "--out", str(tmp_path / "o"), "--quiet"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert (tmp_path / "o" / "summary.json").exists()


def test_report_command_rebuilds_report(table_csv, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["analyze", str(table_csv), "--backend", "cpu", "--out", str(out), "--quiet",
                 "--no-report"]) == 0
    assert not (out / "report.html").exists()
    assert main(["report", str(out / "ranking.parquet")]) == 0
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    (out / "summary.json").unlink()
    capsys.readouterr()
    assert main(["report", str(out / "ranking.parquet")]) == 3
    assert "summary.json" in capsys.readouterr().err


def test_demo_runs_the_whole_analysis_on_a_simulated_sweep(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--n", "3000", "--seed", "1", "--backend", "cpu", "--out", str(out),
                 "--json", "--no-report"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 3000
    assert summary["clusters"]["k"] == 5 and len(summary["top"]) == 10
    assert [c["column"] for c in summary["criteria"]][-1] == "cost_usd"
    assert (out / "ranking.parquet").exists()


def test_console_prints_text_with_brackets_verbatim():
    """Notes, fallbacks and table cells are text, not rich markup: "[gpu]" survives."""
    from rich.console import Console

    from gpurank.engine.console import print_summary

    console = Console(record=True, width=200)
    summary = {
        "rows": 2, "backend": "cpu", "pareto_front_size": 1,
        "criteria": [{"column": "cost_usd", "sense": "min", "weight": 1.0}],
        "top": [{"rank": 1, "accelerator": "[x] accel", "cost_usd": 1.5}],
        "notes": ["install 'gpurank[gpu]' for the GPU path"],
        "fallbacks": ["CuPy is not installed (pip install 'gpurank[gpu]')"],
    }
    print_summary(summary, console)
    text = console.export_text()
    assert "note: install 'gpurank[gpu]' for the GPU path" in text
    assert "backend: CuPy is not installed (pip install 'gpurank[gpu]')" in text
    assert "[x] accel" in text


def test_dask_without_the_extra_is_one_line_exit_4(tmp_path, capsys, monkeypatch):
    import sys

    src = tmp_path / "t.parquet"
    config_table(20, seed=1).to_parquet(src)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    assert main(["analyze", str(src), "--dask", "local:1", "--out", str(tmp_path / "o")]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'gpurank[dask]'" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()
