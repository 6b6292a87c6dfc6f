"""Reading files out of a folder tree someone else made (an MLPerf results checkout).

A tree can hold anything: a FIFO (reading it blocks forever), a link to ``/dev/zero`` (reading
it never ends), a log of many gigabytes, names with terminal control characters. The readers
go through :func:`read_regular` (the bounded reader of every input,
:mod:`gpurank.engine.input_files`), which reads only regular files (a link is followed only when
it ends at a regular file), refuses files above a size limit before reading them, and never
blocks on open; and they quote what they cannot parse with :func:`excerpt`, a short escaped
excerpt, never raw bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...input_files import UnreadableFile, read_regular

__all__ = ["UnreadableFile", "read_regular", "is_regular_dir", "excerpt", "printable", "path_text"]


def is_regular_dir(path) -> bool:
    """True for a real folder (not a link to one): trees are walked without following links."""
    try:
        return stat.S_ISDIR(os.lstat(os.fspath(path)).st_mode)
    except OSError:
        return False


def printable(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1) escaped, so it is safe on a terminal."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def excerpt(value, limit: int = 60) -> str:
    """A short, escaped, quoted excerpt of a value read from a file, for a message."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="backslashreplace")
    text = printable(repr(value))
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def path_text(path) -> str:
    """A path as text for a message: control characters in file names escaped."""
    return printable(str(Path(path)))
