"""Fit the performance model to measured runs (MLPerf) and predict any canonical table.

``calibrate(table) -> CalibratedModel`` fits the free parameters (the compute efficiency of
each accelerator family, the workload's arithmetic intensity, the compute/memory overlap,
communication efficiency and overlap, the fixed run overhead and the batch knee) by robust
least squares on log time-to-train. ``predict(table, model)`` adds ``predicted_*`` columns
beside the table's measured values. ``cross_validate`` refits with one round or one family
held out at a time; ``validation_report`` turns both into the Markdown tables of
docs/simulator.md (``gpurank calibrate --report``).

Input tables use the canonical columns: ``accelerator, n_accelerators, n_nodes,
accelerators_per_node, host_cpu, cpu_cores_per_accelerator, interconnect, network, framework,
global_batch_size, epochs, time_to_train_min, throughput`` (+ ``round`` to split train/test,
+ optional ``price_per_accelerator_hour``, ``accelerator_id``, ``input_pipeline``, and the
reader's ``division`` and ``is_duplicate``). Accelerator names resolve through
:mod:`gpurank.engine.sources.accelerators`; rows whose accelerator the catalog does not model
are kept with NaN predictions and a ``prediction_note``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog as _cat
from ..errors import DataError, UsageError
from ..io import read_table, write_table
from ..outputs import check_target, publish_file
from ..schema import shown_names
from .accelerators import resolve_accelerator
from .perfmodel import HOST_COPY_EFFICIENCY, CalibratedModel, Workload, evaluate, resnet50
from .workloads import default_model, workload, workload_for_benchmark

__all__ = [
    "CalibratedModel",
    "calibrate",
    "predict",
    "fit_errors",
    "cross_validate",
    "cv_summary",
    "validation_report",
    "run_calibrate_cli",
    "run_predict_cli",
    "REQUIRED_PREDICT_COLUMNS",
    "PREDICTED",
    "BOTTLENECKS",
    "REPORT_BEGIN",
    "REPORT_END",
    "WORKLOADS_BEGIN",
    "WORKLOADS_END",
    "workload_of",
    "workloads_report",
]

REQUIRED_PREDICT_COLUMNS = ("accelerator", "n_accelerators", "n_nodes", "accelerators_per_node")
REQUIRED_CALIBRATE_COLUMNS = REQUIRED_PREDICT_COLUMNS + ("time_to_train_min",)
PREDICTED = ("time_to_train_min", "throughput", "utilization", "cost_usd", "energy_kwh")
#: Bottleneck names by the codes of :func:`~gpurank.engine.sources.perfmodel.evaluate`.
BOTTLENECKS = ("compute", "communication", "input", "memory")
#: Generations without calibration data borrow the compute efficiency of a related
#: generation (assumption, see docs/simulator.md): (generation without data, generation it
#: borrows from). A generation with data lends the family with the most rows.
GENERATION_FALLBACK = (
    ("Blackwell", "Hopper"),
    ("Ada", "Ampere"),
    ("CDNA3", "Hopper"),
    ("CDNA2", "Ampere"),
    ("TPU v4", "TPU v3"),
    ("TPU v5p", "TPU v3"),
    ("TPU v3", "TPU v4"),
    ("Gaudi3", "Gaudi2"),
)
#: The section of a Markdown file that ``calibrate --report`` rewrites (the rest is kept).
REPORT_BEGIN = "<!-- gpurank calibrate --report: begin (generated; edits here are replaced) -->"
REPORT_END = "<!-- gpurank calibrate --report: end -->"
#: The section ``calibrate --benchmark all --report`` rewrites: the per-workload validation.
WORKLOADS_BEGIN = ("<!-- gpurank calibrate --benchmark all --report: begin (generated; edits "
                   "here are replaced) -->")
WORKLOADS_END = "<!-- gpurank calibrate --benchmark all --report: end -->"


def workload_of(table, given: Workload | None, model: CalibratedModel | None) -> Workload:
    """The workload a table is of: ``given``, else the model's, else the one the table's
    ``benchmark`` column names (it must name one), else ResNet-50."""
    if given is not None:
        if not isinstance(given, Workload):
            raise UsageError(
                f"workload: {type(given).__name__} is not allowed; pass a Workload or None")
        return given
    if model is not None and model.workload and workload_for_benchmark(model.workload):
        return workload(model.workload)
    if isinstance(table, pd.DataFrame) and "benchmark" in table.columns:
        names = sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})
        if len(names) > 1:
            raise DataError(
                f"the table holds results of {len(names)} benchmarks ({', '.join(names)}); "
                "the model describes one workload: choose one with --benchmark NAME")
        if names:
            return workload(names[0])
    return resnet50()


# --------------------------------------------------------------------------------------
# host and network facts from free text
# --------------------------------------------------------------------------------------
_CPU_KEY = re.compile(r"(e5-\d{4}\s*v\d|\d{4}[a-z]?\+?|grace)")


def _cpu_factor_map(cpus: pd.DataFrame) -> dict:
    out = {}
    for name, f in zip(cpus["host_cpu"].astype(str), cpus["decode_rate_factor"].astype(float)):
        m = _CPU_KEY.search(name.lower())
        if m:
            out[m.group(1).replace(" ", "")] = f
    return out


def _cpu_factor(host_cpu, fmap) -> float:
    if not isinstance(host_cpu, str):
        return 1.0
    m = _CPU_KEY.search(host_cpu.lower())
    if m:
        key = m.group(1).replace(" ", "")
        if key in fmap:
            return fmap[key]
        if key.rstrip("+") in fmap:
            return fmap[key.rstrip("+")]
    return 1.0


_NET_RATE = {
    "xdr": 800,
    "ndr": 400,
    "hdr100": 100,
    "hdr": 200,
    "edr": 100,
    "fdr": 56,
    "omni-path": 100,
    "opa": 100,
}


def _network_GBps(text, links: dict, tcp_eff: float) -> float:
    """Node bandwidth per direction (GB/s, protocol efficiency applied) from a link id or
    free text; nan when unknown."""
    if not isinstance(text, str) or not text.strip():
        return math.nan
    if text in links:
        return links[text]
    s = text.lower()
    parts = re.split(r"[,;]", s)
    comp = [p for p in parts if "compute" in p]
    if comp:
        parts = comp
    else:
        parts = [p for p in parts if not re.search(r"management|storage|idrac|bmc", p)] or parts
    total = 0.0
    for p in parts:
        cnt = re.search(r"(\d+)\s*x", p)
        count = int(cnt.group(1)) if cnt else 1
        rate = None
        for key, r in _NET_RATE.items():
            if key in p:
                rate = r
                break
        if rate is None:
            mm = re.search(r"(\d+)\s*(?:/\s*\d+\s*)?g(?:b|bit|bps|be)", p)
            rate = int(mm.group(1)) if mm else None
        if rate is None:
            continue
        rdma = bool(re.search(r"\bib\b|infiniband|roce|efa|omni|edr|hdr|ndr|xdr|connectx", p))
        total += count * rate / 8.0 * (1.0 if rdma else tcp_eff)
    return total if total > 0 else math.nan


_ACCEL_FW = re.compile(
    r"dali|mxnet|ngc|nvidia|mlperf|habana|synapse|poplar|mindspore|tpu|jax|tensorflow 1\.1[2-5]"
)


def _to_float(col) -> np.ndarray:
    def one(v):
        if isinstance(v, str):
            v = v.split(";")[0].strip()
        try:
            f = float(v)
        except (TypeError, ValueError):
            return math.nan
        return f if math.isfinite(f) else math.nan

    return np.array([one(v) for v in col], dtype=np.float64)


def _div(a, b) -> np.ndarray:
    """a / b where both are finite and b != 0, NaN elsewhere (no floating-point warning)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
    return np.divide(a, b, out=np.full(a.shape, np.nan), where=ok)


