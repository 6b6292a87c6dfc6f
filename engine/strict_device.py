"""A strict stand-in for CuPy and cuDF: the engine's device branches, run without a device.

The GPU backend's arrays are CuPy's and its frames cuDF's; neither runs without a GPU. This
module gives the engine objects that hold their data in NumPy and pandas but behave like
CuPy's and cuDF's where the engine's code could go wrong on a device, so that
:func:`gpurank.engine.backend.strict_device_backend` runs every device branch in CI and a
host conversion the GPU would refuse fails here too.

What it checks
--------------
Arrays (:class:`StrictArray`, namespace :data:`xp`), as CuPy does:

- no implicit conversion to NumPy: ``np.asarray(a)``, ``a.__array__``, indexing a NumPy
  array with a device array, a NumPy ufunc or array function mixing device and NumPy arrays
  (``a + numpy_array``, ``np.stack([a, numpy_array])``), assigning a NumPy array into a
  device array, and a NumPy array handed to an ``xp`` function other than ``asarray`` /
  ``array`` (the host-to-device copies) all raise ``TypeError``;
- reductions return 0-d device arrays, not host scalars; ``float()`` / ``int()`` /
  ``bool()`` of a 0-d array is a (recorded) host read, of a larger array a ``TypeError``;
- ``.get()`` and ``xp.asnumpy`` are the only ways to a host array, and are recorded.

Stricter than CuPy, on purpose: iterating a device array and ``.tolist()`` raise
``TypeError`` (on CuPy they are one hidden host copy per element or for the whole array).

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
- missing values are nulls: ``astype("str")`` keeps them, ``cat.codes`` is null (not -1)
  where the value is missing, an integer cast keeps the null, and ``to_cupy()`` of an
  integer column with nulls gives float64 with NaN (of a boolean one, ``ValueError``);
- ``.iloc`` takes integers, integer arrays and boolean masks, and refuses other keys
  (``TypeError``) as cuDF does;
- ``groupby(sort=False)`` aggregations come back in an order that is not the order of
  first appearance (reversed here; cuDF gives them in hash order), and ``groupby`` sorts
  only when asked (cuDF's default is ``sort=False``).

Every device-to-host copy is recorded when :func:`record_host_copies` is active, with its
size and the gpurank function that asked for it.

What it cannot check
--------------------
- Speed, memory and anything about the device itself (out of memory, streams, kernels'
  launch limits, FMA contraction in compiled CUDA code): the CUDA kernels run where Numba
  runs them (the simulator in CI) on NumPy copies of the arrays.
- cuDF's NaN-versus-null distinction: a float column here is pandas', where NaN is
  missing; on cuDF a NaN produced by arithmetic is a value (``notna()`` is True for it).
  The engine calls ``nans_to_nulls`` where that matters; here it is a no-op.
- Dtype objects: ``dtype`` is pandas' (cuDF has its own ``CategoricalDtype`` and string
  dtype); code that tests dtypes should use ``dtype.kind`` or ``str(dtype)``.
- cuML: the models are scikit-learn's behind cuML-like wrappers (device arrays in and out,
  NaN refused on fit as cuML refuses it), so the results equal the CPU path's; cuML's own
  parameters and numerics are checked only on a real device.
- Which NumPy functions CuPy lacks: any NumPy function on device arrays works here.
- Array API strictness: the engine is written against CuPy's NumPy-like namespace
  (``flatnonzero``, ``nanmedian``, ``ascontiguousarray``, array methods), which the Array
  API standard (and ``array-api-strict``) does not have, so this is a thin NumPy wrapper.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd

__all__ = [
    "HostCopy",
    "record_host_copies",
    "note_host_copy",
    "StrictArray",
    "StrictFrame",
    "StrictSeries",
    "StrictIndex",
    "xp",
    "xdf",
    "is_device_object",
]

# -- the host-copy log -------------------------------------------------------------------


@dataclass(frozen=True)
class HostCopy:
    """One device-to-host copy.

    Attributes
    ----------
    what : str
        ``"array"``, ``"scalar"``, ``"frame"``, ``"series"``, ``"index"`` or
        ``"kernel result"``.
    shape : tuple of int
        Rows x columns for a frame.
    size : int
        Elements copied.
    site : str
        ``"module:function"`` of the innermost gpurank function (outside this module and
        the backend) that asked for the copy.
    """

    what: str
    shape: tuple
    size: int
    site: str


_RECORDERS: list[list] = []
_SKIP_MODULES = {__name__, "gpurank.engine.backend"}


@contextmanager
def record_host_copies():
    """Record every device-to-host copy of the stand-in's objects made inside the block.

    Yields
    ------
    list of HostCopy
        Filled while the block runs.
    """
    log: list[HostCopy] = []
    _RECORDERS.append(log)
    try:
        yield log
    finally:
        _RECORDERS.remove(log)


def _site() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        mod = frame.f_globals.get("__name__", "")
        if mod.startswith("gpurank.") and mod not in _SKIP_MODULES:
            return f"{mod}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "outside gpurank"


def note_host_copy(what: str, shape) -> None:
    """Record a device-to-host copy of ``shape`` (no-op when nothing is recording)."""
    if not _RECORDERS:
        return
    shape = tuple(int(s) for s in shape)
    size = int(np.prod(shape)) if shape else 1
    rec = HostCopy(what, shape, size, _site())
    for log in _RECORDERS:
        log.append(rec)


# -- arrays ------------------------------------------------------------------------------

_TO_HOST = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly.")


def _refuse_host_array(x, where):
    """CuPy refuses NumPy arrays (and pandas objects) mixed with device arrays."""
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}: {where} mixes a NumPy array with device "
                        "arrays; move it with xp.asarray first")
    if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)):
        raise TypeError(f"Unsupported type {type(x)}: {where} mixes a pandas object with device "
                        "arrays")
    if isinstance(x, _StrictPandas):
        raise TypeError(f"Unsupported type {type(x).__name__}: {where} takes arrays; use "
                        ".to_cupy() or .values for a device array of a column")


def _unwrap_arrays(x, where):
    """``x`` with every StrictArray replaced by its data; NumPy arrays and frames refused
    (only ``xp.asarray`` / ``xp.array`` take host data)."""
    if isinstance(x, StrictArray):
        return x._a
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap_arrays(v, where) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap_arrays(v, where) for k, v in x.items()}
    _refuse_host_array(x, where)
    return x


def _wrap_result(r):
    """NumPy results as device results: arrays and NumPy scalars become StrictArrays (CuPy's
    reductions return 0-d device arrays)."""
    if isinstance(r, np.ndarray):
        return StrictArray(r)
    if isinstance(r, np.generic):
        return StrictArray(np.asarray(r))
    if isinstance(r, tuple):
        return tuple(_wrap_result(v) for v in r)
    if isinstance(r, list):
        return [_wrap_result(v) for v in r]
    return r


class StrictArray:
    """A device array stand-in: NumPy data that refuses to become host data implicitly.

    See the module docstring for what it refuses. Build one with ``xp.asarray``.
    """

    __slots__ = ("_a",)
    __array_priority__ = 1000
    __hash__ = None

    def __init__(self, a):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"StrictArray wraps a NumPy array; got {type(a).__name__}")
        self._a = a

    # metadata lives on the host, as CuPy's does
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: StrictArray(self._a.T))

    def __repr__(self):
        return f"StrictArray(shape={self._a.shape}, dtype={self._a.dtype})"

    # -- the explicit ways to the host
    def get(self):
        """Copy to a NumPy array (recorded)."""
        note_host_copy("array", self._a.shape)
        return self._a.copy()

    def item(self):
        note_host_copy("scalar", ())
        return self._a.item()

    def _scalar(self, kind):
        if self._a.ndim != 0:
            raise TypeError(f"{kind}() of a device array of shape {self._a.shape}: only 0-d "
                            "arrays convert to Python scalars here; reduce first or use .get()")
        note_host_copy("scalar", ())
        return self._a[()]

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if self._a.dtype.kind not in "iu":
            raise TypeError(f"a device array of dtype {self._a.dtype} is not an index")
        return int(self._scalar("index"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __bool__(self):
        if self._a.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        note_host_copy("scalar", ())
        return bool(self._a.reshape(()))

    def __format__(self, spec):
        return format(self._scalar("format"), spec)

    # -- the implicit ways, refused
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_TO_HOST)

    def __iter__(self):
        raise TypeError("iterating a device array reads it element by element from the "
                        "device; use .get() once, or array operations")

    def tolist(self):
        raise TypeError("tolist() copies the device array to the host; use .get() explicitly")

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._a.shape[0]

    # -- NumPy interop, as CuPy's
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        where = f"numpy.{ufunc.__name__}"
        raw = [_unwrap_arrays(x, where) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_unwrap_arrays(o, where) for o in kwargs["out"])
        return _wrap_result(getattr(ufunc, method)(*raw, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        where = f"numpy.{func.__name__}"
        for t in types:
            if issubclass(t, np.ndarray):
                raise TypeError(f"Unsupported type {t}: {where} mixes a NumPy array with "
                                "device arrays")
            if not issubclass(t, StrictArray):
                return NotImplemented
        return _wrap_result(func(*_unwrap_arrays(args, where), **_unwrap_arrays(kwargs, where)))

    # -- indexing
    def __getitem__(self, key):
        return _wrap_result(self._a[_index_key(key)])

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):
            if value.ndim > 0:
                raise TypeError("assigning a NumPy array into a device array is refused (as "
                                "CuPy refuses it); move it with xp.asarray first")
            value = value[()]  # a 0-d array is a scalar
        self._a[_index_key(key)] = _unwrap_arrays(value, "assignment")

    # -- everything else NumPy's ndarray has, with device results
    def __getattr__(self, name):
        if name.startswith("__") or name in _ARRAY_REFUSED:
            raise AttributeError(f"the device array stand-in has no attribute {name!r}")
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap_result(attr)

        def method(*args, **kwargs):
            where = f"ndarray.{name}"
            return _wrap_result(attr(*_unwrap_arrays(args, where),
                                     **_unwrap_arrays(kwargs, where)))

        return method

    def copy(self, order="C"):
        return StrictArray(self._a.copy(order=order))


_ARRAY_REFUSED = frozenset({"tobytes", "tofile", "tostring", "data", "ctypes", "dump", "dumps",
                            "flat"})


def _index_key(key):
    """An index for a device array: device arrays, host integer/boolean arrays (copied to
    the device, as CuPy does), slices, ints; pandas objects refused."""
    if isinstance(key, StrictArray):
        return key._a
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, (pd.DataFrame, pd.Series, pd.Index, _StrictPandas)):
        raise TypeError(f"cannot index a device array with a {type(key).__name__}")
    return key


def _binary(ufunc):
    def op(self, other):
        return ufunc(self, other)

    def rop(self, other):
        return ufunc(other, self)

    def iop(self, other):
        ufunc(self, other, out=(self,))
        return self

    return op, rop, iop


for _name, _uf in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                   "truediv": np.true_divide, "floordiv": np.floor_divide, "mod": np.remainder,
                   "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or,
                   "xor": np.bitwise_xor, "matmul": np.matmul}.items():
    _op, _rop, _iop = _binary(_uf)
    setattr(StrictArray, f"__{_name}__", _op)
    setattr(StrictArray, f"__r{_name}__", _rop)
    if _name != "matmul":
        setattr(StrictArray, f"__i{_name}__", _iop)
for _name, _uf in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                   "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(StrictArray, f"__{_name}__", _binary(_uf)[0])
for _name, _uf in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                   "invert": np.invert}.items():
    setattr(StrictArray, f"__{_name}__", (lambda uf: lambda self: uf(self))(_uf))


class _StrictNumpy:
    """The ``xp`` of the stand-in: NumPy's functions taking and returning device arrays."""

    ndarray = StrictArray
    #: Functions that copy host data to the device (CuPy's ``asarray``/``array``).
    _HOST_TO_DEVICE = frozenset({"asarray", "array", "asanyarray"})

    __name__ = "gpurank.engine.strict_device.xp"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(np, name)
        if isinstance(attr, ModuleType):
            raise AttributeError(f"the device array stand-in has no submodule xp.{name}")
        if isinstance(attr, type) or not callable(attr):
            return attr  # dtypes, constants
        if name in self._HOST_TO_DEVICE:
            return lambda a, dtype=None, **kw: _to_device(a, dtype, name)

        def fn(*args, **kwargs):
            where = f"xp.{name}"
            return _wrap_result(attr(*_unwrap_arrays(args, where),
                                     **_unwrap_arrays(kwargs, where)))

        fn.__name__ = name
        return fn

    @staticmethod
    def asnumpy(a):
        """The explicit copy to the host (``cupy.asnumpy``), recorded."""
        return a.get() if isinstance(a, StrictArray) else np.asarray(a)


