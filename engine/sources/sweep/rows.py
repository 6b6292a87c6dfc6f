"""The rows of a sweep, one logical chunk at a time: every draw (accelerator, layout, host,
network, batch), the model's outcome with noise, the impossible grid points excluded and
counted, the intervals and notes, and the chunk as a frame on the plan's categories.

Chunk ``k`` draws from ``Generator(Philox(SeedSequence(seed, spawn_key=(k,))))``, the same
number of values per stream whatever its row count, so a row depends only on the seed and
its position.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...errors import UsageError
from ...schema import SIMULATED_COLUMNS
from ..model.batch_choice import batch_candidates, fastest_batches, smallest_batches
from ..model.model_arrays import ConfigArrays
from ..model.perfmodel import Workload, evaluate, mixed_peak
from ..model.evaluation import extrapolation
from .plan import BATCH_OUT, CURVE_OUT, FW_DALI, FW_NVIDIA, FW_OTHER, SCALE_OUT, Plan

__all__ = ["UNIFORM_STREAMS", "NORMAL_STREAMS", "Streams", "draw_streams", "LOGICAL_CHUNK", "DEFAULT_COUNTS", "iter_chunks", "no_rows_error"]


LOGICAL_CHUNK = 1 << 16
#: Accelerator counts of the default grid: powers of two and common node multiples (x3 of 8).
DEFAULT_COUNTS = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
                  1536, 2048, 3072, 4096)
_PER_NODE_PREF = np.array([1, 2, 4, 8, 8, 8, 16], dtype=np.int64)
_P_TWO_SOCKETS = 0.75
_REASONS = ("accelerators_per_node_above_chassis_limit", "nodes_do_not_divide_accelerators",
            "batch_per_accelerator_beyond_memory")
#: reason of a model-parallel workload's sweep: a count that is not whole replicas
_SHARD_REASON = "accelerators_not_whole_model_replicas"
#: reason of a sweep of a workload whose reference points end below the replicas' batch
_CAP_REASON = "global_batch_above_reference_points"


#: The uniform streams of a chunk, in the order they are drawn: stream ``i`` is row ``i`` of
#: one ``random((10, L))`` call, so renaming them changes no draw. ``spare`` is drawn and
#: unused; it stays so that the normal streams after it draw the same values.
UNIFORM_STREAMS = ("accelerator", "offer", "count", "per_node", "host_cpu", "sockets",
                   "network", "framework", "batch", "spare")
#: The standard-normal streams, drawn after the uniforms (clipped to +-3).
NORMAL_STREAMS = ("throughput_noise", "epochs_noise")


@dataclass(frozen=True)
class Streams:
    """One chunk's random streams by name, each ``rows`` values: the uniforms of
    :data:`UNIFORM_STREAMS` and the normals of :data:`NORMAL_STREAMS`.

    ``per_node`` draws the preferred accelerators per node, or the node count when both
    counts and nodes are given.
    """

    accelerator: np.ndarray
    offer: np.ndarray
    count: np.ndarray
    per_node: np.ndarray
    host_cpu: np.ndarray
    sockets: np.ndarray
    network: np.ndarray
    framework: np.ndarray
    batch: np.ndarray
    spare: np.ndarray
    throughput_noise: np.ndarray
    epochs_noise: np.ndarray


def draw_streams(seed: int, k: int, rows: int) -> Streams:
    """The named streams of chunk ``k``: ``L`` values per stream whatever ``rows`` is (the
    first ``rows`` kept), so a row's values depend only on the seed and its position."""
    L = LOGICAL_CHUNK
    rng = np.random.Generator(np.random.Philox(np.random.SeedSequence(seed, spawn_key=(k,))))
    u = rng.random((len(UNIFORM_STREAMS), L))[:, :rows]
    z = np.clip(rng.standard_normal((len(NORMAL_STREAMS), L))[:, :rows], -3.0, 3.0)
    return Streams(**dict(zip(UNIFORM_STREAMS, u)), **dict(zip(NORMAL_STREAMS, z)))


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
    shards: np.ndarray | None = None  # accelerators per replica where the batch was chosen
    micro: np.ndarray | None = None  # the batch one pass runs, where the batch was chosen


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


