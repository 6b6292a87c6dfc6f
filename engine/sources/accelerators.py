"""Normalize the accelerator names submitters write into one model name per product.

``"NVIDIA A100-SXM4-80GB (400W)"``, ``"A100-SXM4-80GB"``, ``"NVIDIA A100-SXM-80GB CTS"`` all
become ``"A100-SXM4-80GB"``: vendor words ("NVIDIA", "Tesla"), power limits ("(400W)") and
cooling tags ("CTS") go; the model, form factor and memory size stay. Single-SKU products
(A30, A40, L4, L40, ...) become the bare model name. When the name has no memory size, the
description's ``accelerator_memory_capacity`` fills it in.

Facts per model name live in ``gpurank/engine/data/accelerator_aliases.csv`` (type, vendor,
generation, release year and the ``accelerator_id`` of the project catalog when it has one).
A name the rules cannot place, or a model the alias table does not list, is "unknown": the
reader keeps the row and records a warning.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import pandas as pd

__all__ = ["normalize_accelerator", "accelerator_aliases", "CPU_ONLY_NAMES"]

CPU_ONLY_NAMES = frozenset({"", "n/a", "na", "none", "cpu", "-"})

_NOISE = re.compile(
    r"\((?:\d+\s*W)\)|\b\d{2,4}\s*W\b|\bCTS\b|\bNVIDIA\b|\bTesla\b|\bGeForce\b|\bHabana\b|\bIntel\b"
    r"|\bGraphcore\b|\bGoogle\b|\bAMD\b|\bInstinct\b|\bHuawei\b",
    re.IGNORECASE,
)
_TPU = re.compile(r"tpu[\s_-]*v?(\d+)(p|e)?", re.IGNORECASE)
_MEM = re.compile(r"(\d+)\s*G(?:B|iB)?\b", re.IGNORECASE)
_NV_MODEL = re.compile(
    r"\b(GH200|GB200|B200|H200|H100|A100|A10G|A10|A30|A40|L40S|L40|L4|V100S|V100|RTX\s*A\d{4}|RTX\s*\d{4})",
    re.IGNORECASE,
)
_SINGLE_SKU = {"A10", "A10G", "A30", "A40", "L4", "L40", "L40S", "GB200"}
# form factor a bare "SXM" means for each model
_SXM_GEN = {"A100": "SXM4", "H100": "SXM5", "H200": "SXM"}


@lru_cache(maxsize=1)
def accelerator_aliases() -> pd.DataFrame:
    """The alias table shipped with gpurank, indexed by normalized ``accelerator`` name."""
    with resources.files("gpurank.engine.data").joinpath("accelerator_aliases.csv").open("rb") as fh:
        df = pd.read_csv(fh, keep_default_na=False, dtype=str)
    return df.set_index("accelerator")


def _mem_from(text: str) -> str:
    m = _MEM.search(text or "")
    return f"{m.group(1)}GB" if m else ""


def normalize_accelerator(raw: str, *, memory: str = "", hint: str = "") -> tuple[str, bool]:
    """Return ``(model_name, known)`` for a raw accelerator string.

    ``memory`` is the description's accelerator memory capacity (used when the name has none);
    ``hint`` is other text about the system (system name, id) used only to find a TPU version.
    ``known`` is False when the alias table does not list the resulting name; the name is then
    the cleaned raw string. CPU-only names (``N/A``) give ``("", True)``.
    """
    text = (raw or "").strip()
    if text.lower() in CPU_ONLY_NAMES:
        return "", True
    table = accelerator_aliases()
    name = _normalize(text, memory, hint)
    if name is None:
        cleaned = re.sub(r"\s+", " ", _NOISE.sub(" ", text)).strip(" -")
        return cleaned or text, False
    return name, name in table.index


def _normalize(text: str, memory: str, hint: str) -> str | None:
    low = text.lower()
    if "tpu" in low:
        m = _TPU.search(text) or _TPU.search(hint or "")
        if m:
            return f"TPU v{m.group(1)}{(m.group(2) or '').lower()}"
        return "TPU"
    if "gaudi" in low:
        m = re.search(r"gaudi\s*(\d)", low)
        return f"Gaudi{m.group(1)}" if m else "Gaudi"
    if "ipu" in low:
        if "bow" in low:
            return "Bow IPU"
        if "gc200" in low or "mk2" in low:
            return "IPU GC200"
        return None
    if "ascend" in low:
        return "Ascend 910" if "910" in low else None
    if "7900" in low and "xtx" in low:
        return "Radeon RX 7900 XTX"
    m = re.search(r"\bMI\s*(\d{3})([A-Z]?)\b", text, re.IGNORECASE)
    if m:
        return f"MI{m.group(1)}{m.group(2).upper()}"
    cleaned = _NOISE.sub(" ", text)
    m = _NV_MODEL.search(cleaned)
    if not m:
        return None
    model = re.sub(r"\s+", " ", m.group(1).upper().replace("RTXA", "RTX A"))
    model = re.sub(r"^RTX\s*", "RTX ", model)
    if model in _SINGLE_SKU or model.startswith("RTX"):
        return model
    rest = cleaned[m.end() :]
    form = ""
    fm = re.search(r"SXM(\d?)|PCI-?e|\bNVL\b", rest, re.IGNORECASE)
    if fm:
        tok = fm.group(0).upper()
        if tok.startswith("SXM"):
            form = tok if fm.group(1) else _SXM_GEN.get(model, "SXM")
        elif tok == "NVL":
            form = "NVL"
        else:
            form = "PCIe"
    mem = _mem_from(rest) or _mem_from(memory)
    h_variant = model == "V100" and re.search(r"(?:^|[-\s])H(?:$|[-\s])", rest.upper()) is not None
    parts = [model] + [p for p in (form, mem) if p]
    name = "-".join(parts)
    if h_variant:
        name += "-H"
    return name
