"""The HTML report, without a browser: structure, figures, escaping, sampling, edge cases.

The browser checks (console errors, images decoded, screenshot) are in test_report_browser.py.
"""

import base64
import json
import re
import subprocess
import sys
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from gpurank.engine import DataError, Engine
from gpurank.engine.report import SECTIONS, build_report, rebuild_report, write_report
from gpurank.engine.report.plots import sample_for_plots
from gpurank.engine.summary import build_summary
from tables import config_table

ALL_FIGURES = {"importance", "silhouette", "clusters", "scaling", "tradeoff"}
_FIG = re.compile(r'<figure data-figure="([^"]+)"><img src="data:image/png;base64,([^"]*)"'
                  r' width="(\d+)" height="(\d+)"')


def analysis_inputs(n=150, *, seed=1, price=True, **options):
    """A realistic (table, summary) pair from a small CPU analysis."""
    opts = {"n_estimators": 10, "clusters": "auto", "k_range": (2, 5)} | options
    result = Engine(backend="cpu").analyze(config_table(n, seed=seed, price=price), **opts)
    return result.table, build_summary(result)


@pytest.fixture(scope="module")
def inputs():
    return analysis_inputs()


@pytest.fixture(scope="module")
def report(inputs):
    return build_report(*inputs)


def figures(text):
    """{name: png bytes} of every inlined figure."""
    return {m.group(1): base64.b64decode(m.group(2)) for m in _FIG.finditer(text)}


def test_every_section_and_figure_present(report):
    for sid, title in SECTIONS:
        assert f'<section id="{sid}"><h2>{title}</h2>' in report
        assert f'href="#{sid}"' in report
    figs = figures(report)
    assert set(figs) == ALL_FIGURES
    assert report.count("<figure") == len(ALL_FIGURES)  # one image per figure, no stray ones
    for name, png in figs.items():
        assert png.startswith(b"\x89PNG\r\n\x1a\n"), name
        assert len(png) > 5_000, name
    assert report.count("<figcaption>") == len(ALL_FIGURES)


def test_self_contained(report):
    assert "<script" not in report
    assert "<link" not in report
    assert not re.search(r'(src|href)="(?!data:|#)', report)
    assert "http://" not in report and "https://" not in report
    assert "@media print" in report


def test_content_from_the_summary(inputs, report):
    table, summary = inputs
    for p in summary["clusters"]["profiles"]:
        assert f">{p['label']}<" in report
    for row in summary["top"]:
        assert f"{row['topsis_score']:.4f}" in report
    assert report.count('class="why"') == len(summary["top"])
    assert report.count('class="bar"') == len(summary["top"]) * len(summary["criteria"])
    for c in summary["criteria"]:
        assert c["column"] in report
    for step in summary["timings_s"]:
        assert f"<th>{step}</th>" in report
    for note in summary["notes"]:
        assert note in report
    assert "All 150 rows are drawn." in report
    assert f"held-out R² = {summary['importance']['holdout_r2']:.3g}" in report


def test_deterministic(inputs, report):
    assert build_report(*inputs) == report


def test_table_text_escaped(inputs):
    table, summary = inputs
    evil = "<b>x</b>&<script>alert(1)</script>"
    table = table.copy()
    table["accelerator"] = table["accelerator"].where(table["rank"] != 1, evil)
    summary = json.loads(json.dumps(summary))
    summary["top"][0]["accelerator"] = evil
    summary["clusters"]["profiles"][0]["label"] = evil
    summary["notes"].append(evil)
    summary["fallbacks"].append(evil)
    text = build_report(table, summary)
    assert evil not in text
    assert "<script" not in text
    escaped = "&lt;b&gt;x&lt;/b&gt;&amp;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert text.count(escaped) >= 5  # top row, profile, note, fallback, accelerator counts


def test_big_table_is_sampled_and_keeps_the_front(inputs):
    table, summary = inputs
    big = pd.concat([table] * 20, ignore_index=True)  # 3,000 rows
    text = build_report(big, summary, max_points=400)
    front = int((big["pareto_rank"] == 0).sum())
    m = re.search(r"Sampled: ([\d,]+) of 3,000 rows are drawn, a seeded sample stratified by "
                  r"cluster plus all ([\d,]+) Pareto-front rows\.", text)
    assert m, "sampling caption missing"
    assert int(m.group(2).replace(",", "")) == front
    assert text.count(m.group(0)) == 2  # under the cluster and the trade-off figures
    assert set(figures(text)) == ALL_FIGURES

    idx = sample_for_plots(big, 400, seed=0)
    assert np.array_equal(idx, np.unique(idx))
    assert set(np.flatnonzero(big["pareto_rank"].to_numpy() == 0)) <= set(idx)
    assert len(idx) <= 400 + front + big["cluster"].nunique()
    share = big["cluster"].value_counts(normalize=True)
    drawn = big.iloc[idx]
    for c, s in share.items():  # stratified: each cluster near its share (front rows aside)
        rest = drawn[(drawn["cluster"] == c) & (drawn["pareto_rank"] != 0)]
        assert abs(len(rest) - 400 * s) <= 1 + front
    assert np.array_equal(sample_for_plots(big, 400, seed=0), idx)


