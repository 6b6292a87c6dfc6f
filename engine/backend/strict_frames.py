"""The frames of the strict stand-in (cuDF's place): :class:`StrictFrame`,
:class:`StrictSeries`, :class:`StrictIndex` and the namespace :data:`xdf`.

The arrays, the host-copy log and what the stand-in cannot check are in
:mod:`.strict_device`.

What it checks
--------------
Frames (:class:`StrictFrame`, :class:`StrictSeries`, :class:`StrictIndex`, namespace
:data:`xdf`), as cuDF 26 does:

- ``from_pandas`` (and ``read_parquet`` / ``read_csv``) is the only way in: a pandas
  object handed to a device frame or to one of its methods raises ``TypeError`` (cuDF
  accepts some with an implicit copy and refuses others, such as ``Series.map``; refusing
  them all keeps every host-to-device move explicit). Object columns must convert to Arrow
  as cuDF converts them (mixed types raise);
- ``Series.map`` takes a dict or a Series of this library only;
- iterating a Series or an Index, ``tolist``, ``Series.items``, ``iterrows`` and
  ``itertuples``, ``__array__`` (hence ``np.asarray(series)``) raise ``TypeError``;
- ``.values`` and ``to_cupy()`` give device arrays; ``to_numpy()``, ``to_pandas()``,
  ``to_dict()``, ``to_arrow()`` and ``values_host`` are explicit host copies, recorded;
- missing values are nulls (pandas' nullable dtypes here): ``from_pandas`` (and
  ``read_parquet`` / ``read_csv``, ``to_numeric(errors="coerce")``) turns a float NaN into
  a null; a comparison with a null (of numbers or text) gives a null, and ``&``, ``|``,
  ``^`` and ``~`` keep it (a null operand gives a null result, not pandas' three-valued
  logic: libcudf's binary operations); ``astype("str")`` keeps nulls, ``cat.codes`` is
  null (not -1) where the value is missing, an integer or float cast keeps the null;
  ``to_cupy()`` of an integer or float column with nulls gives float64 with NaN, of a
  boolean one raises ``ValueError: Column must have no nulls`` unless ``na_value`` is
  given;
- stricter than cuDF: ``.loc`` / ``.iloc`` / ``[]`` / ``where`` with a boolean mask holding
  a null raise ``ValueError`` (cuDF takes the null as False and silently drops or blanks
  the row);
- ``.iloc`` takes integers, integer arrays and boolean masks, and refuses other keys
  (``TypeError``) as cuDF does;
- ``groupby(sort=False)`` aggregations come back in an order that is not the order of
  first appearance (reversed here; cuDF gives them in hash order), and ``groupby`` sorts
  only when asked (cuDF's default is ``sort=False``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .strict_device import FrameStandIn, StrictArray, note_host_copy

__all__ = ["StrictFrame", "StrictSeries", "StrictIndex", "xdf", "from_pandas"]

_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3
#: pandas' text dtype that keeps missing values missing, as cuDF's strings do.
_TEXT_DTYPE = "str" if _PANDAS_3 else "string"
_NULLABLE = {"int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
             "uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
             "bool": "boolean", "float32": "Float32", "float64": "Float64"}


def _refuse_pandas(x, where):
    if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)):
        raise TypeError(f"{where}: a pandas {type(x).__name__} was handed to the device frame "
                        "library; move host data with from_pandas first")


def _unwrap(x, where):
    """Arguments for pandas: the stand-in's objects replaced by their data; pandas objects
    refused (they enter through ``from_pandas`` only)."""
    if isinstance(x, _StrictPandas):
        return x._obj
    if isinstance(x, StrictArray):
        return x._a
    _refuse_pandas(x, where)
    if isinstance(x, list):
        return [_unwrap(v, where) for v in x]
    if isinstance(x, tuple):
        return tuple(_unwrap(v, where) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, where) for k, v in x.items()}
    return x


def _wrap(x, *, scalar_read=False):
    """pandas results as device results."""
    if isinstance(x, pd.DataFrame):
        return StrictFrame._of(x)
    if isinstance(x, pd.Series):
        return StrictSeries._of(x)
    if isinstance(x, pd.Index):
        return StrictIndex._of(x)
    if isinstance(x, np.ndarray):
        return StrictArray(x)
    if isinstance(x, tuple):
        return tuple(_wrap(v, scalar_read=scalar_read) for v in x)
    if scalar_read and (isinstance(x, (np.generic, int, float, bool, str)) or x is None
                        or x is pd.NA):
        note_host_copy("scalar", ())
    return x


def _has_missing(s: pd.Series) -> bool:
    return bool(s.isna().any())


def _masked(s: pd.Series) -> bool:
    return isinstance(s.array, pd.api.extensions.ExtensionArray) and \
        hasattr(s.array, "_mask")


def _nan_as_null(s: pd.Series) -> pd.Series:
    """A float column with its NaN as nulls (pandas' nullable float dtype), as cuDF holds a
    NaN that arrives from pandas."""
    if isinstance(s.dtype, np.dtype) and s.dtype.kind == "f" and bool(s.isna().any()):
        return s.astype(_NULLABLE[s.dtype.name])
    return s


def _float_nulls_as_nan(obj):
    """What cuDF's host copies give for a float column with nulls: NumPy floats with NaN
    (the stand-in holds them as pandas' nullable floats)."""
    if isinstance(obj, pd.DataFrame):
        cols = [c for c in obj.columns if _nullable_float(obj[c])]
        if cols:
            obj = obj.assign(**{c: obj[c].astype(obj[c].dtype.numpy_dtype) for c in cols}) \
                if obj.columns.is_unique else obj
        return obj
    if isinstance(obj, pd.Series) and _nullable_float(obj):
        return obj.astype(obj.dtype.numpy_dtype)
    return obj


def _nullable_float(s: pd.Series) -> bool:
    return _masked(s) and getattr(s.dtype, "kind", "O") == "f"


def _null_mask(x) -> bool:
    """True for a boolean mask (the stand-in's or a pandas one) that holds a null."""
    obj = x._obj if isinstance(x, _StrictPandas) else x
    return isinstance(obj, pd.Series) and getattr(obj.dtype, "kind", "O") == "b" and \
        _masked(obj) and _has_missing(obj)


def _refuse_null_mask(x, where):
    if _null_mask(x):
        raise ValueError(f"{where}: the boolean mask holds a missing value (null); cuDF "
                         "would take it as False and silently leave the row out: fill the "
                         "mask (.fillna(False)) where it is built")


def _device_copy(obj, nan_as_null=False):
    """A frame or series as it is after ``cudf.from_pandas``: a copy, object columns
    converted as Arrow converts them (text; mixed types refused), float NaN as nulls when
    ``nan_as_null``."""
    if isinstance(obj, pd.DataFrame):
        out = obj.copy()
        for c in out.columns:
            out[c] = _device_copy(out[c], nan_as_null)
        return out
    s = _nan_as_null(obj.copy()) if nan_as_null else obj.copy()
    if s.dtype == object:
        try:
            arr = pa.array(s, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise TypeError(f"column {s.name!r} cannot move to the device: {exc}") from exc
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or \
                pa.types.is_null(arr.type):
            s = s.astype(_TEXT_DTYPE)
    return s


class _StrictPandas(FrameStandIn):
    """Shared behaviour of the stand-in's frame objects: delegation to pandas with device
    results, the refusals, and the explicit host copies."""

    __slots__ = ("_obj",)
    _kind = "frame"
    #: Host metadata, returned as pandas/NumPy objects (cuDF returns these on the host too).
    _HOST_ATTRS = frozenset({"columns", "dtype", "dtypes", "shape", "ndim", "size", "empty",
                             "name", "names", "is_unique", "is_monotonic_increasing",
                             "is_monotonic_decreasing", "hasnans"})
    _REFUSED = {"items": "iterating", "iteritems": "iterating", "iterrows": "iterrows",
                "itertuples": "itertuples", "tolist": "tolist", "to_list": "tolist"}
    __hash__ = None

    @classmethod
    def _of(cls, obj):
        out = object.__new__(cls)
        object.__setattr__(out, "_obj", obj)
        return out

    def __repr__(self):
        return f"{type(self).__name__}(shape={self._obj.shape})"

    def __getattr__(self, name):
        if name.startswith("__") or name == "_obj":
            raise AttributeError(name)
        if name in self._REFUSED:
            raise TypeError(f"cuDF does not support {self._REFUSED[name]} ({name}) of a "
                            f"{type(self).__name__}: it would copy the data to the host; "
                            "use .to_pandas() explicitly")
        attr = getattr(self._obj, name)
        if name in self._HOST_ATTRS:
            return attr
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            where = f"{type(self).__name__}.{name}"
            return _wrap(attr(*_unwrap(args, where), **_unwrap(kwargs, where)),
                         scalar_read=True)

        return method

    # -- refused implicit conversions
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a host NumPy array via __array__ is not "
                        "allowed, To explicitly construct a GPU matrix, consider using "
                        ".to_cupy()\nTo explicitly construct a host matrix, consider using "
                        ".to_numpy().")

    def __arrow_array__(self, type=None):
        raise TypeError("Implicit conversion to a host PyArrow object via __arrow_array__ is "
                        "not allowed. Consider using .to_arrow()")

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} object is not iterable. Consider using "
                        "`.to_arrow()`, `.to_pandas()` or `.to_numpy()` if you wish to "
                        "iterate over the values.")

    def __bool__(self):
        raise ValueError(f"The truth value of a {type(self).__name__} is ambiguous. Use "
                         "a.empty, a.bool(), a.item(), a.any() or a.all().")

    def __len__(self):
        return len(self._obj)

    def __contains__(self, item):
        return item in self._obj

    # -- explicit host copies
    def _host(self):
        note_host_copy(self._kind, self._obj.shape)
        return _float_nulls_as_nan(self._obj)

    def to_pandas(self, **kwargs):
        """The explicit copy to the host, recorded."""
        return self._host().copy()

    def to_numpy(self, *args, **kwargs):
        return self._host().to_numpy(*args, **kwargs)

    def to_dict(self, *args, **kwargs):
        return self._host().to_dict(*args, **kwargs)

    def to_arrow(self):
        obj = self._host()
        return pa.Table.from_pandas(obj) if isinstance(obj, pd.DataFrame) else pa.array(obj)

    @property
    def values_host(self):
        return self._host().to_numpy()

    # -- indexers
    @property
    def iloc(self):
        return _Indexer(self, "iloc")

    @property
    def loc(self):
        return _Indexer(self, "loc")

    @property
    def index(self):
        return StrictIndex._of(self._obj.index)

    def nans_to_nulls(self):
        """Float NaN as nulls, as cuDF's."""
        return _wrap(_device_copy(self._obj, nan_as_null=True))

    def where(self, cond, *args, **kwargs):
        """pandas' ``where``; a condition holding a null refused (see the module docstring)."""
        _refuse_null_mask(cond, f"{type(self).__name__}.where")
        return _wrap(self._obj.where(_unwrap(cond, "where"), *_unwrap(args, "where"),
                                     **_unwrap(kwargs, "where")))

    def groupby(self, by=None, *args, sort=False, **kwargs):
        """Grouped operations; ``sort=False`` (cuDF's default) gives aggregations in an order
        that is not the order of first appearance."""
        gb = self._obj.groupby(_unwrap(by, "groupby"), *_unwrap(args, "groupby"), sort=sort,
                               **_unwrap(kwargs, "groupby"))
        return _GroupBy(gb, sort)

    def __getitem__(self, key):
        _refuse_null_mask(key, "indexing")
        return _wrap(self._obj[_unwrap(key, "indexing")])

    def __setitem__(self, key, value):
        self._obj[_unwrap(key, "assignment")] = _unwrap(value, "assignment")


