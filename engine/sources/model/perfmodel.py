"""Performance model of data-parallel training: the equations, written once against ``xp``.

Every function here takes arrays (one element per configuration) and an array module ``xp``
(numpy by default; cupy has the same names) and uses only ``+ - * / sqrt minimum maximum
where`` on the per-row path, so results are identical bit for bit on any IEEE-754 machine.
Transcendental functions (log for the epochs curve) are evaluated with Python's ``math`` on
the few distinct batch sizes, never per row. The equations and the source of every constant
are in ``docs/simulator.md``.
"""

from __future__ import annotations

import json
from copy import deepcopy
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import ClassVar

import numpy as np

from ...errors import DataError, UsageError
from ...input_files import read_json
from ...io import to_jsonable, write_text
from ...params import (
    FRACTION,
    FRACTION_OPEN,
    NON_NEGATIVE,
    POSITIVE,
    TEXT,
    InstanceOf,
    Interval,
    Mapping,
    Options,
    check_fields,
)
from .fit_bounds import NARROW_FRACTION_PRIOR
from .fit_report import FitReport
from .lenders import generation_lenders
from .model_arrays import ConfigArrays
from .model_schema import check_model_file
from .software import software_gain
from .workload import IMAGENET_TRAIN_SAMPLES, Workload, resnet50

__all__ = ["Workload", "CalibratedModel", "resnet50", "DEFAULT_MODEL", "evaluate", "mixed_peak",
           "IMAGENET_TRAIN_SAMPLES", "MODEL_VERSION", "MEM_EFFICIENCY", "HOST_COPY_EFFICIENCY",
           "NARROW_FRACTION_PRIOR"]


#: Achieved fraction of a host link's nominal bandwidth in host-to-device copies (PCIe DMA
#: reaches about 80% of the link rate after protocol overhead; estimate).
HOST_COPY_EFFICIENCY = 0.8
#: Host-to-accelerator bandwidth per accelerator (GB/s per direction) when a configuration
#: does not give one: PCIe 4.0 x16, 32 GB/s nominal, at ``HOST_COPY_EFFICIENCY``.
DEFAULT_HOST_GBPS = 32.0 * HOST_COPY_EFFICIENCY
#: A software trend: the log of the compute efficiency gained per round (0: none; 1 would be
#: 2.7 times in one round, far beyond any measured gain).
TREND = Interval(float, 0, 1)
#: Version of the model file format: 1 was the compute-only model, 2 the roofline model with
#: one efficiency per family borrowed by families without data, 3 adds the efficiency shared
#: across families, the per-pass latency and the workload's training precision.
MODEL_VERSION = 3
#: Model files larger than this are refused before they are read (a model is a few KB).
MAX_MODEL_BYTES = 16 << 20
#: Achieved fraction of the peak memory bandwidth (STREAM-like kernels reach about 88-90% of
#: the datasheet figure, [A100Bandwidth] in docs/references.md). Only
#: ``arithmetic_intensity x mem_efficiency`` is identified by a fit.
MEM_EFFICIENCY = 0.90


