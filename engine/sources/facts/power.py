"""Sustained compute under a part's power limit: the parts of one family differ in watts per
FLOP/s of peak.

The parts of a family share their silicon and the clock their datasheet peak is quoted at,
not their power limit: an MI325X has 1,000 W for the 1,307 dense BF16 TFLOP/s an MI300X runs
at 750 W; an MI355X 1,400 W where an MI350X has 1,000 W for 8% less peak. Under a sustained
matrix load a chip runs at the clock its power limit allows (dynamic power grows faster than
the clock, the voltage rising with it), so the part with more watts per peak FLOP/s sustains
more of its peak. :func:`power_headroom` is a part's watts per dense wide-format TFLOP/s
over the median of its family's parts in the catalog; the model moves a row's compute
efficiency by ``headroom ** power_exponent`` (``CalibratedModel.power_exponent``, fitted
where a workload's rows hold one family's parts at different headroom; 0 moves nothing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hardware import positive_numbers

__all__ = ["family_watts_per_tflops", "wide_peak", "power_headroom", "power_gain", "power_note",
           "NOTE_THRESHOLD"]

#: A row's note names its power headroom where it moves the compute rate by more than this
#: share (3%: the run-to-run spread of a benchmark's throughput is about 2-4%).
NOTE_THRESHOLD = 0.03


def wide_peak(frame: pd.DataFrame) -> np.ndarray:
    """Each catalog row's dense wide-format peak (TFLOP/s): BF16, else FP16; NaN where
    neither is given."""
    def column(name):
        return positive_numbers(frame[name]) if name in frame else np.full(len(frame), np.nan)

    bf16, fp16 = column("bf16_dense_tflops"), column("fp16_dense_tflops")
    return np.where(np.isnan(bf16), fp16, bf16)


def _part_watts_per_tflops(catalog: pd.DataFrame) -> pd.DataFrame:
    """Each catalog part's family and watts per dense wide TFLOP/s (``family``, ``r``),
    the parts that give both."""
    if "family" not in catalog.columns or "tdp_w" not in catalog.columns:
        return pd.DataFrame({"family": pd.Series(dtype=str), "r": pd.Series(dtype=float)})
    ratio = positive_numbers(catalog["tdp_w"]) / wide_peak(catalog)
    frame = pd.DataFrame({"family": catalog["family"].astype(str).to_numpy(), "r": ratio})
    return frame[np.isfinite(frame["r"])]


def family_watts_per_tflops(catalog: pd.DataFrame) -> dict:
    """The median over each family's catalog parts of watts per dense wide TFLOP/s (families
    whose parts give both)."""
    return _part_watts_per_tflops(catalog).groupby("family")["r"].median().to_dict()


def power_headroom(tdp, wide, family, catalog: pd.DataFrame) -> np.ndarray:
    """Each row's watts per dense wide TFLOP/s over its family's median in ``catalog``
    (or the median of the pooled families' parts).

    Parameters
    ----------
    tdp, wide : array
        The row's power limit (W) and dense BF16 (else FP16) peak (TFLOP/s).
    family : sequence of str or tuple
        The row's accelerator family (the catalog's ``family``), or a tuple of families
        whose parts are pooled (a family without rows measured against those it borrows
        its efficiency from).
    catalog : DataFrame
        The accelerator catalog in use (``tdp_w``, ``bf16_dense_tflops``/``fp16_dense_tflops``,
        ``family``).

    Returns
    -------
    ndarray
        1 where a row's power, peak or family reference is unknown (nothing to move).
    """
    parts = _part_watts_per_tflops(catalog)
    ref = parts.groupby("family")["r"].median().to_dict()
    own = positive_numbers(tdp) / positive_numbers(wide)

    def reference(f):
        if isinstance(f, tuple):  # several families pooled: their parts' median, once each
            if f not in ref:
                r = parts["r"][parts["family"].isin([str(x) for x in f])]
                ref[f] = float(r.median()) if len(r) else np.nan
            return ref[f]
        return ref.get(str(f), np.nan)

    base = np.array([reference(f) for f in family], dtype=float).reshape(own.shape)
    out = own / base
    return np.where(np.isfinite(out) & (out > 0), out, 1.0)


def power_gain(headroom, exponent: float) -> np.ndarray:
    """The log gain of compute efficiency a headroom gives: ``exponent * log(headroom)``
    (0 where the headroom is not a positive number)."""
    h = np.asarray(headroom, dtype=float)
    safe = np.where(np.isfinite(h) & (h > 0), h, 1.0)
    return float(exponent) * np.log(safe)


def power_note(headroom: float, exponent: float, tdp: float, wide: float,
               reference=None) -> str:
    """The note of a row whose power headroom moves its compute rate by more than
    :data:`NOTE_THRESHOLD`; ``""`` otherwise. ``reference`` is a tuple of the families its
    headroom is measured against where they are not its own (:func:`power_headroom`)."""
    factor = float(np.exp(power_gain(headroom, exponent)))
    if not abs(factor - 1.0) > NOTE_THRESHOLD:
        return ""
    whose = (f"{', '.join(map(str, reference))}'s" if isinstance(reference, tuple)
             else "its family's")
    return (f"sustained compute x{factor:.2f} of {whose}: {tdp:,.0f} W for {wide:,.0f} "
            f"dense TFLOP/s, {headroom:.2f} times {whose} median watts per TFLOP/s "
            f"(power_exponent {exponent:.2f})")
