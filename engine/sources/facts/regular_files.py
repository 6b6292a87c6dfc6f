"""Reading files out of a folder tree someone else made (an MLPerf results checkout).

A tree can hold anything: a FIFO (reading it blocks forever), a link to ``/dev/zero`` (reading
it never ends), a log of many gigabytes, names with terminal control characters. The readers
go through :func:`read_regular`, which reads only regular files (a link is followed only when
it ends at a regular file), refuses files above a size limit before reading them, and never
blocks on open; and they quote what they cannot parse with :func:`excerpt`, a short escaped
excerpt, never raw bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UnreadableFile", "read_regular", "is_regular_dir", "excerpt", "printable", "path_text"]


class UnreadableFile(Exception):
    """A file the tree holds but a reader must not (or cannot) read; ``str`` says why."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


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
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(p)
            except OSError:
                raise UnreadableFile("is a broken link; skipped") from None
            if not stat.S_ISREG(st.st_mode):
                raise UnreadableFile(
                    f"is a link to {_kind(st.st_mode)}, not to a regular file; skipped"
                )
        elif not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"is {_kind(st.st_mode)}, not a regular file; skipped")
        if st.st_size > limit:
            raise UnreadableFile(
                f"has {st.st_size:,} bytes, more than the {limit:,} a file may have here; skipped"
            )
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
                    f"grew beyond the {limit:,} bytes a file may have here; skipped"
                )
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


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
