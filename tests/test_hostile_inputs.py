"""Hostile input, generated over every option of ``analyze`` and every column of a table.

Whatever a user or a file feeds in, gpurank either runs or stops with one line on stderr
(exit 2 for a bad option, 3 for bad data), never a traceback (exit 1), never a partial output.
The options come from the parser itself, so a new option is covered the day it is added.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import Engine, GpurankError
from gpurank.engine.cli import build_parser, main
from tables import config_table

#: Values no option of analyze accepts as they are (each option has its own meaning; the
#: test only requires a clean refusal or a clean run).
HOSTILE_VALUES = ["", " ", "-1", "0", "1e400", "nan", "inf", "-inf", str(2**64), "1.5",
                  "\x1b]0;owned\x07", "a" * 5000, "x:y:z:w", "{", "'", "\u202e", "None"]


def _analyze_options():
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    parser = sub.choices["analyze"]
    for action in parser._actions:
        if not action.option_strings or action.nargs == 0 or action.dest in ("help",):
            continue
        yield action.option_strings[-1]


OPTIONS = list(_analyze_options())


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "t.parquet"
    config_table(30, seed=2).to_parquet(path)
    return path


def _one_line_or_success(code, err, out_dir):
    assert code in (0, 2, 3, 4), (code, err)
    assert "Traceback" not in err
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("gpurank: error: "), err
        assert "\x1b" not in err and "\u202e" not in err  # control characters neutralized
        assert not out_dir.exists()  # nothing written when refused


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=range(len(HOSTILE_VALUES)))
def test_every_option_refuses_hostile_values_in_one_line(option, value, table, tmp_path,
                                                         capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --out value lands here, never in the checkout
    out = tmp_path / "out"
    argv = ["analyze", str(table), "--out", str(out), "--quiet", "--no-report", option, value]
    if option == "--out":
        argv = ["analyze", str(table), "--quiet", "--no-report", "--out", value]
        out = tmp_path / "never"
        before = set(tmp_path.iterdir())
    if option == "--dask":
        argv += ["--backend", "cpu"]
    if option in ("--weights-range", "--samples"):
        argv += ["--robust"]
    code = main(argv)
    err = capsys.readouterr().err
    _one_line_or_success(code, err, out)
    if option == "--out" and code != 0:
        assert set(tmp_path.iterdir()) == before  # nothing written when refused
    if code != 0 and option != "--out":
        flag_named = option in err or option.lstrip("-").replace("-", "_") in err
        assert flag_named or "table" in err, f"{option}: the message does not name it: {err}"


HOSTILE_COLUMNS = {
    "all_missing": lambda s: pd.Series([None] * len(s), dtype=object),
    "text_in_numbers": lambda s: s.astype(object).where(s.index % 3 != 0, "fast"),
    "negative": lambda s: -s if s.dtype.kind in "if" else s,
    "infinite": lambda s: s.where(s.index % 4 != 1, np.inf) if s.dtype.kind == "f" else s,
    "huge": lambda s: s * 1e300 if s.dtype.kind == "f" else s,
    "control_chars": lambda s: s.astype(str) + "\x1b[2J\x1b]0;t\x07" if s.dtype == object else s,
    "empty_strings": lambda s: pd.Series([""] * len(s)) if s.dtype == object else s,
    "mixed_types": lambda s: pd.Series([1, "a", 2.5, None] * (len(s) // 4) +
                                       [1] * (len(s) % 4), dtype=object),
}


def _column_cases():
    base = config_table(40, seed=3)
    for column in base.columns:
        for kind, make in HOSTILE_COLUMNS.items():
            changed = pd.Series(make(base[column]).to_numpy(), dtype=object)
            if not changed.equals(base[column].astype(object)):
                yield pytest.param(column, kind, id=f"{column}-{kind}")


@pytest.mark.parametrize("column, kind", list(_column_cases()))
def test_every_column_survives_hostile_values(column, kind):
    df = config_table(40, seed=3)
    df[column] = HOSTILE_COLUMNS[kind](df[column]).to_numpy()
    for drop in (False, True):
        try:
            r = Engine(backend="cpu").analyze(df, n_estimators=3, k_range=(2, 3),
                                              drop_invalid=drop)
        except GpurankError as exc:
            text = str(exc)
            assert "\n" not in text and len(text) < 2000, text
            if drop or "--drop-invalid" not in text:
                break
            continue
        # A run that succeeds ranks finite criteria only, and says what it dropped.
        t = r.table
        assert np.isfinite(t["topsis_score"]).all()
        assert len(t) <= len(df)
        if len(t) < len(df):
            assert any("dropped" in n or "left out" in n for n in r.notes), r.notes
        break


@pytest.mark.parametrize("value", [-4.0, 0.0])
def test_non_positive_times_are_refused_and_named(value):
    df = config_table(40, seed=3)
    df.loc[7, "time_to_train_min"] = value
    with pytest.raises(GpurankError, match=r"time_to_train_min must be > 0 \(first: row 7 "
                                           rf"holds {value:g}\)"):
        Engine(backend="cpu").analyze(df, n_estimators=5)
    r = Engine(backend="cpu").analyze(df, n_estimators=5, drop_invalid=True)
    assert len(r.table) == 39
    assert any("time_to_train_min must be > 0" in n for n in r.notes)


def test_negative_counts_are_named_not_called_missing():
    df = config_table(40, seed=3)
    df.loc[2, "n_accelerators"] = -8
    with pytest.raises(GpurankError) as info:
        Engine(backend="cpu").analyze(df, n_estimators=5)
    assert "n_accelerators must be a whole number >= 0 (first: row 2 holds -8)" in str(info.value)
    assert "missing" not in str(info.value)


def test_duplicate_column_names_are_refused():
    df = config_table(20, seed=1)
    df = pd.concat([df, df[["throughput"]]], axis=1)
    with pytest.raises(GpurankError, match="column 'throughput' appears 2 times"):
        Engine(backend="cpu").analyze(df, n_estimators=5)


def test_result_columns_in_the_input_are_replaced_with_a_note():
    df = config_table(30, seed=1).assign(rank=99, cluster="mine")
    r = Engine(backend="cpu").analyze(df, n_estimators=5, k_range=(2, 3))
    assert sorted(r.table["rank"]) == list(range(1, 31))
    assert any("rank" in n and "replaced" in n for n in r.notes)


def test_complete_rows_survive_a_bad_reference_row():
    # The smallest configuration of a model is the bad row: only that row is dropped.
    df = config_table(60, seed=5)
    acc = df["accelerator"].iloc[0]
    small = df.loc[df["accelerator"] == acc, "n_accelerators"].idxmin()
    df.loc[small, "time_to_train_min"] = np.nan
    r = Engine(backend="cpu").analyze(df, n_estimators=5, drop_invalid=True)
    assert len(r.table) == 59
    assert r.preparation.invalid == {"time_to_train_min is missing": 1}