def _draw_layout(plan: Plan, s: Streams, a, rows: int) -> _Layout:
    """Accelerator count and node count from the grid (the options fix either or both)."""
    maxpn = plan.acc["max_per_node"][a]
    pref = _pick(s.per_node, _PER_NODE_PREF)
    bad_chassis = np.zeros(rows, bool)
    bad_divide = np.zeros(rows, bool)
    if plan.nodes is None:
        counts = plan.counts if plan.counts is not None else np.array(DEFAULT_COUNTS, np.int64)
        n = _pick(s.count, counts)
        per_node = np.gcd(n, np.minimum(pref, maxpn))
        m = n // per_node
    elif plan.counts is None:
        m = _pick(s.count, plan.nodes)
        per_node = np.minimum(pref, maxpn)
        n = m * per_node
    else:
        n = _pick(s.count, plan.counts)
        m = _pick(s.per_node, plan.nodes)
        bad_divide = n % m != 0
        per_node = np.maximum(n // m, 1)
        bad_chassis = ~bad_divide & (per_node > maxpn)
    return _Layout(n, m, per_node, bad_chassis, bad_divide)


def _draw_host(plan: Plan, s: Streams, a, per_node) -> _Host:
    """Host CPU: an x86 model with 1 or 2 sockets, or the accelerator's own (the Grace of
    GH200/GB200, the Vera of VR200)."""
    A, C = plan.acc, plan.cpu
    ci = np.minimum((s.host_cpu * len(C["cores"])).astype(np.int64), len(C["cores"]) - 1)
    sockets = np.where(s.sockets < _P_TWO_SOCKETS, np.minimum(2, C["max_sockets"][ci]), 1)
    fixed = A["fixed_cpu"][a]
    node_cores = C["cores"][ci] * sockets
    return _Host(
        cores_pa=np.where(fixed, A["fixed_cores"][a] * A["cpus_per_accel"][a],
                          node_cores / per_node),
        cpu_code=np.where(fixed, A["fixed_code"][a], ci),
        cpu_factor=np.where(fixed, A["fixed_factor"][a], C["factor"][ci]),
        host_w=np.where(fixed, 0.0, C["tdp"][ci] * sockets),
    )


def _draw_network(plan: Plan, s: Streams, a, layout: _Layout) -> _Network:
    """Network between nodes (none on one node, the pod fabric where there is one)."""
    A, m, per_node = plan.acc, layout.m, layout.per_node
    n_net = len(plan.net["bw"]) - 1
    net_code = np.where(m > 1, 1 + np.minimum((s.network * n_net).astype(np.int64), n_net - 1), 0)
    inter_bw = plan.net["bw"][net_code]
    fabric = A["fabric"][a] & (m > 1)
    if fabric.any():
        # chips on a pod fabric reach other hosts' chips over it: a node's share is its chips'
        net_code = np.where(fabric, A["fabric_code"][a], net_code)
        inter_bw = np.where(fabric, A["intra_bw"][a] * per_node, inter_bw)
    intra_code = np.where(per_node > 1, A["intra_code"][a], 0)
    return _Network(net_code, inter_bw, intra_code)


def _draw_batch(plan: Plan, s: Streams, a, n, rows: int) -> _Batch:
    """Local batch per replica (bounded by memory and the largest global batch)."""
    wl = plan.workload
    if wl.model_parallel == 1:
        # a sharded optimizer state leaves each accelerator more room the more there are
        max_b = (wl.max_local_batch(plan.acc["mem"][a], n=n.astype(np.float64)).astype(np.int64)
                 if wl.state_sharded else plan.acc["max_b"][a])
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
        b = np.minimum(_pick(s.batch, np.array(wl.local_batches, dtype=np.int64)), max_b)
        cap = wl.max_global_batch if wl.max_global_batch is not None else np.iinfo(np.int64).max
        b = np.maximum(np.minimum(b, cap // replicas), 1)
        bad_mem = b > max_b
        # more replicas than the largest global batch: beyond the reference convergence points
        bad_cap = b * replicas > cap
    else:
        b = _pick(s.batch, plan.local_batch)
        bad_mem = b > max_b
        bad_cap = np.zeros(rows, bool)
    return _Batch(b, b * replicas, bad_mem, bad_cap, bad_shards)


def _hardware_inputs(plan: Plan, a, layout: _Layout, host: _Host, network: _Network,
                     dali) -> ConfigArrays:
    """The drawn rows as :func:`~gpurank.engine.sources.model.perfmodel.evaluate`'s inputs,
    all but the batch."""
    A = plan.acc
    # memory per accelerator places a feature store; a sweep without one skips the gather
    store = A["mem"][a] if plan.workload.gathered_bytes_per_sample > 0 else None
    return ConfigArrays(
        peak_tflops=A["peak"][a], compute_efficiency=A["eff"][a],
        mem_bw_tbps=A["mem_bw"][a], n_accelerators=layout.n,
        accelerators_per_node=layout.per_node, n_nodes=layout.m,
        intra_GBps=A["intra_bw"][a], inter_GBps=network.inter_bw,
        cpu_cores_per_accelerator=host.cores_pa, cpu_decode_factor=host.cpu_factor,
        dali=dali,
        host_GBps=A["host_bw"][a],
        narrow_peak_tflops=A["narrow_peak"][a],
        narrow_bytes=A["narrow_bytes"][a],
        scaleup_domain=A["scaleup"][a], scaleup_GBps=A["scaleup_bw"][a],
        mem_gb=store,
    )


def _model_inputs(plan: Plan, d: _Draw) -> ConfigArrays:
    """The drawn rows as :func:`~gpurank.engine.sources.model.perfmodel.evaluate`'s inputs."""
    cfg = _hardware_inputs(plan, d.a, d.layout, d.host, d.network, d.dali)
    if d.batch.shards is None:
        return replace(cfg, local_batch=d.batch.b)
    return replace(cfg, local_batch=d.batch.b, model_parallel=d.batch.shards,
                   micro_batch=d.batch.micro)


def _fastest_batch(plan: Plan, a, layout: _Layout, host: _Host, network: _Network,
                   dali) -> _Batch:
    """Each row's batch of least predicted time to train (:mod:`.batch_choice`): within the
    reference convergence points where one fits, else the smallest that fits memory beyond
    them (the least extrapolated); a row where none fits memory is excluded (as beyond memory)."""
    wl, n = plan.workload, layout.n
    mem = plan.acc["mem"][a]
    cfg = _hardware_inputs(plan, a, layout, host, network, dali)
    choice = fastest_batches(cfg, plan.model, wl, batch_candidates(wl, n, mem))
    gb, b, shards, micro = choice.global_, choice.local, choice.shards, choice.micro
    miss = np.flatnonzero(~np.isfinite(gb))
    if miss.size:
        more = smallest_batches(batch_candidates(wl, n[miss], mem[miss],
                                                 within_reference=False))
        gb, b, shards, micro = gb.copy(), b.copy(), shards.copy(), micro.copy()
        gb[miss], b[miss], shards[miss] = more.global_, more.local, more.shards
        micro[miss] = more.micro
    none = ~np.isfinite(gb)
    own = np.broadcast_to(np.asarray(wl.shards(np.maximum(n, 1).astype(np.float64))), n.shape)
    gb, b = np.where(none, n, gb).astype(np.int64), np.where(none, 1, b).astype(np.int64)
    shards, micro = np.where(none, own, shards), np.where(none, 1.0, micro)
    # a model-parallel workload's count that is not whole replicas has no batch at all
    bad_shards = none & (np.mod(n, own) != 0)
    return _Batch(b, gb, none & ~bad_shards, np.zeros(n.shape, bool), bad_shards, shards,
                  micro)


def _outcome(plan: Plan, d: _Draw, out: dict, s: Streams, rows: int) -> _Outcome:
    """The model's outputs with measurement noise, and what they cost in money and power."""
    A, a, n, gb = plan.acc, d.a, d.layout.n, d.batch.gb
    wl, mdl = plan.workload, plan.model
    noise = 1.0 + mdl.noise_sigma * s.throughput_noise
    thr = out["throughput"] * noise
    util = np.minimum(out["utilization"] * noise, 1.0)
    if wl.samples_curve:
        samples = wl.samples(gb) * (1.0 + mdl.epochs_noise_sigma * s.epochs_noise)
        epochs = samples / float(wl.dataset_size) if wl.dataset_size else np.full(rows, np.nan)
        train_s = samples / thr + mdl.overhead_s
    else:
        epochs = wl.epochs(gb) * (1.0 + mdl.epochs_noise_sigma * s.epochs_noise)
        train_s = epochs * wl.dataset_size / thr + mdl.overhead_s
    tdp = A["tdp"][a]
    return _Outcome(
        thr=thr,
        util=util,
        epochs=epochs,
        train_s=train_s,
        price=plan.offer_price[d.offer],
        power=tdp * (mdl.idle_power_frac + (1.0 - mdl.idle_power_frac) * util),
        mfu=thr * wl.flops_per_sample / (n * mixed_peak(A["peak"][a], A["narrow_peak"][a],
                                                     mdl.narrow_fraction) * 1e12),
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


def _frame(plan: Plan, d: _Draw, res: _Outcome, keep, ev: _Evidence) -> pd.DataFrame:
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
    }, columns=list(SIMULATED_COLUMNS))


def _chunk(plan: Plan, seed: int, k: int, rows: int, xp=np):
    """Rows [k*L, k*L + rows) of the sweep (rows <= L); returns (DataFrame, excluded dict)."""
    s = draw_streams(seed, k, rows)
    A = plan.acc

    a = np.minimum((s.accelerator * plan.n_acc).astype(np.int64), plan.n_acc - 1)
    offer = plan.offer_start[a] + np.minimum((s.offer * plan.offer_count[a]).astype(np.int64),
                                             plan.offer_count[a] - 1)
    layout = _draw_layout(plan, s, a, rows)
    fw = np.where(A["dali_ok"][a], _pick(s.framework, FW_NVIDIA), _pick(s.framework, FW_OTHER))
    host = _draw_host(plan, s, a, layout.per_node)
    network = _draw_network(plan, s, a, layout)
    batch = (_fastest_batch(plan, a, layout, host, network, FW_DALI[fw])
             if plan.batch == "fastest" else _draw_batch(plan, s, a, layout.n, rows))
    d = _Draw(a=a, offer=offer, fw=fw, dali=FW_DALI[fw], layout=layout, host=host,
              network=network, batch=batch)
    out = evaluate(_model_inputs(plan, d), plan.model, plan.workload, xp=xp)
    res = _outcome(plan, d, out, s, rows)
    excl, reasons = _exclusions(plan.workload, d.layout, d.batch)
    keep = ~excl if excl.any() else slice(None)
    return _frame(plan, d, res, keep, _evidence(plan, d)), reasons


@dataclass(frozen=True)
class _Evidence:
    """Per row: the interval factors on the time and the ``prediction_note`` code."""

    lo: np.ndarray
    hi: np.ndarray
    note: np.ndarray


def _evidence(plan: Plan, d: _Draw) -> _Evidence:
    """The 80% interval and the notes of each drawn row, from its accelerator's basis and how
    far its batch and scale go beyond the model's fitted domain."""
    A, a = plan.acc, d.a
    ex = extrapolation(plan.model, plan.workload, d.batch.gb, d.layout.n)
    widen = plan.intervals.per_doubling * ex.reach
    code = A["note_map"][A["note_base"][a] + BATCH_OUT * ex.batch_out
                         + SCALE_OUT * ex.scale_out + CURVE_OUT * ex.curve_out]
    return _Evidence(np.exp(-(A["w_lo"][a] + widen)), np.exp(A["w_hi"][a] + widen), code)


def iter_chunks(plan, n, seed):
    """The sweep's rows in chunks of :data:`LOGICAL_CHUNK` draws, each chunk seeded by
    ``seed`` and its index: each chunk's table and the impossible draws excluded so far, by
    reason."""
    excluded = dict.fromkeys(_REASONS, 0)
    n_chunks = -(-n // LOGICAL_CHUNK)
    for k in range(n_chunks):
        rows = min(LOGICAL_CHUNK, n - k * LOGICAL_CHUNK)
        df, reasons = _chunk(plan, int(seed), k, rows)
        for r, c in reasons.items():
            excluded[r] = excluded.get(r, 0) + c
        yield df, excluded


def no_rows_error(n, excluded):
    """The :class:`~gpurank.engine.errors.UsageError` of a sweep whose ``n`` draws were all
    impossible, naming the most common reason in ``excluded``."""
    worst = max(excluded, key=excluded.get)
    return UsageError(
        f"all {n} sampled configurations are impossible (most often: {worst.replace('_', ' ')}); "
        "choose counts, nodes and local_batch that fit the accelerators' chassis and memory"
    )
