"""The HTML report, without a browser: structure, figures, escaping, sampling, edge cases.

The browser checks (console errors, images decoded, screenshot) are in test_report_browser.py.
"""

import base64
import hashlib
import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gpurank.engine import DataError, Engine
from gpurank.engine.formatting import number
from gpurank.engine.report import SECTIONS, build_report, rebuild_report, write_report
from gpurank.engine.report.html import CHARTJS_SHA256, CHARTJS_VERSION
from gpurank.engine.report.sections import ranking_scale
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


def scripts(text):
    """The inline <script> elements: (attributes, body)."""
    return re.findall(r"<script([^>]*)>(.*?)</script>", text, flags=re.S)


def test_self_contained(report):
    found = scripts(report)
    assert [a for a, _ in found] == [' type="application/json" id="explorer-data"', "", ""]
    assert report.count("<script") == 3 and "<script src" not in report
    assert "<link" not in report
    assert not re.search(r'(src|href|action)="(?!data:|#)', report)
    assert not re.search(r"url\(", report.split("<script")[0])  # no CSS fetches either
    chartjs = found[1][1]
    assert chartjs.startswith(f"/* Chart.js {CHARTJS_VERSION}, MIT licence */\n/*\nThe MIT "
                              "License (MIT)\n\nCopyright (c) 2014-2024 Chart.js Contributors")
    assert "Permission is hereby granted, free of charge" in chartjs
    assert "sourceMappingURL" not in report
    # the only URLs are the two in Chart.js's licence comments
    rest = report.replace(chartjs, "")
    assert "http://" not in rest and "https://" not in rest
    assert re.findall(r"https?://[^\s\"')]+", chartjs) == ["https://www.chartjs.org",
                                                           "https://github.com/kurkle/color#readme"]
    assert ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "img-src data:;") in report
    assert "@media print" in report


def test_vendored_chartjs_is_the_recorded_release():
    assets = resources.files("gpurank.engine.report").joinpath("assets")
    raw = assets.joinpath("chart.umd.min.js").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == CHARTJS_SHA256
    assert raw.startswith(f"/*!\n * Chart.js v{CHARTJS_VERSION}\n".encode())
    readme = assets.joinpath("README.md").read_text(encoding="utf-8")
    assert CHARTJS_SHA256 in readme and f"chart.js@{CHARTJS_VERSION}" in readme
    assert "Permission is hereby granted" in assets.joinpath("chart.js-LICENSE.md").read_text(
        encoding="utf-8")
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"gpurank.engine.report" = ["*.html", "assets/*"]' in pyproject


def test_content_from_the_summary(inputs, report):
    table, summary = inputs
    for p in summary["clusters"]["profiles"]:
        assert f">{p['label']}<" in report
    for row in summary["top"]:
        assert f"{row['topsis_score']:.4f}" in report
    assert report.count('class="pos"') == len(summary["top"]) * len(summary["criteria"])
    assert report.count('class="bar"') == len(summary["top"]) * len(summary["criteria"])
    for c in summary["criteria"]:
        assert c["column"] in report
    for step in summary["timings_s"]:
        assert f"<th>{step}</th>" in report
    for note in summary["notes"]:
        assert note in report
    assert "All 150 rows are drawn." in report
    assert f"held-out R² = {number(summary['importance']['holdout_r2'])}" in report


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
    assert text.count("<script") == 3 and text.count("</script>") == 3  # none from the data
    data = json.loads(scripts(text)[0][1])
    assert any(evil in c for c in data["config"])  # JSON-escaped (\u003c), not raw, in the page
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
    with pytest.raises(DataError, match=r"summary file .*summary\.json. is not valid JSON"):
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


# -- where the top rows sit, on the scale TOPSIS used ---------------------------------------
def _ranking_summary(norm, values):
    """A summary of two criteria with the given top rows (time min, speed max)."""
    crit = [{"column": "time_to_train_min", "sense": "min", "weight": 0.5},
            {"column": "throughput_per_accelerator", "sense": "max", "weight": 0.5}]
    top = [{"rank": i + 1, "accelerator": f"acc{i}", "time_to_train_min": t,
            "throughput_per_accelerator": v, "topsis_score": 0.9 - i / 100, "pareto_rank": 0}
           for i, (t, v) in enumerate(values)]
    settings = {} if norm is _ABSENT else {"norm": norm}
    return {"rows": 100, "criteria": crit, "top": top, "settings": settings,
            "ideal": {"time_to_train_min": 0.1, "throughput_per_accelerator": 10_000.0},
            "anti_ideal": {"time_to_train_min": 1000.0, "throughput_per_accelerator": 10.0}}


_ABSENT = object()


def _positions(text):
    return [float(p) for p in re.findall(r'<span class="pct">([\d.]+)%</span>', text)]


