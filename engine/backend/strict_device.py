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

Every device-to-host copy is recorded when :func:`record_host_copies` is active, with its
size and the gpurank function that asked for it.

What it cannot check
--------------------
- Speed, memory and anything about the device itself (out of memory, streams, kernels'
  launch limits, FMA contraction in compiled CUDA code): the CUDA kernels run where Numba
  runs them (the simulator in CI) on NumPy copies of the arrays.
- cuDF's NaN-versus-null distinction beyond the way in: ``from_pandas`` turns NaN into
  nulls (pandas' nullable floats) as cuDF does, but a NaN produced by arithmetic on a
  nullable float column is a null here and a value on cuDF. The engine calls
  ``nans_to_nulls`` where that matters.
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
    "FrameStandIn",
    "xp",
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
#: The stand-in and the backend package itself: a copy is charged to the engine code that
#: asked the backend for it.
_SKIP_PREFIX = "gpurank.engine.backend"


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
        if mod.startswith("gpurank.") and not mod.startswith(_SKIP_PREFIX):
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


class FrameStandIn:
    """The base of the frame stand-ins (:mod:`.strict_frames`): what the arrays refuse to
    mix with, and what ``xp.asarray`` takes a column's device memory from."""

    __slots__ = ()


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
    if isinstance(x, FrameStandIn):
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
    if isinstance(key, (pd.DataFrame, pd.Series, pd.Index, FrameStandIn)):
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

    __name__ = "gpurank.engine.backend.strict_device.xp"

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
    if isinstance(a, FrameStandIn) and hasattr(type(a), "to_cupy"):
        return a.to_cupy(dtype=dtype)  # cuDF columns expose device memory
    return StrictArray(np.array(a, dtype=dtype, copy=True))


#: The stand-in's array namespace (CuPy's place).
xp = _StrictNumpy()


def is_device_object(x) -> bool:
    """True for the stand-in's arrays and frames."""
    return isinstance(x, (StrictArray, FrameStandIn))
