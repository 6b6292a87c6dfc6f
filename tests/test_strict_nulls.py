"""Missing values on the device: cuDF holds them as nulls, a comparison with a null gives a
null, and a boolean mask with a null cannot become a device array. The stand-in models that
(engine/backend/strict_frames.py); every entry point runs the tables that would put a null
into a mask (a numeric column with a missing and an out-of-domain value, a number column
read as text with a bad and an empty cell) equal to the CPU."""

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import Engine
from gpurank.engine.backend.strict_frames import xdf
from gpurank.engine.errors import GpurankError
from gpurank.engine.sources.model.outcomes import predicted_outcomes
from tables import config_table

TOPSIS_ATOL = 1e-12



# -- the stand-in models cuDF's nulls ---------------------------------------------------


def test_from_pandas_turns_nan_into_a_null_that_comparisons_and_logic_keep():
    f = xdf.from_pandas(pd.DataFrame({"t": [1.0, np.nan, -2.0]}))
    t = f["t"]
    assert [bool(v) for v in t.isna().to_pandas()] == [False, True, False]
    below = t < 0
    assert bool(below.isna().iloc[1]) and not bool(below.iloc[2] is pd.NA)
    # libcudf's logic: a null operand gives a null, even where pandas' gives False.
    present = t.notna()
    for kept in (present & below, below | present, ~below, present ^ below):
        assert bool(kept.isna().iloc[1]), kept
    with pytest.raises(ValueError, match="Column must have no nulls"):
        below.to_cupy()
    with pytest.raises(ValueError, match="Column must have no nulls"):
        below.values
    np.testing.assert_array_equal(below.to_cupy(na_value=False).get(), [False, False, True])
    np.testing.assert_array_equal(below.fillna(False).to_cupy().get(), [False, False, True])
    # Text compares the same way: a missing cell gives a null, not False.
    text = xdf.from_pandas(pd.Series(["a", None, ""]))
    assert bool((text != "").isna().iloc[1]) and bool((text.astype("str") == "a").isna().iloc[1])
    # A float column with nulls still gives NaN, as cuDF's.
    assert np.isnan(t.to_cupy().get()[1]) and np.isnan(t.values.get()[1])


def test_a_mask_with_a_null_is_refused_where_cudf_would_drop_the_row():
    f = xdf.from_pandas(pd.DataFrame({"t": [1.0, np.nan, -2.0], "k": ["a", "b", "c"]}))
    m = f["t"] > 0
    for select in (lambda: f.loc[m], lambda: f[m], lambda: f["k"].where(m),
                   lambda: f.iloc[m]):
        with pytest.raises(ValueError, match="missing value"):
            select()
    assert len(f.loc[m.fillna(False)]) == 1


def test_to_numeric_coerces_bad_text_to_a_null():
    s = xdf.from_pandas(pd.Series(["1.5", "x", None, "2"]))
    got = xdf.to_numeric(s, errors="coerce")
    assert [bool(v) for v in got.isna().to_pandas()] == [False, True, True, False]
    assert got.dtype.kind == "f"


# -- every entry point, each trigger ----------------------------------------------------


def _missing_and_negative_time(df):
    df["time_to_train_min"] = df["time_to_train_min"].astype(float)
    df.loc[2, "time_to_train_min"] = np.nan
    df.loc[5, "time_to_train_min"] = -2.5
    return df


def _missing_and_fractional_count(df):
    df["n_accelerators"] = df["n_accelerators"].astype(float)
    df.loc[3, "n_accelerators"] = np.nan
    df.loc[6, "n_accelerators"] = 2.5
    return df


def _number_read_as_text(df):
    text = df["time_to_train_min"].map(lambda v: f"{v:.6g}").astype(object)
    text[4] = "about 3"
    text[8] = ""
    df["time_to_train_min"] = text
    return df


TRIGGERS = {"missing and negative time": _missing_and_negative_time,
            "missing and fractional count": _missing_and_fractional_count,
            "number column read as text": _number_read_as_text}


