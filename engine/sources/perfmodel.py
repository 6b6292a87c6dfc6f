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
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from ..errors import DataError, UsageError

__all__ = [
    "Workload",
    "CalibratedModel",
    "resnet50",
    "DEFAULT_MODEL",
    "evaluate",
    "IMAGENET_TRAIN_SAMPLES",
    "MODEL_VERSION",
    "MEM_EFFICIENCY",
    "HOST_COPY_EFFICIENCY",
]

#: ImageNet-1k training images (MLPerf ``train_samples``; summary.csv README).
IMAGENET_TRAIN_SAMPLES = 1_281_167


@dataclass(frozen=True)
class Workload:
    """What one training job costs, independent of the hardware.

    The shipped workloads (one per MLPerf Training benchmark, every number with its source)
    are in ``engine/data/workloads.csv``; :func:`gpurank.engine.sources.workloads.workload`
    builds them. Describe another workload by these numbers (docs/simulator.md, "Workloads").

    Attributes
    ----------
    name : str
    flops_per_sample : float
        Training FLOPs per sample (forward + backward, 1 multiply-add = 2 FLOPs).
    params : float
        Parameters whose state the accelerators hold (weights, and for trained ones gradients
        and optimizer state: ``state_bytes_per_param``); the memory term reads it once a step.
    dataset_size : int or None
        Samples per epoch. None only with a ``samples_curve`` (a workload without epochs,
        e.g. GPT-3 trained from a checkpoint): ``epochs`` are then NaN.
    epochs_curve : tuple of (global_batch, epochs) pairs
        Epochs to reach the quality target vs global batch size; interpolated linearly in
        log2(batch), flat below the first point, extended with the last segment's slope above
        the last point. May be empty when ``samples_curve`` is given.
    activation_gb_per_sample : float
        Accelerator memory per sample of batch (activations, mixed precision), shared by the
        ``model_parallel`` accelerators of one replica.
    state_bytes_per_param : float
        Weights, gradients and optimizer state per parameter (fp32 master + momentum + bf16).
        The memory term reads and writes them once per step.
    grad_bytes_per_param : float
        Bytes per parameter exchanged in the gradient all-reduce (2 = bf16/fp16 gradients).
    decode_cost : float
        Host preprocessing work per sample relative to an ImageNet JPEG (0 = no decoding).
    arithmetic_intensity : float or None
        Training FLOPs per byte of accelerator-memory traffic (the roofline's x-axis):
        ``flops_per_sample / arithmetic_intensity`` bytes move per sample. ``None`` (the
        default) uses the value ``calibrate`` fitted (``CalibratedModel.arithmetic_intensity``);
        a number (e.g. measured with a profiler's DRAM byte counters) overrides it and is
        then held fixed by ``calibrate``.
    benchmark : str
        The MLPerf benchmark name(s) it stands for (``;``-joined), "" when none.
    throughput_unit : str
        Unit of the ``throughput`` columns: ``images/s``, ``sequences/s``, ``tokens/s``,
        ``samples/s``. ``tokens/s`` counts ``tokens_per_sample`` tokens per sample.
    tokens_per_sample : int or None
    samples_curve : tuple of (global_batch, samples) pairs
        Samples to reach the quality target vs global batch (the MLPerf reference convergence
        points); takes precedence over ``epochs_curve``; interpolated the same way.
    allreduce_params : float or None
        Parameters whose gradients are all-reduced each step (None: all ``params``; LoRA: the
        adapters; DLRM: the dense layers, its embeddings being model parallel).
    model_parallel : int
        Accelerators that share one copy of the model state (tensor x pipeline parallel, or
        sharded embeddings); one replica uses ``min(n, model_parallel)`` of them. 1 = data
        parallel.
    bytes_per_sample : float or None
        Estimated accelerator-memory traffic per sample; sets the starting (and, for a model
        calibrated on another workload, the used) arithmetic intensity
        ``flops_per_sample / bytes_per_sample``.
    input_bytes_per_sample : float
        Bytes copied from the host to the accelerator per sample (the input term's transfer).
    sparse_params : float
        Parameters among ``params`` that a step touches only through per-sample lookups
        (embedding tables): they take memory but are not read whole each step (their
        traffic is in ``bytes_per_sample``).
    local_batches : tuple of int
        Samples per replica the simulator draws from; ``max_global_batch`` caps the global
        batch (None: no cap beyond the reference convergence table).
    sources : tuple of (field, source) pairs
    """

    name: str
    flops_per_sample: float
    params: float
    dataset_size: int | None
    epochs_curve: tuple
    activation_gb_per_sample: float = 0.05
    state_bytes_per_param: float = 16.0
    grad_bytes_per_param: float = 2.0
    decode_cost: float = 1.0
    arithmetic_intensity: float | None = None
    benchmark: str = ""
    throughput_unit: str = "samples/s"
    tokens_per_sample: int | None = None
    samples_curve: tuple = ()
    allreduce_params: float | None = None
    model_parallel: int = 1
    bytes_per_sample: float | None = None
    input_bytes_per_sample: float = 0.0
    sparse_params: float = 0.0
    local_batches: tuple = (32, 64, 128, 256)
    max_global_batch: int | None = 65536
    sources: tuple = ()

    def __post_init__(self):
        for name in ("flops_per_sample", "params", "activation_gb_per_sample"):
            v = getattr(self, name)
            if not _positive(v):
                raise UsageError(f"Workload.{name}={v!r} is not allowed; it must be a number > 0")
        for name in ("state_bytes_per_param", "grad_bytes_per_param", "decode_cost",
                     "input_bytes_per_sample", "sparse_params"):
            v = getattr(self, name)
            if not (_number(v) and v >= 0):
                raise UsageError(f"Workload.{name}={v!r} is not allowed; it must be a number >= 0")
        for name in ("allreduce_params", "bytes_per_sample"):
            v = getattr(self, name)
            if v is not None and not _positive(v):
                raise UsageError(
                    f"Workload.{name}={v!r} is not allowed; it must be a number > 0 or None")
        if self.sparse_params > self.params:
            raise UsageError(
                f"Workload.sparse_params={self.sparse_params!r} is not allowed; it must be at "
                f"most params={self.params!r}")
        mp = self.model_parallel
        if isinstance(mp, bool) or not isinstance(mp, int) or mp < 1:
            raise UsageError(
                f"Workload.model_parallel={mp!r} is not allowed; it must be an integer >= 1")
        ai = self.arithmetic_intensity
        if ai is not None and not _positive(ai):
            raise UsageError(
                f"Workload.arithmetic_intensity={ai!r} is not allowed; it must be "
                "a number > 0 (FLOPs per byte) or None (use the calibrated value)"
            )
        samples = self._pairs("samples_curve", allow_empty=True)
        epochs = self._pairs("epochs_curve", allow_empty=bool(samples))
        object.__setattr__(self, "samples_curve", samples)
        object.__setattr__(self, "epochs_curve", epochs)
        ds = self.dataset_size
        if not (ds is None and samples) and not _positive(ds):
            raise UsageError(
                f"Workload.dataset_size={ds!r} is not allowed; it must be a number > 0 (None "
                "only with a samples_curve)")
        tps = self.tokens_per_sample
        if self.throughput_unit == "tokens/s" and not _positive(tps):
            raise UsageError(
                f"Workload.tokens_per_sample={tps!r} is not allowed with throughput_unit "
                "'tokens/s'; it must be a number > 0")
        lb = self.local_batches
        if not lb or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in lb):
            raise UsageError(
                f"Workload.local_batches={lb!r} is not allowed; it must be integers >= 1")
        object.__setattr__(self, "local_batches", tuple(lb))
        mg = self.max_global_batch
        if mg is not None and (isinstance(mg, bool) or not isinstance(mg, int) or mg < 1):
            raise UsageError(
                f"Workload.max_global_batch={mg!r} is not allowed; it must be an integer >= 1 "
                "or None")

    def _pairs(self, name: str, *, allow_empty: bool) -> tuple:
        raw = getattr(self, name)
        try:
            pts = tuple((float(b), float(e)) for b, e in raw)
        except (TypeError, ValueError):
            pts = None
        if pts is None or (not pts and not allow_empty) or any(
                not (b > 0 and e > 0) or not math.isfinite(b + e) for b, e in pts):
            what = "samples" if name == "samples_curve" else "epochs"
            raise UsageError(
                f"Workload.{name}={raw!r} is not allowed; it must be a "
                f"{'' if allow_empty else 'non-empty '}sequence of (global_batch > 0, "
                f"{what} > 0) pairs"
            )
        return tuple(sorted(pts))

    @property
    def throughput_scale(self) -> float:
        """Units of ``throughput_unit`` per sample (tokens per sample for ``tokens/s``)."""
        return float(self.tokens_per_sample) if self.throughput_unit == "tokens/s" else 1.0

    @property
    def dense_params(self) -> float:
        """Parameters whose state every step reads and writes whole."""
        return float(self.params - self.sparse_params) if self.sparse_params else self.params

    @property
    def synced_params(self) -> float:
        """Parameters whose gradients the all-reduce exchanges."""
        return float(self.params if self.allreduce_params is None else self.allreduce_params)

    def shards(self, n, xp=np):
        """Accelerators sharing one copy of the model state: ``min(n, model_parallel)``."""
        if self.model_parallel == 1:
            return 1.0
        return xp.minimum(xp.maximum(xp.asarray(n, dtype=np.float64), 1.0),
                          float(self.model_parallel))

    def max_local_batch(self, mem_gb, xp=np, shards=1.0, n=None):
        """Largest batch per replica that fits: 90% of memory minus the accelerator's share of
        the model state, over its share of a sample's activations.

        A model-parallel workload's state is sharded over all ``n`` accelerators (distributed
        optimizer / fully sharded state, as the MLPerf LLM submissions run); a data-parallel
        one holds it whole on each accelerator."""
        state_shards = shards if (self.model_parallel == 1 or n is None) else n
        state_gb = self.params * self.state_bytes_per_param / 1e9 / state_shards
        usable = xp.asarray(mem_gb, dtype=np.float64) * 0.9 - state_gb - 1.0  # 1 GB runtime
        return xp.floor(xp.maximum(usable, 0.0) / (self.activation_gb_per_sample / shards))

    def epochs(self, global_batch, xp=np):
        """Epochs to converge for each global batch (see ``epochs_curve``; from
        ``samples_curve`` / ``dataset_size`` when the workload has one, NaN without a data-set
        size)."""
        if self.samples_curve:
            if self.dataset_size is None:
                return xp.full(np.shape(global_batch), np.nan)
            return self.samples(global_batch, xp=xp) / float(self.dataset_size)
        return self._curve(self.epochs_curve, global_batch, xp)

    def samples(self, global_batch, xp=np):
        """Samples to converge for each global batch (``samples_curve``, else epochs x
        ``dataset_size``)."""
        if self.samples_curve:
            return self._curve(self.samples_curve, global_batch, xp)
        return self._curve(self.epochs_curve, global_batch, xp) * float(self.dataset_size)

    def _curve(self, pts, global_batch, xp):
        gb = np.asarray(global_batch, dtype=np.float64)
        uniq, inv = np.unique(gb, return_inverse=True)
        vals = np.array([_interp(pts, float(b)) for b in uniq], dtype=np.float64)
        return xp.asarray(vals[inv].reshape(gb.shape))

    def _epochs_scalar(self, b: float) -> float:
        return _interp(self.epochs_curve, b)


