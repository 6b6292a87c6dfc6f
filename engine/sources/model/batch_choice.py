"""The global batch a submitter would pick: of the batches a configuration can run within
the workload's reference convergence points and its memory, the one the model trains
fastest.

Submitters choose the batch that minimizes time to train, trading the samples to converge
(which grow with the batch, :meth:`~.workload.Workload.samples`) against the rate (which
grows with the work each accelerator has per pass). :func:`batch_candidates` lists, per row,
the layouts a submission could run: ``b`` samples per data-parallel replica for ``b`` a
power of two (as micro-batches of the most that fits memory where ``b`` does not), one sample per replica of ``s`` accelerators where the
workload's samples split that far (tensor x context parallel), and each reference point's
batch where it is one of those (with a whole number of replicas). :func:`fastest_batches` evaluates them all at once (a
``(rows, candidates)`` broadcast of :func:`~.perfmodel.evaluate`) and keeps, per row, the
one of least time to train.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .model_arrays import ConfigArrays
from .perfmodel import CalibratedModel, evaluate
from .workload import Workload

__all__ = ["BatchCandidates", "BatchChoice", "batch_candidates", "fastest_batches",
           "SPLITS", "LOCAL_BATCHES", "chosen_note", "smallest_batches"]

#: Accelerators one sample may be split over (tensor x context parallel degrees as
#: submissions run them: powers of two and three times them), where the workload allows.
SPLITS = np.array([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128], dtype=np.float64)
#: Samples per data-parallel replica tried: powers of two, 1 to 65,536.
LOCAL_BATCHES = 2.0 ** np.arange(17)


@dataclass(frozen=True)
class BatchCandidates:
    """Per row and candidate (shape ``(rows, K)``): the global batch, the batch per replica,
    the accelerators per replica, whether the candidate is allowed (whole replicas, a pass
    that fits memory, within the reference points) and the batch one pass runs."""

    global_: np.ndarray
    local: np.ndarray
    shards: np.ndarray
    ok: np.ndarray
    micro: np.ndarray  # the batch one pass runs (a replica's batch beyond memory accumulates)


@dataclass(frozen=True)
class BatchChoice:
    """Per row: the chosen global batch, its batch per replica and accelerators per replica
    (NaN where no candidate is allowed), and the smallest and largest allowed candidate."""

    global_: np.ndarray
    local: np.ndarray
    shards: np.ndarray
    lowest: np.ndarray
    highest: np.ndarray
    micro: np.ndarray


def _reference_top(workload: Workload) -> float:
    """The largest global batch of the reference convergence points (inf without any)."""
    curve = workload.samples_curve or workload.epochs_curve
    top = max(b for b, _ in curve) if curve else np.inf
    if workload.max_global_batch is not None:
        top = min(top, float(workload.max_global_batch))
    return float(top)


def batch_candidates(workload: Workload, n, mem_gb, *, within_reference=True,
                     splits=True) -> BatchCandidates:
    """The global batches each row (``n`` accelerators of ``mem_gb`` GB) could run.

    Parameters
    ----------
    workload : Workload
    n, mem_gb : array-like
        Accelerators and memory per accelerator of each row (NaN memory: not checked).
    within_reference : bool
        Allow only global batches up to the largest reference convergence point (and
        ``max_global_batch``); False allows any.
    splits : bool
        Include one-sample-per-replica layouts that split each sample over more
        accelerators than the workload's own model parallelism.

    Returns
    -------
    BatchCandidates
    """
    n = np.asarray(n, dtype=np.float64).reshape(-1, 1)
    mem = np.asarray(mem_gb, dtype=np.float64).reshape(-1, 1)
    n1 = np.where(n > 0, n, 1.0)
    own = np.broadcast_to(np.asarray(workload.shards(n1), dtype=np.float64), n1.shape)
    # data parallel over the workload's own replicas: b samples each
    dp_shards = np.broadcast_to(own, (n.shape[0], LOCAL_BATCHES.size))
    dp_local = np.broadcast_to(LOCAL_BATCHES, dp_shards.shape)
    whole = np.mod(n1, own) == 0
    dp_ok = np.broadcast_to(whole, dp_shards.shape)
    parts = [(dp_local, dp_shards, dp_ok)]
    if splits and workload.sample_split > 1:
        # one sample per replica of s accelerators: s divides n, within the sample's split
        s = np.broadcast_to(SPLITS, (n.shape[0], SPLITS.size))
        s_ok = (s > own) & (s <= workload.sample_split) & (np.mod(n1, s) == 0) & (s <= n1)
        parts.append((np.ones_like(s), s, s_ok))
    curve = workload.samples_curve or workload.epochs_curve
    if curve:
        parts.append(_reference_layouts(workload, np.array([b for b, _ in curve]), n1, own,
                                        whole, splits))
    local = np.concatenate([p[0] for p in parts], axis=1)
    shards = np.concatenate([p[1] for p in parts], axis=1)
    ok = np.concatenate([p[2] for p in parts], axis=1) & (n > 0)
    gb = local * n1 / shards
    if within_reference:
        ok &= gb <= _reference_top(workload)
    known = np.isfinite(mem)
    max_b = workload.max_local_batch(np.where(known, mem, 0.0), shards=shards,
                                     n=np.broadcast_to(n1, shards.shape))
    # each pass must fit: a replica's batch beyond memory runs as micro-batches of the most
    # that fits (gradient accumulation, as LLM submissions reach their batches)
    ok &= ~known | (max_b >= 1)
    micro = np.where(known, np.minimum(local, np.maximum(max_b, 1.0)), local)
    return BatchCandidates(gb, local, shards, ok, micro)


def _reference_layouts(workload: Workload, points, n1, own, whole, splits):
    """The reference points' own batches as layouts: ``p / replicas`` samples per
    data-parallel replica where that is whole, else one sample per replica of ``n / p``
    accelerators where that is whole and the workload's samples split that far."""
    p = np.broadcast_to(points, (n1.shape[0], points.size))
    b = p * own / n1
    dp = whole & (b >= 1) & (b == np.floor(b))
    s = n1 / p
    split = (~dp & splits & (s > own) & (s == np.floor(s))
             & (s <= workload.sample_split))
    # a power of two per replica is in the grid already (and one per replica of a listed split)
    mant, _ = np.frexp(b)
    listed = (dp & (mant == 0.5) & (b <= LOCAL_BATCHES[-1])) | (split & np.isin(s, SPLITS))
    return (np.where(dp, b, 1.0), np.where(dp, own, np.where(split, s, own)),
            (dp | split) & ~listed)