# --------------------------------------------------------------------------------------
# table -> model inputs
# --------------------------------------------------------------------------------------
_NOTE_UNKNOWN = "accelerator not in catalog"
_NOTE_UNPLACED = "accelerator name does not identify one catalog product"
_NOTE_UNMODELLED = "accelerator has no peak or memory bandwidth in the catalog"


def _resolve_rows(table: pd.DataFrame, acc: pd.DataFrame):
    """(accelerator_id or None, note) per row, through the one resolver."""
    given = table["accelerator_id"] if "accelerator_id" in table.columns else [None] * len(table)
    ids, notes = [], []
    cache: dict = {}
    known_ids = set(acc["accelerator_id"].astype(str))
    for aid, name in zip(given, table["accelerator"]):
        key = (aid if isinstance(aid, str) and aid in known_ids else None, str(name))
        if key not in cache:
            if key[0] is not None:
                r = resolve_accelerator(key[0], catalog=acc)
            else:
                r = resolve_accelerator(name, catalog=acc)
            if r.match in ("exact", "stand-in") and r.modelled:
                cache[key] = (r.accelerator_id, "")
            elif r.match in ("exact", "stand-in"):
                cache[key] = (None, _NOTE_UNMODELLED)
            elif r.match == "unplaced":
                cache[key] = (None, f"{_NOTE_UNPLACED} ({r.note})" if r.note else _NOTE_UNPLACED)
            else:
                cache[key] = (None, _NOTE_UNKNOWN)
        i, note = cache[key]
        ids.append(i)
        notes.append(note)
    return ids, np.array(notes, dtype=object)


def _float_column(table: pd.DataFrame, name: str, use: bool = True) -> np.ndarray:
    """The column as floats, or NaN everywhere when the table lacks it (or ``use`` is off)."""
    if name in table.columns and use:
        return _to_float(table[name])
    return np.full(len(table), np.nan)


def _link_bandwidths(links_df: pd.DataFrame, model: CalibratedModel) -> tuple[dict, set]:
    """Effective GB/s per link id (TCP links derated) and the links that span nodes."""
    bw = {}
    spans = set()
    for _, r in links_df.iterrows():
        v = pd.to_numeric(r["aggregate_GB_s_per_dir"], errors="coerce")
        eff = model.tcp_efficiency if str(r.get("rdma", "yes")).lower().startswith("no") else 1.0
        bw[str(r["link_id"])] = float(v) * eff if v == v else math.nan
        if str(r.get("spans_nodes", "no")).strip().lower() == "yes":
            spans.add(str(r["link_id"]))
    return bw, spans


def _node_shape(table: pd.DataFrame):
    """Accelerators, accelerators per node and nodes, each completed from the other two."""
    n = _to_float(table["n_accelerators"])
    g = _to_float(table["accelerators_per_node"])
    m = _to_float(table["n_nodes"])
    g = np.where(g > 0, g, _div(n, np.where(m > 0, m, np.nan)))
    m = np.where(m > 0, m, _div(n, np.where(g > 0, g, np.nan)))
    return n, g, m


@dataclass(frozen=True)
class _IntraNode:
    """Per row: the intra-node GB/s, the host link's GB/s, and whether the accelerator's own
    link is a pod fabric that spans nodes."""

    intra: np.ndarray
    pcie_bw: np.ndarray
    spanning: np.ndarray


def _intra_node(table: pd.DataFrame, A: pd.DataFrame, bw: dict, spans: set) -> _IntraNode:
    """The intra-node link of each row: a link id, "pcie" text, or the accelerator's own."""
    n_rows = len(table)
    link_ids = A["intra_link_id"].astype(str).to_numpy()
    intra_default = np.array([bw.get(x, math.nan) for x in link_ids])
    hi = (
        A["host_interface"].astype(str).str.lower()
        if "host_interface" in A
        else pd.Series([""] * n_rows)
    )
    pcie_bw = np.where(
        hi.str.contains("gen5").to_numpy(),
        bw.get("pcie_gen5_x16", 64.0),
        np.where(
            hi.str.contains("gen3").to_numpy(),
            bw.get("pcie_gen3_x16", 16.0),
            bw.get("pcie_gen4_x16", 32.0),
        ),
    )
    ic = table["interconnect"] if "interconnect" in table.columns else pd.Series([None] * n_rows)
    spanning = np.array([x in spans for x in link_ids])
    intra = []
    for text, d, p, sp in zip(ic, intra_default, pcie_bw, spanning):
        if sp:
            intra.append(d)  # a pod fabric (TPU ICI) is what the chips use, whatever the text
        elif isinstance(text, str) and text in bw and bw[text] > 0:
            intra.append(bw[text])
        elif isinstance(text, str) and "pcie" in text.lower() and "nvlink" not in text.lower():
            intra.append(p)
        else:
            intra.append(d)
    return _IntraNode(np.array(intra, dtype=float), pcie_bw, spanning)


def _inter_node(table: pd.DataFrame, bw: dict, model, link: _IntraNode, g) -> np.ndarray:
    """Each node's GB/s to the other nodes, from the network text or the pod fabric."""
    net = table["network"] if "network" in table.columns else pd.Series([None] * len(table))
    inter = np.array([_network_GBps(t, bw, model.tcp_efficiency) for t in net], dtype=float)
    inter = np.where(inter > 0, inter, 50.0)  # unknown: 4x100G RDMA
    # chips of a pod fabric reach other hosts' chips over the same links: a node's share of
    # the fabric is its chips' links, not the host network
    return np.where(link.spanning, link.intra * np.where(g > 0, g, 1.0), inter)


def _host_inputs(table: pd.DataFrame, A: pd.DataFrame, cpus: pd.DataFrame):
    """CPU cores per accelerator, the host CPU's decode factor, and accelerated decoding."""
    n_rows = len(table)
    cores = _float_column(table, "cpu_cores_per_accelerator")
    cores = np.where(cores > 0, cores, np.nan)
    fmap = _cpu_factor_map(cpus)
    hc = table["host_cpu"] if "host_cpu" in table.columns else pd.Series([None] * n_rows)
    cpu_factor = np.array([_cpu_factor(h, fmap) for h in hc])

    if "input_pipeline" in table.columns:
        dali = table["input_pipeline"].astype(str).str.lower().str.contains("dali").to_numpy()
    elif "framework" in table.columns:
        dali = np.array([bool(_ACCEL_FW.search(str(f).lower())) for f in table["framework"]],
                        dtype=bool)
    else:
        dali = np.zeros(n_rows, bool)
    # Gaudi2/Gaudi3 decode JPEGs on the accelerator's media engine whatever the framework says
    dali = dali | (A["vendor"].astype(str).str.lower() == "intel").to_numpy()
    return cores, cpu_factor, dali


@dataclass(frozen=True)
class _Batches:
    """Per row: the local and global batch, the largest local batch memory holds, and
    whether the model state leaves no room for one sample."""

    local: np.ndarray
    global_: np.ndarray
    max_local: np.ndarray
    no_room: np.ndarray


