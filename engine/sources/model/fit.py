"""Fit the performance model to measured runs (MLPerf): ``calibrate(table) -> CalibratedModel``.

The free parameters of one workload are fitted together by robust least squares on log
time-to-train (``soft_l1``, f_scale 0.1), from fixed starting values so a fit never depends
on an earlier one:

* the compute efficiency **shared across families** (the achieved fraction of the dense
  peak in the workload's training precision), and one **deviation per family** with rows,
  held near zero by a prior (``family_prior_sd`` on its logit): a family's software may be
  better or worse than the shared value, but only as far as its own rows show. A family
  without rows takes the shared value on its own hardware facts;
* the arithmetic intensity (unless the workload fixes it), the compute/memory overlap,
  communication efficiency and overlap, the per-run overhead, the batch knee and the
  per-pass latency, all shared.

``model.fit`` records the rows used and skipped, the parameters that ended on a bound, the
in-sample errors per family and the **domain** the fit covers (global batches, scales,
families), which :mod:`.predict` uses to flag extrapolations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...errors import DataError
from ...params import InstanceOf, check_param
from .inputs import REQUIRED_PREDICT_COLUMNS, model_inputs, safe_div, to_float
from .software import rounds_between, trend_rounds, with_software_gain
from ..facts.power import power_gain
from .fit_report import FitReport
from .model_arrays import ConfigArrays, RowFacts
from ..facts.mlperf_rules import round_ordinal
from .perfmodel import CalibratedModel, Workload
from .evaluation import fit_errors, model_outputs, predicted_times, workload_of
from .fit_bounds import (
    FIT_BOUNDS,
    NARROW_FRACTION_PRIOR,
    START_CLIPS,
    TREND_PRIOR_SD,
    FitBound,
    bound_source,
)

__all__ = ["calibrate", "usable_rows", "modelled_times", "REQUIRED_CALIBRATE_COLUMNS", "FIT_BOUNDS",
           "FitBound", "START_CLIPS", "bound_source"]

REQUIRED_CALIBRATE_COLUMNS = REQUIRED_PREDICT_COLUMNS + ("time_to_train_min",)
def usable_rows(t: pd.DataFrame, inputs, ttt, modelled=None) -> tuple[np.ndarray, dict]:
    """Rows a fit may use, and how many were skipped for each reason. ``modelled``: each
    row's time to train under the starting model; a row without a finite one (inputs so
    large or small that the model overflows) cannot be fitted."""
    skipped = {}
    usable = inputs.facts.valid.copy()
    skipped["accelerator not modelled or row incomplete"] = int((~usable).sum())
    if modelled is not None:
        finite = np.isfinite(modelled) & (modelled > 0)
        skipped["inputs out of the model's range"] = int((usable & ~finite).sum())
        usable &= finite
    timed = np.isfinite(ttt) & (ttt > 0)
    skipped["no measured time"] = int((usable & ~timed).sum())
    usable &= timed
    if "division" in t.columns:
        open_div = t["division"].astype(str).str.strip().str.lower().eq("open").to_numpy()
        skipped["open division (other rules than the benchmark)"] = int((usable & open_div).sum())
        usable &= ~open_div
    if "is_duplicate" in t.columns:
        dup = t["is_duplicate"].fillna(False).astype(bool).to_numpy()
        skipped["repeats an earlier system's runs"] = int((usable & dup).sum())
        usable &= ~dup
    # repeated results (same accelerator, count and score) count once
    key = pd.DataFrame(
        {
            "a": inputs.facts.accelerator_id,
            "n": inputs.cfg.n_accelerators,
            "t": np.round(np.nan_to_num(ttt), 4),
        }
    )
    rep = key.duplicated().to_numpy()
    skipped["same accelerator, count and time as an earlier row"] = int((usable & rep).sum())
    usable &= ~rep
    return usable, skipped


def modelled_times(inputs, model: CalibratedModel, workload: Workload) -> np.ndarray:
    """Each row's time to train under ``model`` (inf or NaN where its inputs overflow)."""
    with np.errstate(all="ignore"):
        out = model_outputs(inputs.cfg, inputs.facts, model, workload)
    return np.asarray(out["time_to_train_min"], float)


def _sigmoid(x):
    """The logistic function (maps an unbounded coordinate into (0, 1))."""
    return 1.0 / (1.0 + np.exp(-x))


