"""A table of configurations as the performance model's inputs, with what each row rests on.

:func:`model_inputs` turns a canonical table (``accelerator, n_accelerators, n_nodes,
accelerators_per_node, host_cpu, cpu_cores_per_accelerator, interconnect, network,
framework, global_batch_size, ...``) into the arrays :func:`~.perfmodel.evaluate` reads,
and says per row what it could not take from the table:

* a row that cannot be trained is **refused** (no prediction) with its reason: an
  accelerator the catalog does not model, no accelerator count, a topology whose nodes times
  accelerators per node is not its accelerator count, a global batch under one sample per
  data-parallel replica, a model state that leaves no memory for a sample;
* every input the model **assumed** is named with the value used: a global batch the table
  does not give, a node shape, a network, an intra-node link, the host's CPU cores.

Hardware facts come from the catalog under the table's own per-row columns
(:mod:`.hardware`); the peak is the one of the workload's training precision.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...errors import DataError
from ...formatting import number
from ..facts import catalog as _cat
from ..facts.accelerators import resolve_accelerator
from ..facts.benchmarks import benchmarks_of
from ..facts.formats import assumed_format_note, format_name, stated_formats
from ..facts.hardware import ELEMENT_BYTES, hardware_facts
from ..facts.network_text import LINKS_PER_ACCELERATOR_ASSUMED, node_network
from ..facts.power import family_watts_per_tflops, power_gain, power_headroom, power_note
from .lenders import power_reference
from .batch_choice import batch_candidates, chosen_note, fastest_batches, smallest_batches
from .model_arrays import ConfigArrays, RowFacts
from .domain import catalog_with_row_specs, domain_reasons, largest_node, without_outside
from .perfmodel import HOST_COPY_EFFICIENCY, CalibratedModel, Workload
from .software import with_software_gain
from .workloads import round_samples_curve

__all__ = [
    "REQUIRED_PREDICT_COLUMNS",
    "ModelInputs",
    "RowNotes",
    "model_inputs",
    "to_float",
    "safe_div",
    "UNKNOWN_NETWORK_GBPS",
]

REQUIRED_PREDICT_COLUMNS = ("accelerator", "n_accelerators", "n_nodes", "accelerators_per_node")
#: Node bandwidth per direction (GB/s) assumed for a multi-node row whose network the table
#: does not name or the reader cannot place: 4 x 100 Gb/s RDMA, the most common MLPerf fabric
#: of the A100 era and below any H100-era one (an assumption the row's note names).
UNKNOWN_NETWORK_GBPS = 50.0
#: The per-replica batch assumed for a row without ``global_batch_size``: the largest that
#: fits its memory, at most this (the note gives the value used).
DEFAULT_LOCAL_BATCH = 256.0

_NOTE_UNKNOWN = "accelerator not in catalog"
_NOTE_UNPLACED = "accelerator name does not identify one catalog product"
_NOTE_UNMODELLED = "accelerator has no peak or memory bandwidth in the catalog"


class RowNotes:
    """Per-row notes: refusals (no prediction) and assumptions, in the order found."""

    def __init__(self, n: int):
        self.refused = np.zeros(n, dtype=bool)
        self._notes: list[list[str]] = [[] for _ in range(n)]
        self._reasons: list[str] = [""] * n

    def refuse(self, mask, text) -> None:
        """Refuse the rows of ``mask`` (not refused yet) for ``text`` (a string or one per
        row): the first reason found is the one a row gives."""
        mask = np.asarray(mask, dtype=bool) & ~self.refused
        for i in np.flatnonzero(mask):
            self._reasons[i] = text if isinstance(text, str) else text[i]
        self.refused |= mask

    def add(self, mask, text) -> None:
        """Note ``text`` on the rows of ``mask`` that still get a prediction."""
        for i in np.flatnonzero(np.asarray(mask, dtype=bool) & ~self.refused):
            t = text if isinstance(text, str) else text[i]
            if t and t not in self._notes[i]:
                self._notes[i].append(t)

    def text(self) -> np.ndarray:
        """One string per row: a refused row's reason, else its notes joined with ``"; "``
        (``""`` for none)."""
        return np.array([r if ref else "; ".join(x) for r, ref, x in
                         zip(self._reasons, self.refused, self._notes)], dtype=object)


@dataclass(frozen=True)
class ModelInputs:
    """What :func:`model_inputs` returns.

    Attributes
    ----------
    cfg : ConfigArrays
        The arrays :func:`~.perfmodel.evaluate` reads.
    facts : RowFacts
        Per-row facts the outputs need (samples, power, price, family, basis, validity).
    notes : RowNotes
    """

    cfg: ConfigArrays
    facts: RowFacts
    notes: RowNotes


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


_ACCEL_FW = re.compile(
    r"dali|mxnet|ngc|nvidia|mlperf|habana|synapse|poplar|mindspore|tpu|jax|tensorflow 1\.1[2-5]"
)


def to_float(col) -> np.ndarray:
    """Values as float64, NaN for anything that is not a finite number (the first of
    ``;``-joined values)."""
    def one(v):
        if isinstance(v, str):
            v = v.split(";")[0].strip()
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            return math.nan
        return f if math.isfinite(f) else math.nan

    return np.array([one(v) for v in col], dtype=np.float64)


def safe_div(a, b) -> np.ndarray:
    """a / b where both are finite and b != 0, NaN elsewhere (no floating-point warning)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
    return np.divide(a, b, out=np.full(a.shape, np.nan), where=ok)