def _batches(table: pd.DataFrame, A: pd.DataFrame, workload: Workload, n) -> _Batches:
    """Local and global batch of each row, completed from memory where the table lacks them."""
    gb = _float_column(table, "global_batch_size")
    # a replica of a model-parallel workload spans `shards` accelerators; b is its batch
    shards = workload.shards(np.where(n > 0, n, 1.0))
    max_b = workload.max_local_batch(
        np.nan_to_num(pd.to_numeric(A["mem_gb"], errors="coerce").to_numpy(float), nan=0.0),
        shards=shards, n=np.where(n > 0, n, 1.0),
    )
    no_room = (max_b < 1) & np.isfinite(pd.to_numeric(A["mem_gb"], errors="coerce").to_numpy(float))
    max_b = np.where(max_b > 0, max_b, 256.0)
    replicas = _div(np.where(n > 0, n, np.nan), shards)
    b = _div(gb, replicas)
    b = np.where(b > 0, b, np.minimum(256.0, max_b))
    gb = np.where(gb > 0, gb, b * replicas)
    return _Batches(b, gb, max_b, no_room)


def _training_length(table: pd.DataFrame, workload: Workload, gb, use_table_epochs: bool):
    """Epochs, samples and the reference curve's epochs to converge, per row."""
    ep = _float_column(table, "epochs", use_table_epochs)
    if workload.samples_curve:
        # samples to converge: measured where the table has them, else epochs x data set,
        # else the reference convergence points
        curve_s = workload.samples(gb)
        meas = _float_column(table, "samples_to_converge", use_table_epochs)
        if workload.dataset_size:
            meas = np.where(meas > 0, meas, ep * float(workload.dataset_size))
        samples = np.where(meas > 0, meas, curve_s)
        ds = float(workload.dataset_size) if workload.dataset_size else math.nan
        epochs = samples / ds
        curve = curve_s / ds
    else:
        curve = workload.epochs(gb)
        epochs = np.where(ep > 0, ep, curve)
        samples = epochs * workload.dataset_size
    return epochs, samples, curve


def _configs(
    table: pd.DataFrame,
    model: CalibratedModel,
    workload: Workload,
    *,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
    use_table_epochs: bool = True,
):
    """Turn a canonical table into model inputs. Returns (cfg, extra, note)."""
    missing = [c for c in REQUIRED_PREDICT_COLUMNS if c not in table.columns]
    if missing:
        raise DataError(
            f"table is missing column '{missing[0]}'; required columns are: "
            f"{', '.join(REQUIRED_PREDICT_COLUMNS)}"
        )
    acc = _cat.accelerator_catalog(accelerator_table)
    links_df = _cat.interconnect_catalog(interconnect_table)
    cpus = _cat.host_cpu_catalog(host_cpu_table)
    bw, spans = _link_bandwidths(links_df, model)

    ids, note = _resolve_rows(table, acc)
    acc = acc.set_index("accelerator_id", drop=False)
    known = np.array([i is not None for i in ids], dtype=bool)
    A = acc.loc[[i if i is not None else acc.index[0] for i in ids]]
    peak = (
        pd.to_numeric(A["bf16_dense_tflops"], errors="coerce")
        .fillna(pd.to_numeric(A["fp16_dense_tflops"], errors="coerce"))
        .to_numpy(float)
    )
    mem_bw = pd.to_numeric(A["mem_bw_tbps"], errors="coerce").to_numpy(float)
    fam = A["family"].astype(str).to_numpy()
    gen = A["generation"].astype(str).to_numpy()
    pairs = {(f, g): model.compute_efficiency_for(f, g) for f, g in set(zip(fam, gen))}
    eff = np.array([pairs[(f, g)][0] for f, g in zip(fam, gen)], dtype=float)
    basis = np.array([pairs[(f, g)][1] for f, g in zip(fam, gen)], dtype=object)
    n, g, m = _node_shape(table)
    link = _intra_node(table, A, bw, spans)
    inter = _inter_node(table, bw, model, link, g)
    cores, cpu_factor, dali = _host_inputs(table, A, cpus)
    bat = _batches(table, A, workload, n)
    epochs, samples, curve = _training_length(table, workload, bat.global_, use_table_epochs)

    note = np.where(known & ~(n > 0), "n_accelerators missing or not > 0", note)
    # a measured batch beyond memory ran as micro-batches (gradient accumulation, common in
    # MLPerf submissions on small accelerators); only a model state that leaves no room for
    # one sample cannot run at all
    note = np.where(known & (n > 0) & bat.no_room, "model state leaves no memory for a sample",
                    note)
    micro = np.where(bat.local > bat.max_local, bat.max_local, bat.local)
    cfg = {
        "peak_tflops": peak,
        "compute_efficiency": eff,
        "mem_bw_tbps": mem_bw,
        "n_accelerators": n,
        "accelerators_per_node": g,
        "n_nodes": m,
        "local_batch": bat.local,
        "intra_GBps": link.intra,
        "inter_GBps": inter,
        "cpu_cores_per_accelerator": cores,
        "cpu_decode_factor": cpu_factor,
        "dali": dali,
        "host_GBps": link.pcie_bw * HOST_COPY_EFFICIENCY,
        "micro_batch": micro,
    }
    extra = {
        "accelerator_id": np.array(ids, dtype=object),
        "family": np.where(known, fam, None),
        "generation": np.where(known, gen, None),
        "basis": np.where(known, basis, ""),
        "tdp": pd.to_numeric(A["tdp_w"], errors="coerce").to_numpy(float),
        "epochs": epochs,
        "samples": samples,
        "curve_epochs": curve,
        "global_batch": bat.global_,
        "price": _float_column(table, "price_per_accelerator_hour"),
        "valid": known & (n > 0) & (peak > 0) & (mem_bw > 0),
    }
    return cfg, extra, note


def _outputs(cfg, extra, model, workload):
    out = evaluate(cfg, model, workload)
    n = cfg["n_accelerators"]
    thr = out["throughput"]
    train_s = extra["samples"] / thr + model.overhead_s
    util = out["utilization"]
    power = extra["tdp"] * (model.idle_power_frac + (1 - model.idle_power_frac) * util)
    return {
        "time_to_train_min": train_s / 60.0,
        "throughput": thr * workload.throughput_scale,
        "utilization": util,
        "cost_usd": n * extra["price"] * train_s / 3600.0,
        "energy_kwh": n * power * train_s / 3.6e6,
        "epochs": extra["epochs"],
        "power_w": power,
        "bottleneck": out["bottleneck"],
    }