def _positive(v) -> bool:
    return _number(v) and v > 0


def _interp(pts, b: float) -> float:
    """Linear in log2(batch), flat below the first point, the last slope above the last."""
    if not math.isfinite(b) or b <= 0:
        return math.nan
    if len(pts) == 1 or b <= pts[0][0]:
        return pts[0][1]
    xs = [math.log2(p[0]) for p in pts]
    x = math.log2(b)
    for i in range(1, len(pts)):
        if x <= xs[i]:
            t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
            return pts[i - 1][1] + t * (pts[i][1] - pts[i - 1][1])
    slope = (pts[-1][1] - pts[-2][1]) / (xs[-1] - xs[-2])
    return pts[-1][1] + slope * (x - xs[-1])


def resnet50(epochs_table=None) -> Workload:
    """ResNet-50 v1.5 on ImageNet-1k, 224x224, the MLPerf Training benchmark.

    FLOPs: 4.1 GMAC forward per image (NVIDIA DeepLearningExamples ResNet-50 v1.5; He et
    al. 2016 give 3.8 GMAC for v1) x 2 FLOPs/MAC x 3 (backward ~ 2x forward) = 24.6 GFLOP.
    Parameters: 25.6 M (He et al. 2016). Epochs curve: MLPerf reference convergence points
    (``resnet50_epochs_vs_batch.csv``, source R1).
    """
    from ..catalog import epochs_curve

    t = epochs_curve(epochs_table)
    pts = tuple(zip(t["global_batch"].astype(float), t["mean_epochs_to_75.9pct"].astype(float)))
    return Workload(
        name="resnet50",
        flops_per_sample=24.6e9,
        params=25.6e6,
        dataset_size=IMAGENET_TRAIN_SAMPLES,
        epochs_curve=pts,
        activation_gb_per_sample=0.05,
        benchmark="resnet",
        throughput_unit="images/s",
        # ILSVRC2012's training set: 138 GB of JPEGs for 1,281,167 images
        input_bytes_per_sample=110e3,
    )


