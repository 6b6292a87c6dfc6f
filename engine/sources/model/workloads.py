"""The workloads of the performance model: one per MLPerf Training benchmark, with sources.

``engine/data/workloads.csv`` holds one row per workload: the MLPerf benchmark names it stands
for (``ssd;retinanet`` — the same RetinaNet under its old and new names), model FLOPs per
sample, parameters (held and all-reduced), bytes moved per sample for the roofline's memory
term, input bytes per sample, the data-set size and the simulator's batch grid, each with a
source column (a paper, a datasheet, MLPerf's reference, or "estimate" with the method).
Samples to converge against the global batch come from the MLPerf reference convergence
points that mlperf-logging ships
(:func:`~gpurank.engine.sources.facts.mlperf_rules.reference_convergence`),
converted to samples; ResNet-50 keeps its own table (``resnet50_epochs_vs_batch.csv``) so its
behaviour is the one documented since the first release.

``workload(name)`` takes a workload name (``bert_large``) or a benchmark name (``bert``);
``default_model(workload)`` the calibrated model shipped for it
(``engine/data/models/<workload>.json``; ResNet-50: ``DEFAULT_MODEL``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from importlib import resources

import pandas as pd

from ...errors import DataError, UsageError
from ..facts.mlperf_rules import benchmark_info, reference_convergence
from ..facts.benchmarks import workload_for_benchmark, workload_names, workload_table
from .perfmodel import DEFAULT_MODEL, CalibratedModel, Workload, resnet50

__all__ = [
    "workload",
    "default_model",
    "round_samples_curve",
    "nearest_calibrated",
    "workload_distance",
    "model_for_workload",
    "borrow_software_trends",
    "MODEL_FILES",
]

#: Folder (inside gpurank.engine.data) of the calibrated model of each workload.
MODEL_FILES = "models"
_RESNET = "resnet50"


def _float(row, col):
    v = pd.to_numeric(row[col], errors="coerce")
    return float(v) if pd.notna(v) else None


def _int(row, col):
    v = _float(row, col)
    return int(v) if v is not None else None


def _samples_curve(benches: list[str], dataset_size, tokens_per_sample, round_=None) -> tuple:
    """(global batch, samples to converge) from the first benchmark with reference points
    (those of the round's ruleset when ``round_`` is given, else the latest)."""
    for bench in benches:
        rcp = reference_convergence(bench, round_)
        if rcp.empty:
            continue
        pts = []
        for gb, mean, unit in zip(rcp["global_batch"], rcp["mean"], rcp["unit"]):
            factor = {"samples": 1.0, "epochs": dataset_size, "steps": float(gb),
                      "tokens": 1.0 / tokens_per_sample if tokens_per_sample else None}.get(unit)
            if factor:
                pts.append((float(gb), float(mean) * factor))
        if pts:
            return tuple(pts)
    return ()


@lru_cache(maxsize=32)
def workload(name: str) -> Workload:
    """The shipped workload ``name`` (a workload or an MLPerf benchmark name).

    Raises
    ------
    UsageError
        When no shipped workload has that name; the message lists them.
    DataError
        When mlperf-logging has no reference convergence points for it (not installed).
    """
    wname = workload_for_benchmark(name) if isinstance(name, str) else None
    if wname is None:
        names = ", ".join(f"{w} ({b.replace(';', ', ')})" for w, b in
                          zip(workload_table()["workload"], workload_table()["benchmarks"]))
        raise UsageError(f"--workload {name!r} is not a known workload; known workloads "
                         f"(benchmarks) are: {names}")
    if wname == _RESNET:
        return resnet50()
    row = workload_table().set_index("workload").loc[wname]
    benches = [b for b in row["benchmarks"].split(";") if b]
    info = benchmark_info(benches[0]) if benches else None
    tps = info.tokens_per_sample if info is not None else _int(row, "tokens_per_sample")
    ds = _int(row, "dataset_size")
    curve = _samples_curve(benches, ds, tps) or _card_curve(row, tps)
    if not curve:
        raise DataError(f"workload {wname}: mlperf-logging has no reference convergence points "
                        f"for {', '.join(benches)}; install mlperf-logging")
    max_gb = _int(row, "max_global_batch") or int(max(b for b, _ in curve))
    sources = tuple((c.removesuffix("_source"), row[c]) for c in row.index if c.endswith("_source"))
    return Workload(
        name=wname,
        flops_per_sample=_float(row, "flops_per_sample"),
        params=_float(row, "params"),
        dataset_size=ds,
        epochs_curve=(),
        activation_gb_per_sample=_float(row, "activation_gb_per_sample"),
        state_bytes_per_param=_float(row, "state_bytes_per_param"),
        grad_bytes_per_param=_float(row, "grad_bytes_per_param"),
        decode_cost=_float(row, "decode_cost"),
        benchmark=row["benchmarks"],
        throughput_unit=(info.throughput_unit if info is not None
                         else "tokens/s" if tps else "samples/s"),
        tokens_per_sample=tps,
        samples_curve=curve,
        allreduce_params=_float(row, "allreduce_params"),
        model_parallel=_int(row, "model_parallel") or 1,
        bytes_per_sample=_float(row, "bytes_per_sample"),
        input_bytes_per_sample=_float(row, "input_bytes_per_sample") or 0.0,
        sparse_params=_float(row, "sparse_params") or 0.0,
        gathered_bytes_per_sample=_float(row, "gathered_bytes_per_sample") or 0.0,
        feature_store_gb=_float(row, "feature_store_gb") or 0.0,
        efficiency_from=str(row.get("efficiency_from", "") or ""),
        local_batches=tuple(int(x) for x in row["local_batches"].split(";")),
        max_global_batch=max_gb,
        precision=row.get("precision", "") or "bf16",
        architecture=row.get("architecture", ""),
        state_sharded=str(row.get("state_sharded", "")).strip().lower() in ("yes", "true", "1"),
        max_model_parallel=_int(row, "max_model_parallel"),
        **_experts(row),
        sources=sources,
    )


def _experts(row) -> dict:
    """The mixture-of-experts fields of a workload row (none for a dense model)."""
    out = {"active_params": _float(row, "active_params")}
    for col in ("experts", "experts_per_token", "moe_layers", "hidden_size"):
        out[col] = _int(row, col) or 0
    out["expert_parallel"] = _int(row, "expert_parallel") or 1
    out["dispatch_bytes"] = _float(row, "dispatch_bytes") or 2.0
    return out


def _card_curve(row, tokens_per_sample) -> tuple:
    """The samples to train of a workload without MLPerf reference points: its model card's
    training tokens (``train_tokens``) at every batch up to its largest
    (``max_global_batch``), as pretraining runs a fixed token budget."""
    tokens, top = _float(row, "train_tokens"), _float(row, "max_global_batch")
    if not (tokens and tokens_per_sample and top):
        return ()
    samples = tokens / float(tokens_per_sample)
    return ((1.0, samples), (top, samples))


@lru_cache(maxsize=256)
def round_samples_curve(wl: Workload, round_: str) -> tuple:
    """The samples-to-converge points of a shipped workload under the rules of an MLPerf
    round (``"v4.0"``): the reference convergence points published for that round (those of
    the nearest earlier round that has any), which is what its submissions converged
    against. ``()`` for a workload without a round-specific table (ResNet-50, a user's)."""
    if not wl.samples_curve or not wl.benchmark or not isinstance(round_, str):
        return ()
    benches = wl.benchmark.split(";")
    if workload_for_benchmark(benches[0]) != wl.name:
        return ()
    info = benchmark_info(benches[0])
    tps = info.tokens_per_sample if info is not None else None
    return _samples_curve(benches, wl.dataset_size, tps, round_)


def _has_fit(name: str) -> bool:
    if name == _RESNET:
        return True
    f = resources.files("gpurank.engine.data").joinpath(MODEL_FILES).joinpath(f"{name}.json")
    return f.is_file()


def _kind(wl: Workload) -> tuple[str, str]:
    arch = wl.architecture or ""
    return arch.split("-", 1)[0], arch


def workload_distance(a: Workload, b: Workload) -> float:
    """How unlike two workloads are, for borrowing efficiencies: another kind of network
    (CNN, transformer, diffusion, ...) counts 4, another variant of one (encoder vs decoder)
    2, then one per decade of difference in parameters, in FLOPs per sample and in the
    share of parameters trained (LoRA trains a thousandth)."""
    ka, kb = _kind(a), _kind(b)
    d = 0.0 if ka[0] == kb[0] and ka[0] else 4.0
    d += 0.0 if ka[1] == kb[1] and ka[1] else 2.0

    def lg(x):
        return math.log10(max(float(x), 1e-30))

    trained_a = a.synced_params / a.params
    trained_b = b.synced_params / b.params
    return (d + abs(lg(a.params) - lg(b.params))
            + abs(lg(a.flops_per_sample) - lg(b.flops_per_sample))
            + abs(lg(trained_a) - lg(trained_b)))


def nearest_calibrated(wl: Workload, *, exclude=(), among=None) -> str:
    """The workload with a calibrated model nearest to ``wl``, other than ``wl`` itself and
    ``exclude``: among the names ``among`` (shipped workloads fitted elsewhere), else among the
    shipped workloads with a shipped fit. The one ``wl.efficiency_from`` names when it is
    among them, else the nearest by :func:`workload_distance` (ties by name)."""
    skip = set(exclude) | {wl.name}
    pool = workload_names() if among is None else among
    names = [n for n in pool if n not in skip and (among is not None or _has_fit(n))]
    if not names:
        raise DataError(f"no calibrated workload to take efficiencies from for {wl.name!r}")
    if wl.efficiency_from:
        # the workload names the one whose kernels its FLOPs run in, when that one is fitted
        named = workload_for_benchmark(wl.efficiency_from) or wl.efficiency_from
        if named in names:
            return named
    return min(names, key=lambda n: (workload_distance(wl, workload(n)), n))


def borrow_software_trends(models: dict) -> dict:
    """``{workload: model}`` where a model fitted on one round (no software trend of its own:
    ``software_round`` set, ``software_trend_by_vendor`` empty) takes the trend of the
    nearest workload (:func:`workload_distance`) whose fit measured one, named in
    ``software_trend_from``; its families keep their own ages (their first round is its
    only one), so a later round is predicted with a measured trend, not none."""
    own = {n: m for n, m in models.items()
           if m.software_trend_by_vendor and m.software_trend_from is None}
    out = {}
    for name, m in models.items():
        if m.software_trend_by_vendor or m.software_round is None or not own:
            out[name] = m
            continue
        wl = workload(name)
        src = min(own, key=lambda n: (workload_distance(wl, workload(n)), n))
        out[name] = replace(m, software_trend_by_vendor=dict(own[src].software_trend_by_vendor),
                            software_trend_shared=own[src].software_trend_shared,
                            software_trend_decay=own[src].software_trend_decay,
                            software_trend_from=src)
    return out


def model_for_workload(model: CalibratedModel, wl: Workload) -> CalibratedModel:
    """``model`` as it applies to workload ``wl``.

    Unchanged for its own workload. For another one (a ``first-principles`` prediction) the
    batch at which an accelerator runs at half its rate, ``batch_half``, is carried over as
    work per accelerator per pass rather than as samples: what saturates an accelerator is
    the size of its kernels, and a sample of Llama 3.1 8B at 8,192 tokens holds 230 times
    the FLOPs of one of GPT-3 175B split over 64 accelerators.
    """
    if not model.workload or model.workload == wl.name or \
            workload_for_benchmark(model.workload) is None:
        return model
    src = workload(model.workload)
    per_src = src.flops_per_sample / src.model_parallel
    per_dst = wl.flops_per_sample / wl.model_parallel
    return replace(model, batch_half=model.batch_half * per_src / per_dst)


@lru_cache(maxsize=32)
def default_model(name: str) -> CalibratedModel:
    """The calibrated model shipped for a workload (or benchmark) name: ``DEFAULT_MODEL`` for
    ResNet-50, ``engine/data/models/<workload>.json`` for the others (``gpurank calibrate``
    on the shared MLPerf Training v3.0-v5.1 results, docs/simulator.md). A workload without a
    shipped fit takes the model of the nearest calibrated workload
    (:func:`nearest_calibrated`): its predictions are ``first-principles:<that workload>``,
    with this workload's own FLOPs, bytes, parameters and convergence."""
    wl = workload(name)
    wname = wl.name
    if wname == _RESNET:
        return DEFAULT_MODEL
    if not _has_fit(wname):
        return default_model(nearest_calibrated(wl))
    f = resources.files("gpurank.engine.data").joinpath(MODEL_FILES).joinpath(f"{wname}.json")
    with resources.as_file(f) as p:
        model = CalibratedModel.from_json(p)
    if model.workload != wname:  # pragma: no cover - the shipped files are tested
        raise DataError(f"{p}: model of workload {model.workload!r}, expected {wname!r}")
    return model