def predict(
    table,
    model: CalibratedModel | None = None,
    *,
    workload: Workload | None = None,
    use_table_epochs: bool = True,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
) -> pd.DataFrame:
    """Predict ``PREDICTED`` for every row of a canonical table.

    Returns a copy of the table with ``predicted_time_to_train_min``, ``predicted_throughput``,
    ``predicted_utilization``, ``predicted_cost_usd`` (NaN without
    ``price_per_accelerator_hour``), ``predicted_energy_kwh`` (accelerators only),
    ``predicted_epochs``, ``predicted_bottleneck`` (``compute``, ``communication``,
    ``input`` or ``memory``), plus ``accelerator_id`` (resolved), ``prediction_basis``
    (``fitted`` where the model's compute efficiency for the row's family was fitted on
    data, ``borrowed:<family>`` where it is another family's, ``assumed`` for a hand-set
    default; empty without a prediction) and ``prediction_note`` (why a row has NaN
    predictions). The table's own columns are kept unchanged beside the predictions.

    ``use_table_epochs=True`` uses the table's ``epochs`` where present (the measured epochs
    to converge; ``samples_to_converge`` for a workload counted in samples) and the
    workload's convergence curve elsewhere; ``False`` always uses the curve (a prediction
    before training). ``predicted_throughput`` is in the workload's ``throughput_unit``.

    Without ``workload``, the model's workload is used, else the table's ``benchmark`` (one
    benchmark per table), else ResNet-50; without ``model``, the workload's shipped model
    (:func:`~gpurank.engine.sources.workloads.default_model`).
    """
    if not isinstance(table, pd.DataFrame):
        raise UsageError(f"table: {type(table).__name__} is not allowed; pass a pandas DataFrame")
    if model is not None and not isinstance(model, CalibratedModel):
        raise UsageError(
            f"model: {type(model).__name__} is not allowed; pass a CalibratedModel or None"
        )
    if workload is None and model is None and "benchmark" in table.columns:
        names = sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})
        if len(names) > 1:
            return _predict_per_benchmark(table, names, use_table_epochs=use_table_epochs,
                                          accelerator_table=accelerator_table,
                                          interconnect_table=interconnect_table,
                                          host_cpu_table=host_cpu_table)
    workload = workload_of(table, workload, model)
    model = default_model(workload.name) if model is None else model
    res = table.copy()
    if len(table) == 0:  # the columns a table with rows gets, without rows
        if "accelerator_id" not in res.columns:
            res["accelerator_id"] = pd.Series(dtype=object)
        for c in PREDICTED + ("epochs",):
            res[f"predicted_{c}"] = pd.Series(dtype=float)
        res["predicted_bottleneck"] = pd.Categorical([], categories=list(BOTTLENECKS))
        res["prediction_basis"] = pd.Series(dtype=str)
        res["prediction_note"] = pd.Series(dtype=str)
        return res
    cfg, extra, note = _configs(
        table,
        model,
        workload,
        accelerator_table=accelerator_table,
        interconnect_table=interconnect_table,
        host_cpu_table=host_cpu_table,
        use_table_epochs=use_table_epochs,
    )
    out = _outputs(cfg, extra, model, workload)
    valid = extra["valid"] & np.isfinite(out["time_to_train_min"])
    if "accelerator_id" not in res.columns:
        res["accelerator_id"] = extra["accelerator_id"]
    for c in PREDICTED + ("epochs",):
        res[f"predicted_{c}"] = np.where(valid, out[c], np.nan)
    bn = np.array(BOTTLENECKS, dtype=object)[out["bottleneck"]]
    res["predicted_bottleneck"] = pd.Categorical(
        np.where(valid, bn, None), categories=list(BOTTLENECKS)
    )
    res["prediction_basis"] = np.where(valid, extra["basis"], "")
    res["prediction_note"] = note
    return res


def _predict_per_benchmark(table, names, **kw) -> pd.DataFrame:
    """Each benchmark's rows predicted with its workload and shipped model; rows of a
    benchmark without a shipped workload (or none) keep NaN predictions and say why."""
    bench = table["benchmark"].astype(str).str.strip().to_numpy()
    parts = []
    for name in names + [""]:
        pos = np.flatnonzero(bench == name)
        if not len(pos):
            continue
        rows = table.iloc[pos]
        if name and workload_for_benchmark(name) is not None:
            out = predict(rows, None, workload=workload(name), **kw)
        else:
            out = predict(rows.iloc[:0], None, workload=resnet50(), **kw)
            out = pd.concat([out, rows], ignore_index=False).loc[rows.index]
            out["prediction_basis"] = ""
            out["prediction_note"] = (f"no workload for benchmark '{name}'" if name
                                      else "row has no benchmark")
        parts.append(out.assign(_pos=pos))
    res = pd.concat(parts).sort_values("_pos", kind="stable").drop(columns="_pos")
    return res


def fit_errors(
    pred: pd.DataFrame, *, by: str = "family", column: str = "time_to_train_min"
) -> pd.DataFrame:
    """Absolute percentage error of ``predicted_<column>`` vs ``<column>``: n, median, p90
    per group (``family`` is looked up from the catalog when absent) and overall."""
    df = pred.copy()
    if by == "family" and "family" not in df.columns:
        fam = _cat.accelerator_catalog().set_index("accelerator_id")["family"]
        df["family"] = df["accelerator_id"].map(fam)
    meas = pd.to_numeric(df[column], errors="coerce").to_numpy(float)
    ape = np.abs(_div(df[f"predicted_{column}"].to_numpy(float) - meas, meas)) * 100
    df = df.assign(_ape=ape)[np.isfinite(ape)]
    rows = [
        {
            "group": str(k),
            "n": len(v),
            "median_ape": float(v["_ape"].median()),
            "p90_ape": float(v["_ape"].quantile(0.9)),
        }
        for k, v in df.groupby(by, observed=True)
    ]
    rows.append(
        {
            "group": "ALL",
            "n": len(df),
            "median_ape": float(df["_ape"].median()) if len(df) else math.nan,
            "p90_ape": float(df["_ape"].quantile(0.9)) if len(df) else math.nan,
        }
    )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# the fit
# --------------------------------------------------------------------------------------
def _usable(t: pd.DataFrame, cfg, extra, note, ttt, modelled) -> tuple[np.ndarray, dict]:
    """Rows a fit may use, and how many were skipped for each reason. ``modelled``: each
    row's time to train under the starting model; a row without a finite one (inputs so
    large or small that the model overflows) cannot be fitted."""
    skipped = {}
    usable = extra["valid"] & (note == "")
    skipped["accelerator not modelled or row incomplete"] = int((~usable).sum())
    finite = np.isfinite(modelled) & (modelled > 0)
    skipped["inputs out of the model's range"] = int((usable & ~finite).sum())
    usable &= finite
    timed = np.isfinite(ttt) & (ttt > 0)
    skipped["no measured time"] = int((usable & ~timed).sum())
    usable &= timed
    if "division" in t.columns:
        open_div = t["division"].astype(str).str.strip().str.lower().eq("open").to_numpy()
        skipped["open division (other rules than the benchmark)"] = int((usable & open_div).sum())
        usable &= ~open_div
    if "is_duplicate" in t.columns:
        dup = t["is_duplicate"].fillna(False).astype(bool).to_numpy()
        skipped["repeats an earlier system's runs"] = int((usable & dup).sum())
        usable &= ~dup
    # repeated results (same accelerator, count and score) count once
    key = pd.DataFrame(
        {
            "a": extra["accelerator_id"],
            "n": cfg["n_accelerators"],
            "t": np.round(np.nan_to_num(ttt), 4),
        }
    )
    rep = key.duplicated().to_numpy()
    skipped["same accelerator, count and time as an earlier row"] = int((usable & rep).sum())
    usable &= ~rep
    return usable, skipped


def _modelled(cfg, extra, model, workload) -> np.ndarray:
    """Each row's time to train under ``model`` (inf or NaN where its inputs overflow)."""
    with np.errstate(all="ignore"):
        return np.asarray(_outputs(cfg, extra, model, workload)["time_to_train_min"], float)


def _borrowing(train_families: dict, acc: pd.DataFrame) -> tuple[dict, str]:
    """Which fitted family each generation lends, and the default lender.

    ``train_families`` maps family -> (generation, training rows). A generation with data
    lends its family with the most rows; a generation without data lends what its
    ``GENERATION_FALLBACK`` generation lends; the default is the family with the most rows.
    """

    def best(fams):
        return sorted(fams, key=lambda f: (-train_families[f][1], f))[0]

    by_gen: dict = {}
    for f, (g, _n) in train_families.items():
        by_gen.setdefault(g, []).append(f)
    lend = {g: best(fs) for g, fs in by_gen.items()}
    gens = set(acc["generation"].astype(str)) | set(lend)
    for new, old in GENERATION_FALLBACK:
        if new in gens and new not in lend and old in lend:
            lend[new] = lend[old]
    default = best(list(train_families)) if train_families else ""
    return dict(sorted(lend.items())), default