def _present(table: pd.DataFrame, name: str) -> np.ndarray:
    """Rows where the column holds a non-empty value."""
    if name not in table.columns:
        return np.zeros(len(table), dtype=bool)
    col = table[name]
    return (col.notna() & (col.astype(str).str.strip() != "")).to_numpy()


# --------------------------------------------------------------------------------------
# table -> model inputs
# --------------------------------------------------------------------------------------
def _resolve_rows(table: pd.DataFrame, acc: pd.DataFrame):
    """(accelerator_id or None, reason it is not modelled, what placing it assumed) per row,
    through the one resolver."""
    given = table["accelerator_id"] if "accelerator_id" in table.columns else [None] * len(table)
    ids, notes, assumed = [], [], []
    cache: dict = {}
    known_ids = set(acc["accelerator_id"].astype(str))
    for aid, name in zip(given, table["accelerator"]):
        key = (aid if isinstance(aid, str) and aid in known_ids else None, str(name))
        if key not in cache:
            r = resolve_accelerator(key[0] if key[0] is not None else name, catalog=acc)
            if r.match in ("exact", "stand-in") and r.modelled:
                cache[key] = (r.accelerator_id, "", r.assumed)
            elif r.match in ("exact", "stand-in"):
                cache[key] = (r.accelerator_id, _NOTE_UNMODELLED, r.assumed)
            elif r.match == "unplaced":
                cache[key] = (None, f"{_NOTE_UNPLACED} ({r.note})" if r.note else _NOTE_UNPLACED,
                              "")
            else:
                cache[key] = (None, _NOTE_UNKNOWN, "")
        i, note, assumption = cache[key]
        ids.append(i)
        notes.append(note)
        assumed.append(assumption)
    return ids, np.array(notes, dtype=object), np.array(assumed, dtype=object)


def _float_column(table: pd.DataFrame, name: str, use: bool = True) -> np.ndarray:
    """The column as floats, or NaN everywhere when the table lacks it (or ``use`` is off)."""
    if name in table.columns and use:
        return to_float(table[name])
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


@dataclass(frozen=True)
class _Shape:
    """Accelerators, accelerators per node and nodes per row."""

    n: np.ndarray
    g: np.ndarray
    m: np.ndarray


