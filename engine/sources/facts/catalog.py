"""Hardware and price facts the project maintains, with the source of every number.

The tables ship in ``gpurank/engine/data/``:

* ``accelerators.csv``     one row per ``accelerator_id``: the one fact table of every product
  gpurank names (vendor, family, generation and its rank, release year, accelerator type) and,
  where known, the performance facts (peak rates, memory size and bandwidth, power, chassis
  limit). A row without a dense peak or a memory bandwidth is known but not modelled.
* ``interconnects.csv``    intra-node links and inter-node networks (bandwidth per direction)
* ``host_cpus.csv``        host CPU models (cores per socket, power, relative decode speed)
* ``prices.csv``           price per accelerator-hour by provider (cloud, GPU cloud, marketplaces)
* ``instance_networks.csv`` the scale-out network of cloud instances a price catalog names
  without one (SkyPilot's ``vms.csv`` has no network column), each with its source
* ``resnet50_epochs_vs_batch.csv``  MLPerf reference epochs to converge vs global batch

Every loader takes an optional ``path`` (a CSV with at least the required columns) or a
DataFrame, so users can pass their own; a table missing a required column raises
:class:`~gpurank.engine.errors.DataError` naming the table, the column and what is required.
:func:`merge_accelerator_catalog` adds or updates a few accelerators instead: a user table of
only the rows and columns that differ, merged over the shipped catalog.
"""

from __future__ import annotations

import difflib
import io
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from ...errors import DataError
from .regular_files import UnreadableFile, excerpt, path_text, read_regular

__all__ = [
    "accelerator_catalog",
    "merge_accelerator_catalog",
    "interconnect_catalog",
    "host_cpu_catalog",
    "price_catalog",
    "instance_network_catalog",
    "epochs_curve",
    "TYPICAL_PROVIDER",
    "REQUIRED_COLUMNS",
]

#: Provider name of the rows ``price_catalog`` derives from ``price_typ_usd_gpu_hr`` of the
#: accelerator catalog (a typical market rate where no provider price was retrieved).
TYPICAL_PROVIDER = "Typical rate (catalog)"

REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "accelerators": (
        "accelerator_id", "vendor", "model", "variant", "release_year", "bf16_dense_tflops",
        "fp16_dense_tflops", "mem_gb", "tdp_w",
    ),
    "interconnects": ("link_id", "scope", "aggregate_GB_s_per_dir"),
    "host_cpus": ("host_cpu", "cores_per_socket", "max_sockets", "tdp_w"),
    "prices": ("provider", "accelerator_id", "usd_per_accel_hr"),
    "instance_networks": ("provider", "instance", "network", "source"),
    "epochs_curve": ("global_batch", "mean_epochs_to_75.9pct"),
}

_FILES = {
    "accelerators": "accelerators.csv",
    "interconnects": "interconnects.csv",
    "host_cpus": "host_cpus.csv",
    "prices": "prices.csv",
    "instance_networks": "instance_networks.csv",
    "epochs_curve": "resnet50_epochs_vs_batch.csv",
}


#: A user catalog larger than this is refused before it is read (the built-in ones are < 64 KB).
MAX_TABLE_BYTES = 64 << 20


def _read_csv_file(where: str, p: Path, **read_csv) -> pd.DataFrame:
    """The CSV file ``p`` (a regular file of at most :data:`MAX_TABLE_BYTES`) as a DataFrame;
    every failure is a one-line DataError that begins with ``where``."""
    if not (p.exists() or p.is_symlink()):
        raise DataError(f"{where} does not exist; pass a CSV file path or a DataFrame")
    try:
        data = read_regular(p, limit=MAX_TABLE_BYTES)
    except UnreadableFile as exc:
        raise DataError(f"{where} {str(exc).removesuffix('; skipped')}") from None
    try:
        return pd.read_csv(io.BytesIO(data), **read_csv)
    except Exception as exc:  # noqa: BLE001 - pandas raises several parser error types
        raise DataError(f"{where} could not be read as CSV: "
                        f"{excerpt(' '.join(str(exc).split()), 160)}") from None


@lru_cache(maxsize=32)
def _read(kind: str, path: str | None) -> pd.DataFrame:
    if path is None:
        with resources.files("gpurank.engine.data").joinpath(_FILES[kind]).open("rb") as fh:
            return pd.read_csv(fh)
    return _read_csv_file(f"{kind} table '{path_text(Path(path))}'", Path(path))


