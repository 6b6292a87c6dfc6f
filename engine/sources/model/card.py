"""A training job from its model card: a TOML file read into a :class:`Workload`.

``--workload FILE.toml`` takes what a model card and a training plan say (docs/workloads.md):

* ``[model]``: ``architecture`` (``dense-transformer``, ``moe-transformer``, ``cnn``,
  ``diffusion``), ``parameters`` (MoE: ``active_parameters``, ``experts``,
  ``experts_per_token``), ``layers``, ``hidden_size``, ``sequence_length``, ``vocabulary``;
  a CNN or diffusion model gives ``forward_flops`` per sample instead of the transformer's
  shape;
* ``[training]``: how much to train, one of ``tokens``, ``samples`` or ``epochs`` of a
  ``dataset`` (a named one or ``dataset_samples``); optionally ``precision`` (``bf16``,
  ``fp8``, ``fp4``) and ``optimizer_bytes_per_parameter``;
* ``[fine_tune]`` (optional): ``lora_rank`` and ``frozen_base``.

The FLOPs, bytes and memory follow the formulas of the shipped workloads
(``engine/data/workloads.csv``, docs/simulator.md): ``6 N s + 12 L h s^2`` per sequence for
training ([Kaplan2020], [Narayanan2021]), ``4 N s + 12 L h s^2`` for LoRA on a frozen base
(the forward and the backward through the activations; frozen weights get no gradients,
[Hu2021]), ``3 x 34 s h L`` bytes moved and ``34 s h L`` bytes of activations
([Korthikanti2022]). A mixture of experts spends the FLOPs of its *active* parameters and
holds the state of *all* of them (:func:`moe_fields`, the one place that mapping lives).

A card has no calibration runs: its predictions take the efficiencies of the nearest
calibrated workload (``first-principles:<workload>``, :func:`card_model`), and their
interval widens with how far the card is from it (:func:`distance_widening`).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import median
from typing import ClassVar

import numpy as np
import pandas as pd

from ...errors import DataError
from ...params import Interval, Options, ParamError, check_fields, check_param
from ..facts.benchmarks import workload_for_benchmark, workload_names
from ..facts.hardware import PRECISIONS
from ..facts.regular_files import UnreadableFile, read_regular
from .intervals import interval_table
from .predict import predict
from .workload import IMAGENET_TRAIN_SAMPLES, Workload
from .workloads import default_model, nearest_calibrated, workload, workload_distance

__all__ = [
    "ARCHITECTURES",
    "DATASETS",
    "CARD_FILE_LIMIT",
    "Card",
    "read_card",
    "card_workload",
    "moe_fields",
    "batch_limit",
    "is_card_path",
    "workload_arg",
    "card_model",
    "distance_widening",
    "predict_workload",
]

#: The architectures a card may name, and the kind :func:`workload_distance` compares.
ARCHITECTURES = {
    "dense-transformer": "transformer-decoder",
    "moe-transformer": "transformer-decoder",
    "cnn": "cnn",
    "diffusion": "diffusion",
}
_TRANSFORMERS = ("dense-transformer", "moe-transformer")
#: Training samples of the data sets a card may name by ``dataset`` (the shipped workloads'
#: sizes, engine/data/workloads.csv).
DATASETS = {
    "imagenet-1k": IMAGENET_TRAIN_SAMPLES,
    "coco-2017": 117_266,
    "laion-400m-mlperf": 6_513_144,
}
#: A card is a few hundred bytes; anything over this is not one.
CARD_FILE_LIMIT = 1 << 20
#: Weights and gradients in bf16 (2 + 2 bytes) beside the optimizer's state.
_WEIGHT_GRAD_BYTES = 4.0
#: One shard's bf16 weights stay under this (GB): the tensor x pipeline split assumed for a
#: large model, as the shipped 70B-405B workloads run (8-64 accelerators per copy).
_SHARD_WEIGHT_GB = 20.0
#: Samples per replica the simulator draws from, by architecture (the shipped workloads').
_LOCAL_BATCHES = {"transformer": (1, 2, 4, 8), "cnn": (32, 64, 128, 256),
                  "diffusion": (8, 16, 32, 64)}
#: Activation memory per sample assumed for a CNN or diffusion card that gives none
#: (ResNet-50's and Stable Diffusion v2's, engine/data/workloads.csv).
_ACTIVATION_GB = {"cnn": 0.05, "diffusion": 0.6}

_SECTIONS = {
    "name": None,
    "model": ("architecture", "parameters", "active_parameters", "experts",
              "experts_per_token", "moe_layers", "expert_parallel", "layers", "hidden_size", "sequence_length", "vocabulary",
              "forward_flops", "activation_gb_per_sample"),
    "training": ("tokens", "samples", "epochs", "dataset", "dataset_samples", "global_batch",
                 "precision", "optimizer_bytes_per_parameter"),
    "fine_tune": ("lora_rank", "frozen_base"),
}

_POS_INT = Interval(int, 1, None)
#: Upper bounds of a card's magnitudes, far beyond any model trained (Llama 3.1 405B: 4e11
#: parameters, 1.6e13 tokens, 126 layers, 16,384 hidden, 131,072 context): a card past them
#: is a typo, and its products (FLOPs per sample x samples) would overflow a float.
_MAX_COUNT = 1e15
_BIG = Interval(float, 0, _MAX_COUNT, closed="right")
_BIG_INT = Interval(int, 1, int(_MAX_COUNT))
_SHAPE_INT = Interval(int, 1, 10_000_000)
#: The fields that are whole numbers.
_INT_FIELDS = frozenset({"experts", "experts_per_token", "moe_layers", "expert_parallel",
                         "layers", "global_batch", "hidden_size",
                         "sequence_length", "vocabulary", "dataset_samples", "lora_rank"})
#: The compute-optimal batch in tokens, B = 0.2920 C^0.3271 for C training FLOPs: the fit of
#: [DeepSeekLLM2024] over language-model runs from 1e17 to 3e20 FLOPs (its batch grows
#: slowly with the budget: 0.5M tokens for a small fine-tune, 6M for a 13B model on 300B
#: tokens, 70M for Llama 3.1 405B's 3.8e25 FLOPs).
_OPTIMAL_BATCH = (0.2920, 0.3271)
#: Without a global batch on the card, a CNN or a diffusion model trains at most at the
#: largest batch its shipped workload's reference convergence points reach (ResNet-50's
#: 65,536, Stable Diffusion's 2,048: engine/data/workloads.csv, mlperf-logging).
_MAX_BATCH = {"cnn": 65_536, "diffusion": 2_048}


@dataclass(frozen=True)
class Card:
    """What a model card and a training plan say about one training job.

    Attributes
    ----------
    name : str
    architecture : str
        One of :data:`ARCHITECTURES`.
    parameters : float
        All parameters (an MoE: of every expert).
    active_parameters, experts, experts_per_token : float, int, int or None
        A mixture of experts: the parameters one token runs through, the experts per layer
        and how many of them each token is routed to.
    moe_layers, expert_parallel : int or None
        A mixture of experts: the layers with routed experts (default: every layer) and the
        accelerators the experts are spread over (default: one node of eight, or fewer
        when there are fewer experts).
    layers, hidden_size, sequence_length, vocabulary : int or None
        A transformer's shape (required for one).
    forward_flops : float or None
        FLOPs of one sample's forward pass (a CNN or diffusion model; required for one).
    activation_gb_per_sample : float or None
    tokens, samples, epochs : float or None
        How much to train: exactly one of them (``epochs`` with a data set).
    dataset : str or None
        A data set of :data:`DATASETS`; or ``dataset_samples`` for another one.
    dataset_samples : int or None
    global_batch : int or None
        The largest global batch (samples; sequences for a transformer) the training plan
        allows; the batch chosen for a configuration is at most this. None: the
        compute-optimal batch of [DeepSeekLLM2024] for a transformer (:func:`batch_limit`),
        the largest batch a shipped workload of the kind is measured at otherwise.
    precision : str
    optimizer_bytes_per_parameter : float
        Optimizer state per trained parameter (12: fp32 master, Adam's m and v).
    lora_rank : int or None
    frozen_base : bool
    source : str
        The file it was read from.
    """

    name: str
    architecture: str
    parameters: float
    active_parameters: float | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    moe_layers: int | None = None
    expert_parallel: int | None = None
    layers: int | None = None
    hidden_size: int | None = None
    sequence_length: int | None = None
    vocabulary: int | None = None
    forward_flops: float | None = None
    activation_gb_per_sample: float | None = None
    tokens: float | None = None
    samples: float | None = None
    epochs: float | None = None
    dataset: str | None = None
    dataset_samples: int | None = None
    global_batch: int | None = None
    precision: str = "bf16"
    optimizer_bytes_per_parameter: float = 12.0
    lora_rank: int | None = None
    frozen_base: bool = False
    source: str = field(default="", compare=False)

    parameter_constraints: ClassVar[dict] = {
        "architecture": (Options(tuple(ARCHITECTURES)),),
        "parameters": (_BIG,),
        "active_parameters": (None, _BIG),
        "experts": (None, Interval(int, 2, 10_000_000)),
        "experts_per_token": (None, _SHAPE_INT),
        "moe_layers": (None, _SHAPE_INT),
        "expert_parallel": (None, _SHAPE_INT),
        "layers": (None, _SHAPE_INT),
        "hidden_size": (None, _SHAPE_INT),
        "sequence_length": (None, _SHAPE_INT),
        "vocabulary": (None, _SHAPE_INT),
        "forward_flops": (None, Interval(float, 0, 1e18, closed="right")),
        "activation_gb_per_sample": (None, Interval(float, 0, 1e6, closed="right")),
        "tokens": (None, _BIG),
        "samples": (None, _BIG),
        "epochs": (None, Interval(float, 0, 1e6, closed="right")),
        "dataset": (None, Options(tuple(DATASETS))),
        "dataset_samples": (None, _BIG_INT),
        "global_batch": (None, _BIG_INT),
        "precision": (Options(PRECISIONS),),
        "optimizer_bytes_per_parameter": (Interval(float, 0, 64),),
        "lora_rank": (None, _SHAPE_INT),
        "frozen_base": (Options((True, False)),),
    }

    def __post_init__(self):
        check_fields(self, self.parameter_constraints)
        self._check_shape()
        self._check_length()

    def _need(self, names, why):
        for n in names:
            if getattr(self, n) is None:
                raise ParamError(n, f"is required {why}")

    def _check_shape(self):
        arch = self.architecture
        if arch in _TRANSFORMERS:
            self._need(("layers", "hidden_size", "sequence_length", "vocabulary"),
                       f"for a {arch}")
            # the embedding alone holds vocabulary x hidden parameters
            check_param("parameters", self.parameters,
                        Interval(float, float(self.vocabulary) * self.hidden_size, None))
        else:
            self._need(("forward_flops",), f"for a {arch} (FLOPs of one sample's forward pass)")
        if arch == "moe-transformer":
            self._need(("active_parameters", "experts", "experts_per_token"),
                       "for a moe-transformer")
            check_param("active_parameters", self.active_parameters,
                        Interval(float, 0, self.parameters, closed="right"))
            check_param("experts_per_token", self.experts_per_token,
                        Interval(int, 1, self.experts))
            # active = shared + routed x k/E and all = shared + routed with shared >= 0: the
            # active parameters are at least that share of all of them (below it the shared
            # layers would hold a negative number of parameters)
            share = self.experts_per_token / self.experts
            check_param("active_parameters", self.active_parameters,
                        Interval(float, self.parameters * share, self.parameters))
            if self.moe_layers is not None:
                check_param("moe_layers", self.moe_layers, Interval(int, 1, self.layers))
            if self.expert_parallel is not None:
                check_param("expert_parallel", self.expert_parallel,
                            Interval(int, 1, self.experts))
        else:
            for n in ("active_parameters", "experts", "experts_per_token", "moe_layers",
                      "expert_parallel"):
                if getattr(self, n) is not None:
                    raise ParamError(n, f"applies to a moe-transformer, not a {arch}")
        if self.lora_rank is not None:
            if arch not in _TRANSFORMERS:
                raise ParamError("lora_rank", f"applies to a transformer, not a {arch}")
            if not self.frozen_base:
                raise ParamError("frozen_base", "must be true with lora_rank (LoRA trains "
                                                "adapters beside a frozen base)")
            # a rank above the hidden size is no low-rank adapter: more weights than the layer
            check_param("lora_rank", self.lora_rank, Interval(int, 1, self.hidden_size))
        elif self.frozen_base:
            # a frozen base without adapters trains nothing; planning it as full training
            # would answer another question than the card asks
            raise ParamError("lora_rank", "is required in [fine_tune] (a frozen base trains "
                                          "only LoRA adapters); drop [fine_tune] to train "
                                          "every parameter")

    def _check_length(self):
        given = [n for n in ("tokens", "samples", "epochs") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ParamError("tokens", "(or samples, or epochs of a dataset) is required once; "
                             + (f"got {', '.join(given)}" if given else "got none"))
        if self.tokens is not None and self.architecture not in _TRANSFORMERS:
            raise ParamError("tokens", f"applies to a transformer; a {self.architecture} "
                                       "trains on samples or epochs")
        if self.epochs is not None and self.dataset is None and self.dataset_samples is None:
            raise ParamError("dataset", "(or dataset_samples) is required with epochs")
        if self.dataset is not None and self.dataset_samples is not None:
            raise ParamError("dataset_samples", f"and dataset {self.dataset!r} both size the "
                                                "data set; give one of them")
        if self.global_batch is not None and self.global_batch > self.training_samples:
            raise ParamError("global_batch", f"must be at most the {self.training_samples:.6g} "
                                             f"samples trained on; got {self.global_batch}")

    @property
    def training_samples(self) -> float:
        """Samples (sequences for a transformer) the job trains on."""
        if self.tokens is not None:
            return float(self.tokens) / float(self.sequence_length)
        if self.samples is not None:
            return float(self.samples)
        size = self.dataset_samples if self.dataset_samples is not None else \
            DATASETS[self.dataset]
        return float(self.epochs) * float(size)


def moe_fields(card: Card) -> dict:
    """The mixture-of-experts fields of :class:`Workload` for ``card`` (empty for a dense
    card), with the parameters that drive each term: ``flops_params`` (the compute: an
    MoE's active parameters) and ``params`` (the state held: every expert's). The one place
    an MoE card maps onto the model: the routed experts are spread over ``expert_parallel``
    accelerators (the card's, else one node of eight, as gpt-oss is trained) and their
    tokens cross the expert-parallel all-to-all once per MoE layer and direction."""
    if card.architecture != "moe-transformer":
        return {"flops_params": float(card.parameters), "params": float(card.parameters),
                "workload": {}, "note": ""}
    ep = card.expert_parallel if card.expert_parallel is not None else min(card.experts, 8)
    layers = card.moe_layers if card.moe_layers is not None else card.layers
    share = card.experts_per_token / card.experts
    routed = (card.parameters - card.active_parameters) / (1.0 - share) if share < 1 else 0.0
    return {"flops_params": float(card.active_parameters), "params": float(card.parameters),
            # one replica's weights: the shared layers whole, the routed experts split
            "held_params": float(card.parameters - routed + routed / ep),
            "workload": dict(active_params=float(card.active_parameters),
                             experts=int(card.experts),
                             experts_per_token=int(card.experts_per_token),
                             moe_layers=int(layers), hidden_size=int(card.hidden_size),
                             expert_parallel=int(ep)),
            "note": f"{card.experts} experts, {card.experts_per_token} per token over "
                    f"{layers} MoE layers, spread over {ep} accelerators"
                    + ("" if card.expert_parallel is not None else " (assumed: one node)")
                    + f": FLOPs of the {card.active_parameters:.3g} active parameters, "
                      f"memory of all {card.parameters:.3g}, the experts' all-to-all over "
                      "the scale-up domain, else the network"}


def _pow2_at_least(x: float) -> int:
    return 1 if x <= 1 else int(2 ** math.ceil(math.log2(x)))


def _transformer_fields(card: Card) -> dict:
    """FLOPs, bytes and memory per sequence of a transformer card (the formulas of
    ``workloads.csv``'s llama31_8b and llama2_70b_lora rows)."""
    s, h, L = float(card.sequence_length), float(card.hidden_size), float(card.layers)
    moe = moe_fields(card)
    attention = 12.0 * L * h * s * s
    lora = card.lora_rank is not None
    activations = 34.0 * s * h * L
    if lora:
        flops = 4.0 * moe["flops_params"] * s + attention
        bytes_ = 2.0 * activations
        act_gb = s * h * L * 2.0 / 1e9  # full activation checkpointing: layer inputs only
        adapters = 2.0 * card.lora_rank * h * 4.0 * L  # r (d_in + d_out) on q, k, v, o
        state, synced = 2.0, adapters
    else:
        flops = 6.0 * moe["flops_params"] * s + attention
        bytes_ = 3.0 * activations
        act_gb = activations / 1e9
        state, synced = _WEIGHT_GRAD_BYTES + card.optimizer_bytes_per_parameter, None
    mp = _pow2_at_least(moe.get("held_params", moe["params"]) * 2.0 / 1e9 / _SHARD_WEIGHT_GB)
    kind = "LoRA rank %d on a frozen base" % card.lora_rank if lora else "training"
    formula = ("4 N s + 12 L h s^2" if lora else "6 N s + 12 L h s^2")
    return dict(
        flops_per_sample=flops, params=moe["params"], bytes_per_sample=bytes_,
        activation_gb_per_sample=card.activation_gb_per_sample or act_gb,
        state_bytes_per_param=state, allreduce_params=synced, model_parallel=mp,
        max_model_parallel=max(64, mp * 8), state_sharded=True,
        throughput_unit="tokens/s", tokens_per_sample=int(card.sequence_length),
        input_bytes_per_sample=8.0 * s, decode_cost=0.0,
        local_batches=_LOCAL_BATCHES["transformer"],
        sources=(("flops", f"{formula} ({kind}) with N = {moe['flops_params']:.4g}, "
                           f"s = {s:g}, L = {L:g}, h = {h:g}"),
                 ("model_parallel", f"{mp}: one shard's bf16 weights under "
                                    f"{_SHARD_WEIGHT_GB:g} GB (estimate)"),
                 ("moe", moe["note"])),
        **moe["workload"],
    )


def _other_fields(card: Card) -> dict:
    kind = card.architecture
    act = card.activation_gb_per_sample or _ACTIVATION_GB[kind]
    return dict(
        flops_per_sample=3.0 * float(card.forward_flops), params=float(card.parameters),
        bytes_per_sample=None, activation_gb_per_sample=act,
        state_bytes_per_param=_WEIGHT_GRAD_BYTES + card.optimizer_bytes_per_parameter,
        allreduce_params=None, model_parallel=1, max_model_parallel=None,
        state_sharded=False, throughput_unit="samples/s", tokens_per_sample=None,
        input_bytes_per_sample=0.0, decode_cost=1.0 if kind == "cnn" else 0.0,
        local_batches=_LOCAL_BATCHES[kind],
        sources=(("flops", "3 x forward_flops (backward ~ 2 x forward)"),
                 ("activation_gb_per_sample",
                  "card" if card.activation_gb_per_sample else
                  f"assumed {act:g} GB (the shipped {kind} workload's)")),
    )


def batch_limit(card: Card, flops_per_sample: float) -> tuple[int, str]:
    """The largest global batch (samples) a configuration may choose for ``card``, and why.

    The card's ``global_batch`` when it gives one. Else, for a transformer, the
    compute-optimal batch of [DeepSeekLLM2024], ``0.2920 C^0.3271`` tokens for the job's
    ``C`` training FLOPs, in whole sequences: beyond it a larger batch trains no faster per
    step taken but converges worse, which a flat token budget cannot show. A CNN or a
    diffusion model: the largest batch its kind's shipped workload is measured at.
    """
    if card.global_batch is not None:
        return int(card.global_batch), f"{card.global_batch:,}: the card's global_batch"
    if card.architecture in _TRANSFORMERS:
        c = flops_per_sample * card.training_samples
        a, b = _OPTIMAL_BATCH
        tokens = a * c ** b
        top = max(1, int(tokens // card.sequence_length))
        return top, (f"{top:,} sequences: the compute-optimal batch of {tokens:.3g} tokens "
                     f"for {c:.3g} training FLOPs, 0.2920 C^0.3271 [DeepSeekLLM2024]")
    top = _MAX_BATCH[card.architecture]
    return top, (f"{top:,}: the largest batch the shipped {card.architecture} workload's "
                 "reference convergence points reach (assumed; give global_batch)")


def card_workload(card: Card) -> Workload:
    """The :class:`Workload` of a card: FLOPs, bytes and memory by the shipped formulas, and
    the samples to train as a flat convergence curve up to the batch limit (the card says
    how much to train; within :func:`batch_limit` it does not depend on the batch)."""
    f = _transformer_fields(card) if card.architecture in _TRANSFORMERS else _other_fields(card)
    sources = tuple((k, v) for k, v in f.pop("sources") if v)
    samples = card.training_samples
    top, why = batch_limit(card, f["flops_per_sample"])
    return Workload(
        name=card.name,
        dataset_size=card.dataset_samples or (DATASETS[card.dataset] if card.dataset else None),
        epochs_curve=(),
        # flat up to the batch limit: the card says how much to train, whatever the batch
        samples_curve=((1.0, samples), (float(top), samples)) if top > 1 else
        ((1.0, samples),),
        grad_bytes_per_param=2.0,
        precision=card.precision,
        architecture=ARCHITECTURES[card.architecture],
        max_global_batch=top,
        sources=sources + (("max_global_batch", why), ("card", card.source)),
        **f,
    )


def _value(table: dict, key: str, section: str):
    v = table.get(key)
    if isinstance(v, (dict, list)):
        where = f"[{section}] " if section else ""
        raise ParamError(key, f"in {where}must be a single value; got a "
                              f"{'table' if isinstance(v, dict) else 'list'}")
    # TOML writes 13e9 as a float and 8 as an integer: each field gets the kind it declares
    if isinstance(v, int) and not isinstance(v, bool) and key not in _INT_FIELDS:
        return float(v)
    if isinstance(v, float) and v.is_integer() and key in _INT_FIELDS:
        return int(v)
    return v


def _fields(doc: dict) -> dict:
    unknown = [k for k in doc if k not in _SECTIONS]
    if unknown:
        raise ParamError(unknown[0], "is not a card field; a card has name and the tables "
                                     "[model], [training], [fine_tune]")
    out = {"name": doc.get("name")}
    for section, keys in _SECTIONS.items():
        if keys is None:
            continue
        table = doc.get(section, {})
        if not isinstance(table, dict):
            raise ParamError(section, "must be a table ([" + section + "])")
        extra = [k for k in table if k not in keys]
        if extra:
            raise ParamError(extra[0], f"is not a field of [{section}]; its fields are: "
                                       f"{', '.join(keys)}")
        for k in keys:
            if k in table:
                out[k] = _value(table, k, section)
    if "fine_tune" in doc:
        out.setdefault("frozen_base", True)
    for req in ("architecture", "parameters"):
        if out.get(req) is None:
            raise ParamError(req, "is required in [model]")
    return out


def read_card(path) -> Card:
    """Read and check a card file (TOML, at most :data:`CARD_FILE_LIMIT` bytes).

    Raises
    ------
    DataError
        The file is unreadable, not TOML, or a field is missing or impossible: one line
        naming the file and the field.
    """
    p = Path(path)
    try:
        doc = tomllib.loads(read_regular(p, limit=CARD_FILE_LIMIT).decode("utf-8"))
    except UnreadableFile as exc:
        gone = not (p.exists() or p.is_symlink())
        raise DataError(f"workload file '{p}' "
                        + ("does not exist" if gone else
                           str(exc).removesuffix("; skipped"))) from None
    except UnicodeDecodeError:
        raise DataError(f"workload file '{p}' is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"workload file '{p}' is not TOML: {exc}") from None
    try:
        fields = _fields(doc)
        name = fields.pop("name")
        name = _check_name(p.stem if name is None else name)
        if workload_for_benchmark(str(name)) is not None or name in workload_names():
            raise ParamError("name", f"must not be a shipped workload's name; got {name!r} "
                                     "(rename the card)")
        return Card(name=str(name), source=str(p), **fields)
    except ParamError as exc:
        raise DataError(f"workload file '{p}': {exc}") from None
    except TypeError as exc:  # a value of the wrong kind (a string for a number)
        raise DataError(f"workload file '{p}': {exc}") from None


def _check_name(name) -> str:
    if not isinstance(name, str) or not (0 < len(name) <= 80) or not name.isprintable():
        raise ParamError("name", f"must be a name of 1-80 printable characters; got {name!r}")
    return name


def is_card_path(text) -> bool:
    """Whether a ``--workload`` value names a file (ends in ``.toml``) rather than a shipped
    workload."""
    return isinstance(text, (str, Path)) and str(text).lower().endswith(".toml")


def workload_arg(text) -> Workload:
    """The workload a ``--workload`` value names: a card file (``*.toml``) or a shipped
    workload or MLPerf benchmark."""
    if is_card_path(text):
        card = read_card(text)
        try:
            return card_workload(card)
        except ParamError as exc:  # a derived quantity out of range: the card's fault
            raise DataError(f"workload file '{card.source}': {exc}") from None
    return workload(text)


@lru_cache(maxsize=1)
def _typical_distance() -> float:
    """The median distance from a calibrated workload to its nearest other calibrated one:
    how far the held-out workloads behind the first-principles interval were."""
    dists = []
    for n in workload_names():
        try:
            other = nearest_calibrated(workload(n))
        except DataError:
            continue
        dists.append(workload_distance(workload(n), workload(other)))
    return float(median(dists)) if dists else 0.0


def card_model(wl: Workload):
    """The calibrated model a workload is predicted with: its shipped one, or for a card the
    nearest calibrated workload's, with the distance to it."""
    if workload_for_benchmark(wl.name) is not None:
        return default_model(wl.name), "", 0.0
    near = nearest_calibrated(wl)
    return default_model(near), near, workload_distance(wl, workload(near))


def distance_widening(distance: float) -> float:
    """The factor a card's interval widens by (both ends, in log space): ``per_doubling``
    of the interval table per unit of :func:`workload_distance` beyond the typical distance
    of the held-out workloads the first-principles interval was measured on."""
    beyond = max(float(distance) - _typical_distance(), 0.0)
    return float(math.exp(interval_table().per_doubling * beyond))


def predict_workload(table: pd.DataFrame, wl: Workload, **kw) -> pd.DataFrame:
    """:func:`predict` for a shipped workload or a card: a card's rows say which calibrated
    workload they borrow from and how far it is, and their interval widens with that
    distance (:func:`distance_widening`)."""
    model, near, dist = card_model(wl)
    out = predict(table, model, workload=wl, **kw)
    if not near or not len(out):
        return out
    widen = distance_widening(dist)
    lo = out["predicted_time_to_train_min_lo"].to_numpy(float)
    hi = out["predicted_time_to_train_min_hi"].to_numpy(float)
    out["predicted_time_to_train_min_lo"] = lo / widen
    out["predicted_time_to_train_min_hi"] = hi * widen
    note = (f"card {wl.name}: nearest calibrated workload {near} at distance {dist:.2f}"
            + (f"; interval widened x{widen:.2f} for the distance" if widen > 1.0 else ""))
    said = dict(wl.sources)
    moe, batch = said.get("moe", ""), said.get("max_global_batch", "")
    ok = out["prediction_basis"].astype(str).to_numpy() != ""
    old = out["prediction_note"].astype(str).to_numpy()
    extra = note + (f"; global batch at most {batch}" if batch else "") + \
        (f"; {moe}" if moe else "")
    out["prediction_note"] = np.where(ok, np.where(old == "", extra, old + "; " + extra), old)
    return out