def _logit(v):
    """The inverse of :func:`_sigmoid`, clipped so a start on the edge stays movable."""
    v = min(max(v, 0.01), 0.99)
    return math.log(v / (1 - v))


@dataclass(frozen=True)
class _FitRows:
    """The training rows as the residuals read them: configurations and measured times,
    each row's family, and each family's vendor."""

    families: list
    family_index: np.ndarray
    vendors: list
    family_vendor: np.ndarray
    cfg: ConfigArrays
    facts: RowFacts
    ttt: np.ndarray
    row_vendor: np.ndarray  # each row's index into vendors
    ahead: np.ndarray  # rounds from the latest training round to the row's (<= 0)
    age: np.ndarray  # rounds from the row's family's first training round to the latest
    latest_round: str | None  # the latest training round (None: the table has none)
    first_rounds: dict  # each family's first training round


@dataclass(frozen=True)
class _Coord:
    """One shared parameter as the optimizer sees it: a box-bounded coordinate and the map
    to the model's value."""

    name: str
    kind: str  # "logit" or "log"
    lo: float
    hi: float

    def value(self, x: float) -> float:
        if self.kind == "logit":
            return float(_sigmoid(x))
        return math.exp(x)

    def coordinate(self, v: float) -> float:
        if self.kind == "logit":
            return _logit(v)
        return math.log(v)


def _bound_coord(name: str) -> _Coord:
    b = FIT_BOUNDS[name]
    return _Coord(name, b.coordinate, b.lo, b.hi)


def _shared_coords(fit_intensity: bool, fit_narrow: bool, ai_lo: float, ai_hi: float,
                   fixed=(), *, fit_power: bool = False):
    """The shared parameters the fit moves, with their bounds (in coordinates); those named
    in ``fixed`` keep the base model's value."""
    coords = [_bound_coord(n) for n in ("comm_efficiency", "overlap", "overhead_s",
                                        "batch_half", "mem_overlap", "step_latency_s")]
    if fit_narrow:
        coords.append(_bound_coord("narrow_fraction"))
    if fit_power:
        coords.append(_bound_coord("power_exponent"))
    if fit_intensity:
        coords.append(_Coord("arithmetic_intensity", "log", math.log(ai_lo), math.log(ai_hi)))
    return tuple(c for c in coords if c.name not in fixed)


@dataclass(frozen=True)
class _ParamSpace:
    """The optimizer's coordinates: the shared efficiency's logit, one logit deviation per
    vendor, one per family (from its vendor's), then the shared parameters (logit or log, so every
    bound is a box)."""

    k: int
    family_vendor: np.ndarray
    coords: tuple
    trend: bool = False  # the rows span rounds: a shared and a per-vendor software trend

    @property
    def nv(self) -> int:
        return int(self.family_vendor.max()) + 1 if self.k else 0

    @property
    def n_trend(self) -> int:
        return self.nv + 2 if self.trend else 0

    def trends(self, theta):
        """The shared software trend, its decay per round of a family's age and each
        vendor's trend (logit per round)."""
        if not self.trend:
            return 0.0, 1.0, np.zeros(self.nv)
        t = theta[len(theta) - self.n_trend:]
        return float(t[0]), float(t[1]), np.asarray(t[2:])

    def unpack(self, theta):
        """Efficiencies per family and per vendor, the shared efficiency and the shared
        parameters."""
        k, nv = self.k, self.nv
        eta = theta[0]
        ven = theta[1: nv + 1]
        ef = _sigmoid(eta + ven[self.family_vendor] + theta[nv + 1: nv + k + 1])
        p = {c.name: c.value(x) for c, x in zip(self.coords,
                                                  theta[nv + k + 1: len(theta) - self.n_trend])}
        if "overlap" in p:
            p["overlap"] = min(p["overlap"], 0.999)
        return ef, _sigmoid(eta + ven), float(_sigmoid(eta)), p

    def priors(self, theta, model: CalibratedModel):
        """The prior residuals: a deviation of one prior SD costs what one row predicted
        f_scale (10%) off costs."""
        nv, k = self.nv, self.k
        shared, _decay, by_vendor = self.trends(theta)
        return np.concatenate([0.1 / model.vendor_prior_sd * theta[1: nv + 1],
                               0.1 / model.family_prior_sd * theta[nv + 1: nv + k + 1],
                               0.1 / TREND_PRIOR_SD * (by_vendor - shared),
                               [0.1 / TREND_PRIOR_SD * shared] if self.trend else []])

    def names(self, families, vendors) -> list[str]:
        """The model's name for each coordinate."""
        return (["compute_efficiency_shared"]
                + [f"compute_efficiency_by_vendor[{v}]" for v in vendors]
                + [f"compute_efficiency_by_family[{f}]" for f in families]
                + [c.name for c in self.coords]
                + (["software_trend_shared", "software_trend_decay"]
                   + [f"software_trend_by_vendor[{v}]" for v in vendors] if self.trend else []))