def _frame_binary(name):
    def op(self, other):
        return _wrap(getattr(self._obj, name)(_unwrap(other, name)))

    return op


def _missing_of(x):
    """Where an operand of a logical operation is null (a Series), or whether it is (a
    scalar); None for operands that cannot be null."""
    if isinstance(x, pd.Series):
        return x.isna().to_numpy()
    if x is None or x is pd.NA:
        return True
    return None


def _logical_binary(name):
    """``&``, ``|``, ``^`` and comparisons as libcudf's: the result is null wherever an
    operand is null (pandas' nullable booleans use three-valued logic instead, ``False &
    NA`` is False, and its text dtype compares a missing value as False)."""
    def op(self, other):
        a, b = self._obj, _unwrap(other, name)
        out = getattr(a, name)(b)
        if isinstance(out, pd.Series) and getattr(out.dtype, "kind", "O") == "b":
            missing = [m for m in (_missing_of(a), _missing_of(b)) if m is not None]
            if any(np.any(m) for m in missing):
                null = np.zeros(len(out), dtype=bool)
                for m in missing:
                    null |= m
                out = out.astype("boolean").mask(null)
        return _wrap(out)

    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "eq", "ne", "lt", "le", "gt", "ge"):
    make = _frame_binary if _name in ("add", "sub", "mul", "truediv", "floordiv", "mod",
                                      "pow") else _logical_binary
    setattr(_StrictPandas, f"__{_name}__", make(f"__{_name}__"))
    if _name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(_StrictPandas, f"__r{_name}__", make(f"__r{_name}__"))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(_StrictPandas, f"__{_name}__",
            (lambda nm: lambda self: _wrap(getattr(self._obj, nm)()))(f"__{_name}__"))


