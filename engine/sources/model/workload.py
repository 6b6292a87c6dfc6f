"""What a training job costs the performance model: :class:`Workload` (FLOPs and bytes per
sample, parameters, memory per sample, the samples or epochs to converge against the global
batch) and ResNet-50's, the default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...params import (
    NON_NEGATIVE,
    POSITIVE,
    Interval,
    Items,
    Options,
    Pairs,
    check_fields,
    check_param,
)
from ..facts.catalog import epochs_curve
from ..facts.hardware import PRECISIONS

__all__ = ["IMAGENET_TRAIN_SAMPLES", "EXPERT_HALF_WIDTH", "Workload", "resnet50"]


#: ImageNet-1k training images (MLPerf ``train_samples``; summary.csv README).
IMAGENET_TRAIN_SAMPLES = 1_281_167
#: The expert width (FFN hidden size of one routed expert) at which a mixture-of-experts
#: layer's expert FLOPs run at half the dense rate. Per routed token each expert pays a
#: fixed cost (routing, permuting the token in and out, the grouped GEMM's tail) against
#: ``18 d f`` FLOPs of work, so the expert rate is ``f / (f + EXPERT_HALF_WIDTH)`` of the dense
#: one. Estimated from Qwen3-30B-A3B (128 experts of width 768, 8 per token [Qwen3]) against
#: Llama 3 8B and 70B on the same systems and FP8 recipes [MegatronBridge] (NeMo 25.11:
#: 547 and 666 model TFLOP/s per GB200 and GB300 against 1,622-2,030): 3,700-4,800; neither
#: model is one the shipped workloads validate against (docs/simulator.md).
EXPERT_HALF_WIDTH = 4_000.0


@dataclass(frozen=True)
class Workload:
    """What one training job costs, independent of the hardware.

    The shipped workloads (one per MLPerf Training benchmark, every number with its source)
    are in ``engine/data/workloads.csv``; :func:`gpurank.engine.sources.model.workloads.workload`
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
    gathered_bytes_per_sample : float
        Bytes each sample gathers from a feature store the step reads but does not hold: a
        graph network's node features, looked up for the sampled neighbourhood of every seed.
        The store sits in the accelerators' memory when it fits (sharded over the node or
        scale-up domain, else over all accelerators) and in host memory otherwise; the bytes
        cross the link that reaches it (:func:`~gpurank.engine.sources.model.perfmodel.evaluate`).
        0: no feature store.
    feature_store_gb : float
        Size of that store (features and the graph structure the sampler walks), in GB.
    sparse_params : float
        Parameters among ``params`` that a step touches only through per-sample lookups
        (embedding tables): they take memory but are not read whole each step (their
        traffic is in ``bytes_per_sample``).
    local_batches : tuple of int
        Samples per replica the simulator draws from; ``max_global_batch`` caps the global
        batch (None: no cap beyond the reference convergence table).
    precision : str
        The number format the workload's matrix multiplications train in where the
        accelerator supports it: ``"bf16"`` (bf16 or fp16 mixed precision), ``"fp8"`` (FP8
        with higher-precision accumulation, as transformer submissions run on Hopper,
        Blackwell, Ada, Gaudi2/3 and CDNA3/4) or ``"fp4"``. The compute term uses the
        accelerator's dense peak in that format, falling back to the next wider format it
        has (``PRECISIONS``).
    architecture : str
        What kind of network it trains (``cnn``, ``transformer-encoder``,
        ``transformer-decoder``, ``diffusion``, ``rnn``, ``recommender``, ``gnn``, or ""):
        the first thing :func:`~gpurank.engine.sources.model.workloads.nearest_calibrated`
        compares when a workload without calibration rows takes another's efficiencies.
    max_model_parallel : int or None
        The most accelerators one sample can be split over (tensor x context parallel: a
        transformer's sequence splits over heads and over tokens). A row whose global batch
        gives under one sample per ``model_parallel`` accelerators is run with each sample
        split over ``n / global_batch`` of them when that is at most this, and refused
        otherwise. None (the default): ``model_parallel``, a sample is not split further.
    state_sharded : bool
        The optimizer state is sharded over all accelerators (a distributed optimizer,
        ZeRO/FSDP) even when the model is data parallel; a model-parallel workload's state
        always is.
    active_params : float or None
        Parameters a token passes through (a mixture of experts: the shared layers and the
        ``experts_per_token`` experts it is routed to); None: all ``params`` (a dense model).
        ``flops_per_sample`` already counts only these.
    experts, experts_per_token : int
        Routed experts of each mixture-of-experts layer, and how many each token is sent to;
        0 (the default): a dense model.
    moe_layers : int
        Layers with routed experts (the all-to-all runs once per such layer and direction).
    hidden_size : int
        The model width: a routed token carries ``hidden_size`` values to each expert.
    expert_parallel : int
        Accelerators the routed experts are spread over (expert parallelism, within the
        data-parallel replicas): each holds ``1 / expert_parallel`` of them, and the tokens
        they are routed to cross the all-to-all. 1: every replica holds every expert.
    dispatch_bytes : float
        Bytes per value the all-to-all moves (2: bf16; DeepSeek-V3 dispatches in fp8 and
        combines in bf16, 1.5 on average).
    efficiency_from : str
        The calibrated workload whose kernels this one's FLOPs run in (``"bert_large"``: dense
        projections and attention), whose efficiencies a first-principles prediction takes
        when it is fitted; "" (the default): the nearest by
        :func:`~gpurank.engine.sources.model.workloads.workload_distance`.
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
    gathered_bytes_per_sample: float = 0.0
    feature_store_gb: float = 0.0
    local_batches: tuple = (32, 64, 128, 256)
    max_global_batch: int | None = 65536
    precision: str = "bf16"
    architecture: str = ""
    state_sharded: bool = False
    max_model_parallel: int | None = None
    efficiency_from: str = ""
    active_params: float | None = None
    experts: int = 0
    experts_per_token: int = 0
    moe_layers: int = 0
    hidden_size: int = 0
    expert_parallel: int = 1
    dispatch_bytes: float = 2.0
    sources: tuple = ()

    parameter_constraints: ClassVar[dict] = {
        "flops_per_sample": (POSITIVE,),
        "params": (POSITIVE,),
        "activation_gb_per_sample": (POSITIVE,),
        "state_bytes_per_param": (NON_NEGATIVE,),
        "grad_bytes_per_param": (NON_NEGATIVE,),
        "decode_cost": (NON_NEGATIVE,),
        "input_bytes_per_sample": (NON_NEGATIVE,),
        "sparse_params": (NON_NEGATIVE,),
        "gathered_bytes_per_sample": (NON_NEGATIVE,),
        "feature_store_gb": (NON_NEGATIVE,),
        "allreduce_params": (None, POSITIVE),
        "bytes_per_sample": (None, POSITIVE),
        "model_parallel": (Interval(int, 1, None),),
        "arithmetic_intensity": (None, POSITIVE),
        "samples_curve": (Pairs("global_batch", "samples"),),
        "epochs_curve": (Pairs("global_batch", "epochs"),),
        "local_batches": (Items(Interval(int, 1, None), min_len=1),),
        "precision": (Options(PRECISIONS),),
        "max_global_batch": (None, Interval(int, 1, None)),
        "max_model_parallel": (None, Interval(int, 1, None)),
        "active_params": (None, POSITIVE),
        "experts": (Interval(int, 0, None),),
        "experts_per_token": (Interval(int, 0, None),),
        "moe_layers": (Interval(int, 0, None),),
        "hidden_size": (Interval(int, 0, None),),
        "expert_parallel": (Interval(int, 1, None),),
        "dispatch_bytes": (POSITIVE,),
    }

    def __post_init__(self):
        check_fields(self, self.parameter_constraints)
        # the constraints that depend on other fields
        check_param("sparse_params", self.sparse_params, Interval(float, 0, self.params))
        if self.max_model_parallel is not None:
            check_param("max_model_parallel", self.max_model_parallel,
                        Interval(int, self.model_parallel, None))
        samples = tuple(sorted((float(b), float(e)) for b, e in self.samples_curve))
        if not samples:
            check_param("epochs_curve", self.epochs_curve,
                        Pairs("global_batch", "epochs", min_len=1))
        object.__setattr__(self, "samples_curve", samples)
        object.__setattr__(self, "epochs_curve",
                           tuple(sorted((float(b), float(e)) for b, e in self.epochs_curve)))
        # a data-set size may be unknown only where the samples to converge are given
        check_param("dataset_size", self.dataset_size,
                    *((None, POSITIVE) if samples else (POSITIVE,)))
        if self.throughput_unit == "tokens/s":
            check_param("tokens_per_sample", self.tokens_per_sample, POSITIVE)
        if self.experts:
            # a mixture of experts routes each token to some of its experts, over its layers
            check_param("experts_per_token", self.experts_per_token,
                        Interval(int, 1, self.experts))
            check_param("active_params", self.active_params, Interval(float, 0, self.params))
            check_param("moe_layers", self.moe_layers, Interval(int, 1, None))
            check_param("hidden_size", self.hidden_size, Interval(int, 1, None))
            check_param("tokens_per_sample", self.tokens_per_sample, POSITIVE)
        object.__setattr__(self, "local_batches", tuple(self.local_batches))

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

    @property
    def expert_params(self) -> float:
        """Parameters of the routed experts (0 for a dense model): from the total and active
        counts, as a token uses ``experts_per_token / experts`` of them and all the rest."""
        if not self.experts:
            return 0.0
        share = self.experts_per_token / self.experts
        return float((self.params - self.active_params) / (1.0 - share)) if share < 1 else 0.0

    @property
    def expert_width(self) -> float:
        """The FFN hidden size of one routed expert (0 for a dense model or one that does not
        give its width and layers): a gated expert holds ``3 hidden_size f`` parameters."""
        if not (self.experts and self.moe_layers and self.hidden_size):
            return 0.0
        return self.expert_params / (3.0 * self.hidden_size * self.moe_layers * self.experts)

    @property
    def expert_flop_share(self) -> float:
        """The share of ``flops_per_sample`` in the routed experts: ``6`` FLOPs per active
        expert parameter per token (0 for a dense model)."""
        if not self.expert_width or not self.tokens_per_sample:
            return 0.0
        active = self.expert_params * self.experts_per_token / self.experts
        return float(min(6.0 * active * self.tokens_per_sample / self.flops_per_sample, 1.0))

    @property
    def expert_compute_factor(self) -> float:
        """How much longer a step computes than its FLOPs at the dense rate take: the expert
        share at ``f / (f + EXPERT_HALF_WIDTH)`` of it (1 for a dense model)."""
        share, width = self.expert_flop_share, self.expert_width
        if not share:
            return 1.0
        return (1.0 - share) + share * (width + EXPERT_HALF_WIDTH) / width

    def shards(self, n, xp=np):
        """Accelerators sharing one copy of the model state: ``min(n, model_parallel)``."""
        if self.model_parallel == 1:
            return 1.0
        return xp.minimum(xp.maximum(xp.asarray(n, dtype=np.float64), 1.0),
                          float(self.model_parallel))

    @property
    def sample_split(self) -> int:
        """The most accelerators one sample can be split over (``max_model_parallel``, else
        ``model_parallel``)."""
        return int(self.max_model_parallel or self.model_parallel)

    def max_local_batch(self, mem_gb, xp=np, shards=1.0, n=None):
        """Largest batch per replica that fits: 90% of memory minus the accelerator's share of
        the model state, over its share of a sample's activations.

        A model-parallel workload's state is sharded over all ``n`` accelerators (distributed
        optimizer / fully sharded state, as the MLPerf LLM submissions run), as is one with
        ``state_sharded``; a data-parallel one holds it whole on each accelerator."""
        usable = self._usable_gb(mem_gb, xp, shards, n)
        return xp.floor(xp.maximum(usable, 0.0) / (self.activation_gb_per_sample / shards))

    def memory_left_gb(self, mem_gb, local_batch, xp=np, shards=1.0, n=None):
        """Accelerator memory (GB) left by the step at ``local_batch`` samples per replica:
        what :meth:`max_local_batch` counts as usable, less the batch's activations. The
        room a feature store (``feature_store_gb``) can take on each accelerator."""
        usable = self._usable_gb(mem_gb, xp, shards, n)
        return usable - xp.asarray(local_batch, dtype=np.float64) * (
            self.activation_gb_per_sample / shards)

    def _usable_gb(self, mem_gb, xp, shards, n):
        sharded = self.model_parallel > 1 or self.state_sharded
        state_shards = n if (sharded and n is not None) else shards
        state_gb = self.params * self.state_bytes_per_param / 1e9 / state_shards
        return xp.asarray(mem_gb, dtype=np.float64) * 0.9 - state_gb - 1.0  # 1 GB runtime

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

    FLOPs: 4.1 GMAC forward per image ([NVDLE], ResNet-50 v1.5; [He2016] give 3.8 GMAC for
    v1) x 2 FLOPs/MAC x 3 (backward ~ 2x forward) = 24.6 GFLOP. Parameters: 25.6 M
    ([He2016]). Epochs curve: MLPerf reference convergence points
    (``resnet50_epochs_vs_batch.csv``, source R1).
    """
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
        architecture="cnn",
        # ILSVRC2012's training set: 138 GB of JPEGs for 1,281,167 images
        input_bytes_per_sample=110e3,
    )