@dataclass(frozen=True)
class CalibratedModel:
    """Free parameters of the performance model; fitted by ``calibrate`` or the defaults.

    ``compute_efficiency_by_family`` maps an accelerator family (``family`` column of the
    accelerator catalog) to the achieved fraction of its dense tensor peak (in the precision
    the workload trains in) while computing: the compute term of the roofline; the memory
    term, the per-pass latency and the communication are separate and shared by every
    family. ``compute_efficiency_shared`` is the efficiency the fit shares across families:
    each fitted family's value is this shared one times a factor the fit keeps near 1 unless
    the family's rows demand otherwise (a prior of ``family_prior_sd`` on its logit), through
    its vendor's value (``compute_efficiency_by_vendor``: the vendor's software, a prior of
    ``vendor_prior_sd``). A family without rows uses the value of its generation's fitted
    families in its power class (``generation_by_family``, :mod:`.lenders`: one
    architecture runs one set of kernels; B300 takes B200's), else its vendor's, else the
    shared one for a vendor without rows, on its own hardware facts (peak, memory
    bandwidth, scale-up domain): ``borrowed:<family>``, ``borrowed:<vendor>`` or
    ``borrowed:shared``. ``compute_efficiency_default`` is used only by a model with neither
    (a hand-set model: ``assumed``).
    :meth:`compute_efficiency_for` returns the value and its basis. A part of a family moves
    it by ``headroom ** power_exponent``: its watts per peak FLOP/s over its family's median
    (:mod:`~gpurank.engine.sources.facts.power`; an MI325X sustains more of the MI300X's peak).
    """

    compute_efficiency_by_family: dict = field(default_factory=dict)
    compute_efficiency_shared: float | None = None  # fitted across families
    compute_efficiency_by_vendor: dict = field(default_factory=dict)  # a vendor's software
    generation_by_family: dict = field(default_factory=dict)  # each fitted family's catalog generation
    compute_efficiency_default: float = 0.40
    family_prior_sd: float = 0.5  # prior SD of a family's logit deviation from its vendor
    vendor_prior_sd: float = 0.5  # prior SD of a vendor's logit deviation from the shared value
    step_latency_s: float = 0.0  # per pass over a micro-batch: launches, syncs (fitted)
    # at the narrow (fp8/fp4) peak, the rest at bf16; fitted where the rows mix formats
    narrow_fraction: float = NARROW_FRACTION_PRIOR
    power_exponent: float = 0.0  # efficiency x headroom ** it (facts/power.py; fitted)
    arithmetic_intensity: float = 100.0  # FLOPs per byte of memory traffic (fitted)
    mem_efficiency: float = MEM_EFFICIENCY  # achieved / peak memory bandwidth (sourced)
    mem_overlap: float = 0.5  # fraction of the shorter of compute/memory time hidden
    comm_efficiency: float = 0.80  # achieved / nominal link bandwidth in the all-reduce
    overlap: float = 0.70  # fraction of the all-reduce hidden behind backward
    overhead_s: float = 20.0  # per run: evaluation, sync, ramp-up (run_start..stop)
    batch_half: float = 8.0  # per-accelerator batch at which compute runs at half rate
    cpu_decode_rate: float = 200.0  # images/s per host core, CPU JPEG decode + augment
    dali_decode_rate: float = 1200.0  # images/s per host core when the GPU decodes (DALI)
    dali_gpu_overhead: float = 0.03  # extra GPU time for GPU-side decoding (fraction)
    latency_intra_s: float = 5e-6  # per all-reduce step inside a node
    latency_inter_s: float = 2e-5  # per all-reduce step between nodes
    tcp_efficiency: float = 0.70  # non-RDMA networks reach this fraction of line rate
    allreduce: str = "hierarchical"  # or "ring"
    noise_sigma: float = 0.04  # run-to-run spread of throughput (simulate only)
    epochs_noise_sigma: float = 0.025  # run-to-run spread of epochs to converge
    idle_power_frac: float = 0.30  # accelerator power at 0% busy, fraction of TDP
    # the software trend: log of the compute efficiency gained per MLPerf round, per vendor
    # (fitted across its families), shared across vendors for one without its own
    software_trend_by_vendor: dict = field(default_factory=dict)
    software_trend_shared: float = 0.0
    software_trend_decay: float = 1.0  # the trend's share left each round a family ages
    software_first_round_by_family: dict = field(default_factory=dict)  # its first fitted
    software_round: str | None = None  # the round the efficiencies are of (latest fitted)
    software_trend_rounds: float = 2.0  # rounds ahead the trend is extrapolated, at most
    software_trend_from: str | None = None  # the workload a fit of one round took its trend from
    workload: str = "resnet50"
    fit: FitReport = field(default_factory=FitReport)  # calibration report (a dict is read)

    parameter_constraints: ClassVar[dict] = {
        "compute_efficiency_default": (FRACTION_OPEN,),
        "family_prior_sd": (POSITIVE,),
        "vendor_prior_sd": (POSITIVE,),
        "step_latency_s": (NON_NEGATIVE,),
        "narrow_fraction": (FRACTION,),
        "power_exponent": (FRACTION,),
        "arithmetic_intensity": (POSITIVE,),
        "mem_efficiency": (FRACTION_OPEN,),
        "mem_overlap": (FRACTION,),
        "comm_efficiency": (FRACTION,),
        "overlap": (FRACTION,),
        "overhead_s": (NON_NEGATIVE,),
        "batch_half": (NON_NEGATIVE,),
        "cpu_decode_rate": (NON_NEGATIVE,),
        "dali_decode_rate": (NON_NEGATIVE,),
        "dali_gpu_overhead": (NON_NEGATIVE,),
        "latency_intra_s": (NON_NEGATIVE,),
        "latency_inter_s": (NON_NEGATIVE,),
        "noise_sigma": (FRACTION,),
        "epochs_noise_sigma": (FRACTION,),
        "idle_power_frac": (FRACTION,),
        "tcp_efficiency": (FRACTION,),
        "allreduce": (Options(("hierarchical", "ring")),),
        "compute_efficiency_by_family": (Mapping(TEXT, FRACTION_OPEN),),
        "compute_efficiency_by_vendor": (Mapping(TEXT, FRACTION_OPEN),),
        "generation_by_family": (Mapping(TEXT, TEXT),),
        "fit": (InstanceOf(FitReport, "a FitReport (or a dict of its parts)"),),
        "compute_efficiency_shared": (None, FRACTION_OPEN),
        "software_trend_by_vendor": (Mapping(TEXT, TREND),),
        "software_trend_shared": (TREND,),
        "software_round": (None, TEXT),
        "software_trend_decay": (FRACTION_OPEN,),
        "software_first_round_by_family": (Mapping(TEXT, TEXT),),
        "software_trend_rounds": (NON_NEGATIVE,),
        "software_trend_from": (None, TEXT),
        "workload": (TEXT,),
    }

    def __post_init__(self):
        if isinstance(self.fit, dict):  # a model file's part, or a report written by hand
            object.__setattr__(self, "fit", FitReport.from_dict(self.fit))
        check_fields(self, self.parameter_constraints)

    def compute_efficiency_for(
        self, family: str, generation: str | None = None, *, vendor: str | None = None,
        power: dict | None = None,
    ) -> tuple[float, str]:
        """``(efficiency, basis)`` for an accelerator family.

        ``basis`` is ``"fitted"`` when the family had calibration rows; for a family without
        rows, ``"borrowed:<family>[+<family>...]"`` when ``power`` (watts per dense TFLOP/s
        of each family in the catalog in use) names fitted families of its ``generation``
        in its power class (:func:`~.lenders.generation_lenders`: the median of their efficiencies, the same
        architecture's software), ``"borrowed:<vendor>"`` when its vendor had rows (the
        vendor's software shared across its families, at ``software_round``), else
        ``"borrowed:shared"`` (the one shared across vendors), each applied to the family's
        own peak, memory and links; ``"assumed"`` for ``compute_efficiency_default`` (a
        hand-set model without a fit).
        """
        fams = self.compute_efficiency_by_family
        if family in fams:
            return float(fams[family]), "fitted"
        lent = generation_lenders(self, family, generation, power)
        if lent:
            return float(np.median([fams[f] for f in lent])), "borrowed:" + "+".join(lent)
        if vendor is not None and vendor in self.compute_efficiency_by_vendor:
            return float(self.compute_efficiency_by_vendor[vendor]), f"borrowed:{vendor}"
        if self.compute_efficiency_shared is not None:
            return float(self.compute_efficiency_shared), "borrowed:shared"
        return float(self.compute_efficiency_default), "assumed"

    def software_gain(self, vendors, families, rounds) -> np.ndarray:
        """Each row's gain (log) of compute efficiency over the software of
        ``software_round``: its vendor's trend (the shared one for a vendor without its
        own) over the rounds from ``software_round`` to the row's, each round's gain
        ``software_trend_decay ** age`` for a family ``age`` rounds past its first, at most
        ``software_trend_rounds`` ahead; negative for an older round's rows, which ran
        older software (:func:`~.software.software_gain`)."""
        return software_gain(self, vendors, families, rounds)

    def intensity_for(self, workload: "Workload") -> float:
        """FLOPs per byte of memory traffic: the workload's own value, else the one fitted on
        this workload; a model fitted on another workload uses the workload's estimate
        (``flops_per_sample / bytes_per_sample``) when it has one."""
        ai = workload.arithmetic_intensity
        if ai is not None:
            return float(ai)
        if self.workload != workload.name and workload.bytes_per_sample:
            return float(workload.flops_per_sample / workload.bytes_per_sample)
        return float(self.arithmetic_intensity)

    # --- JSON -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The model file's content: format, version, every parameter and the fit's report."""
        params = {f.name: deepcopy(getattr(self, f.name)) for f in fields(self) if f.name != "fit"}
        return {"format": "gpurank.CalibratedModel", "version": MODEL_VERSION, **params,
                "fit": self.fit.to_dict()}

    def to_json(self, path, *, overwrite=False) -> Path:
        """Write the model as JSON atomically (temp file in the same folder, then rename);
        an existing file is replaced only when it is a gpurank model or ``overwrite``."""
        text = json.dumps(to_jsonable(self.to_dict()), indent=2, sort_keys=True) + "\n"
        return write_text(text, path, overwrite=overwrite, name="--output")

    @classmethod
    def from_json(cls, path) -> "CalibratedModel":
        """Read a model file written by :meth:`to_json`.

        Raises
        ------
        DataError
            One line naming the file and what is wrong: missing, too large, not JSON (also
            nesting too deep to parse), another format or version, an unknown key or a value
            out of range.
        """
        path = Path(path)
        if path.is_dir():
            raise DataError(f"model file '{path}' is a folder; name the model .json file")
        if not (path.exists() or path.is_symlink()):
            raise DataError(f"model file '{path}' does not exist; write one with calibrate -o")
        raw = read_json(path, what="model file", limit=MAX_MODEL_BYTES)
        if not isinstance(raw, dict) or raw.get("format") != "gpurank.CalibratedModel":
            fmt = raw.get("format") if isinstance(raw, dict) else None
            raise DataError(
                f"model file '{path}' has format={_short(fmt)}; expected 'gpurank.CalibratedModel'"
            )
        version = raw.get("version")
        if version != MODEL_VERSION:
            raise DataError(
                f"model file '{path}' has version={_short(version)}; this gpurank reads version "
                f"{MODEL_VERSION} (the roofline model with an efficiency shared across families): "
                "recalibrate with gpurank calibrate"
            )
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - names - {"format", "version"})
        if unknown:
            raise DataError(
                f"model file '{path}' has unknown key {_short(unknown[0])}; known "
                f"keys are: {', '.join(sorted(names))}"
            )
        try:
            model = cls(**{k: v for k, v in raw.items() if k in names and k != "fit"})
        except UsageError as exc:
            raise DataError(f"model file '{path}': {_one_line(exc)}") from None
        check_model_file(raw, what=f"model file '{path}'")  # fit and its domain, typed
        return replace(model, fit=FitReport.from_dict(raw["fit"]))


