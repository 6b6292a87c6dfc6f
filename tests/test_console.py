"""Terminal output: tables fit the width, data text cannot drive the terminal."""

import io
import json
import re
import subprocess
import sys

import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.console import TOP_DROP_ORDER, fit_columns, make_console, print_summary
from gpurank.engine.formatting import fixed
from gpurank.engine.sources.sweep.simulate import simulate
from gpurank.engine.summary import build_summary

WIDTHS = (80, 120, 160)
#: Sets the window title, clears the screen, a C1 CSI, a right-to-left override, backspace,
#: carriage return, an isolate and a line separator.
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b1m\u202e\b\rX\u2066\u2028"
#: Characters that must never reach the terminal from the data.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                    "\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def summary():
    """The summary of a small analysis of a simulated sweep, with a prediction basis."""
    result = Engine(backend="cpu").analyze(simulate(3000, seed=0), n_estimators=10,
                                           clusters=4)
    s = json.loads(json.dumps(build_summary(result)))
    for i, r in enumerate(s["top"]):  # as the simulator's tables carry it
        r["prediction_basis"] = "fitted" if i % 3 else "borrowed:H100"
    return s


def render(summary, width, *, terminal=False):
    buf = io.StringIO()
    console = make_console(file=buf, width=width, force_terminal=terminal)
    print_summary(summary, console)
    return buf.getvalue()


@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_fits_the_width(summary, width):
    text = render(summary, width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    for r in summary["top"]:  # every score is shown whole, never folded
        assert fixed(r["topsis_score"], 4) in text
    for r in summary["top"]:  # and the prediction basis, in the table or under it
        assert r["prediction_basis"] in text
    for c in summary["criteria"]:
        short = {"time_to_train_min": "time", "throughput_per_accelerator": "tput/accel",
                 "scaling_efficiency": "efficiency", "cost_usd": "cost"}[c["column"]]
        assert short in text
    for p in summary["clusters"]["profiles"]:
        assert p["label"].split(",")[0].split()[0] in text


def test_columns_are_left_out_in_the_stated_order(summary):
    top = summary["top"]
    cols = [c for c in top[0] if c not in {"n_nodes", "network", "interconnect", "host_cpu"}]
    keep = ("rank", "accelerator", "n_accelerators", "topsis_score") + tuple(
        c["column"] for c in summary["criteria"])
    previous = None
    for width in range(200, 70, -5):
        widths, dropped = fit_columns(top, cols, width, drop_order=TOP_DROP_ORDER, keep=keep)
        assert set(widths) | set(dropped) == set(cols) and not set(widths) & set(dropped)
        assert not set(dropped) & set(keep)
        named = [c for c in TOP_DROP_ORDER if c in dropped]
        assert named == [c for c in dropped if c in TOP_DROP_ORDER]  # in the stated order
        if previous is not None:
            assert dropped[:len(previous)] == previous  # narrower: the same ones, then more
        previous = dropped
    assert previous  # at 75 columns something had to go
    text = render(summary, 80)
    assert "(left out to fit 80 columns: dominated by, cluster" in text


def test_wide_console_shows_every_column(summary):
    text = render(summary, 250)
    assert "left out" not in text
    assert "dominated" in text and "basis" in text and "borrowed:H100" in text


def hostile(summary):
    s = json.loads(json.dumps(summary))
    s["backend"] = "cpu" + EVIL
    for c in s["criteria"]:
        c["column"] = c["column"] + EVIL
    for r in s["top"]:
        for k in ("accelerator", "provider", "prediction_basis"):
            r[k] = f"{r[k]}{EVIL}"
        r[f"own column{EVIL}"] = "text" + EVIL
    for p in s["clusters"]["profiles"]:
        p["label"] = p["label"] + EVIL
    s["clusters"]["features"] = [f + EVIL for f in s["clusters"]["features"]]
    s["importance"]["target"] += EVIL
    for f in s["importance"]["features"]:
        f["feature"] += EVIL
    s["notes"].append("note" + EVIL)
    s["fallbacks"].append("fallback" + EVIL)
    s["timings_s"]["step" + EVIL] = 1.0
    s["robust"] = {"k": 3, "samples": 100, "candidates": 9, "pruned": 1, "top": [{
        "rank": 1, "accelerator": "acc" + EVIL, "n_accelerators": 8, "provider": "p" + EVIL,
        "p_topk": 0.5, "p_topk_se": 0.01, "p_top1": 0.2, "p_top1_se": 0.01,
        "expected_rank": 2.0, "expected_rank_se": 0.1, "central_weights": {"a" + EVIL: 0.5}}]}
    return s


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("terminal", [False, True])
def test_hostile_text_in_every_column_is_neutralized(summary, width, terminal):
    text = render(hostile(summary), width, terminal=terminal)
    if terminal:  # rich's own styling escapes are the only ones: no title, no clear screen
        assert "\x1b]" not in text and "\x1b[2J" not in text
        text = re.sub("\x1b\\[[0-9;]*m", "", text)
    assert not UNSAFE.search(text), repr(UNSAFE.search(text))
    assert "\\x1b]0;pwned\\x07" in text.replace("\n", "") or "\\x1b]0;" in text
    for name in ("note", "fallback"):
        assert f"{name}\\x1b]0;pwned\\x07\\x1b[2J\\x9b1m\\u202e\\x08\\x0dX\\u2066\\u2028" in text


def test_markup_and_emoji_codes_are_text(summary):
    s = json.loads(json.dumps(summary))
    s["top"][0]["accelerator"] = "[bold red]H100[/] :smile:"
    s["notes"].append("install 'gpurank[gpu]' :warning:")
    text = render(s, 250)
    assert "[bold red]H100[/]" in text and ":smile:" in text
    assert "install 'gpurank[gpu]' :warning:" in text


def test_width_comes_from_columns_else_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "97")
    assert make_console(file=io.StringIO()).width == 97
    monkeypatch.delenv("COLUMNS")
    assert make_console(file=io.StringIO()).width == 80


def test_cli_errors_and_arguments_are_neutralized(tmp_path, capsys):
    missing = tmp_path / f"table{EVIL}.csv"
    assert main(["analyze", str(missing), "--backend", "cpu", "--out", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not UNSAFE.search(err.rstrip("\n"))
    assert "\\x1b]0;pwned" in err
    # argparse's own messages name the argument: one line, exit 2
    assert main(["analyze", "t.csv", f"--bogus{EVIL}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not UNSAFE.search(err.rstrip("\n"))
    assert "\\x1b]0;pwned" in err
    assert main(["analyze", "t.csv", "--backend", f"gpu{EVIL}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not UNSAFE.search(err.rstrip("\n"))


def test_cli_prints_a_hostile_table_safely(tmp_path):
    """End to end: a table whose text columns hold escape sequences, printed by the CLI."""
    import pandas as pd
    from tables import config_table

    t = config_table(60, seed=2)
    t["accelerator"] = t["accelerator"] + EVIL
    t["host_cpu"] = EVIL
    path = tmp_path / "t.parquet"
    t.to_parquet(path)
    proc = subprocess.run([sys.executable, "-m", "gpurank.engine", "analyze", str(path),
                           "--backend", "cpu", "--out", str(tmp_path / "o"), "--clusters", "2",
                           "--no-report"], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    assert not UNSAFE.search(proc.stdout.replace("\n", "")), repr(proc.stdout[:500])
    assert "\\x1b]0;pwned" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 120
    assert pd.read_parquet(tmp_path / "o" / "ranking.parquet")["accelerator"].str.contains(
        "\x1b").all()  # the data itself is kept as it was
