"""What marks a folder as a gpurank output set, and the places nothing may ever replace.

The manifest (``_gpurank_manifest.json``) is written last into every output set; a folder
with a readable manifest is a set gpurank wrote (:func:`read_manifest`). The publisher
(:mod:`.outputs`) and the write locks (:mod:`.writelock`) both read it.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["MANIFEST_NAME", "read_manifest", "protected_reason"]

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
