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
]

#: ImageNet-1k training images (MLPerf ``train_samples``; summary.csv README).
IMAGENET_TRAIN_SAMPLES = 1_281_167


@dataclass(frozen=True)
class Workload:
    """What one training job costs, independent of the hardware.

    Describe another workload by these numbers (see docs/simulator.md, "Other workloads").

    Attributes
    ----------
    name : str
    flops_per_sample : float
        Training FLOPs per sample (forward + backward, 1 multiply-add = 2 FLOPs).
    params : float
        Trainable parameters (sets the all-reduce volume).
    dataset_size : int
        Samples per epoch.
    epochs_curve : tuple of (global_batch, epochs) pairs
        Epochs to reach the quality target vs global batch size; interpolated linearly in
        log2(batch), flat below the first point, extended with the last segment's slope above
        the last point.
    activation_gb_per_sample : float
        Accelerator memory per sample of per-accelerator batch (activations, mixed precision).
    state_bytes_per_param : float
        Weights, gradients and optimizer state per parameter (fp32 master + momentum + bf16).
    grad_bytes_per_param : float
        Bytes per parameter exchanged in the gradient all-reduce (2 = bf16/fp16 gradients).
    decode_cost : float
        Host preprocessing work per sample relative to an ImageNet JPEG (0 = no decoding).
    """

    name: str
    flops_per_sample: float
    params: float
    dataset_size: int
    epochs_curve: tuple
    activation_gb_per_sample: float = 0.05
    state_bytes_per_param: float = 16.0
    grad_bytes_per_param: float = 2.0
    decode_cost: float = 1.0

    def __post_init__(self):
        for name in ("flops_per_sample", "params", "dataset_size", "activation_gb_per_sample"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0):
                raise UsageError(f"Workload.{name}={v!r} is not allowed; it must be a number > 0")
        pts = tuple((float(b), float(e)) for b, e in self.epochs_curve)
        if not pts or any(b <= 0 or e <= 0 for b, e in pts):
            raise UsageError(
                f"Workload.epochs_curve={self.epochs_curve!r} is not allowed; it must be a "
                "non-empty sequence of (global_batch > 0, epochs > 0) pairs"
            )
        object.__setattr__(self, "epochs_curve", tuple(sorted(pts)))

    def max_local_batch(self, mem_gb, xp=np):
        """Largest per-accelerator batch that fits: 90% of memory minus model state."""
        state_gb = self.params * self.state_bytes_per_param / 1e9
        usable = xp.asarray(mem_gb, dtype=np.float64) * 0.9 - state_gb - 1.0  # 1 GB runtime
        return xp.floor(xp.maximum(usable, 0.0) / self.activation_gb_per_sample)

    def epochs(self, global_batch, xp=np):
        """Epochs to converge for each global batch (see ``epochs_curve``)."""
        gb = np.asarray(global_batch, dtype=np.float64)
        uniq, inv = np.unique(gb, return_inverse=True)
        vals = np.array([self._epochs_scalar(float(b)) for b in uniq], dtype=np.float64)
        return xp.asarray(vals[inv].reshape(gb.shape))

    def _epochs_scalar(self, b: float) -> float:
        pts = self.epochs_curve
        if not math.isfinite(b):
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
    )


