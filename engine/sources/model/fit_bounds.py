"""The box the performance model's fit moves in: one row per fitted parameter, each with
the coordinate the optimizer moves it in, its bounds and the reason for them.

docs/simulator.md states the same table (``calibrate --report`` writes it), and the report
names every parameter that ends on a bound with its row's reason (:func:`bound_source`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["FitBound", "FIT_BOUNDS", "START_CLIPS", "TREND_PRIOR_SD", "NARROW_FRACTION_PRIOR",
           "bound_source"]

#: Bounds of the per-pass latency (seconds): a kernel launch is a few microseconds, a step
#: of a large model launches thousands of them.
_LATENCY_BOUNDS = (1e-5, 0.2)


@dataclass(frozen=True)
class FitBound:
    """One side of the fit's box: a parameter, the coordinate the optimizer moves it in
    (``logit`` of a fraction, ``log`` of a positive value, ``offset`` in logit from the
    shared efficiency), the bounds in that coordinate, and why they are where they are."""

    name: str
    coordinate: str
    lo: float
    hi: float
    reason: str

    def values(self) -> tuple[float, float]:
        """The bounds in the parameter's own units (an ``offset`` stays in logit)."""
        if self.coordinate == "logit":
            return float(1.0 / (1.0 + math.exp(-self.lo))), float(1.0 / (1.0 + math.exp(-self.hi)))
        if self.coordinate == "log":
            return math.exp(self.lo), math.exp(self.hi)
        return self.lo, self.hi


def _logit_of(v: float) -> float:
    return math.log(v / (1.0 - v))


#: The fit's box, one row per parameter, each with its reason (a reference key from
#: docs/references.md, a measurement in the shared data, or "estimate"). docs/simulator.md
#: states the same table; ``calibrate --report`` names every parameter that ends on a bound
#: with the bound's reason.
FIT_BOUNDS = {b.name: b for b in (
    FitBound("compute_efficiency_shared", "logit", _logit_of(0.01) - 1, _logit_of(0.99) + 1,
             "a fraction of the dense tensor peak: 1% to 99%, one logit unit wider so a start "
             "clipped to that range stays movable"),
    FitBound("compute_efficiency_offset", "offset", -8.0, 8.0,
             "a vendor's or family's logit offset from the shared efficiency: the prior "
             "(vendor_prior_sd, family_prior_sd 0.5) holds it; +-8 (16 prior SDs) only keeps "
             "the optimizer finite"),
    FitBound("comm_efficiency", "logit", -4.0, 6.0,
             "the achieved fraction of the links' bandwidth in the all-reduce: 1.8% (TCP, "
             "small messages) to 99.75% (NCCL's bus bandwidth near line rate on large "
             "messages; estimate)"),
    FitBound("overlap", "logit", -4.0, 6.0,
             "the fraction of the all-reduce hidden under the backward pass: 1.8% (serial) "
             "to 99.75% (bucketed all-reduce during backward [Li2020]); the model caps it at "
             "0.999"),
    FitBound("overhead_s", "log", math.log(0.5), math.log(600.0),
             "time per run outside the steps (evaluation, synchronisation): the shared "
             "rounds' evaluations take a median 9 s (ResNet-50) to 251 s (GPT-3) per run "
             "(runs.csv eval_time_s); 600 s is 2.4 times the largest median"),
    FitBound("batch_half", "log", math.log(0.5), math.log(256.0),
             "the per-pass batch at which small kernels halve the compute rate: half a "
             "sample to 256 samples (estimate: the shared rounds run 2 to 384 samples per "
             "accelerator, and a knee above 256 would leave every such batch half idle)"),
    FitBound("mem_overlap", "logit", -6.0, 6.0,
             "the fraction of the shorter of compute and memory time hidden under the "
             "longer: 0.25% (serial phases) to 99.75% (a pure roofline [Williams2009])"),
    FitBound("step_latency_s", "log", *map(math.log, _LATENCY_BOUNDS),
             "a fixed time per pass: a kernel launch is a few microseconds (10 us), a step of "
             "a large model launches thousands (0.2 s)"),
    FitBound("narrow_fraction", "logit", -6.0, 6.0,
             "the share of FLOPs at the narrow format's peak: 0.25% to 99.75% (FP8 GEMMs "
             "with BF16 elsewhere, Transformer Engine [Micikevicius2022])"),
    FitBound("power_exponent", "logit", -6.0, 6.0,
             "how a part's sustained compute follows its watts per peak FLOP/s over its "
             "family's: 0.25% (power does not limit the clock) to 99.75% (compute in "
             "proportion to power, the clock falling at a voltage floor); dynamic power "
             "C V^2 f with the voltage following the clock puts a power-limited part near "
             "1/3 [Horowitz2014]"),
    FitBound("software_trend", "offset", 0.0, 0.4,
             "the log of the compute efficiency a vendor's software gains per round: none "
             "(0; software does not get slower) to 0.4 (1.49 times in one round: the largest "
             "gain of a family between two rounds of the shared data, Stable Diffusion on 8 "
             "B200 from 19.5 min in v4.1 to 13.2 in v5.0); priors of 0.1 per round hold the "
             "shared trend near none and each vendor's near the shared one"),
    FitBound("software_trend_decay", "offset", 0.2, 1.0,
             "the share of a round's software gain left one round later: 1 (a trend that "
             "does not slow down) to 0.2 (a family's software mature after its second "
             "round); estimate"),
    FitBound("arithmetic_intensity", "log", math.log(5.0), math.log(2000.0),
             "FLOP per byte of memory traffic: 5 (element-wise kernels) to 2,000 (large "
             "GEMMs) [Williams2009] for a workload without a bytes estimate; a decade "
             "either side of its own estimate where it has one"),
)}
#: Where the starts are clipped: a family's start efficiency to [0.05, 0.95] (twice its
#: median achieved fraction of peak), its start offset to +-3 (logit), so no start lies on
#: the box.
START_CLIPS = {"efficiency": (0.05, 0.95), "offset": (-3.0, 3.0)}
#: The share of a step's FLOPs at the narrow format's peak (FP8, FP4) where a model's rows
#: hold one format and cannot measure it: the matrix products run narrow, the rest
#: (attention, normalisation, the optimizer, the layers a recipe keeps wide) does not
#: [Micikevicius2022]. 0.5 lies among the fits that measure it on rows of two formats
#: (GPT-3 175B 0.35, Llama 2 70B LoRA 0.55) and a 13B GPT's step on H100, 0.34 s in BF16
#: and 0.24 s in FP8 (0.59 [MegatronLM396]): a step at twice the peak runs 1.33 times as
#: fast, as Google states FP8 training on TPU7x does over BF16 (1.3 times [GoogleTPU7x]).
NARROW_FRACTION_PRIOR = 0.5
#: Prior SD of a vendor's software trend around the shared one (logit per round): vendors'
#: software moves at different speeds, but a vendor seen in one round only has none of its
#: own to show.
TREND_PRIOR_SD = 0.1


def bound_source(name: str) -> FitBound:
    """The :data:`FIT_BOUNDS` row of a fitted parameter's name as ``model.fit.at_bound``
    writes it (``compute_efficiency_by_family[H100]`` is an offset)."""
    if name.startswith(("compute_efficiency_by_family", "compute_efficiency_by_vendor")):
        return FIT_BOUNDS["compute_efficiency_offset"]
    if name in FIT_BOUNDS:
        return FIT_BOUNDS[name]
    return FIT_BOUNDS["software_trend"]  # software_trend_shared, software_trend_by_vendor[...]
