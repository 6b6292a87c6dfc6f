"""The schema of a model file (``--model``, ``calibrate -o``), declared as data.

A model file may have been edited by hand or written by another program: every field the
prediction reads is declared here with its JSON type, and the parts a fitted model needs
(``fit`` and the domain it was fitted on) are required, so :func:`check_model_file` refuses a
wrong file in one line before any of it is used, after the manner of ``summary.json``
(:mod:`gpurank.engine.summary_schema`). The ranges of the model's parameters are those of
:attr:`CalibratedModel.parameter_constraints
<gpurank.engine.sources.model.perfmodel.CalibratedModel>`, checked when the model is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...summary_schema import (
    Bool,
    Int,
    List,
    Map,
    Maybe,
    Num,
    Obj,
    Scalar,
    SchemaMismatch,
    Str,
    check_against,
)

__all__ = ["MODEL_SCHEMA", "FIT_DOMAIN", "Span", "check_model_file", "MAX_FITTED"]

#: The largest global batch or accelerator count a fitted domain may name: the integers a
#: float64 holds exactly (a domain is written as floats).
MAX_FITTED = 2.0**53


@dataclass(frozen=True)
class Span:
    """``[low, high]``: two finite numbers in ``[least, most]`` with ``low <= high``."""

    least: float
    most: float

    def check(self, v, where):
        ok = (isinstance(v, list) and len(v) == 2
              and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))
        if ok:
            lo, hi = float(v[0]), float(v[1])
            ok = self.least <= lo <= hi <= self.most
        if not ok:
            raise SchemaMismatch(where, self.describe(), v)

    def describe(self):
        return (f"a range [low, high] of two numbers with {self.least:g} <= low <= high <= "
                f"{self.most:g}")


#: The domain a fit covers: what "beyond the fitted range" notes and intervals rest on.
FIT_DOMAIN = Obj({
    "global_batch": Span(1.0, MAX_FITTED),
    "n_accelerators": Span(1.0, MAX_FITTED),
    "families": List(Str()),
    "rounds": Maybe(List(Str())),
}, required=("global_batch", "n_accelerators"))

_NUMBERS = ("compute_efficiency_default", "family_prior_sd", "vendor_prior_sd",
            "step_latency_s", "narrow_fraction", "arithmetic_intensity", "mem_efficiency",
            "mem_overlap", "comm_efficiency", "overlap", "overhead_s", "batch_half",
            "cpu_decode_rate", "dali_decode_rate", "dali_gpu_overhead", "latency_intra_s",
            "latency_inter_s", "tcp_efficiency", "noise_sigma", "epochs_noise_sigma",
            "idle_power_frac", "software_trend_shared", "software_trend_rounds",
            "software_trend_decay", "power_exponent")

#: A model file: every field's JSON type; ``fit`` required, and its parts typed.
MODEL_SCHEMA = Obj({
    "format": Str(), "version": Int(),
    **{name: Num() for name in _NUMBERS},
    "compute_efficiency_by_family": Map(Num()),
    "compute_efficiency_by_vendor": Map(Num()),
    "generation_by_family": Map(Str()),
    "compute_efficiency_shared": Maybe(Num()),
    "software_trend_by_vendor": Map(Num()),
    "software_first_round_by_family": Map(Str()),
    "software_round": Maybe(Str()),
    "software_trend_from": Maybe(Str()),
    "allreduce": Str(), "workload": Str(),
    "fit": Obj({
        "domain": FIT_DOMAIN,
        "n_rows": Int(0), "n_train": Int(0), "n_usable": Int(0),
        "rows_per_family": Map(Int(0)), "skipped": Map(Int(0)),
        "success": Bool(), "cost": Maybe(Num(0.0)),
        "train_rounds": Maybe(List(Str())), "test_rounds": Maybe(List(Str())),
        "at_bound": List(Scalar()),
    }),
})


def check_model_file(raw: dict, *, what: str) -> None:
    """Check a parsed model file's types and required parts.

    A model that states fitted efficiencies (per family, per vendor or shared) must carry
    its ``fit`` with the ``domain`` it was fitted on: without it every row would say
    ``fitted`` with none of the "beyond the fitted range" notes and intervals.

    Raises
    ------
    DataError
        ``{what}: field 'fit.domain.global_batch' must be ...; it holds ...``.
    """
    check_against(MODEL_SCHEMA, raw, what=what)
    fitted = bool(raw.get("compute_efficiency_by_family") or raw.get(
        "compute_efficiency_by_vendor") or raw.get("compute_efficiency_shared") is not None)
    required = Obj({"fit": Obj({"domain": FIT_DOMAIN}, required=("domain",) if fitted else ())},
                   required=("fit",))
    check_against(required, raw, what=what)