@dataclass(frozen=True)
class CalibratedModel:
    """Free parameters of the performance model; fitted by ``calibrate`` or the defaults.

    ``mfu_by_family`` maps an accelerator family (``family`` column of the accelerator
    catalog) to the achieved fraction of peak dense bf16/fp16 FLOPs at large per-accelerator
    batch (model FLOP utilization, MFU). A family without a value falls back to
    ``mfu_by_generation[generation]`` and then to ``mfu_default``.
    """

    mfu_by_family: dict = field(default_factory=dict)
    mfu_by_generation: dict = field(default_factory=dict)
    mfu_default: float = 0.20
    comm_efficiency: float = 0.80     # achieved / nominal link bandwidth in the all-reduce
    overlap: float = 0.70             # fraction of the all-reduce hidden behind backward
    overhead_s: float = 20.0          # per run: evaluation, sync, ramp-up (run_start..stop)
    batch_half: float = 8.0           # per-accelerator batch at which MFU is halved
    cpu_decode_rate: float = 200.0    # images/s per host core, CPU JPEG decode + augment
    dali_decode_rate: float = 1200.0  # images/s per host core when the GPU decodes (DALI)
    dali_gpu_overhead: float = 0.03   # extra GPU time for GPU-side decoding (fraction)
    latency_intra_s: float = 5e-6     # per all-reduce step inside a node
    latency_inter_s: float = 2e-5     # per all-reduce step between nodes
    tcp_efficiency: float = 0.70      # non-RDMA networks reach this fraction of line rate
    allreduce: str = "hierarchical"   # or "ring"
    noise_sigma: float = 0.04         # run-to-run spread of throughput (simulate only)
    epochs_noise_sigma: float = 0.025 # run-to-run spread of epochs to converge
    idle_power_frac: float = 0.30     # accelerator power at 0% busy, fraction of TDP
    workload: str = "resnet50"
    fit: dict = field(default_factory=dict)   # calibration report (errors, rounds, n rows)

    def __post_init__(self):
        checks = {
            "mfu_default": (0, 1), "comm_efficiency": (0, 1), "overlap": (0, 1),
            "overhead_s": (0, None), "batch_half": (0, None), "cpu_decode_rate": (0, None),
            "dali_decode_rate": (0, None), "noise_sigma": (0, 1), "epochs_noise_sigma": (0, 1),
            "idle_power_frac": (0, 1), "tcp_efficiency": (0, 1),
        }
        for name, (lo, hi) in checks.items():
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and math.isfinite(v) and v >= lo and (hi is None or v <= hi)
            if not ok:
                allowed = f"a number in [{lo}, {hi}]" if hi is not None else f"a number >= {lo}"
                raise UsageError(f"CalibratedModel.{name}={v!r} is not allowed; it must be {allowed}")
        if self.allreduce not in ("hierarchical", "ring"):
            raise UsageError(
                f"CalibratedModel.allreduce={self.allreduce!r} is not allowed; "
                "use 'hierarchical' or 'ring'"
            )
        for d in ("mfu_by_family", "mfu_by_generation"):
            for k, v in getattr(self, d).items():
                if not (isinstance(v, (int, float)) and 0 < v <= 1):
                    raise UsageError(f"CalibratedModel.{d}[{k!r}]={v!r} is not allowed; it must be in (0, 1]")

    def mfu_for(self, family: str, generation: str | None = None) -> float:
        if family in self.mfu_by_family:
            return float(self.mfu_by_family[family])
        if generation is not None and generation in self.mfu_by_generation:
            return float(self.mfu_by_generation[generation])
        return float(self.mfu_default)

    # --- JSON -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"format": "gpurank.CalibratedModel", "version": 1, **asdict(self)}

    def to_json(self, path, *, overwrite=False) -> Path:
        """Write the model as JSON atomically (temp file in the same folder, then rename);
        an existing file is replaced only when it is a gpurank model or ``overwrite``."""
        from gpurank.engine.io import write_text

        text = json.dumps(self.to_dict(), indent=2, sort_keys=True, allow_nan=True) + "\n"
        return write_text(text, path, overwrite=overwrite, name="--output")

    @classmethod
    def from_json(cls, path) -> "CalibratedModel":
        path = Path(path)
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            raise DataError(f"model file '{path}' does not exist; write one with calibrate -o") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"model file '{path}' is not valid JSON: {exc}") from None
        if not isinstance(raw, dict) or raw.get("format") != "gpurank.CalibratedModel":
            raise DataError(
                f"model file '{path}' has format={raw.get('format') if isinstance(raw, dict) else None!r}; "
                "expected 'gpurank.CalibratedModel'"
            )
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - names - {"format", "version"})
        if unknown:
            raise DataError(f"model file '{path}' has unknown key '{unknown[0]}'; known keys are: {', '.join(sorted(names))}")
        try:
            return cls(**{k: v for k, v in raw.items() if k in names})
        except UsageError as exc:
            raise DataError(f"model file '{path}': {exc}") from None


# Defaults: fitted by ``calibrate`` on MLPerf Training ResNet-50 rounds v0.5-v2.1 (closed
# division, deduplicated; see docs/simulator.md for the fit and its held-out errors).
# Families without MLPerf data (B200, MI300, ...) use their generation's value or the
# Hopper value, an assumption stated in docs/simulator.md.
DEFAULT_MODEL = CalibratedModel(
    mfu_by_family={
        "A10": 0.202206, "A100": 0.258736, "A30": 0.257438, "A40": 0.242548,
        "A5000": 0.314489, "Gaudi2": 0.349277, "H100": 0.173389, "L4": 0.172779,
        "L40": 0.28667, "TPU v3": 0.391044, "TPU v4": 0.866079, "V100": 0.284783,
    },
    mfu_by_generation={
        "Ada": 0.229724, "Ampere": 0.257438, "Blackwell": 0.173389, "CDNA2": 0.257438,
        "CDNA3": 0.173389, "Gaudi2": 0.349277, "Gaudi3": 0.349277, "Hopper": 0.173389,
        "TPU v3": 0.391044, "TPU v4": 0.866079, "TPU v5p": 0.391044, "Volta": 0.284783,
    },
    mfu_default=0.27176,
    comm_efficiency=0.996343,
    overlap=0.177801,
    overhead_s=2.8934,
    batch_half=12.2738,
)