def _check_calibration_table(mlperf_table) -> None:
    """Refuse anything but a DataFrame holding the required columns."""
    check_param("mlperf_table", mlperf_table, InstanceOf(pd.DataFrame, "a pandas DataFrame"))
    missing = [c for c in REQUIRED_CALIBRATE_COLUMNS if c not in mlperf_table.columns]
    if missing:
        raise DataError(
            f"calibration table is missing column '{missing[0]}'; required columns are: "
            f"{', '.join(REQUIRED_CALIBRATE_COLUMNS)}"
        )


def _no_rows(t: pd.DataFrame, train_rounds) -> DataError:
    return DataError(
        f"calibration table has no usable rows (of {len(t)}) in train_rounds={train_rounds!r}; "
        "rows need an accelerator the catalog models, n_accelerators > 0 and a "
        "time_to_train_min > 0"
    )


def _training_mask(t: pd.DataFrame, usable: np.ndarray, train_rounds) -> np.ndarray:
    """The usable rows of the training rounds; an error when there are none."""
    in_train = usable.copy()
    if train_rounds is not None:
        in_train &= t["round"].astype(str).isin([str(r) for r in train_rounds]).to_numpy()
    if not in_train.any():
        raise _no_rows(t, train_rounds)
    return in_train


def _fit_rows(cfg: ConfigArrays, facts: RowFacts, in_train: np.ndarray,
              ttt: np.ndarray, rounds) -> _FitRows:
    """The training rows' slices of the configurations, with each row's family index and
    its rounds behind the latest training round."""
    fams = sorted(set(facts.family[in_train]))
    fam_idx = np.array([fams.index(f) if f in fams else -1 for f in facts.family])
    tr = np.flatnonzero(in_train)
    vendor_of = {f: v for f, v in zip(facts.family[tr], facts.vendor[tr])}
    vendors = sorted(set(vendor_of.values()))
    family_vendor = np.array([vendors.index(vendor_of[f]) for f in fams], dtype=np.int64)
    rounds = np.asarray(rounds[tr] if rounds is not None else [None] * len(tr), dtype=object)
    named = [r for r in rounds if round_ordinal(r) is not None]
    latest = str(max(named, key=round_ordinal)) if named else None
    ahead = rounds_between(latest, rounds)
    first = {}
    for f, r, a in zip(facts.family[tr], rounds, ahead):
        if round_ordinal(r) is not None and (f not in first or a < first[f][0]):
            first[f] = (a, str(r))
    age = np.array([-first[f][0] if f in first else 0.0 for f in facts.family[tr]], dtype=float)
    return _FitRows(
        families=fams,
        family_index=fam_idx[tr],
        vendors=vendors,
        family_vendor=family_vendor,
        cfg=cfg.take(tr),
        facts=facts.take(tr),
        ttt=ttt[tr],
        row_vendor=family_vendor[fam_idx[tr]] if len(tr) else np.zeros(0, dtype=np.int64),
        ahead=ahead,
        age=age,
        latest_round=latest,
        first_rounds={f: r for f, (_, r) in sorted(first.items())},
    )


def _headroom_varies(rows: _FitRows) -> bool:
    """Whether some family's training rows hold parts of different power headroom: what
    identifies ``power_exponent`` apart from the families' efficiencies."""
    log_h = pd.Series(np.log(rows.facts.power_headroom))
    spread = log_h.groupby(rows.family_index).agg(np.ptp) if len(log_h) else log_h
    return bool((spread > 0.05).any())