def fastest_batches(cfg: ConfigArrays, model: CalibratedModel, workload: Workload,
                    cand: BatchCandidates, xp=np) -> BatchChoice:
    """The candidate of least predicted time to train per row.

    ``cfg`` holds :func:`~.perfmodel.evaluate`'s per-row inputs (one value per row, or a
    scalar; a mapping of them is checked); its batch inputs (``local_batch``,
    ``micro_batch``, ``model_parallel``) are
    replaced by each candidate's. Only the allowed candidates are evaluated, in one call.
    Time to train is the samples to converge at the candidate's global batch over the
    predicted throughput (the per-run overhead is the same for every candidate); ties go to
    the first candidate (the smaller batch per replica). Rows without an allowed candidate
    get NaN."""
    rows, k = cand.global_.shape
    run = cand.ok & ~_outrun(cand, workload)
    ri, ki = np.nonzero(run)
    flat = replace(ConfigArrays.of(cfg).take(ri), local_batch=cand.local[ri, ki],
                   model_parallel=cand.shards[ri, ki], micro_batch=cand.micro[ri, ki])
    gb = cand.global_[ri, ki]
    t = np.full((rows, k), np.inf)
    if ri.size:
        out = evaluate(flat, model, workload, xp=xp)
        # the candidates' throughput back on the host (a device module says so explicitly)
        thr = np.asarray(getattr(xp, "asnumpy", np.asarray)(out["throughput"]), dtype=np.float64)
        good = thr > 0
        t[ri, ki] = np.where(good, workload.samples(gb) / np.where(good, thr, 1.0), np.inf)
    return _least(cand, t, cand.ok)


def _outrun(cand: BatchCandidates, workload: Workload) -> np.ndarray:
    """The data-parallel candidates another one outruns without being evaluated: below the
    first reference point the samples to converge are the same (the curve is flat there),
    and a replica's rate never falls as its batch grows (every term of a step is affine in
    the batch with a non-negative intercept, so step time over batch only falls), so of
    those only the largest can be the fastest. Not for a workload with a feature store,
    whose place (and gather time) can change with the memory the batch leaves."""
    curve = workload.samples_curve or workload.epochs_curve
    out = np.zeros(cand.ok.shape, dtype=bool)
    if not curve or workload.gathered_bytes_per_sample > 0:
        return out
    k = LOCAL_BATCHES.size
    flat = cand.ok[:, :k] & (cand.global_[:, :k] <= curve[0][0])
    last = k - 1 - np.argmax(flat[:, ::-1], axis=1)
    out[:, :k] = flat
    out[np.arange(flat.shape[0]), last] = False
    return out


def _least(cand: BatchCandidates, score, allowed=None) -> BatchChoice:
    """The candidate of least ``score`` per row (``inf``: not chosen; ties go to the first),
    and the range of the ``allowed`` ones (those of finite score by default)."""
    rows = cand.global_.shape[0]
    pick = (np.arange(rows), np.argmin(score, axis=1))
    found = np.isfinite(score[pick])
    allowed = np.isfinite(score) if allowed is None else allowed
    lowest = np.where(found, np.min(np.where(allowed, cand.global_, np.inf), axis=1), np.nan)
    highest = np.where(found, np.max(np.where(allowed, cand.global_, -np.inf), axis=1), np.nan)
    return BatchChoice(np.where(found, cand.global_[pick], np.nan),
                       np.where(found, cand.local[pick], np.nan),
                       np.where(found, cand.shards[pick], np.nan), lowest, highest,
                       np.where(found, cand.micro[pick], np.nan))


def smallest_batches(cand: BatchCandidates) -> BatchChoice:
    """The smallest allowed candidate per row: where no batch is within the reference
    convergence points, the one that extrapolates the samples to converge least (NaN where
    none is allowed)."""
    return _least(cand, np.where(cand.ok, cand.global_, np.inf))


def chosen_note(choice: BatchChoice, within_reference: bool = True) -> np.ndarray:
    """Per row, the ``prediction_note`` of a chosen batch ("" where none was chosen): the
    fastest of the candidates within the reference convergence points, or (``False``) the
    smallest that fits memory when none is within them."""
    if within_reference:
        return np.array([
            f"global_batch_size chosen: {g:,.0f}, the fastest to train of {lo:,.0f}-{hi:,.0f} "
            "within the reference convergence points and memory" if np.isfinite(g) else ""
            for g, lo, hi in zip(choice.global_, choice.lowest, choice.highest)], dtype=object)
    return np.array([
        f"global_batch_size chosen: {g:,.0f}, the smallest that fits memory: no batch of this "
        "layout is within the reference convergence points" if np.isfinite(g) else ""
        for g in choice.global_], dtype=object)
