"""The study's reading of MLPerf free text and its helpers: framework, interconnect and
availability classes from the system descriptions, the filtering of the systems read, the
cluster profiles with their dominant generation, and the checksum and round-order helpers of
the reports.
"""

from __future__ import annotations

import hashlib
import shlex

import numpy as np
import pandas as pd

from ..sources.mlperf.discovery import round_key

__all__ = ["availability_category", "framework_family", "interconnect_class", "sha256_of",
           "round_key", "study_rows", "profiles_with_generation", "filtering_table",
           "command_line"]


def availability_category(status: str) -> str:
    """``preview`` if the status mentions preview, ``research`` if research (or ``rdi``), else
    ``available`` (the rule of the data set's ``availability_category`` column)."""
    s = (status or "").strip().lower()
    if "preview" in s:
        return "preview"
    if "research" in s or s == "rdi":
        return "research"
    return "available"


_FRAMEWORKS = (
    ("mxnet", "MXNet"), ("pytorch", "PyTorch"), ("tensorflow", "TensorFlow"), ("tf2", "TensorFlow"),
    ("tf1", "TensorFlow"), ("jax", "JAX"), ("paddle", "PaddlePaddle"), ("mindspore", "MindSpore"),
    ("popart", "PopART"),
)  # fmt: skip


def framework_family(text: str) -> str:
    """The first framework named in a free-text ``framework`` field, else ``other``.

    System descriptions often list every framework of the submission ("NGC MXNet 22.04, NGC
    PyTorch 22.04, ..."); the first one named is the one ResNet ran on in this data.
    """
    low = (text or "").lower()
    best = None
    for word, name in _FRAMEWORKS:
        i = low.find(word)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, name)
    return best[1] if best else "other"


def interconnect_class(text: str) -> str:
    """``NVSwitch``, ``NVLink``, ``PCIe`` or ``unstated`` from a free-text interconnect."""
    low = (text or "").lower()
    if "nvswitch" in low:
        return "NVSwitch"
    if "nvlink" in low:
        return "NVLink"
    if "pcie" in low:
        return "PCIe"
    return "unstated"


def sha256_of(path) -> str:
    """The SHA-256 of the file at ``path`` (hex), read in chunks of 1 MiB."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def study_rows(res, *, division, availability) -> tuple[pd.DataFrame, list[tuple[str, int]]]:
    """Add study columns and ``study_status``; return the table and the filtering steps."""
    df = res.table.copy()
    df["availability_category"] = [availability_category(s) for s in df["availability"]]
    df["framework_family"] = [framework_family(s) for s in df["framework"]]
    df["interconnect_class"] = [interconnect_class(s) for s in df["interconnect"]]
    status = np.array(["analysed"] * len(df), dtype=object)

    def mark(mask, why):
        m = np.asarray(mask, bool) & (status == "analysed")
        status[m] = why
        return int(m.sum())

    steps = [("duplicated runs of an earlier system (dedupe)", len(res.dropped))]
    if division:
        steps.append((f"division is not {division}", mark(df["division"] != division, f"division {division} only")))
    if availability:
        steps.append((f"availability is not {availability} (preview, research)",
                      mark(df["availability_category"] != availability, f"availability {availability} only")))
    steps.append(("no score (logs incomplete, no published score)",
                  mark(df["time_to_train_min"].isna(), "no score")))
    for kind, words in (("cpu", "CPU-only (0 accelerators)"), ("tpu", "TPU"), ("other", "other accelerator (Gaudi, IPU, Ascend)")):
        steps.append((f"not a GPU: {words}", mark(df["accelerator_type"] == kind, f"not a GPU ({kind})")))
    steps.append(("accelerator type unknown (no system description)",
                  mark(~df["accelerator_type"].isin(["gpu", "cpu", "tpu", "other"]), "not a GPU (unknown)")))
    df["study_status"] = status
    return df, steps


def filtering_table(steps, n_read: int) -> pd.DataFrame:
    """Rows left out and remaining after each filtering step (``step``, ``left_out``,
    ``remaining``)."""
    filtering, remaining = [], n_read
    for step, k in steps:
        remaining -= k
        filtering.append({"step": step, "left_out": k, "remaining": remaining})
    return pd.DataFrame(filtering)


def profiles_with_generation(analysis, t: pd.DataFrame) -> pd.DataFrame:
    """The cluster profiles with each cluster's most common generation and its share."""
    prof = analysis.clusters.profiles.copy()
    dom = []
    for c in prof["cluster"]:
        g = t.loc[t["cluster"] == c, "generation"].value_counts()
        dom.append(f"{g.index[0]} ({g.iloc[0] / g.sum():.0%})" if len(g) else "")
    prof["dominant_generation"] = dom
    return prof


def command_line(paths, *, published_scores, seed, benchmark=None) -> str:
    """The ``gpurank study`` command a report says it was written by."""
    parts = ["gpurank", "study", *map(str, paths)]
    if benchmark is not None:
        parts += ["--benchmark", benchmark]
    if published_scores is not None:
        parts += ["--published-scores", str(published_scores)]
    parts += ["--seed", str(seed)]
    return " ".join(shlex.quote(p) for p in parts)