def _node_shape(table: pd.DataFrame, max_per_node, notes: RowNotes) -> _Shape:
    """Accelerators, accelerators per node and nodes, each completed from the other two;
    rows without a count, or whose nodes x per node is not their count, are refused; a row
    that gives neither nodes nor per node is assumed on as few nodes as its chassis allows."""
    n = to_float(table["n_accelerators"])
    g = to_float(table["accelerators_per_node"])
    m = to_float(table["n_nodes"])
    notes.refuse(~(n > 0), "n_accelerators missing or not > 0")
    both = (g > 0) & (m > 0)
    wrong = (n > 0) & both & (np.abs(g * m - n) > 1e-9 * np.maximum(n, 1.0))
    notes.refuse(wrong, np.array([
        f"inconsistent topology: n_nodes {_num(mm)} x accelerators_per_node {_num(gg)} = "
        f"{_num(gg * mm)}, not n_accelerators {_num(nn)}" if w else ""
        for w, nn, gg, mm in zip(wrong, n, g, m)], dtype=object))
    g = np.where(g > 0, g, safe_div(n, np.where(m > 0, m, np.nan)))
    m = np.where(m > 0, m, safe_div(n, np.where(g > 0, g, np.nan)))
    neither = (n > 0) & ~(g > 0) & ~(m > 0)
    cap = np.where(np.asarray(max_per_node, float) > 0, max_per_node, 8.0)
    g_as = np.where(neither, np.minimum(n, cap), g)
    # the largest divisor of n not above the chassis limit keeps nodes whole
    g_as = np.array([_largest_divisor(nn, gg) if a else gg
                     for a, nn, gg in zip(neither, n, g_as)], dtype=float)
    m_as = np.where(neither, safe_div(n, g_as), m)
    notes.add(neither, np.array([
        f"node shape assumed: {_num(mm)} node(s) of {_num(gg)}" if a else ""
        for a, gg, mm in zip(neither, g_as, m_as)], dtype=object))
    return _Shape(n, g_as, m_as)


def _largest_divisor(n: float, cap: float) -> float:
    if not (n > 0 and cap > 0) or n != int(n):
        return cap
    for d in range(int(min(n, cap)), 0, -1):
        if int(n) % d == 0:
            return float(d)
    return 1.0


def _num(v) -> str:
    """A count or size as people write it (no trailing zeros)."""
    return number(v, 3, trim=True)


@dataclass(frozen=True)
class _Links:
    """Per row: the intra-node GB/s, the host link's GB/s, whether the accelerator's own link
    is a pod fabric that spans nodes, and the network's GB/s per node."""

    intra: np.ndarray
    pcie_bw: np.ndarray
    spanning: np.ndarray
    inter: np.ndarray


def _pcie_bw(A: pd.DataFrame, bw: dict) -> np.ndarray:
    hi = (A["host_interface"].astype(str).str.lower() if "host_interface" in A
          else pd.Series([""] * len(A)))
    return np.where(
        hi.str.contains("gen5").to_numpy(), bw.get("pcie_gen5_x16", 64.0),
        np.where(hi.str.contains("gen3").to_numpy(), bw.get("pcie_gen3_x16", 16.0),
                 bw.get("pcie_gen4_x16", 32.0)))