def _load(kind: str, source) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        df = source.copy()
        where = "DataFrame"
    else:
        df = _read(kind, None if source is None else str(source)).copy()
        where = "built-in" if source is None else f"'{source}'"
    missing = [c for c in REQUIRED_COLUMNS[kind] if c not in df.columns]
    if missing:
        raise DataError(
            f"{kind} table ({where}) is missing column '{missing[0]}'; "
            f"required columns are: {', '.join(REQUIRED_COLUMNS[kind])}"
        )
    if len(df) == 0:
        raise DataError(f"{kind} table ({where}) has no rows; at least one row is required")
    return df


def accelerator_catalog(path=None) -> pd.DataFrame:
    """Return the accelerator catalog as a new DataFrame, one row per ``accelerator_id``.

    Parameters
    ----------
    path : str, Path or DataFrame, optional
        A CSV with the same columns as the built-in catalog; the built-in one when omitted.
        Columns the simulator adds (``display_name``, ``family``, ``generation``,
        ``accelerator_type``, ``generation_rank``, ``max_accels_per_node``, ``intra_link_id``,
        ``dali_supported``, ``host_cpu_fixed``, ``host_cpus_per_accel``) are filled with
        defaults when a user table lacks them; ``mem_bw_tbps`` (the memory term of the model)
        must be given for a row to be modelled. The dense fp8/fp4 peaks and the scale-up
        domain (``fp8_dense_tflops``, ``fp4_dense_tflops``, ``scaleup_domain``,
        ``scaleup_bw_GBps``) are NaN (not known) when it lacks them. To add or change a few
        accelerators, use :func:`merge_accelerator_catalog`.
    """
    df = _load("accelerators", path)
    if path is None:
        return df
    defaults = {
        "display_name": (df["vendor"].astype(str) + " " + df["model"].astype(str) + " "
                         + df["variant"].astype(str)),
        "family": df["model"].astype(str),
        "generation": df["model"].astype(str),
        "accelerator_type": "gpu",
        "generation_rank": float("nan"),
        "mem_bw_tbps": float("nan"),
        "max_accels_per_node": 8,
        "intra_link_id": "pcie_gen4_x16",
        "dali_supported": (df["vendor"].astype(str).str.upper() == "NVIDIA").astype(int),
        "host_cpu_fixed": float("nan"),
        "host_cpus_per_accel": float("nan"),
        "fp8_dense_tflops": float("nan"),
        "fp4_dense_tflops": float("nan"),
        "scaleup_domain": float("nan"),
        "scaleup_bw_GBps": float("nan"),
    }
    for col, val in defaults.items():
        if col not in df.columns:
            df[col] = val
    return df


# -- a user's accelerators merged over the shipped catalog ------------------------------------

#: What a value of each numeric column of the accelerator catalog must be: ``(kind, unit)``,
#: kind ``rate`` (a finite number > 0), ``count`` (a whole number >= 1), ``year`` or ``flag``.
ACCELERATOR_NUMBERS: dict[str, tuple[str, str]] = {
    "release_year": ("year", ""),
    "bf16_dense_tflops": ("rate", "TFLOP/s"),
    "fp16_dense_tflops": ("rate", "TFLOP/s"),
    "fp8_dense_tflops": ("rate", "TFLOP/s"),
    "fp4_dense_tflops": ("rate", "TFLOP/s"),
    "fp32_tflops": ("rate", "TFLOP/s"),
    "mem_gb": ("rate", "GB"),
    "mem_bw_tbps": ("rate", "TB/s"),
    "intra_node_bw_GBps_bidir_per_gpu": ("rate", "GB/s"),
    "scaleup_domain": ("count", "accelerators"),
    "scaleup_bw_GBps": ("rate", "GB/s per direction"),
    "tdp_w": ("rate", "W"),
    "typ_accels_per_node": ("count", "accelerators"),
    "max_accels_per_node": ("count", "accelerators"),
    "generation_rank": ("count", ""),
    "host_cpus_per_accel": ("rate", "CPUs per accelerator"),
    "price_low_usd_gpu_hr": ("rate", "USD per accelerator-hour"),
    "price_typ_usd_gpu_hr": ("rate", "USD per accelerator-hour"),
    "price_high_usd_gpu_hr": ("rate", "USD per accelerator-hour"),
    "dali_supported": ("flag", ""),
}
#: The accelerator types the resolver knows (``cpu`` is a system without accelerators).
ACCELERATOR_TYPES = ("gpu", "tpu", "other")
_ALLOWED = {
    "rate": "a finite number > 0",
    "count": "a whole number >= 1",
    "year": "a whole number from 1950 to 2100",
    "flag": "0 or 1",
}