def _sigmoid(x):
    """The logistic function (maps an unbounded coordinate into (0, 1))."""
    return 1.0 / (1.0 + math.exp(-x))


def _logit(v):
    """The inverse of :func:`_sigmoid`, clipped so a start on the edge stays movable."""
    v = min(max(v, 0.01), 0.99)
    return math.log(v / (1 - v))


@dataclass(frozen=True)
class _FitRows:
    """The training rows as the residuals read them: configurations and measured times."""

    families: list
    family_index: np.ndarray
    cfg: dict
    extra: dict
    ttt: np.ndarray


@dataclass(frozen=True)
class _ParamSpace:
    """The optimizer's coordinates: a log efficiency per family, the shared parameters
    (logit or log, so every bound is a box), then the log intensity when it is fitted."""

    k: int
    fit_intensity: bool

    def unpack(self, theta):
        """Efficiencies per family and the shared parameters at ``theta``."""
        k = self.k
        ef = np.exp(theta[:k])
        p = {
            "comm_efficiency": min(_sigmoid(theta[k]), 1.0),
            "overlap": min(_sigmoid(theta[k + 1]), 0.999),
            "overhead_s": math.exp(theta[k + 2]),
            "batch_half": math.exp(theta[k + 3]),
            "mem_overlap": _sigmoid(theta[k + 4]),
        }
        if self.fit_intensity:
            p["arithmetic_intensity"] = math.exp(theta[k + 5])
        return ef, p

    def names(self, families) -> list[str]:
        """The model's name for each coordinate."""
        return (
            [f"compute_efficiency_by_family[{f}]" for f in families]
            + ["comm_efficiency", "overlap", "overhead_s", "batch_half", "mem_overlap"]
            + (["arithmetic_intensity"] if self.fit_intensity else [])
        )


def _check_calibration_table(mlperf_table) -> None:
    """Refuse anything but a DataFrame holding the required columns."""
    if not isinstance(mlperf_table, pd.DataFrame):
        raise UsageError(
            f"mlperf_table: {type(mlperf_table).__name__} is not allowed; pass a pandas DataFrame"
        )
    missing = [c for c in REQUIRED_CALIBRATE_COLUMNS if c not in mlperf_table.columns]
    if missing:
        raise DataError(
            f"calibration table is missing column '{missing[0]}'; required columns are: "
            f"{', '.join(REQUIRED_CALIBRATE_COLUMNS)}"
        )


def _training_mask(t: pd.DataFrame, usable: np.ndarray, train_rounds) -> np.ndarray:
    """The usable rows of the training rounds; an error when there are none."""
    in_train = usable.copy()
    if train_rounds is not None:
        in_train &= t["round"].astype(str).isin([str(r) for r in train_rounds]).to_numpy()
    if not in_train.any():
        raise DataError(
            f"calibration table has no usable rows (of {len(t)}) in train_rounds={train_rounds!r}; "
            "rows need an accelerator the catalog models, n_accelerators > 0 and a "
            "time_to_train_min > 0"
        )
    return in_train


def _fit_rows(cfg, extra, in_train: np.ndarray, ttt: np.ndarray) -> _FitRows:
    """The training rows' slices of the configurations, with each row's family index."""
    fams = sorted(set(extra["family"][in_train]))
    fam_idx = np.array([fams.index(f) if f in fams else -1 for f in extra["family"]])
    tr = np.flatnonzero(in_train)
    return _FitRows(
        families=fams,
        family_index=fam_idx[tr],
        cfg={k: (np.asarray(v)[tr] if np.ndim(v) else v) for k, v in cfg.items()},
        extra={k: np.asarray(v)[tr] for k, v in extra.items()},
        ttt=ttt[tr],
    )


def _start_and_bounds(rows: _FitRows, base: CalibratedModel, workload: Workload, space):
    """The optimizer's starting point and box bounds, ``(x0, lo, hi)``."""
    sub, fi, k = rows.cfg, rows.family_index, space.k
    # start each family at twice the fraction of peak its runs achieve overall (the compute
    # term is part of the step), so no family starts in the flat input-bound region
    thr_meas = _div(
        rows.extra["samples"],
        np.maximum(rows.ttt * 60.0 - base.overhead_s, 1.0),
    )
    b_tr = sub["local_batch"]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is a NaN of _div
        achieved = _div(
            thr_meas * workload.flops_per_sample * (b_tr + base.batch_half),
            sub["n_accelerators"] * sub["peak_tflops"] * 1e12 * b_tr,
        )
    # the workload's own estimate of its intensity starts the fit and widens its bounds
    ai_est = (
        workload.flops_per_sample / workload.bytes_per_sample
        if workload.bytes_per_sample
        else None
    )
    eff0 = [_start_efficiency(achieved[fi == j], base) for j in range(k)]
    ai0 = (
        (ai_est or base.arithmetic_intensity)
        if workload.arithmetic_intensity is None
        else workload.arithmetic_intensity
    )
    ai_lo = min(5.0, ai_est / 10.0) if ai_est else 5.0
    ai_hi = max(2000.0, ai_est * 10.0) if ai_est else 2000.0
    x0 = np.concatenate(
        [
            np.log(eff0),
            [
                _logit(base.comm_efficiency),
                _logit(base.overlap),
                math.log(max(base.overhead_s, 1.0)),
                math.log(max(base.batch_half, 1.0)),
                _logit(base.mem_overlap),
            ],
            [math.log(ai0)] if space.fit_intensity else [],
        ]
    )
    lo = np.concatenate(
        [
            np.full(k, math.log(0.01)),
            [-4, -4, math.log(0.5), math.log(0.5), -6],
            [math.log(ai_lo)] if space.fit_intensity else [],
        ]
    )
    hi = np.concatenate(
        [
            np.full(k, 0.0),
            [6, 6, math.log(600), math.log(256), 6],
            [math.log(ai_hi)] if space.fit_intensity else [],
        ]
    )
    return x0, lo, hi


def _start_efficiency(achieved: np.ndarray, base: CalibratedModel) -> float:
    """Twice a family's median achieved fraction of peak, clipped to [0.05, 0.95]; the
    base's default where no run gives a finite fraction (inputs that overflow it)."""
    finite = achieved[np.isfinite(achieved)]
    if not finite.size:
        return float(base.compute_efficiency_default)
    return float(np.clip(2.0 * np.median(finite), 0.05, 0.95))


def _least_squares_fit(rows: _FitRows, start, workload: Workload, space, x0, lo, hi):
    """Robust least squares on log time-to-train; scipy's result."""
    from scipy.optimize import least_squares

    y = np.log(rows.ttt)

    def resid(theta):
        ef, p = space.unpack(theta)
        o = _outputs(
            dict(rows.cfg, compute_efficiency=ef[rows.family_index]),
            rows.extra,
            replace(start, **p),
            workload,
        )
        return np.log(o["time_to_train_min"]) - y

    return least_squares(
        resid, np.clip(x0, lo + 1e-9, hi - 1e-9), bounds=(lo, hi), loss="soft_l1", f_scale=0.1
    )


def _at_bound(names, x, lo, hi) -> list[str]:
    """Parameters that ended within a thousandth of their range of a bound."""
    span = hi - lo
    return [nm for nm, v, a, b_, s in zip(names, x, lo, hi, span) if min(v - a, b_ - v) < 1e-3 * s]