class StrictSeries(_StrictPandas):
    """A cuDF-like Series (see the module docstring)."""

    __slots__ = ()
    _kind = "series"

    def __init__(self, data=None, index=None, dtype=None, name=None, **kwargs):
        _refuse_pandas(data, "Series()")
        s = pd.Series(_unwrap(data, "Series()"), index=_unwrap(index, "Series()"),
                      dtype=dtype, name=name, **kwargs)
        object.__setattr__(self, "_obj", _device_copy(s))

    @property
    def values(self):
        """A device array of the values, as cuDF's: nulls of a number column as NaN (an
        integer column becomes float64), of a boolean column refused."""
        s = self._obj
        if getattr(s.dtype, "kind", "O") == "b" and _has_missing(s):
            raise ValueError(f"Column must have no nulls for dtype={s.dtype}")
        return self.to_cupy()

    def to_cupy(self, dtype=None, copy=False, na_value=None):
        """A device array, as cuDF's ``to_cupy``: nulls filled with ``na_value`` when given;
        otherwise an integer column with nulls becomes float64 with NaN and a boolean one
        is refused."""
        s = self._obj
        kind = getattr(s.dtype, "kind", "O")
        if kind not in "iufb":
            raise TypeError(f"a column of dtype {s.dtype} cannot be a device array; encode it "
                            "first (.cat.codes)")
        if _has_missing(s):
            if na_value is not None:
                s = s.fillna(na_value)
            elif kind == "b":
                raise ValueError("Column must have no nulls.")
            elif kind in "iu":
                s = s.astype("float64")
        np_dtype = np.dtype(dtype) if dtype is not None else \
            np.dtype(getattr(s.dtype, "numpy_dtype", s.dtype))
        na = np.nan if np_dtype.kind == "f" else pd.api.extensions.no_default
        return StrictArray(s.to_numpy(dtype=np_dtype, na_value=na))

    def astype(self, dtype, *args, **kwargs):
        """cuDF's casts: text keeps nulls, an integer or boolean cast keeps nulls."""
        s = self._obj
        if dtype in ("str", str, "string"):
            return StrictSeries._of(s.astype(_TEXT_DTYPE))
        try:
            key = np.dtype(dtype).name
        except TypeError:
            key = None
        if key in _NULLABLE and _has_missing(s):
            return StrictSeries._of(s.astype(_NULLABLE[key]))
        return StrictSeries._of(s.astype(dtype, *args, **kwargs))

    def map(self, arg, na_action=None):
        """cuDF maps a dict or a cuDF Series (and numeric UDFs, not emulated here)."""
        if isinstance(arg, dict):
            return StrictSeries._of(self._obj.map(arg, na_action=na_action))
        if isinstance(arg, StrictSeries):
            return StrictSeries._of(self._obj.map(arg._obj, na_action=na_action))
        raise TypeError(f"Series.map takes a dict or a Series of the device library; got "
                        f"{type(arg).__module__}.{type(arg).__name__}")

    def unique(self):
        """The distinct values as a Series (cuDF returns a Series, pandas an array)."""
        return StrictSeries._of(pd.Series(self._obj.unique(), name=self._obj.name))

    @property
    def cat(self):
        return _Categorical(self)

    @property
    def str(self):
        return _Accessor(self._obj.str)