def _intensity_range(workload: Workload, base: CalibratedModel):
    """Start and bounds of the fitted intensity: the workload's own estimate starts the fit
    and widens the bounds."""
    ai_est = (
        workload.flops_per_sample / workload.bytes_per_sample
        if workload.bytes_per_sample
        else None
    )
    ai0 = (
        (ai_est or base.arithmetic_intensity)
        if workload.arithmetic_intensity is None
        else workload.arithmetic_intensity
    )
    if ai_est:
        # a decade either side of the workload's own estimate: a fit that leaves it further
        # is the intensity standing in for something else (a memory-bound Llama 2 70B LoRA
        # at 130 FLOP/B against its 7,750 would take its software's gains off the compute)
        return ai0, ai_est / 10.0, ai_est * 10.0
    lo, hi = FIT_BOUNDS["arithmetic_intensity"].values()
    return ai0, lo, hi


def _start_and_bounds(rows: _FitRows, base: CalibratedModel, workload: Workload, space,
                      ai0: float):
    """The optimizer's starting point and box bounds, ``(x0, lo, hi)``."""
    sub, fi, k = rows.cfg, rows.family_index, space.k
    # start the shared efficiency at twice the fraction of peak the runs achieve overall
    # (the compute term is part of the step), so no fit starts in the flat input-bound region
    thr_meas = safe_div(
        rows.facts.samples,
        np.maximum(rows.ttt * 60.0 - base.overhead_s, 1.0),
    )
    b_tr = sub.local_batch
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is a NaN of safe_div
        achieved = safe_div(
            thr_meas * workload.flops_per_sample * (b_tr + base.batch_half),
            sub.n_accelerators * sub.peak_tflops * 1e12 * b_tr,
        )
    raw = np.array([np.median(a[np.isfinite(a)]) if np.isfinite(a).any() else np.nan
                    for a in (achieved[fi == j] for j in range(k))])
    eff0 = (float(np.clip(2.0 * np.nanmedian(raw), *START_CLIPS["efficiency"]))
            if np.isfinite(raw).any()
            else float(base.compute_efficiency_default))
    dev0 = [_logit(_start_efficiency(achieved[fi == j], base)) - _logit(eff0)
            for j in range(k)]
    nv = space.nv
    start = {
        "comm_efficiency": base.comm_efficiency,
        "overlap": base.overlap,
        "overhead_s": max(base.overhead_s, 1.0),
        "batch_half": max(base.batch_half, 1.0),
        "mem_overlap": base.mem_overlap,
        "step_latency_s": min(max(base.step_latency_s, 1e-3),
                              FIT_BOUNDS["step_latency_s"].values()[1] / 2),
        "narrow_fraction": NARROW_FRACTION_PRIOR,
        "power_exponent": 0.3,
        "arithmetic_intensity": ai0,
    }
    shared, offset = FIT_BOUNDS["compute_efficiency_shared"], FIT_BOUNDS["compute_efficiency_offset"]
    trend, decay = FIT_BOUNDS["software_trend"], FIT_BOUNDS["software_trend_decay"]
    t0, tlo, thi = ([0.0, 0.6] + [0.0] * nv, [trend.lo, decay.lo] + [trend.lo] * nv,
                    [trend.hi, decay.hi] + [trend.hi] * nv) if space.trend else ([], [], [])
    x0 = np.concatenate([[_logit(eff0)], np.zeros(nv), np.clip(dev0, *START_CLIPS["offset"]),
                         [c.coordinate(start[c.name]) for c in space.coords], t0])
    lo = np.concatenate([[shared.lo], np.full(nv + k, offset.lo), [c.lo for c in space.coords],
                         tlo])
    hi = np.concatenate([[shared.hi], np.full(nv + k, offset.hi), [c.hi for c in space.coords],
                         thi])
    return x0, lo, hi


def _start_efficiency(achieved: np.ndarray, base: CalibratedModel) -> float:
    """Twice a family's median achieved fraction of peak, clipped to [0.05, 0.95]; the
    base's default where no run gives a finite fraction (inputs that overflow it)."""
    finite = achieved[np.isfinite(achieved)]
    if not finite.size:
        return float(base.compute_efficiency_default)
    return float(np.clip(2.0 * np.median(finite), *START_CLIPS["efficiency"]))