def _short(value, limit: int = 60) -> str:
    """``repr`` of a value from a file, cut to one short line (a file may hold anything)."""
    text = repr(value)
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(exc) -> str:
    return " ".join(str(exc).split())[:300]


def _load_default_model() -> "CalibratedModel":
    with resources.as_file(
        resources.files("gpurank.engine.data").joinpath("default_model.json")
    ) as p:
        return CalibratedModel.from_json(p)


#: The model used when ``model=None``: ``calibrate`` on every usable MLPerf ResNet-50 row of
#: rounds v0.5-v3.1 (``engine/data/default_model.json``; how to regenerate it, its fit and its
#: cross-validated errors are in docs/simulator.md). Families without MLPerf data (B200,
#: MI300, ...) borrow a related family's compute efficiency (``prediction_basis``).
DEFAULT_MODEL = _load_default_model()
#: The inputs of :func:`evaluate` that set the broadcast shape.
_SHAPED_INPUTS = (
    "peak_tflops",
    "compute_efficiency",
    "mem_bw_tbps",
    "n_accelerators",
    "accelerators_per_node",
    "n_nodes",
    "local_batch",
    "intra_GBps",
    "inter_GBps",
    "cpu_cores_per_accelerator",
    "cpu_decode_factor",
    "dali",
)