class StrictFrame(_StrictPandas):
    """A cuDF-like DataFrame (see the module docstring)."""

    __slots__ = ()
    _kind = "frame"
    _REFUSED = {"iterrows": "iterrows", "itertuples": "itertuples"}

    def __init__(self, data=None, index=None, columns=None, dtype=None, **kwargs):
        _refuse_pandas(data, "DataFrame()")
        df = pd.DataFrame(_unwrap(data, "DataFrame()"), index=_unwrap(index, "DataFrame()"),
                          columns=columns, dtype=dtype, **kwargs)
        object.__setattr__(self, "_obj", _device_copy(df))

    def __iter__(self):
        return iter(self._obj.columns)

    def items(self):
        for c in self._obj.columns:
            yield c, StrictSeries._of(self._obj[c])

    @property
    def values(self):
        return self.to_cupy()

    def to_cupy(self, dtype=None, copy=False, na_value=None):
        """A (n, k) Fortran-order device array of the columns (see StrictSeries.to_cupy)."""
        cols = [StrictSeries._of(self._obj[c]).to_cupy(dtype=dtype, na_value=na_value)._a
                for c in self._obj.columns]
        if not cols:
            return StrictArray(np.empty((len(self._obj), 0)))
        return StrictArray(np.asfortranarray(np.stack(cols, axis=1)))