def _least_squares_fit(rows: _FitRows, start, workload: Workload, space, x0, lo, hi):
    """Robust least squares on log time-to-train, with the prior on the family deviations
    as extra residuals; scipy's result."""
    from scipy.optimize import least_squares

    y = np.log(rows.ttt)

    def resid(theta):
        ef, _ven, _shared, p = space.unpack(theta)
        _, decay, by_vendor = space.trends(theta)
        # a part's power headroom (facts/power.py) and its vendor's software between rounds
        gain = power_gain(rows.facts.power_headroom, p.get("power_exponent",
                                                           start.power_exponent))
        if space.trend:
            gain = gain + by_vendor[rows.row_vendor] * trend_rounds(
                rows.ahead, rows.age, decay, start.software_trend_rounds)
        eff = with_software_gain(ef[rows.family_index], gain)
        o = model_outputs(replace(rows.cfg, compute_efficiency=eff), rows.facts,
                          replace(start, **p), workload)
        return np.concatenate([np.log(o["time_to_train_min"]) - y,
                               space.priors(theta, start)])

    return least_squares(resid, np.clip(x0, lo + 1e-9, hi - 1e-9), bounds=(lo, hi),
                         loss="soft_l1", f_scale=0.1)


def _fit_with_trend(rows: _FitRows, start, workload: Workload, space, x0, lo, hi):
    """The model without a trend first; then, with its shared parameters (links, overlap,
    overhead, ...) held, the efficiencies and the software trend together.

    Fitted all at once, a trend can trade the rounds' software against the links and the
    overlap (later rounds ran larger systems) and end with a physically absurd network
    efficiency; the trend is meant to explain what the physics leaves between rounds.
    Returns the combined solution in ``space``'s coordinates (``x``, ``cost``, ``success``).
    """
    nt, nc = space.n_trend, len(space.coords)
    ne = len(x0) - nt - nc  # the efficiencies: shared, per vendor, per family
    flat = replace(space, trend=False)
    first = _least_squares_fit(rows, start, workload, flat, x0[:-nt], lo[:-nt], hi[:-nt])
    _, _, _, held = flat.unpack(first.x)
    eff_only = replace(space, coords=())
    keep = np.r_[0:ne, ne + nc:len(x0)]
    x1 = np.concatenate([first.x[:ne], x0[ne + nc:]])
    second = _least_squares_fit(rows, replace(start, **held), workload, eff_only, x1,
                                lo[keep], hi[keep])
    x = np.concatenate([second.x[:ne], first.x[ne:], second.x[ne:]])
    return _Solution(x=x, cost=float(second.cost), success=bool(first.success and second.success))


@dataclass(frozen=True)
class _Solution:
    """A fit's optimum, as scipy's result gives the parts the report reads."""

    x: np.ndarray
    cost: float
    success: bool


def _at_bound(names, x, lo, hi) -> list[str]:
    """Parameters that ended within a thousandth of their range of a bound."""
    span = hi - lo
    return [nm for nm, v, a, b_, s in zip(names, x, lo, hi, span) if min(v - a, b_ - v) < 1e-3 * s]


def _bound_sides(names, x, lo, hi) -> dict:
    """For each parameter on a bound: which side, the bound's value and its reason."""
    out = {}
    on = set(_at_bound(names, x, lo, hi))
    for nm, v, a, b_ in zip(names, x, lo, hi):
        if nm not in on:
            continue
        side = "low" if v - a < b_ - v else "high"
        bound = bound_source(nm)
        at = a if side == "low" else b_
        if bound.coordinate == "logit":
            at = 1.0 / (1.0 + math.exp(-at))
        elif bound.coordinate == "log":
            at = math.exp(at)
        out[nm] = {"side": side, "value": float(f"{at:.6g}"), "reason": bound.reason}
    return out


def _generations(rows: _FitRows) -> dict:
    """Each fitted family's catalog generation (a family without one left out)."""
    out = {}
    for f, g in zip(rows.facts.family, rows.facts.generation):
        if isinstance(g, str) and g and g != "nan" and f in rows.families:
            out.setdefault(str(f), g)
    return dict(sorted(out.items()))


