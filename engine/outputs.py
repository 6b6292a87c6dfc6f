"""Publishing outputs: nothing gpurank did not write is touched, and no reader ever sees a mix.

Every command that writes a user-named path goes through this module:

- :func:`publish_folder` yields a fresh staging folder beside the target. The caller writes
  the whole set into it; on success a manifest (``_gpurank_manifest.json``: the kind of
  output, a run id and the files of the set) is written last, and the staging folder is
  swapped in with one rename. Where the target already holds an older set, the two are
  exchanged atomically (``renameat2(RENAME_EXCHANGE)`` on Linux), so the target always holds
  the old set or the new one, never a mix and never nothing; the old set is then removed.
- :func:`publish_file` does the same for one file (a temporary sibling, one rename); a file
  written into an output set's folder joins the set, which is staged and swapped again.

Both hold the output's one-writer claim (:mod:`gpurank.engine.writelock`) while they write:
a second process writing the same path meanwhile is refused at once, naming this one.

An existing target is replaced only when it is gpurank's own output (a folder with a
manifest, an empty folder, or a file that carries gpurank's marker) or when the caller
passes ``overwrite=True``. The current folder, its ancestors and the file system root are
never replaced. Leftovers of interrupted runs (staging folders and files named
``.NAME.gpurank-staging-PID-ID``) are removed by the next publish to the same target once
their process is gone, and a set that an interrupted swap left aside (only on file systems
without an atomic exchange) is put back; both are reported in the returned notes.

See ``docs/reliability.md`` for what an output path can hold after a crash.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .writelock import claim

__all__ = [
    "MANIFEST_NAME",
    "Publication",
    "publish_folder",
    "publish_file",
    "read_manifest",
    "is_gpurank_output",
    "check_target",
    "clean_leftovers",
]

#: The file that makes a folder a gpurank output set; written last, read by ``report``.
MANIFEST_NAME = "_gpurank_manifest.json"
_STAGING = "gpurank-staging"
_OLD = "gpurank-old"
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<what>gpurank-staging|gpurank-old)-(?P<pid>\d+)-"
                       r"(?P<id>[0-9a-f]{8})$")
#: Marker file inside a staging folder: proves the folder is gpurank's before it is removed.
_STAGING_MARKER = ".gpurank-staging"


@dataclass
class Publication:
    """What a publish call is writing: the staging path to write into, and what happened.

    Attributes
    ----------
    path : Path
        The staging folder (or file) to write the new output into.
    target : Path
        Where the output will be once it is complete.
    run_id : str
        A fresh id of this output; stored in the manifest and in the files of the set, so a
        reader can tell whether two files belong together.
    notes : list of str
        Leftovers of interrupted runs that were cleaned or restored, and what was replaced.
    manifest : dict
        Extra fields the caller wants in the manifest (criteria, seed, rows, ...).
    """

    path: Path
    target: Path
    run_id: str
    notes: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)


# -- ownership -------------------------------------------------------------------------------


def _gpurank_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("gpurank")
    except metadata.PackageNotFoundError:
        return "unknown"


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


def _parquet_is_ours(path: Path) -> bool:
    try:
        import pyarrow.parquet as pq

        meta = pq.read_metadata(path).metadata or {}  # the file's key-value metadata
    except Exception:  # noqa: BLE001 - unreadable means "not recognizably ours"
        return False
    return any(k.startswith(b"gpurank") for k in meta)


def _head(path: Path, size: int = 4096) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


#: Markers the text writers embed near the top; a file is gpurank's when its head carries one.
_TEXT_MARKERS = {
    ".html": (b'<meta name="generator" content="gpurank',),
    ".md": (b"<!-- generated by gpurank", b"<!-- Generated file: do not edit."),
}


def _json_is_ours(path: Path) -> bool:
    try:
        if path.stat().st_size > 64 << 20:
            return False
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(raw, dict) and str(raw.get("format", "")).startswith("gpurank.")


#: Columns ``gpurank predict`` adds to a table: a CSV whose header has them all is its output.
_PREDICT_MARKERS = (b"predicted_time_to_train_min", b"predicted_throughput", b"prediction_note")


def _csv_is_ours(path: Path) -> bool:
    """A simulated sweep (exactly the simulator's header) or a predicted table (a header
    with the columns predict adds)."""
    from .sources.simulate import COLUMNS

    first = _head(path, 1 << 16).split(b"\n", 1)[0].strip()
    if first == ",".join(COLUMNS).encode():
        return True
    fields = set(first.split(b","))
    return all(m in fields for m in _PREDICT_MARKERS)


def _file_is_ours(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq", ".parq"):
        return _parquet_is_ours(path)
    if suffix == ".json":
        return _json_is_ours(path)
    if suffix in _TEXT_MARKERS:
        head = _head(path)
        return any(m in head for m in _TEXT_MARKERS[suffix])
    if suffix == ".csv":
        return _csv_is_ours(path)
    # A name without a known suffix (``simulate -o sweep`` writes Parquet there): the
    # content says what the file is.
    head = _head(path)
    if head.startswith(b"PAR1"):
        return _parquet_is_ours(path)
    if head.lstrip().startswith(b"{"):
        return _json_is_ours(path)
    return any(m in head for markers in _TEXT_MARKERS.values() for m in markers)


def _legacy_folder_is_ours(path: Path) -> bool:
    """Output folders written before manifests existed: only gpurank's own file names, and a
    ranking or sweep whose metadata says gpurank wrote it."""
    try:
        names = set(os.listdir(path))
    except OSError:
        return False
    if names and names <= {"ranking.parquet", "summary.json", "report.html", "ranking"}:
        if "ranking.parquet" in names:
            return _parquet_is_ours(path / "ranking.parquet")
        if "ranking" in names:
            return (path / "ranking" / "_SUCCESS").is_file()
    if "_gpurank_simulate.json" in names:
        return all(n == "_gpurank_simulate.json" or re.fullmatch(r"part-\d+\.parquet", n)
                   for n in names)
    return False


def is_gpurank_output(path) -> bool:
    """True when ``path`` is something gpurank wrote and may therefore replace.

    A folder is gpurank's when it holds a manifest (or, for folders written before
    manifests, only gpurank's file names); an empty folder holds nothing to lose. A file is
    gpurank's when it carries the marker its writer embeds (Parquet key-value metadata, the
    ``format`` key of a model JSON, the generator tag of a report or study, the header of a
    simulated CSV).
    """
    p = Path(path)
    if p.is_symlink():
        return False
    if p.is_dir():
        try:
            empty = not any(os.scandir(p))
        except OSError:
            return False
        return empty or read_manifest(p) is not None or _legacy_folder_is_ours(p)
    if p.is_file():
        return _file_is_ours(p)
    return False


def _protected(target: Path) -> str | None:
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


#: Bytes a staging name adds to the target's name: ".NAME.gpurank-staging-PID-XXXXXXXX".
_STAGING_OVERHEAD = len(".." + _STAGING + "-4194304-") + 8


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder if folder.exists() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def check_target(target, *, name, overwrite=False, folder=False) -> Path:
    """Check up front that ``target`` may be written, before any work is done.

    Parameters
    ----------
    target : path
        Where the output will go.
    name : str
        The parameter that named it, for messages (e.g. ``"--out"``).
    overwrite : bool
        Allow replacing a path gpurank did not write.
    folder : bool
        The output is a folder (an analysis set or a partitioned dataset).

    Returns
    -------
    Path

    Raises
    ------
    UsageError
        The path is protected, its parent is not a folder, or it exists, is not gpurank's
        output and ``overwrite`` is False.
    """
    p = Path(os.fspath(target))
    if not str(target).strip():
        raise UsageError(f"{name} is empty; name the output path")
    if "\x00" in str(target):
        raise UsageError(f"{name} holds a NUL character; name a real path")
    longest = _name_max(p.parent) - _STAGING_OVERHEAD
    if len(os.fsencode(p.name)) > longest:
        raise UsageError(f"{name}: the name '{p.name[:40]}...' is {len(os.fsencode(p.name))} "
                         f"bytes long; at most {longest} are allowed here")
    why = _protected(p)
    if why:
        raise UsageError(f"{name} '{target}' {why}; name a new path for gpurank's output")
    parent = p.parent
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{name} '{target}': '{parent}' is not a folder")
    if p.is_symlink():
        raise UsageError(f"{name} '{target}' is a symbolic link; name the real path")
    if p.exists() or p.is_symlink():
        if folder and p.exists() and not p.is_dir():
            if not overwrite:
                raise UsageError(f"{name} '{target}' is a file and the output is a folder; name "
                                 "another path, or pass --overwrite to replace the file")
        elif not folder and p.is_dir():
            raise UsageError(f"{name} '{target}' is a folder and the output is one file; name a "
                             "file path")
        if not overwrite and not is_gpurank_output(p):
            raise UsageError(f"{name} '{target}' exists and was not written by gpurank; name "
                             "another path, or pass --overwrite to replace it")
    return p


# -- leftovers -------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def _remove(path: Path) -> None:
    """Remove a staging or replaced output so that, killed halfway, what is left is still
    recognizably gpurank's: the marker goes in first and comes out last."""
    if not path.is_dir() or path.is_symlink():
        path.unlink(missing_ok=True)
        return
    marker = path / _STAGING_MARKER
    if not marker.exists():
        marker.write_bytes(b"")
    for entry in os.scandir(path):
        if entry.name == _STAGING_MARKER:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
    marker.unlink()
    path.rmdir()


