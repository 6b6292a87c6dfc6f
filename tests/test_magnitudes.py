"""Columns of huge or tiny magnitudes: scaled first (exactly, by powers of two), then computed.

TOPSIS has held its norms this way for long; the clustering's standardization, the forest's
float32 features and the report's projection (an SVD of the standardized features) do too:
times around 1e300 made the projection's SVD fail to converge, subnormal times overflowed the
scale computed for them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gpurank.engine import Engine
from gpurank.engine.cli import main
from gpurank.engine.magnitudes import column_scales, unit_scale
from gpurank.engine.report import plots
from output_sets import consistent_set
from tables import config_table


@pytest.mark.parametrize("top", [3.0, 1e300, 1.7976931348623157e308, 2.0**-1022, 1e-310,
                                 5e-324, -7e200])
def test_unit_scale_brings_any_finite_magnitude_near_one(top):
    s = unit_scale(top)
    assert math.isfinite(s) and s > 0 and math.frexp(s)[0] == 0.5  # a normal power of two
    assert 2.0**-52 <= abs(top) * s < 4.0


@pytest.mark.parametrize("top", [0.0, math.inf, -math.inf, math.nan])
def test_unit_scale_leaves_what_no_scale_helps(top):
    assert unit_scale(top) == 1.0


def test_column_scales_only_where_needed():
    assert column_scales([1.0, 50.0], low=1e-100, high=1e100) == ()
    assert column_scales([1.0, 1e300, 1e-310, 0.0, np.inf], low=1e-100, high=1e100) == (
        1.0, unit_scale(1e300), unit_scale(1e-310), 1.0, 1.0)


def _times(df, scale):
    out = df.copy()
    rng = np.random.default_rng(0)
    out["time_to_train_min"] = scale * rng.uniform(1.0, 1.7, len(out))
    return out


@pytest.mark.parametrize("scale", [1e300, 1e307, 1e-310])
def test_projection_of_huge_and_subnormal_features_is_finite(scale):
    t = _times(config_table(40, seed=3), scale)
    xy, valid, explained = plots.projection(t, ["n_accelerators", "time_to_train_min"])
    assert valid.all() and np.isfinite(xy).all()
    assert 0.0 <= explained[1] <= explained[0] <= 1.0


@pytest.mark.parametrize("scale", [1e300, 1e307, 1e-310, 5e-324])
def test_analysis_of_huge_or_subnormal_times_succeeds_with_its_report(scale, tmp_path,
                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = _times(config_table(40, seed=3, price=False, power=False), scale)
    if scale == 5e-324:  # the smallest subnormal: times 1, 2, 3 x 5e-324
        t["time_to_train_min"] = 5e-324 * (1 + np.arange(len(t)) % 3)
    t.to_parquet(tmp_path / "t.parquet")
    code = main(["analyze", str(tmp_path / "t.parquet"), "--out", str(tmp_path / "out"),
                 "--quiet"])
    assert code == 0
    consistent_set(tmp_path / "out")


def test_subnormal_target_and_cluster_features_are_scaled_not_overflowed():
    t = _times(config_table(40, seed=3, price=False, power=False), 1e-310)
    r = Engine(backend="cpu").analyze(t, n_estimators=5, target="time_to_train_min",
                                      k_range=(2, 3))
    assert r.importance is not None and np.isfinite(r.importance.holdout_r2)
    assert (r.clusters.labels >= 0).all()
