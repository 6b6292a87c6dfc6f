"""One parameter template: every constraint the engine declares, refused in the API's words
and in the command line's, and nothing in the engine left writing a second template."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pathlib
import pkgutil

import pandas as pd
import pytest

import gpurank.engine as engine
from gpurank.engine import cli
from gpurank.engine.params import (
    Interval,
    Items,
    Mapping,
    Options,
    Pairs,
    ParamError,
    allowed,
    check_param,
    refused_value,
    shown,
)
from gpurank.engine.sources.model.workload import resnet50
from tables import config_table

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _owners():
    """Every class and function of the engine that declares ``parameter_constraints``."""
    found = {}
    for info in pkgutil.walk_packages(engine.__path__, engine.__name__ + "."):
        if info.name.endswith(".__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and isinstance(
                    getattr(obj, "parameter_constraints", None), dict):
                found[f"{module.__name__}.{name}"] = obj
    return found


#: A valid model card's fields (gpurank.engine.sources.model.card.Card).
CARD = dict(name="c", architecture="dense-transformer", parameters=1e9, layers=16,
            hidden_size=2048, sequence_length=2048, vocabulary=32000, tokens=1e9)


def _replace(obj):
    return lambda **kw: dataclasses.replace(obj, **kw)


#: How to call each owner with every argument valid but the one under test.
CALLS = {
    "gpurank.engine.spec.AnalysisSpec": lambda owner, tmp: owner,
    "gpurank.engine.sources.model.workload.Workload": lambda owner, tmp: _replace(resnet50()),
    "gpurank.engine.sources.model.perfmodel.CalibratedModel": lambda owner, tmp: owner,
    "gpurank.engine.sources.sweep.simulate.simulate": lambda owner, tmp: (
        lambda **kw: owner(kw.pop("n", 10), **kw)),
    "gpurank.engine.sources.sweep.simulate.simulate_to_parquet": lambda owner, tmp: (
        lambda **kw: owner(tmp / "x.parquet", kw.pop("n", 10), **kw)),
    "gpurank.engine.sources.sweep.writer.estimate_size": lambda owner, tmp: (
        lambda **kw: owner(10, **kw)),
    "gpurank.engine.sources.model.predict.predict": lambda owner, tmp: (
        lambda **kw: owner(kw.pop("table", pd.DataFrame()), **kw)),
    "gpurank.engine.distributed.cluster.start_dask": lambda owner, tmp: owner,
    "gpurank.engine.sources.model.card.Card": lambda owner, tmp: (
        lambda **kw: owner(**{**CARD, **kw})),
    "gpurank.engine.commands.plan.plan_offers": lambda owner, tmp: (
        lambda **kw: owner(resnet50(), None, **kw)),
}


def test_every_declared_constraint_refuses_with_one_message_in_both_spellings(tmp_path):
    owners = _owners()
    assert set(owners) == set(CALLS), "an owner of declared constraints needs a call in CALLS"
    checked = 0
    for qualname, owner in owners.items():
        call = CALLS[qualname](owner, tmp_path)
        for name, constraints in owner.parameter_constraints.items():
            bad = refused_value(*constraints)
            with pytest.raises(ParamError) as info:
                call(**{name: bad})
            exc = info.value
            expected = f"must be {allowed(*constraints)}; got {shown(bad)}"
            assert (exc.param, exc.detail) == (name, expected), qualname
            assert str(exc) == f"{name} {expected}"
            assert exc.for_flag(cli._flag) == f"{cli._flag(name)} {expected}"
            checked += 1
    assert checked >= 60  # the spec, the workload, the model, the sweep, predict, Dask


SPEC, SWEEP = "gpurank.engine.spec.AnalysisSpec", "gpurank.engine.sources.sweep.simulate.simulate"
STREAM = SWEEP + "_to_parquet"
#: (argv, the owner of the constraint, parameter, the value the command line hands the API)
CLI_CASES = [
    (["analyze", "t.parquet", "--top", "0"], SPEC, "top", 0),
    (["analyze", "t.parquet", "--sample-rows", "5"], SPEC, "sample_rows", 5),
    (["analyze", "t.parquet", "--seed", "-1"], SPEC, "seed", -1),
    (["analyze", "t.parquet", "--norm", "l3"], SPEC, "norm", "l3"),
    (["analyze", "t.parquet", "--method", "ahp"], SPEC, "method", "ahp"),
    (["analyze", "t.parquet", "--method", "vikor", "--vikor-v", "2"], SPEC, "vikor_v", 2.0),
    (["analyze", "t.parquet", "--clusters", "0"], SPEC, "clusters", 0),
    (["analyze", "t.parquet", "--rank-depth", "0"], SPEC, "rank_depth", 0),
    (["analyze", "t.parquet", "--count-cap", "0"], SPEC, "count_cap", 0),
    (["analyze", "t.parquet", "--robust", "--samples", "0"], SPEC, "samples", 0),
    (["analyze", "t.parquet", "--robust", "--samples", "100000000"], SPEC, "samples",
     100_000_000),
    (["demo", "--n", "0"], SWEEP, "n", 0),
    (["simulate", "--n", "0", "-o", "s.parquet"], SWEEP, "n", 0),
    (["simulate", "--n", "10", "--seed", "-1", "-o", "s.parquet"], SWEEP, "seed", -1),
    (["simulate", "--n", "10", "--row-group-rows", "0", "-o", "s.parquet"], STREAM,
     "row_group_rows", 0),
    (["simulate", "--n", "10", "--counts", "0", "-o", "s.parquet"], SWEEP, "counts", [0]),
    (["simulate", "--n", "10", "--nodes", "2,0", "-o", "s.parquet"], SWEEP, "nodes", [2, 0]),
    (["analyze", "t", "--dask", "local:0"], "gpurank.engine.distributed.cluster.start_dask",
     "dask", "local:0"),
]


@pytest.mark.parametrize("argv, owner, name, value", CLI_CASES,
                         ids=[" ".join(c[0]) for c in CLI_CASES])
def test_the_command_line_shows_the_declared_message_with_its_flags(tmp_path, monkeypatch,
                                                                     capsys, argv, owner, name,
                                                                     value):
    monkeypatch.chdir(tmp_path)
    inputs = []
    if "--dask" in argv:  # the address is checked when the cluster starts, after the dataset
        pytest.importorskip("distributed")
        (tmp_path / "t").mkdir()
        config_table(20, seed=0).to_parquet(tmp_path / "t" / "part-0.parquet")
        inputs = ["t"]
    assert cli.main(argv) == 2
    declared = _owners()[owner].parameter_constraints[name]
    expected = ParamError(name, f"must be {allowed(*declared)}; got {shown(value)}")
    assert capsys.readouterr().err == f"gpurank: error: {expected.for_flag(cli._flag)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == inputs


def test_other_parameters_a_message_names_are_translated_too():
    exc = ParamError("n", "=5 is too many; pass {check_size=False} to try anyway",
                     mentions=("check_size=False",))
    assert str(exc) == "n=5 is too many; pass check_size=False to try anyway"
    assert exc.for_flag(cli._flag) == "--n=5 is too many; pass --no-size-check to try anyway"
    assert exc.for_flag("--n") == "--n=5 is too many; pass check_size=False to try anyway"


@pytest.mark.parametrize("closed, inside, outside, text", [
    ("both", [0, 1], [-0.5, 1.5], "in [0, 1]"),
    ("left", [0, 0.5], [1, -0.1], "in [0, 1)"),
    ("right", [1, 0.5], [0, 1.1], "in (0, 1]"),
    ("neither", [0.5], [0, 1], "in (0, 1)"),
])
def test_an_interval_is_open_or_closed_at_either_end(closed, inside, outside, text):
    iv = Interval(float, 0, 1, closed=closed)
    assert all(iv.accepts(v) for v in inside) and not any(iv.accepts(v) for v in outside)
    assert iv.describe() == f"a finite number {text}"
    assert not iv.accepts(math.nan) and not iv.accepts(True)
    for v in iv.refused():
        assert not iv.accepts(v)


def test_one_sided_intervals_and_the_other_constraints_describe_themselves():
    assert Interval(float, 0, None, closed="neither").describe() == "a finite number > 0"
    assert Interval(int, None, 5, closed="left").describe() == "an integer < 5"
    assert Interval(float, 0, None, finite=False).describe() == "a number >= 0"
    assert Items(Interval(int, 1, None), min_len=1).describe() == (
        "a non-empty sequence of values, each an integer >= 1")
    assert Items(Interval(int, 2, 9), min_len=2, max_len=2).describe() == (
        "2 values, each an integer in [2, 9]")
    assert Pairs("global_batch", "epochs", min_len=1).describe() == (
        "a non-empty sequence of (global_batch > 0, epochs > 0) pairs of finite numbers")
    assert Mapping(str, Interval(float, 0, 1)).describe() == (
        "a dict from text to a finite number in [0, 1]")
    with pytest.raises(ParamError, match=r"^norm must be one of 'a', 'b'; got 'c'$"):
        check_param("norm", "c", Options(("a", "b")))


def test_no_engine_module_writes_the_old_template():
    old = "is not allowed; it " + "must be"
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "engine").rglob("*.py")
            if old in p.read_text()]
    assert hits == []


def test_validated_functions_keep_their_signature():
    from gpurank.engine.sources.sweep.simulate import simulate

    params = inspect.signature(simulate).parameters
    assert list(params)[:2] == ["n", "seed"] and params["seed"].kind is params["seed"].KEYWORD_ONLY


def test_an_unknown_backend_is_refused_in_the_template_naming_the_parameter():
    from gpurank.engine import Engine
    from gpurank.engine.backend import resolve_backend

    message = "backend must be one of 'auto', 'cpu', 'gpu'; got 'tpu'"
    for call in (lambda: resolve_backend("tpu"), lambda: Engine(backend="tpu")):
        with pytest.raises(ParamError, match=f"^{message}$") as e:
            call()
        assert e.value.exit_code == 2 and e.value.param == "backend"
        assert e.value.for_flag(cli._flag) == "--" + message
