"""Synthetic sweeps of training configurations from the performance model.

``simulate(n, seed=...)`` draws ``n`` configurations (accelerator, count, nodes, host CPU,
interconnect, network, framework, provider, batch) from the catalogs and evaluates the model
of :mod:`gpurank.engine.sources.perfmodel` on them; ``simulate_to_parquet`` streams the same
rows to Parquet row groups (or a folder of part files) with bounded memory.

Determinism: rows are generated in logical chunks of ``LOGICAL_CHUNK`` rows; chunk ``k`` draws
from ``Generator(Philox(SeedSequence(seed, spawn_key=(k,))))``. The output depends only on
``seed``, ``n`` and the options, never on ``row_group_rows``; the per-row arithmetic uses only
exactly rounded IEEE operations, so it is the same on any machine with the same NumPy
random streams.

Impossible grid points (accelerators per node above the chassis limit, node counts that do
not divide the accelerator count, a per-accelerator batch beyond memory) are dropped and
counted: ``df.attrs["excluded"]`` (int) and ``df.attrs["excluded_by_reason"]`` (dict), and the
same numbers in the Parquet file's key-value metadata (``gpurank.excluded``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog as _cat
from ..errors import UsageError
from ..outputs import publish_file, publish_folder
from .accelerators import resolve_accelerators
from .hardware import hardware_facts
from .intervals import IntervalTable, interval_table
from .perfmodel import HOST_COPY_EFFICIENCY, CalibratedModel, Workload, evaluate, resnet50
from .predict import (
    basis_kind,
    basis_note,
    extrapolation,
    first_principles,
    first_principles_note,
)
from .workloads import default_model, workload_for_benchmark
from .workloads import workload as _workload

__all__ = [
    "simulate",
    "simulate_to_parquet",
    "run_simulate_cli",
    "LOGICAL_CHUNK",
    "DEFAULT_COUNTS",
    "DEFAULT_NETWORKS",
    "COLUMNS",
    "resolve_accelerators",
    "estimate_size",
    "MEMORY_BYTES_PER_ROW",
    "PARQUET_BYTES_PER_ROW",
    "CSV_BYTES_PER_ROW",
]

LOGICAL_CHUNK = 1 << 16
#: Bytes per row, measured on the default sweep and rounded up (docs/simulator.md, "Scale"):
#: the DataFrame ``simulate`` returns is 158 B/row and its chunks are held while they are
#: joined; Parquet (snappy) is 93 B/row on disk; CSV text is 405 B/row (the notes are text).
MEMORY_BYTES_PER_ROW = 320
PARQUET_BYTES_PER_ROW = 100
CSV_BYTES_PER_ROW = 440
#: Accelerator counts of the default grid: powers of two and common node multiples (x3 of 8).
DEFAULT_COUNTS = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
                  1536, 2048, 3072, 4096)
#: Inter-node networks of the default grid (link ids of interconnects.csv).
DEFAULT_NETWORKS = ("eth_25g", "eth_100g", "roce_100g_x4", "ib_edr", "ib_hdr", "ib_ndr",
                    "roce_400g_x8", "aws_efa_p5", "ib_xdr")
_PER_NODE_PREF = np.array([1, 2, 4, 8, 8, 8, 16], dtype=np.int64)
_P_TWO_SOCKETS = 0.75
_FRAMEWORKS = ["PyTorch", "PyTorch + DALI", "MXNet + DALI", "TensorFlow", "TensorFlow + DALI",
               "JAX"]
_FW_NVIDIA = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
_FW_OTHER = np.array([0, 3, 5], dtype=np.int64)
_FW_DALI = np.array(["DALI" in f for f in _FRAMEWORKS])
_BOTTLENECKS = ["compute", "communication", "input", "memory"]
_REASONS = ("accelerators_per_node_above_chassis_limit", "nodes_do_not_divide_accelerators",
            "batch_per_accelerator_beyond_memory")
#: reason of a model-parallel workload's sweep: a count that is not whole replicas
_SHARD_REASON = "accelerators_not_whole_model_replicas"
#: reason of a sweep of a workload whose reference points end below the replicas' batch
_CAP_REASON = "global_batch_above_reference_points"

#: Output columns, in order.
COLUMNS = (
    "accelerator", "accelerator_id", "family", "generation", "release_year", "n_accelerators",
    "n_nodes", "accelerators_per_node", "host_cpu", "cpu_cores_per_accelerator", "interconnect",
    "network", "framework", "input_pipeline", "provider", "provider_type",
    "price_per_accelerator_hour", "global_batch_size", "local_batch_size", "epochs",
    "time_to_train_min", "time_to_train_min_lo", "time_to_train_min_hi", "throughput",
    "utilization", "mfu", "bottleneck", "prediction_basis", "prediction_note", "power_w",
    "cost_usd", "energy_kwh",
)


def _int_list(name, values, lo, hi):
    if values is None:
        return None
    if isinstance(values, (int, np.integer)):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise UsageError(f"{name}: value {v!r} is not allowed; use integers in [{lo}, {hi}]")
        out.append(int(v))
    if not out:
        raise UsageError(f"{name}: an empty list is not allowed; give at least one value")
    return out


@dataclass
class _Plan:
    n_acc: int
    acc: dict              # arrays indexed by accelerator position
    offer_start: np.ndarray
    offer_count: np.ndarray
    offer_provider: np.ndarray
    offer_price: np.ndarray
    provider_type_of: np.ndarray
    cats: dict
    cpu: dict
    grace_cores: float
    net: dict
    counts: np.ndarray | None
    nodes: np.ndarray | None
    local_batch: np.ndarray | None
    model: CalibratedModel
    workload: Workload
    link_bw: dict
    intervals: IntervalTable


def _model_and_workload(model, workload) -> tuple[CalibratedModel, Workload]:
    """The model and workload of a sweep: as given, else each other's, else ResNet-50's."""
    if workload is not None and not isinstance(workload, Workload):
        raise UsageError(
            f"workload: {type(workload).__name__} is not allowed; pass a Workload or None")
    if model is not None and not isinstance(model, CalibratedModel):
        raise UsageError(
            f"model: {type(model).__name__} is not allowed; pass a CalibratedModel or None")
    if workload is None:
        workload = (_workload(model.workload) if model is not None and model.workload
                    and workload_for_benchmark(model.workload) else resnet50())
    model = default_model(workload.name) if model is None else model
    return model, workload


def _modelled_accelerators(acc: pd.DataFrame, accelerators, precision: str) -> pd.DataFrame:
    """The catalog's accelerators with a peak and a memory bandwidth (only those of the list
    ``accelerators``, when given), with their ``peak`` (bf16), ``narrow_peak`` (in the
    workload's training ``precision``), ``mem_bw``, ``scaleup`` and ``scaleup_bw`` as
    numbers."""
    acc = acc.copy().reset_index(drop=True)
    hw = hardware_facts(pd.DataFrame(index=acc.index), acc, precision)
    acc["peak"] = pd.to_numeric(acc["bf16_dense_tflops"], errors="coerce").fillna(
        pd.to_numeric(acc["fp16_dense_tflops"], errors="coerce"))
    acc["narrow_peak"] = hw.peak
    acc["scaleup"] = hw.facts["scaleup_domain"]
    acc["scaleup_bw"] = hw.facts["scaleup_bw_GBps"]
    acc["mem_bw"] = pd.to_numeric(acc["mem_bw_tbps"], errors="coerce")
    modelled = (acc["peak"] > 0) & (acc["mem_bw"] > 0)
    acc = acc.reset_index(drop=True)
    modelled_ids = set(acc.loc[modelled.to_numpy(), "accelerator_id"])
    if accelerators is not None:
        ids = []
        for name in accelerators:
            hit = [i for i in resolve_accelerators([name], acc) if i in modelled_ids]
            if not hit:
                raise UsageError(
                    f"accelerators: {name!r} has no peak or memory bandwidth in the accelerator "
                    "catalog, so the model cannot simulate it; choose modelled accelerators"
                )
            ids += [i for i in hit if i not in ids]
        acc = acc[acc["accelerator_id"].isin(ids)]
    return acc[acc["accelerator_id"].isin(modelled_ids)]


def _priced(acc: pd.DataFrame, prices: pd.DataFrame, accelerators, providers):
    """The prices of the chosen providers and the accelerators they price, ``(acc, prices)``."""
    known_prov = list(dict.fromkeys(prices["provider"].astype(str)))
    if providers is not None:
        if isinstance(providers, str):
            providers = [providers]
        low = {p.lower(): p for p in known_prov}
        chosen = []
        for p in providers:
            if str(p).lower() not in low:
                raise UsageError(
                    f"providers: unknown provider {p!r}; known providers are: "
                    f"{', '.join(known_prov)}"
                )
            chosen.append(low[str(p).lower()])
        prices = prices[prices["provider"].isin(chosen)]
    prices = prices[prices["accelerator_id"].isin(acc["accelerator_id"])]
    acc = acc[acc["accelerator_id"].isin(prices["accelerator_id"])].reset_index(drop=True)
    if len(acc) == 0:
        raise UsageError(
            f"accelerators={accelerators!r} with providers={providers!r}: no accelerator has a "
            "price from these providers; choose accelerators and providers that overlap"
        )
    return acc, prices


@dataclass(frozen=True)
class _Links:
    """The interconnect table as the sweep reads it: GB/s and protocol efficiency per link
    id, the links that span nodes, the networks drawn, and the pod fabrics used as networks."""

    bw: dict
    eff: dict
    spans: set
    nets: list
    fabric_nets: list


def _links(links: pd.DataFrame, model: CalibratedModel, acc: pd.DataFrame) -> _Links:
    """Read the interconnect table; every accelerator's own link needs a bandwidth."""
    link_bw = {}
    link_eff = {}
    spans = set()
    for _, r in links.iterrows():
        bw = pd.to_numeric(r["aggregate_GB_s_per_dir"], errors="coerce")
        link_bw[r["link_id"]] = float(bw) if bw == bw else float("nan")
        rdma = str(r.get("rdma", "yes")).strip().lower()
        link_eff[r["link_id"]] = model.tcp_efficiency if rdma.startswith("no") else 1.0
        if str(r.get("spans_nodes", "no")).strip().lower() == "yes":
            spans.add(r["link_id"])
    for lid in acc["intra_link_id"]:
        if lid not in link_bw or not link_bw[lid] > 0:
            raise UsageError(
                f"accelerator catalog: intra_link_id {lid!r} has no bandwidth in the "
                "interconnect table"
            )
    nets = [x for x in DEFAULT_NETWORKS if x in link_bw]
    # a pod fabric (TPU ICI) also joins the hosts: its rows name it as their network
    fabric_nets = list(dict.fromkeys(x for x in acc["intra_link_id"] if x in spans))
    return _Links(link_bw, link_eff, spans, nets, fabric_nets)


def _categories(acc, prices, cpu_names, links: _Links, eff_basis) -> dict:
    """The categories of each categorical column (fixed per plan so every chunk shares one
    dictionary)."""
    return {
        "accelerator": list(acc["display_name"].astype(str)),
        "accelerator_id": list(acc["accelerator_id"].astype(str)),
        "family": list(dict.fromkeys(acc["family"].astype(str))),
        "generation": list(dict.fromkeys(acc["generation"].astype(str))),
        "host_cpu": cpu_names,
        "interconnect": list(dict.fromkeys(["none"] + list(acc["intra_link_id"]))),
        "network": ["none"] + links.nets + links.fabric_nets,
        "framework": _FRAMEWORKS, "input_pipeline": ["cpu", "dali"],
        "provider": list(dict.fromkeys(prices["provider"].astype(str))),
        "provider_type": list(dict.fromkeys(prices["provider_type"].astype(str))),
        "bottleneck": _BOTTLENECKS,
        "prediction_basis": list(dict.fromkeys(b for _e, b in eff_basis)),
    }


def _offers(acc: pd.DataFrame, prices: pd.DataFrame, cats: dict) -> dict:
    """The price offers, grouped by accelerator position: the ``_Plan`` fields
    ``offer_start``, ``offer_count``, ``offer_provider``, ``offer_price`` and
    ``provider_type_of``."""
    provs, ptypes = cats["provider"], cats["provider_type"]
    offers = prices.assign(
        _a=prices["accelerator_id"].map({a: i for i, a in enumerate(acc["accelerator_id"])}))
    offers = offers.sort_values(["_a", "provider"], kind="stable")
    offer_count = np.bincount(offers["_a"].to_numpy(), minlength=len(acc)).astype(np.int64)
    offer_start = np.concatenate([[0], np.cumsum(offer_count)[:-1]]).astype(np.int64)
    prov_idx = {p: i for i, p in enumerate(provs)}
    ptype_of = np.array(
        [ptypes.index(str(prices.loc[prices["provider"] == p, "provider_type"].iloc[0]))
         for p in provs], dtype=np.int64)
    return {
        "offer_start": offer_start,
        "offer_count": offer_count,
        "offer_provider": offers["provider"].map(prov_idx).to_numpy(np.int64),
        "offer_price": offers["usd_per_accel_hr"].to_numpy(float),
        "provider_type_of": ptype_of,
    }


def _accelerator_arrays(acc, cats: dict, eff_basis, links: _Links, workload: Workload) -> dict:
    """Per-accelerator arrays the chunks index by accelerator position."""
    fams, gens = cats["family"], cats["generation"]
    intra_ids, bases = cats["interconnect"], cats["prediction_basis"]
    link_bw, spans, nets, fabric_nets = links.bw, links.spans, links.nets, links.fabric_nets
    fixed = acc["host_cpu_fixed"].astype(str).str.strip().eq("NVIDIA Grace").to_numpy()
    cpa = pd.to_numeric(acc["host_cpus_per_accel"], errors="coerce").fillna(1.0).to_numpy(float)
    fam_codes = np.array([fams.index(f) for f in acc["family"].astype(str)], dtype=np.int64)
    gen_codes = np.array([gens.index(x) for x in acc["generation"].astype(str)], dtype=np.int64)
    fabric = np.array([x in spans for x in acc["intra_link_id"]])
    accd = {
        "peak": acc["peak"].to_numpy(float),
        "narrow_peak": acc["narrow_peak"].to_numpy(float),
        # a pod fabric already joins the nodes (its network is the fabric): no wider domain
        "scaleup": np.where(fabric, np.nan, acc["scaleup"].to_numpy(float)),
        "scaleup_bw": acc["scaleup_bw"].to_numpy(float),
        "mem_bw": acc["mem_bw"].to_numpy(float),
        "eff": np.array([e for e, _b in eff_basis], dtype=float),
        "basis": np.array([bases.index(b) for _e, b in eff_basis], dtype=np.int64),
        "fabric": fabric,
        "fabric_code": np.array([1 + len(nets) + fabric_nets.index(x) if x in spans else 0
                                 for x in acc["intra_link_id"]], dtype=np.int64),
        "mem": pd.to_numeric(acc["mem_gb"], errors="coerce").to_numpy(float),
        "tdp": pd.to_numeric(acc["tdp_w"], errors="coerce").to_numpy(float),
        "max_per_node": pd.to_numeric(acc["max_accels_per_node"], errors="coerce")
        .fillna(8).to_numpy(np.int64),
        "intra_code": np.array([intra_ids.index(x) for x in acc["intra_link_id"]],
                               dtype=np.int64),
        "intra_bw": np.array([link_bw[x] for x in acc["intra_link_id"]], dtype=float),
        "dali_ok": pd.to_numeric(acc["dali_supported"], errors="coerce").fillna(0).to_numpy() > 0,
        "fixed_cpu": fixed,
        "cpus_per_accel": cpa,
        "family": fam_codes,
        "generation": gen_codes,
        "year": pd.to_numeric(acc["release_year"], errors="coerce").fillna(0).to_numpy(np.int64),
    }
    accd["max_b"] = workload.max_local_batch(accd["mem"]).astype(np.int64)
    hif = (acc["host_interface"].astype(str).str.lower() if "host_interface" in acc.columns
           else pd.Series([""] * len(acc)))
    accd["host_bw"] = HOST_COPY_EFFICIENCY * np.where(
        hif.str.contains("gen5").to_numpy(), link_bw.get("pcie_gen5_x16", 64.0),
        np.where(hif.str.contains("gen3").to_numpy(), link_bw.get("pcie_gen3_x16", 16.0),
                 link_bw.get("pcie_gen4_x16", 32.0)))
    return accd


def _cpu_arrays(x86: pd.DataFrame, grace: pd.DataFrame) -> dict:
    """Per-host-CPU arrays of the x86 CPUs drawn, and Grace's decode factor."""
    num = pd.to_numeric
    return {
        "cores": num(x86["cores_per_socket"], errors="coerce").to_numpy(float),
        "tdp": num(x86["tdp_w"], errors="coerce").fillna(0).to_numpy(float),
        "factor": num(x86["decode_rate_factor"], errors="coerce").fillna(1.0).to_numpy(float),
        "max_sockets": num(x86["max_sockets"], errors="coerce").fillna(2).to_numpy(np.int64),
        "grace_factor": float(num(grace["decode_rate_factor"], errors="coerce").iloc[0])
        if len(grace) else 1.0,
    }


def _prepare(*, model, workload, accelerators, providers, counts, nodes, local_batch,
             accelerator_table, price_table, host_cpu_table, interconnect_table) -> _Plan:
    """Check the options and read the catalogs into the arrays every chunk draws from."""
    model, workload = _model_and_workload(model, workload)
    acc = _cat.accelerator_catalog(accelerator_table)
    prices = _cat.price_catalog(price_table, accelerators=acc)
    cpus = _cat.host_cpu_catalog(host_cpu_table)
    links = _cat.interconnect_catalog(interconnect_table)

    counts = _int_list("counts", counts, 1, 1_048_576)
    nodes = _int_list("nodes", nodes, 1, 1_048_576)
    local_batch = _int_list("local_batch", local_batch, 1, 1_000_000)

    if isinstance(accelerators, str):
        accelerators = [accelerators]
    acc = _modelled_accelerators(acc, accelerators, workload.precision)
    acc, prices = _priced(acc, prices, accelerators, providers)
    lk = _links(links, model, acc)

    x86 = cpus[cpus["host_cpu"].astype(str) != "NVIDIA Grace"].reset_index(drop=True)
    grace = cpus[cpus["host_cpu"].astype(str) == "NVIDIA Grace"]
    grace_cores = float(grace["cores_per_socket"].iloc[0]) if len(grace) else 72.0
    cpu_names = list(x86["host_cpu"].astype(str)) + ["NVIDIA Grace"]
    eff_basis = [model.compute_efficiency_for(f, g, vendor=v)
                 for f, g, v in zip(acc["family"].astype(str), acc["generation"].astype(str),
                                    acc["vendor"].astype(str))]
    fp = first_principles(model, workload)
    notes = [basis_note(b, f, model, workload) for (_e, b), f in
             zip(eff_basis, acc["family"].astype(str))]
    if fp:
        eff_basis = [(e, f"first-principles:{model.workload}") for e, _b in eff_basis]
        notes = ["; ".join(x for x in (n, first_principles_note(model, workload)) if x)
                 for n in notes]
    cats = _categories(acc, prices, cpu_names, lk, eff_basis)
    cats["prediction_note"], note_base = _note_categories(notes, model, workload)
    accd = _accelerator_arrays(acc, cats, eff_basis, lk, workload)
    accd["note_base"], accd["note_map"] = note_base
    table_i = interval_table()
    w = [table_i.by_basis.get(_kind_of(b), table_i.by_basis.get("first-principles"))
         for _e, b in eff_basis]
    accd["w_lo"] = np.array([x[0] for x in w], dtype=float)
    accd["w_hi"] = np.array([x[1] for x in w], dtype=float)
    return _Plan(
        n_acc=len(acc), acc=accd,
        **_offers(acc, prices, cats),
        cats=cats, cpu=_cpu_arrays(x86, grace), grace_cores=grace_cores,
        net={"bw": np.array([0.0] + [lk.bw[x] * lk.eff[x] for x in lk.nets])},
        counts=None if counts is None else np.array(counts, dtype=np.int64),
        nodes=None if nodes is None else np.array(nodes, dtype=np.int64),
        local_batch=None if local_batch is None else np.array(local_batch, dtype=np.int64),
        model=model, workload=workload, link_bw=lk.bw, intervals=table_i,
    )


def _kind_of(basis: str) -> str:
    kind = basis_kind(basis)
    return kind if kind in ("fitted", "borrowed", "first-principles") else "first-principles"


#: The flags of a row's note code beyond its accelerator's base note.
_BATCH_OUT, _SCALE_OUT, _CURVE_OUT = 1, 2, 4


def _note_categories(base_notes, model, workload):
    """The sweep's ``prediction_note`` dictionary and each accelerator's base code: every
    distinct base note (its basis) combined with the three extrapolation flags."""
    distinct = list(dict.fromkeys(base_notes))
    dom = model.fit.get("domain", {}) if isinstance(model.fit, dict) else {}
    rng = dom.get("global_batch")
    nmax = (dom.get("n_accelerators") or [None, None])[1]
    curve = workload.samples_curve or workload.epochs_curve
    top = max(b for b, _ in curve) if curve else None
    fit_on = model.workload or workload.name
    flags = [
        (_BATCH_OUT, f"global batch beyond the fitted range {rng[0]:,.0f}-{rng[1]:,.0f} of "
                     f"{fit_on}" if rng else ""),
        (_SCALE_OUT, f"scale beyond the largest fitted system ({nmax:,.0f} accelerators)"
         if nmax else ""),
        (_CURVE_OUT, f"samples to converge extrapolated beyond the largest reference "
                     f"convergence batch ({top:,.0f})" if top else ""),
    ]
    texts = []
    for base in distinct:
        for code in range(8):
            parts = [base] + [t for bit, t in flags if code & bit]
            texts.append("; ".join(x for x in parts if x))
    cats = list(dict.fromkeys(texts))
    # raw code (8 x base + flags) -> position of its text among the distinct texts
    code_map = np.array([cats.index(t) for t in texts], dtype=np.int64)
    base_code = np.array([8 * distinct.index(n) for n in base_notes], dtype=np.int64)
    return cats, (base_code, code_map)


def _workload_meta(wl: Workload) -> dict:
    """What a sweep is of: its workload, MLPerf benchmark(s) and throughput unit."""
    return {"workload": wl.name, "benchmark": wl.benchmark, "throughput_unit": wl.throughput_unit}


def _pick(u, options):
    return options[np.minimum((u * len(options)).astype(np.int64), len(options) - 1)]


@dataclass(frozen=True)
class _Layout:
    """Per row: accelerators, nodes, accelerators per node, and the grid points the
    chassis or the node count rule out."""

    n: np.ndarray
    m: np.ndarray
    per_node: np.ndarray
    bad_chassis: np.ndarray
    bad_divide: np.ndarray


@dataclass(frozen=True)
class _Host:
    """Per row: CPU cores per accelerator, host CPU code, decode factor and host watts."""

    cores_pa: np.ndarray
    cpu_code: np.ndarray
    cpu_factor: np.ndarray
    host_w: np.ndarray


@dataclass(frozen=True)
class _Network:
    """Per row: network code and GB/s between nodes, and the intra-node link's code."""

    net_code: np.ndarray
    inter_bw: np.ndarray
    intra_code: np.ndarray


@dataclass(frozen=True)
class _Batch:
    """Per row: local and global batch, and the rows memory, the reference points or the
    replica size rule out."""

    b: np.ndarray
    gb: np.ndarray
    bad_mem: np.ndarray
    bad_cap: np.ndarray
    bad_shards: np.ndarray


@dataclass(frozen=True)
class _Draw:
    """One chunk's drawn configurations: accelerator position, price offer, framework and
    decoder per row, and the records of the other draws."""

    a: np.ndarray
    offer: np.ndarray
    fw: np.ndarray
    dali: np.ndarray
    layout: _Layout
    host: _Host
    network: _Network
    batch: _Batch


@dataclass(frozen=True)
class _Outcome:
    """Per row: the model's (noisy) throughput, utilization, epochs, training seconds,
    price, power and achieved MFU, and the bottleneck code."""

    thr: np.ndarray
    util: np.ndarray
    epochs: np.ndarray
    train_s: np.ndarray
    price: np.ndarray
    power: np.ndarray
    mfu: np.ndarray
    bottleneck: np.ndarray


def _draw_layout(plan: _Plan, u, a, rows: int) -> _Layout:
    """Accelerator count and node count from the grid (the options fix either or both)."""
    maxpn = plan.acc["max_per_node"][a]
    pref = _pick(u[3], _PER_NODE_PREF)
    bad_chassis = np.zeros(rows, bool)
    bad_divide = np.zeros(rows, bool)
    if plan.nodes is None:
        counts = plan.counts if plan.counts is not None else np.array(DEFAULT_COUNTS, np.int64)
        n = _pick(u[2], counts)
        per_node = np.gcd(n, np.minimum(pref, maxpn))
        m = n // per_node
    elif plan.counts is None:
        m = _pick(u[2], plan.nodes)
        per_node = np.minimum(pref, maxpn)
        n = m * per_node
    else:
        n = _pick(u[2], plan.counts)
        m = _pick(u[3], plan.nodes)
        bad_divide = n % m != 0
        per_node = np.maximum(n // m, 1)
        bad_chassis = ~bad_divide & (per_node > maxpn)
    return _Layout(n, m, per_node, bad_chassis, bad_divide)


def _draw_host(plan: _Plan, u, a, per_node) -> _Host:
    """Host CPU: an x86 model with 1 or 2 sockets, or the fixed Grace of GH200/GB200."""
    A, C = plan.acc, plan.cpu
    ci = np.minimum((u[4] * len(C["cores"])).astype(np.int64), len(C["cores"]) - 1)
    sockets = np.where(u[5] < _P_TWO_SOCKETS, np.minimum(2, C["max_sockets"][ci]), 1)
    fixed = A["fixed_cpu"][a]
    node_cores = C["cores"][ci] * sockets
    return _Host(
        cores_pa=np.where(fixed, plan.grace_cores * A["cpus_per_accel"][a], node_cores / per_node),
        cpu_code=np.where(fixed, len(C["cores"]), ci),
        cpu_factor=np.where(fixed, C["grace_factor"], C["factor"][ci]),
        host_w=np.where(fixed, 0.0, C["tdp"][ci] * sockets),
    )


def _draw_network(plan: _Plan, u, a, layout: _Layout) -> _Network:
    """Network between nodes (none on one node, the pod fabric where there is one)."""
    A, m, per_node = plan.acc, layout.m, layout.per_node
    n_net = len(plan.net["bw"]) - 1
    net_code = np.where(m > 1, 1 + np.minimum((u[6] * n_net).astype(np.int64), n_net - 1), 0)
    inter_bw = plan.net["bw"][net_code]
    fabric = A["fabric"][a] & (m > 1)
    if fabric.any():
        # chips on a pod fabric reach other hosts' chips over it: a node's share is its chips'
        net_code = np.where(fabric, A["fabric_code"][a], net_code)
        inter_bw = np.where(fabric, A["intra_bw"][a] * per_node, inter_bw)
    intra_code = np.where(per_node > 1, A["intra_code"][a], 0)
    return _Network(net_code, inter_bw, intra_code)


def _draw_batch(plan: _Plan, u, a, n, rows: int) -> _Batch:
    """Local batch per replica (bounded by memory and the largest global batch)."""
    wl = plan.workload
    if wl.model_parallel == 1:
        max_b = plan.acc["max_b"][a]
        replicas = n
        bad_shards = np.zeros(rows, bool)
    else:
        # a replica spans min(n, model_parallel) accelerators; counts that are not a whole
        # number of replicas are impossible
        shards = np.minimum(n, wl.model_parallel)
        bad_shards = n % shards != 0
        replicas = n // shards
        max_b = wl.max_local_batch(plan.acc["mem"][a], shards=shards.astype(np.float64),
                                   n=n.astype(np.float64)).astype(np.int64)
    if plan.local_batch is None:
        b = np.minimum(_pick(u[8], np.array(wl.local_batches, dtype=np.int64)), max_b)
        cap = wl.max_global_batch if wl.max_global_batch is not None else np.iinfo(np.int64).max
        b = np.maximum(np.minimum(b, cap // replicas), 1)
        bad_mem = b > max_b
        # more replicas than the largest global batch: beyond the reference convergence points
        bad_cap = b * replicas > cap
    else:
        b = _pick(u[8], plan.local_batch)
        bad_mem = b > max_b
        bad_cap = np.zeros(rows, bool)
    return _Batch(b, b * replicas, bad_mem, bad_cap, bad_shards)


def _model_inputs(plan: _Plan, d: _Draw) -> dict:
    """The drawn rows as :func:`~gpurank.engine.sources.perfmodel.evaluate`'s ``cfg``."""
    A, a = plan.acc, d.a
    return {
        "peak_tflops": A["peak"][a], "compute_efficiency": A["eff"][a],
        "mem_bw_tbps": A["mem_bw"][a], "n_accelerators": d.layout.n,
        "accelerators_per_node": d.layout.per_node, "n_nodes": d.layout.m,
        "local_batch": d.batch.b,
        "intra_GBps": A["intra_bw"][a], "inter_GBps": d.network.inter_bw,
        "cpu_cores_per_accelerator": d.host.cores_pa, "cpu_decode_factor": d.host.cpu_factor,
        "dali": d.dali,
        "host_GBps": A["host_bw"][a],
        "narrow_peak_tflops": A["narrow_peak"][a],
        "scaleup_domain": A["scaleup"][a], "scaleup_GBps": A["scaleup_bw"][a],
    }


def _outcome(plan: _Plan, d: _Draw, out: dict, z, rows: int) -> _Outcome:
    """The model's outputs with measurement noise, and what they cost in money and power."""
    A, a, n, gb = plan.acc, d.a, d.layout.n, d.batch.gb
    wl, mdl = plan.workload, plan.model
    noise = 1.0 + mdl.noise_sigma * z[0]
    thr = out["throughput"] * noise
    util = np.minimum(out["utilization"] * noise, 1.0)
    if wl.samples_curve:
        samples = wl.samples(gb) * (1.0 + mdl.epochs_noise_sigma * z[1])
        epochs = samples / float(wl.dataset_size) if wl.dataset_size else np.full(rows, np.nan)
        train_s = samples / thr + mdl.overhead_s
    else:
        epochs = wl.epochs(gb) * (1.0 + mdl.epochs_noise_sigma * z[1])
        train_s = epochs * wl.dataset_size / thr + mdl.overhead_s
    tdp = A["tdp"][a]
    return _Outcome(
        thr=thr,
        util=util,
        epochs=epochs,
        train_s=train_s,
        price=plan.offer_price[d.offer],
        power=tdp * (mdl.idle_power_frac + (1.0 - mdl.idle_power_frac) * util),
        mfu=thr * wl.flops_per_sample / (n * A["peak"][a] * 1e12),
        bottleneck=out["bottleneck"],
    )


def _exclusions(wl: Workload, lay: _Layout, bat: _Batch):
    """Rows to drop, and how many for each reason (each row counted under one reason)."""
    bad_chassis, bad_divide = lay.bad_chassis, lay.bad_divide
    bad_mem, bad_cap, bad_shards = bat.bad_mem, bat.bad_cap, bat.bad_shards
    excl = bad_chassis | bad_divide | bad_mem | bad_shards | bad_cap
    reasons = {
        _REASONS[0]: int(bad_chassis.sum()), _REASONS[1]: int(bad_divide.sum()),
        _REASONS[2]: int((bad_mem & ~bad_chassis & ~bad_divide & ~bad_shards).sum()),
    }
    if wl.samples_curve:
        reasons[_CAP_REASON] = int((bad_cap & ~bad_mem & ~bad_chassis & ~bad_divide
                                    & ~bad_shards).sum())
    if wl.model_parallel > 1:
        reasons[_SHARD_REASON] = int((bad_shards & ~bad_chassis & ~bad_divide).sum())
    return excl, reasons


def _frame(plan: _Plan, d: _Draw, res: _Outcome, keep, ev: _Evidence) -> pd.DataFrame:
    """The kept rows as the sweep's columns (categoricals on the plan's dictionaries)."""
    A, a, wl = plan.acc, d.a, plan.workload
    n, m, per_node = d.layout.n, d.layout.m, d.layout.per_node
    b, gb = d.batch.b, d.batch.gb

    def cat(name, codes):
        return pd.Categorical.from_codes(np.asarray(codes)[keep], categories=plan.cats[name])

    prov = plan.offer_provider[d.offer]
    return pd.DataFrame({
        "accelerator": cat("accelerator", a),
        "accelerator_id": cat("accelerator_id", a),
        "family": cat("family", A["family"][a]),
        "generation": cat("generation", A["generation"][a]),
        "release_year": A["year"][a][keep].astype(np.int64),
        "n_accelerators": n[keep].astype(np.int64),
        "n_nodes": m[keep].astype(np.int64),
        "accelerators_per_node": per_node[keep].astype(np.int64),
        "host_cpu": cat("host_cpu", d.host.cpu_code),
        "cpu_cores_per_accelerator": d.host.cores_pa[keep].astype(np.float64),
        "interconnect": cat("interconnect", d.network.intra_code),
        "network": cat("network", d.network.net_code),
        "framework": cat("framework", d.fw),
        "input_pipeline": cat("input_pipeline", d.dali.astype(np.int64)),
        "provider": cat("provider", prov),
        "provider_type": cat("provider_type", plan.provider_type_of[prov]),
        "price_per_accelerator_hour": res.price[keep],
        "global_batch_size": gb[keep].astype(np.int64),
        "local_batch_size": b[keep].astype(np.int64),
        "epochs": res.epochs[keep],
        "time_to_train_min": (res.train_s / 60.0)[keep],
        "time_to_train_min_lo": (res.train_s / 60.0 * ev.lo)[keep],
        "time_to_train_min_hi": (res.train_s / 60.0 * ev.hi)[keep],
        "throughput": (res.thr * wl.throughput_scale)[keep],
        "utilization": res.util[keep],
        "mfu": res.mfu[keep],
        "bottleneck": cat("bottleneck", res.bottleneck),
        "prediction_basis": cat("prediction_basis", A["basis"][a]),
        "prediction_note": cat("prediction_note", ev.note),
        "power_w": res.power[keep],
        "cost_usd": (n * res.price * res.train_s / 3600.0)[keep],
        "energy_kwh": ((n * res.power + m * d.host.host_w) * res.train_s / 3.6e6)[keep],
    }, columns=list(COLUMNS))


def _chunk(plan: _Plan, seed: int, k: int, rows: int, xp=np):
    """Rows [k*L, k*L + rows) of the sweep (rows <= L); returns (DataFrame, excluded dict)."""
    L = LOGICAL_CHUNK
    # every uniform and normal of the chunk is drawn here, L per stream whatever ``rows``
    # is, so a row's values depend only on the seed and its position
    rng = np.random.Generator(np.random.Philox(np.random.SeedSequence(seed, spawn_key=(k,))))
    u = rng.random((10, L))[:, :rows]
    z = np.clip(rng.standard_normal((2, L))[:, :rows], -3.0, 3.0)
    A = plan.acc

    a = np.minimum((u[0] * plan.n_acc).astype(np.int64), plan.n_acc - 1)
    offer = plan.offer_start[a] + np.minimum((u[1] * plan.offer_count[a]).astype(np.int64),
                                             plan.offer_count[a] - 1)
    layout = _draw_layout(plan, u, a, rows)
    fw = np.where(A["dali_ok"][a], _pick(u[7], _FW_NVIDIA), _pick(u[7], _FW_OTHER))
    d = _Draw(
        a=a,
        offer=offer,
        fw=fw,
        dali=_FW_DALI[fw],
        layout=layout,
        host=_draw_host(plan, u, a, layout.per_node),
        network=_draw_network(plan, u, a, layout),
        batch=_draw_batch(plan, u, a, layout.n, rows),
    )
    out = evaluate(_model_inputs(plan, d), plan.model, plan.workload, xp=xp)
    res = _outcome(plan, d, out, z, rows)
    excl, reasons = _exclusions(plan.workload, d.layout, d.batch)
    keep = ~excl if excl.any() else slice(None)
    return _frame(plan, d, res, keep, _evidence(plan, d)), reasons


@dataclass(frozen=True)
class _Evidence:
    """Per row: the interval factors on the time and the ``prediction_note`` code."""

    lo: np.ndarray
    hi: np.ndarray
    note: np.ndarray


def _evidence(plan: _Plan, d: _Draw) -> _Evidence:
    """The 80% interval and the notes of each drawn row, from its accelerator's basis and how
    far its batch and scale go beyond the model's fitted domain."""
    A, a = plan.acc, d.a
    ex = extrapolation(plan.model, plan.workload, d.batch.gb, d.layout.n)
    widen = plan.intervals.per_doubling * ex.reach
    code = A["note_map"][A["note_base"][a] + _BATCH_OUT * ex.batch_out
                         + _SCALE_OUT * ex.scale_out + _CURVE_OUT * ex.curve_out]
    return _Evidence(np.exp(-(A["w_lo"][a] + widen)), np.exp(A["w_hi"][a] + widen), code)


_API_NAMES = {"n": "n", "seed": "seed", "skip": "check_size=False", "output": "path",
              "stream": "simulate_to_parquet (it streams with bounded memory)"}
_CLI_NAMES = {"n": "--n", "seed": "--seed", "skip": "--no-size-check", "output": "--output",
              "stream": "a .parquet --output (it streams with bounded memory)"}


def _check_n_seed(n, seed, names=_API_NAMES):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise UsageError(f"{names['n']}={n!r} is not allowed; {names['n']} must be an integer > 0")
    # any non-negative integer, of any size: NumPy's SeedSequence takes it whole
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UsageError(f"{names['seed']}={seed!r} is not allowed; {names['seed']} must be an "
                         "integer >= 0 (of any size)")


def _human(nbytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if nbytes < 1000 or unit == "PB":
            return f"{nbytes:,.0f} {unit}" if unit == "B" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1000
    return f"{nbytes:,.0f} B"  # pragma: no cover


def _available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (Linux MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _free_disk(target: Path) -> tuple[int | None, Path]:
    """Free bytes on the file system that will hold ``target`` (its nearest existing folder)."""
    folder = target.parent if str(target.parent) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free, folder
    except OSError:
        return None, folder


def estimate_size(n: int, *, output: str = "memory") -> int:
    """Bytes a sweep of ``n`` rows needs: ``output`` ``"memory"`` (``simulate``), ``"parquet"``
    (on disk) or ``"csv"`` (on disk)."""
    per = {"memory": MEMORY_BYTES_PER_ROW, "parquet": PARQUET_BYTES_PER_ROW,
           "csv": CSV_BYTES_PER_ROW}
    if output not in per:
        raise UsageError(f"output={output!r} is not allowed; use 'memory', 'parquet' or 'csv'")
    return int(n) * per[output]


def _check_memory(n: int, names) -> None:
    need, free = estimate_size(n, output="memory"), _available_memory()
    if free is not None and need > free:
        raise UsageError(
            f"{names['n']}={n:,} would need about {_human(need)} of memory "
            f"({MEMORY_BYTES_PER_ROW} bytes per row) but {_human(free)} is available; use "
            f"{names['stream']}, fewer rows, or pass {names['skip']} to try anyway")


def _check_disk(n: int, target: Path, output: str, names) -> None:
    need = estimate_size(n, output=output)
    free, folder = _free_disk(target)
    if free is not None and need > free:
        per = PARQUET_BYTES_PER_ROW if output == "parquet" else CSV_BYTES_PER_ROW
        raise UsageError(
            f"{names['n']}={n:,} would need about {_human(need)} on disk for the {output} output "
            f"({per} bytes per row) but '{folder}' has {_human(free)} free; simulate fewer rows, "
            f"write to a disk with more room, or pass {names['skip']} to write anyway")


@contextmanager
def _sigterm_raises():
    """Turn SIGTERM into ``SystemExit(143)`` while the block runs (main thread only), so the
    staging output is removed on the way out like on any other exception; the previous
    handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):  # noqa: ARG001 - the signal API
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not settable here (embedded interpreters)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _iter_chunks(plan, n, seed):
    excluded = dict.fromkeys(_REASONS, 0)
    n_chunks = -(-n // LOGICAL_CHUNK)
    for k in range(n_chunks):
        rows = min(LOGICAL_CHUNK, n - k * LOGICAL_CHUNK)
        df, reasons = _chunk(plan, int(seed), k, rows)
        for r, c in reasons.items():
            excluded[r] = excluded.get(r, 0) + c
        yield df, excluded


def _no_rows_error(n, excluded):
    worst = max(excluded, key=excluded.get)
    return UsageError(
        f"all {n} sampled configurations are impossible (most often: {worst.replace('_', ' ')}); "
        "choose counts, nodes and local_batch that fit the accelerators' chassis and memory"
    )


def simulate(n, *, seed=0, model=None, accelerators=None, counts=None, nodes=None,
             providers=None, local_batch=None, workload=None, accelerator_table=None,
             price_table=None, host_cpu_table=None, interconnect_table=None,
             check_size=True) -> pd.DataFrame:
    """Simulate ``n`` training configurations in memory.

    Parameters
    ----------
    n : int > 0
        Configurations to draw (rows returned = n minus the excluded impossible ones).
    seed : int >= 0
        Same seed and options give the same rows, bit for bit. Any non-negative integer
        (of any size) is allowed.
    model : CalibratedModel, optional
        Fitted parameters (``calibrate``/``CalibratedModel.from_json``); defaults built in.
    accelerators : list of str, optional
        Restrict to these accelerators (id, display name or model, e.g. ``"H100"``).
    counts, nodes : list of int, optional
        Accelerator counts and/or node counts to draw from. With both, accelerators per node
        = count / nodes and impossible pairs are excluded and counted.
    providers : list of str, optional
        Restrict to these providers (``prices.csv`` names or ``"Typical rate (catalog)"``).
    local_batch : list of int, optional
        Per-accelerator batch sizes; values beyond an accelerator's memory are excluded and
        counted. By default 32-256, capped by memory and by a 65,536 global batch.
    workload : Workload, optional
        ResNet-50 / ImageNet by default.
    accelerator_table, price_table, host_cpu_table, interconnect_table : path or DataFrame
        Replace the built-in catalogs.
    check_size : bool
        Refuse up front (``UsageError``) when ``n`` rows would need more memory than is
        available (``MEMORY_BYTES_PER_ROW`` each); ``False`` skips the check.

    Returns
    -------
    DataFrame with ``COLUMNS``; string columns are categorical. ``attrs["excluded"]`` is the
    number of dropped impossible configurations and ``attrs["excluded_by_reason"]`` a dict.
    """
    return _simulate(n, seed=seed, model=model, accelerators=accelerators, counts=counts,
                     nodes=nodes, providers=providers, local_batch=local_batch, workload=workload,
                     accelerator_table=accelerator_table, price_table=price_table,
                     host_cpu_table=host_cpu_table, interconnect_table=interconnect_table,
                     check_size=check_size, names=_API_NAMES)


def _simulate(n, *, seed, check_size, names, model=None, accelerators=None, counts=None,
              nodes=None, providers=None, local_batch=None, workload=None,
              accelerator_table=None, price_table=None, host_cpu_table=None,
              interconnect_table=None) -> pd.DataFrame:
    _check_n_seed(n, seed, names)
    if check_size:
        _check_memory(int(n), names)
    plan = _prepare(model=model, workload=workload, accelerators=accelerators,
                    providers=providers, counts=counts, nodes=nodes, local_batch=local_batch,
                    accelerator_table=accelerator_table, price_table=price_table,
                    host_cpu_table=host_cpu_table, interconnect_table=interconnect_table)
    parts, excluded = [], {}
    for df, excluded in _iter_chunks(plan, int(n), seed):
        parts.append(df)
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    total = int(sum(excluded.values()))
    if len(out) == 0:
        raise _no_rows_error(n, excluded)
    out.attrs["excluded"] = total
    out.attrs["excluded_by_reason"] = dict(excluded)
    out.attrs["seed"] = int(seed)
    out.attrs["n_requested"] = int(n)
    out.attrs.update(_workload_meta(plan.workload))
    return out


def _check_row_group_rows(row_group_rows) -> None:
    """Refuse a row-group size that is not an integer > 0."""
    if (isinstance(row_group_rows, bool) or not isinstance(row_group_rows, (int, np.integer))
            or row_group_rows <= 0):
        raise UsageError(
            f"row_group_rows={row_group_rows!r} is not allowed; it must be an integer > 0")


def _sweep_metadata(plan: _Plan, seed, n, exc: dict) -> dict:
    """The Parquet key-value metadata of a sweep: seed, size, exclusions and workload."""
    return {b"gpurank.simulate": json.dumps({
        "seed": int(seed), "n_requested": int(n), "excluded": int(sum(exc.values())),
        "excluded_by_reason": exc, "logical_chunk": LOGICAL_CHUNK,
        **_workload_meta(plan.workload),
    }).encode()}


class _RowGroupWriter:
    """Buffers chunks and writes them as row groups of ``rows`` rows, to one Parquet file or
    (``partitioned``) one part file each, so memory holds at most a row group and a chunk."""

    def __init__(self, target: Path, *, rows: int, partitioned: bool, compression):
        self.target = target
        self.rows = rows
        self.partitioned = partitioned
        self.compression = compression
        self.writer = None
        self.schema = None
        self.rows_written = 0
        self.groups = 0
        self._buf: list[pd.DataFrame] = []
        self._buffered = 0

    def add(self, df: pd.DataFrame) -> None:
        """Buffer a chunk and write every full row group."""
        if len(df):
            self._buf.append(df)
            self._buffered += len(df)
        self.flush()

    def flush(self, final: bool = False) -> None:
        """Write the buffered full row groups (and, when ``final``, the rest)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        while self._buffered >= self.rows or (final and self._buffered > 0):
            buf = self._buf
            df = pd.concat(buf, ignore_index=True) if len(buf) > 1 else buf[0]
            take = min(self.rows, len(df))
            head, rest = df.iloc[:take], df.iloc[take:]
            table = pa.Table.from_pandas(head, preserve_index=False)
            # every group is cast to the first one's schema: one file, or one dataset of
            # parts, has one type per column
            if self.schema is None:
                self.schema = table.schema.remove_metadata()
            table = table.cast(self.schema)
            if self.partitioned:
                pq.write_table(table, self.target / f"part-{self.groups:05d}.parquet",
                               compression=self.compression, row_group_size=take)
            else:
                if self.writer is None:
                    self.writer = pq.ParquetWriter(self.target, self.schema,
                                                   compression=self.compression)
                self.writer.write_table(table, row_group_size=take)
            self.rows_written += take
            self.groups += 1
            self._buf = [rest.reset_index(drop=True)] if len(rest) else []
            self._buffered = len(rest)

    def finish_file(self, metadata: dict) -> None:
        """Add the key-value metadata to the single file and close it."""
        self.writer.add_key_value_metadata(metadata)
        self.writer.close()
        self.writer = None

    def close(self) -> None:
        """Close an open file (after an error: the staging path is discarded)."""
        if self.writer is not None:
            self.writer.close()


def simulate_to_parquet(path, n, *, seed=0, model=None, accelerators=None, counts=None,
                        nodes=None, providers=None, local_batch=None, workload=None,
                        accelerator_table=None, price_table=None, host_cpu_table=None,
                        interconnect_table=None, row_group_rows=1_000_000,
                        partitioned=False, compression="snappy", overwrite=False,
                        name="path", check_size=True) -> dict:
    """Stream ``simulate`` rows to Parquet with bounded memory.

    ``partitioned=False`` writes one file with row groups of ``row_group_rows`` rows;
    ``partitioned=True`` writes a folder of ``part-00000.parquet`` ... files (one per
    ``row_group_rows`` rows), a dataset Dask/pyarrow read as one table. Writes are atomic
    (a temporary sibling renamed at the end). Rows equal ``simulate`` with the same arguments.

    An existing ``path`` is replaced only when gpurank wrote it (``overwrite=True`` replaces
    anything); the old output stays in place until the new one is complete (see
    :mod:`gpurank.engine.outputs`). ``name`` is the parameter named in messages.
    ``check_size`` refuses up front (``UsageError``) an ``n`` whose estimated output
    (``PARQUET_BYTES_PER_ROW`` each) is larger than the free space of the target's disk.

    Returns a dict: ``path, rows, excluded, excluded_by_reason, seconds, row_groups, notes``
    (``notes``: leftovers of interrupted runs that were cleaned).
    """
    names = _CLI_NAMES if name == "--output" else _API_NAMES
    _check_n_seed(n, seed, names)
    _check_row_group_rows(row_group_rows)
    if check_size:
        _check_disk(int(n), Path(path), "parquet", names)
    plan = _prepare(model=model, workload=workload, accelerators=accelerators,
                    providers=providers, counts=counts, nodes=nodes, local_batch=local_batch,
                    accelerator_table=accelerator_table, price_table=price_table,
                    host_cpu_table=host_cpu_table, interconnect_table=interconnect_table)
    path = Path(path)
    t0 = time.perf_counter()
    excluded: dict = {}

    # The whole output is written into a staging path beside the target and renamed into
    # place when complete; an existing target is replaced only when gpurank wrote it.
    publish = (publish_folder(path, kind="dataset", name=name, overwrite=overwrite)
               if partitioned else publish_file(path, name=name, overwrite=overwrite))
    with publish as pub:
        out = _RowGroupWriter(pub.path, rows=row_group_rows, partitioned=partitioned,
                              compression=compression)
        try:
            for df, excluded in _iter_chunks(plan, int(n), seed):
                out.add(df)
            out.flush(final=True)
            if out.rows_written == 0:
                raise _no_rows_error(n, excluded)
            meta = _sweep_metadata(plan, seed, n, excluded)
            if partitioned:
                (pub.path / "_gpurank_simulate.json").write_text(
                    meta[b"gpurank.simulate"].decode())
                pub.manifest.update(rows=out.rows_written, seed=int(seed))
            else:
                out.finish_file(meta)
        finally:
            out.close()
    return {
        "path": str(path), "rows": out.rows_written, "excluded": int(sum(excluded.values())),
        "excluded_by_reason": dict(excluded), "seconds": time.perf_counter() - t0,
        "row_groups": out.groups, "notes": list(pub.notes),
    }


def run_simulate_cli(output, *, n, seed=0, model_path=None, accelerators=None, counts=None,
                     nodes=None, providers=None, row_group_rows=1_000_000, partitioned=False,
                     overwrite=False, check_size=True, workload=None, catalog=None):
    """CLI entry: ``gpurank simulate --n N --seed S [--workload NAME] [--model model.json]
    -o sweep.parquet``.

    ``workload`` names a shipped workload or MLPerf benchmark (``bert``, ``gpt3_175b``, ...);
    without ``model_path`` its shipped model is used; a model fitted on another workload
    predicts it from that workload's efficiencies (``first-principles:<workload>``).
    ``catalog`` is a CSV of accelerators merged over the built-in catalog (its rows are
    sampled when they have a price: ``price_typ_usd_gpu_hr``).

    Writes Parquet (file, or folder of parts with ``partitioned``) or, when ``output`` ends
    in ``.csv``, a CSV (in memory). Returns the summary dict of ``simulate_to_parquet``.
    Sizes are checked before any work (``check_size``; CLI ``--no-size-check`` skips it) and
    a SIGTERM while writing ends the process with exit code 143 after the staging output is
    removed, leaving the target as it was. Messages name the CLI flags.
    """
    _check_n_seed(n, seed, _CLI_NAMES)
    model = CalibratedModel.from_json(model_path) if model_path is not None else None
    wl = _workload(workload) if workload is not None else None
    acc = _cat.merge_accelerator_catalog(catalog) if catalog is not None else None
    output = Path(output)
    kw = dict(seed=seed, model=model, accelerators=accelerators, counts=counts, nodes=nodes,
              providers=providers, workload=wl, accelerator_table=acc)
    if output.suffix.lower() == ".csv":
        if partitioned:
            raise UsageError(f"--output '{output}' ends in .csv; --partitioned writes a folder "
                             "of Parquet files: name a folder")
        if check_size:
            _check_memory(int(n), _CLI_NAMES)
            _check_disk(int(n), output, "csv", _CLI_NAMES)
        t0 = time.perf_counter()
        with _sigterm_raises(), publish_file(output, name="--output", overwrite=overwrite) as pub:
            df = _simulate(n, check_size=False, names=_CLI_NAMES, **kw)
            df.to_csv(pub.path, index=False)
        return {"path": str(output), "rows": len(df), "excluded": df.attrs["excluded"],
                "excluded_by_reason": df.attrs["excluded_by_reason"],
                "seconds": time.perf_counter() - t0, "row_groups": 0, "notes": pub.notes}
    with _sigterm_raises():
        return simulate_to_parquet(output, n, row_group_rows=row_group_rows,
                                   partitioned=partitioned, overwrite=overwrite, name="--output",
                                   check_size=check_size, **kw)