def _human(nbytes: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if nbytes < 1000 or unit == "TB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1000
    return f"{nbytes} B"  # pragma: no cover


def clean_leftovers(target) -> list[str]:
    """Remove what interrupted runs left beside ``target``; put back a set left aside.

    Only paths named ``.NAME.gpurank-staging-PID-ID`` / ``.NAME.gpurank-old-PID-ID`` whose
    process is gone are touched. A staging folder must also be provably gpurank's: it holds
    the marker file (written right after the folder is made), or a manifest (a complete set,
    new or swapped out), or nothing.

    Returns
    -------
    list of str
        One note per path removed or restored.
    """
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    notes = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return notes
    olds = []
    for entry in entries:
        m = _LEFTOVER.match(entry.name)
        if not m or m["name"] != target.name or _alive(int(m["pid"])):
            continue
        path = Path(entry.path)
        if path.is_dir() and not path.is_symlink() and m["what"] == _STAGING and not (
                path / _STAGING_MARKER).exists() and read_manifest(path) is None:
            # A run killed between creating its staging folder and marking it leaves it
            # empty; anything else without the marker is not provably gpurank's.
            try:
                path.rmdir()
                notes.append(f"removed '{path.name}' (empty), left by an interrupted run")
            except OSError:
                pass
            continue
        if m["what"] == _OLD:
            olds.append(path)
            continue
        size = _size(path)
        try:
            _remove(path)
        except OSError as exc:
            notes.append(f"could not remove '{path}', left by an interrupted run: {exc}")
            continue
        notes.append(f"removed '{path.name}' ({_human(size)}), left by an interrupted run")
    for path in olds:
        # Only a two-step swap (no atomic exchange) can leave the old set aside; with no
        # complete set at the target, the old one goes back.
        if not target.exists() and not target.is_symlink():
            try:
                os.rename(path, target)
                notes.append(f"restored '{target}' from '{path.name}', which an interrupted run "
                             "had moved aside")
                continue
            except OSError:
                pass
        size = _size(path)
        try:
            _remove(path)
            notes.append(f"removed '{path.name}' ({_human(size)}), an older output an "
                         "interrupted run had replaced")
        except OSError as exc:
            notes.append(f"could not remove '{path}', left by an interrupted run: {exc}")
    return notes


# -- the swap --------------------------------------------------------------------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux ``renameat2``); False where that is unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(staging: Path, target: Path, tag: str) -> Path | None:
    """Put ``staging`` at ``target``; return the path now holding the old output, if any."""
    if not target.exists() and not target.is_symlink():
        os.rename(staging, target)
        return None
    if _exchange(staging, target):
        return staging  # the old output now sits at the staging name
    if target.is_dir() and not any(os.scandir(target)):
        os.rename(staging, target)  # rename(2) replaces an empty folder atomically
        return None
    if staging.is_file():
        os.replace(staging, target)  # a file: one atomic rename
        return None
    # No atomic exchange on this file system: move the old set aside under a name the next
    # run recognizes (and restores, if this process dies before the new set is in place).
    old = target.parent / f".{target.name}.{_OLD}-{tag}"
    os.rename(target, old)
    os.rename(staging, target)
    return old


def _staging_name(target: Path) -> tuple[Path, str]:
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return target.parent / f".{target.name}.{_STAGING}-{tag}", tag


def _umask_mode(mode: int) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


@contextmanager
def publish_folder(target, *, kind, name="--out", overwrite=False, manifest=None):
    """Write a whole output set into a staging folder and swap it in at ``target``.

    Parameters
    ----------
    target : path
        The output folder.
    kind : str
        What the set is (``"analysis"``, ``"dataset"``); recorded in the manifest.
    name : str
        The parameter that named the target, for messages.
    overwrite : bool
        Allow replacing a path that gpurank did not write.
    manifest : dict, optional
        Extra manifest fields; more can be added to ``Publication.manifest`` while writing.

    Yields
    ------
    Publication
        Write the set into ``publication.path``. When the block ends without an exception,
        the manifest is written (listing every file of the set) and the folder swapped in;
        on an exception the staging folder is removed and the target is untouched.
    """
    target = check_target(target, name=name, overwrite=overwrite, folder=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    with claim(target, name=name) as held:
        notes = (held.notes if held.outer else []) + clean_leftovers(target)
        pub = Publication(path=target, target=target, run_id=uuid.uuid4().hex, notes=notes,
                          manifest=dict(manifest or {}))
        with _staged_set(pub, kind):
            yield pub


@contextmanager
def _staged_set(pub: Publication, kind: str, *, linked=()):
    """Stage the set of ``pub`` in a fresh folder beside its target (``pub.path`` is set to
    it), and swap it in with its manifest when the block ends without an exception.
    ``linked``: files of the current set to carry over (hard links where possible)."""
    target = pub.target
    staging, tag = _staging_name(target)
    os.mkdir(staging, _umask_mode(0o777))
    pub.path = staging
    try:
        (staging / _STAGING_MARKER).write_bytes(b"")
        for rel in linked:
            _link_or_copy(target / rel, staging / rel)
        yield pub
        _write_manifest(pub, kind)
        (staging / _STAGING_MARKER).unlink()
        old = _swap_in(staging, target, tag)
    except BaseException:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:  # the old output now sits at the staging name
        try:
            _remove(old)
        except OSError as exc:
            pub.notes.append(f"could not remove the replaced output '{old}': {exc}")


def _link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` as a second name of ``src`` (no data copied), or a copy where the file system
    has no hard links."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write_manifest(pub: Publication, kind: str) -> None:
    files = {}
    for root, dirs, names in os.walk(pub.path):
        dirs.sort()
        for n in sorted(names):
            if n in (MANIFEST_NAME, _STAGING_MARKER):
                continue
            full = Path(root) / n
            files[full.relative_to(pub.path).as_posix()] = full.stat().st_size
    body = {
        "format": "gpurank.output",
        "kind": kind,
        "run_id": pub.run_id,
        "gpurank": _gpurank_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **pub.manifest,
        "files": files,
    }
    from .io import to_jsonable

    text = json.dumps(to_jsonable(body), indent=2, allow_nan=False) + "\n"
    path = pub.path / MANIFEST_NAME
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


@contextmanager
def publish_file(target, *, name="--output", overwrite=False):
    """Write one output file through a temporary sibling renamed onto ``target``.

    Parameters
    ----------
    target : path
    name : str
        The parameter that named the target, for messages.
    overwrite : bool
        Allow replacing a file that gpurank did not write.

    Yields
    ------
    Publication
        Write the file at ``publication.path``; it is renamed onto the target when the block
        ends without an exception, and removed otherwise. A file whose folder is a gpurank
        output set (``report.html`` rebuilt into an analysis folder) joins the set: the set
        is staged again with it and swapped in whole, its manifest listing the new file.
    """
    target = check_target(target, name=name, overwrite=overwrite, folder=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    with claim(target, name=name) as held:
        notes = held.notes if held.outer else []
        home = read_manifest(target.parent)
        if home is not None:
            # A file of an output set (report.html into an analysis folder): the set is
            # staged again with the new file and a manifest that lists it.
            yield from _into_set(target, home, notes)
            return
        notes += clean_leftovers(target)
        staging, _tag = _staging_name(target)
        pub = Publication(path=staging, target=target, run_id=uuid.uuid4().hex, notes=notes)
        try:
            yield pub
            if staging.exists():
                os.chmod(staging, _umask_mode(0o666))
            os.replace(staging, target)
        except BaseException:
            try:
                _remove(staging)
            except OSError:
                pass
            raise


def _into_set(target: Path, home: dict, notes: list):
    """Publish the file ``target`` as a member of the output set in its folder: every other
    file of the set is carried over into a staging folder, the new file is written there, and
    the set is swapped in whole with a manifest that lists it (same run id and fields)."""
    folder = target.parent
    if _protected(folder):
        yield from _into_set_in_place(target, home, notes)
        return
    notes += clean_leftovers(folder)
    members = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            rel = (Path(root) / n).relative_to(folder)
            if rel.as_posix() not in (MANIFEST_NAME, target.name):
                members.append(rel)
    fixed = {"format", "kind", "run_id", "gpurank", "created", "files"}
    pub = Publication(path=folder, target=folder, run_id=str(home.get("run_id", "")),
                      notes=notes,
                      manifest={k: v for k, v in home.items() if k not in fixed})
    with _staged_set(pub, str(home.get("kind", "analysis")), linked=members):
        yield Publication(path=pub.path / target.name, target=target, run_id=pub.run_id,
                          notes=notes)


def _into_set_in_place(target: Path, home: dict, notes: list):
    """:func:`_into_set` for a set whose folder cannot be swapped (the current folder, whose
    replacement would leave the user's shell in a removed folder): the file is renamed into
    the folder, then a manifest that lists it, each in one atomic rename. A crash between
    the two leaves the new file beside a manifest that gives its old size."""
    notes += clean_leftovers(target)
    staging, _tag = _staging_name(target)
    pub = Publication(path=staging, target=target, run_id=str(home.get("run_id", "")),
                      notes=notes)
    try:
        yield pub
        os.chmod(staging, _umask_mode(0o666))
        os.replace(staging, target)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    manifest = target.parent / MANIFEST_NAME
    files = dict(home.get("files") or {}, **{target.name: target.stat().st_size})
    text = json.dumps({**home, "files": files}, indent=2, allow_nan=False) + "\n"
    tmp, _tag = _staging_name(manifest)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, manifest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
