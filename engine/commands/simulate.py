"""``gpurank simulate``: a sweep written to Parquet (a file or a folder of parts) or CSV."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from ..outputs import publish_file
from ..params import check_param
from ..sources.facts.catalog import merge_accelerator_catalog
from ..sources.model.perfmodel import CalibratedModel
from ..sources.sweep.simulate import SIMULATE_CONSTRAINTS, simulate, simulate_to_parquet
from ..sources.sweep.writer import check_disk, check_memory
from ..sources.model.card import card_model, workload_arg

__all__ = ["run_simulate_cli", "sigterm_raises"]


@contextmanager
def sigterm_raises():
    """Turn SIGTERM into ``SystemExit(143)`` while the block runs (main thread only), so the
    staging output is removed on the way out like on any other exception; the previous
    handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):  # noqa: ARG001 - the signal API
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not settable here (embedded interpreters)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_simulate_cli(output, *, n, seed=0, model_path=None, accelerators=None, counts=None,
                     nodes=None, providers=None, row_group_rows=1_000_000, partitioned=False,
                     overwrite=False, check_size=True, workload=None, catalog=None,
                     batch="drawn"):
    """``gpurank simulate --n N --seed S [--workload NAME] [--model model.json]
    -o sweep.parquet``.

    ``workload`` names a shipped workload or MLPerf benchmark (``bert``, ``gpt3_175b``, ...)
    or a model card file (``*.toml``, :mod:`~gpurank.engine.sources.model.card`);
    without ``model_path`` its shipped model is used; a model fitted on another workload
    predicts it from that workload's efficiencies (``first-principles:<workload>``).
    ``catalog`` is a CSV of accelerators merged over the built-in catalog (its rows are
    sampled when they have a price: ``price_typ_usd_gpu_hr``).

    ``batch="fastest"`` gives each row the global batch it trains fastest at.
    Writes Parquet (file, or folder of parts with ``partitioned``) or, when ``output`` ends
    in ``.csv``, a CSV (in memory). Returns the summary dict of ``simulate_to_parquet``.
    Sizes are checked before any work (``check_size``; ``--no-size-check`` skips it) and a
    SIGTERM while writing ends the process with exit code 143 after the staging output is
    removed, leaving the target as it was.
    """
    # the sweep's size before any file is read
    check_param("n", n, *SIMULATE_CONSTRAINTS["n"])
    check_param("seed", seed, *SIMULATE_CONSTRAINTS["seed"])
    model = CalibratedModel.from_json(model_path) if model_path is not None else None
    wl = workload_arg(workload) if workload is not None else None
    if wl is not None and model is None:
        model = card_model(wl)[0]  # a card borrows the nearest calibrated workload's model
    acc = merge_accelerator_catalog(catalog) if catalog is not None else None
    output = Path(output)
    kw = dict(seed=seed, model=model, accelerators=accelerators, counts=counts, nodes=nodes,
              providers=providers, workload=wl, accelerator_table=acc, batch=batch)
    if output.suffix.lower() == ".csv":
        if partitioned:
            raise UsageError(f"--output '{output}' ends in .csv; --partitioned writes a folder "
                             "of Parquet files: name a folder")
        if check_size:
            check_memory(int(n))
            check_disk(int(n), output, "csv")
        t0 = time.perf_counter()
        with sigterm_raises(), publish_file(output, name="--output", overwrite=overwrite) as pub:
            df = simulate(n, check_size=False, **kw)
            df.to_csv(pub.path, index=False)
        return {"path": str(output), "rows": len(df), "excluded": df.attrs["excluded"],
                "excluded_by_reason": df.attrs["excluded_by_reason"],
                "seconds": time.perf_counter() - t0, "row_groups": 0, "notes": pub.notes}
    with sigterm_raises():
        return simulate_to_parquet(output, n, row_group_rows=row_group_rows,
                                   partitioned=partitioned, overwrite=overwrite, name="--output",
                                   check_size=check_size, **kw)
