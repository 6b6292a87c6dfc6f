"""One resolver for accelerator names: rules, then the alias table, then the catalog.

Every part of gpurank that meets an accelerator name (the MLPerf reader, calibration and
prediction, the simulator's ``accelerators=`` selection) resolves it here, so they agree:

1. **Catalog keys.** A name that is an ``accelerator_id`` or a ``display_name`` of the
   accelerator catalog (``"nvidia_h100_sxm5"``, ``"NVIDIA H100 SXM5 80GB"``) is that product.
2. **Rules** turn the free text submitters and vendors write into one model name per product:
   ``"NVIDIA A100-SXM4-80GB (400W)"``, ``"A100-SXM4-80GB"`` and ``"NVIDIA A100-SXM-80GB CTS"``
   all become ``"A100-SXM4-80GB"``; ``"NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)"`` becomes
   ``"B300-SXM-270GB"``. Vendor and architecture words ("NVIDIA", "Tesla", "(R)", "Blackwell",
   "Tensor Core GPU"), power limits and cooling tags go; model, form factor, edition and memory
   size stay. The model is read as a whole word, so ``GB200``, ``B200`` and ``B300`` (or
   ``H100 NVL`` and ``H200 NVL``, ``MI300X`` and ``MI325X``) never stand for each other.
   Single-SKU products (A30, L40, GB200, ...) become the bare model name; a name without a
   memory size takes it from the description's ``accelerator_memory_capacity`` (a capacity
   no alias lists, within a tenth of the one product its base name places, is that product,
   with a note); a bare workstation number (SkyPilot's ``A6000``) is the RTX card; a TPU without
   a version takes it from the system name (``tpu-v4-128``), Trillium is the TPU v6e and
   Ironwood the TPU7x. Vera Rubin (the NVL72 rack, its superchip) is the VR200 and a bare
   Rubin only its architecture: the HGX Rubin NVL8 board publishes other rates
   ([NVIDIAVeraRubin]); Rubin Ultra is no product of the catalog. MI450 is AMD's series name,
   the MI455X its Helios part ([AMDMI455X]). Trainium takes its generation from the name
   (``AWS Trainium3``, [AWSTrainium3]; ``Trainium2``, and a bare ``Trainium`` the first,
   Trn1's, as SkyPilot's AWS catalog writes it, [AWSTrainium2]); Inferentia, an inference
   chip, has no training facts and stays unknown.
3. **The alias table** (``engine/data/accelerator_aliases.csv``) maps each model name to a
   catalog product and says how well it matches: ``exact`` (the product itself),
   ``stand-in`` (a sibling board whose modelled facts, dense peak, memory size and
   bandwidth, agree within 5%; its note says what differs) or ``unplaced`` (the name does not
   identify one product, e.g. no form factor; only vendor, generation and year are known).
4. **The catalog** (``engine/data/accelerators.csv``) holds every fact of a product, once:
   vendor, family, generation, its rank, release year, accelerator type and, where known,
   the performance facts the model uses. A product without a dense peak or a memory
   bandwidth is known but not modelled.

A name no step places is "unknown": readers keep the row and record a warning; calibration
and prediction leave it without a prediction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

import pandas as pd

from ...errors import UsageError
from .catalog import accelerator_catalog

__all__ = [
    "ResolvedAccelerator",
    "resolve_accelerator",
    "resolve_accelerators",
    "normalize_accelerator",
    "accelerator_aliases",
    "CPU_ONLY_NAMES",
]

CPU_ONLY_NAMES = frozenset({"", "n/a", "na", "none", "cpu", "-"})

_NOISE = re.compile(
    r"\((?:\d+\s*W)\)|\b\d{2,4}\s*W\b|\bCTS\b|\bNVIDIA\b|\bTesla\b|\bGeForce\b|\bHabana\b|\bIntel\b"
    r"|\bGraphcore\b|\bGoogle\b|\bAMD\b|\bInstinct\b|\bHuawei\b",
    re.IGNORECASE,
)
# trademark marks glue to words ("Gaudi(R) 2"): removed before any other rule
_MARKS = re.compile(r"\((?:R|TM)\)|[®™]", re.IGNORECASE)
_TPU = re.compile(r"tpu[\s_-]*v?(\d+)(p|e|x)?", re.IGNORECASE)
# Google calls the TPU v5e "v5 lite" in its API (v5litepod-16), the v6e "Trillium" and the
# TPU7x "Ironwood"
_TPU_V5_LITE = re.compile(r"v5[\s_-]*lite", re.IGNORECASE)
_MEM = re.compile(r"(\d+)\s*G(?:B|iB)?\b", re.IGNORECASE)
_HBM3 = re.compile(r"HBM3(?!E)", re.IGNORECASE)
# whole model names only: "GB200" is never read as "B200", "H100" never inside "GH100"
_NV_MODEL = re.compile(
    r"\b(VR200|GH200|GB300|GB200|B300|B200|H200|H100|A100|A10G|A10|A30|A40|L40S|L40|L4|V100S|V100"
    r"|T4(?![a-z])|RTX[\s_-]*PRO[\s_-]*\d{4}|RTX[\s_-]*A\d{4}|RTX[\s_-]*\d{4}|A\d{4})(?!\d)",
    re.IGNORECASE,
)
_SINGLE_SKU = {"A10", "A10G", "A30", "A40", "L4", "L40", "L40S", "GB200", "GB300", "VR200", "T4"}
# form factor a bare "SXM" means for each model (the H200 SXM is an SXM5 board); the
# Blackwell boards are called SXM whatever number a tool prints after it
_SXM_GEN = {"A100": "SXM4", "H100": "SXM5", "H200": "SXM5"}
_SXM_ONLY = {"B200", "B300"}
# Intel Gaudi card numbers: HL-205 Gaudi, HL-225 Gaudi2, HL-325L/HL-335 Gaudi3 OAM (900 W),
# HL-338 Gaudi3 PCIe (600 W), HL-328/HL-388 the 450 W export variants
_HL = re.compile(r"\bhl[\s-]?(\d{3})", re.IGNORECASE)
_HL_GEN = {"205": "1", "225": "2", "325": "3", "335": "3", "338": "3", "328": "3", "388": "3"}
# RTX PRO editions; Max-Q before Workstation ("Max-Q Workstation Edition")
_RTX_PRO_EDITIONS = (
    (re.compile(r"max[\s-]?q", re.IGNORECASE), "Max-Q"),
    (re.compile(r"\bserver[\s_-]*edition\b|\bSE\b", re.IGNORECASE), "SE"),
    (re.compile(r"\bworkstation\b|\bWE\b", re.IGNORECASE), "WE"),
)
# a name with an architecture but no model (``NVIDIA Blackwell GPU``): most specific first
_ARCH_ONLY = (
    (re.compile(r"\brubin[\s_-]+ultra\b", re.IGNORECASE), "Rubin Ultra"),
    # Vera Rubin is the NVL72 superchip; an HGX or NVL8 board (a Vera host over 8 GPUs) is not
    (re.compile(r"^(?!.*\b(?:hgx|nvl[\s_-]*8)\b).*\bvera[\s_-]+rubin\b", re.IGNORECASE), "VR200"),
    (re.compile(r"\brubin\b", re.IGNORECASE), "Rubin"),
    (re.compile(r"\bgrace[\s_-]+blackwell[\s_-]+ultra\b", re.IGNORECASE), "GB300"),
    (re.compile(r"\bgrace[\s_-]+blackwell\b", re.IGNORECASE), "GB200"),
    (re.compile(r"\bgrace[\s_-]+hopper\b", re.IGNORECASE), "GH200"),
    (re.compile(r"\bblackwell[\s_-]+ultra\b", re.IGNORECASE), "Blackwell Ultra"),
    (re.compile(r"\bblackwell\b", re.IGNORECASE), "Blackwell"),
    (re.compile(r"\bhopper\b", re.IGNORECASE), "Hopper"),
)
# AWS Trainium and its generation ("AWS Trainium3", "Trainium 2")
_TRAINIUM = re.compile(r"\btrainium[\s_-]*(\d?)(?!\d)", re.IGNORECASE)
# a V100 SXM3 board at 450 W is the DGX-2H board ("-H")
_V100_H_POWER = re.compile(r"\b450\s*W\b", re.IGNORECASE)


@dataclass(frozen=True)
class ResolvedAccelerator:
    """What one accelerator name resolves to.

    Attributes
    ----------
    raw : str
        The name as given.
    name : str
        One model name per product (``"A100-SXM4-80GB"``); ``""`` for CPU-only systems; the
        cleaned raw text when the name is unknown.
    accelerator_id : str
        The catalog product whose performance facts apply (``exact`` or ``stand-in``);
        ``""`` when none does.
    match : str
        ``"exact"``, ``"stand-in"``, ``"unplaced"`` (see the module docstring), ``"cpu"`` (no
        accelerator) or ``"unknown"``.
    accelerator_type : str
        ``"gpu"``, ``"tpu"``, ``"other"``, ``"cpu"``, or ``""`` when unknown.
    vendor, family, generation : str
        Catalog facts (``""`` when unknown).
    generation_rank : int or None
        Order of the generation within its vendor (Volta 1, Ampere 2, Ada 3, Hopper 4, ...).
    release_year : int or None
    modelled : bool
        The product has the dense peak and memory bandwidth the performance model needs.
    note : str
        Why a name is a stand-in or unplaced (from the alias table).
    assumed : str
        What placing the name assumed, for a prediction's note (a stated capacity no alias
        lists taken as the product's); ``""`` when nothing was.
    """

    raw: str
    name: str
    accelerator_id: str
    match: str
    accelerator_type: str = ""
    vendor: str = ""
    family: str = ""
    generation: str = ""
    generation_rank: int | None = None
    release_year: int | None = None
    modelled: bool = False
    note: str = ""
    assumed: str = ""

    @property
    def known(self) -> bool:
        """False when no step of the resolver placed the name."""
        return self.match != "unknown"


@lru_cache(maxsize=1)
def accelerator_aliases() -> pd.DataFrame:
    """The alias table shipped with gpurank, indexed by model name (``accelerator``).

    Columns: ``accelerator_id`` (a catalog product), ``match`` (``exact``, ``stand-in`` or
    ``unplaced``) and ``note``.
    """
    with (
        resources.files("gpurank.engine.data").joinpath("accelerator_aliases.csv").open("rb") as fh
    ):
        df = pd.read_csv(fh, keep_default_na=False, dtype=str)
    return df.set_index("accelerator")


# -- the catalog side ------------------------------------------------------------------------


@dataclass(frozen=True)
class _CatalogIndex:
    by_key: dict  # lower-case accelerator_id / display_name -> accelerator_id
    by_model: dict  # lower-case model -> list of accelerator_id
    facts: dict  # accelerator_id -> identity facts and ``modelled``


def _int_or_none(v) -> int | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if math.isfinite(f) else None


def _str(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v).strip()


def _index(catalog: pd.DataFrame) -> _CatalogIndex:
    by_key: dict = {}
    by_model: dict = {}
    facts: dict = {}

    def col(name, default=None):
        return catalog[name] if name in catalog.columns else pd.Series([default] * len(catalog))

    peak = pd.to_numeric(col("bf16_dense_tflops"), errors="coerce").fillna(
        pd.to_numeric(col("fp16_dense_tflops"), errors="coerce")
    )
    bw = pd.to_numeric(col("mem_bw_tbps"), errors="coerce")
    mem = pd.to_numeric(col("mem_gb"), errors="coerce")
    rows = zip(
        catalog["accelerator_id"],
        col("display_name"),
        col("model"),
        col("vendor"),
        col("family"),
        col("generation"),
        col("generation_rank"),
        col("release_year"),
        col("accelerator_type"),
        peak,
        bw,
        mem,
    )
    for aid, disp, model, vendor, fam, gen, rank, year, atype, p, b, gb in rows:
        aid = _str(aid)
        if not aid:
            continue
        by_key.setdefault(aid.lower(), aid)
        if _str(disp):
            by_key.setdefault(_str(disp).lower(), aid)
        if _str(model):
            by_model.setdefault(_str(model).lower(), []).append(aid)
        facts[aid] = {
            "accelerator_type": _str(atype) or "gpu",
            "vendor": _str(vendor),
            "family": _str(fam) or _str(model),
            "generation": _str(gen),
            "generation_rank": _int_or_none(rank),
            "release_year": _int_or_none(year),
            "modelled": bool(p > 0) and bool(b > 0),
            "mem_gb": float(gb) if gb == gb else math.nan,
        }
    return _CatalogIndex(by_key, by_model, facts)


@lru_cache(maxsize=1)
def _builtin_index() -> _CatalogIndex:
    return _index(accelerator_catalog())


def _catalog_index(catalog) -> _CatalogIndex:
    if catalog is None:
        return _builtin_index()
    if not isinstance(catalog, pd.DataFrame):
        catalog = accelerator_catalog(catalog)
    return _index(catalog)


# -- the rules -------------------------------------------------------------------------------


def _mem_from(text: str) -> str:
    m = _MEM.search(text or "")
    return f"{m.group(1)}GB" if m else ""


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", _NOISE.sub(" ", _MARKS.sub("", text))).strip(" -")


def _tpu_version(text: str) -> str | None:
    if "trillium" in text.lower():
        return "v6e"
    if "ironwood" in text.lower():
        return "v7x"
    if _TPU_V5_LITE.search(text):
        return "v5e"
    m = _TPU.search(text)
    return f"v{m.group(1)}{(m.group(2) or '').lower()}" if m else None


def _gaudi(low: str) -> str:
    hl = _HL.search(low)
    card = hl.group(1) if hl else ""
    m = re.search(r"gaudi[\s_-]*(\d)", low)
    gen = m.group(1) if m else _HL_GEN.get(card, "")
    if gen != "3":
        return f"Gaudi{gen}" if gen not in ("", "1") else "Gaudi"
    if card in ("328", "388") or re.search(r"\b450[\s_-]*w\b", low):
        return "Gaudi3 450W"
    if card == "338" or re.search(r"pci-?e", low):
        return "Gaudi3 PCIe"
    return "Gaudi3"


def _rules(text: str, memory: str, hint: str) -> str | None:
    """The model name the rules give ``text``, or None when they cannot place it."""
    text = _MARKS.sub("", text)
    low = text.lower()
    if "tpu" in low or "trillium" in low or "ironwood" in low:
        version = _tpu_version(text) or _tpu_version(hint or "")
        return f"TPU {version}" if version else "TPU"
    if "gaudi" in low or _HL.search(low):
        return _gaudi(low)
    if "ipu" in low:
        if "bow" in low:
            return "Bow IPU"
        if "gc200" in low or "mk2" in low:
            return "IPU GC200"
        return None
    if "ascend" in low:
        return "Ascend 910" if "910" in low else None
    m = _TRAINIUM.search(text)
    if m:
        return f"Trainium{m.group(1)}"
    if "7900" in low and "xtx" in low:
        return "Radeon RX 7900 XTX"
    m = re.search(r"\bMI\s*(\d{3})([A-Z]?)\b", text, re.IGNORECASE)
    if m:
        return f"MI{m.group(1)}{m.group(2).upper()}"
    cleaned = _NOISE.sub(" ", text)
    m = _NV_MODEL.search(cleaned)
    if not m:
        return next((name for pat, name in _ARCH_ONLY if pat.search(cleaned)), None)
    model = re.sub(r"[\s_-]+", " ", m.group(1).upper()).replace("RTXA", "RTX A")
    model = re.sub(r"^RTX\s*", "RTX ", model)
    if re.fullmatch(r"A\d{4}", model):
        # a bare workstation number (SkyPilot's "A6000") is the RTX card of that number
        model = "RTX " + model
    if model.startswith("RTX PRO"):
        model = "RTX PRO " + re.sub(r"\D", "", model)
        rest = cleaned[m.end() :]
        edition = next((e for pat, e in _RTX_PRO_EDITIONS if pat.search(rest)), "")
        return f"{model} {edition}".strip()
    if model in _SINGLE_SKU or model.startswith("RTX"):
        return model
    rest = cleaned[m.end() :]
    form = ""
    # NVL before PCIe: "H100 NVL Tensor Core GPU (PCIe)" is the NVL card
    if re.search(r"\bNVL\b", rest, re.IGNORECASE):
        form = "NVL"
    else:
        fm = re.search(r"SXM(\d?)|PCI-?e", rest, re.IGNORECASE)
        if fm and fm.group(0).upper().startswith("SXM"):
            if model in _SXM_ONLY:
                form = "SXM"
            else:
                form = fm.group(0).upper() if fm.group(1) else _SXM_GEN.get(model, "SXM")
        elif fm:
            form = "PCIe"
    mem = _mem_from(rest) or _mem_from(memory)
    if model == "H100" and not form and mem == "80GB" and _HBM3.search(rest):
        # "NVIDIA H100 80GB HBM3" is how NVIDIA's tools name the SXM5 board (the PCIe card
        # has HBM2e and is named "H100 PCIe")
        form = "SXM5"
    h_variant = model == "V100" and (
        re.search(r"(?:^|[-\s])H(?:$|[-\s])", rest.upper()) is not None
        or (form == "SXM3" and _V100_H_POWER.search(text) is not None)
    )
    name = "-".join([model] + [p for p in (form, mem) if p])
    if h_variant:
        name += "-H"
    return name


def normalize_accelerator(raw: str, *, memory: str = "", hint: str = "") -> tuple[str, bool]:
    """Return ``(model_name, listed)``: the rules' model name and whether the alias table
    lists it.

    ``memory`` is the description's accelerator memory capacity (used when the name has
    none); ``hint`` is other text about the system (system name, id), used only to find a
    TPU version. A name the rules cannot place comes back cleaned of vendor words, with
    ``listed=False``. CPU-only names (``N/A``) give ``("", True)``.
    """
    text = (raw or "").strip()
    if text.lower() in CPU_ONLY_NAMES:
        return "", True
    name = _rules(text, memory, hint)
    if name is None:
        return _clean(text) or text, False
    return name, name in accelerator_aliases().index


def resolve_accelerator(
    raw, *, memory: str = "", hint: str = "", catalog=None
) -> ResolvedAccelerator:
    """Resolve one accelerator name: catalog keys, then the rules, the alias table and the
    catalog.

    Parameters
    ----------
    raw : str
        Free text (``"NVIDIA H200-SXM5-141GB"``), a model name (``"A100-SXM4-80GB"``), a
        catalog ``accelerator_id`` or ``display_name``. ``None``/NaN is an unknown name.
    memory : str
        The description's accelerator memory capacity, used when the name has none.
    hint : str
        Other text about the system (system name, id), used only to find a TPU version.
    catalog : DataFrame or path, optional
        The accelerator catalog facts come from; the built-in one when omitted.

    Returns
    -------
    ResolvedAccelerator
    """
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return ResolvedAccelerator("", "", "", "unknown")
    text = str(raw).strip()
    if text.lower() in CPU_ONLY_NAMES:
        return ResolvedAccelerator(text, "", "", "cpu", accelerator_type="cpu")
    idx = _catalog_index(catalog)
    name, listed = normalize_accelerator(text, memory=memory, hint=hint)
    aid = idx.by_key.get(text.lower())
    if aid is not None:
        return _placed(text, name if listed else text, aid, "exact", "", idx)
    hit = _lookup(name, idx)
    if hit is not None:
        return _placed(text, name, *hit, idx)
    # a capacity no alias lists ("B300-268GB": usable, physical and GiB figures differ) names
    # the product its base name places, when it is within a tenth of that product's memory
    m = _STATED_MEM.match(name)
    if m:
        hit = _lookup(m.group(1), idx)
        if hit is not None and hit[1] in ("exact", "stand-in"):
            have = idx.facts[hit[0]]["mem_gb"]
            if abs(int(m.group(2)) - have) <= 0.1 * have:
                stated = f"{m.group(2)} GB stated: the {m.group(1)}'s {have:g} GB"
                note = stated + (f"; {hit[2]}" if hit[2] else "")
                return replace(_placed(text, m.group(1), hit[0], hit[1], note, idx),
                               assumed=f"accelerator memory: {m.group(2)} GB stated, "
                                       f"taken as the {m.group(1)}'s {have:g} GB")
    atype = "tpu" if "tpu" in name.lower() else ""
    return ResolvedAccelerator(text, name, "", "unknown", accelerator_type=atype)


#: A rules' name that ends in a capacity (``B300-268GB``, ``H200-SXM5-143GB``).
_STATED_MEM = re.compile(r"^(.+)-(\d{1,4})GB$")


def _lookup(name: str, idx: _CatalogIndex):
    """``(accelerator_id, match, note)`` of a model name: the alias table, a catalog key, or
    the one product of a catalog model; None where none places it."""
    aliases = accelerator_aliases()
    if name in aliases.index:
        row = aliases.loc[name]
        if row["accelerator_id"] in idx.facts:
            return row["accelerator_id"], row["match"], row["note"]
    aid = idx.by_key.get(name.lower())
    if aid is not None:
        return aid, "exact", ""
    models = idx.by_model.get(name.lower(), [])
    return (models[0], "exact", "") if len(models) == 1 else None


def _placed(raw, name, aid, match, note, idx: _CatalogIndex) -> ResolvedAccelerator:
    f = idx.facts[aid]
    performance = match in ("exact", "stand-in")
    return ResolvedAccelerator(
        raw=raw,
        name=name,
        accelerator_id=aid if performance else "",
        match=match,
        accelerator_type=f["accelerator_type"],
        vendor=f["vendor"],
        family=f["family"],
        generation=f["generation"],
        generation_rank=f["generation_rank"],
        release_year=f["release_year"],
        modelled=performance and f["modelled"],
        note=note,
    )


def resolve_accelerators(names, catalog=None, *, name: str = "accelerators") -> list[str]:
    """Catalog ids for a selection of accelerators (the simulator's ``accelerators=``).

    Each name may be an ``accelerator_id``, a ``display_name``, a catalog ``model`` (all of
    its products: ``"H100"`` selects the SXM5, PCIe and NVL boards) or any name
    :func:`resolve_accelerator` places on a product (``"NVIDIA H200-SXM5-141GB"``). Ids come
    back in the order named, each once.

    Raises
    ------
    UsageError
        A name resolves to no product of ``catalog``; the message names it.
    """
    if isinstance(names, str):
        names = [names]
    idx = _catalog_index(catalog)
    ids: list[str] = []
    for raw in names:
        key = str(raw).strip().lower()
        if key in idx.by_key:
            hit = [idx.by_key[key]]
        elif key in idx.by_model:
            hit = idx.by_model[key]
        else:
            r = resolve_accelerator(raw, catalog=catalog)
            hit = [r.accelerator_id] if r.accelerator_id in idx.facts else []
        if not hit:
            examples = ", ".join(list(idx.facts)[:5])
            raise UsageError(
                f"{name}: unknown accelerator {raw!r}; use an accelerator_id, display name or "
                f"model from the catalog, e.g. {examples}"
            )
        for h in hit:
            if h not in ids:
                ids.append(h)
    return ids
