"""What marks a folder as a gpurank output set, and the places nothing may ever replace.

The manifest (``_gpurank_manifest.json``) is written last into every output set; a folder
with a readable manifest is a set gpurank wrote (:func:`read_manifest`). The publisher
(:mod:`.outputs`) and the write locks (:mod:`.writelock`) both read it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

__all__ = ["MANIFEST_NAME", "read_manifest", "protected_reason", "node_reason", "node_kind"]

#: The file that makes a folder a gpurank output set; written last, read by ``report``.
MANIFEST_NAME = "_gpurank_manifest.json"


def read_manifest(folder) -> dict | None:
    """The manifest of an output folder, or ``None`` when it has none or it is unreadable."""
    p = Path(folder) / MANIFEST_NAME
    try:
        if not p.is_file() or p.stat().st_size > 1 << 20:
            return None
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(raw, dict) or raw.get("format") != "gpurank.output":
        return None
    return raw


def protected_reason(target: Path) -> str | None:
    """Why ``target`` may never be replaced, or None."""
    try:
        resolved = target.resolve()
        cwd = Path.cwd().resolve()
    except OSError:
        return None
    if resolved == Path(resolved.anchor):
        return "is the root of the file system"
    if resolved == cwd or resolved in cwd.parents:
        return "is the current folder or one of its parents"
    home = Path.home()
    try:
        if resolved == home.resolve():
            return "is the home folder"
    except OSError:
        pass
    return None


def node_kind(mode: int) -> str:
    """What a file-system node is, in words, for a message (``st_mode`` of ``lstat``)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


#: Entries looked at inside a folder before it may be replaced (a folder larger than this
#: is walked no further: what was seen decides).
_WALK_LIMIT = 100_000


def node_reason(target: Path) -> str | None:
    """Why the node at ``target`` may never be written over, ``--overwrite`` or not, or None.

    The one rule for what gpurank may replace: a regular file, or a folder whose tree holds
    only regular files, folders and links (a link inside a folder is removed, never
    followed). A symbolic link at the target, a device, a FIFO or a socket, or a folder
    holding one of the last three, is never replaced: replacing ``/dev/null`` with a
    Parquet file breaks every process that writes to it.
    """
    try:
        mode = os.lstat(target).st_mode
    except OSError:
        return None  # nothing there (or nothing that can be seen): nothing to replace
    if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"is {node_kind(mode)}; gpurank replaces only regular files and folders"
    if not stat.S_ISDIR(mode):
        return None
    seen = 0
    for root, dirs, files in os.walk(target):
        for name in files + dirs:
            seen += 1
            try:
                mode = os.lstat(os.path.join(root, name)).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                rel = os.path.relpath(os.path.join(root, name), target)
                return (f"holds {node_kind(mode)} ('{rel[:60]}'); gpurank replaces only "
                        "folders of regular files")
        if seen > _WALK_LIMIT:
            break
    return None
