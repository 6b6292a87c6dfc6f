"""Offers from GPU price catalogs: SkyPilot's ``vms.csv`` files and gpurank's own offers CSV.

``read_offers(path)`` takes

* a SkyPilot catalog file (``catalogs/v7/<cloud>/vms.csv``: ``InstanceType,
  AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, Region, GpuInfo, SpotPrice``,
  in any column order, ``AvailabilityZone`` where the cloud has them); the provider is the
  cloud's folder name;
* a folder of them (one per cloud, as SkyPilot lays them out: ``<cloud>/vms.csv``, read in
  name order);
* gpurank's own offers CSV (``provider, instance, accelerator, accelerators_per_instance,
  usd_per_hour, spot_usd_per_hour, region, interconnect, network``, and ``date`` when known).

and returns one row per (instance, price): the on-demand and the spot price of an instance
are two offers, and every region that charges that price is listed in ``regions`` (planned
once). Accelerator names go through the one resolver (:mod:`.accelerators`), with the
memory SkyPilot's ``GpuInfo`` states and the form factor the instance name says (``pcie``,
``sxm``); rows without an accelerator (CPU instances) are skipped and counted; names the
resolver cannot place on one catalog product are counted and listed (:attr:`Offers.unresolved`),
never dropped silently. A SkyPilot catalog has no network column: an instance of
``engine/data/instance_networks.csv`` takes the network stated there, with its source in
``offer_note``; any other is planned on the model's assumed network (and its note says so).
Rows with an unusable price, count, formula-like text or no provider or instance name are
skipped with one note per kind (:attr:`Offers.skipped`). Every file is read through
:func:`~.regular_files.read_regular` (regular files of at most :data:`OFFERS_FILE_LIMIT`
bytes).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import DataError, UsageError
from .accelerators import CPU_ONLY_NAMES, resolve_accelerator
from .catalog import instance_network_catalog
from .regular_files import UnreadableFile, excerpt, path_text, read_regular

__all__ = [
    "OFFERS_FILE_LIMIT",
    "SKYPILOT_COLUMNS",
    "OFFER_COLUMNS",
    "OFFERS_TABLE_COLUMNS",
    "Offers",
    "read_offers",
]

#: The largest catalog file read (SkyPilot's largest, AWS's, is a few MB).
OFFERS_FILE_LIMIT = 512 << 20
#: The columns a SkyPilot catalog file must have (``SpotPrice`` and ``GpuInfo`` when known).
SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
#: The columns gpurank's own offers CSV must have (``spot_usd_per_hour``, ``interconnect``,
#: ``network`` and ``date`` when known).
OFFER_COLUMNS = ("provider", "instance", "accelerator", "accelerators_per_instance",
                 "usd_per_hour", "region")
#: The columns of :attr:`Offers.table`.
OFFERS_TABLE_COLUMNS = ("provider", "instance", "accelerator", "accelerator_id",
                        "accelerators_per_instance", "spot", "usd_per_hour", "regions",
                        "n_regions", "interconnect", "network", "source", "catalog_date",
                        "offer_note")

_KEYS = ["provider", "instance", "accelerator", "count", "memory", "interconnect", "network",
         "source", "date"]
_FORMULA = re.compile(r"^[=+@\t\r]")
_MIB = re.compile(r"SizeInMiB'?\"?\s*:\s*(\d+)")
_FORM = (("pcie", "PCIe"), ("sxm", "SXM"), ("nvl", "NVL"))
#: SkyPilot's spellings that name a board the plain name does not: GCP's A3 Mega is the
#: H100 SXM 80 GB with more network (cloud.google.com/compute/docs/gpus).
_SKYPILOT_NAMES = {"H100-MEGA": ("H100", "SXM")}
#: The memory SkyPilot's plain names mean when ``GpuInfo`` states none: it spells other
#: sizes out (``A100-80GB``, ``V100-32GB``).
_SKYPILOT_MEMORY = {"H100": "80GB", "H100-MEGA": "80GB", "A100": "40GB", "V100": "16GB",
                    "GH200": "96GB", "H200": "141GB"}
#: Boards sold only as 8-way HGX/SXM baseboards at 8 per instance (an 8-GPU H100, H200 or
#: A100 instance with no form factor in its name is an HGX server).
_HGX_8 = frozenset({"H100", "H200", "A100", "A100-80GB"})


@dataclass(frozen=True)
class Offers:
    """The offers of one or more price catalogs.

    Attributes
    ----------
    table : DataFrame
        One row per (instance, price kind, price), columns :data:`OFFERS_TABLE_COLUMNS`;
        only offers whose accelerator resolved to a catalog product.
    rows : int
        Rows read, every file together.
    cpu_rows : int
        Rows without an accelerator (skipped).
    unresolved : tuple of (name, rows)
        Accelerator names the resolver could not place on one product, with their row counts.
    skipped : tuple of str
        One line per kind of row skipped for bad values.
    files : tuple of str
    """

    table: pd.DataFrame
    rows: int
    cpu_rows: int
    unresolved: tuple
    skipped: tuple
    files: tuple

    @property
    def unresolved_rows(self) -> int:
        return int(sum(n for _, n in self.unresolved))

    def notes(self) -> list[str]:
        """What the reading left out, one line per kind."""
        out = [f"read {self.rows:,} catalog rows from {len(self.files)} file(s): "
               f"{len(self.table):,} offers (instance x price) with a modelled accelerator; "
               f"{self.cpu_rows:,} rows without an accelerator skipped"]
        if self.unresolved:
            names = ", ".join(f"{excerpt(n, 40)} ({c:,})" for n, c in self.unresolved[:20])
            more = f", and {len(self.unresolved) - 20} more" if len(self.unresolved) > 20 else ""
            out.append(f"{len(self.unresolved)} accelerator name(s) in {self.unresolved_rows:,} "
                       f"rows not resolved to one catalog product, not planned: {names}{more}")
        out.extend(self.skipped)
        return out


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.glob("*/vms.csv")) + sorted(path.glob("vms.csv"))
        if not found:
            found = sorted(p for p in path.glob("*.csv"))
        if not found:
            raise DataError(f"--offers '{path}' holds no vms.csv (SkyPilot lays catalogs out as "
                            "<cloud>/vms.csv) and no .csv file")
        return found
    if not path.exists():
        raise DataError(f"--offers '{path}' does not exist")
    return [path]


def _read_csv(raw: bytes, path: Path) -> pd.DataFrame:
    where = f"--offers file '{path_text(path)}'"
    try:
        header = pd.read_csv(io.BytesIO(raw), dtype=str, header=None, nrows=1,
                             skipinitialspace=True, encoding="utf-8-sig")
        df = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False,
                         skipinitialspace=True, encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{where} is not UTF-8 text") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise DataError(f"{where} is not a CSV table: {excerpt(msg, 200)}") from None
    # pandas renames a repeated column ("Price", "Price.1") and the first would be read
    # silently: which of two prices is meant is not ours to guess
    names = [str(c).strip() for c in header.iloc[0].tolist()] if len(header) else []
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise DataError(f"{where} has the column {excerpt(twice[0])} more than once; each "
                        "column must appear once")
    return df


def _read_files(files: list[Path], root: Path, skips: _Skips) -> list[tuple[Path, bytes]]:
    """The bytes of each catalog file; in a folder, an entry that is not a regular file (a
    FIFO, a device, a folder named vms.csv, a link to one) is skipped with a note."""
    out = []
    for f in files:
        try:
            out.append((f, read_regular(f, limit=OFFERS_FILE_LIMIT)))
        except UnreadableFile as exc:
            why = str(exc).removesuffix("; skipped")
            if not root.is_dir():
                raise DataError(f"--offers file '{path_text(f)}' {why}") from None
            skips.add(np.ones(1, bool), f"not a regular file ({why})", [str(f)],
                      unit="catalog files")
    if not out:
        raise DataError(f"--offers '{path_text(root)}' holds no readable catalog "
                        f"file ({'; '.join(skips.lines())})")
    return out


def _missing(df, required, kind, path):
    miss = [c for c in required if c not in df.columns]
    if miss:
        raise DataError(f"--offers file '{path}' has no column '{miss[0]}'; a {kind} needs the "
                        f"columns {', '.join(required)}")


def _col(df, name, default=""):
    return df[name].astype(str).str.strip() if name in df.columns else \
        pd.Series(default, index=df.index, dtype=object)


@lru_cache(maxsize=1)
def _instance_networks() -> dict:
    """``{(provider, instance): (network, source)}`` of the shipped instance network table
    (read once: every file of a catalog folder and the notes look it up)."""
    t = instance_network_catalog()
    return {(str(p).strip().lower(), str(i).strip()): (str(n).strip(), str(src).strip())
            for p, i, n, src in zip(t["provider"], t["instance"], t["network"], t["source"])}


def _normalized(df: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, str]:
    """The file's rows in one shape: provider, instance, accelerator, count, memory,
    price, spot, region, interconnect, network, source, date (all text)."""
    if "InstanceType" in df.columns or "AcceleratorName" in df.columns:
        _missing(df, SKYPILOT_COLUMNS, "SkyPilot catalog (vms.csv)", path)
        provider = path.parent.name or path.stem
        mem = _col(df, "GpuInfo").str.extract(_MIB, expand=False).fillna("")
        instance = _col(df, "InstanceType")
        nets = _instance_networks()
        network = [nets.get((provider.lower(), i), ("", ""))[0] for i in instance]
        out = pd.DataFrame({
            "provider": provider, "instance": instance,
            "accelerator": _col(df, "AcceleratorName"), "count": _col(df, "AcceleratorCount"),
            "memory": mem, "price": _col(df, "Price"), "spot": _col(df, "SpotPrice"),
            "region": _col(df, "Region"), "interconnect": "", "network": network,
            "date": _col(df, "date")})
        return out, "SkyPilot"
    _missing(df, OFFER_COLUMNS, "gpurank offers CSV", path)
    out = pd.DataFrame({
        "provider": _col(df, "provider"), "instance": _col(df, "instance"),
        "accelerator": _col(df, "accelerator"), "count": _col(df, "accelerators_per_instance"),
        "memory": "", "price": _col(df, "usd_per_hour"), "spot": _col(df, "spot_usd_per_hour"),
        "region": _col(df, "region"), "interconnect": _col(df, "interconnect"),
        "network": _col(df, "network"), "date": _col(df, "date")})
    return out, "offers"


class _Skips:
    """Counts of rows skipped, per reason, with the first example of each."""

    def __init__(self):
        self.counts: dict[str, list] = {}

    def add(self, mask, reason: str, values, *, unit: str = "catalog rows") -> None:
        n = int(np.count_nonzero(mask))
        if not n:
            return
        first = excerpt(str(np.asarray(values, dtype=object)[np.flatnonzero(mask)[0]]), 40)
        c = self.counts.setdefault((unit, reason), [0, first])
        c[0] += n

    def lines(self) -> tuple:
        return tuple(f"{n:,} {unit} skipped: {reason} (e.g. {first!r})"
                     for (unit, reason), (n, first) in self.counts.items())


def _prices(text: pd.Series) -> np.ndarray:
    return pd.to_numeric(text.where(text != ""), errors="coerce").to_numpy(float)


def _rows(df: pd.DataFrame, path: Path, skips: _Skips) -> tuple[pd.DataFrame, int]:
    """Long rows (one per price kind) of the GPU rows of one normalized file."""
    df = df.assign(source=str(path))
    acc = df["accelerator"].to_numpy(dtype=object)
    cpu = np.array([a.strip().lower() in CPU_ONLY_NAMES for a in acc], dtype=bool)
    df = df[~cpu]
    formula = np.zeros(len(df), dtype=bool)
    for c in ("provider", "instance", "accelerator", "region", "interconnect", "network"):
        f = df[c].str.contains(_FORMULA).to_numpy(bool)
        skips.add(f & ~formula, f"formula-like text in {c}", df[c])
        formula |= f
    df = df[~formula]
    # an offer that names no provider or no instance cannot be rented
    nameless = ((df["provider"] == "") | (df["instance"] == "")).to_numpy(bool)
    skips.add(nameless, "no provider or no instance name",
              df["provider"].where(df["provider"] == "", df["instance"]))
    df = df[~nameless]
    count = pd.to_numeric(df["count"], errors="coerce").to_numpy(float)
    bad_count = ~(np.isfinite(count) & (count >= 1) & (count == np.round(count)) &
                  (count <= 1024))
    skips.add(bad_count, "accelerator count not a whole number from 1 to 1024", df["count"])
    df, count = df[~bad_count], count[~bad_count]
    price, spot = _prices(df["price"]), _prices(df["spot"])
    ok_price = np.isfinite(price) & (price > 0) & (price < 1e6)
    ok_spot = np.isfinite(spot) & (spot > 0) & (spot < 1e6)
    skips.add(~ok_price & (df["price"] != "").to_numpy(),
              "on-demand price not a positive number under 1e6 USD/h", df["price"])
    skips.add(~ok_price & (df["price"] == "").to_numpy() & ~ok_spot, "no price", df["price"])
    skips.add(~ok_spot & (df["spot"] != "").to_numpy(),
              "spot price not a positive number under 1e6 USD/h (the on-demand price kept)",
              df["spot"])
    base = df.drop(columns=["price", "spot"]).assign(count=count.astype(np.int64))
    parts = [base[ok_price].assign(spot=False, usd_per_hour=price[ok_price]),
             base[ok_spot].assign(spot=True, usd_per_hour=spot[ok_spot])]
    return pd.concat(parts, ignore_index=True), int(cpu.sum())


def _resolution(name: str, instance: str, memory: str, count: int) -> tuple[str, str, str]:
    """(accelerator_id, resolved name, note) of one SkyPilot or offers name."""
    base, form = _SKYPILOT_NAMES.get(name, (name, ""))
    low = instance.lower()
    note = ""
    for word, ff in _FORM:
        if word in low:
            form = ff
            break
    if not form and base in _HGX_8 | {"V100"} and count == 8:
        form = "SXM"
        note = f"{name} x8 instance without a form factor in its name: an HGX (SXM) board assumed"
    mem = f"{round(int(memory) / 1024)}GB" if memory.isdigit() else \
        _SKYPILOT_MEMORY.get(name, "")
    r = resolve_accelerator(f"{base} {form}".strip(), memory=mem)
    if not r.accelerator_id:
        r2 = resolve_accelerator(name, memory=mem)
        if r2.accelerator_id:
            r, note = r2, ""
    if r.accelerator_id and r.match == "stand-in" and r.note:
        note = "; ".join(x for x in (note, f"{name} taken as {r.accelerator_id}: {r.note}") if x)
    if r.accelerator_id and r.assumed:
        note = "; ".join(x for x in (note, r.assumed) if x)
    return r.accelerator_id, r.name, note if r.accelerator_id else ""


def _network_note(nets: dict, provider, instance, network) -> str:
    """The note of a network taken from the instance table (none for one a table stated)."""
    net, source = nets.get((str(provider).lower(), str(instance)), ("", ""))
    return f"network: {net}, {source} (instance_networks.csv)" if net and net == network \
        else ""


def _by_price(long: pd.DataFrame) -> pd.DataFrame:
    """One row per offer at one price, its regions sorted and joined with ``;``."""
    keys = _KEYS + ["spot", "usd_per_hour"]
    long = long.astype({k: object for k in _KEYS + ["region"]})
    group = long.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()
    pairs = pd.DataFrame({"g": group, "region": long["region"].to_numpy(object)})
    pairs = pairs.drop_duplicates().sort_values(["g", "region"], kind="stable")
    g = pairs["g"].to_numpy()
    cuts = np.flatnonzero(np.diff(g)) + 1
    regions = [";".join(r) for r in np.split(pairs["region"].to_numpy(object), cuts)]
    first = long.iloc[np.unique(group, return_index=True)[1]][keys]
    order = np.argsort(group[np.unique(group, return_index=True)[1]], kind="stable")
    table = first.iloc[order].reset_index(drop=True)
    table["regions"] = regions
    table["n_regions"] = np.diff(np.append(np.append(0, cuts), len(g)))
    return table


def read_offers(path) -> Offers:
    """Read a price catalog (file or folder; see the module docstring).

    Raises
    ------
    UsageError
        ``path`` is empty text.
    DataError
        A file is unreadable, not a CSV table, or lacks a required column; or no row is a GPU
        offer with a usable price. One line, naming the file and the column.
    """
    if isinstance(path, str) and not path.strip():
        # Path("") is the current folder: an unset shell variable would read whatever is here
        raise UsageError("--offers is empty; name a vms.csv, a folder of them or an offers CSV")
    root = Path(path)
    files = _files(root)
    skips = _Skips()
    parts, rows, cpu_rows = [], 0, 0
    read = _read_files(files, root, skips)
    for f, raw in read:
        df, _kind = _normalized(_read_csv(raw, f), f)
        rows += len(df)
        long, cpu = _rows(df, f, skips)
        cpu_rows += cpu
        parts.append(long)
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if long.empty:
        raise DataError(f"--offers '{root}' has no GPU offer with a usable price ({rows:,} rows "
                        f"read, {cpu_rows:,} without an accelerator)"
                        + (f"; {skips.lines()[0]}" if skips.lines() else ""))
    # regions of one offer at one price are planned once
    table = _by_price(long)
    rows_per = long.groupby(["accelerator", "instance", "memory", "count"], sort=False).size()
    ids, names, notes = {}, {}, {}
    for (a, inst, mem, cnt) in rows_per.index:
        key = (a, inst, mem, cnt)
        ids[key], names[key], notes[key] = _resolution(a, inst, mem, int(cnt))
    k = list(zip(table["accelerator"], table["instance"], table["memory"], table["count"]))
    table["accelerator_id"] = [ids[x] for x in k]
    nets = _instance_networks()
    table["offer_note"] = [
        "; ".join(t for t in (notes[x], _network_note(nets, p, i, n)) if t)
        for x, p, i, n in zip(k, table["provider"], table["instance"], table["network"])]
    miss = {}
    for key, n in rows_per.items():
        if not ids[key]:
            label = key[0] if not names[key] or names[key] == key[0] else \
                f"{key[0]} ({names[key]})"
            miss[label] = miss.get(label, 0) + int(n)
    unresolved = tuple(sorted(miss.items(), key=lambda kv: (-kv[1], kv[0])))
    table = table[table["accelerator_id"] != ""].rename(
        columns={"count": "accelerators_per_instance", "date": "catalog_date"})
    table = table.drop(columns=["memory"]).reset_index(drop=True)
    text = [c for c in OFFERS_TABLE_COLUMNS if table[c].dtype == object or
            pd.api.types.is_string_dtype(table[c])]
    table = table.astype({c: object for c in text})
    return Offers(table=table[list(OFFERS_TABLE_COLUMNS)], rows=rows, cpu_rows=cpu_rows,
                  unresolved=unresolved, skipped=skips.lines(),
                  files=tuple(str(f) for f, _ in read))
