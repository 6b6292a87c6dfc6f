"""The plan of a sweep: the catalogs (accelerators, prices, host CPUs, interconnects) and the
options read once into the arrays and category dictionaries every chunk draws from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import UsageError
from ..facts import catalog as _cat
from ..facts.accelerators import resolve_accelerators
from ..facts.formats import assumed_format_note, stated_formats
from ..facts.hardware import ELEMENT_BYTES, hardware_facts
from ..facts.power import (
    family_watts_per_tflops,
    power_gain,
    power_headroom,
    power_note,
    wide_peak,
)
from ..model.lenders import power_reference
from ..model.intervals import IntervalTable, interval_table
from ..model.perfmodel import HOST_COPY_EFFICIENCY, CalibratedModel, Workload, resnet50
from ..model.software import with_software_gain
from ..model.evaluation import (
    basis_kind,
    basis_note,
    first_principles,
    first_principles_note,
)
from ..facts.benchmarks import benchmarks_of, workload_for_benchmark
from ..model.workloads import default_model, model_for_workload
from ..model.workloads import workload as _workload

__all__ = ["DEFAULT_NETWORKS", "FW_NVIDIA", "FW_OTHER", "FW_DALI", "Plan", "prepare", "BATCH_OUT",
           "SCALE_OUT", "CURVE_OUT", "workload_meta", "FASTEST_NOTE"]


#: The note of every row of a sweep whose batch is chosen (``batch="fastest"``).
FASTEST_NOTE = ("global_batch_size chosen: the fastest to train of the batches within the "
                "reference convergence points and memory")
#: Inter-node networks of the default grid (link ids of interconnects.csv).
DEFAULT_NETWORKS = ("eth_25g", "eth_100g", "roce_100g_x4", "ib_edr", "ib_hdr", "ib_ndr",
                    "roce_400g_x8", "aws_efa_p5", "ib_xdr")
_FRAMEWORKS = ["PyTorch", "PyTorch + DALI", "MXNet + DALI", "TensorFlow", "TensorFlow + DALI",
               "JAX"]
FW_NVIDIA = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
FW_OTHER = np.array([0, 3, 5], dtype=np.int64)
FW_DALI = np.array(["DALI" in f for f in _FRAMEWORKS])
_BOTTLENECKS = ["compute", "communication", "input", "memory"]


def _int_list(values):
    """Counts as a list of ints (one int, or a sequence of them), None as None; the values
    were checked against ``SIMULATE_CONSTRAINTS`` by the caller."""
    if values is None:
        return None
    if isinstance(values, (int, np.integer)):
        values = [values]
    return [int(v) for v in values]


@dataclass
class Plan:
    """Everything a sweep draws from, resolved once: the accelerators and their offers, the
    host CPUs, networks and links, the fixed counts, nodes and batches asked for, the model,
    the workload and the interval table."""
    n_acc: int
    acc: dict              # arrays indexed by accelerator position
    offer_start: np.ndarray
    offer_count: np.ndarray
    offer_provider: np.ndarray
    offer_price: np.ndarray
    provider_type_of: np.ndarray
    cats: dict
    cpu: dict
    net: dict
    counts: np.ndarray | None
    nodes: np.ndarray | None
    local_batch: np.ndarray | None
    model: CalibratedModel
    workload: Workload
    link_bw: dict
    intervals: IntervalTable
    batch: str = "drawn"  # "fastest": each row's batch is the one it trains fastest at


def _model_and_workload(model, workload) -> tuple[CalibratedModel, Workload]:
    """The model and workload of a sweep: as given, else each other's, else ResNet-50's."""
    if workload is None:
        workload = (_workload(model.workload) if model is not None and model.workload
                    and workload_for_benchmark(model.workload) else resnet50())
    model = default_model(workload.name) if model is None else model
    return model_for_workload(model, workload), workload


def _modelled_accelerators(acc: pd.DataFrame, accelerators, workload: Workload) -> pd.DataFrame:
    """The catalog's accelerators with a peak and a memory bandwidth (only those of the list
    ``accelerators``, when given), with their ``peak`` (bf16), ``narrow_peak`` (in the
    format the workload trains in on the accelerator: its vendor's latest stated one, else
    the workload's; ``narrow_bytes`` its element size over bf16's), ``mem_bw``, ``scaleup``
    and ``scaleup_bw`` as numbers."""
    acc = acc.copy().reset_index(drop=True)
    none = [None] * len(acc)
    formats, why = stated_formats(none, none, acc["vendor"].to_numpy(dtype=object),
                                  benchmarks_of(workload.name), default=workload.precision)
    hw = hardware_facts(pd.DataFrame(index=acc.index), acc, formats)
    acc["narrow_bytes"] = [ELEMENT_BYTES.get(p, 1.0) for p in hw.precision]
    acc["format_note"] = [assumed_format_note(u, f, w) if w and u else ""
                          for u, f, w in zip(hw.precision, formats, why)]
    acc["peak"] = wide_peak(acc)
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
    """The price offers, grouped by accelerator position: the ``Plan`` fields
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


