"""One writer at a time per output path.

Two runs writing the same output path would both succeed, and one run's work would be
replaced by the other's without a word. Every command that writes an output claims its path
first (the command line before any work; :mod:`gpurank.engine.outputs` again when it
publishes, for callers of the Python API): a lock file beside the target,
``.NAME.gpurank-lock``, held with an exclusive ``flock``. A second claim, from another
process, fails at once with :class:`~gpurank.engine.errors.UsageError` (exit code 2) naming
the run that holds it: its process id and when it started.

The kernel drops an ``flock`` when its process dies, ``kill -9`` included, so a lock file
left by a killed run never blocks the next one: the next claim takes the lock, reads who
left it, checks that this process is gone (no process with that id, or one that started at
another time: the id was reused) and says so in a note. A lock file is removed when its
claim ends.

A file written inside a gpurank output set (``report.html`` into an analysis folder) claims
the set's folder: changing one file of a set is writing the set. A file written inside a
staging folder is part of a set its publisher has claimed already. Claims are re-entrant
within a process. Where ``flock`` does not exist (not POSIX), claims lock nothing.

A claim holds or refuses: the lock file is opened without following a link
(``O_NOFOLLOW``) and without blocking, and a lock path that is a folder, a link, a FIFO or
device, a read-only file, or a file ``flock`` cannot lock refuses the run (exit code 2);
a run never goes ahead without its lock, and a link's target is never created or written.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .manifest import node_kind, protected_reason, read_manifest

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None

__all__ = ["Claim", "claim", "lock_path", "process_start"]

_SUFFIX = ".gpurank-lock"
#: Names of staging folders (see outputs.py); what is written inside one is already claimed.
_STAGING = re.compile(r"^\..+\.gpurank-staging-\d+-[0-9a-f]{8}$")
#: How long a busy claim waits for the holder to write who it is (it writes right after
#: taking the lock).
_READ_WAIT_S = 0.5


@dataclass
class Claim:
    """A held claim on an output path.

    Attributes
    ----------
    target : Path
        The output path claimed.
    lock : Path or None
        The lock file; None where nothing is locked yet (the path's folder does not exist:
        a later claim, once the folder exists, locks it; no ``flock``). A lock file that
        exists but cannot be locked, or cannot be made in an existing folder, is a refusal,
        never a claim without a lock.
    outer : bool
        This claim took the lock; False for a re-entrant claim of a path this process holds.
    notes : list of str
        What taking the lock found: a lock left by a run that is gone.
    """

    target: Path
    lock: Path | None
    outer: bool = True
    notes: list = field(default_factory=list)


@dataclass
class _Held:
    fd: int
    pid: int
    claim: Claim
    count: int = 1


_held: dict = {}
_held_guard = threading.Lock()


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of process ``pid`` from Linux
    ``/proc``, or None when unknown."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            stat = fh.read()
        # The fields after the command name (in parentheses, which may hold anything).
        fields = stat[stat.rindex(b")") + 2:].split()
        return fields[0].decode("ascii", "replace"), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (Linux), or None when
    unknown. With the id, it tells a process from a later one that reused the id."""
    stat = _proc_stat(pid)
    return stat[1] if stat is not None else None


def _start_text(ticks: int | None) -> str:
    """A start time in ticks since boot as UTC wall-clock time; now when unknown."""
    when = time.time()
    if ticks is not None:
        try:
            with open("/proc/stat", "rb") as fh:
                boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
            when = boot + ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, StopIteration, ValueError):
            pass
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))


def _me() -> dict:
    pid = os.getpid()
    ticks = process_start(pid)
    return {"format": "gpurank.lock", "pid": pid, "start_ticks": ticks,
            "started": _start_text(ticks), "host": socket.gethostname()}


