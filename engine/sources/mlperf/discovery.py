"""Where the systems of an MLPerf Training results tree are: rounds, submitters, system
descriptions and benchmark folders, found once each and in reading order.

Every problem met on the way is a :class:`ReadWarning` (never a silently skipped system);
:class:`ReadWarnings` collects them, or raises at the first one in strict mode.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import DataError, UsageError
from ...params import ParamError, shown
from ..facts.regular_files import (
    excerpt,
    is_regular_dir,
    path_text,
    printable,
)

__all__ = ["ALL_BENCHMARKS", "ReadWarning", "ReadWarnings", "SystemRef", "entry_exists",
           "round_key", "natural_key", "add_published_benchmarks", "check_benchmark", "as_paths", "discover"]


#: ``benchmark=`` value that reads every benchmark folder
ALL_BENCHMARKS = "all"
_BENCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class ReadWarning:
    """One problem met while reading: the file it concerns and what was wrong."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class ReadWarnings:
    """The warnings of one read: each kept once (path and reason, control characters escaped),
    or raised as a :class:`~gpurank.engine.errors.DataError` at once when ``strict``."""
    def __init__(self, strict: bool):
        self.strict = strict
        self.items: list[ReadWarning] = []
        self._seen: set[ReadWarning] = set()

    def add(self, path, reason: str) -> None:
        # file names and values come from the tree: control characters are escaped
        w = ReadWarning(path_text(path), printable(reason))
        if self.strict:
            raise DataError(f"{w.path}: {w.reason} (strict mode)")
        # a description shared by several benchmark rows is reported once
        if w not in self._seen:
            self._seen.add(w)
            self.items.append(w)


_ROUND_RE = re.compile(r"v(\d{1,4})\.(\d{1,4})(?!\d)")


@dataclass
class SystemRef:
    """One system of one round, as found in the tree: its round, submitter and name, its
    description file (or a fallback) and its benchmark's result folder."""
    round: str
    submitter: str
    system: str
    desc_path: Path | None
    bench_dir: Path | None
    desc_is_fallback: bool = False
    #: the benchmark folder's name ("" when the system has no result folder)
    bench_folder: str = ""


def _subdirs(p: Path, warn: "ReadWarnings | None" = None) -> list[Path]:
    """Real sub-folders of ``p``, sorted; links to folders are not followed (a link could
    lead out of the tree, or back into it forever)."""
    if not is_regular_dir(p):
        return []
    try:
        children = sorted(p.iterdir())
    except OSError:
        return []
    out = []
    for c in children:
        if c.name.startswith("."):
            continue
        if is_regular_dir(c):
            out.append(c)
        elif warn is not None and c.is_symlink() and c.is_dir():
            warn.add(c, "is a link to a folder; not followed")
    return out


def entry_exists(p: Path) -> bool:
    """The entry exists (also a broken link or a FIFO, which the reader reports)."""
    return os.path.lexists(p)


def _round_of(p: Path) -> str | None:
    for part in (p.name, *(q.name for q in p.parents)):
        m = _ROUND_RE.search(part)
        if m:
            return f"v{m.group(1)}.{m.group(2)}"
    return None


def _is_submitter(p: Path) -> bool:
    return is_regular_dir(p / "results") or is_regular_dir(p / "systems")


def _is_round_root(p: Path) -> bool:
    if p.name == "v0.5.0" or is_regular_dir(p / "v0.5.0"):
        return True
    return any(_is_submitter(c) for c in _subdirs(p))


def _find_round_roots(p: Path, depth: int = 0) -> list[tuple[Path, str | None]]:
    """(round root, only this submitter or None) pairs under ``p``."""
    if _is_round_root(p):
        return [(p, None)]
    if _is_submitter(p) and p.parent != p:
        return [(p.parent, p.name)]
    if depth >= 4:
        return []
    out: list[tuple[Path, str | None]] = []
    for c in _subdirs(p):
        out.extend(_find_round_roots(c, depth + 1))
    return out


def natural_key(p: Path):
    """A sort key of a path's name whose digit runs compare as numbers (``run_10`` after
    ``run_9``)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def _bench_dirs(sysdir: Path, select: str, warn: "ReadWarnings") -> list[Path]:
    """The benchmark folders of a system's result folder that ``select`` asks for."""
    if select == ALL_BENCHMARKS:
        return _subdirs(sysdir, warn)
    d = sysdir / select
    return [d] if is_regular_dir(d) else []


def _folder(bench_dir: Path | None, select: str) -> str:
    """The benchmark a row is of before its logs are read: its folder, else the one asked for
    (a described system without results; "" when reading every benchmark)."""
    if bench_dir is not None:
        return bench_dir.name
    return "" if select == ALL_BENCHMARKS else select