class StrictIndex(_StrictPandas):
    """A cuDF-like Index: not iterable, explicit ``to_pandas``."""

    __slots__ = ()
    _kind = "index"

    def __init__(self, data=None, **kwargs):
        _refuse_pandas(data, "Index()")
        object.__setattr__(self, "_obj", pd.Index(_unwrap(data, "Index()"), **kwargs))


class _Indexer:
    """``.iloc`` / ``.loc`` of a stand-in frame; ``.iloc`` keys checked as cuDF checks them."""

    __slots__ = ("_owner", "_kind")

    def __init__(self, owner, kind):
        self._owner, self._kind = owner, kind

    def _key(self, key):
        if self._kind == "iloc":
            rows = key[0] if isinstance(key, tuple) else key
            _check_iloc_rows(rows)
        return _unwrap(key, self._kind)

    def __getitem__(self, key):
        _refuse_null_mask(key[0] if isinstance(key, tuple) else key, f".{self._kind}")
        return _wrap(getattr(self._owner._obj, self._kind)[self._key(key)], scalar_read=True)

    def __setitem__(self, key, value):
        _refuse_null_mask(key[0] if isinstance(key, tuple) else key, f".{self._kind}")
        getattr(self._owner._obj, self._kind)[self._key(key)] = _unwrap(value, self._kind)


def _check_iloc_rows(rows):
    if isinstance(rows, (slice, type(Ellipsis))) or isinstance(rows, (int, np.integer)):
        return
    if isinstance(rows, bool):
        raise TypeError("Cannot index by location with a boolean scalar")
    if isinstance(rows, StrictSeries):
        kind = getattr(rows._obj.dtype, "kind", "O")
    elif isinstance(rows, StrictArray):
        kind = rows.dtype.kind
    else:
        kind = np.asarray(rows).dtype.kind if not isinstance(rows, _StrictPandas) else "O"
    if kind not in "iub":
        raise TypeError(f"Cannot index by location with non-integer key of dtype kind "
                        f"{kind!r}")