def _fitted_model(base, rows: _FitRows, space, sol, workload):
    """The model at the optimum, rounded as the model file stores it, and the training rows
    per family."""
    ef, ven, shared, p = space.unpack(sol.x)
    trend_shared, decay, trend_by_vendor = space.trends(sol.x)
    fams, fi = rows.families, rows.family_index
    rows_per_family = {f: int((fi == j).sum()) for j, f in enumerate(fams)}
    digits = {"overhead_s": 4, "step_latency_s": 8}
    rounded = {kk: round(v, digits.get(kk, 6)) for kk, v in p.items()}
    model = replace(
        base,
        compute_efficiency_by_family={f: round(float(v), 6) for f, v in zip(fams, ef)},
        compute_efficiency_shared=round(shared, 6),
        compute_efficiency_by_vendor={v: round(float(e), 6) for v, e in zip(rows.vendors, ven)},
        generation_by_family=_generations(rows),
        software_trend_shared=round(trend_shared, 6),
        software_trend_by_vendor=({v: round(float(e), 6) for v, e in zip(rows.vendors, trend_by_vendor)}
                                  if space.trend else {}),
        software_round=rows.latest_round,
        software_trend_decay=round(decay, 6),
        software_first_round_by_family=dict(rows.first_rounds),
        workload=workload.name,
        fit=FitReport(),
        **rounded,
    )
    return model, rows_per_family


def _domain(rows: _FitRows, rounds) -> dict:
    """What the fit covers: global batches, accelerator counts, families and the MLPerf
    rounds of its rows (the software they ran; none for a table without rounds)."""
    gb = rows.facts.global_batch
    n = rows.cfg.n_accelerators
    gb = gb[np.isfinite(gb) & rows.facts.global_batch_given]
    names = sorted({str(r) for r in rounds if round_ordinal(r) is not None},
                   key=round_ordinal)
    return {
        "global_batch": [float(gb.min()), float(gb.max())] if len(gb) else None,
        "n_accelerators": [float(np.nanmin(n)), float(np.nanmax(n))],
        "families": list(rows.families),
        "rounds": names,
    }


def _error_report(pred: pd.DataFrame, trmask: np.ndarray, test_rounds) -> dict:
    """Errors per family on the training rows and, with ``test_rounds``, the held-out rows."""
    report = {"train_errors": fit_errors(pred[trmask]).to_dict(orient="records")}
    if test_rounds is not None:
        te = pred["round"].astype(str).isin([str(r) for r in test_rounds]).to_numpy()
        report["n_test"] = int(te.sum())
        report["test_errors"] = fit_errors(pred[te]).to_dict(orient="records")
        nv = te & pred["accelerator_id"].astype(str).str.startswith("nvidia").to_numpy()
        report["test_errors_nvidia"] = fit_errors(pred[nv]).to_dict(orient="records")[-1]
    return report


