"""Which fitted families lend a family without calibration rows their compute efficiency.

A family a model has no rows of runs at the efficiency of its generation's fitted families
(one architecture runs one set of kernels: B300 takes B200's), but only of those in its
power class: parts of one generation that draw very different watts per dense TFLOP/s are
different products (an A100 at 1.1 W per TFLOP/s beside the A40, a PCIe card at 2.0, and
the A30 at 1.0), whose efficiencies differ for reasons the model does not hold. Without
lenders a family takes its vendor's efficiency (:meth:`.perfmodel.CalibratedModel.compute_efficiency_for`).
Its power headroom is then measured against the lenders' parts, whose efficiency it takes.
"""

from __future__ import annotations

import math

__all__ = ["POWER_CLASS_RATIO", "generation_lenders", "power_reference"]

#: The most a lender's watts per dense TFLOP/s (its family's median) may differ from the
#: borrower's, as a ratio: B300 (0.52) and B200 (0.46) are 1.13 apart, A100 (1.12) and A40
#: (2.0) 1.8, L4 (0.60) and L40 (1.31) 2.2. Leave-one-family-out on the shared rounds: all of
#: a generation lending, 15.9% at the median and 24% on ResNet-50 (A100 from the PCIe cards);
#: the vendor alone, 16.9% and 6.7%; within 1.5, 16.3% and 8.8%.
POWER_CLASS_RATIO = 1.5


def generation_lenders(model, family, generation, power) -> tuple:
    """The fitted families of ``generation`` within :data:`POWER_CLASS_RATIO` of ``family``'s
    watts per TFLOP/s (``power``: per family, from the catalog in use), sorted; none without
    ``power``, a generation, or a model that records its families' generations
    (``generation_by_family``)."""
    if not power or not isinstance(generation, str) or generation in ("", "nan"):
        return ()
    fitted = model.compute_efficiency_by_family
    return tuple(sorted(
        f for f, g in model.generation_by_family.items()
        if g == generation and f in fitted and f != family
        and _same_class(power.get(f), power.get(family))))


def _same_class(a, b) -> bool:
    """Whether two watts-per-TFLOP/s figures lie within :data:`POWER_CLASS_RATIO` (False
    where either is missing or not a positive number)."""
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        return False
    return max(a, b) <= POWER_CLASS_RATIO * min(a, b)


def power_reference(model, family, generation=None, power=None):
    """What a family's power headroom is measured against: itself when fitted or without
    lenders, else the tuple of its lenders (their efficiency, at their power)."""
    if family in model.compute_efficiency_by_family:
        return family
    return generation_lenders(model, family, generation, power) or family