class _GroupBy:
    """A grouped frame or series; aggregations of ``sort=False`` come back in an order that
    is not first appearance (as cuDF's hash groupby)."""

    __slots__ = ("_gb", "_sort")
    _AGGREGATIONS = frozenset({"min", "max", "sum", "mean", "median", "count", "size",
                               "quantile", "std", "var", "first", "last", "nunique", "agg",
                               "aggregate", "prod"})

    def __init__(self, gb, sort):
        self._gb, self._sort = gb, sort

    def __getitem__(self, key):
        return _GroupBy(self._gb[_unwrap(key, "groupby")], self._sort)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._gb, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            out = attr(*_unwrap(args, name), **_unwrap(kwargs, name))
            if name in self._AGGREGATIONS and not self._sort and \
                    isinstance(out, (pd.Series, pd.DataFrame)):
                out = out.iloc[::-1]
            return _wrap(out)

        return method


class _Accessor:
    """A pandas accessor (``.str``) with device results."""

    __slots__ = ("_acc",)

    def __init__(self, acc):
        self._acc = acc

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._acc, name)
        if not callable(attr):
            return _wrap(attr)
        return lambda *a, **k: _wrap(attr(*_unwrap(a, name), **_unwrap(k, name)))


class _Categorical(_Accessor):
    """``.cat`` as cuDF's: ``codes`` is null where the value is missing."""

    __slots__ = ()

    def __init__(self, series):
        super().__init__(series._obj.cat)

    @property
    def codes(self):
        codes = self._acc.codes
        missing = codes == -1
        if bool(missing.any()):
            codes = codes.astype(_NULLABLE[str(codes.dtype)]).mask(missing)
        return StrictSeries._of(codes)


def from_pandas(obj, nan_as_null=True):
    """The way in: a pandas DataFrame or Series copied to the stand-in's device (float NaN
    as nulls, cuDF's default)."""
    if isinstance(obj, pd.DataFrame):
        return StrictFrame._of(_device_copy(obj, nan_as_null))
    if isinstance(obj, pd.Series):
        return StrictSeries._of(_device_copy(obj, nan_as_null))
    if isinstance(obj, pd.Index):
        return StrictIndex._of(obj.copy())
    raise TypeError(f"from_pandas takes a pandas DataFrame, Series or Index; got "
                    f"{type(obj).__name__}")


class _StrictFrames:
    """The ``xdf`` of the stand-in (cuDF's place)."""

    __name__ = "gpurank.engine.backend.strict_frames.xdf"
    DataFrame = StrictFrame
    Series = StrictSeries
    Index = StrictIndex
    from_pandas = staticmethod(from_pandas)

    @staticmethod
    def read_parquet(path, **kwargs):
        return StrictFrame._of(_device_copy(pd.read_parquet(path, **kwargs), True))

    @staticmethod
    def read_csv(path, **kwargs):
        return StrictFrame._of(_device_copy(pd.read_csv(path, **kwargs), True))

    @staticmethod
    def to_numeric(arg, errors="raise", downcast=None):
        """cuDF's ``to_numeric`` of a Series: with ``errors="coerce"`` a value that is not a
        number becomes a null."""
        if not isinstance(arg, StrictSeries):
            _refuse_pandas(arg, "to_numeric")
            raise TypeError("to_numeric takes a Series of the device library")
        out = pd.to_numeric(arg._obj, errors=errors, downcast=downcast)
        return StrictSeries._of(_nan_as_null(out.astype("float64")
                                             if out.dtype == object else out))

    @staticmethod
    def concat(objs, **kwargs):
        return _wrap(pd.concat([_unwrap(o, "concat") for o in objs],
                               **_unwrap(kwargs, "concat")))

    def __getattr__(self, name):
        raise AttributeError(f"the device frame stand-in has no {name!r}")


#: The stand-in's frame namespace.
xdf = _StrictFrames()

