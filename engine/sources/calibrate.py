"""Fit the performance model to measured runs (MLPerf) and predict any canonical table.

``calibrate(table) -> CalibratedModel`` fits the free parameters (achieved MFU per accelerator
family, communication efficiency, overlap, fixed run overhead, batch-efficiency knee) by
robust least squares on log time-to-train. ``predict(table, model)`` adds ``predicted_*``
columns beside the table's measured values.

Input tables use the canonical columns: ``accelerator, n_accelerators, n_nodes,
accelerators_per_node, host_cpu, cpu_cores_per_accelerator, interconnect, network, framework,
global_batch_size, epochs, time_to_train_min, throughput`` (+ ``round`` to split train/test,
+ optional ``price_per_accelerator_hour``, ``accelerator_id``, ``input_pipeline``).
Free-text names (MLPerf ``"NVIDIA A100-SXM4-80GB (400W)"``, ``"8x ConnectX-6 IB HDR
200Gb/Sec"``) are normalized here; rows whose accelerator is not in the catalog are kept with
NaN predictions and a ``prediction_note``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from .. import catalog as _cat
from ..errors import DataError, UsageError
from ..io import read_table, write_table
from ..outputs import check_target, publish_file
from .perfmodel import DEFAULT_MODEL, CalibratedModel, Workload, evaluate, resnet50

__all__ = [
    "CalibratedModel",
    "calibrate",
    "predict",
    "fit_errors",
    "normalize_accelerator",
    "run_calibrate_cli",
    "run_predict_cli",
    "REQUIRED_PREDICT_COLUMNS",
    "PREDICTED",
]

REQUIRED_PREDICT_COLUMNS = ("accelerator", "n_accelerators", "n_nodes", "accelerators_per_node")
REQUIRED_CALIBRATE_COLUMNS = REQUIRED_PREDICT_COLUMNS + ("time_to_train_min",)
PREDICTED = ("time_to_train_min", "throughput", "utilization", "cost_usd", "energy_kwh")
#: Generations without calibration data borrow the MFU of a related generation (assumption,
#: see docs/simulator.md): (generation without data, generation it borrows from).
GENERATION_FALLBACK = (("Blackwell", "Hopper"), ("Ada", "Ampere"), ("CDNA3", "Hopper"),
                       ("CDNA2", "Ampere"), ("TPU v4", "TPU v3"), ("TPU v5p", "TPU v3"),
                       ("Gaudi3", "Gaudi2"))


# --------------------------------------------------------------------------------------
# name normalization
# --------------------------------------------------------------------------------------
def normalize_accelerator(name, acc: pd.DataFrame | None = None) -> str | None:
    """Map a free-text accelerator name to an ``accelerator_id`` of the catalog, or None.

    Exact ids and display names match first; then vendor strings such as
    ``"NVIDIA A100-SXM4-80GB (400W)"``, ``"Tesla V100-SXM3-32GB-H"``, ``"tpu-v3"``.
    """
    if name is None or (isinstance(name, float) and math.isnan(name)):
        return None
    acc = _cat.accelerator_catalog() if acc is None else acc
    ids = set(acc["accelerator_id"].astype(str))
    raw = str(name).strip()
    low = raw.lower()
    if low in {i.lower() for i in ids}:
        return next(i for i in ids if i.lower() == low)
    disp = {str(d).lower(): a for d, a in zip(acc["display_name"], acc["accelerator_id"])}
    if low in disp:
        return disp[low]
    s = re.sub(r"\(.*?\)", " ", low)
    s = re.sub(r"\b(nvidia|tesla)\b", " ", s)
    s = s.replace("_", "-")
    mem80 = bool(re.search(r"80\s*gb|-80g|\b80\b", s))
    mem32 = bool(re.search(r"32\s*gb|-32g", s))
    pcie = "pcie" in s
    w = lambda pat: re.search(pat, s) is not None  # noqa: E731

    def pick(i):
        return i if i in ids else None

    if w(r"gb200"):
        return pick("nvidia_gb200")
    if w(r"gh200"):
        return pick("nvidia_gh200_144gb" if "144" in s else "nvidia_gh200_96gb")
    if w(r"\bb200"):
        return pick("nvidia_b200_hgx")
    if w(r"h200"):
        return pick("nvidia_h200_sxm")
    if w(r"h100"):
        if w(r"nvl"):
            return pick("nvidia_h100_nvl")
        return pick("nvidia_h100_pcie" if pcie else "nvidia_h100_sxm5")
    if w(r"a100"):
        if pcie:
            return pick("nvidia_a100_pcie_80gb" if mem80 else "nvidia_a100_pcie_40gb")
        return pick("nvidia_a100_sxm4_80gb" if mem80 else "nvidia_a100_sxm4_40gb")
    if w(r"v100"):
        if pcie:
            return pick("nvidia_v100_pcie_32gb" if (mem32 or "v100s" in s) else "nvidia_v100_pcie_16gb")
        return pick("nvidia_v100_sxm2_32gb" if (mem32 or "sxm3" in s) else "nvidia_v100_sxm2_16gb")
    if w(r"a5000"):
        return pick("nvidia_rtx_a5000")
    if w(r"l40s"):
        return pick("nvidia_l40s")
    if w(r"\bl40\b"):
        return pick("nvidia_l40")
    if w(r"\bl4\b"):
        return pick("nvidia_l4")
    if w(r"\ba40\b"):
        return pick("nvidia_a40")
    if w(r"\ba30\b"):
        return pick("nvidia_a30")
    if w(r"\ba10g?\b"):
        return pick("nvidia_a10")
    if w(r"mi325"):
        return pick("amd_mi325x")
    if w(r"mi300"):
        return pick("amd_mi300x")
    if w(r"mi250"):
        return pick("amd_mi250x")
    if w(r"gaudi\s*3"):
        return pick("intel_gaudi3")
    if w(r"gaudi\s*2"):
        return pick("intel_gaudi2")
    if w(r"tpu"):
        if w(r"v5p"):
            return pick("google_tpu_v5p")
        if w(r"v4"):
            return pick("google_tpu_v4")
        if w(r"v3"):
            return pick("google_tpu_v3")
    return None


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


_NET_RATE = {"xdr": 800, "ndr": 400, "hdr100": 100, "hdr": 200, "edr": 100, "fdr": 56,
             "omni-path": 100, "opa": 100}


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
    rdma_any = False
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
        rdma_any |= rdma
        total += count * rate / 8.0 * (1.0 if rdma else tcp_eff)
    return total if total > 0 else math.nan


_ACCEL_FW = re.compile(r"dali|mxnet|ngc|nvidia|mlperf|habana|synapse|poplar|mindspore|tpu|jax|tensorflow 1\.1[2-5]")


def _to_float(col) -> np.ndarray:
    def one(v):
        if isinstance(v, str):
            v = v.split(";")[0].strip()
        try:
            return float(v)
        except (TypeError, ValueError):
            return math.nan
    return np.array([one(v) for v in col], dtype=np.float64)


def _configs(table: pd.DataFrame, model: CalibratedModel, workload: Workload, *,
             accelerator_table=None, interconnect_table=None, host_cpu_table=None,
             use_table_epochs: bool = True):
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
    bw = {}
    for _, r in links_df.iterrows():
        v = pd.to_numeric(r["aggregate_GB_s_per_dir"], errors="coerce")
        eff = model.tcp_efficiency if str(r.get("rdma", "yes")).lower().startswith("no") else 1.0
        bw[str(r["link_id"])] = float(v) * eff if v == v else math.nan
    acc = acc.set_index("accelerator_id", drop=False)

    n_rows = len(table)
    if "accelerator_id" in table.columns:
        ids = [a if isinstance(a, str) and a in acc.index else normalize_accelerator(b, acc)
               for a, b in zip(table["accelerator_id"], table["accelerator"])]
    else:
        cache = {}
        ids = []
        for name in table["accelerator"]:
            key = str(name)
            if key not in cache:
                cache[key] = normalize_accelerator(name, acc)
            ids.append(cache[key])
    known = np.array([i is not None for i in ids])
    idx = [i if i is not None else acc.index[0] for i in ids]
    A = acc.loc[idx]
    peak = pd.to_numeric(A["bf16_dense_tflops"], errors="coerce").fillna(
        pd.to_numeric(A["fp16_dense_tflops"], errors="coerce")).to_numpy(float)
    mfu = np.array([model.mfu_for(f, g) for f, g in zip(A["family"].astype(str), A["generation"].astype(str))])
    n = _to_float(table["n_accelerators"])
    g = _to_float(table["accelerators_per_node"])
    m = _to_float(table["n_nodes"])
    g = np.where(np.isfinite(g) & (g > 0), g, n / np.where(m > 0, m, np.nan))
    m = np.where(np.isfinite(m) & (m > 0), m, n / g)

    # intra-node link: a link id, "pcie" text, or the accelerator's own link
    intra_default = np.array([bw.get(x, math.nan) for x in A["intra_link_id"].astype(str)])
    hi = A["host_interface"].astype(str).str.lower() if "host_interface" in A else pd.Series([""] * n_rows)
    pcie_bw = np.where(hi.str.contains("gen5").to_numpy(), bw.get("pcie_gen5_x16", 64.0),
                       np.where(hi.str.contains("gen3").to_numpy(), bw.get("pcie_gen3_x16", 16.0),
                                bw.get("pcie_gen4_x16", 32.0)))
    ic = table["interconnect"] if "interconnect" in table.columns else pd.Series([None] * n_rows)
    intra = []
    for text, d, p in zip(ic, intra_default, pcie_bw):
        if isinstance(text, str) and text in bw and bw[text] > 0:
            intra.append(bw[text])
        elif isinstance(text, str) and "pcie" in text.lower() and "nvlink" not in text.lower():
            intra.append(p)
        else:
            intra.append(d)
    intra = np.array(intra, dtype=float)

    net = table["network"] if "network" in table.columns else pd.Series([None] * n_rows)
    inter = np.array([_network_GBps(t, bw, model.tcp_efficiency) for t in net], dtype=float)
    inter = np.where(np.isfinite(inter) & (inter > 0), inter, 50.0)  # unknown: 4x100G RDMA

    cores = (_to_float(table["cpu_cores_per_accelerator"]) if "cpu_cores_per_accelerator" in table.columns
             else np.full(n_rows, np.nan))
    cores = np.where(cores > 0, cores, np.nan)
    fmap = _cpu_factor_map(cpus)
    hc = table["host_cpu"] if "host_cpu" in table.columns else pd.Series([None] * n_rows)
    cpu_factor = np.array([_cpu_factor(h, fmap) for h in hc])

    if "input_pipeline" in table.columns:
        dali = table["input_pipeline"].astype(str).str.lower().str.contains("dali").to_numpy()
    elif "framework" in table.columns:
        dali = np.array([bool(_ACCEL_FW.search(str(f).lower())) for f in table["framework"]])
    else:
        dali = np.zeros(n_rows, bool)
    # Gaudi2/Gaudi3 decode JPEGs on the accelerator's media engine whatever the framework says
    dali = dali | (A["vendor"].astype(str).str.lower() == "intel").to_numpy()

    gb = _to_float(table["global_batch_size"]) if "global_batch_size" in table.columns else np.full(n_rows, np.nan)
    max_b = workload.max_local_batch(pd.to_numeric(A["mem_gb"], errors="coerce").to_numpy(float))
    max_b = np.where(np.isfinite(max_b) & (max_b > 0), max_b, 256.0)
    b = gb / n
    b = np.where(np.isfinite(b) & (b > 0), b, np.minimum(256.0, max_b))
    gb = np.where(np.isfinite(gb) & (gb > 0), gb, b * n)
    curve = workload.epochs(gb)
    ep = _to_float(table["epochs"]) if ("epochs" in table.columns and use_table_epochs) else np.full(n_rows, np.nan)
    epochs = np.where(np.isfinite(ep) & (ep > 0), ep, curve)

    note = np.where(known, "", "accelerator not in catalog")
    note = np.where(known & ~(n > 0), "n_accelerators missing or not > 0", note)
    note = np.where(known & (n > 0) & (b > max_b), "batch per accelerator beyond memory", note)
    cfg = {
        "peak_tflops": peak, "mfu": mfu, "n_accelerators": n, "accelerators_per_node": g,
        "n_nodes": m, "local_batch": b, "intra_GBps": intra, "inter_GBps": inter,
        "cpu_cores_per_accelerator": cores, "cpu_decode_factor": cpu_factor, "dali": dali,
    }
    price = (_to_float(table["price_per_accelerator_hour"]) if "price_per_accelerator_hour" in table.columns
             else np.full(n_rows, np.nan))
    extra = {
        "accelerator_id": np.array([i if i is not None else None for i in ids], dtype=object),
        "family": np.where(known, A["family"].astype(str).to_numpy(), None),
        "tdp": pd.to_numeric(A["tdp_w"], errors="coerce").to_numpy(float),
        "epochs": epochs, "curve_epochs": curve, "global_batch": gb, "price": price,
        "valid": known & (n > 0) & np.isfinite(peak),
    }
    return cfg, extra, note


def _outputs(cfg, extra, model, workload):
    out = evaluate(cfg, model, workload)
    n = cfg["n_accelerators"]
    thr = out["throughput"]
    train_s = extra["epochs"] * workload.dataset_size / thr + model.overhead_s
    util = out["utilization"]
    power = extra["tdp"] * (model.idle_power_frac + (1 - model.idle_power_frac) * util)
    return {
        "time_to_train_min": train_s / 60.0,
        "throughput": thr,
        "utilization": util,
        "cost_usd": n * extra["price"] * train_s / 3600.0,
        "energy_kwh": n * power * train_s / 3.6e6,
        "epochs": extra["epochs"],
        "power_w": power,
        "bottleneck": out["bottleneck"],
    }


def predict(table, model: CalibratedModel | None = None, *, workload: Workload | None = None,
            use_table_epochs: bool = True, accelerator_table=None, interconnect_table=None,
            host_cpu_table=None) -> pd.DataFrame:
    """Predict ``PREDICTED`` for every row of a canonical table.

    Returns a copy of the table with ``predicted_time_to_train_min``, ``predicted_throughput``,
    ``predicted_utilization``, ``predicted_cost_usd`` (NaN without
    ``price_per_accelerator_hour``), ``predicted_energy_kwh`` (accelerators only),
    ``predicted_epochs``, ``predicted_bottleneck``, plus ``accelerator_id`` (resolved) and
    ``prediction_note`` (why a row has NaN predictions). The table's own columns are kept
    unchanged beside the predictions.

    ``use_table_epochs=True`` uses the table's ``epochs`` where present (the measured epochs
    to converge) and the workload's epochs-vs-batch curve elsewhere; ``False`` always uses
    the curve (a prediction before training).
    """
    if not isinstance(table, pd.DataFrame):
        raise UsageError(f"table: {type(table).__name__} is not allowed; pass a pandas DataFrame")
    model = DEFAULT_MODEL if model is None else model
    if not isinstance(model, CalibratedModel):
        raise UsageError(f"model: {type(model).__name__} is not allowed; pass a CalibratedModel or None")
    workload = resnet50() if workload is None else workload
    res = table.copy()
    if len(table) == 0:
        for c in PREDICTED + ("epochs",):
            res[f"predicted_{c}"] = pd.Series(dtype=float)
        return res
    cfg, extra, note = _configs(table, model, workload, accelerator_table=accelerator_table,
                                interconnect_table=interconnect_table,
                                host_cpu_table=host_cpu_table, use_table_epochs=use_table_epochs)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = _outputs(cfg, extra, model, workload)
    valid = extra["valid"]
    if "accelerator_id" not in res.columns:
        res["accelerator_id"] = extra["accelerator_id"]
    for c in PREDICTED + ("epochs",):
        res[f"predicted_{c}"] = np.where(valid, out[c], np.nan)
    bn = np.array(["compute", "communication", "input"], dtype=object)[out["bottleneck"]]
    res["predicted_bottleneck"] = pd.Categorical(np.where(valid, bn, None),
                                                 categories=["compute", "communication", "input"])
    res["prediction_note"] = note
    return res


def fit_errors(pred: pd.DataFrame, *, by: str = "family", column: str = "time_to_train_min") -> pd.DataFrame:
    """Absolute percentage error of ``predicted_<column>`` vs ``<column>``: n, median, p90
    per group (``family`` is looked up from the catalog when absent) and overall."""
    df = pred.copy()
    if by == "family" and "family" not in df.columns:
        fam = _cat.accelerator_catalog().set_index("accelerator_id")["family"]
        df["family"] = df["accelerator_id"].map(fam)
    ape = (df[f"predicted_{column}"] - pd.to_numeric(df[column], errors="coerce")).abs() / pd.to_numeric(df[column], errors="coerce") * 100
    df = df.assign(_ape=ape)[ape.notna()]
    rows = [{"group": str(k), "n": len(v), "median_ape": float(v["_ape"].median()),
             "p90_ape": float(v["_ape"].quantile(0.9))} for k, v in df.groupby(by, observed=True)]
    rows.append({"group": "ALL", "n": len(df), "median_ape": float(df["_ape"].median()) if len(df) else math.nan,
                 "p90_ape": float(df["_ape"].quantile(0.9)) if len(df) else math.nan})
    return pd.DataFrame(rows)


def calibrate(mlperf_table, *, train_rounds=None, test_rounds=None, base: CalibratedModel | None = None,
              workload: Workload | None = None, accelerator_table=None, interconnect_table=None,
              host_cpu_table=None) -> CalibratedModel:
    """Fit the model's free parameters to measured runs.

    Parameters
    ----------
    mlperf_table : DataFrame
        Canonical columns (see module docstring) with measured ``time_to_train_min``; rows
        without a finite time, with an unknown accelerator or n_accelerators <= 0 are skipped.
    train_rounds, test_rounds : list of str, optional
        Values of the ``round`` column to fit on and to report held-out errors on. By default
        every row is fitted and the report is in-sample.
    base : CalibratedModel, optional
        Starting values and the fixed (unfitted) parameters.

    Fitted: ``mfu_by_family`` (families with data), ``comm_efficiency``, ``overlap``,
    ``overhead_s``, ``batch_half``; then ``mfu_by_generation`` (median of the generation's
    families; Blackwell falls back to Hopper, Ada to Ampere) and ``mfu_default`` (median of
    all families). The report (``model.fit``) holds the errors per family.
    """
    from scipy.optimize import least_squares

    if not isinstance(mlperf_table, pd.DataFrame):
        raise UsageError(f"mlperf_table: {type(mlperf_table).__name__} is not allowed; pass a pandas DataFrame")
    missing = [c for c in REQUIRED_CALIBRATE_COLUMNS if c not in mlperf_table.columns]
    if missing:
        raise DataError(
            f"calibration table is missing column '{missing[0]}'; required columns are: "
            f"{', '.join(REQUIRED_CALIBRATE_COLUMNS)}"
        )
    base = DEFAULT_MODEL if base is None else base
    workload = resnet50() if workload is None else workload
    t = mlperf_table.reset_index(drop=True)
    if (train_rounds is not None or test_rounds is not None) and "round" not in t.columns:
        raise DataError("calibration table has no column 'round'; it is required with train_rounds/test_rounds")
    ttt = _to_float(t["time_to_train_min"])
    kw = dict(accelerator_table=accelerator_table, interconnect_table=interconnect_table,
              host_cpu_table=host_cpu_table)
    cfg, extra, note = _configs(t, base, workload, **kw)
    usable = extra["valid"] & np.isfinite(ttt) & (ttt > 0) & (note == "")
    # de-duplicate: repeated results (same accelerator, count and score) count once
    key = pd.DataFrame({"a": extra["accelerator_id"], "n": cfg["n_accelerators"], "t": np.round(ttt, 4)})
    usable &= ~key.duplicated().to_numpy()
    in_train = usable.copy()
    if train_rounds is not None:
        in_train &= t["round"].astype(str).isin([str(r) for r in train_rounds]).to_numpy()
    if not in_train.any():
        raise DataError(
            f"calibration table has no usable rows (of {len(t)}) in train_rounds={train_rounds!r}; rows need "
            "a known accelerator, n_accelerators > 0 and a time_to_train_min > 0"
        )
    fams = sorted(set(extra["family"][in_train]))
    fam_idx = np.array([fams.index(f) if f in fams else -1 for f in extra["family"]])
    tr = np.flatnonzero(in_train)
    sub = {k: (np.asarray(v)[tr] if np.ndim(v) else v) for k, v in cfg.items()}
    sub_extra = {k: np.asarray(v)[tr] for k, v in extra.items()}
    fi = fam_idx[tr]
    y = np.log(ttt[tr])

    def unpack(theta):
        mf = np.exp(theta[: len(fams)])
        ce, ov = 1 / (1 + np.exp(-theta[len(fams)])), 1 / (1 + np.exp(-theta[len(fams) + 1]))
        oh, bh = np.exp(theta[len(fams) + 2]), np.exp(theta[len(fams) + 3])
        return mf, ce, ov, oh, bh

    def resid(theta):
        mf, ce, ov, oh, bh = unpack(theta)
        mdl = replace(base, comm_efficiency=float(min(ce, 1.0)), overlap=float(min(ov, 0.999)),
                      overhead_s=float(oh), batch_half=float(bh))
        c = dict(sub, mfu=mf[fi])
        o = _outputs(c, sub_extra, mdl, workload)
        return np.log(o["time_to_train_min"]) - y

    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    # start each family at the MFU its measured runs imply when compute-bound (the fit can
    # otherwise overshoot into the input-bound region, where MFU has no gradient)
    thr_meas = extra["epochs"][tr] * workload.dataset_size / np.maximum(ttt[tr] * 60.0 - base.overhead_s, 1.0)
    b_tr = sub["local_batch"]
    implied = (thr_meas * workload.flops_per_sample
               / (sub["n_accelerators"] * sub["peak_tflops"] * 1e12 * b_tr / (b_tr + base.batch_half)))
    mfu0 = [float(np.clip(np.median(implied[fi == j]), 0.02, 0.95)) for j in range(len(fams))]
    x0 = np.concatenate([np.log(mfu0),
                         [logit(min(max(base.comm_efficiency, 0.05), 0.95)),
                          logit(min(max(base.overlap, 0.05), 0.95)),
                          math.log(max(base.overhead_s, 1.0)), math.log(max(base.batch_half, 1.0))]])
    lo = np.concatenate([np.full(len(fams), math.log(0.01)), [-4, -4, math.log(0.5), math.log(0.5)]])
    hi = np.concatenate([np.full(len(fams), math.log(1.0)), [6, 6, math.log(600), math.log(256)]])
    sol = least_squares(resid, np.clip(x0, lo, hi), bounds=(lo, hi), loss="soft_l1", f_scale=0.1)
    mf, ce, ov, oh, bh = unpack(sol.x)
    by_fam = {f: round(float(v), 6) for f, v in zip(fams, mf)}
    acc = _cat.accelerator_catalog(accelerator_table)
    gen_of_id = dict(zip(acc["accelerator_id"].astype(str), acc["generation"].astype(str)))
    by_gen: dict = {}
    for i in tr:
        aid = extra["accelerator_id"][i]
        by_gen.setdefault(gen_of_id[aid], set()).add(extra["family"][i])
    by_gen = {k: float(np.median([by_fam[f] for f in v])) for k, v in by_gen.items()}
    for new, old in GENERATION_FALLBACK:
        if new not in by_gen and old in by_gen:
            by_gen[new] = by_gen[old]
    model = replace(base, mfu_by_family=by_fam, mfu_by_generation={k: round(v, 6) for k, v in by_gen.items()},
                    mfu_default=round(float(np.median(list(by_fam.values()))), 6),
                    comm_efficiency=round(float(min(ce, 1.0)), 6), overlap=round(float(min(ov, 0.999)), 6),
                    overhead_s=round(float(oh), 4), batch_half=round(float(bh), 4), workload=workload.name)

    # report
    pred = predict(t[usable], model, workload=workload, **kw)
    report = {"n_rows": int(len(t)), "n_usable": int(usable.sum()), "n_train": int(in_train.sum()),
              "train_rounds": None if train_rounds is None else [str(r) for r in train_rounds],
              "test_rounds": None if test_rounds is None else [str(r) for r in test_rounds],
              "cost": float(sol.cost), "success": bool(sol.success)}
    trmask = in_train[usable]
    report["train_errors"] = fit_errors(pred[trmask]).to_dict(orient="records")
    if test_rounds is not None:
        te = pred["round"].astype(str).isin([str(r) for r in test_rounds]).to_numpy()
        report["n_test"] = int(te.sum())
        report["test_errors"] = fit_errors(pred[te]).to_dict(orient="records")
        report["test_errors_nvidia"] = fit_errors(pred[te & pred["accelerator_id"].astype(str).str.startswith("nvidia").to_numpy()]).to_dict(orient="records")[-1]
    return replace(model, fit=report)


# --------------------------------------------------------------------------------------
# CLI helpers
# --------------------------------------------------------------------------------------
def _write_table(df: pd.DataFrame, path, *, overwrite=False) -> Path:
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with publish_file(p, name="--output", overwrite=overwrite) as pub:
            df.to_csv(pub.path, index=False)
        return p
    return write_table(df, p, metadata={"predicted": True}, overwrite=overwrite,
                       name="--output")


def run_calibrate_cli(table_path, output, *, train_rounds=None, test_rounds=None,
                      overwrite=False) -> CalibratedModel:
    """CLI entry: ``gpurank calibrate MLPERF_TABLE -o model.json``."""
    check_target(output, name="--output", overwrite=overwrite)
    model = calibrate(read_table(table_path), train_rounds=train_rounds, test_rounds=test_rounds)
    model.to_json(output, overwrite=overwrite)
    return model


def run_predict_cli(table_path, model_path, output, *, use_table_epochs=True,
                    overwrite=False) -> pd.DataFrame:
    """CLI entry: ``gpurank predict TABLE --model model.json -o predicted.parquet``."""
    check_target(output, name="--output", overwrite=overwrite)
    model = CalibratedModel.from_json(model_path) if model_path is not None else None
    res = predict(read_table(table_path), model, use_table_epochs=use_table_epochs)
    _write_table(res, output, overwrite=overwrite)
    return res