def evaluate(cfg: dict, model: CalibratedModel, workload: Workload, xp=np) -> dict:
    """Evaluate the model for arrays of configurations (no noise).

    ``cfg`` keys (arrays broadcastable to one length):
      peak_tflops, mfu, n_accelerators, accelerators_per_node, n_nodes, local_batch,
      intra_GBps (per accelerator, per direction), inter_GBps (per node, per direction,
      protocol efficiency already applied), cpu_cores_per_accelerator (nan = no limit),
      cpu_decode_factor, dali (bool)

    Returns a dict of arrays: t_compute, t_comm, t_input, t_step, throughput (samples/s, all
    accelerators), utilization (compute time / step time), bottleneck code (0 compute,
    1 communication, 2 input).
    """
    f64 = np.float64
    peak = xp.asarray(cfg["peak_tflops"], dtype=f64) * 1e12
    mfu = xp.asarray(cfg["mfu"], dtype=f64)
    n = xp.asarray(cfg["n_accelerators"], dtype=f64)
    g = xp.asarray(cfg["accelerators_per_node"], dtype=f64)
    m = xp.asarray(cfg["n_nodes"], dtype=f64)
    b = xp.asarray(cfg["local_batch"], dtype=f64)
    dali = xp.asarray(cfg["dali"], dtype=bool)

    # compute: per-accelerator batch b at mfu * b / (b + batch_half) of peak
    eff = b / (b + model.batch_half)
    rate = peak * mfu * eff / workload.flops_per_sample           # samples/s per accelerator
    t_compute = b / rate * xp.where(dali, 1.0 + model.dali_gpu_overhead, 1.0)

    # gradient all-reduce
    s = workload.params * workload.grad_bytes_per_param            # bytes per accelerator
    ce = model.comm_efficiency
    intra = xp.asarray(cfg["intra_GBps"], dtype=f64) * 1e9 * ce
    inter = xp.asarray(cfg["inter_GBps"], dtype=f64) * 1e9 * ce
    intra_bw_t = xp.where(g > 1, 2.0 * (g - 1.0) / g * s / xp.where(g > 1, intra, 1.0), 0.0)
    if model.allreduce == "hierarchical":
        # reduce-scatter + all-gather inside the node, node-level all-reduce of the shards
        # over the node's network (each node moves 2 (m-1)/m * s bytes per direction)
        inter_bw_t = xp.where(m > 1, 2.0 * (m - 1.0) / m * s / xp.where(m > 1, inter, 1.0), 0.0)
        steps_inter = 2.0 * _ceil_log2(m, xp)
    else:
        # one flat ring over all n accelerators; the slowest hop is the per-accelerator
        # share of the node network (when m > 1) or the intra-node link
        per_acc_net = xp.where(m > 1, inter / g, intra)
        hop = xp.where(g > 1, xp.minimum(intra, per_acc_net), per_acc_net)
        inter_bw_t = xp.where(n > 1, 2.0 * (n - 1.0) / n * s / hop, 0.0) - intra_bw_t
        steps_inter = 2.0 * (m - 1.0)
    t_comm = (intra_bw_t + inter_bw_t + model.latency_intra_s * 2.0 * (g - 1.0)
              + model.latency_inter_s * steps_inter)
    hidden = xp.minimum(model.overlap * t_comm, (2.0 / 3.0) * t_compute)   # backward = 2/3
    t_gpu = t_compute + t_comm - hidden

    # input pipeline: host cores decode JPEGs (or feed the GPU decoder with DALI)
    cores = xp.asarray(cfg["cpu_cores_per_accelerator"], dtype=f64)
    per_core = xp.where(dali, model.dali_decode_rate, model.cpu_decode_rate)
    in_rate = cores * xp.asarray(cfg["cpu_decode_factor"], dtype=f64) * per_core
    if workload.decode_cost > 0:
        in_rate = in_rate / workload.decode_cost
        known = cores == cores  # nan -> no limit known
        t_input = xp.where(known, b / xp.where(known, in_rate, 1.0), 0.0)
    else:
        t_input = xp.zeros_like(t_gpu)

    t_step = xp.maximum(t_gpu, t_input)
    throughput = n * b / t_step
    utilization = t_compute / t_step
    bottleneck = xp.where(t_input > t_gpu, 2, xp.where(t_comm - hidden > 0.25 * t_compute, 1, 0))
    return {
        "t_compute": t_compute, "t_comm": t_comm, "t_input": t_input, "t_step": t_step,
        "throughput": throughput, "utilization": utilization,
        "bottleneck": bottleneck.astype(np.int8),
    }


def _ceil_log2(m, xp):
    """ceil(log2(m)) for m >= 1 without a transcendental call (frexp is exact)."""
    _, e = xp.frexp(xp.maximum(m - 1.0, 0.0))
    return e.astype(np.float64)
