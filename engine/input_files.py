"""The one bounded reader of every input file: tables, datasets, model files, catalogs,
summaries, the files of an MLPerf tree.

An input path can name anything: a FIFO (reading it blocks forever), a link to ``/dev/zero``
(reading it never ends), a file of many gigabytes, JSON nested a million levels deep or
holding ``1e999`` and integers of 400 digits. Every reader goes through here:

- :func:`read_regular` reads only regular files (a link is followed only when it ends at
  one), refuses a file above a size limit before reading it, and never blocks on open;
- :func:`regular_file` checks a path the same way for readers that hand it to a library
  (pyarrow reads Parquet and CSV tables itself);
- :func:`read_json` adds the limits of JSON: UTF-8 text, at most :data:`MAX_JSON_DEPTH`
  levels of nesting, numbers finite (no ``NaN``, ``Infinity`` or ``1e999``) and integers
  within int64.

Each failure is one :class:`~gpurank.engine.errors.DataError` line that names the file.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

from .errors import DataError
from .manifest import node_kind

__all__ = ["UnreadableFile", "read_regular", "regular_file", "read_json", "memory_bytes",
           "MAX_JSON_DEPTH", "MAX_JSON_BYTES"]

#: Levels of nesting a JSON input may have (gpurank's own files have fewer than 8).
MAX_JSON_DEPTH = 64
#: A JSON input larger than this is refused before it is read (a model file is a few KB, a
#: summary of a large analysis a few MB).
MAX_JSON_BYTES = 256 << 20
#: Integers in JSON inputs must be below this in magnitude (int64, what every reader stores).
_INT_LIMIT = 2**63


class UnreadableFile(Exception):
    """A file a reader must not (or cannot) read; ``str`` says why."""


def _kind(mode: int) -> str:
    return node_kind(mode).replace("a character device", "a device").replace(
        "a block device", "a device")


def _stat_regular(p: str):
    """``os.stat`` of ``p`` when it is (or links to) a regular file; else UnreadableFile."""
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(p)
        except OSError:
            raise UnreadableFile("is a broken link; skipped") from None
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(
                f"is a link to {_kind(st.st_mode)}, not to a regular file; skipped")
    elif not stat.S_ISREG(st.st_mode):
        raise UnreadableFile(f"is {_kind(st.st_mode)}, not a regular file; skipped")
    return st


def _too_large(size: int, limit: int) -> UnreadableFile:
    return UnreadableFile(
        f"has {size:,} bytes, more than the {limit:,} a file may have here; skipped")


def read_regular(path, *, limit: int) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes.

    A symbolic link is followed only when it ends at a regular file. The file is opened
    without blocking (a FIFO swapped in after the check cannot hang the reader) and checked
    again on the open descriptor.

    Raises
    ------
    UnreadableFile
        Not a regular file (FIFO, device, socket, folder, a link to one of them or a broken
        link), larger than ``limit``, or unreadable; the message says which.
    """
    p = os.fspath(path)
    try:
        st = _stat_regular(p)
        if st.st_size > limit:
            raise _too_large(st.st_size, limit)
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except UnreadableFile:
        raise
    except OSError as exc:
        raise UnreadableFile(f"cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"is {_kind(st.st_mode)}, not a regular file; skipped")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile(
                    f"grew beyond the {limit:,} bytes a file may have here; skipped")
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _where(what: str, path) -> str:
    text = str(Path(path))
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return f"{what} '{text}'"


def _refusal(what: str, path, exc: UnreadableFile) -> DataError:
    return DataError(f"{_where(what, path)} {str(exc).removesuffix('; skipped')}")


def memory_bytes() -> int | None:
    """The machine's physical memory in bytes, or None when unknown."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def regular_file(path, *, what: str, limit: int | None = None) -> Path:
    """``path`` when it is (or links to) a regular file of at most ``limit`` bytes, for a
    reader that hands the path to a library.

    Raises
    ------
    DataError
        It does not exist, is not a regular file, or is larger than ``limit``.
    """
    p = Path(path)
    try:
        st = _stat_regular(os.fspath(p))
        if limit is not None and st.st_size > limit:
            raise _too_large(st.st_size, limit)
    except FileNotFoundError:
        raise DataError(f"{_where(what, p)} does not exist") from None
    except UnreadableFile as exc:
        raise _refusal(what, p, exc) from None
    except OSError as exc:
        raise DataError(f"{_where(what, p)} cannot be read ({exc.strerror or exc})") from None
    return p


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(f"holds the number {text[:40]}, beyond the range of a float64; "
                         "numbers must be finite")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 19 or abs(int(text)) >= _INT_LIMIT:
        raise _BadNumber(f"holds an integer of {digits} digits ({text[:20]}...); integers "
                         "must be below 2**63 in magnitude")
    return int(text)


def _constant(text: str):
    raise _BadNumber(f"holds {text}; numbers must be finite")


class _BadNumber(ValueError):
    pass


def _depth(value) -> int:
    """Levels of nesting of a parsed JSON value (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return deepest


def read_json(path, *, what: str, limit: int = MAX_JSON_BYTES, depth: int = MAX_JSON_DEPTH):
    """The parsed JSON of ``path``, read with every input limit.

    Parameters
    ----------
    path : path
    what : str
        What the file is, for messages (``"model file"``).
    limit : int
        Bytes the file may have.
    depth : int
        Levels of nesting it may have.

    Raises
    ------
    DataError
        Missing, not a regular file, too large, not UTF-8, not JSON, nested too deeply, or
        holding a number that is not finite or an integer beyond int64; one line.
    """
    p = Path(path)
    if not (p.exists() or p.is_symlink()):
        raise DataError(f"{_where(what, p)} does not exist")
    try:
        data = read_regular(p, limit=limit)
    except UnreadableFile as exc:
        raise _refusal(what, p, exc) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{_where(what, p)} is not UTF-8 text (byte {exc.start})") from None
    try:
        raw = json.loads(text, parse_float=_finite, parse_int=_bounded_int,
                         parse_constant=_constant)
    except _BadNumber as exc:
        raise DataError(f"{_where(what, p)} {exc}") from None
    except RecursionError:
        raise DataError(f"{_where(what, p)} is not valid JSON: it is nested more than {depth} "
                        "levels deep") from None
    except ValueError as exc:
        raise DataError(f"{_where(what, p)} is not valid JSON: "
                        f"{' '.join(str(exc).split())[:200]}") from None
    if _depth(raw) > depth:
        raise DataError(f"{_where(what, p)} is not valid JSON: it is nested more than {depth} "
                        "levels deep")
    return raw
