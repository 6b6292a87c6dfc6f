"""The arrays the performance model reads, one declared field each.

:class:`ConfigArrays` holds what :func:`~.perfmodel.evaluate` evaluates (one value per
row, or a scalar for every row); :class:`RowFacts` what a row's outcomes need beyond them
(samples to converge, power, price, the basis of its efficiency, ...). Both are built by
:func:`~.inputs.model_inputs` from a table and by the simulator's chunks
(:mod:`gpurank.engine.sources.sweep.rows`) from draws; both are written once against NumPy
or a device array module.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from ...errors import UsageError

__all__ = ["ConfigArrays", "RowFacts"]


def _take(obj, rows):
    """``obj`` with each one-dimensional field cut to ``rows`` (scalars and absent fields
    kept)."""
    return replace(obj, **{f.name: np.asarray(v)[rows] for f in fields(obj)
                           if np.ndim(v := getattr(obj, f.name)) == 1})


@dataclass(frozen=True)
class ConfigArrays:
    """The per-row inputs of :func:`~.perfmodel.evaluate` (arrays broadcastable to one
    length). The optional ones are ``None`` when absent.

    Attributes
    ----------
    peak_tflops : array
        Dense peak (TFLOP/s) in the workload's wide training format (bf16/fp16).
    compute_efficiency : array
        Achieved fraction of that peak while computing.
    mem_bw_tbps : array
        Memory bandwidth (TB/s).
    n_accelerators, accelerators_per_node, n_nodes : array
        The topology.
    intra_GBps : array
        Intra-node bandwidth per accelerator, per direction (GB/s).
    inter_GBps : array
        Network bandwidth per node, per direction, protocol efficiency applied (GB/s).
    cpu_cores_per_accelerator : array
        Host cores per accelerator (NaN: no limit).
    cpu_decode_factor : array
        The host CPU's decode rate relative to the model's.
    dali : array of bool
        Whether decoding runs on the accelerator.
    local_batch : array or None
        Per replica (per accelerator for a data-parallel workload); ``None`` only where the
        batch is still to be chosen (:func:`~.batch_choice.fastest_batches`).
    micro_batch : array or None
        The batch one pass runs when the replica's batch is accumulated over several;
        ``local_batch`` when absent.
    model_parallel : array or None
        The accelerators one replica spans; ``Workload.shards`` when absent.
    host_GBps : array or None
        Host-to-accelerator link per accelerator; ``DEFAULT_HOST_GBPS`` when absent.
    narrow_peak_tflops : array or None
        Dense peak in the workload's narrower format (fp8/fp4); ``peak_tflops`` where none.
    narrow_bytes : array or None
        Bytes of an element in that format over a bf16 one (fp8 0.5, fp4 0.28 with its
        block scales); 1 where absent.
    scaleup_domain, scaleup_GBps : array or None
        The accelerator's scale-up domain and its bandwidth.
    mem_gb : array or None
        Memory per accelerator: where a feature store fits; absent: in host memory.
    """

    peak_tflops: object
    compute_efficiency: object
    mem_bw_tbps: object
    n_accelerators: object
    accelerators_per_node: object
    n_nodes: object
    intra_GBps: object
    inter_GBps: object
    cpu_cores_per_accelerator: object
    cpu_decode_factor: object
    dali: object
    local_batch: object = None
    micro_batch: object = None
    model_parallel: object = None
    host_GBps: object = None
    narrow_peak_tflops: object = None
    narrow_bytes: object = None
    scaleup_domain: object = None
    scaleup_GBps: object = None
    mem_gb: object = None

    @classmethod
    def of(cls, cfg) -> "ConfigArrays":
        """``cfg`` itself, or a mapping of field names to arrays as a :class:`ConfigArrays`.

        Raises
        ------
        UsageError
            A key that is not a field, or a required field missing.
        """
        if isinstance(cfg, cls):
            return cfg
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(cfg) - set(names))
        if unknown:
            raise UsageError(f"model input '{unknown[0]}' is not one the model reads; it "
                             f"reads: {', '.join(names)}")
        missing = [f.name for f in fields(cls)
                   if f.default is not None and f.name not in cfg]
        if missing:
            raise UsageError(f"model input '{missing[0]}' is missing; required are: "
                             f"{', '.join(f.name for f in fields(cls) if f.default is not None)}")
        return cls(**cfg)

    def take(self, rows) -> "ConfigArrays":
        """The inputs of ``rows`` (an index or a mask); scalars apply to every row."""
        return _take(self, rows)


@dataclass(frozen=True)
class RowFacts:
    """Per-row facts a row's outcomes and notes need beyond :class:`ConfigArrays`.

    Attributes
    ----------
    accelerator_id : array of object
        The resolved catalog id (``None`` where the accelerator is not known).
    family, vendor, generation : array of object
        The accelerator's (``None`` where not known).
    basis : array of object
        The basis of the row's efficiency (``fitted``, ``borrowed:<family>``,
        ``borrowed:<vendor>``, ...; ``""`` where not modelled).
    precision : array of object
        The training precision whose peak is used.
    software_gain : array
        The log gain of compute efficiency the software trend gave the row (0 at the model's
        round).
    power_headroom : array
        The part's watts per peak FLOP/s over its family's median (1 where unknown); the
        efficiency moves by its power ``power_exponent``.
    tdp : array
        Accelerator power (W).
    epochs, samples : array
        To converge: epochs and samples.
    curve_epochs : array
        Epochs to converge by the reference curve.
    measured_length : array of bool
        Whether the row's own convergence was measured.
    global_batch : array
    global_batch_given : array of bool
        Whether the table gave the global batch.
    price : array
        Price per accelerator-hour (NaN when not given).
    valid : array of bool
        Modelled and not refused.
    refused : array of bool
    """

    accelerator_id: np.ndarray
    family: np.ndarray
    vendor: np.ndarray
    generation: np.ndarray
    basis: np.ndarray
    precision: np.ndarray
    software_gain: np.ndarray
    power_headroom: np.ndarray
    tdp: np.ndarray
    epochs: np.ndarray
    samples: np.ndarray
    curve_epochs: np.ndarray
    measured_length: np.ndarray
    global_batch: np.ndarray
    global_batch_given: np.ndarray
    price: np.ndarray
    valid: np.ndarray
    refused: np.ndarray

    def take(self, rows) -> "RowFacts":
        """The facts of ``rows`` (an index or a mask)."""
        return _take(self, rows)