def _fitted_model(base, rows: _FitRows, space, sol, workload, accelerator_table):
    """The model at the optimum (rounded as the model file stores it), and the training rows
    per family that decided the lending."""
    ef, p = space.unpack(sol.x)
    fams, fi = rows.families, rows.family_index
    rows_per_family = {f: int((fi == j).sum()) for j, f in enumerate(fams)}
    gen_of = {f: g for f, g in zip(rows.extra["family"], rows.extra["generation"])}
    acc = _cat.accelerator_catalog(accelerator_table)
    lend, default = _borrowing({f: (gen_of[f], rows_per_family[f]) for f in fams}, acc)
    rounded = {kk: (round(v, 6) if kk != "overhead_s" else round(v, 4)) for kk, v in p.items()}
    model = replace(
        base,
        compute_efficiency_by_family={f: round(float(v), 6) for f, v in zip(fams, ef)},
        borrow_by_generation=lend,
        borrow_default=default,
        workload=workload.name,
        fit={},
        **rounded,
    )
    return model, rows_per_family


def _error_report(pred: pd.DataFrame, trmask: np.ndarray, test_rounds) -> dict:
    """Errors per family on the training rows and, with ``test_rounds``, the held-out rows."""
    report = {"train_errors": fit_errors(pred[trmask]).to_dict(orient="records")}
    if test_rounds is not None:
        te = pred["round"].astype(str).isin([str(r) for r in test_rounds]).to_numpy()
        report["n_test"] = int(te.sum())
        report["test_errors"] = fit_errors(pred[te]).to_dict(orient="records")
        nv = te & pred["accelerator_id"].astype(str).str.startswith("nvidia").to_numpy()
        report["test_errors_nvidia"] = fit_errors(pred[nv]).to_dict(orient="records")[-1]
    return report


def calibrate(
    mlperf_table,
    *,
    train_rounds=None,
    test_rounds=None,
    base: CalibratedModel | None = None,
    workload: Workload | None = None,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
) -> CalibratedModel:
    """Fit the model's free parameters to measured runs.

    Parameters
    ----------
    mlperf_table : DataFrame
        Canonical columns (see module docstring) with measured ``time_to_train_min``. Rows
        are skipped (and counted in ``model.fit["skipped"]``) without a finite time > 0, with
        an accelerator the catalog does not model, with n_accelerators <= 0, from the open
        division, flagged ``is_duplicate``, or repeating an earlier row's accelerator, count
        and time.
    train_rounds, test_rounds : list of str, optional
        Values of the ``round`` column to fit on and to report held-out errors on. By default
        every row is fitted and the report is in-sample.
    base : CalibratedModel, optional
        Starting values and the fixed (unfitted) parameters; ``CalibratedModel()`` when
        omitted, so a fit never depends on an earlier fit.
    workload : Workload, optional
        ResNet-50 by default. A workload with an ``arithmetic_intensity`` keeps it fixed;
        otherwise the intensity is fitted.

    Fitted: ``compute_efficiency_by_family`` (families with data), ``arithmetic_intensity``,
    ``mem_overlap``, ``comm_efficiency``, ``overlap``, ``overhead_s``, ``batch_half``; the
    lending of families without data (``borrow_by_generation``, ``borrow_default``) follows
    from the training rows. ``model.fit`` holds the report: rows used and skipped, the
    optimizer's cost, parameters that ended on a bound, and the errors per family.
    """
    _check_calibration_table(mlperf_table)
    base = CalibratedModel() if base is None else base
    workload = workload_of(mlperf_table, workload, None)
    t = mlperf_table.reset_index(drop=True)
    if (train_rounds is not None or test_rounds is not None) and "round" not in t.columns:
        raise DataError(
            "calibration table has no column 'round'; it is required with train_rounds/test_rounds"
        )
    ttt = _to_float(t["time_to_train_min"])
    kw = dict(
        accelerator_table=accelerator_table,
        interconnect_table=interconnect_table,
        host_cpu_table=host_cpu_table,
    )
    # no borrowing while fitting: every training family gets its own parameter
    start = replace(
        base, compute_efficiency_by_family={}, borrow_by_generation={}, borrow_default=""
    )
    cfg, extra, note = _configs(t, start, workload, **kw)
    usable, skipped = _usable(t, cfg, extra, note, ttt, _modelled(cfg, extra, start, workload))
    in_train = _training_mask(t, usable, train_rounds)
    rows = _fit_rows(cfg, extra, in_train, ttt)
    space = _ParamSpace(k=len(rows.families), fit_intensity=workload.arithmetic_intensity is None)
    x0, lo, hi = _start_and_bounds(rows, base, workload, space)
    sol = _least_squares_fit(rows, start, workload, space, x0, lo, hi)
    model, rows_per_family = _fitted_model(base, rows, space, sol, workload, accelerator_table)

    pred = predict(t[usable], model, workload=workload, **kw)
    report = {
        "n_rows": int(len(t)),
        "n_usable": int(usable.sum()),
        "n_train": int(in_train.sum()),
        "skipped": {r: c for r, c in skipped.items() if c},
        "rows_per_family": rows_per_family,
        "train_rounds": None if train_rounds is None else [str(r) for r in train_rounds],
        "test_rounds": None if test_rounds is None else [str(r) for r in test_rounds],
        "cost": float(sol.cost),
        "success": bool(sol.success),
        "at_bound": _at_bound(space.names(rows.families), sol.x, lo, hi),
        **_error_report(pred, in_train[usable], test_rounds),
    }
    return replace(model, fit=report)


def cross_validate(
    mlperf_table,
    *,
    by: str = "round",
    workload: Workload | None = None,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
    base: CalibratedModel | None = None,
) -> pd.DataFrame:
    """Held-out predictions: one fit per value of ``by``, predicting the rows of that value.

    Parameters
    ----------
    mlperf_table : DataFrame
        As for :func:`calibrate`.
    by : {"round", "family", "submitter"}
        ``"round"``: leave one round out (each round predicted by a model fitted on the
        others). ``"family"``: leave one accelerator family out (each family predicted by a
        model that never saw it, so its compute efficiency is borrowed). ``"submitter"``:
        leave one submitter out (for a workload of a single round, the nearest stand-in for
        a new round: other teams' software on the same hardware).

    Returns
    -------
    DataFrame
        One row per usable row of the table: ``held_out`` (the round or family left out),
        ``round``, ``family``, ``accelerator``, ``n_accelerators``, ``system`` (when the
        table has ``submitter``/``system``), ``time_to_train_min``,
        ``predicted_time_to_train_min``, ``error_pct`` (signed: positive = predicted slower)
        and ``prediction_basis``.
    """
    if by not in ("round", "family", "submitter"):
        raise UsageError(f"by={by!r} is not allowed; use 'round', 'family' or 'submitter'")
    if by == "submitter" and "submitter" not in mlperf_table.columns:
        raise DataError("calibration table has no column 'submitter'; "
                        "leave-one-submitter-out needs it")
    if not isinstance(mlperf_table, pd.DataFrame):
        raise UsageError(
            f"mlperf_table: {type(mlperf_table).__name__} is not allowed; pass a pandas DataFrame"
        )
    if by == "round" and "round" not in mlperf_table.columns:
        raise DataError("calibration table has no column 'round'; leave-one-round-out needs it")
    base = CalibratedModel() if base is None else base
    workload = workload_of(mlperf_table, workload, None)
    kw = dict(
        accelerator_table=accelerator_table,
        interconnect_table=interconnect_table,
        host_cpu_table=host_cpu_table,
    )
    t = mlperf_table.reset_index(drop=True)
    ttt = _to_float(t["time_to_train_min"])
    start = replace(
        base, compute_efficiency_by_family={}, borrow_by_generation={}, borrow_default=""
    )
    cfg, extra, note = _configs(t, start, workload, **kw)
    usable, _ = _usable(t, cfg, extra, note, ttt, _modelled(cfg, extra, start, workload))
    u = t[usable].reset_index(drop=True)
    fam = extra["family"][usable].astype(str)
    key = (u["round"].astype(str).to_numpy() if by == "round"
           else u["submitter"].astype(str).to_numpy() if by == "submitter" else fam)
    parts = []
    for value in sorted(set(key)):
        held = key == value
        if held.all():
            continue  # nothing left to fit on
        model = calibrate(u[~held], base=base, workload=workload, **kw)
        pred = predict(u[held], model, workload=workload, **kw)
        meas = _to_float(pred["time_to_train_min"])
        out = pd.DataFrame(
            {
                "held_out": value,
                "round": pred["round"].astype(str).to_numpy() if "round" in pred else "",
                "family": fam[held],
                "accelerator": pred["accelerator"].astype(str).to_numpy(),
                "n_accelerators": pred["n_accelerators"].to_numpy(),
                "system": (
                    pred["submitter"].astype(str) + " " + pred["system"].astype(str)
                ).to_numpy()
                if {"submitter", "system"} <= set(pred.columns)
                else "",
                "time_to_train_min": meas,
                "predicted_time_to_train_min": pred["predicted_time_to_train_min"].to_numpy(float),
                "prediction_basis": pred["prediction_basis"].to_numpy(),
            }
        )
        out["error_pct"] = _div(out["predicted_time_to_train_min"] - meas, meas) * 100
        parts.append(out)
    if not parts:
        raise DataError(f"cross-validation by {by} needs usable rows of at least two {by}s")
    return pd.concat(parts, ignore_index=True)