def _given(value) -> str | None:
    """A user cell as text, or None when it is empty (not given)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _number(text: str, kind: str) -> float | None:
    """``text`` as a number of ``kind``, or None when it is not one."""
    try:
        v = float(text)
    except ValueError:
        return None
    if not math.isfinite(v):
        return None
    if kind == "rate":
        return v if v > 0 else None
    if kind == "flag":
        return v if v in (0.0, 1.0) else None
    if v != int(v):
        return None
    if kind == "count":
        return v if v >= 1 else None
    return v if 1950 <= v <= 2100 else None


def _closest(name: str, known: list[str]) -> str:
    """The known column ``name`` most likely means: one holding all its words (``fp8_tflops``
    -> ``fp8_dense_tflops``), else the most similar spelling, case aside."""
    low = {k.lower(): k for k in known}
    words = set(name.lower().replace("-", "_").split("_")) - {""}
    holding = [k for k in low if words <= set(k.split("_"))]
    near = difflib.get_close_matches(name.lower(), holding or list(low), n=1, cutoff=0.0)
    return low[near[0]]


def _user_table(user) -> tuple[pd.DataFrame, str, str]:
    """The user's table (a file's cells as text), how messages name it and how
    ``spec_sources`` does."""
    if isinstance(user, pd.DataFrame):
        return user.copy(), "accelerators table (DataFrame)", "user:DataFrame"
    p = Path(user)
    where = f"accelerators table '{path_text(p)}'"
    # text as written: an empty cell is "not given", "NA" is a value to refuse, not a NaN
    df = _read_csv_file(where, p, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    return df, where, f"user:{path_text(p)}"


def merge_accelerator_catalog(user, base=None) -> pd.DataFrame:
    """The accelerator catalog with a user's accelerators merged over it.

    Parameters
    ----------
    user : str, Path or DataFrame
        A CSV (or DataFrame) with an ``accelerator_id`` column and any other columns of the
        catalog. A row whose ``accelerator_id`` is in ``base`` sets that row's given fields
        (an empty cell keeps the catalog's value); a new ``accelerator_id`` adds a row, its
        missing identity fields filled: ``model`` = ``accelerator_id``, ``display_name`` =
        ``model``, ``family`` = ``model``, ``generation`` = ``family``, ``accelerator_type``
        = ``gpu``, ``max_accels_per_node`` = 8, ``intra_link_id`` = ``pcie_gen4_x16``,
        ``dali_supported`` = 1 for vendor NVIDIA, else 0; ``extra_source`` records which were
        filled. A row needs ``bf16_dense_tflops`` (or ``fp16_dense_tflops``) and
        ``mem_bw_tbps`` to be modelled.
    base : str, Path or DataFrame, optional
        The catalog to merge over; the shipped one when omitted.

    Returns
    -------
    DataFrame
        A new catalog (``base``'s columns, its rows first), usable wherever a catalog is
        taken (``accelerator_table=``, ``catalog=`` of the resolver).

    Raises
    ------
    DataError
        The table is unreadable, has no rows, lacks ``accelerator_id``, has a column the
        catalog does not (the message names the closest one), repeats or leaves out an
        ``accelerator_id``, or holds a value its column does not allow (see
        :data:`ACCELERATOR_NUMBERS`; ``accelerator_type`` is one of gpu, tpu, other). The
        message names the table, the ``accelerator_id``, the column, the value and what is
        allowed.
    """
    table, where, source = _user_table(user)
    cat = accelerator_catalog() if base is None else accelerator_catalog(base)
    known = list(cat.columns)
    table.columns = [str(c).strip() for c in table.columns]
    for pos, col in enumerate(list(table.columns), start=1):
        if col in known:
            continue
        if col == "" or col.startswith("Unnamed: "):
            # a trailing comma makes an unnamed, empty column: nothing to merge
            if all(_given(v) is None for v in table[col]):
                table = table.drop(columns=col)
                continue
            raise DataError(f"{where}: column {pos} has no name but holds values; name it "
                            "after a catalog column")
        raise DataError(
            f"{where} has unknown column {excerpt(col)}; the closest catalog column is "
            f"{_closest(col, known)!r} (a user catalog takes the columns of the accelerator "
            "catalog)"
        )
    if "accelerator_id" not in table.columns:
        raise DataError(f"{where} is missing column 'accelerator_id'; it names the accelerator "
                        "each row adds or updates (other columns are optional)")
    if len(table) == 0:
        raise DataError(f"{where} has no rows; at least one row is required")
    rows: list[tuple[str, dict]] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(table.to_dict("records"), start=1):
        aid = _given(rec.get("accelerator_id"))
        if aid is None:
            raise DataError(f"{where}: row {i} has no accelerator_id; every row needs one")
        if aid in seen:
            raise DataError(f"{where}: accelerator_id {excerpt(aid)} is given twice (rows "
                            f"{seen[aid]} and {i}); give each accelerator once")
        seen[aid] = i
        given = {}
        for col, raw in rec.items():
            text = _given(raw)
            if col == "accelerator_id" or text is None:
                continue
            if col in ACCELERATOR_NUMBERS:
                kind, unit = ACCELERATOR_NUMBERS[col]
                value = _number(text, kind)
                if value is None:
                    raise DataError(
                        f"{where}: accelerator_id {excerpt(aid)}, column {col!r} has "
                        f"{excerpt(text)}; allowed: {_ALLOWED[kind]}"
                        f"{f' ({unit})' if unit else ''} or an empty cell"
                    )
                given[col] = value
            elif col == "accelerator_type" and text.lower() not in ACCELERATOR_TYPES:
                raise DataError(
                    f"{where}: accelerator_id {excerpt(aid)}, column 'accelerator_type' has "
                    f"{excerpt(text)}; allowed: {', '.join(ACCELERATOR_TYPES)} or an empty cell"
                )
            else:
                given[col] = text.lower() if col == "accelerator_type" else text
        rows.append((aid, given))
    merged = _merged(cat, rows, source)
    _one_accelerator_per_name(merged, {aid for aid, _ in rows}, where)
    return merged


def _one_accelerator_per_name(cat: pd.DataFrame, touched: set, where: str) -> None:
    """Refuse a merge that leaves two accelerators with one ``display_name``: the resolver
    would place the name on the first without a word."""
    names = cat["display_name"].astype(str).str.strip().str.lower()
    ids = cat["accelerator_id"].astype(str)
    for name, group in ids.groupby(names.to_numpy()):
        if len(group) > 1 and touched & set(group):
            a, b = list(group)[:2]
            raise DataError(f"{where}: accelerator_ids {excerpt(a)} and {excerpt(b)} have one "
                            f"display_name {excerpt(name)}; a name must identify one "
                            "accelerator: give each its own display_name")


def _merged(cat: pd.DataFrame, rows: list[tuple[str, dict]], source: str) -> pd.DataFrame:
    """``cat`` with each ``(accelerator_id, given fields)`` set or added; ``source`` (how
    ``spec_sources`` names the user's table) marks every row it touched."""
    out = cat.copy().reset_index(drop=True)
    for col in out.columns:
        # text columns take text: no numeric dtype an all-empty column may have been read as
        if col not in ACCELERATOR_NUMBERS:
            out[col] = out[col].astype(object)
        else:
            out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    at = {aid: i for i, aid in enumerate(out["accelerator_id"].astype(str))}
    added = []
    for aid, given in rows:
        if aid in at:
            i = at[aid]
            for col, value in given.items():
                out.at[i, col] = value
            if "spec_sources" in out.columns and "spec_sources" not in given:
                old = _given(out.at[i, "spec_sources"])
                out.at[i, "spec_sources"] = ";".join(x for x in (old, source) if x)
            continue
        row = dict(given)
        model = row.setdefault("model", aid)
        filled = {
            "display_name": model,
            "family": model,
            "generation": row.get("family", model),
            "accelerator_type": "gpu",
            "max_accels_per_node": 8.0,
            "intra_link_id": "pcie_gen4_x16",
            "dali_supported": 1.0 if str(row.get("vendor", "")).upper() == "NVIDIA" else 0.0,
        }
        done = [f"{c}={v:g}" if isinstance(v, float) else f"{c}={v}"
                for c, v in filled.items() if c not in row]
        for col, value in filled.items():
            row.setdefault(col, value)
        row.setdefault("spec_sources", source)
        note = source + (f"; filled by gpurank: {', '.join(done)}" if done else "")
        row["extra_source"] = "; ".join(x for x in (row.get("extra_source"), note) if x)
        added.append({"accelerator_id": aid, **row})
    if added:
        new = pd.DataFrame(added).reindex(columns=out.columns)
        out = pd.concat([out, new.astype(out.dtypes.to_dict())], ignore_index=True)
    return out


def interconnect_catalog(path=None) -> pd.DataFrame:
    """Intra-node links and inter-node networks; ``aggregate_GB_s_per_dir`` is per GPU for
    intra-node links and per node for networks (see ``aggregate_applies_to``).
    ``spans_nodes = yes`` marks a pod fabric (TPU ICI) that the chips also use to reach
    chips on other hosts, in place of the host network."""
    df = _load("interconnects", path)
    if "rdma" not in df.columns:
        df["rdma"] = "yes"
    if "spans_nodes" not in df.columns:
        df["spans_nodes"] = "no"
    return df


def host_cpu_catalog(path=None) -> pd.DataFrame:
    """Host CPU models: ``cores_per_socket``, ``max_sockets``, ``tdp_w`` and
    ``decode_rate_factor`` (per-core JPEG decode speed relative to a 2019 Xeon core)."""
    df = _load("host_cpus", path)
    if "decode_rate_factor" not in df.columns:
        df["decode_rate_factor"] = 1.0
    return df


def instance_network_catalog(path=None) -> pd.DataFrame:
    """The scale-out network of cloud instances: ``provider`` (the catalog's cloud, lower
    case), ``instance``, ``network`` (a link id of the interconnect table or a text
    :func:`~.network_text.node_network` reads) and its ``source``."""
    return _load("instance_networks", path)


def price_catalog(path=None, *, accelerators=None, include_typical: bool = True) -> pd.DataFrame:
    """Price per accelerator-hour by provider.

    Parameters
    ----------
    path : str, Path or DataFrame, optional
        Columns ``provider, accelerator_id, usd_per_accel_hr`` at least (``provider_type``
        optional); the built-in table when omitted.
    accelerators : DataFrame, optional
        Accelerator catalog used for the typical-rate rows; the built-in one when omitted.
    include_typical : bool
        Add one row per accelerator with a ``price_typ_usd_gpu_hr`` under the provider
        ``"Typical rate (catalog)"`` (the catalog's typical market rate).
    """
    df = _load("prices", path)
    if "provider_type" not in df.columns:
        df["provider_type"] = "user"
    bad = df[~(pd.to_numeric(df["usd_per_accel_hr"], errors="coerce") > 0)]
    if len(bad):
        raise DataError(
            f"prices table has usd_per_accel_hr={bad['usd_per_accel_hr'].iloc[0]!r} for provider "
            f"'{bad['provider'].iloc[0]}'; prices must be numbers > 0"
        )
    df["usd_per_accel_hr"] = df["usd_per_accel_hr"].astype(float)
    if include_typical:
        acc = accelerator_catalog() if accelerators is None else accelerators
        if "price_typ_usd_gpu_hr" in acc.columns:
            typ = acc[pd.to_numeric(acc["price_typ_usd_gpu_hr"], errors="coerce") > 0]
            extra = pd.DataFrame({
                "provider": TYPICAL_PROVIDER,
                "provider_type": "typical rate",
                "accelerator_id": typ["accelerator_id"].to_numpy(),
                "usd_per_accel_hr": typ["price_typ_usd_gpu_hr"].astype(float).to_numpy(),
                "pricing_type": "typical (catalog price_typ_usd_gpu_hr)",
                "source_id": "accelerators.csv:price_sources",
            })
            df = pd.concat([df, extra], ignore_index=True)
    return df.reset_index(drop=True)


def epochs_curve(path=None) -> pd.DataFrame:
    """MLPerf ResNet-50 reference convergence points, sorted by ``global_batch``."""
    df = _load("epochs_curve", path)
    return df.sort_values("global_batch").reset_index(drop=True)