def _to_device(a, dtype, name):
    """``xp.asarray`` / ``xp.array``: device arrays as they are (cast when asked), host data
    copied (a device array never shares memory with a host one)."""
    if isinstance(a, StrictArray):
        if name == "array" or (dtype is not None and np.dtype(dtype) != a.dtype):
            return StrictArray(np.array(a._a, dtype=dtype))
        return a
    if isinstance(a, (StrictSeries, StrictFrame)):  # cuDF columns expose device memory
        return a.to_cupy(dtype=dtype)
    return StrictArray(np.array(a, dtype=dtype, copy=True))


#: The stand-in's array namespace (CuPy's place).
xp = _StrictNumpy()


# -- frames ------------------------------------------------------------------------------

_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3
#: pandas' text dtype that keeps missing values missing, as cuDF's strings do.
_TEXT_DTYPE = "str" if _PANDAS_3 else "string"
_NULLABLE = {"int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
             "uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
             "bool": "boolean"}


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


def _device_copy(obj):
    """A frame or series as it is after ``cudf.from_pandas``: a copy, object columns
    converted as Arrow converts them (text; mixed types refused)."""
    if isinstance(obj, pd.DataFrame):
        out = obj.copy()
        for c in out.columns:
            out[c] = _device_copy(out[c])
        return out
    s = obj.copy()
    if s.dtype == object:
        import pyarrow as pa

        try:
            arr = pa.array(s, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise TypeError(f"column {s.name!r} cannot move to the device: {exc}") from exc
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or \
                pa.types.is_null(arr.type):
            s = s.astype(_TEXT_DTYPE)
    return s


class _StrictPandas:
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
        return self._obj

    def to_pandas(self, **kwargs):
        """The explicit copy to the host, recorded."""
        return self._host().copy()

    def to_numpy(self, *args, **kwargs):
        return self._host().to_numpy(*args, **kwargs)

    def to_dict(self, *args, **kwargs):
        return self._host().to_dict(*args, **kwargs)

    def to_arrow(self):
        import pyarrow as pa

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
        """cuDF turns NaN into nulls here; pandas already treats NaN as missing."""
        return _wrap(self._obj.copy())

    def groupby(self, by=None, *args, sort=False, **kwargs):
        """Grouped operations; ``sort=False`` (cuDF's default) gives aggregations in an order
        that is not the order of first appearance."""
        gb = self._obj.groupby(_unwrap(by, "groupby"), *_unwrap(args, "groupby"), sort=sort,
                               **_unwrap(kwargs, "groupby"))
        return _GroupBy(gb, sort)

    def __getitem__(self, key):
        return _wrap(self._obj[_unwrap(key, "indexing")])

    def __setitem__(self, key, value):
        self._obj[_unwrap(key, "assignment")] = _unwrap(value, "assignment")


def _frame_binary(name):
    def op(self, other):
        return _wrap(getattr(self._obj, name)(_unwrap(other, name)))

    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "eq", "ne", "lt", "le", "gt", "ge"):
    setattr(_StrictPandas, f"__{_name}__", _frame_binary(f"__{_name}__"))
    if _name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(_StrictPandas, f"__r{_name}__", _frame_binary(f"__r{_name}__"))
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
        """A device array of the values; nulls in an integer or boolean column refused (cuDF
        raises the same)."""
        s = self._obj
        if _masked(s) and _has_missing(s):
            raise ValueError(f"cannot convert to '{s.dtype}'-dtype NumPy array with missing "
                             "values. Specify an appropriate 'na_value' for this dtype.")
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
                raise ValueError("Cannot convert to cupy bool array with nulls.")
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
        return _wrap(getattr(self._owner._obj, self._kind)[self._key(key)], scalar_read=True)

    def __setitem__(self, key, value):
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
    """The way in: a pandas DataFrame or Series copied to the stand-in's device."""
    if isinstance(obj, pd.DataFrame):
        return StrictFrame._of(_device_copy(obj))
    if isinstance(obj, pd.Series):
        return StrictSeries._of(_device_copy(obj))
    if isinstance(obj, pd.Index):
        return StrictIndex._of(obj.copy())
    raise TypeError(f"from_pandas takes a pandas DataFrame, Series or Index; got "
                    f"{type(obj).__name__}")


class _StrictFrames:
    """The ``xdf`` of the stand-in (cuDF's place)."""

    __name__ = "gpurank.engine.strict_device.xdf"
    DataFrame = StrictFrame
    Series = StrictSeries
    Index = StrictIndex
    from_pandas = staticmethod(from_pandas)

    @staticmethod
    def read_parquet(path, **kwargs):
        return StrictFrame._of(_device_copy(pd.read_parquet(path, **kwargs)))

    @staticmethod
    def read_csv(path, **kwargs):
        return StrictFrame._of(_device_copy(pd.read_csv(path, **kwargs)))

    @staticmethod
    def concat(objs, **kwargs):
        return _wrap(pd.concat([_unwrap(o, "concat") for o in objs],
                               **_unwrap(kwargs, "concat")))

    def __getattr__(self, name):
        raise AttributeError(f"the device frame stand-in has no {name!r}")


#: The stand-in's frame namespace.
xdf = _StrictFrames()


def is_device_object(x) -> bool:
    """True for the stand-in's arrays and frames."""
    return isinstance(x, (StrictArray, _StrictPandas))