def cv_summary(cv: pd.DataFrame) -> pd.DataFrame:
    """Per family: n, median and p90 absolute error (%), the worst row, and the bases used."""
    rows = []
    for fam, g in cv.groupby("family", sort=True):
        ape = g["error_pct"].abs()
        w = g.loc[ape.idxmax()]
        rows.append(
            {
                "family": fam,
                "n": len(g),
                "median_ape": float(ape.median()),
                "p90_ape": float(ape.quantile(0.9)),
                "worst_row": f"{w['round']} {w['system'] or w['accelerator']} "
                f"(n={int(w['n_accelerators'])})".strip(),
                "worst_error_pct": float(w["error_pct"]),
                "basis": ", ".join(sorted(set(g["prediction_basis"].astype(str)))),
            }
        )
    return pd.DataFrame(rows)


def _md_cv(summary: pd.DataFrame) -> list[str]:
    lines = [
        "| family | n | median % | p90 % | worst row | its error % | basis |",
        "|:--|--:|--:|--:|:--|--:|:--|",
    ]
    for r in summary.itertuples():
        lines.append(
            f"| {r.family} | {r.n} | {r.median_ape:.1f} | {r.p90_ape:.1f} | "
            f"{r.worst_row} | {r.worst_error_pct:+.1f} | {r.basis} |"
        )
    return lines


def validation_report(mlperf_table, *, model: CalibratedModel | None = None, **kw) -> str:
    """The Markdown section ``calibrate --report`` writes: the fit, leave-one-round-out and
    leave-one-family-out tables per family, and the families that borrow an efficiency.

    ``model`` is the fit on every row (fitted here when omitted); ``kw`` go to
    :func:`cross_validate` (``workload``, the catalog tables).
    """
    model = calibrate(mlperf_table, **kw) if model is None else model
    loro = cross_validate(mlperf_table, by="round", **kw)
    lofo = cross_validate(mlperf_table, by="family", **kw)
    s_loro, s_lofo = cv_summary(loro), cv_summary(lofo)
    f = model.fit
    ins = [r for r in f.get("train_errors", []) if r["group"] == "ALL"]
    lines = [
        REPORT_BEGIN,
        "",
        f"Fit on {f.get('n_train', 0)} usable rows of {f.get('n_rows', 0)} "
        f"(skipped: {', '.join(f'{c} {r}' for r, c in f.get('skipped', {}).items()) or 'none'}). "
        f"In-sample absolute error of time to train: median {ins[0]['median_ape']:.1f}%, "
        f"p90 {ins[0]['p90_ape']:.1f}%."
        if ins
        else "",
        "",
        "Fitted parameters: "
        + ", ".join([f"{fam} {v:.3f}" for fam, v in model.compute_efficiency_by_family.items()])
        + f" (compute efficiency per family); arithmetic intensity "
        f"{model.arithmetic_intensity:.1f} FLOP/B at {model.mem_efficiency:.0%} of the peak "
        f"memory bandwidth; compute/memory overlap {model.mem_overlap:.3f}; communication "
        f"efficiency {model.comm_efficiency:.3f}, overlap {model.overlap:.3f}; overhead "
        f"{model.overhead_s:.1f} s; batch knee {model.batch_half:.1f}."
        + (f" On a bound: {', '.join(f['at_bound'])}." if f.get("at_bound") else ""),
        "",
        "**Leave-one-round-out** (each round predicted by a model fitted on the other "
        "rounds; absolute % error of time to train; worst row signed, + = predicted slower):",
        "",
        *_md_cv(s_loro),
        "",
        "**Leave-one-family-out** (each family predicted by a model that never saw it: its "
        "compute efficiency is borrowed, `basis` says from which family):",
        "",
        *_md_cv(s_lofo),
        "",
    ]
    catalog = _cat.accelerator_catalog(kw.get("accelerator_table"))
    modelled = catalog[pd.to_numeric(catalog["mem_bw_tbps"], errors="coerce") > 0]
    borrowed = []
    for fam_name, gen in sorted(
        set(zip(modelled["family"].astype(str), modelled["generation"].astype(str)))
    ):
        _v, basis = model.compute_efficiency_for(fam_name, gen)
        if basis != "fitted":
            borrowed.append(f"{fam_name} ({gen}) {basis}")
    lines += [
        "Families of the catalog without MLPerf rows, which borrow a compute efficiency in "
        "the sweep (`prediction_basis`): " + ("; ".join(borrowed) or "none") + ".",
        "",
        REPORT_END,
    ]
    return "\n".join(lines) + "\n"


