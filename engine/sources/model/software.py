"""The software trend: how much of its peak a family's software reaches, round by round.

A vendor's software improves between MLPerf rounds (kernels, fused layers, overlap), and
most where it is young: a family's first rounds on a benchmark gain the most (Llama 2 70B
LoRA on 8 B200: 13.0, 11.3, 9.8 min in v4.1, v5.0, v5.1; on 8 H100: 29.4, 25.7, 23.8, 23.5
min from v4.0). The model states the compute efficiency of each family at its
``software_round`` and moves it, in log, by its vendor's trend ``tau`` per round times
``decay ** age`` (the rounds since the family's first round on the workload), for a row of
another round: forward at most ``software_trend_rounds`` rounds, backward for the older
rounds a fit reads. Pure functions of arrays; :class:`~.perfmodel.CalibratedModel` holds the
parameters.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..facts.mlperf_rules import round_ordinal

__all__ = ["trend_rounds", "with_software_gain", "rounds_between", "software_gain"]


def trend_rounds(ahead, age, decay: float, cap: float) -> np.ndarray:
    """The rounds of trend between the model's software and each row's: the sum of
    ``decay ** (age + j)`` over the rounds ``j`` from the model's round to the row's.

    Parameters
    ----------
    ahead : array of float
        Rounds from the model's round to the row's (negative for an older round).
    age : array of float
        Rounds from the family's first round on the workload to the model's round (>= 0).
    decay : float
        In (0, 1]: 1 is a trend that does not slow down.
    cap : float
        Rounds ahead beyond which no further gain is extrapolated.

    Returns
    -------
    ndarray
        Positive ahead of the model's round, negative before it, 0 at it.
    """
    ahead = np.minimum(np.asarray(ahead, dtype=float), float(cap))
    age = np.maximum(np.asarray(age, dtype=float), 0.0)
    ahead, age = np.broadcast_arrays(ahead, age)
    # forward: the rounds j = 1..m after the model's, each of exponent age + j
    m = np.floor(np.maximum(ahead, 0.0))
    forward = _geometric(age + 1.0, m, decay)
    # backward: the n rounds from the row's (exclusive) to the model's (inclusive), of
    # exponents age - n + 1 .. age; those a family had not reached count whole
    n = np.ceil(np.maximum(-ahead, 0.0))
    young = np.maximum(n - age - 1.0, 0.0)
    backward = young + _geometric(np.maximum(age - n + 1.0, 0.0), np.minimum(n, age + 1.0),
                                  decay)
    return forward - backward


def _geometric(first, count, decay: float) -> np.ndarray:
    """``sum(decay ** (first + k) for k in range(count))``, elementwise, in closed form (a
    hostile round far ahead costs no loop)."""
    if decay == 1.0:
        return count.astype(float)
    with np.errstate(under="ignore"):
        return decay ** first * (1.0 - decay ** count) / (1.0 - decay)


def with_software_gain(eff, gain):
    """Efficiencies times ``exp(gain)`` (a relative gain: the same share of speed whatever
    the efficiency), never above 1."""
    eff = np.asarray(eff, dtype=float)
    return np.minimum(eff * np.exp(np.asarray(gain, dtype=float)), 1.0)


def rounds_between(software_round, rounds) -> np.ndarray:
    """Rounds from ``software_round`` to each of ``rounds`` (negative for an older one; 0 for
    a missing or unreadable round, and everywhere when ``software_round`` is None)."""
    rounds = np.asarray(rounds, dtype=object).reshape(-1)
    ref = None if software_round is None else round_ordinal(software_round)
    if ref is None or not len(rounds):
        return np.zeros(len(rounds))
    # each distinct round text parsed once (a sweep or a large table repeats a few)
    codes, names = pd.factorize(pd.Series(rounds, dtype=object), use_na_sentinel=False)
    per = np.array([0.0 if round_ordinal(r) is None else float(round_ordinal(r) - ref)
                    for r in names], dtype=float)
    return per[codes]


def software_gain(model, vendors, families, rounds) -> np.ndarray:
    """Each row's gain (log) of compute efficiency over the software of a model's
    ``software_round`` (a :class:`~.perfmodel.CalibratedModel`'s trend parameters): its
    vendor's trend, or the shared one, times :func:`trend_rounds` of the row's family's age.
    A family the fit did not see is taken as new in the row's round (its software then as
    young as it can be), never before it."""
    ahead = rounds_between(model.software_round, rounds)
    if not ahead.any():
        return np.zeros(len(ahead))
    ref = round_ordinal(model.software_round)
    firsts = model.software_first_round_by_family

    def age(family, behind):
        first = firsts.get(family)
        return behind if round_ordinal(first) is None else float(ref - round_ordinal(first))

    fcodes, fnames = pd.factorize(pd.Series(families, dtype=object), use_na_sentinel=False)
    acodes, anames = pd.factorize(ahead, use_na_sentinel=False)
    ages = np.array([[age(f, max(-a, 0.0)) for a in anames] for f in fnames],
                    dtype=float)[fcodes, acodes]
    vcodes, vnames = pd.factorize(pd.Series(vendors, dtype=object), use_na_sentinel=False)
    trend = np.array([model.software_trend_by_vendor.get(v, model.software_trend_shared)
                      for v in vnames], dtype=float)[vcodes]
    return trend * trend_rounds(ahead, ages, model.software_trend_decay,
                                model.software_trend_rounds)