@dataclass(frozen=True)
class _Inputs:
    """The per-row inputs of :func:`evaluate`, broadcast to one shape, with safe values (1)
    where a row is invalid (``ok`` false) so no step divides by zero or meets a NaN."""

    peak: object
    eff_c: object
    bw: object
    n: object
    g: object
    m: object
    b: object
    dali: object
    ok: object
    one: object
    shape: tuple


def _or(value, default):
    """An optional input's value, or its default when absent."""
    return default if value is None else value


def _safe_inputs(cfg: ConfigArrays, model: CalibratedModel, xp) -> _Inputs:
    """The core inputs as float arrays of one shape, valid rows flagged in ``ok``."""
    f64 = np.float64
    peak = xp.asarray(cfg.peak_tflops, dtype=f64) * 1e12
    eff_c = xp.asarray(cfg.compute_efficiency, dtype=f64)
    bw = xp.asarray(cfg.mem_bw_tbps, dtype=f64) * 1e12 * model.mem_efficiency
    n = xp.asarray(cfg.n_accelerators, dtype=f64)
    g = xp.asarray(cfg.accelerators_per_node, dtype=f64)
    m = xp.asarray(cfg.n_nodes, dtype=f64)
    b = xp.asarray(cfg.local_batch, dtype=f64)
    dali = xp.asarray(cfg.dali, dtype=bool)
    shape = np.broadcast_shapes(*(np.shape(getattr(cfg, k)) for k in _SHAPED_INPUTS))
    # Rows with an impossible input get NaN; the others are computed with safe denominators,
    # so no division by zero or NaN arithmetic happens (and no RuntimeWarning is raised).
    ok = (peak > 0) & (eff_c > 0) & (bw > 0) & (n > 0) & (g > 0) & (m > 0) & (b > 0)
    ok = xp.broadcast_to(ok, shape)
    one = xp.ones(shape, dtype=f64)
    dali = xp.broadcast_to(dali, shape)

    def safe(x):
        return xp.where(ok, xp.broadcast_to(x, shape), one)

    peak, eff_c, bw, n, g, m, b = (safe(x) for x in (peak, eff_c, bw, n, g, m, b))
    return _Inputs(peak, eff_c, bw, n, g, m, b, dali, ok, one, shape)


