"""The CUDA divide-and-conquer counts against the reference, and its work against the host
mirror (:func:`gpurank.kernels.cuda.schedule.dnc_work`).

Under the simulator (tests/conftest.py) every element of every merge pass is a Python
thread, so the inputs are small; the leaf (``schedule.DNC_LEAF``) is shrunk so that they
span many merge levels at every nesting depth: a leaf of 1 leaves every pair to the merges,
a leaf of 4 and n not a power of two cut the last runs of every pass short, a leaf above n
leaves everything to the leaves.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from gpurank.kernels import cpu
from gpurank.kernels import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_helpers import KINDS, make_input

REAL = os.environ.get("GPURANK_REAL_GPU") == "1"

CASES = [  # n, m, kind, leaf
    (0, 2, "int", 4),
    (1, 3, "float", 4),
    (2, 4, "dup", 1),
    (2, 2, "int", 1),
    (3, 4, "int", 1),
    (37, 2, "int", 1),
    (120, 2, "const", 4),
    (45, 3, "dup", 1),
    (110, 3, "anti", 4),
    (48, 4, "int", 1),
    (100, 4, "dup", 4),
    (90, 4, "float", 8),
    (24, 4, "int", 64),  # all in one leaf
    (40, 5, "dup", 4),
]


def _run(monkeypatch, c, leaf, cap, reverse):
    from gpurank.kernels.cuda import count, schedule

    monkeypatch.setattr(schedule, "DNC_LEAF", leaf)
    work = {}
    got = count.count_device(c, cap, reverse, work=work, scheme="dnc").copy_to_host()
    return got, work


@pytest.mark.parametrize("n, m, kind, leaf", CASES)
def test_cuda_dnc_matches_reference_and_the_host_mirror(cuda_impl, monkeypatch, n, m, kind,
                                                        leaf):
    from gpurank.kernels.cuda import schedule

    dtype = np.float32 if n % 2 else np.float64
    c = make_input(n, m, kind, 3 * n + m, dtype)
    before = c.copy()
    want_tests, want_steps = schedule.dnc_work(n, m, leaf=leaf)
    for name, reverse in (("domination_count", False), ("dominated_count", True)):
        want = getattr(ref, name)(c)
        got, work = _run(monkeypatch, c, leaf, None, reverse)
        assert got.dtype == np.int64 and got.shape == (n,)
        np.testing.assert_array_equal(got, want, err_msg=name)
        if n == 0:
            continue
        order = work["order"]
        x = -c if reverse else c
        lex = np.lexsort((np.arange(n),) + tuple(x[:, k] for k in range(m - 1, -1, -1)))
        np.testing.assert_array_equal(order, lex)
        np.testing.assert_array_equal(work["counts"], want[order])
        # each sorted row is tested against the rows before it in its leaf, no other
        np.testing.assert_array_equal(work["tests"], np.arange(n) % leaf)
        assert work["tests"].sum() == want_tests
        assert work["search_steps"].sum() == want_steps
        w = schedule.count_work(c, name, scheme="dnc", leaf=leaf)
        assert (w.scheme, w.tile, w.pair_tests, w.search_steps) == ("dnc", leaf, want_tests,
                                                                    want_steps)
        assert w.pair_tests + w.pairs_decided_by_corners == n * (n - 1) // 2
    np.testing.assert_array_equal(c, before)


# monkeypatch only sets the leaf, which every example sets again
@settings(max_examples=30 if REAL else 3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(0, 5000 if REAL else 24),
    st.integers(2, 5),
    st.sampled_from(KINDS),
    st.sampled_from([2, 4, 16, 64]),
    st.integers(0, 2**31 - 1),
    st.sampled_from([np.float64, np.float32]),
)
def test_cuda_dnc_matches_reference_on_random_inputs(cuda_impl, monkeypatch, n, m, kind, leaf,
                                                     seed, dtype):
    c = make_input(n, m, kind, seed, dtype)
    oracle = ref if n <= 600 else cpu
    for name, reverse in (("domination_count", False), ("dominated_count", True)):
        got, _ = _run(monkeypatch, c, leaf, None, reverse)
        np.testing.assert_array_equal(got, getattr(oracle, name)(c), err_msg=name)


@pytest.mark.parametrize("n, m, kind", [(80, 3, "dup"), (50, 4, "int"), (80, 2, "float")])
def test_cuda_dnc_caps_above_the_threshold(cuda_impl, monkeypatch, n, m, kind):
    """Caps above ``DNC_CAP`` take the divide and conquer and clip its counts; caps at or
    below it take the tile walk; both equal the reference."""
    from gpurank.kernels.cuda import count, schedule

    monkeypatch.setattr(schedule, "DNC_LEAF", 4)
    monkeypatch.setattr(schedule, "DNC_CAP", 3)  # so that small inputs reach the caps
    c = make_input(n, m, kind, n + m, np.float32 if m == 3 else np.float64)
    for name, reverse in (("domination_count", False), ("dominated_count", True)):
        full = getattr(ref, name)(c)
        assert full.max() > 5  # the caps below clip some counts
        for cap, scheme in ((5, "dnc"), (3, "tiles"), (0, "tiles")):
            assert schedule.uses_dnc(name, m, cap) == (scheme == "dnc")
            work = {}
            got = count.count_device(c, cap, reverse, work=work).copy_to_host()
            np.testing.assert_array_equal(got, np.minimum(full, cap), err_msg=f"{name} {cap}")
            assert ("search_steps" in work) == (scheme == "dnc")
        np.testing.assert_array_equal(getattr(cuda_impl, name)(c, cap=5), np.minimum(full, 5))
        np.testing.assert_array_equal(getattr(cuda_impl, name)(c, cap=2**70), full)


def test_cuda_dnc_serves_the_uncapped_counts_of_two_to_five_columns(cuda_impl, monkeypatch):
    """The public functions take the divide and conquer for m = 2..5 without a cap, the
    tile walk for m = 1 and m = 6 and for the front."""
    from gpurank.kernels.cuda import count, schedule

    monkeypatch.setattr(schedule, "DNC_LEAF", 4)
    calls = []
    real = count.dnc_count_device

    def spy(d, *args, **kwargs):
        calls.append(d.shape[1])
        return real(d, *args, **kwargs)

    monkeypatch.setattr(count, "dnc_count_device", spy)
    for m in (1, 2, 3, 4, 5, 6):
        c = make_input(12, m, "dup", m)
        np.testing.assert_array_equal(cuda_impl.domination_count(c), ref.domination_count(c))
        np.testing.assert_array_equal(cuda_impl.dominated_count(c), ref.dominated_count(c))
        np.testing.assert_array_equal(cuda_impl.pareto_front(c), ref.pareto_front(c))
    assert calls == [2, 2, 3, 3, 4, 4, 5, 5]
    for m, scheme in ((1, "tiles"), (2, "dnc"), (5, "dnc"), (6, "tiles")):
        assert schedule.count_work(make_input(9, m, "int", 1), "domination_count").scheme == \
            scheme


def test_cuda_dnc_ties_on_every_column(cuda_impl, monkeypatch):
    """Rows equal in some columns and not others, every duplicate group spanning leaves and
    runs: equal values count as "at or below" for the earlier row only, and equal rows never
    dominate each other."""
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2, size=(12, 4)).astype(np.float64)
    c = base[rng.integers(0, 12, size=40)]
    c[::5, 0] = 0.5
    assert len(np.unique(c, axis=0)) < 20
    got, _ = _run(monkeypatch, c, 1, None, False)
    np.testing.assert_array_equal(got, ref.domination_count(c))
    got, _ = _run(monkeypatch, c, 2, None, True)
    np.testing.assert_array_equal(got, ref.dominated_count(c))
    same = np.zeros((21, 3))  # one group of equal rows: nobody dominates anybody
    np.testing.assert_array_equal(_run(monkeypatch, same, 4, None, False)[0], np.zeros(21))


def test_dnc_work_counts(monkeypatch):
    """The mirror's closed forms on hand-counted cases, and its checks."""
    from gpurank.kernels.cuda import schedule

    # 8 rows, leaves of 2: 4 tests; 8 halvings (of 4) for the equal rows, then passes of
    # widths 1, 2 with 1 and 2 halvings per element, and the final pass (width 4): only
    # the right run's 4 elements search, 3 halvings each
    assert schedule.dnc_work(8, 2, leaf=2) == (4, 8 * 4 + 8 * 1 + 8 * 2 + 4 * 3)
    # 5 rows, m = 2, leaf 1: widths 1 (runs 1+1, 1+1, 1: 4 * 1), 2 (2+2: 4 * 2; 1: 0),
    # final 4 (4+1: the right run's element searches 4: bit_length(4) = 3)
    assert schedule.dnc_work(5, 2, leaf=1) == (0, 5 * 3 + 4 + 8 + 3)
    # m = 3, 4 rows, leaf 1: the outer passes (widths 1, 2: 4 + 8), and under each the
    # column-2 problem on segments of 2 (its final pass of width 1: 2 right elements) and
    # 4 (width 1: 4, final width 2: 2 right elements of 2 halvings)
    assert schedule.dnc_work(4, 3, leaf=1) == (0, 4 * 3 + (4 + 8) + 2 + (4 + 4))
    # leaves of 4 over 3 rows: every pass is below the leaf, the final one is skipped
    assert schedule.dnc_work(3, 2, leaf=4) == (3, 3 * 2 + 2)
    assert schedule.dnc_work(0, 4) == (0, 0)
    tests, _ = schedule.dnc_work(10**7, 4)
    assert tests == 10**7 // 64 * (64 * 63 // 2) + (10**7 % 64) * (10**7 % 64 - 1) // 2
    for bad in (0, 3, 48):
        with pytest.raises(ValueError, match=f"DNC_LEAF must be a power of two; got {bad}"):
            schedule.dnc_work(10, 3, leaf=bad)
    with pytest.raises(ValueError, match="m must be at least 2"):
        schedule.dnc_work(10, 1)
    with pytest.raises(ValueError, match="scheme must be None, 'tiles' or 'dnc'; got 'x'"):
        schedule.count_work(np.zeros((3, 2)), "domination_count", scheme="x")
    with pytest.raises(ValueError, match="scheme='dnc' counts domination_count"):
        schedule.count_work(np.zeros((3, 2)), "pareto_rank", scheme="dnc")


def test_cuda_dnc_rejects_a_leaf_that_is_not_a_power_of_two(cuda_impl, monkeypatch):
    with pytest.raises(ValueError, match="DNC_LEAF must be a power of two; got 6"):
        _run(monkeypatch, np.zeros((10, 3)), 6, None, False)