def test_linear_positions_between_anti_ideal_and_ideal():
    table = pd.DataFrame({"x": [1.0, 2.0]})
    s = _ranking_summary("vector", [(10.0, 1_000.0), (100.0, 100.0)])
    text = build_report(table, s)
    lin = [(1000 - 10) / (1000 - 0.1), (1000 - 10) / (10_000 - 10),
           (1000 - 100) / (1000 - 0.1), (100 - 10) / (10_000 - 10)]
    assert _positions(text) == [round(100 * p, 1) for p in lin]
    assert "on the scale TOPSIS used: <b>linear (&#x27;vector&#x27; normalization" in text
    assert "time_to_train_min spans 4.0 orders of magnitude" in text
    # the bar is drawn at the position, not full
    assert f'style="width:{100 * lin[1]:.1f}%"' in text


def test_log_positions_for_a_log_normalization():
    table = pd.DataFrame({"x": [1.0, 2.0]})
    for norm in ("log", "log-vector", "LogMinMax"):
        text = build_report(table, _ranking_summary(norm, [(10.0, 1_000.0), (100.0, 100.0)]))
        # log10: time 1000 -> 0.1 is 4 decades, 10 sits 2 from the worst: 50%; speed 10 ->
        # 10,000 is 3 decades, 1,000 sits 2 from the worst: 66.7%
        assert _positions(text) == [50.0, 66.7, 25.0, 33.3], norm
        assert "<b>logarithmic (&#x27;" in text
        assert "spans" not in text  # no advice to take logs: it was done
    # a criterion with a value <= 0 has no logarithm: linear, and said so
    s = _ranking_summary("log", [(10.0, 0.0), (100.0, 100.0)])
    s["anti_ideal"]["throughput_per_accelerator"] = 0.0
    text = build_report(table, s)
    assert "throughput_per_accelerator has values of zero or below" in text
    assert _positions(text)[1] == 0.0 and _positions(text)[0] == 50.0


@pytest.mark.parametrize("norm, words", [
    (_ABSENT, "linear in the values (the summary does not record the normalization)"),
    (None, "linear in the values (the summary does not record the normalization)"),
    ("minmax", "linear (&#x27;minmax&#x27; normalization: each criterion rescaled"),
    ("zscore<b>", "linear in the values (&#x27;zscore&lt;b&gt;&#x27; is a normalization "
                  "this report does not know"),
    (3, "&#x27;3&#x27; is a normalization this report does not know"),
])
def test_any_norm_value_is_labelled(norm, words):
    text = build_report(pd.DataFrame({"x": [1.0]}), _ranking_summary(norm, [(10.0, 1e3)]))
    assert words in text
    assert len(_positions(text)) == 2


def test_ranking_scale_kinds():
    assert ranking_scale("vector")[0] == ranking_scale("minmax")[0] == "linear"
    assert ranking_scale("log")[0] == ranking_scale("log_minmax")[0] == "log"
    assert ranking_scale(None)[0] == ranking_scale("other")[0] == "linear"


def test_positions_are_not_all_full_on_the_demo_like_spread(inputs):
    table, summary = inputs
    pos = _positions(build_report(table, summary))
    assert len(pos) == len(summary["top"]) * len(summary["criteria"])
    assert min(pos) < 100.0 and len(set(pos)) > len(summary["criteria"])


def test_prediction_basis_and_configuration_column(inputs):
    table, summary = inputs
    summary = json.loads(json.dumps(summary))
    for i, r in enumerate(summary["top"]):
        r["prediction_basis"] = "fitted" if i else "borrowed:H100<x>"
    text = build_report(table, summary)
    assert "<th>prediction basis</th>" in text
    assert ">borrowed:H100&lt;x&gt;</td>" in text and text.count(">fitted</td>") == len(
        summary["top"]) - 1
    # a table's own configuration text is used as it is
    summary["top"][0]["configuration"] = "my own setup"
    assert ">my own setup</td>" in build_report(table, summary)


def test_ranking_table_is_sortable_with_numeric_keys(inputs):
    table, summary = inputs
    text = build_report(table, summary)
    assert '<table class="sortable ranking" id="ranking-table">' in text
    keys = re.findall(r'<td class="num" data-sort="([^"]*)">(0\.\d{4})</td>', text)
    assert [float(k) for k, _ in keys] == pytest.approx(
        [r["topsis_score"] for r in summary["top"]])


# -- the interactive trade-off view ----------------------------------------------------------
def explorer_data(text):
    found = [b for a, b in scripts(text) if 'id="explorer-data"' in a]
    assert len(found) == 1
    return json.loads(found[0])


def test_explorer_data(inputs):
    table, summary = inputs
    text = build_report(table, summary)
    data = explorer_data(text)
    n = len(table)
    assert data["rows"] == n == data["shown"]  # a small table is drawn whole
    assert [c["column"] for c in data["criteria"]] == [c["column"] for c in summary["criteria"]]
    for key in ("rank", "pareto", "front", "score", "config"):
        assert len(data[key]) == n, key
    for c in data["criteria"]:
        assert len(data["values"][c["column"]]) == n
    assert data["top"] == len(summary["top"])
    first = data["rank"].index(1)
    assert data["score"][first] == pytest.approx(summary["top"][0]["topsis_score"], abs=1e-6)
    assert data["config"][first].startswith(
        f"{summary['top'][0]['n_accelerators']} x {summary['top'][0]['accelerator']}")
    assert '<select data-axis="x"' in text and '<select data-axis="y"' in text
    assert '<option value="cost_usd" selected>cost (USD)</option>' in text


