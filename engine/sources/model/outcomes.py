"""Outcomes of configurations nobody has run: a table of configurations made analyzable.

``gpurank analyze configs.csv`` on a table without ``time_to_train_min`` (or with
``--predict``) first predicts each row's time to train, throughput, utilization, cost and
energy with :func:`~.predict.predict`, from its configuration columns alone, and analyzes
the predictions: the outcome columns take the predicted values, ``time_to_train_min_lo`` /
``_hi`` the 80% interval (which ``--robust`` draws inside), and ``prediction_basis`` /
``prediction_note`` stay beside them. Rows the model refuses keep NaN outcomes and their
reason.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds

from ...errors import DataError
from ...input_files import regular_file
from ...partitions import dataset_files
from .card import predict_workload
from .evaluation import PREDICTED, basis_kind
from .predict import INTERVAL_COLUMNS, predict

__all__ = ["predicted_outcomes", "OUTCOME_INTERVAL_COLUMNS", "needs_prediction",
           "table_columns"]

#: The interval columns of a table analyzed from predictions (the time's 80% interval).
OUTCOME_INTERVAL_COLUMNS = ("time_to_train_min_lo", "time_to_train_min_hi")


def table_columns(path) -> tuple[str, ...]:
    """The column names of a Parquet file or folder or a CSV file, without reading its rows
    (``()`` when they cannot be read: the reader then says why)."""
    p = Path(path)
    try:
        if p.is_dir() or p.suffix.lower() in (".parquet", ".pq", ".parq"):
            if p.is_dir():
                dataset_files(p)  # no FIFO or device among the parts (it would block)
            else:
                regular_file(p, what="table file")
            return tuple(ds.dataset(p, format="parquet").schema.names)
        if p.suffix.lower() in (".csv", ".tsv", ".txt"):
            regular_file(p, what="table file")  # a FIFO would block the header's read
            sep = "\t" if p.suffix.lower() == ".tsv" else ","
            return tuple(pd.read_csv(p, nrows=0, sep=sep).columns)
    except Exception:  # noqa: BLE001 - an unreadable table is the reader's to report
        return ()
    return ()


def needs_prediction(columns) -> bool:
    """Whether a table with these columns is configurations without measured outcomes."""
    cols = set(columns)
    return "time_to_train_min" not in cols and {"accelerator", "n_accelerators"} <= cols


def predicted_outcomes(table: pd.DataFrame, *, model=None, accelerator_table=None,
                       workload=None) -> tuple[pd.DataFrame, list[str]]:
    """``table`` with its outcome columns predicted, and the notes an analysis reports.

    Parameters
    ----------
    table : DataFrame
        Configurations (:mod:`.configs`'s canonical columns); outcome columns it has are
        replaced by the predictions (the measured ones are kept as ``measured_<column>``).
    model : CalibratedModel, optional
        The shipped model of each row's workload when omitted.
    accelerator_table : DataFrame or path, optional
        The accelerator catalog (a user catalog merged over the built-in one).
    workload : Workload, optional
        Every row's workload (a shipped one or a model card's,
        :mod:`~gpurank.engine.sources.model.card`); without ``model``, a card takes the
        nearest calibrated workload's.
    """
    missing = [c for c in ("accelerator", "n_accelerators") if c not in table.columns]
    if missing:
        raise DataError(f"the table has no column '{missing[0]}': predicting outcomes needs "
                        "the configuration columns accelerator, n_accelerators and, where "
                        "known, n_nodes, accelerators_per_node, global_batch_size, ...")
    t = table.copy()
    for c in ("n_nodes", "accelerators_per_node"):
        if c not in t.columns:
            t[c] = np.nan
    if workload is not None and model is None:
        pred = predict_workload(t, workload, use_table_epochs=False,
                                accelerator_table=accelerator_table)
    else:
        pred = predict(t, model, workload=workload, use_table_epochs=False,
                       accelerator_table=accelerator_table)
    out = table.copy()
    for c in PREDICTED:
        if c in out.columns:
            out[f"measured_{c}"] = out[c]
        out[c] = pred[f"predicted_{c}"].to_numpy(float)
    out[OUTCOME_INTERVAL_COLUMNS[0]] = pred[INTERVAL_COLUMNS[0]].to_numpy(float)
    out[OUTCOME_INTERVAL_COLUMNS[1]] = pred[INTERVAL_COLUMNS[1]].to_numpy(float)
    for c in ("accelerator_id", "prediction_basis", "prediction_note",
              "prediction_extrapolation", "predicted_bottleneck"):
        out[c] = pred[c].to_numpy()
    basis = pred["prediction_basis"].astype(str)
    kinds = basis.map(basis_kind)
    refused = int((basis == "").sum())
    counts = ", ".join(f"{k} {int(n)}" for k, n in kinds[kinds != ""].value_counts().items())
    notes = [f"outcomes predicted from the configuration columns for {len(out) - refused:,} "
             f"of {len(out):,} rows ({counts or 'none'}; 80% intervals in "
             "time_to_train_min_lo/_hi)"]
    if refused:
        reasons = pred.loc[basis == "", "prediction_note"].astype(str).value_counts()
        top = "; ".join(f"{r} ({n})" for r, n in reasons.head(3).items())
        notes.append(f"{refused:,} rows have no prediction: {top}")
    assumed = int((pred["prediction_note"].astype(str) != "").sum()) - refused
    if assumed > 0:
        notes.append(f"{assumed:,} predicted rows assume or extrapolate an input "
                     "(prediction_note says which)")
    return out, notes