def _device_time(v: _Inputs, cfg: ConfigArrays, model, workload: Workload, b_acc, shards,
                 xp):
    """Compute, memory and device (roofline) time of one step, ``(t_compute, t_memory,
    t_device)``."""
    f64 = np.float64
    F = workload.flops_per_sample
    # compute: the batch at a fraction b / (b + batch_half) of the achieved tensor rate; a
    # batch beyond memory runs as micro-batches (gradient accumulation), whose size sets it
    bm = xp.broadcast_to(xp.asarray(cfg.micro_batch, dtype=f64), v.shape) if (
        cfg.micro_batch is not None) else v.b
    bm = xp.where(v.ok & (bm > 0), bm, v.b) if cfg.micro_batch is not None else v.b
    peak = v.peak
    if cfg.narrow_peak_tflops is not None and model.narrow_fraction > 0:
        # the share narrow_fraction of the FLOPs runs at the narrow-precision peak (fp8
        # GEMMs), the rest at the bf16 one (attention, norms, the layers kept wide)
        nar = xp.broadcast_to(xp.asarray(cfg.narrow_peak_tflops, dtype=f64), v.shape) * 1e12
        peak = mixed_peak(v.peak, xp.where(v.ok, nar, 0.0), model.narrow_fraction, xp)
    bm = bm / _extra_split(v, workload, shards, xp)
    # a mixture of experts' routed FLOPs run slower than dense ones (workload.py)
    t_compute = (b_acc * F * workload.expert_compute_factor / (peak * v.eff_c)
                 * ((bm + model.batch_half) / bm))
    if model.step_latency_s > 0:
        # a fixed time per pass over a micro-batch (kernel launches, synchronizations) that
        # does not shrink with the peak: what makes a faster chip reach a smaller fraction
        # of it at the same batch
        t_compute = t_compute + model.step_latency_s * (v.b / bm)
    # memory: activations per sample (F / intensity bytes) plus one pass over the weights,
    # gradients and optimizer state per step, at the achieved memory bandwidth
    intensity = model.intensity_for(workload)
    held = (_held_params(v, workload, shards, xp) if workload.experts
            else workload.dense_params / shards)
    traffic = b_acc * (F / intensity)
    if cfg.narrow_bytes is not None and model.narrow_fraction > 0:
        # the narrow share of the work reads and writes narrow elements: fewer bytes
        nb = xp.broadcast_to(xp.asarray(cfg.narrow_bytes, dtype=f64), v.shape)
        nb = xp.where(v.ok & (nb > 0), nb, 1.0)
        traffic = traffic * ((1.0 - model.narrow_fraction) + model.narrow_fraction * nb)
    t_memory = (traffic + held * workload.state_bytes_per_param) / v.bw
    # roofline: the longer term plus the part of the shorter one that does not overlap it
    longer = xp.maximum(t_compute, t_memory)
    shorter = xp.minimum(t_compute, t_memory)
    t_device = (longer + (1.0 - model.mem_overlap) * shorter) * xp.where(
        v.dali, 1.0 + model.dali_gpu_overhead, 1.0
    )
    return t_compute, t_memory, t_device


def mixed_peak(peak, narrow_peak, narrow_fraction: float, xp=np):
    """The dense peak a row's formats reach together: the share ``narrow_fraction`` of the
    FLOPs at the narrow peak, the rest at ``peak`` (bf16); ``peak`` where there is no narrower
    one."""
    peak = xp.asarray(peak, dtype=np.float64)
    nar = xp.asarray(narrow_peak, dtype=np.float64)
    ratio = xp.where((nar > 0) & (peak > 0), peak / xp.where(nar > 0, nar, 1.0), 1.0)
    return peak / ((1.0 - narrow_fraction) + narrow_fraction * ratio)


def _extra_split(v: _Inputs, workload: Workload, shards, xp):
    """How many times further than the workload's own model parallelism each sample is split
    (tensor x context parallel over ``shards`` accelerators where the workload's replica spans
    ``Workload.shards(n)``): 1 for every row that runs the workload's own layout.

    A pass's work per accelerator is the replica's micro-batch over this factor (a sample
    split over 4 GPUs gives each a quarter of its tokens), and the rate a pass reaches
    depends on the work each accelerator has in it (``batch_half``), so splitting a sample
    costs what a smaller batch per accelerator costs."""
    own = workload.shards(v.n, xp)
    return xp.where(v.ok, xp.maximum(shards / own, 1.0), 1.0)