def calibrate(
    mlperf_table,
    *,
    train_rounds=None,
    test_rounds=None,
    base: CalibratedModel | None = None,
    workload: Workload | None = None,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
    fixed=(),
) -> CalibratedModel:
    """Fit the model's free parameters to measured runs.

    Parameters
    ----------
    mlperf_table : DataFrame
        Canonical columns (:mod:`.configs`) with measured ``time_to_train_min``. Rows are
        skipped (and counted in ``model.fit.skipped``) without a finite time > 0, when
        :func:`.configs.model_inputs` refuses them (an accelerator the catalog does not
        model, no count, an inconsistent topology, ...), from the open division, flagged
        ``is_duplicate``, or repeating an earlier row's accelerator, count and time.
    train_rounds, test_rounds : list of str, optional
        Values of the ``round`` column to fit on and to report held-out errors on. By default
        every row is fitted and the report is in-sample.
    base : CalibratedModel, optional
        Starting values and the fixed (unfitted) parameters (``family_prior_sd``,
        ``mem_efficiency``, the decode rates, ...); ``CalibratedModel()`` when omitted, so a
        fit never depends on an earlier fit.
    workload : Workload, optional
        The table's ``benchmark``'s workload, else ResNet-50. A workload with an
        ``arithmetic_intensity`` keeps it fixed; otherwise the intensity is fitted, from
        the workload's ``flops_per_sample / bytes_per_sample`` estimate when it has one.
    accelerator_table, interconnect_table, host_cpu_table : path or DataFrame, optional
        Catalogs in place of the built-in ones.
    fixed : sequence of str
        Shared parameters held at ``base``'s value rather than fitted (``step_latency_s``,
        ``narrow_fraction``, ...: a parameter measured elsewhere).

    Fitted: ``compute_efficiency_shared`` and ``compute_efficiency_by_family`` (the shared
    value times each family's deviation), ``arithmetic_intensity``, ``mem_overlap``,
    ``comm_efficiency``, ``overlap``, ``overhead_s``, ``batch_half``, ``step_latency_s``.
    ``model.fit`` holds the report: rows used and skipped, the optimizer's cost, parameters
    that ended on a bound, the errors per family and the fitted ``domain``.
    """
    _check_calibration_table(mlperf_table)
    base = CalibratedModel() if base is None else base
    workload = workload_of(mlperf_table, workload, None)
    t = mlperf_table.reset_index(drop=True)
    if (train_rounds is not None or test_rounds is not None) and "round" not in t.columns:
        raise DataError(
            "calibration table has no column 'round'; it is required with train_rounds/test_rounds"
        )
    if len(t) == 0:
        raise _no_rows(t, train_rounds)
    ttt = to_float(t["time_to_train_min"])
    kw = dict(
        accelerator_table=accelerator_table,
        interconnect_table=interconnect_table,
        host_cpu_table=host_cpu_table,
    )
    ai0, ai_lo, ai_hi = _intensity_range(workload, base)
    # the start is a model of this workload at the workload's intensity, so the residuals
    # see the intensity the fitted model stores and predicts with (a model of another
    # workload would read the workload's bytes estimate, and the fitted intensity would
    # move nothing the fit scores)
    start = replace(base, compute_efficiency_by_family={}, compute_efficiency_shared=None,
                    compute_efficiency_by_vendor={}, workload=workload.name,
                    arithmetic_intensity=ai0)
    inputs = model_inputs(t, start, workload, **kw)
    usable, skipped = usable_rows(t, inputs, ttt, modelled_times(inputs, start, workload))
    in_train = _training_mask(t, usable, train_rounds)
    rows = _fit_rows(inputs.cfg, inputs.facts, in_train, ttt,
                     t["round"].to_numpy(dtype=object) if "round" in t.columns else None)
    # the share at the narrow peak is identified only by rows whose narrow peak stands in
    # different ratios to the wide one (FP8 and BF16 rows, FP4 and FP8 rows)
    ratio = np.log(np.asarray(rows.cfg.narrow_peak_tflops, float)
                   / np.asarray(rows.cfg.peak_tflops, float))
    ratio = ratio[np.isfinite(ratio)]
    mixed = bool(ratio.size and np.ptp(ratio) > 0.05)
    space = _ParamSpace(k=len(rows.families), family_vendor=rows.family_vendor,
                        coords=_shared_coords(
        workload.arithmetic_intensity is None, mixed, ai_lo, ai_hi, tuple(fixed),
        fit_power=_headroom_varies(rows)),
                        trend=bool((rows.ahead < 0).any()) and "software_trend" not in fixed)
    x0, lo, hi = _start_and_bounds(rows, base, workload, space, ai0)
    sol = (_fit_with_trend(rows, start, workload, space, x0, lo, hi) if space.trend
           else _least_squares_fit(rows, start, workload, space, x0, lo, hi))
    model, rows_per_family = _fitted_model(start, rows, space, sol, workload)

    pred = predicted_times(t[usable], model, workload, **kw)
    report = FitReport(
        n_rows=int(len(t)),
        n_usable=int(usable.sum()),
        n_train=int(in_train.sum()),
        skipped={r: c for r, c in skipped.items() if c},
        rows_per_family=rows_per_family,
        train_rounds=None if train_rounds is None else [str(r) for r in train_rounds],
        test_rounds=None if test_rounds is None else [str(r) for r in test_rounds],
        cost=float(sol.cost),
        success=bool(sol.success),
        at_bound=_at_bound(space.names(rows.families, rows.vendors), sol.x, lo, hi),
        bounds=_bound_sides(space.names(rows.families, rows.vendors), sol.x, lo, hi),
        domain=_domain(rows, t["round"].to_numpy(dtype=object)[in_train]
                       if "round" in t.columns else ()),
        **_error_report(pred, in_train[usable], test_rounds),
    )
    return replace(model, fit=report)