def _links(table, A, bw: dict, spans: set, model, shape: _Shape, notes: RowNotes) -> _Links:
    """The intra-node link of each row (a link id, "pcie" text, or the accelerator's own) and
    each node's network bandwidth (from its text, or a pod fabric)."""
    n_rows = len(table)
    link_ids = A["intra_link_id"].astype(str).to_numpy()
    intra_default = np.array([bw.get(x, math.nan) for x in link_ids])
    pcie_bw = _pcie_bw(A, bw)
    ic = table["interconnect"] if "interconnect" in table.columns else pd.Series([None] * n_rows)
    spanning = np.array([x in spans for x in link_ids])
    # a PCIe card's NVLink bridge joins its group (a pair, or four H200 NVL): where the text
    # names it and the group holds the node, the bridge is the node's link
    bridge_bw, group = _float_column(A, "scaleup_bw_GBps"), _float_column(A, "scaleup_domain")
    bridged = (np.char.startswith(link_ids.astype(str), "pcie")
               & np.array([isinstance(t, str) and "nvlink" in t.lower() for t in ic])
               & (bridge_bw > 0))
    covers = bridged & (group >= shape.g)
    intra = []
    for text, d, p, sp, c, b in zip(ic, intra_default, pcie_bw, spanning, covers, bridge_bw):
        if sp:
            intra.append(d)  # a pod fabric (TPU ICI) is what the chips use, whatever the text
        elif isinstance(text, str) and text in bw and bw[text] > 0:
            intra.append(bw[text])
        elif c:
            intra.append(b)
        elif isinstance(text, str) and "pcie" in text.lower() and "nvlink" not in text.lower():
            intra.append(p)
        else:
            intra.append(d)
    intra = np.array(intra, dtype=float)
    multi = shape.g > 1
    notes.add(bridged & ~covers & multi & ~spanning, np.array([
        f"intra-node link: the NVLink bridge joins {_num(k)} of the node's {_num(g)} "
        f"accelerators, so the all-reduce crosses PCIe ({v:g} GB/s per direction)"
        for k, g, v in zip(group, shape.g, intra)], dtype=object))
    notes.add(multi & ~spanning & ~_present(table, "interconnect"), np.array([
        f"intra-node link assumed: {lid} ({v:g} GB/s per direction)" if v == v else ""
        for lid, v in zip(link_ids, intra)], dtype=object))

    net = table["network"] if "network" in table.columns else pd.Series([None] * n_rows)
    stated = [node_network(t, bw, model.tcp_efficiency) for t in net]
    links_per_node = shape.g * LINKS_PER_ACCELERATOR_ASSUMED
    inter = np.array([s.per_node(k) for s, k in zip(stated, links_per_node)], dtype=float)
    multi_node = (shape.m > 1) & ~spanning
    uncounted = np.array([s.uncounted_GBps > 0 for s in stated]) & multi_node & (shape.g > 1)
    notes.add(uncounted, np.array([
        f"network: {_num(s.link_gbps)} Gb/s links with no count given, one per accelerator "
        f"assumed ({_num(k)} x {_num(s.link_gbps)} Gb/s)" if u else ""
        for s, k, u in zip(stated, links_per_node, uncounted)], dtype=object))
    unknown = ~(inter > 0) & multi_node
    notes.add(unknown, (f"network assumed: {UNKNOWN_NETWORK_GBPS:g} GB/s per node "
                        "(4 x 100 Gb/s RDMA)"))
    inter = np.where(inter > 0, inter, UNKNOWN_NETWORK_GBPS)
    # chips of a pod fabric reach other hosts' chips over the same links: a node's share of
    # the fabric is its chips' links, not the host network
    inter = np.where(spanning, intra * np.where(shape.g > 0, shape.g, 1.0), inter)
    return _Links(intra, pcie_bw, spanning, inter)


def _note_power(notes, rows, headroom, exponent: float, tdp, wide, reference) -> None:
    """Name the power headroom of the rows it moves by more than a few percent (one note
    per distinct part: a table repeats few)."""
    if exponent <= 0:
        return
    label = np.array([str(r) for r in reference], dtype=object)
    keys = pd.DataFrame({"h": headroom, "t": tdp, "w": wide, "r": label})[rows]
    for (h, t, w, r), _ in keys.groupby(["h", "t", "w", "r"]):
        pick = rows & (headroom == h) & (tdp == t) & (wide == w) & (label == r)
        text = power_note(h, exponent, t, w, reference[np.flatnonzero(pick)[0]])
        if text:
            notes.add(pick, text)


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
    """Per row: the local (per replica) and global batch, the largest local batch memory
    holds, the data-parallel replicas and the accelerators each replica spans."""

    local: np.ndarray
    global_: np.ndarray
    max_local: np.ndarray
    replicas: np.ndarray
    shards: np.ndarray