def _systems_in_round(root: Path, only: str | None, select: str,
                      warn: ReadWarnings) -> list[SystemRef]:
    rnd = _round_of(root)
    if rnd is None:
        rnd = root.name
        warn.add(root, f"cannot tell the round from the folder name {excerpt(root.name)}; "
                       "using it as the round")
    refs: list[SystemRef] = []
    v05_base = root if root.name == "v0.5.0" else root / "v0.5.0"
    if is_regular_dir(v05_base):
        for sub in _subdirs(v05_base, warn):
            if only and sub.name != only:
                continue
            for dirpath, dirnames, _files in os.walk(sub):
                dirnames.sort()
                if "results" not in dirnames:
                    continue
                res = Path(dirpath) / "results"
                dirnames.remove("results")
                entry = os.path.relpath(dirpath, sub)
                for sysdir in _subdirs(res, warn):
                    benches = _bench_dirs(sysdir, select, warn)
                    if not benches and _subdirs(sysdir):
                        continue  # a system that ran other benchmarks only
                    sid = sysdir.name if entry == "." else f"{Path(entry).as_posix()}/{sysdir.name}"
                    desc = sysdir / "entry.json"
                    for bench_dir in benches or [None]:
                        refs.append(
                            SystemRef(rnd, sub.name, sid, desc if entry_exists(desc) else None,
                                       bench_dir, bench_folder=_folder(bench_dir, select))
                        )  # fmt: skip
        return refs
    for sub in _subdirs(root, warn):
        if only and sub.name != only:
            continue
        if not _is_submitter(sub):
            continue
        res, sysd = sub / "results", sub / "systems"
        descs = {}
        if is_regular_dir(sysd):
            try:
                entries = sorted(sysd.iterdir())
            except OSError:
                entries = []
            for f in entries:
                # every .json entry that is not a folder: the parser refuses FIFOs, devices
                # and links to them with a warning, instead of skipping them unseen
                if f.suffix == ".json" and not is_regular_dir(f):
                    descs[f.stem] = f
        result_dirs = {d.name: d for d in _subdirs(res, warn)}
        for name in sorted(set(descs) | set(result_dirs)):
            sysdir = result_dirs.get(name)
            benches = _bench_dirs(sysdir, select, warn) if sysdir is not None else []
            # a result folder with other benchmarks only (or, reading one, without this one)
            other_only = sysdir is not None and (select != ALL_BENCHMARKS or _subdirs(sysdir))
            if other_only and not benches:
                continue  # results for other benchmarks only
            desc = descs.get(name)
            fallback = False
            if desc is None and sysdir is not None and entry_exists(sysdir / "entry.json"):
                desc, fallback = sysdir / "entry.json", True
            for bench_dir in benches or [None]:
                refs.append(SystemRef(rnd, sub.name, name, desc, bench_dir, fallback,
                                       _folder(bench_dir, select)))
    return refs


def round_key(rnd: str):
    """A sort key of an MLPerf round name (``"v4.1"`` -> ``(4, 1)``); a name without
    ``vX.Y`` sorts last."""
    m = _ROUND_RE.search(rnd)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


def _ref_order(r: SystemRef):
    return (round_key(r.round), r.bench_folder, r.submitter.lower(), r.system)


def add_published_benchmarks(refs: list[SystemRef], published, select: str) -> list[SystemRef]:
    """Rows for the benchmarks a published summary scores for a system of the tree whose logs
    for that benchmark are absent (a subset of the logs): the system's description is read,
    its score comes from the summary. A described system without any result folder is then
    represented by those rows alone."""
    have = {(r.round, r.submitter, r.system, r.bench_folder) for r in refs}
    systems = {}
    for r in refs:
        systems.setdefault((r.round, r.submitter, r.system), r)
    added = []
    for rnd, bench, sub, system in published:
        if select != ALL_BENCHMARKS and bench != select:
            continue
        ref = systems.get((rnd, sub, system))
        if ref is None or (rnd, sub, system, bench) in have:
            continue
        added.append(SystemRef(rnd, sub, system, ref.desc_path, None, ref.desc_is_fallback, bench))
        have.add((rnd, sub, system, bench))
    if not added:
        return refs
    with_bench = {(r.round, r.submitter, r.system) for r in added}
    kept = [r for r in refs if r.bench_folder or (r.round, r.submitter, r.system) not in with_bench]
    out = kept + added
    out.sort(key=_ref_order)
    return out


def check_benchmark(benchmark) -> str:
    """``benchmark`` when it can name a benchmark folder (or is ``"all"``)."""
    if not isinstance(benchmark, str) or not _BENCH_NAME.match(benchmark):
        raise ParamError(
            "benchmark", f"must be a benchmark folder name such as resnet or bert (letters, "
            f"digits, '_', '.', '-'), or {ALL_BENCHMARKS!r}; got {shown(benchmark)}")
    return benchmark


def as_paths(paths) -> list[Path]:
    """One path or several, as a non-empty list of Paths."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise UsageError("read_mlperf needs at least one PATH")
    return paths


def discover(paths: list[Path], select: str, warn: ReadWarnings) -> list[SystemRef]:
    """Every system (and benchmark folder) under the paths, once each, in reading order."""
    refs: list[SystemRef] = []
    seen: set[tuple[str, str, str]] = set()
    for p in paths:
        if not p.exists():
            raise UsageError(f"MLPerf results path {str(p)!r} does not exist")
        if not p.is_dir():
            raise UsageError(f"MLPerf results path {str(p)!r} is not a folder")
        roots = _find_round_roots(p)
        if not roots:
            warn.add(p, "no MLPerf results layout found (<round>/<submitter>/results or systems)")
        for root, only in roots:
            for ref in _systems_in_round(root, only, select, warn):
                key = (ref.round, ref.submitter, ref.system, ref.bench_folder)
                if key in seen:
                    warn.add(ref.bench_dir or ref.desc_path or root, f"system {'/'.join(key)} found twice; first kept")
                    continue
                seen.add(key)
                refs.append(ref)
    refs.sort(key=_ref_order)
    return refs