def _allreduce_time(v: _Inputs, cfg: ConfigArrays, model, workload: Workload, shards, xp):
    """Time of the gradient all-reduce, and the valid rows whose needed link has no
    bandwidth, ``(t_comm, bad_link)``."""
    n, ok, one = v.n, v.ok, v.one
    s = (_held_params(v, workload, shards, xp) * workload.grad_bytes_per_param
         if workload.experts
         else workload.synced_params * workload.grad_bytes_per_param / shards)  # per accelerator
    ce = model.comm_efficiency
    g, m, intra, inter = _reduction_levels(v, cfg, xp)
    intra = intra * 1e9 * ce
    inter = inter * 1e9 * ce
    intra_ok = ok & (g > 1) & (intra > 0)
    inter_ok = ok & (m > 1) & (inter > 0)
    intra_s = xp.where(intra_ok, intra, one)
    inter_s = xp.where(inter_ok, inter, one)
    bad_link = ok & (((g > 1) & ~(intra > 0)) | ((m > 1) & ~(inter > 0)))
    intra_bw_t = xp.where(intra_ok, 2.0 * (g - 1.0) / g * s / intra_s, 0.0)
    if model.allreduce == "hierarchical":
        # reduce-scatter + all-gather inside the node, node-level all-reduce of the shards
        # over the node's network (each node moves 2 (m-1)/m * s bytes per direction)
        inter_bw_t = xp.where(inter_ok, 2.0 * (m - 1.0) / m * s / inter_s, 0.0)
        steps_inter = 2.0 * _ceil_log2(m, xp)
    else:
        # one flat ring over all n accelerators; the slowest hop is the per-accelerator
        # share of the node network (when m > 1) or the intra-node link
        per_acc_net = xp.where(m > 1, inter_s / g, intra_s)
        hop = xp.where(g > 1, xp.minimum(intra_s, per_acc_net), per_acc_net)
        inter_bw_t = xp.where(ok & (n > 1), 2.0 * (n - 1.0) / n * s / hop, 0.0) - intra_bw_t
        steps_inter = 2.0 * (m - 1.0)
    t_comm = (
        intra_bw_t
        + inter_bw_t
        + model.latency_intra_s * 2.0 * (g - 1.0)
        + model.latency_inter_s * steps_inter
    )
    return t_comm, bad_link


def _expert_group(v: _Inputs, workload: Workload, shards, xp):
    """Accelerators one expert-parallel group spans: ``expert_parallel``, at most the
    data-parallel replicas (the experts spread over replicas, each replica's model-parallel
    shards in step)."""
    return xp.maximum(xp.minimum(float(workload.expert_parallel), v.n / shards), 1.0)


def _held_params(v: _Inputs, workload: Workload, shards, xp):
    """Parameters one accelerator of a mixture of experts holds, updates and reduces each
    step: its model-parallel share of the shared layers and of its expert group's share of
    the routed experts (the memory for all experts is spread over the group)."""
    ep = _expert_group(v, workload, shards, xp)
    experts = workload.expert_params
    return (workload.params - experts) / shards + experts / (shards * ep)


def _alltoall_time(v: _Inputs, cfg: ConfigArrays, model, workload: Workload, b_acc, shards,
                   xp):
    """Time of a mixture of experts' all-to-all in one step (0 for a dense workload).

    Each of an accelerator's tokens is sent to ``experts_per_token`` experts and back, in
    every MoE layer, forward and backward: 4 exchanges of ``hidden_size`` values of
    ``dispatch_bytes`` per routed copy, ``(ep - 1) / ep`` of them to other accelerators of
    its expert group of ``ep``. The group's share inside the scale-up domain (or node)
    crosses its link, the rest the network, each accelerator its share of its group's; the
    two move at once, so the step waits for the longer."""
    if not workload.experts:
        return xp.zeros(v.shape, dtype=np.float64)
    ep = _expert_group(v, workload, shards, xp)
    tokens = b_acc * float(workload.tokens_per_sample)
    nbytes = (tokens * (4.0 * workload.moe_layers * workload.experts_per_token
                        * workload.hidden_size * workload.dispatch_bytes)
              * (ep - 1.0) / ep)
    g1, _, intra, inter = _reduction_levels(v, cfg, xp)
    ce = model.comm_efficiency
    intra = intra * 1e9 * ce
    net = inter * 1e9 * ce / g1
    peers = xp.maximum(ep - 1.0, 1.0)
    inside = xp.minimum(ep, g1) - 1.0  # peers in the same domain
    outside = ep - 1.0 - inside
    t_in = xp.where(inside > 0, nbytes * (inside / peers) / xp.where(intra > 0, intra, 1.0), 0.0)
    t_out = xp.where(outside > 0, nbytes * (outside / peers) / xp.where(net > 0, net, 1.0), 0.0)
    return xp.maximum(t_in, t_out)