def _batches(table: pd.DataFrame, mem_gb, workload: Workload, n, notes: RowNotes) -> _Batches:
    """Local and global batch of each row; a row without a global batch gets the largest
    local batch memory holds (at most ``DEFAULT_LOCAL_BATCH``), and says so.

    A row whose global batch is under one sample per replica runs each sample split over
    more accelerators (``n / global_batch``) where the workload's samples split that far
    (``Workload.max_model_parallel``), and says so; otherwise, or where the model state
    leaves no memory for a sample, it is refused."""
    gb = _float_column(table, "global_batch_size")
    n1 = np.where(n > 0, n, 1.0)
    given = gb > 0
    # a replica of a model-parallel workload spans `shards` accelerators; b is its batch
    shards = np.broadcast_to(np.asarray(workload.shards(n1), dtype=float), n1.shape)
    need = np.ceil(safe_div(n1, np.where(given, gb, np.nan)))
    split = given & (n > 0) & (need > shards) & (need <= workload.sample_split)
    split &= need <= n1
    shards = np.where(split, need, shards)
    notes.add(split, np.array([
        f"model parallel assumed: each sample split over {_num(s)} accelerators (tensor x "
        f"context parallel), as a global batch of {_num(g)} gives under one sample per "
        + ("accelerator" if workload.model_parallel == 1 else
           f"replica of {workload.model_parallel} accelerators") if f else ""
        for f, s, g in zip(split, shards, gb)], dtype=object))
    mem = np.nan_to_num(np.asarray(mem_gb, dtype=float), nan=0.0)
    max_b = workload.max_local_batch(mem, shards=shards, n=n1)
    no_room = (max_b < 1) & np.isfinite(np.asarray(mem_gb, dtype=float))
    notes.refuse(no_room & (n > 0), "model state leaves no memory for a sample")
    max_b = np.where(max_b > 0, max_b, DEFAULT_LOCAL_BATCH)
    replicas = safe_div(np.where(n > 0, n, np.nan), shards)
    b = safe_div(gb, replicas)
    few = given & (b < 1 - 1e-9)
    most = workload.sample_split
    notes.refuse(few, np.array([
        f"global batch {_num(g)} is under one sample per data-parallel replica "
        f"({_num(r)} replicas of {_num(s)} accelerator(s)"
        + (f"; a sample of {workload.name} splits over at most {most}" if most > 1 else "")
        + ")" if f else ""
        for f, g, r, s in zip(few, gb, replicas, shards)], dtype=object))
    b_as = np.minimum(DEFAULT_LOCAL_BATCH, max_b)
    b = np.where(given, b, b_as)
    gb = np.where(given, gb, b * replicas)
    notes.add(~given & (n > 0), np.array([
        f"global_batch_size assumed: {_num(g)} ({_num(bb)} per replica, the most that fits "
        f"up to {DEFAULT_LOCAL_BATCH:g})" if np.isfinite(g) else ""
        for g, bb in zip(gb, b)], dtype=object))
    return _Batches(b, gb, max_b, replicas, shards)


def _chosen_batches(table: pd.DataFrame, hw_cfg: ConfigArrays, model: CalibratedModel,
                    workload: Workload, notes: RowNotes) -> pd.DataFrame:
    """The table with the batch a submitter would pick (:mod:`.batch_choice`) in each
    trainable row that gives no ``global_batch_size``, noted; the table itself when every row
    gives one. A row without a candidate within the reference convergence points takes the
    smallest that fits memory beyond them; one without any keeps none (``_batches`` assumes
    the most that fits, and says so)."""
    gb = _float_column(table, "global_batch_size")
    n = np.asarray(hw_cfg.n_accelerators, dtype=float)
    todo = ~(gb > 0) & (n > 0) & ~notes.refused
    if not todo.any():
        return table
    rows = np.flatnonzero(todo)
    sub = hw_cfg.take(rows)
    choice = fastest_batches(sub, model, workload,
                             batch_candidates(workload, sub.n_accelerators, sub.mem_gb))
    pick, texts = choice.global_.copy(), chosen_note(choice)
    miss = ~np.isfinite(pick)
    if miss.any():
        # none within the reference points: the smallest that fits, the least extrapolated
        more = smallest_batches(batch_candidates(workload, sub.n_accelerators, sub.mem_gb,
                                                 within_reference=False))
        pick[miss], texts[miss] = more.global_[miss], chosen_note(more, False)[miss]
    full = np.full(len(table), "", dtype=object)
    full[rows] = texts
    notes.add(todo, full)
    gb = gb.copy()
    gb[rows] = np.where(np.isfinite(pick), pick, np.nan)
    return table.assign(global_batch_size=gb)


def _training_length(table: pd.DataFrame, workload: Workload, gb, use_table_epochs: bool,
                     round_=None):
    """Epochs, samples, the reference curve's epochs to converge, and whether the row's own
    convergence was measured, per row."""
    ep = _float_column(table, "epochs", use_table_epochs)
    if workload.samples_curve:
        # samples to converge: measured where the table has them, else epochs x data set,
        # else the reference convergence points (of the row's round when it names one: the
        # rules its submission converged under)
        curve_s = workload.samples(gb)
        if "round" in table.columns:
            rounds = table["round"].to_numpy(dtype=object)
            for r in {x for x in rounds if isinstance(x, str)}:
                pts = round_samples_curve(workload, r)
                if pts and pts != workload.samples_curve:
                    rows = rounds == r
                    curve_s = np.where(rows, replace(workload, samples_curve=pts).samples(gb),
                                       curve_s)
        meas = _float_column(table, "samples_to_converge", use_table_epochs)
        if workload.dataset_size:
            meas = np.where(meas > 0, meas, ep * float(workload.dataset_size))
        samples = np.where(meas > 0, meas, curve_s)
        ds = float(workload.dataset_size) if workload.dataset_size else math.nan
        epochs = samples / ds
        curve = curve_s / ds
        measured = meas > 0
    else:
        curve = workload.epochs(gb)
        epochs = np.where(ep > 0, ep, curve)
        samples = epochs * workload.dataset_size
        measured = ep > 0
    return epochs, samples, curve, measured


