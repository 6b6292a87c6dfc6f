"""What a fit reports, as the model file's ``fit`` part stores it.

:class:`FitReport` is the report :func:`~.fit.calibrate` writes into
``CalibratedModel.fit``: the rows used and skipped, the optimizer's outcome, the parameters
that ended on a bound, the errors and the **domain** the fit covers. It reads and writes the
JSON of the model file unchanged (:meth:`FitReport.from_dict`, :meth:`FitReport.to_dict`); a
file written before a part existed loads without it, and a part this version does not know
is kept as read. The file's schema (:mod:`.model_schema`) is checked before one is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from ...errors import UsageError

__all__ = ["FitReport"]

#: Parts the fit writes even when they are null: the rounds it was told to train and test on.
_WRITTEN_WHEN_NULL = ("train_rounds", "test_rounds")


@dataclass(frozen=True)
class FitReport(Mapping):
    """The report of a fit (empty for a hand-set model); read as a mapping of the model
    file's keys too (``report["domain"]``, ``report.get("at_bound", [])``).

    Attributes
    ----------
    n_rows, n_usable, n_train : int or None
        Rows of the table, rows a fit may use, rows it was fitted on.
    skipped : dict or None
        Rows skipped per reason.
    rows_per_family : dict or None
        Training rows per accelerator family.
    train_rounds, test_rounds : list of str or None
        The rounds it was told to train and to test on (``None``: all, none).
    cost : float or None
        The optimizer's final cost.
    success : bool or None
        Whether the optimizer converged.
    at_bound : list of str or None
        The parameters that ended on a bound of the fit's box.
    bounds : dict or None
        For each of those: the side, the bound's value and its reason.
    domain : dict or None
        What the fit covers: ``global_batch`` and ``n_accelerators`` ranges, ``families``,
        ``rounds``.
    train_errors : list of dict or None
        In-sample errors per family and overall (``group``, ``n``, ``median_ape``,
        ``p90_ape``).
    n_test, test_errors, test_errors_nvidia : int, list of dict, dict or None
        Held-out rows and their errors (with ``test_rounds``).
    other : dict
        Parts this version does not know, kept as read.
    """

    n_rows: int | None = None
    n_usable: int | None = None
    n_train: int | None = None
    skipped: dict | None = None
    rows_per_family: dict | None = None
    train_rounds: list | None = None
    test_rounds: list | None = None
    cost: float | None = None
    success: bool | None = None
    at_bound: list | None = None
    bounds: dict | None = None
    domain: dict | None = None
    train_errors: list | None = None
    n_test: int | None = None
    test_errors: list | None = None
    test_errors_nvidia: dict | None = None
    other: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw) -> "FitReport":
        """The report of a model file's ``fit`` part (a :class:`FitReport` is returned as
        it is).

        Raises
        ------
        UsageError
            ``raw`` is not a mapping.
        """
        if isinstance(raw, cls):
            return raw
        if not isinstance(raw, Mapping):
            raise UsageError(f"parameter 'fit' must be a dict of the fit's report; got "
                             f"{type(raw).__name__}")
        names = {f.name for f in fields(cls)} - {"other"}
        return cls(**{k: v for k, v in raw.items() if k in names},
                   other={k: v for k, v in raw.items() if k not in names})

    @property
    def fitted(self) -> bool:
        """Whether this is the report of a fit (a hand-set model's is empty)."""
        return self.n_rows is not None

    def to_dict(self) -> dict:
        """The model file's ``fit`` part: each part the report holds (a null one only where
        the fit writes it null), and the parts kept as read."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "other"}
        out = {k: v for k, v in out.items()
               if v is not None or (k in _WRITTEN_WHEN_NULL and self.fitted)}
        return {**out, **self.other}

    def __getitem__(self, key):
        return self.to_dict()[key]

    def __iter__(self):
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())