def _accelerator_arrays(acc, cats: dict, eff_basis, links: _Links, workload: Workload,
                        fixed_hosts: dict) -> dict:
    """Per-accelerator arrays the chunks index by accelerator position."""
    fams, gens = cats["family"], cats["generation"]
    intra_ids, bases = cats["interconnect"], cats["prediction_basis"]
    link_bw, spans, nets, fabric_nets = links.bw, links.spans, links.nets, links.fabric_nets
    own = [h if h in fixed_hosts else None
           for h in acc["host_cpu_fixed"].astype(str).str.strip()]
    cpa = pd.to_numeric(acc["host_cpus_per_accel"], errors="coerce").fillna(1.0).to_numpy(float)
    fam_codes = np.array([fams.index(f) for f in acc["family"].astype(str)], dtype=np.int64)
    gen_codes = np.array([gens.index(x) for x in acc["generation"].astype(str)], dtype=np.int64)
    fabric = np.array([x in spans for x in acc["intra_link_id"]])
    accd = {
        "peak": acc["peak"].to_numpy(float),
        "narrow_peak": acc["narrow_peak"].to_numpy(float),
        "narrow_bytes": acc["narrow_bytes"].to_numpy(float),
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
        # the accelerator's own host (Grace, Vera): its position among the CPU names, its
        # cores per socket and decode factor
        "fixed_cpu": np.array([h is not None for h in own]),
        "fixed_code": np.array([cats["host_cpu"].index(h) if h else 0 for h in own],
                               dtype=np.int64),
        "fixed_cores": np.array([fixed_hosts[h][0] if h else np.nan for h in own], dtype=float),
        "fixed_factor": np.array([fixed_hosts[h][1] if h else np.nan for h in own], dtype=float),
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


def _cpu_arrays(x86: pd.DataFrame) -> dict:
    """Per-host-CPU arrays of the x86 CPUs drawn."""
    num = pd.to_numeric
    return {
        "cores": num(x86["cores_per_socket"], errors="coerce").to_numpy(float),
        "tdp": num(x86["tdp_w"], errors="coerce").fillna(0).to_numpy(float),
        "factor": num(x86["decode_rate_factor"], errors="coerce").fillna(1.0).to_numpy(float),
        "max_sockets": num(x86["max_sockets"], errors="coerce").fillna(2).to_numpy(np.int64),
    }


def _fixed_hosts(catalog: pd.DataFrame, cpus: pd.DataFrame) -> dict:
    """``{name: (cores per socket, decode factor)}`` of the host CPUs an accelerator of the
    catalog comes with (``host_cpu_fixed``: Grace beside GH200/GB200, Vera beside VR200) that
    the host CPU table holds; the sweep never draws them for another accelerator."""
    named = set(catalog["host_cpu_fixed"].dropna().astype(str).str.strip()) - {""}
    num = pd.to_numeric
    return {str(h): (float(c), float(f) if f == f else 1.0)
            for h, c, f in zip(cpus["host_cpu"],
                               num(cpus["cores_per_socket"], errors="coerce"),
                               num(cpus["decode_rate_factor"], errors="coerce"))
            if str(h) in named and c > 0}


def prepare(*, model, workload, accelerators, providers, counts, nodes, local_batch,
            accelerator_table, price_table, host_cpu_table, interconnect_table,
            batch="drawn") -> Plan:
    """Check the options and read the catalogs into the arrays every chunk draws from."""
    if batch == "fastest" and local_batch is not None:
        raise UsageError(f"local_batch={local_batch!r} with batch='fastest': the fastest batch "
                         "is chosen, not drawn; give one or the other")
    model, workload = _model_and_workload(model, workload)
    acc = catalog = _cat.accelerator_catalog(accelerator_table)
    prices = _cat.price_catalog(price_table, accelerators=acc)
    cpus = _cat.host_cpu_catalog(host_cpu_table)
    links = _cat.interconnect_catalog(interconnect_table)

    counts = _int_list(counts)
    nodes = _int_list(nodes)
    local_batch = _int_list(local_batch)

    if isinstance(accelerators, str):
        accelerators = [accelerators]
    acc = _modelled_accelerators(acc, accelerators, workload)
    acc, prices = _priced(acc, prices, accelerators, providers)
    lk = _links(links, model, acc)

    fixed_hosts = _fixed_hosts(catalog, cpus)
    x86 = cpus[~cpus["host_cpu"].astype(str).isin(list(fixed_hosts))].reset_index(drop=True)
    cpu_names = list(x86["host_cpu"].astype(str)) + list(fixed_hosts)
    power = family_watts_per_tflops(catalog)
    eff_basis = [model.compute_efficiency_for(f, g, vendor=v, power=power)
                 for f, g, v in zip(acc["family"].astype(str), acc["generation"].astype(str),
                                    acc["vendor"].astype(str))]
    # a part's power headroom moves its family's efficiency as in a table's prediction
    wide = acc["peak"].to_numpy(float)
    tdp = pd.to_numeric(acc["tdp_w"], errors="coerce").to_numpy(float)
    reference = [power_reference(model, f, g, power) for f, g in
                 zip(acc["family"].astype(str), acc["generation"].astype(str))]
    headroom = power_headroom(tdp, wide, reference, catalog)
    eff_basis = [(float(with_software_gain(e, power_gain(h, model.power_exponent))), b)
                 for (e, b), h in zip(eff_basis, headroom)]
    power = [power_note(h, model.power_exponent, t, w, r)
             for h, t, w, r in zip(headroom, tdp, wide, reference)]
    fp = first_principles(model, workload)
    notes = ["; ".join(x for x in (fmt, pw, basis_note(b, f, model, workload)) if x)
             for (_e, b), f, fmt, pw in zip(eff_basis, acc["family"].astype(str),
                                            acc["format_note"], power)]
    if fp:
        eff_basis = [(e, f"first-principles:{model.workload}") for e, _b in eff_basis]
        notes = ["; ".join(x for x in (n, first_principles_note(model, workload)) if x)
                 for n in notes]
    if batch == "fastest":
        notes = ["; ".join(x for x in (FASTEST_NOTE, n) if x) for n in notes]
    cats = _categories(acc, prices, cpu_names, lk, eff_basis)
    cats["prediction_note"], note_base = _note_categories(notes, model, workload)
    accd = _accelerator_arrays(acc, cats, eff_basis, lk, workload, fixed_hosts)
    accd["note_base"], accd["note_map"] = note_base
    table_i = interval_table()
    w = [table_i.by_basis.get(_kind_of(b), table_i.by_basis.get("first-principles"))
         for _e, b in eff_basis]
    accd["w_lo"] = np.array([x[0] for x in w], dtype=float)
    accd["w_hi"] = np.array([x[1] for x in w], dtype=float)
    return Plan(
        n_acc=len(acc), acc=accd,
        **_offers(acc, prices, cats),
        cats=cats, cpu=_cpu_arrays(x86),
        net={"bw": np.array([0.0] + [lk.bw[x] * lk.eff[x] for x in lk.nets])},
        counts=None if counts is None else np.array(counts, dtype=np.int64),
        nodes=None if nodes is None else np.array(nodes, dtype=np.int64),
        local_batch=None if local_batch is None else np.array(local_batch, dtype=np.int64),
        model=model, workload=workload, link_bw=lk.bw, intervals=table_i, batch=batch,
    )


def _kind_of(basis: str) -> str:
    kind = basis_kind(basis)
    return kind if kind in ("fitted", "borrowed", "first-principles") else "first-principles"


#: The flags of a row's note code beyond its accelerator's base note.
BATCH_OUT, SCALE_OUT, CURVE_OUT = 1, 2, 4


def _note_categories(base_notes, model, workload):
    """The sweep's ``prediction_note`` dictionary and each accelerator's base code: every
    distinct base note (its basis) combined with the three extrapolation flags."""
    distinct = list(dict.fromkeys(base_notes))
    dom = model.fit.domain or {}
    rng = dom.get("global_batch")
    nmax = (dom.get("n_accelerators") or [None, None])[1]
    curve = workload.samples_curve or workload.epochs_curve
    top = max(b for b, _ in curve) if curve else None
    fit_on = model.workload or workload.name
    flags = [
        (BATCH_OUT, f"global batch beyond the fitted range {rng[0]:,.0f}-{rng[1]:,.0f} of "
                     f"{fit_on}" if rng else ""),
        (SCALE_OUT, f"scale beyond the largest fitted system ({nmax:,.0f} accelerators)"
         if nmax else ""),
        (CURVE_OUT, f"samples to converge extrapolated beyond the largest reference "
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


def workload_meta(wl: Workload) -> dict:
    """What a sweep is of: its workload, MLPerf benchmark(s) and throughput unit."""
    return {"workload": wl.name, "benchmark": wl.benchmark, "throughput_unit": wl.throughput_unit}