def workloads_report(mlperf_table, *, models: dict | None = None, **kw) -> str:
    """The Markdown section ``calibrate --benchmark all --report`` writes: per workload, the
    rows fitted, the in-sample error, the leave-one-round-out error (leave-one-submitter-out
    for a workload of one round) and leave-one-family-out error, with a per-family table.

    ``models`` maps workload names to fits on all of its rows (fitted here when missing);
    ``kw`` go to :func:`cross_validate` (the catalog tables).
    """
    models = dict(models or {})
    summary, details = [], []
    for bench in _benchmarks_of(mlperf_table):
        if workload_for_benchmark(bench) is None:
            continue
        wl = workload(bench)
        rows = _rows_of(mlperf_table, bench)
        model = models.get(wl.name) or calibrate(rows, workload=wl, **kw)
        f = model.fit
        ins = [r for r in f.get("train_errors", []) if r["group"] == "ALL"]
        rounds = sorted(set(rows["round"].astype(str)))
        cv_by = "round"
        try:
            cv = cross_validate(rows, by="round", workload=wl, **kw)
        except DataError:
            cv_by = "submitter"
            cv = cross_validate(rows, by="submitter", workload=wl, **kw)
        try:
            lofo = cross_validate(rows, by="family", workload=wl, **kw)
            lofo_med = float(lofo["error_pct"].abs().median())
        except DataError:
            lofo_med = math.nan
        ape = cv["error_pct"].abs()
        worst = cv.loc[ape.idxmax()]
        label = "round" if cv_by == "round" else "submitter (one round)"
        summary.append(
            f"| {wl.name} | {bench} | {wl.throughput_unit} | {', '.join(rounds)} | "
            f"{f.get('n_train', 0)} | {ins[0]['median_ape']:.1f} | {label} | {len(cv)} | "
            f"{ape.median():.1f} | {ape.quantile(0.9):.1f} | "
            f"{worst['round']} {worst['system'] or worst['accelerator']} "
            f"(n={int(worst['n_accelerators'])}) {worst['error_pct']:+.1f} | "
            f"{'n/a' if math.isnan(lofo_med) else f'{lofo_med:.1f}'} |"
        )
        effs = ", ".join(f"{k} {v:.2f}" for k, v in model.compute_efficiency_by_family.items())
        details += [
            f"**{wl.name}** (`{bench}`; {wl.throughput_unit}). Compute efficiency per family: "
            f"{effs}; arithmetic intensity {model.arithmetic_intensity:.0f} FLOP/B; overhead "
            f"{model.overhead_s:.0f} s; batch knee {model.batch_half:.1f}."
            + (f" On a bound: {', '.join(f['at_bound'])}." if f.get("at_bound") else "")
            + f" Leave-one-{cv_by}-out per family:",
            "",
            *_md_cv(cv_summary(cv)),
            "",
        ]
    lines = [
        WORKLOADS_BEGIN,
        "",
        "| workload | benchmark | throughput | rounds | rows fitted | in-sample median % | "
        "held out by | n | median % | p90 % | worst row, its error % | leave-one-family-out "
        "median % |",
        "|:--|:--|:--|:--|--:|--:|:--|--:|--:|--:|:--|--:|",
        *summary,
        "",
        *details,
        WORKLOADS_END,
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# CLI helpers
# --------------------------------------------------------------------------------------
def _write_table(df: pd.DataFrame, path, *, overwrite=False) -> Path:
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with publish_file(p, name="--output", overwrite=overwrite) as pub:
            df.to_csv(pub.path, index=False)
        return p
    return write_table(df, p, metadata={"predicted": True}, overwrite=overwrite, name="--output")


def _report_target(path, begin: str = REPORT_BEGIN, end: str = REPORT_END
                   ) -> tuple[Path, str, str]:
    """The report file and the text before and after its generated section (checked up
    front, before any fit runs)."""
    p = Path(path)
    if p.suffix.lower() != ".md":
        raise UsageError(f"--report '{path}' must be a Markdown file ending in .md")
    if p.is_symlink() or (p.exists() and not p.is_file()):
        raise UsageError(f"--report '{path}' is not a regular file; name a .md file")
    if not p.exists():
        check_target(p, name="--report")
        return p, "<!-- generated by gpurank calibrate --report -->\n\n", ""
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--report '{path}' cannot be read as UTF-8 text: {exc}") from None
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        raise UsageError(
            f"--report '{path}' has no generated section; add the two lines '{begin}' and "
            f"'{end}' where the report goes, or name a new .md file"
        )
    after = text[b + len(end) :]
    return p, text[:a], after[1:] if after.startswith("\n") else after


def _write_report(rep, section: str) -> None:
    text = rep[1] + section + rep[2]
    # the section is ours and everything around it is kept: replacing the file is safe
    with publish_file(rep[0], name="--report", overwrite=True) as pub:
        pub.path.write_text(text, encoding="utf-8")


def _benchmarks_of(table: pd.DataFrame) -> list[str]:
    if "benchmark" not in table.columns:
        raise DataError("the table has no column 'benchmark'; --benchmark needs a table "
                        "gpurank mlperf wrote")
    return sorted({str(b) for b in table["benchmark"].dropna() if str(b).strip()})


def _rows_of(table: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    names = _benchmarks_of(table)
    if benchmark not in names:
        raise DataError(f"benchmark {benchmark!r} matches no row; the table has: "
                        f"{shown_names(benchmark, names)}")
    return table[table["benchmark"].astype(str) == benchmark].reset_index(drop=True)


def run_calibrate_cli(
    table_path, output, *, train_rounds=None, test_rounds=None, overwrite=False, report=None,
    benchmark=None,
):
    """CLI entry: ``gpurank calibrate MLPERF_TABLE -o model.json [--benchmark NAME|all]
    [--report doc.md]``.

    ``benchmark`` picks the rows of one benchmark (a table of several needs it) and fits that
    benchmark's workload; ``"all"`` fits every benchmark that has a shipped workload, writes
    ``<workload>.json`` into the folder ``output`` and returns ``{workload: model}``.

    ``report`` names a Markdown file that receives :func:`validation_report` (the
    cross-validation tables; with ``"all"``, :func:`workloads_report`, between the
    ``WORKLOADS_BEGIN`` / ``WORKLOADS_END`` lines). A new file is created; an existing one must
    hold the two marker lines and only the text between them is replaced, the rest of the
    file is kept byte for byte.
    """
    if benchmark == "all":
        out = Path(output)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--output '{output}' must be a folder with --benchmark all")
        if not out.parent.exists():
            raise UsageError(f"--output folder '{out.parent}' does not exist")
        rep = _report_target(report, WORKLOADS_BEGIN, WORKLOADS_END) if report else None
        table = read_table(table_path)
        models = {}
        for bench in _benchmarks_of(table):
            if workload_for_benchmark(bench) is None:
                continue
            rows = _rows_of(table, bench)
            models[workload(bench).name] = (bench, calibrate(rows, workload=workload(bench)))
        if not models:
            raise DataError("no benchmark of the table has a shipped workload "
                            "(engine/data/workloads.csv)")
        if rep is not None:
            _write_report(rep, workloads_report(table, models={w: m for w, (_b, m) in
                                                               models.items()}))
        out.mkdir(exist_ok=True)
        for wname, (_bench, model) in models.items():
            model.to_json(out / f"{wname}.json", overwrite=overwrite)
        return {w: m for w, (_b, m) in models.items()}
    check_target(output, name="--output", overwrite=overwrite)
    rep = _report_target(report) if report is not None else None
    table = read_table(table_path)
    if benchmark is not None:
        table = _rows_of(table, benchmark)
    model = calibrate(table, train_rounds=train_rounds, test_rounds=test_rounds)
    if rep is not None:
        _write_report(rep, validation_report(table, model=model))
    model.to_json(output, overwrite=overwrite)
    return model


def run_predict_cli(
    table_path, model_path, output, *, use_table_epochs=True, overwrite=False, benchmark=None
) -> pd.DataFrame:
    """CLI entry: ``gpurank predict TABLE [--model model.json] [--benchmark NAME] -o out``.

    Without ``--model`` every benchmark of the table is predicted with its workload's shipped
    model (:func:`predict`); ``benchmark`` keeps the rows of one benchmark first."""
    check_target(output, name="--output", overwrite=overwrite)
    model = CalibratedModel.from_json(model_path) if model_path is not None else None
    table = read_table(table_path)
    if benchmark is not None:
        table = _rows_of(table, benchmark)
    res = predict(table, model, use_table_epochs=use_table_epochs)
    _write_table(res, output, overwrite=overwrite)
    return res