def _running(info: dict) -> bool:
    """Whether the process a lock file names still runs (on this host; another host's
    process cannot be checked and counts as running)."""
    if info.get("host") != socket.gethostname():
        return True
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        pass
    stat = _proc_stat(pid)
    if stat is None:
        return True  # no /proc: the process id answers, which is all that can be known
    state, ticks = stat
    # A zombie (killed, not yet reaped) still answers to its id; a different start time
    # is a new process that reused the id.
    return state not in ("Z", "X") and info.get("start_ticks") in (None, ticks)


def _who(info: dict | None) -> str:
    if not info:
        return "another gpurank run (its process id is not recorded yet)"
    host = info.get("host")
    where = f" on host {host}" if host and host != socket.gethostname() else ""
    return f"gpurank run pid {info.get('pid')}{where} (started {info.get('started', '?')})"


def lock_path(target) -> Path | None:
    """The lock file that guards writes to ``target``, or None where none can be made.

    ``.NAME.gpurank-lock`` beside the target; for a file inside a gpurank output set, the
    set's own lock (the set is what changes). None for a target inside a staging folder,
    whose publisher holds the set's lock, and for paths whose folder does not exist or that
    are no usable name.
    """
    text = os.fspath(target)
    if not str(text).strip() or "\x00" in str(text):
        return None
    p = Path(os.path.abspath(text))
    if p.name in ("", ".", "..") or protected_reason(p):
        return None  # refused by the command's own check, which names why
    # One lock per folder whatever the spelling of its path (symbolic links, "..").
    p = Path(os.path.realpath(p.parent)) / p.name
    if any(_STAGING.match(part) for part in p.parent.parts):
        return None
    if p.parent.is_dir() and not p.parent.is_symlink() and p.parent.parent != p.parent and \
            read_manifest(p.parent) is not None:
        p = p.parent
    try:
        if not p.parent.is_dir():
            return None
        longest = os.pathconf(p.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        return None
    name = f".{p.name}{_SUFFIX}"
    if len(os.fsencode(name)) > longest:
        return None
    return p.parent / name


def _read_info(fd: int) -> dict | None:
    """The record a lock file holds, or None (empty, or not a gpurank lock record)."""
    try:
        raw = os.pread(fd, 1 << 16, 0)
        info = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) and info.get("format") == "gpurank.lock" else None


def _has_content(fd: int) -> bool:
    try:
        return bool(os.pread(fd, 1, 0))
    except OSError:
        return False