def _reduction_levels(v: _Inputs, cfg: ConfigArrays, xp):
    """The two levels of the hierarchical all-reduce: accelerators per first-level group,
    groups, the group link's GB/s per accelerator and the network's GB/s per group.

    The first level is the node, unless the accelerator's scale-up domain (``scaleup_domain``
    accelerators joined at ``scaleup_GBps`` each, e.g. an NVL72 rack of 18 trays of 4 GPUs)
    is wider than the node: then it is the domain (at most ``n``), and the network joins
    domains, each with every network link of its nodes."""
    f64 = np.float64
    g, m = v.g, v.m
    intra = xp.broadcast_to(xp.asarray(cfg.intra_GBps, dtype=f64), v.shape)
    inter = xp.broadcast_to(xp.asarray(cfg.inter_GBps, dtype=f64), v.shape)
    if cfg.scaleup_domain is None:
        return g, m, intra, inter
    dom = xp.broadcast_to(xp.asarray(cfg.scaleup_domain, dtype=f64), v.shape)
    dbw = xp.broadcast_to(xp.asarray(_or(cfg.scaleup_GBps, np.nan), dtype=f64), v.shape)
    wide = v.ok & (dom > g) & (dbw > 0) & (v.n > g)
    dom_s = xp.where(wide, dom, v.one)
    g1 = xp.where(wide, xp.minimum(v.n, dom_s), g)
    return (g1, xp.where(wide, v.n / g1, m), xp.where(wide, dbw, intra),
            xp.where(wide, inter * (g1 / g), inter))


def _input_time(v: _Inputs, cfg: ConfigArrays, model, workload: Workload, b_acc, shards,
                xp):
    """Time the host needs to decode and copy one step's batch, and the step's feature
    gathers (:func:`_gather_time`)."""
    f64 = np.float64
    # input pipeline: host cores decode JPEGs (or feed the GPU decoder with DALI)
    cores = xp.broadcast_to(xp.asarray(cfg.cpu_cores_per_accelerator, dtype=f64), v.shape)
    factor = xp.broadcast_to(xp.asarray(cfg.cpu_decode_factor, dtype=f64), v.shape)
    per_core = xp.where(v.dali, model.dali_decode_rate, model.cpu_decode_rate)
    in_rate = cores * factor * per_core
    limited = (cores > 0) & (in_rate > 0)  # nan or 0 cores: no limit known
    if workload.decode_cost > 0:
        in_rate_s = xp.where(limited, in_rate, 1.0) / workload.decode_cost
        t_input = xp.where(limited, v.b / in_rate_s, 0.0)
    else:
        t_input = xp.zeros(v.shape, dtype=f64)
    # the accelerator's host link (PCIe, NVLink-C2C), bytes/s
    host = xp.broadcast_to(
        xp.asarray(_or(cfg.host_GBps, DEFAULT_HOST_GBPS), dtype=f64), v.shape) * 1e9
    if workload.input_bytes_per_sample > 0:
        # the accelerator's share of the batch crosses its host link
        host_ok = host > 0
        t_copy = xp.where(host_ok, b_acc * workload.input_bytes_per_sample
                          / xp.where(host_ok, host, 1.0), 0.0)
        t_input = xp.maximum(t_input, t_copy)
    if workload.gathered_bytes_per_sample > 0:
        t_input = xp.maximum(t_input,
                             _gather_time(v, cfg, model, workload, b_acc, shards, host, xp))
    return t_input