#: Achieved fraction of a host link's nominal bandwidth in host-to-device copies (PCIe DMA
#: reaches about 80% of the link rate after protocol overhead; estimate).
HOST_COPY_EFFICIENCY = 0.8
#: Host-to-accelerator bandwidth per accelerator (GB/s per direction) when a configuration
#: does not give one: PCIe 4.0 x16, 32 GB/s nominal, at ``HOST_COPY_EFFICIENCY``.
DEFAULT_HOST_GBPS = 32.0 * HOST_COPY_EFFICIENCY
#: Version of the model file format; version 1 was the compute-only model.
MODEL_VERSION = 2
#: Model files larger than this are refused before they are read (a model is a few KB).
MAX_MODEL_BYTES = 16 << 20
#: Achieved fraction of the peak memory bandwidth (STREAM-like kernels reach about 88-90% of
#: the datasheet figure: NVIDIA developer forum "Trouble to reach peak bandwidth of A100",
#: 1.80 of 2.04 TB/s measured with Nsight Compute, about 90% for the best kernel of a GTC
#: talk cited there). Only ``arithmetic_intensity x mem_efficiency`` is identified by a fit.
MEM_EFFICIENCY = 0.90


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class CalibratedModel:
    """Free parameters of the performance model; fitted by ``calibrate`` or the defaults.

    ``compute_efficiency_by_family`` maps an accelerator family (``family`` column of the
    accelerator catalog) to the achieved fraction of its dense bf16/fp16 tensor peak while
    computing (the compute term of the roofline; the memory term is separate). A family
    without a fitted value borrows one: ``borrow_by_generation[generation]`` names the fitted
    family it borrows from (same generation, else a related one), ``borrow_default`` the
    family used otherwise; ``compute_efficiency_default`` is used only by a model with no
    fitted families. :meth:`compute_efficiency_for` returns the value and its basis.
    """

    compute_efficiency_by_family: dict = field(default_factory=dict)
    borrow_by_generation: dict = field(default_factory=dict)
    borrow_default: str = ""
    compute_efficiency_default: float = 0.40
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
    workload: str = "resnet50"
    fit: dict = field(default_factory=dict)  # calibration report (errors, rounds, n rows)

    def __post_init__(self):
        checks = {
            "compute_efficiency_default": (0, 1, False),
            "arithmetic_intensity": (0, None, False),
            "mem_efficiency": (0, 1, False),
            "mem_overlap": (0, 1, True),
            "comm_efficiency": (0, 1, True),
            "overlap": (0, 1, True),
            "overhead_s": (0, None, True),
            "batch_half": (0, None, True),
            "cpu_decode_rate": (0, None, True),
            "dali_decode_rate": (0, None, True),
            "dali_gpu_overhead": (0, None, True),
            "latency_intra_s": (0, None, True),
            "latency_inter_s": (0, None, True),
            "noise_sigma": (0, 1, True),
            "epochs_noise_sigma": (0, 1, True),
            "idle_power_frac": (0, 1, True),
            "tcp_efficiency": (0, 1, True),
        }
        for name, (lo, hi, lo_ok) in checks.items():
            v = getattr(self, name)
            ok = _number(v) and (v >= lo if lo_ok else v > lo) and (hi is None or v <= hi)
            if not ok:
                low = "[" if lo_ok else "("
                allowed = (
                    f"a number in {low}{lo}, {hi}]"
                    if hi is not None
                    else f"a number {'>=' if lo_ok else '>'} {lo}"
                )
                raise UsageError(
                    f"CalibratedModel.{name}={v!r} is not allowed; it must be {allowed}"
                )
        if self.allreduce not in ("hierarchical", "ring"):
            raise UsageError(
                f"CalibratedModel.allreduce={self.allreduce!r} is not allowed; "
                "use 'hierarchical' or 'ring'"
            )
        for d in ("compute_efficiency_by_family", "borrow_by_generation", "fit"):
            if not isinstance(getattr(self, d), dict):
                raise UsageError(
                    f"CalibratedModel.{d}={getattr(self, d)!r} is not allowed; it must be a dict"
                )
        fams = self.compute_efficiency_by_family
        for k, v in fams.items():
            if not (isinstance(k, str) and _number(v) and 0 < v <= 1):
                raise UsageError(
                    f"CalibratedModel.compute_efficiency_by_family[{k!r}]={v!r} "
                    "is not allowed; it must be a number in (0, 1]"
                )
        for k, v in self.borrow_by_generation.items():
            if not isinstance(v, str) or v not in fams:
                raise UsageError(
                    f"CalibratedModel.borrow_by_generation[{k!r}]={v!r} is not "
                    "allowed; it must name a family of compute_efficiency_by_family"
                )
        if not isinstance(self.borrow_default, str) or (
                self.borrow_default and self.borrow_default not in fams):
            raise UsageError(
                f"CalibratedModel.borrow_default={self.borrow_default!r} is not "
                "allowed; it must be '' or a family of compute_efficiency_by_family"
            )
        if not isinstance(self.workload, str):
            raise UsageError(
                f"CalibratedModel.workload={self.workload!r} is not allowed; it must be a string"
            )

    def compute_efficiency_for(
        self, family: str, generation: str | None = None
    ) -> tuple[float, str]:
        """``(efficiency, basis)`` for an accelerator family.

        ``basis`` is ``"fitted"`` when the family had calibration rows,
        ``"borrowed:<family>"`` when its value is another family's (same or related
        generation, else ``borrow_default``), and ``"assumed"`` for
        ``compute_efficiency_default`` (a model without fitted families).
        """
        fams = self.compute_efficiency_by_family
        if family in fams:
            return float(fams[family]), "fitted"
        src = self.borrow_by_generation.get(generation) if generation is not None else None
        src = src or self.borrow_default
        if src:
            return float(fams[src]), f"borrowed:{src}"
        return float(self.compute_efficiency_default), "assumed"

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
        return {"format": "gpurank.CalibratedModel", "version": MODEL_VERSION, **asdict(self)}

    def to_json(self, path, *, overwrite=False) -> Path:
        """Write the model as JSON atomically (temp file in the same folder, then rename);
        an existing file is replaced only when it is a gpurank model or ``overwrite``."""
        from gpurank.engine.io import to_jsonable, write_text

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
        try:
            size = path.stat().st_size
            if path.is_dir():
                raise DataError(f"model file '{path}' is a folder; name the model .json file")
            if size > MAX_MODEL_BYTES:
                raise DataError(
                    f"model file '{path}' has {size:,} bytes; a model file has at "
                    f"most {MAX_MODEL_BYTES:,} (it is a few KB): name the file "
                    "calibrate -o wrote"
                )
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(
                f"model file '{path}' does not exist; write one with calibrate -o"
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"model file '{path}' is not valid JSON: {_one_line(exc)}") from None
        except RecursionError:
            raise DataError(
                f"model file '{path}' is not valid JSON: it is nested too deeply to parse"
            ) from None
        except OSError as exc:
            raise DataError(f"model file '{path}' cannot be read: {exc.strerror or exc}") from None
        if not isinstance(raw, dict) or raw.get("format") != "gpurank.CalibratedModel":
            fmt = raw.get("format") if isinstance(raw, dict) else None
            raise DataError(
                f"model file '{path}' has format={_short(fmt)}; expected 'gpurank.CalibratedModel'"
            )
        version = raw.get("version")
        if version != MODEL_VERSION:
            raise DataError(
                f"model file '{path}' has version={_short(version)}; this gpurank reads version "
                f"{MODEL_VERSION} (the roofline model; version 1 was the compute-only model): "
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
            return cls(**{k: v for k, v in raw.items() if k in names})
        except UsageError as exc:
            raise DataError(f"model file '{path}': {_one_line(exc)}") from None


def _short(value, limit: int = 60) -> str:
    """``repr`` of a value from a file, cut to one short line (a file may hold anything)."""
    text = repr(value)
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(exc) -> str:
    return " ".join(str(exc).split())[:300]


def _load_default_model() -> "CalibratedModel":
    from importlib import resources

    with resources.as_file(
        resources.files("gpurank.engine.data").joinpath("default_model.json")
    ) as p:
        return CalibratedModel.from_json(p)


#: The model used when ``model=None``: ``calibrate`` on every usable MLPerf ResNet-50 row of
#: rounds v0.5-v3.1 (``engine/data/default_model.json``; how to regenerate it, its fit and its
#: cross-validated errors are in docs/simulator.md). Families without MLPerf data (B200,
#: MI300, ...) borrow a related family's compute efficiency (``prediction_basis``).
DEFAULT_MODEL = _load_default_model()


#: The ``cfg`` inputs of :func:`evaluate` that set the broadcast shape.
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


def _safe_inputs(cfg: dict, model: CalibratedModel, xp) -> _Inputs:
    """The core inputs as float arrays of one shape, valid rows flagged in ``ok``."""
    f64 = np.float64
    peak = xp.asarray(cfg["peak_tflops"], dtype=f64) * 1e12
    eff_c = xp.asarray(cfg["compute_efficiency"], dtype=f64)
    bw = xp.asarray(cfg["mem_bw_tbps"], dtype=f64) * 1e12 * model.mem_efficiency
    n = xp.asarray(cfg["n_accelerators"], dtype=f64)
    g = xp.asarray(cfg["accelerators_per_node"], dtype=f64)
    m = xp.asarray(cfg["n_nodes"], dtype=f64)
    b = xp.asarray(cfg["local_batch"], dtype=f64)
    dali = xp.asarray(cfg["dali"], dtype=bool)
    shape = np.broadcast_shapes(*(np.shape(cfg[k]) for k in _SHAPED_INPUTS))
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


def _device_time(v: _Inputs, cfg: dict, model, workload: Workload, b_acc, shards, xp):
    """Compute, memory and device (roofline) time of one step, ``(t_compute, t_memory,
    t_device)``."""
    f64 = np.float64
    F = workload.flops_per_sample
    # compute: the batch at a fraction b / (b + batch_half) of the achieved tensor rate; a
    # batch beyond memory runs as micro-batches (gradient accumulation), whose size sets it
    bm = xp.broadcast_to(xp.asarray(cfg["micro_batch"], dtype=f64), v.shape) if (
        "micro_batch" in cfg) else v.b
    bm = xp.where(v.ok & (bm > 0), bm, v.b) if "micro_batch" in cfg else v.b
    t_compute = b_acc * F / (v.peak * v.eff_c) * ((bm + model.batch_half) / bm)
    # memory: activations per sample (F / intensity bytes) plus one pass over the weights,
    # gradients and optimizer state per step, at the achieved memory bandwidth
    intensity = model.intensity_for(workload)
    t_memory = (b_acc * (F / intensity)
                + workload.dense_params * workload.state_bytes_per_param / shards) / v.bw
    # roofline: the longer term plus the part of the shorter one that does not overlap it
    longer = xp.maximum(t_compute, t_memory)
    shorter = xp.minimum(t_compute, t_memory)
    t_device = (longer + (1.0 - model.mem_overlap) * shorter) * xp.where(
        v.dali, 1.0 + model.dali_gpu_overhead, 1.0
    )
    return t_compute, t_memory, t_device


def _allreduce_time(v: _Inputs, cfg: dict, model, workload: Workload, shards, xp):
    """Time of the gradient all-reduce, and the valid rows whose needed link has no
    bandwidth, ``(t_comm, bad_link)``."""
    f64 = np.float64
    n, g, m, ok, one = v.n, v.g, v.m, v.ok, v.one
    s = workload.synced_params * workload.grad_bytes_per_param / shards  # per accelerator
    ce = model.comm_efficiency
    intra = xp.broadcast_to(xp.asarray(cfg["intra_GBps"], dtype=f64), v.shape) * 1e9 * ce
    inter = xp.broadcast_to(xp.asarray(cfg["inter_GBps"], dtype=f64), v.shape) * 1e9 * ce
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


def _input_time(v: _Inputs, cfg: dict, model, workload: Workload, b_acc, xp):
    """Time the host needs to decode and copy one step's batch."""
    f64 = np.float64
    # input pipeline: host cores decode JPEGs (or feed the GPU decoder with DALI)
    cores = xp.broadcast_to(xp.asarray(cfg["cpu_cores_per_accelerator"], dtype=f64), v.shape)
    factor = xp.broadcast_to(xp.asarray(cfg["cpu_decode_factor"], dtype=f64), v.shape)
    per_core = xp.where(v.dali, model.dali_decode_rate, model.cpu_decode_rate)
    in_rate = cores * factor * per_core
    limited = (cores > 0) & (in_rate > 0)  # nan or 0 cores: no limit known
    if workload.decode_cost > 0:
        in_rate_s = xp.where(limited, in_rate, 1.0) / workload.decode_cost
        t_input = xp.where(limited, v.b / in_rate_s, 0.0)
    else:
        t_input = xp.zeros(v.shape, dtype=f64)
    if workload.input_bytes_per_sample > 0:
        # the accelerator's share of the batch crosses its host link (PCIe, NVLink-C2C)
        host = xp.broadcast_to(
            xp.asarray(cfg.get("host_GBps", DEFAULT_HOST_GBPS), dtype=f64), v.shape) * 1e9
        host_ok = host > 0
        t_copy = xp.where(host_ok, b_acc * workload.input_bytes_per_sample
                          / xp.where(host_ok, host, 1.0), 0.0)
        t_input = xp.maximum(t_input, t_copy)
    return t_input


def evaluate(cfg: dict, model: CalibratedModel, workload: Workload, xp=np) -> dict:
    """Evaluate the model for arrays of configurations (no noise).

    ``cfg`` keys (arrays broadcastable to one length):
      peak_tflops, compute_efficiency, mem_bw_tbps, n_accelerators, accelerators_per_node,
      n_nodes, local_batch (per replica: per accelerator for a data-parallel workload),
      intra_GBps (per accelerator, per direction), inter_GBps (per node, per direction,
      protocol efficiency already applied), cpu_cores_per_accelerator (nan = no limit),
      cpu_decode_factor, dali (bool); optional host_GBps (host-to-accelerator link per
      accelerator, ``DEFAULT_HOST_GBPS`` when absent) and micro_batch (the batch one pass
      runs when the replica's batch is accumulated over several; ``local_batch`` when
      absent)

    Returns a dict of arrays: t_compute, t_memory, t_device, t_comm, t_input, t_step,
    throughput (samples/s, all accelerators), utilization (device busy time / step time),
    bottleneck code (0 compute, 1 communication, 2 input, 3 memory).

    The arithmetic is ``+ - * / minimum maximum where`` only, on rows whose inputs are
    valid; rows with a non-positive count, batch, peak or bandwidth give NaN without a
    floating-point warning.
    """
    v = _safe_inputs(cfg, model, xp)
    # b is the batch of one replica; a replica of a model-parallel workload spans ``shards``
    # accelerators, each doing 1/shards of its work and holding 1/shards of its state
    shards = workload.shards(v.n, xp)
    b_acc = v.b / shards
    t_compute, t_memory, t_device = _device_time(v, cfg, model, workload, b_acc, shards, xp)
    t_comm, bad_link = _allreduce_time(v, cfg, model, workload, shards, xp)
    hidden = xp.minimum(model.overlap * t_comm, (2.0 / 3.0) * t_device)  # backward = 2/3
    t_gpu = t_device + t_comm - hidden
    t_input = _input_time(v, cfg, model, workload, b_acc, xp)

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