def _table(trigger, n=30, seed=4):
    return TRIGGERS[trigger](config_table(n, seed=seed))


def _both(call):
    """``call(engine)`` on the stand-in and on the CPU: both results, or both errors (the
    same class and message)."""
    out = []
    for backend in ("strict", "cpu"):
        try:
            out.append(("ok", call(backend)))
        except GpurankError as exc:
            out.append(("error", (type(exc).__name__, str(exc))))
    (gk, g), (ck, c) = out
    assert gk == ck, (g, c)
    if gk == "error":
        assert g == c
    return gk, g, c


@pytest.fixture(scope="module")
def engines(strict):
    return {"strict": Engine(backend=strict), "cpu": Engine(backend="cpu")}


@pytest.mark.parametrize("trigger", TRIGGERS)
@pytest.mark.parametrize("drop_invalid", [True, False])
def test_analyze_matches_cpu(engines, trigger, drop_invalid):
    df = _table(trigger)
    kind, g, c = _both(lambda b: engines[b].analyze(df.copy(), n_estimators=5, top=3,
                                                    drop_invalid=drop_invalid))
    if drop_invalid:
        assert kind == "ok"
    else:
        assert kind == "error" and "rows are invalid" in g[1], g
        return
    for col in ("pareto_rank", "domination_count", "rank", "cluster"):
        np.testing.assert_array_equal(g.table[col].to_numpy(), c.table[col].to_numpy(), col)
    np.testing.assert_allclose(g.table["topsis_score"], c.table["topsis_score"], rtol=0,
                               atol=TOPSIS_ATOL)
    assert g.notes == c.notes
    assert any("invalid rows dropped" in note for note in c.notes), c.notes
    pd.testing.assert_frame_equal(g.clusters.profiles, c.clusters.profiles)
    pd.testing.assert_frame_equal(g.importance.table, c.importance.table)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_rank_matches_cpu(engines, trigger):
    df = _table(trigger)
    kind, g, c = _both(lambda b: engines[b].rank(df.copy()))
    if kind == "ok":
        np.testing.assert_array_equal(g.pareto_rank, c.pareto_rank)
        np.testing.assert_array_equal(g.rank, c.rank)
        np.testing.assert_allclose(g.topsis_score, c.topsis_score, rtol=0, atol=TOPSIS_ATOL)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_cluster_matches_cpu(engines, trigger):
    df = _table(trigger)
    kind, g, c = _both(lambda b: engines[b].cluster(df.copy(), k=3))
    if kind == "ok":
        np.testing.assert_array_equal(g.labels, c.labels)
        pd.testing.assert_frame_equal(g.profiles, c.profiles)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_importance_matches_cpu(engines, trigger):
    df = _table(trigger)
    kind, g, c = _both(lambda b: engines[b].importance(df.copy(), n_estimators=5))
    if kind == "ok":
        pd.testing.assert_frame_equal(g.table, c.table)


@pytest.mark.parametrize("trigger", ["missing and fractional count",
                                     "missing and negative nodes"])
def test_predicted_outcomes_analyzed_match_cpu(engines, trigger):
    """``analyze --predict``: outcomes predicted on the host, then analyzed on each backend;
    a configuration count with a missing and an out-of-domain value."""
    df = config_table(30, seed=5).drop(columns=["time_to_train_min", "throughput"])
    col = "n_accelerators" if trigger == "missing and fractional count" else "n_nodes"
    df[col] = df[col].astype(float)
    df.loc[3, col] = np.nan
    df.loc[6, col] = 2.5 if col == "n_accelerators" else -1.0
    table, _ = predicted_outcomes(df)
    kind, g, c = _both(lambda b: engines[b].analyze(table.copy(), n_estimators=5, top=3,
                                                    drop_invalid=True))
    assert kind == "ok", g
    for name in ("pareto_rank", "rank", "cluster"):
        np.testing.assert_array_equal(g.table[name].to_numpy(), c.table[name].to_numpy())
    assert g.notes == c.notes