def _holder(fd: int) -> dict | None:
    """Who holds a busy lock: its record, waiting a moment for a holder that has just taken
    it to write the record."""
    deadline = time.monotonic() + _READ_WAIT_S
    while True:
        info = _read_info(fd)
        if info is not None or time.monotonic() > deadline:
            return info
        time.sleep(0.02)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: The errors of opening a lock path that say the path itself cannot hold a lock (a folder,
#: a link refused by O_NOFOLLOW, a FIFO or device, a read-only file or file system): a
#: refusal in the user's words. Any other (a full disk, an I/O error) is the file system's
#: failure and surfaces as one, like every other failed write.
_UNLOCKABLE = frozenset({errno.EISDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.EROFS,
                         errno.ENXIO, errno.ENOTDIR, errno.ETXTBSY, errno.EINVAL,
                         errno.ENOLCK, errno.EOPNOTSUPP})


def _unlockable(path: Path, target: Path, name: str, why: str) -> UsageError:
    return UsageError(f"{name} '{target}' cannot be claimed: its lock file '{path}' cannot be "
                      f"locked ({why}); a run never writes without its lock: move it away or "
                      "name another path")


def _check_lock_node(path: Path, target: Path, name: str) -> None:
    """A lock path must be a regular file gpurank can write, or nothing yet: a folder, a
    link (whose target gpurank would create or write), a FIFO, a device or a read-only
    file is a refusal, never a run without a lock."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _unlockable(path, target, name, exc.strerror or str(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise _unlockable(path, target, name, f"it is {node_kind(st.st_mode)}")
    if not st.st_mode & 0o222:
        raise _unlockable(path, target, name, "it is read-only")


def _take(path: Path, target: Path, name: str) -> tuple[int, list] | None:
    """Open and lock ``path``; return the descriptor and the notes, None when it cannot be
    made; raise when another process holds it."""
    for _ in range(50):
        _check_lock_node(path, target, name)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW
                         | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0), 0o644)
        except FileNotFoundError:
            return None  # the folder went away: the write itself will say why
        except OSError as exc:
            if exc.errno not in _UNLOCKABLE:
                raise
            raise _unlockable(path, target, name, exc.strerror or str(exc)) from None
        try:
            kind = os.fstat(fd).st_mode
            if not stat.S_ISREG(kind):  # swapped in between the check and the open
                raise _unlockable(path, target, name, f"it is {node_kind(kind)}")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = _holder(fd)
            os.close(fd)
            raise UsageError(f"{name} '{target}' is being written by {_who(info)}; wait for "
                             "it to finish, or name another path") from None
        except UsageError:
            os.close(fd)
            raise
        except OSError as exc:
            os.close(fd)  # a file system without locks: no run goes ahead unlocked
            if exc.errno not in _UNLOCKABLE:
                raise
            raise _unlockable(path, target, name, exc.strerror or str(exc)) from None
        try:
            mine, now = os.fstat(fd), os.stat(path)
            same = (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)
        except OSError:
            same = False
        if not same:
            # The holder removed the file between our open and our lock: lock the new one.
            os.close(fd)
            continue
        notes = []
        left = _read_info(fd)
        if left is None and _has_content(fd):
            os.close(fd)  # a file of that name that gpurank did not write: never replaced
            raise UsageError(f"'{path}' exists and is not a gpurank lock; {name} '{target}' "
                             "cannot be claimed while it is there: move it away")
        if left is not None and left.get("pid") != os.getpid():
            state = ("which is no longer running" if not _running(left) else
                     "which no longer held it")
            notes.append(f"took over the lock of '{target}' left by {_who(left)}, {state}")
        data = json.dumps({**_me(), "target": str(target)}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        except OSError:
            pass  # the lock holds without the record; a busy claim then names no process
        return fd, notes
    return None


@contextmanager
def claim(target, *, name: str = "--out"):
    """Hold the one-writer claim on ``target`` for the duration of the block.

    Parameters
    ----------
    target : path
        The output path (file or folder) about to be written.
    name : str
        The option that named it, for the message.

    Yields
    ------
    Claim

    Raises
    ------
    UsageError
        Another live process holds the claim; the message names its process id and start
        time.
    """
    path = lock_path(target) if fcntl is not None else None
    shown = Path(os.fspath(target)) if str(os.fspath(target)).strip() else Path(".")
    if path is None:
        yield Claim(target=shown, lock=None)
        return
    key = str(path)
    with _held_guard:
        held = _held.get(key)
        again = held is not None and held.pid == os.getpid()
        if again:
            held.count += 1
    if again:
        try:
            yield Claim(target=shown, lock=path, outer=False)
        finally:
            _release(key)
        return
    taken = _take(path, shown, name)
    if taken is None:
        yield Claim(target=shown, lock=None)
        return
    fd, notes = taken
    c = Claim(target=shown, lock=path, notes=notes)
    with _held_guard:
        _held[key] = _Held(fd=fd, pid=os.getpid(), claim=c)
    try:
        yield c
    finally:
        _release(key)


def _release(key: str) -> None:
    with _held_guard:
        held = _held.get(key)
        if held is None:
            return
        held.count -= 1
        if held.count > 0:
            return
        del _held[key]
    # Removed before it is unlocked: a process that opened it meanwhile finds the file gone
    # when it gets the lock, and locks a new one.
    try:
        os.unlink(key)
    except OSError:
        pass
    try:
        os.close(held.fd)
    except OSError:
        pass
