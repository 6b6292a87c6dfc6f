"""``gpurank report`` checks the whole summary.json (every field's type and range) first.

A summary whose fields had the wrong types reached NumPy and matplotlib (``TypeError: ufunc
'isfinite' not supported``); now every field the report reads is declared
(``engine/summary_schema.py``) and a wrong one is one line naming it, exit code 3.
"""

from __future__ import annotations

import json
import shutil

import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.errors import DataError
from gpurank.engine.summary import build_summary
from gpurank.engine.summary_schema import check_summary
from tables import config_table


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    root = tmp_path_factory.mktemp("schema")
    eng = Engine(backend="cpu")
    result = eng.analyze(config_table(40, seed=2), n_estimators=5, k_range=(2, 4),
                         robust=True, samples=200, top=4)
    eng.write(result, root / "set", report=False)
    return result, root / "set"


def test_every_summary_gpurank_writes_meets_the_schema(analysis):
    result, folder = analysis
    check_summary(build_summary(result), path="memory")
    check_summary(json.loads((folder / "summary.json").read_text()), path=folder)


def _edit(summary, path, value):
    node = summary
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return summary


# (where, value, what the message says it must be)
WRONG = [
    (("rows",), "40", "an integer >= 0"),
    (("rows",), True, "an integer >= 0"),
    (("pareto_front_size",), -2, "an integer >= 0"),
    (("clusters", "silhouette", "2"), "x", "a finite number in [-1, 1] or null"),
    (("clusters", "silhouette", "2"), float("nan"), "a finite number in [-1, 1] or null"),
    (("clusters", "profiles", 0, "size"), "abc", "an integer >= 0"),
    (("clusters", "profiles", 0, "cluster"), 1.5, "an integer >= 0"),
    (("clusters", "k"), [3], "an integer >= 1"),
    (("importance", "features", 0, "permutation"), "x", "a finite number or null"),
    (("importance", "features", 0, "impurity"), 7.0, "a finite number in [0, 1] or null"),
    (("importance", "holdout_r2"), {"a": 1}, "a finite number or null"),
    (("criteria", 0, "sense"), "minimize", "one of 'min', 'max'"),
    (("criteria", 0, "weight"), "0.25", "a finite number >= 0"),
    (("ideal", "time_to_train_min"), [1, 2], "a finite number or null"),
    (("settings", "seed"), -1, "an integer in [0, 4294967295]"),
    (("settings", "clusters"), "many", "an integer >= 1 or one of 'auto' or null"),
    (("top", 0, "accelerator"), {"nested": True}, "a string, a finite number, a boolean"),
    (("timings_s", "rank"), -1.0, "a finite number >= 0 or null"),
    (("notes",), "one note", "a list"),
    (("robust", "top", 0, "p_topk"), 1.5, "a finite number in [0, 1] or null"),
    (("robust", "k"), None, "an integer >= 1"),
]


@pytest.mark.parametrize("path, value, expected", WRONG,
                         ids=[".".join(map(str, w[0])) + f"={w[1]!r}" for w in WRONG])
def test_a_wrong_field_is_one_line_naming_it(analysis, path, value, expected):
    summary = _edit(build_summary(analysis[0]), path, value)
    with pytest.raises(DataError) as info:
        check_summary(summary, path="s.json")
    where = path[0] + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])
    assert f"field '{where}' must be {expected}" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_required_field_is_named(analysis):
    summary = build_summary(analysis[0])
    del summary["criteria"][0]["sense"]
    with pytest.raises(DataError, match=r"field 'criteria\[0\]\.sense' is missing"):
        check_summary(summary, path="s.json")


@pytest.mark.parametrize("path, value", [(("clusters", "silhouette", "2"), "x"),
                                         (("importance", "features", 0, "permutation"), "x"),
                                         (("rows",), "40")])
def test_report_beside_a_summary_with_wrong_types_exits_3_in_one_line(analysis, tmp_path,
                                                                      capsys, path, value):
    folder = tmp_path / "set"
    shutil.copytree(analysis[1], folder)
    summary = json.loads((folder / "summary.json").read_text())
    (folder / "summary.json").write_text(json.dumps(_edit(summary, path, value)))
    code = main(["report", str(folder / "ranking.parquet")])
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and err.startswith("gpurank: error: summary file ")
    assert not (folder / "report.html").exists()


def test_a_summary_that_is_not_an_object_is_refused():
    with pytest.raises(DataError, match="does not hold a JSON object; it holds a list"):
        check_summary([1, 2], path="s.json")