def _gather_time(v: _Inputs, cfg: ConfigArrays, model, workload: Workload, b_acc, shards,
                 host, xp):
    """Time one step's feature gathers take on the link that reaches the feature store
    (``host``: the host link's bytes/s).

    The store (``feature_store_gb``) is sharded over the accelerators' memory when it fits in
    what the step leaves free (:meth:`Workload.memory_left_gb`): over one node (or scale-up
    domain) when that holds it, each node then holding a copy, else over all ``n``
    accelerators. Otherwise it stays in host memory. A sample's ``gathered_bytes_per_sample``
    are spread evenly over the shards, so the share on other accelerators crosses the
    scale-up link or the network, the local share is read at the memory bandwidth, and a
    store in host memory crosses the host link whole. The gathers run beside the step (a
    separate stream, as graph samplers and embedding caches do), so the step takes the
    longer of the two. A row whose accelerator memory is unknown (no ``mem_gb``) or whose
    link to the other shards is unknown keeps the store in host memory: the slowest place,
    never an optimistic one."""
    f64 = np.float64
    nbytes = b_acc * workload.gathered_bytes_per_sample
    g1, _, intra, inter = _reduction_levels(v, cfg, xp)
    intra = intra * 1e9 * model.comm_efficiency
    net = inter * 1e9 * model.comm_efficiency / g1  # a group's network, per accelerator
    mem = xp.broadcast_to(xp.asarray(_or(cfg.mem_gb, np.nan), dtype=f64), v.shape)
    known = mem > 0
    free = workload.memory_left_gb(xp.where(known, mem, 0.0), v.b, xp, shards, v.n)
    store = workload.feature_store_gb
    intra_ok = (g1 == 1.0) | (intra > 0)
    in_group = known & intra_ok & (free * g1 >= store)
    in_all = known & intra_ok & (net > 0) & (free * v.n >= store) & ~in_group

    def per_byte(x, usable):
        return xp.where(usable, 1.0 / xp.where(usable, x, 1.0), 0.0)

    local = 1.0 / v.bw
    remote = per_byte(intra, intra > 0)
    t_group = ((g1 - 1.0) / g1 * remote + local / g1) * nbytes
    t_all = ((v.n - g1) / v.n * per_byte(net, net > 0) + (g1 - 1.0) / v.n * remote
             + local / v.n) * nbytes
    t_host = per_byte(host, host > 0) * nbytes
    return xp.where(in_group, t_group, xp.where(in_all, t_all, t_host))


def evaluate(cfg, model: CalibratedModel, workload: Workload, xp=np) -> dict:
    """Evaluate the model for arrays of configurations (no noise).

    ``cfg`` is a :class:`~.model_arrays.ConfigArrays` (or a mapping of its field names,
    checked): per row the peak, efficiency, memory bandwidth, topology, batch, links, host
    cores and decoding; the optional inputs (host link, narrow peak, scale-up domain,
    micro-batch, model parallelism, memory) take their documented defaults when absent.

    Returns a dict of arrays: t_compute, t_memory, t_device, t_comm, t_input, t_step,
    throughput (samples/s, all accelerators), utilization (device busy time / step time),
    bottleneck code (0 compute, 1 communication, 2 input, 3 memory).

    The arithmetic is ``+ - * / minimum maximum where`` only, on rows whose inputs are
    valid; rows with a non-positive count, batch, peak or bandwidth give NaN without a
    floating-point warning.
    """
    cfg = ConfigArrays.of(cfg)
    if cfg.local_batch is None:
        raise UsageError("model input 'local_batch' is missing; the model evaluates a "
                         "chosen batch")
    v = _safe_inputs(cfg, model, xp)
    # b is the batch of one replica; a replica of a model-parallel workload spans ``shards``
    # accelerators, each doing 1/shards of its work and holding 1/shards of its state
    shards = (xp.where(v.ok, xp.broadcast_to(xp.asarray(cfg.model_parallel, dtype=np.float64),
                                             v.shape), 1.0)
              if cfg.model_parallel is not None else workload.shards(v.n, xp))
    b_acc = v.b / shards
    t_compute, t_memory, t_device = _device_time(v, cfg, model, workload, b_acc, shards, xp)
    t_comm, bad_link = _allreduce_time(v, cfg, model, workload, shards, xp)
    if workload.experts:
        # the experts' all-to-all, hidden behind compute as the all-reduce is
        t_comm = t_comm + _alltoall_time(v, cfg, model, workload, b_acc, shards, xp)
    hidden = xp.minimum(model.overlap * t_comm, (2.0 / 3.0) * t_device)  # backward = 2/3
    t_gpu = t_device + t_comm - hidden
    t_input = _input_time(v, cfg, model, workload, b_acc, shards, xp)

    t_step = xp.maximum(t_gpu, t_input)
    throughput = v.n * b_acc / t_step
    utilization = t_device / t_step
    bottleneck = xp.where(
        t_input > t_gpu,
        2,
        xp.where(t_comm - hidden > 0.25 * t_device, 1, xp.where(t_memory > t_compute, 3, 0)),
    )
    nan = xp.full(v.shape, np.nan)
    valid = v.ok & ~bad_link

    def out(x):
        return xp.where(valid, x, nan)

    return {
        "t_compute": out(t_compute),
        "t_memory": out(t_memory),
        "t_device": out(t_device),
        "t_comm": out(t_comm),
        "t_input": out(t_input),
        "t_step": out(t_step),
        "throughput": out(throughput),
        "utilization": out(utilization),
        "bottleneck": xp.where(valid, bottleneck, 0).astype(np.int8),
    }


def _ceil_log2(m, xp):
    """ceil(log2(m)) for m >= 1 without a transcendental call (frexp is exact)."""
    _, e = xp.frexp(xp.maximum(m - 1.0, 0.0))
    return e.astype(np.float64)