def _stated_precisions(table: pd.DataFrame, A: pd.DataFrame, workload: Workload):
    """The training format of each row that does not name its own: what its round's
    submissions stated (``training_formats.csv``), else the workload's; and for each row
    whose format a rule stated, the rule (``""`` elsewhere)."""
    n = len(table)
    given = (np.array([format_name(v) is not None for v in table["precision"]], dtype=bool)
             if "precision" in table.columns else np.zeros(n, dtype=bool))

    def column(name):
        return table[name].to_numpy(dtype=object) if name in table.columns else [None] * n

    fmt, why = stated_formats(column("round"), column("submitter"),
                              A["vendor"].to_numpy(dtype=object), benchmarks_of(workload.name),
                              default=workload.precision)
    # a format narrower than bf16 is a choice of the software, not the benchmark's: a row
    # that takes the workload's says so
    if ELEMENT_BYTES.get(workload.precision, 1.0) < ELEMENT_BYTES["bf16"]:
        why = np.where(why == "", f"the format {workload.name} trains in (workloads.csv)", why)
    return fmt, np.where(given, "", why)


def _check_columns(table: pd.DataFrame) -> None:
    missing = [c for c in REQUIRED_PREDICT_COLUMNS if c not in table.columns]
    if missing:
        raise DataError(
            f"table is missing column '{missing[0]}'; required columns are: "
            f"{', '.join(REQUIRED_PREDICT_COLUMNS)}"
        )


