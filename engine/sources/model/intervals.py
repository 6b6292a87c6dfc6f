"""80% prediction intervals of time to train, from cross-validated errors.

A prediction's error depends on what it rests on (:func:`.predict.basis_kind`): a family the
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
    """

    by_basis: dict
    per_doubling: float
    per_round: float = 0.0
    level: float = INTERVAL_LEVEL
    source: str = ""
    by_distance: dict = field(default_factory=dict)

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
    widen = table.per_doubling * np.maximum(np.asarray(reach, dtype=float), 0.0)
    return np.exp(-(w_lo + widen + later)), np.exp(w_hi + widen)


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


def _held_out_coverage(err, rounds, nominal: float) -> float:
    """Share of ``err`` inside half-widths taken at ``nominal`` from the other rounds'
    errors (in-sample when there is one round)."""
    names = sorted(set(rounds))
    if len(names) < 2:
        return float(_inside(err, *_quantile_pair(err, nominal)).mean())
    hits = []
    for r in names:
        held = rounds == r
        if held.all() or (~held).sum() < 3:
            continue
        w_lo, w_hi = _quantile_pair(err[~held], nominal)
        hits.append(_inside(err[held], w_lo, w_hi))
    return float(np.concatenate(hits).mean()) if hits else 0.0


#: The distances (rounds after the latest calibration round) that get half-widths of their
#: own, and the fewest held-out rows a basis needs at a distance to get them.
DISTANCES = (1, 2)
_MIN_DISTANCE_ROWS = 10

#: The nominal levels tried for the half-widths, and the widenings per doubling.
_NOMINAL = tuple(np.round(np.arange(0.80, 0.991, 0.01), 2))
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

    The half-widths of each kind are quantiles of the log errors of its rows inside the
    fitted range, at the smallest nominal level (from ``level`` up) whose intervals hold
    ``level`` of each round's rows when taken from the other rounds' errors: errors of a new
    round spread wider than those of the rounds a fit saw, and the interval must hold for
    the new one. ``per_doubling`` is the smallest widening per doubling beyond the fitted
    range that holds ``level`` of the rows beyond it. The forward-in-time rows (those with
    ``rounds_after`` > 0) take no part in those: the rows of each basis :data:`DISTANCES`
    rounds ahead give that basis's half-widths at that distance, the same way
    (``by_distance``; a basis with fewer than 10 rows at a distance keeps the nearer
    distance's, widened by ``per_round``); ``per_round`` is the low end's step from the
    nearer to the farthest distance (median over bases).
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
        rows = ok & (kind == k)
        inside = rows & (reach <= 0)
        use = inside if inside.sum() >= 10 else rows
        if use.sum() < 3:
            continue
        nominal = next((q for q in _NOMINAL
                        if _held_out_coverage(err[use], rounds[use], q) >= level), _NOMINAL[-1])
        w_lo, w_hi = _quantile_pair(err[use], nominal)
        by[k] = (round(w_lo, 6), round(w_hi, 6), int(use.sum()))
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
            rows = forward & (kind == k) & (steps == d)
            inside = rows & (reach <= 0)
            use = inside if inside.sum() >= _MIN_DISTANCE_ROWS else rows
            if use.sum() < _MIN_DISTANCE_ROWS:
                break  # a farther distance is not measured without the nearer one
            nominal = next((q for q in _NOMINAL
                            if _held_out_coverage(err[use], rounds[use], q) >= level),
                           _NOMINAL[-1])
            w_lo, w_hi = _quantile_pair(err[use], nominal)
            per_k[int(d)] = (round(w_lo, 6), round(w_hi, 6), int(use.sum()))
        if per_k:
            by_distance[k] = per_k
    # beyond the farthest distance, the low end keeps widening by the step it took from the
    # nearer distance to the farthest (the median over bases; never negative)
    stepped = [per_k[max(per_k)][0] - (per_k.get(max(per_k) - 1) or by[k])[0]
               for k, per_k in by_distance.items()]
    per_round = round(max(float(np.median(stepped)), 0.0), 6) if stepped else 0.0
    return IntervalTable(by_basis=by, per_doubling=float(per), per_round=float(per_round),
                         level=level, source=source, by_distance=by_distance)
