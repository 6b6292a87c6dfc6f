"""80% prediction intervals of time to train, from cross-validated errors.

A prediction's error depends on what it rests on (:func:`.evaluation.basis_kind`): a family the
model was fitted on (``fitted``), a family it was not (``borrowed``), a workload it was not
(``first-principles``), and on how far the row goes beyond the fitted batches and scales.
The interval of a prediction ``t`` is ``[t * exp(-w_lo), t * exp(w_hi)]`` where ``w_lo`` and
``w_hi`` are the 90th and 10th percentiles of the held-out log errors ``log(predicted /
measured)`` of its basis (sign-flipped for the upper end), each widened by ``per_doubling``
for every doubling of batch or scale beyond the fitted range. A row of a round after the
model's latest calibration round (newer software, a family's first round) takes the
half-widths of its basis at its distance, 1 or 2 rounds ahead (``by_distance``: from the
forward-in-time errors of models that predict 1 and 2 rounds ahead); beyond the farthest
measured distance the low end widens by ``per_round`` for every further round.

The table is ``engine/data/prediction_intervals.json``, written by
``gpurank calibrate --benchmark all --intervals`` from the held-out predictions of every
shipped workload: leave one round out for ``fitted``, leave one family out for
``borrowed``, leave one workload out for ``first-principles`` (docs/simulator.md shows it
and the coverage each basis reaches when the intervals themselves are held out).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

__all__ = [
    "INTERVAL_LEVEL",
    "IntervalTable",
    "interval_table",
    "interval_factors",
    "fit_interval_table",
    "BASIS_KINDS",
    "DISTANCES",
]

#: The central probability of every prediction interval.
INTERVAL_LEVEL = 0.80
#: The kinds of evidence a prediction rests on, narrowest interval first.
BASIS_KINDS = ("fitted", "borrowed", "first-principles")
_FILE = "prediction_intervals.json"


@dataclass(frozen=True)
class IntervalTable:
    """Log half-widths of the interval per basis kind, and the widening per doubling.

    Attributes
    ----------
    by_basis : dict
        ``{kind: (w_lo, w_hi, n)}``: ``log(t / lo)``, ``log(hi / t)`` and the held-out rows
        they come from.
    per_doubling : float
        Added to both half-widths per doubling beyond the fitted batch and scale range.
    per_round : float
        Added to the low half-width per MLPerf round beyond the farthest distance of
        ``by_distance`` (per round after the latest calibration round for a basis without
        distances).
    level : float
    source : str
    by_distance : dict
        ``{kind: {rounds_ahead: (w_lo, w_hi, n)}}`` for rows 1, 2, ... rounds after the
        model's latest calibration round, from forward-in-time errors at that distance.
    max_reach : float
        The farthest extrapolation (doublings) the held-out rows measure; beyond it each
        doubling adds the basis's half-widths (infinite in a file without it).
    """

    by_basis: dict
    per_doubling: float
    per_round: float = 0.0
    level: float = INTERVAL_LEVEL
    source: str = ""
    by_distance: dict = field(default_factory=dict)
    max_reach: float = math.inf

    def to_dict(self) -> dict:
        return {
            "format": "gpurank.PredictionIntervals",
            "level": self.level,
            "per_doubling": self.per_doubling,
            "per_round": self.per_round,
            "by_basis": {k: {"w_lo": v[0], "w_hi": v[1], "n": v[2]}
                         for k, v in self.by_basis.items()},
            "by_distance": {k: {str(d): {"w_lo": v[0], "w_hi": v[1], "n": v[2]}
                                for d, v in per.items()}
                            for k, per in self.by_distance.items()},
            "source": self.source,
            "max_reach": self.max_reach if math.isfinite(self.max_reach) else None,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "IntervalTable":
        return cls(
            by_basis={k: (float(v["w_lo"]), float(v["w_hi"]), int(v["n"]))
                      for k, v in d["by_basis"].items()},
            per_doubling=float(d["per_doubling"]),
            per_round=float(d.get("per_round", 0.0)),
            level=float(d["level"]),
            source=str(d.get("source", "")),
            by_distance={k: {int(dd): (float(v["w_lo"]), float(v["w_hi"]), int(v["n"]))
                             for dd, v in per.items()}
                         for k, per in d.get("by_distance", {}).items()},
            max_reach=(math.inf if d.get("max_reach") is None else float(d["max_reach"])),
        )


@lru_cache(maxsize=1)
def interval_table() -> IntervalTable:
    """The shipped table (``engine/data/prediction_intervals.json``)."""
    with resources.files("gpurank.engine.data").joinpath(_FILE).open("rb") as fh:
        return IntervalTable.from_dict(json.load(fh))


def _kind(basis) -> str:
    text = str(basis)
    kind = text.split(":", 1)[0] if text else ""
    return kind if kind in BASIS_KINDS else "first-principles"


def interval_factors(basis, reach, table: IntervalTable | None = None, rounds_after=0.0):
    """``(lo, hi)`` factors on the predicted time of each row.

    Parameters
    ----------
    basis : array of str
        ``prediction_basis`` per row (an ``assumed`` or unknown basis takes the widest,
        ``first-principles``).
    reach : array of float
        Doublings beyond the fitted batch and scale range (0 inside it).
    rounds_after : float or array of float
        MLPerf rounds after the model's latest calibration round (0 for a row of a
        calibration round or without one).
    """
    table = interval_table() if table is None else table
    kinds = np.array([_kind(b) for b in np.asarray(basis, dtype=object)], dtype=object)
    w_lo = np.zeros(len(kinds))
    w_hi = np.zeros(len(kinds))
    for k, (a, b, _n) in table.by_basis.items():
        rows = kinds == k
        w_lo = np.where(rows, a, w_lo)
        w_hi = np.where(rows, b, w_hi)
    after = np.broadcast_to(np.maximum(np.nan_to_num(np.asarray(rounds_after, dtype=float)),
                                       0.0), w_lo.shape)
    later = table.per_round * after
    for k, per in table.by_distance.items():
        if not per:
            continue
        far = max(per)
        # the nearest measured distance at or below the row's; per_round for each round beyond
        step = np.minimum(np.floor(after + 1e-9), far)
        for d, (a, b, _n) in per.items():
            rows = (kinds == k) & (step == d)
            w_lo = np.where(rows, a, w_lo)
            w_hi = np.where(rows, b, w_hi)
        ahead = (kinds == k) & (step >= 1)
        later = np.where(ahead, table.per_round * np.maximum(after - far, 0.0), later)
    reach = np.maximum(np.asarray(reach, dtype=float), 0.0)
    widen = table.per_doubling * reach
    # beyond the farthest measured extrapolation, each doubling costs the basis's own error
    unmeasured = np.maximum(reach - table.max_reach, 0.0) if math.isfinite(table.max_reach) \
        else np.zeros(len(w_lo))
    return (np.exp(-(w_lo + widen + later + unmeasured * w_lo)),
            np.exp(w_hi + widen + unmeasured * w_hi))


def _quantile_pair(log_err: np.ndarray, level: float) -> tuple[float, float]:
    """Half-widths that put ``level`` of the true values inside: the true value is
    ``t / exp(e)`` for a log error ``e``, so the low end comes from the high errors."""
    a = (1.0 - level) / 2.0
    q_lo, q_hi = np.quantile(log_err, [a, 1.0 - a])
    return float(max(q_hi, 0.0)), float(max(-q_lo, 0.0))


def _inside(err, w_lo, w_hi, widen=0.0):
    """Whether the true value (``t / exp(err)``) lies in the interval of half-widths
    ``w_lo``, ``w_hi`` (each widened by ``widen``)."""
    return (err <= w_lo + widen + 1e-12) & (-err <= w_hi + widen + 1e-12)


def _held_out_coverage(err, rounds, nominal: float, floor: float = 0.0,
                       high: float | None = None) -> float:
    """Share of ``err`` inside half-widths taken at ``nominal`` (the high end at ``high``
    when given) from the other rounds' errors (in-sample when there is one round); the low
    half-width at least ``floor``."""
    def widths(e):
        w_lo, w_hi = _quantile_pair(e, nominal)
        return max(w_lo, floor), (w_hi if high is None else _quantile_pair(e, high)[1])

    names = sorted(set(rounds))
    if len(names) < 2:
        return float(_inside(err, *widths(err)).mean())
    hits = []
    for r in names:
        held = rounds == r
        if held.all() or (~held).sum() < 3:
            continue
        hits.append(_inside(err[held], *widths(err[~held])))
    return float(np.concatenate(hits).mean()) if hits else 0.0


def _widths(err, rounds, level: float, floor: float = 0.0) -> tuple[float, float, int]:
    """``(w_lo, w_hi, n)`` of the errors at the smallest nominal level whose half-widths,
    taken from the other rounds, hold ``level`` of each round's rows (the low one at least
    ``floor``; where the floor holds more than its share, the high end at the smallest
    level that still holds ``level``). Where no level holds ``level`` (a round's rows lie
    beyond every other round's quantiles), the smallest level that holds the most: a wider
    interval would cover no more held-out rows, only widen the rest."""
    nominal = _smallest_holding(
        _NOMINAL, lambda q: _held_out_coverage(err, rounds, q, floor), level)
    w_lo, w_hi = _quantile_pair(err, nominal)
    if floor > w_lo:
        high = _smallest_holding(
            [q for q in _HIGH if q <= nominal],
            lambda q: _held_out_coverage(err, rounds, nominal, floor, q), level)
        w_hi = _quantile_pair(err, high)[1]
    return round(max(w_lo, floor), 6), round(w_hi, 6), int(len(err))


def _smallest_holding(levels, coverage, level: float) -> float:
    """The first of ``levels`` whose ``coverage`` reaches ``level``, or, where none does,
    the first that reaches the most any of them does."""
    cov = []
    for q in levels:
        cov.append(coverage(q))
        if cov[-1] >= level - 1e-12:
            return q
    return levels[cov.index(max(cov))]


#: The distances (rounds after the latest calibration round) that get half-widths of their
#: own, and the fewest held-out rows a basis needs at a distance to get them.
DISTANCES = (1, 2)
_MIN_DISTANCE_ROWS = 10

#: The nominal levels tried for the half-widths, and the widenings per doubling.
_NOMINAL = tuple(np.round(np.arange(0.80, 0.991, 0.005), 3))
#: The levels tried for a high end alone, where a floored low end holds more than its share.
_HIGH = tuple(np.round(np.arange(0.30, 0.991, 0.005), 3))
_WIDEN = tuple(np.round(np.arange(0.0, 0.501, 0.01), 2))


def fit_interval_table(held_out, *, level: float = INTERVAL_LEVEL, source: str = ""
                       ) -> IntervalTable:
    """The table from held-out predictions.

    Parameters
    ----------
    held_out : DataFrame
        One row per held-out prediction: ``kind`` (a :data:`BASIS_KINDS` value),
        ``log_error`` (``log(predicted / measured)``), ``reach`` (doublings beyond the
        fitted range) and, when known, ``round`` and ``rounds_after`` (rounds after the
        latest round the predicting model was fitted on: forward-in-time rows).

    The half-widths of each kind are quantiles of the log errors of its rows, at the
    smallest nominal level (from ``level`` up, in steps of half a percent) whose intervals hold
    ``level`` of each round's rows when taken from the other rounds' errors: errors of a new
    round spread wider than those of the rounds a fit saw, and the interval must hold for
    the new one. ``per_doubling`` is the smallest widening per doubling beyond the fitted
    range that holds ``level`` of the rows beyond it. The forward-in-time rows (those with
    ``rounds_after`` > 0) take no part in those: the rows of each basis :data:`DISTANCES`
    rounds ahead give that basis's half-widths at that distance, the same way
    (``by_distance``; the low end never narrower than the nearer distance's, as a later
    round's software only makes runs faster, and the high end then at the smallest level
    that still holds ``level``; a basis with fewer than 10 rows at a distance
    keeps the nearer distance's, widened by ``per_round``); ``per_round`` is the low end's
    step from the nearer to the farthest distance (the largest over bases). ``max_reach`` is the
    farthest extrapolation among the rows: beyond it each doubling adds the basis's own
    half-widths again (no row measures an error there).
    """
    err = held_out["log_error"].to_numpy(float)
    reach = held_out["reach"].to_numpy(float)
    kind = held_out["kind"].to_numpy(dtype=object)
    rounds = (held_out["round"].astype(str).to_numpy() if "round" in held_out.columns
              else np.full(len(err), ""))
    after = (np.nan_to_num(held_out["rounds_after"].to_numpy(float))
             if "rounds_after" in held_out.columns else np.zeros(len(err)))
    forward = np.isfinite(err) & (after > 0)
    ok = np.isfinite(err) & ~forward
    by = {}
    for k in BASIS_KINDS:
        use = ok & (kind == k)
        if use.sum() < 3:
            continue
        by[k] = _widths(err[use], rounds[use], level)
    beyond = ok & (reach > 0) & np.isin(kind, list(by))
    per = 0.0
    if beyond.any():
        w_lo = np.array([by[k][0] for k in kind[beyond]])
        w_hi = np.array([by[k][1] for k in kind[beyond]])
        per = next((c for c in _WIDEN
                    if _inside(err[beyond], w_lo, w_hi, c * reach[beyond]).mean() >= level),
                   _WIDEN[-1])
    by_distance = {}
    steps = np.floor(after + 1e-9)
    for k in by:
        per_k = {}
        for d in DISTANCES:
            use = forward & (kind == k) & (steps == d)
            if use.sum() < _MIN_DISTANCE_ROWS:
                break  # a farther distance is not measured without the nearer one
            # a later round's software only makes runs faster than the model knows: the low
            # end is never narrower than the nearer distance's
            floor = (per_k.get(int(d) - 1) or by[k])[0]
            per_k[int(d)] = _widths(err[use], rounds[use], level, floor=floor)
        if per_k:
            by_distance[k] = per_k
    # beyond the farthest distance, the low end keeps widening by the step it took from the
    # nearer distance to the farthest (the largest over bases: the software of each further
    # round; never negative)
    stepped = [per_k[max(per_k)][0] - (per_k.get(max(per_k) - 1) or by[k])[0]
               for k, per_k in by_distance.items()]
    per_round = round(max(max(stepped), 0.0), 6) if stepped else 0.0
    measured = reach[np.isfinite(err) & np.isfinite(reach)]
    max_reach = round(float(measured.max()), 6) if measured.size else 0.0
    return IntervalTable(by_basis=by, per_doubling=float(per), per_round=float(per_round),
                         level=level, source=source, by_distance=by_distance,
                         max_reach=max_reach)