def model_inputs(
    table: pd.DataFrame,
    model: CalibratedModel,
    workload: Workload,
    *,
    accelerator_table=None,
    interconnect_table=None,
    host_cpu_table=None,
    use_table_epochs: bool = True,
) -> ModelInputs:
    """Turn a canonical table into model inputs, with every refusal and assumption noted."""
    _check_columns(table)
    # an accelerator the catalog lacks is modelled from the row's own facts when complete
    acc = catalog_with_row_specs(table, _cat.accelerator_catalog(accelerator_table))
    links_df = _cat.interconnect_catalog(interconnect_table)
    cpus = _cat.host_cpu_catalog(host_cpu_table)
    bw, spans = _link_bandwidths(links_df, model)
    notes = RowNotes(len(table))

    ids, unmodelled, placed_by = _resolve_rows(table, acc)
    acc = acc.set_index("accelerator_id", drop=False)
    A = acc.loc[[i if i is not None else acc.index[0] for i in ids]]
    known = np.array([i is not None for i in ids], dtype=bool)
    # the row's domain first (domain.py): a value given wrong is refused, never replaced
    outside = domain_reasons(table, np.where(known, largest_node(A), np.inf), catalog_rows=A)
    notes.refuse(outside != "", outside)
    table = without_outside(table, outside)
    formats, stated = _stated_precisions(table, A, workload)
    hw = hardware_facts(table, A.reset_index(drop=True), formats)
    for why in sorted(set(stated[stated != ""])):
        for used in sorted(set(hw.precision[stated == why]) - {""}):
            rows = (stated == why) & (hw.precision == used)
            notes.add(rows, assumed_format_note(used, formats[rows][0], why))
    wide = np.where(np.isnan(hw.facts["bf16_dense_tflops"]), hw.facts["fp16_dense_tflops"],
                    hw.facts["bf16_dense_tflops"])
    peak, mem_bw = np.where(np.isnan(wide), hw.peak, wide), hw.facts["mem_bw_tbps"]
    # a row whose own columns give the facts is modelled whatever the catalog lacks
    modelled = known & (peak > 0) & (mem_bw > 0)
    notes.add(placed_by != "", placed_by)
    notes.refuse(~known, unmodelled)
    notes.refuse(known & ~modelled, np.where(unmodelled != "", unmodelled, _NOTE_UNMODELLED))
    notes.add(hw.precision_unread, np.array([f"precision not understood: {p} used"
                                             for p in hw.precision], dtype=object))

    fam = A["family"].astype(str).to_numpy()
    gen = A["generation"].astype(str).to_numpy()
    ven = A["vendor"].astype(str).to_numpy()
    keys = list(zip(fam, gen, ven))
    power = family_watts_per_tflops(acc)
    pairs = {k: model.compute_efficiency_for(k[0], k[1], vendor=k[2], power=power)
             for k in set(keys)}
    eff = np.array([pairs[k][0] for k in keys], dtype=float)
    rounds = table["round"].to_numpy(dtype=object) if "round" in table.columns else [None] * len(ven)
    gain = model.software_gain(ven, fam, rounds)
    refs = {k: power_reference(model, k[0], k[1], power) for k in pairs}
    reference = [refs[k] for k in keys]
    headroom = power_headroom(hw.facts["tdp_w"], peak, reference, acc)
    eff = with_software_gain(eff, gain + power_gain(headroom, model.power_exponent))
    basis = np.array([pairs[k][1] for k in keys], dtype=object)
    _note_power(notes, modelled, headroom, model.power_exponent, hw.facts["tdp_w"], peak,
                reference)

    max_node = pd.to_numeric(A["max_accels_per_node"], errors="coerce").to_numpy(float) \
        if "max_accels_per_node" in A.columns else np.full(len(A), 8.0)
    shape = _node_shape(table, max_node, notes)
    link = _links(table, A, bw, spans, model, shape, notes)
    cores, cpu_factor, dali = _host_inputs(table, A, cpus)
    if workload.decode_cost > 0:
        notes.add(~(cores > 0) & (shape.n > 0),
                  "host CPU cores unknown: input pipeline assumed not to limit")
    if workload.gathered_bytes_per_sample > 0:
        notes.add(~(np.asarray(hw.facts["mem_gb"], dtype=float) > 0) & (shape.n > 0),
                  f"accelerator memory unknown: the {_num(workload.feature_store_gb)} GB "
                  "feature store assumed in host memory")
    hw_cfg = ConfigArrays(
        peak_tflops=peak,
        narrow_peak_tflops=hw.peak,
        narrow_bytes=np.array([ELEMENT_BYTES.get(p, 1.0) for p in hw.precision], dtype=float),
        compute_efficiency=eff,
        mem_bw_tbps=mem_bw,
        n_accelerators=shape.n,
        accelerators_per_node=shape.g,
        n_nodes=shape.m,
        intra_GBps=link.intra,
        inter_GBps=link.inter,
        cpu_cores_per_accelerator=cores,
        cpu_decode_factor=cpu_factor,
        dali=dali,
        host_GBps=link.pcie_bw * HOST_COPY_EFFICIENCY,
        scaleup_domain=np.where(link.spanning, np.nan, hw.facts["scaleup_domain"]),
        scaleup_GBps=hw.facts["scaleup_bw_GBps"],
        mem_gb=hw.facts["mem_gb"],
    )
    batch_table = _chosen_batches(table, hw_cfg, model, workload, notes)
    bat = _batches(batch_table, hw.facts["mem_gb"], workload, shape.n, notes)
    epochs, samples, curve, measured = _training_length(table, workload, bat.global_,
                                                        use_table_epochs)

    micro = np.where(bat.local > bat.max_local, bat.max_local, bat.local)
    cfg = replace(hw_cfg, local_batch=bat.local, micro_batch=micro, model_parallel=bat.shards)
    facts = RowFacts(
        accelerator_id=np.array(ids, dtype=object),
        family=np.where(known, fam, None),
        vendor=np.where(known, ven, None),
        generation=np.where(known, gen, None),
        basis=np.where(modelled, basis, ""),
        precision=hw.precision,
        software_gain=gain,
        power_headroom=headroom,
        tdp=hw.facts["tdp_w"],
        epochs=epochs,
        samples=samples,
        curve_epochs=curve,
        measured_length=measured,
        global_batch=bat.global_,
        global_batch_given=_float_column(table, "global_batch_size") > 0,
        price=_float_column(table, "price_per_accelerator_hour"),
        valid=modelled & ~notes.refused,
        refused=notes.refused,
    )
    return ModelInputs(cfg, facts, notes)
