"""Our kernels agree with established libraries on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

from gpurank.kernels import cpu
from gpurank.kernels.datagen import SHAPES, make_costs, make_topsis

CASES = [(n, m, s) for n in (500, 3000) for m in (2, 3, 4, 6) for s in SHAPES]


@pytest.mark.parametrize("n, m, shape", CASES)
def test_front_agrees_with_moocore(n, m, shape):
    moocore = pytest.importorskip("moocore", reason="moocore not installed (pip install moocore)")
    c = make_costs(n, m, shape, seed=n + m)
    np.testing.assert_array_equal(cpu.pareto_front(c), moocore.is_nondominated(c, keep_weakly=True))


@pytest.mark.parametrize("n, m, shape", CASES)
def test_front_agrees_with_paretoset(n, m, shape):
    paretoset = pytest.importorskip("paretoset", reason="paretoset not installed")
    c = make_costs(n, m, shape, seed=n + m)
    np.testing.assert_array_equal(
        cpu.pareto_front(c), paretoset.paretoset(c, sense=["min"] * m, distinct=False)
    )


def test_front_with_duplicates_agrees_with_moocore():
    moocore = pytest.importorskip("moocore", reason="moocore not installed")
    c = np.random.default_rng(1).integers(0, 4, size=(400, 3)).astype(float)
    np.testing.assert_array_equal(cpu.pareto_front(c), moocore.is_nondominated(c, keep_weakly=True))


@pytest.mark.parametrize("n, m, shape", CASES)
def test_ranks_agree_with_moocore(n, m, shape):
    moocore = pytest.importorskip("moocore", reason="moocore not installed")
    c = make_costs(n, m, shape, seed=n + m)
    np.testing.assert_array_equal(cpu.pareto_rank(c), moocore.pareto_rank(c))


@pytest.mark.parametrize("n, m, shape", [(500, m, s) for m in (2, 3, 4) for s in SHAPES])
def test_ranks_agree_with_pymoo(n, m, shape):
    pytest.importorskip("pymoo", reason="pymoo not installed")
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    c = make_costs(n, m, shape, seed=n + m)
    fronts = NonDominatedSorting().do(c, n_stop_if_ranked=n)
    want = np.empty(n, dtype=np.int32)
    for r, idx in enumerate(fronts):
        want[idx] = r
    np.testing.assert_array_equal(cpu.pareto_rank(c), want)


@pytest.mark.parametrize("m", [2, 3, 5])
def test_topsis_agrees_with_pymcdm(m):
    pytest.importorskip("pymcdm", reason="pymcdm not installed")
    from pymcdm.methods import TOPSIS
    from pymcdm.normalizations import vector_normalization

    x, w, b = make_topsis(1000, m, seed=m)
    types = np.where(b, 1, -1)
    want = TOPSIS(normalization_function=vector_normalization)(x, w / w.sum(), types)
    np.testing.assert_allclose(cpu.topsis(x, w, b, norm="vector"), want, rtol=1e-9)


@pytest.mark.parametrize("m", [2, 3, 5])
def test_topsis_agrees_with_scikit_criteria(m):
    pytest.importorskip("skcriteria", reason="scikit-criteria not installed")
    from skcriteria import mkdm
    from skcriteria.agg.similarity import TOPSIS
    from skcriteria.preprocessing.invert_objectives import InvertMinimize  # noqa: F401
    from skcriteria.preprocessing.scalers import VectorScaler

    x, w, b = make_topsis(1000, m, seed=m)
    dm = mkdm(x, objectives=[max if f else min for f in b], weights=w / w.sum())
    dm = VectorScaler(target="matrix").transform(dm)
    res = TOPSIS().evaluate(dm)
    want = res.e_.similarity
    np.testing.assert_allclose(cpu.topsis(x, w, b, norm="vector"), want, rtol=1e-9)
