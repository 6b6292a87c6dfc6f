"""Hardware and price facts the project maintains, with the source of every number.

The tables ship in ``gpurank/engine/data/``:

* ``accelerators.csv``     one row per ``accelerator_id``: the one fact table of every product
  gpurank names (vendor, family, generation and its rank, release year, accelerator type) and,
  where known, the performance facts (peak rates, memory size and bandwidth, power, chassis
  limit). A row without a dense peak or a memory bandwidth is known but not modelled.
* ``interconnects.csv``    intra-node links and inter-node networks (bandwidth per direction)
* ``host_cpus.csv``        host CPU models (cores per socket, power, relative decode speed)
* ``prices.csv``           price per accelerator-hour by provider (cloud, GPU cloud, marketplaces)
* ``resnet50_epochs_vs_batch.csv``  MLPerf reference epochs to converge vs global batch

Every loader takes an optional ``path`` (a CSV with at least the required columns) or a
DataFrame, so users can pass their own; a table missing a required column raises
:class:`~gpurank.engine.errors.DataError` naming the table, the column and what is required.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from .errors import DataError

__all__ = [
    "accelerator_catalog",
    "interconnect_catalog",
    "host_cpu_catalog",
    "price_catalog",
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
    "epochs_curve": ("global_batch", "mean_epochs_to_75.9pct"),
}

_FILES = {
    "accelerators": "accelerators.csv",
    "interconnects": "interconnects.csv",
    "host_cpus": "host_cpus.csv",
    "prices": "prices.csv",
    "epochs_curve": "resnet50_epochs_vs_batch.csv",
}


#: A user catalog larger than this is refused before it is read (the built-in ones are < 64 KB).
MAX_TABLE_BYTES = 64 << 20


@lru_cache(maxsize=32)
def _read(kind: str, path: str | None) -> pd.DataFrame:
    import io

    from .sources.regular_files import UnreadableFile, excerpt, path_text, read_regular

    if path is None:
        with resources.files("gpurank.engine.data").joinpath(_FILES[kind]).open("rb") as fh:
            return pd.read_csv(fh)
    p = Path(path)
    if not (p.exists() or p.is_symlink()):
        raise DataError(f"{kind} table '{path_text(p)}' does not exist; pass a CSV file path or "
                        "a DataFrame")
    try:
        data = read_regular(p, limit=MAX_TABLE_BYTES)
    except UnreadableFile as exc:
        raise DataError(f"{kind} table '{path_text(p)}' {str(exc).removesuffix('; skipped')}") from None
    try:
        return pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pandas raises several parser error types
        raise DataError(f"{kind} table '{path_text(p)}' could not be read as CSV: "
                        f"{excerpt(' '.join(str(exc).split()), 160)}") from None


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
        must be given for a row to be modelled.
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
    }
    for col, val in defaults.items():
        if col not in df.columns:
            df[col] = val
    return df


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