def test_explorer_samples_big_tables_keeping_top_and_front(inputs):
    from gpurank.engine.report import explorer

    table, summary = inputs
    big = pd.concat([table] * 40, ignore_index=True)  # 6,000 rows
    big["rank"] = np.arange(1, len(big) + 1)
    rows = explorer.explorer_rows(big, 10, 500, seed=0)
    front = np.flatnonzero(big["pareto_rank"].to_numpy() == 0)
    assert set(range(10)) <= set(rows.tolist())
    assert set(front.tolist()) <= set(rows.tolist())
    assert len(rows) <= 10 + len(front) + 500 + big["cluster"].nunique()
    assert np.array_equal(rows, explorer.explorer_rows(big, 10, 500, seed=0))
    data = explorer_data(build_report(big, summary))
    assert data["rows"] == 6000 and data["shown"] < 6000


def test_explorer_needs_two_criteria(inputs):
    table, summary = inputs
    summary = json.loads(json.dumps(summary))
    summary["criteria"] = summary["criteria"][:1]
    text = build_report(table, summary)
    assert "The interactive trade-off view needs two criteria" in text
    assert 'id="explorer-data"' not in text


# -- no figure text is cut off ---------------------------------------------------------------
def _inside(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    tight, box = fig.get_tightbbox(renderer), fig.bbox_inches
    return (tight.x0 >= box.x0 - 1e-6 and tight.y0 >= box.y0 - 1e-6
            and tight.x1 <= box.x1 + 1e-6 and tight.y1 <= box.y1 + 1e-6), tight


LONG = "Vendor Accelerator Model {} SXM 80GB HBM3e, liquid-cooled board revision B"


def test_scaling_legend_is_not_cut_off():
    from gpurank.engine.report import plots

    rows = [{"accelerator": LONG.format(i), "n_accelerators": n,
             "time_to_train_min": 100 / n ** 0.9} for i in range(10) for n in (1, 2, 4, 8, 16)]
    sc = plots.scaling_table(pd.DataFrame(rows))
    with plots.figure_rc():
        for k in (1, 3, 10):
            fig = plots.scaling_figure(sc, [LONG.format(i) for i in range(k)])
            ok, tight = _inside(fig)
            assert ok, (k, tight)


def test_other_legends_and_labels_are_not_cut_off():
    from gpurank.engine.report import plots

    rng = np.random.default_rng(0)
    labels = {c: LONG.format(c) * 2 for c in range(8)}
    xy = rng.normal(size=(400, 2))
    clusters = np.repeat(np.arange(8), 50)
    with plots.figure_rc():
        ok, tight = _inside(plots.projection_figure(xy, clusters, labels, (0.6, 0.3),
                                                    np.arange(400) < 20))
        assert ok, tight
        feats = [{"feature": LONG.format(i) * 2, "permutation": 0.1 * i, "permutation_std": 0.01,
                  "impurity": 0.05} for i in range(15)]
        ok, tight = _inside(plots.importance_figure(feats))
        assert ok, tight
        x, y = 10 ** rng.uniform(0, 3, 300), 10 ** rng.uniform(-1, 3, 300)
        ok, tight = _inside(plots.tradeoff_figure(x, y, np.repeat(np.arange(12), 25),
                                                  np.arange(300) < 10, xlabel="cost (USD)",
                                                  ylabel="time (min)", top_ranks=[(1, 5, 5)]))
        assert ok, tight


def test_report_says_what_was_derived_skipped_and_left_out():
    from gpurank.engine import Engine
    from gpurank.engine.report import build_report
    from gpurank.engine.summary import build_summary
    from tables import config_table

    df = config_table(60, seed=2).drop(columns=["power_w"])
    r = Engine(backend="cpu").analyze(df, n_estimators=5, k_range=(2, 3),
                                      constraints="n_accelerators<=64")
    page = build_report(r.table, build_summary(r))
    assert "Rows and derived metrics" in page
    assert "energy_kwh not derived" in page and "needs power_w" in page
    assert "constraint n_accelerators&lt;=64" in page or "constraint n_accelerators<=64" in page


def test_timings_show_a_run_s_own_total_once():
    from gpurank.engine.report.sections import settings_section

    timed = settings_section({"timings_s": {"load": 1.0, "rank": 2.0, "total": 5.0}})
    assert timed.count("<th>total</th>") == 1 and "5.000 s" in timed and "8.000 s" not in timed
    summed = settings_section({"timings_s": {"load": 1.0, "rank": 2.0}})
    assert summed.count("<th>total</th>") == 1 and "3.000 s" in summed