def test_one_row_renders_with_reasons():
    table, summary = analysis_inputs(1, clusters=5)
    assert summary["importance"] is None and summary["clusters"] is None
    text = build_report(table, summary)
    assert "Feature importance is not available: 1 rows are too few to fit a forest" in text
    assert "Clusters are not available: a table of one row has nothing to group." in text
    assert "Scaling is not shown: no accelerator model was run at two or more" in text
    assert set(figures(text)) == {"tradeoff"}
    for sid, _ in SECTIONS:
        assert f'<section id="{sid}">' in text


def test_fixed_k_and_no_cost():
    table, summary = analysis_inputs(60, seed=3, clusters=3, price=False)
    text = build_report(table, summary)
    assert "k = 3 was set (--clusters 3), not chosen" in text
    assert set(figures(text)) == ALL_FIGURES
    assert "Time to train against accel-hours (h) (no cost column" in text
    # a silhouette "curve" of one k is a sentence, not a figure
    summary["clusters"]["silhouette"] = {"3": summary["clusters"]["silhouette"]["3"]}
    text = build_report(table, summary)
    assert "Only one k has a silhouette score, so there is no curve to draw (k = 3: " in text
    assert set(figures(text)) == ALL_FIGURES - {"silhouette"}


def test_missing_feature_column_is_a_sentence(inputs):
    table, summary = inputs
    summary = json.loads(json.dumps(summary))
    summary["clusters"]["features"] = ["log10(not_a_column)"]
    text = build_report(table, summary)
    assert "column &#x27;not_a_column&#x27; is not in the table" in text
    assert "clusters" not in figures(text)


def test_write_and_rebuild(tmp_path, inputs):
    table, summary = inputs
    out = write_report(table, summary, tmp_path / "a" / "report.html")
    assert out.read_text(encoding="utf-8") == build_report(table, summary)

    eng = Engine(backend="cpu")
    result = eng.analyze(config_table(80, seed=2), n_estimators=10, clusters=2)
    written = eng.write(result, tmp_path / "run")
    path = rebuild_report(tmp_path / "run" / "ranking.parquet")
    assert path == tmp_path / "run" / "report.html"
    text = path.read_text(encoding="utf-8")
    assert set(figures(text)) == ALL_FIGURES
    assert text == build_report(result.table, written)  # parquet round trip changes nothing
    other = rebuild_report(tmp_path / "run" / "ranking.parquet", tmp_path / "elsewhere.html")
    assert other.read_text(encoding="utf-8") == text
    assert not list(tmp_path.rglob(".*.tmp"))  # atomic writes leave no temporaries


def test_rebuild_names_the_missing_file(tmp_path, inputs):
    table, _ = inputs
    with pytest.raises(DataError, match=r"ranking file '.*nothing\.parquet' does not exist"):
        rebuild_report(tmp_path / "nothing.parquet")
    table.to_parquet(tmp_path / "ranking.parquet")
    with pytest.raises(DataError, match=r"summary file '.*summary\.json' does not exist"):
        rebuild_report(tmp_path / "ranking.parquet")
    (tmp_path / "summary.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match=r"cannot read summary file"):
        rebuild_report(tmp_path / "ranking.parquet")


def test_template_is_package_data():
    assert resources.files("gpurank.engine.report").joinpath("template.html").is_file()


def test_no_pyplot_and_lazy_matplotlib():
    code = ("import sys, gpurank.engine.report as r; assert 'matplotlib' not in sys.modules; "
            "import pandas as pd; r.build_report(pd.DataFrame({'accelerator': ['a', 'a'], "
            "'n_accelerators': [1, 2], 'time_to_train_min': [2.0, 1.0]}), {}); "
            "assert 'matplotlib' in sys.modules and 'matplotlib.pyplot' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_bare_inputs_do_not_crash():
    text = build_report(pd.DataFrame({"x": [1.0, 2.0]}), {})
    for sid, _ in SECTIONS:
        assert f'<section id="{sid}">' in text
    assert "<figure" not in text


def test_dollar_signs_are_not_mathtext(inputs):
    table, summary = inputs
    table = table.copy()
    table["accelerator"] = table["accelerator"] + " $5/h"
    summary = json.loads(json.dumps(summary))
    summary["clusters"]["profiles"][0]["label"] = "cheap $ at $_{x"
    summary["importance"]["features"][0]["feature"] = "price $"
    assert set(figures(build_report(table, summary))) == ALL_FIGURES
