"""The number format each MLPerf round's submissions trained in, where the submissions say so.

A row's training format decides the dense peak its compute runs at (:mod:`.hardware`). A
table may give it per row (a ``precision`` column; the MLPerf reader writes what a row's
own logs state). Where it does not, ``engine/data/training_formats.csv`` holds what a round's
submissions stated (vendors' published notes, the logs of the submitters that print their
configuration): one rule per round, submitter (``*``: every other submitter), accelerator
vendor and benchmark, each with its source. A rule holds from its round on, until a later
rule for the same benchmark and vendor replaces it; a row without a round takes the latest
rules, and a row without a submitter the rule for the vendor's own submissions.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from .mlperf_rules import round_ordinal

__all__ = ["FORMAT_ALIASES", "format_name", "format_in_text", "format_rules", "stated_formats",
           "assumed_format_note", "is_missing"]

#: Names a table or a log gives a training format, and the format of
#: :data:`.hardware.PRECISIONS` each computes at (MXFP8's blocks run at the FP8 peak,
#: NVFP4's and MXFP4's at the FP4 one; "hybrid" is Transformer Engine's FP8 recipe).
FORMAT_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "bf16", "float16": "bf16", "mixed": "bf16",
    "amp": "bf16", "bf16mixed": "bf16", "fp8": "fp8", "float8": "fp8", "e4m3": "fp8",
    "e5m2": "fp8", "hybrid": "fp8", "mxfp8": "fp8", "fp4": "fp4", "nvfp4": "fp4",
    "mxfp4": "fp4", "float4": "fp4",
}
_RULE_COLUMNS = ("round", "submitter", "vendor", "benchmark", "format", "source")


def format_name(value) -> str | None:
    """The training format a value names (``"NVFP4"`` -> ``"fp4"``), None where it names
    none (missing, empty or unknown)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip().lower().replace("-", "").replace("_", "")
    return FORMAT_ALIASES.get(text)


#: A format named as a word of a free text ("FP8 Training", "NVFP4 GEMMs").
_FORMAT_WORD = re.compile(
    r"(?<![A-Za-z0-9_])(nv|mx)?(fp4|fp8|fp16|bf16|float4|float8|float16)(?![A-Za-z0-9_])",
    re.IGNORECASE)


def format_in_text(text) -> str | None:
    """The narrowest training format a free text names as a word (a system description's
    notes: "FP8 Training" -> ``"fp8"``), None where it names none."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    found = {format_name("".join(g for g in m.groups() if g)) for m in
             _FORMAT_WORD.finditer(str(text)[:10_000])} - {None}
    return next((f for f in ("fp4", "fp8", "bf16") if f in found), None)


@lru_cache(maxsize=1)
def format_rules() -> pd.DataFrame:
    """``training_formats.csv`` as shipped, with each rule's round ordinal (``ordinal``)."""
    with resources.files("gpurank.engine.data").joinpath("training_formats.csv").open("rb") as fh:
        t = pd.read_csv(fh, dtype=str, keep_default_na=False)
    t["ordinal"] = [round_ordinal(r) for r in t["round"]]
    return t


def stated_formats(rounds, submitters, vendors, benchmarks, *, default: str | None = None,
                   rules: pd.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's stated training format and the rule's text, ``(format, why)`` (``default``
    and ``""`` where no rule covers the row).

    Parameters
    ----------
    rounds, submitters, vendors : sequence
        Per row; a missing round takes the latest rules, a missing submitter the vendor's
        own submissions' rule.
    benchmarks : collection of str
        The MLPerf names of the workload the rows train (a workload without one has no rule).
    default : str, optional
        The format of a row no rule covers (the workload's; None by default).
    rules : DataFrame, optional
        Rules as :func:`format_rules` returns them (the shipped ones by default).
    """
    n = len(vendors)
    fmt = np.full(n, default, dtype=object)
    why = np.full(n, "", dtype=object)
    rules = format_rules() if rules is None else rules
    rules = rules[rules["benchmark"].isin(list(benchmarks))]
    if rules.empty or n == 0:
        return fmt, why
    # each distinct (round, submitter, vendor) looked up once: a table repeats a few
    parts = [pd.factorize(pd.Series(list(c), dtype=object), use_na_sentinel=False)
             for c in (rounds, submitters, vendors)]
    codes = np.stack([c for c, _ in parts], axis=1)
    keys, inverse = np.unique(codes, axis=0, return_inverse=True)
    found = [_rule_for(rules, *(names[k] for (_, names), k in zip(parts, key))) for key in keys]
    inverse = inverse.reshape(-1)
    fmt[:] = np.array([default if f is None else f for f, _ in found] + [None],
                      dtype=object)[:-1][inverse]
    why[:] = np.array([w for _, w in found], dtype=object)[inverse]
    return fmt, why


def _rule_for(rules: pd.DataFrame, round_, submitter, vendor):
    """The rule of the latest round at or before ``round_`` for the vendor, the submitter's
    own before ``*``."""
    vendor = "" if is_missing(vendor) else str(vendor)
    ordinal = None if is_missing(round_) else round_ordinal(round_)
    if not is_missing(round_) and ordinal is None:
        return None, ""  # a round text that names no round: no rule dates it
    r = rules[rules["vendor"].isin([vendor, "*"])]
    if ordinal is not None:
        r = r[r["ordinal"] <= ordinal]
    if r.empty:
        return None, ""
    r = r[r["ordinal"] == r["ordinal"].max()]
    who = vendor if is_missing(submitter) else str(submitter).strip()
    own = r[r["submitter"].str.lower() == who.lower()]
    pick = own if not own.empty else r[r["submitter"] == "*"]
    if pick.empty:
        return None, ""
    row = pick.iloc[0]
    whose = (f"{row['submitter']}'s" if row["submitter"] != "*"
             else f"{vendor or 'its vendor'}'s partners'")
    return row["format"], (f"{whose} MLPerf Training {row['round']} {row['benchmark']} "
                           f"submissions trained in {row['format']} (training_formats.csv)")


def is_missing(value) -> bool:
    """Whether a cell holds nothing: None, NaN or blank text."""
    return (value is None or (isinstance(value, float) and math.isnan(value))
            or not str(value).strip())


def assumed_format_note(used: str, stated: str, why: str) -> str:
    """The ``prediction_note`` of a row whose format a rule stated: the format its peak is
    of (``used``; a wider one where the accelerator lacks ``stated``) and the rule."""
    fell = "" if used == stated else f" (no {stated} peak on this accelerator)"
    return f"precision assumed: {used}{fell}; {why}"
