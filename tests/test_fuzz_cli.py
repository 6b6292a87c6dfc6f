"""A fuzzer over the command line: random tables and argument lists for every command.

Hypothesis builds hostile tables (every dtype; NaN, infinities, huge and subnormal values;
empty strings, control characters, bytes that are not UTF-8; duplicate, missing and extra
columns; 0, 1 and 2 rows; partitioned datasets whose parts differ) and argument lists for
``analyze``, ``report``, ``predict``, ``simulate`` and ``calibrate`` (valid values, values
out of range and junk), and runs the command. Whatever it is fed, each run must end the
documented way:

- the exit code is 0, 2 (usage), 3 (data) or 4 (backend), never 1 (an unexpected error);
- on a non-zero code, stderr holds exactly one line, ``gpurank: error: ...``, with no
  traceback and no terminal control characters, and the output path was not created;
- on 0, the output is complete: a folder holds the set its manifest lists (and nothing
  else, with matching run ids), a file carries gpurank's marker;
- nothing is left beside the output (no staging path, no lock).

Commands run in this process (``gpurank.engine.cli.main`` with stdout and stderr captured,
warnings printed as the command line prints them); ``analyze --dask`` runs in a subprocess,
whose real stderr also holds the Dask cluster's own logging.

CI runs a fixed number of derandomized examples per command (the whole file in well under a
minute on 2 cores, no example database) and does not shrink a failure. For local runs:

    python -m pytest tests/test_fuzz_cli.py --long      # 25x the examples, random seeds
    GPURANK_FUZZ_EXAMPLES=500 python -m pytest tests/test_fuzz_cli.py   # N per command

Every defect found this way is fixed at its root and kept as a named regular test (see
``docs/reliability.md``).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.cli import main
from gpurank.engine.outputs import is_gpurank_output
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from output_sets import consistent_set, leftovers
from tables import config_table

#: Examples per command in CI; ``--long`` multiplies them.
CI_EXAMPLES = {"analyze": 40, "report": 14, "predict": 30, "simulate": 30, "calibrate": 24,
               "dask": 3, "nodes": 24}
LONG_FACTOR = 25


@pytest.fixture
def fuzz(request):
    """Hypothesis settings for a command: CI's fixed, derandomized examples without
    shrinking, or ``--long``'s many random ones with shrinking."""
    long = request.config.getoption("--long")

    def for_command(command):
        n = int(os.environ.get("GPURANK_FUZZ_EXAMPLES", "0")) or (
            CI_EXAMPLES[command] * (LONG_FACTOR if long else 1))
        return settings(max_examples=n, deadline=None, derandomize=not long, database=None,
                        phases=(Phase.explicit, Phase.generate) + ((Phase.shrink,) if long
                                                                    else ()),
                        suppress_health_check=list(HealthCheck), print_blob=True)

    return for_command


# -- running a command ------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def _show_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_cli(argv) -> Run:
    """``gpurank ARGV`` in this process, as a terminal would see it: stdout and stderr
    captured, Python's default warning filters (a warning prints lines on stderr)."""
    import signal

    out, err = io.StringIO(), io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            warnings.simplefilter("default")
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                             ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.showwarning = _show_warning
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([str(a) for a in argv])
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return Run(code, out.getvalue(), err.getvalue())


_CONTROL = [chr(c) for c in (*range(0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0),
                             0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
                             0x2069)]


def assert_documented(run: Run, target: Path | None, *, existed: bool, folder: bool | None):
    """The contract of every run (see the module docstring)."""
    assert run.code in (0, 2, 3, 4), (run.code, run.err[-3000:])
    assert "Traceback" not in run.err, run.err[-3000:]
    if run.code != 0:
        lines = [ln for ln in run.err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("gpurank: error: "), run.err[-3000:]
        assert not any(c in lines[0] for c in _CONTROL), repr(lines[0])
    if target is None:
        return
    if target.parent.is_dir():
        assert leftovers(target.parent, target.name) == [], leftovers(target.parent, target.name)
    if run.code != 0:
        if not existed:
            assert not target.exists(), f"{target} was created by a failed run"
        return
    assert target.exists(), f"exit 0 but {target} was not written"
    if target.is_dir() and folder is not False:
        consistent_set(target)
    else:
        assert is_gpurank_output(target), f"{target} does not carry gpurank's marker"


@contextlib.contextmanager
def workdir(root: Path):
    with tempfile.TemporaryDirectory(dir=root) as d:
        yield Path(d)


# -- hostile tables -----------------------------------------------------------------------------
NON_UTF8 = "<<non-utf8>>"  # replaced by the bytes b"\xff\xfe" in a CSV file

HOSTILE = {
    "nan": lambda s, n: [np.nan] * n,
    "inf": lambda s, n: [np.inf if i % 2 else -np.inf for i in range(n)],
    "huge": lambda s, n: [1e300 * (1 + i) for i in range(n)],
    "max": lambda s, n: [1.7e308] * n,
    "subnormal": lambda s, n: [5e-324 * (1 + i) for i in range(n)],
    "tiny": lambda s, n: [1e-310 * (1 + i) for i in range(n)],
    "zero": lambda s, n: [0] * n,
    "negative": lambda s, n: [-1.5 - i for i in range(n)],
    "empty": lambda s, n: [""] * n,
    "control": lambda s, n: [f"\x1b]0;t\x07x\u202e{i}\x00" for i in range(n)],
    "non_utf8": lambda s, n: [NON_UTF8] * n,
    "mixed": lambda s, n: [[1, "a", 2.5, None][i % 4] for i in range(n)],
    "none": lambda s, n: [None] * n,
    "bool": lambda s, n: [bool(i % 2) for i in range(n)],
    "long_text": lambda s, n: ["x" * 3000] * n,
    "big_int": lambda s, n: [2**62 + i for i in range(n)],
}
EXTRA_COLUMNS = ["rank", "cluster", "topsis_score", "", " ", "\x1b[2Jname", "a" * 300,
                 "provider", "benchmark", "accelerator_type", "time_to_train_min ", "é,:\""]


@dataclass
class TableCase:
    frame: pd.DataFrame
    fmt: str  # "parquet" | "csv" | "folder"
    duplicate: str | None = None  # a column written twice (CSV)
    part_change: tuple | None = None  # (what, column) for the second part of a folder


@st.composite
def hostile_tables(draw, base=None, formats=("parquet", "csv", "folder")):
    n = draw(st.sampled_from([0, 1, 2, 3, 12]))
    frame = (base if base is not None else config_table(12, seed=draw(st.integers(0, 3))))
    frame = frame.iloc[:n].reset_index(drop=True).copy()
    for name in draw(st.lists(st.sampled_from(EXTRA_COLUMNS), max_size=2, unique=True)):
        frame[name] = draw(st.sampled_from(["AWS", "gpu", "resnet", 1, 2.5]))
    cols = list(frame.columns)
    for col in draw(st.lists(st.sampled_from(cols), max_size=3, unique=True)):
        frame[col] = pd.Series(HOSTILE[draw(st.sampled_from(sorted(HOSTILE)))](frame[col], n),
                               dtype=object)
    drop = draw(st.lists(st.sampled_from(cols), max_size=3, unique=True))
    frame = frame.drop(columns=drop)
    fmt = draw(st.sampled_from(formats))
    case = TableCase(frame, fmt)
    if fmt == "csv" and len(frame.columns) and draw(st.booleans()):
        case.duplicate = draw(st.sampled_from(list(frame.columns)))
    if fmt == "folder" and len(frame.columns) and draw(st.booleans()):
        case.part_change = (draw(st.sampled_from(["drop", "add", "retype"])),
                            draw(st.sampled_from(list(frame.columns))))
    return case


def _parquet_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """What Parquet can store: mixed object columns as text, the non-UTF-8 cells as bytes."""
    out = frame.copy()
    for col in out.columns:
        s = out[col]
        if s.dtype != object:
            continue
        if s.map(lambda v: v == NON_UTF8).any():
            out[col] = s.map(lambda v: b"\xff\xfe" if v == NON_UTF8 else None)
            continue
        kinds = {type(v) for v in s if v is not None and not (isinstance(v, float)
                                                              and math.isnan(v))}
        if len(kinds) > 1 or kinds == {bool} and len(s) and s.isna().any():
            out[col] = s.map(lambda v: None if v is None else str(v))
    return out


def write_table_case(case: TableCase, folder: Path) -> Path:
    """Write the table as the case says; returns the path to give gpurank."""
    frame = case.frame
    if case.fmt == "csv":
        if case.duplicate is not None:
            frame = pd.concat([frame, frame[[case.duplicate]]], axis=1)
        text = frame.to_csv(index=False).encode("utf-8", "surrogateescape")
        path = folder / "table.csv"
        path.write_bytes(text.replace(NON_UTF8.encode(), b"\xff\xfe"))
        return path
    frame = _parquet_ready(frame)
    if case.fmt == "parquet":
        path = folder / "table.parquet"
        frame.to_parquet(path)
        return path
    path = folder / "dataset"
    path.mkdir()
    half = (len(frame) + 1) // 2
    first, second = frame.iloc[:half], frame.iloc[half:].reset_index(drop=True)
    if case.part_change is not None:
        what, col = case.part_change
        if what == "drop":
            second = second.drop(columns=[col])
        elif what == "add":
            second = second.assign(extra_column=1.0)
        else:
            second = second.assign(**{col: second[col].map(lambda v: f"v{v}")})
    first.to_parquet(path / "part-00000.parquet")
    second.to_parquet(path / "part-00001.parquet")
    return path


# -- analyze ------------------------------------------------------------------------------------
ANALYZE_OPTIONS = {
    "--criteria": ["time_to_train_min:min,cost_usd:min", "throughput:max", "thruput:max",
                   "time_to_train_min:min:0,cost_usd:min:1", "n_nodes:min,cost_usd:max:2", "",
                   ":", "a:b:c:d", "'x,y':min", "accelerator:min"],
    "--require": ["time_to_train_min<=100", "n_accelerators>=2", "provider in {AWS}",
                  "nope<3", "cost_usd<", "__import__('os')", "time_to_train_min<=nan",
                  "accelerator in {H100-SXM5-80GB, x}"],
    "--target": ["throughput", "time_to_train_min", "thruput", "accelerator", "n_nodes", ""],
    "--clusters": ["auto", "1", "2", "3", "0", "50"],
    "--top": ["1", "3", "0", "-1", "1e9"],
    "--sample-rows": ["1", "10", "0", "2"],
    "--norm": ["vector", "minmax", "log", "l1"],
    "--seed": ["0", "7", "-1", str(2**40)],
    "--accelerator-type": ["gpu", "tpu", " "],
    "--benchmark": ["resnet", "bert"],
    "--rank-depth": ["1", "3", "0"],
    "--count-cap": ["1", "5", "0"],
    "--samples": ["40", "0"],
    "--weights-range": ["time_to_train_min=0.1:0.5", "cost_usd=0.9:0.1", "x=0:1"],
    "--backend": ["cpu", "auto", "gpu"],
}
ANALYZE_FLAGS = ["--drop-invalid", "--json", "--quiet", "--robust", "--overwrite", "--predict"]


@st.composite
def analyze_options(draw):
    argv = []
    for opt in draw(st.lists(st.sampled_from(sorted(ANALYZE_OPTIONS)), max_size=4, unique=True)):
        argv += [opt, draw(st.sampled_from(ANALYZE_OPTIONS[opt]))]
    argv += draw(st.lists(st.sampled_from(ANALYZE_FLAGS), max_size=3, unique=True))
    if "--robust" in argv and "--samples" not in argv:
        argv += ["--samples", "40"]
    if draw(st.integers(0, 9)):  # the report costs a second; most runs skip it
        argv.append("--no-report")
    return argv


#: What an ``--out`` may already hold.
EXISTING = ["nothing", "nothing", "nothing", "user folder", "user file", "earlier set"]


def _prepare_out(out: Path, existing: str, earlier: Path) -> None:
    if existing == "user folder":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    elif existing == "user file":
        out.write_text("mine")
    elif existing == "earlier set":
        shutil.copytree(earlier, out)


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """Two complete analysis sets with their reports: earlier outputs, and report's input."""
    root = tmp_path_factory.mktemp("earlier")
    config_table(30, seed=1).to_parquet(root / "t.parquet")
    for name, top in (("set", "5"), ("other", "3")):
        run = run_cli(["analyze", root / "t.parquet", "--out", root / name, "--quiet",
                       "--top", top])
        assert run.code == 0, run.err
    return root / "set", root / "other"


@pytest.fixture(scope="module")
def earlier_set(sets):
    return sets[0]


def test_analyze_ends_in_a_documented_way(fuzz, tmp_path, earlier_set, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @fuzz("analyze")
    @given(case=hostile_tables(), options=analyze_options(), existing=st.sampled_from(EXISTING))
    def check(case, options, existing):
        with workdir(tmp_path) as d:
            table = write_table_case(case, d)
            out = d / "out"
            _prepare_out(out, existing, earlier_set)
            before = _snapshot(out)
            run = run_cli(["analyze", table, "--out", out, *options])
            assert_documented(run, out, existed=existing != "nothing", folder=True)
            if run.code != 0 and existing != "nothing":
                assert _snapshot(out) == before, "a refused run changed the existing output"
            if run.code == 0:
                _check_summary_file(out / "summary.json")

    check()


def _snapshot(path: Path):
    if not path.exists():
        return None
    if path.is_file():
        return path.read_bytes()
    return sorted((p.relative_to(path).as_posix(), p.stat().st_size)
                  for p in path.rglob("*") if p.is_file())


def _check_summary_file(path: Path) -> None:
    """Every summary gpurank writes meets the schema ``report`` checks it against."""
    from gpurank.engine.summary_schema import check_summary

    check_summary(json.loads(path.read_text()), path=path)


# -- report -------------------------------------------------------------------------------------
JSON_VALUES = ["x", "", 1, -1, 0, 1.5, -1e308, 1e308, 10**30, True, False, None, [], {}, [1],
               {"a": 1}, float("nan"), float("inf"), "\x1b[2J"]


def _json_paths(value, prefix=()):
    """Every path (tuple of keys and indices) into a JSON value."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            yield from _json_paths(v, (*prefix, i))


def _replace(value, path, new, *, delete=False):
    """``value`` with the item at ``path`` replaced (or deleted); unchanged where an earlier
    edit already removed the path."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if not isinstance(value, (dict, list)) or (
            head not in value if isinstance(value, dict) else not 0 <= head < len(value)):
        return value
    value = value.copy()
    if delete and not rest:
        del value[head]
    else:
        value[head] = _replace(value[head], rest, new, delete=delete)
    return value


@st.composite
def summary_edits(draw, summary):
    paths = sorted(_json_paths(summary), key=repr)
    edits = []
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(paths))
        edits.append((path, draw(st.sampled_from(JSON_VALUES)),
                      bool(path) and draw(st.integers(0, 4)) == 0))
    return edits


REPORT_DAMAGE = ["none", "none", "none", "truncate summary", "summary is a list",
                 "no manifest", "no ranking", "other run id", "ranking is text"]
REPORT_OUT = ["default", "default", "file beside", "folder", "user file", "other set"]


def test_report_ends_in_a_documented_way(fuzz, tmp_path, sets, monkeypatch):
    monkeypatch.chdir(tmp_path)
    earlier_set, other_set = sets
    summary = json.loads((earlier_set / "summary.json").read_text())

    @fuzz("report")
    @given(edits=summary_edits(summary), damage=st.sampled_from(REPORT_DAMAGE),
           where=st.sampled_from(REPORT_OUT), as_json=st.booleans())
    def check(edits, damage, where, as_json):
        with workdir(tmp_path) as d:
            folder = d / "set"
            shutil.copytree(earlier_set, folder)
            s = summary
            for path, value, delete in edits:
                s = _replace(s, path, value, delete=delete)
            (folder / "summary.json").write_text(json.dumps(s))
            _damage(folder, damage)
            argv = ["report", folder / "ranking.parquet"] + (["--json"] if as_json else [])
            target, existed = folder / "report.html", True
            if where == "file beside":
                target, existed = folder / "again.html", False
            elif where == "folder":
                (d / "pages").mkdir()
                target, existed = d / "pages" / "report.html", False
            elif where == "user file":
                target = d / "mine.html"
                target.write_text("mine")
            elif where == "other set":
                shutil.copytree(other_set, d / "other")
                target = d / "other" / "report.html"
            if where != "default":
                argv += ["--out", target]
            before = _snapshot(target)
            run = run_cli(argv)
            assert_documented(run, target, existed=existed, folder=False)
            if run.code != 0 and existed:
                assert _snapshot(target) == before, "a refused report changed its target"
            if run.code == 0 and (target.parent / "_gpurank_manifest.json").exists():
                consistent_set(target.parent)

    check()


def _damage(folder: Path, damage: str) -> None:
    if damage == "truncate summary":
        text = (folder / "summary.json").read_text()
        (folder / "summary.json").write_text(text[: len(text) // 2])
    elif damage == "summary is a list":
        (folder / "summary.json").write_text("[1, 2]")
    elif damage == "no manifest":
        (folder / "_gpurank_manifest.json").unlink()
    elif damage == "no ranking":
        (folder / "ranking.parquet").unlink()
    elif damage == "other run id":
        manifest = json.loads((folder / "_gpurank_manifest.json").read_text())
        manifest["run_id"] = "f" * 32
        (folder / "_gpurank_manifest.json").write_text(json.dumps(manifest))
    elif damage == "ranking is text":
        (folder / "ranking.parquet").write_text("not parquet")


# -- predict, calibrate, simulate ---------------------------------------------------------------
@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """A simulated sweep (every canonical and catalog column, with times) and a model
    calibrated on it."""
    from gpurank.engine.sources.sweep.simulate import simulate

    root = tmp_path_factory.mktemp("measured")
    table = simulate(40, seed=3).reset_index(drop=True)
    for col in table.columns:
        if isinstance(table[col].dtype, pd.CategoricalDtype):
            table[col] = table[col].astype(object)
    table.to_parquet(root / "sweep.parquet")
    run = run_cli(["calibrate", root / "sweep.parquet", "-o", root / "model.json"])
    assert run.code == 0, run.err
    return table, root / "model.json"


MODEL_DAMAGE = ["none", "none", "missing file", "not json", "a list", "field", "fifo",
                "device link", "no fit", "fit domain", "huge integer"]


def _private_node(path: Path, kind: str) -> Path:
    """A node gpurank must neither read nor replace, made here (never the machine's own): a
    FIFO, a socket, a character device (as root; a FIFO otherwise), a link to one of them."""
    import socket
    import stat

    if kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    elif kind == "device" and os.geteuid() == 0:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    elif kind == "link":
        _private_node(path.with_name(path.name + ".node"), "device")
        path.symlink_to(path.with_name(path.name + ".node"))
    else:
        os.mkfifo(path)
    return path


def _model_variant(model: Path, damage: str, value, key: int, d: Path) -> Path:
    path = d / "model.json"
    if damage == "missing file":
        return d / "absent.json"
    if damage in ("fifo", "device link"):
        return _private_node(path, "fifo" if damage == "fifo" else "link")
    if damage in ("no fit", "fit domain", "huge integer"):
        raw = json.loads(model.read_text())
        if damage == "no fit":
            raw.pop("fit")
        elif damage == "fit domain":
            raw["fit"].setdefault("domain", {})["global_batch"] = value
        else:
            raw["overhead_s"] = 10**400
        path.write_text(json.dumps(raw))
        return path
    if damage == "not json":
        path.write_text("{not json")
    elif damage == "a list":
        path.write_text("[]")
    elif damage == "field":
        raw = json.loads(model.read_text())
        keys = sorted(raw)
        raw[keys[key % len(keys)]] = value
        path.write_text(json.dumps(raw))
    else:
        shutil.copy(model, path)
    return path


#: Values outside a row's domain (engine/sources/model/domain.py): impossible topologies,
#: batches, prices and per-row specs, and an accelerator the catalog lacks.
ROW_EDITS = [("n_nodes", 0), ("n_nodes", -2), ("accelerators_per_node", 3),
             ("accelerators_per_node", 1_000_000), ("n_accelerators", 2.5),
             ("n_accelerators", 1e308), ("global_batch_size", 0), ("global_batch_size", -64),
             ("price_per_accelerator_hour", -1.0), ("bf16_dense_tflops", math.inf),
             ("bf16_dense_tflops", 1.7e308), ("mem_bw_tbps", 0.0), ("epochs", -5.0),
             ("accelerator", "Zeta Z1"), ("mem_bw_tbps", "fast")]


def _edited(case: TableCase, edits) -> TableCase:
    """The case with each ``(column, value)`` of ``edits`` set on one row (by position)."""
    frame = case.frame.copy()
    for i, (col, value) in edits:
        if len(frame):
            if col not in frame.columns:
                frame[col] = pd.Series([None] * len(frame), dtype=object)
            if frame[col].dtype != object:
                frame[col] = frame[col].astype(object)
            frame.iloc[i % len(frame), frame.columns.get_loc(col)] = value
    return TableCase(frame, case.fmt, case.duplicate, case.part_change)


def test_predict_ends_in_a_documented_way(fuzz, tmp_path, measured, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table, model = measured

    @fuzz("predict")
    @given(case=hostile_tables(base=table), damage=st.sampled_from(MODEL_DAMAGE + ["no model"]),
           value=st.sampled_from(JSON_VALUES), key=st.integers(0, 99),
           benchmark=st.sampled_from([None, "resnet", "bert", ""]),
           out_name=st.sampled_from(["p.parquet", "p.parquet", "p.csv", "p"]),
           edits=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(ROW_EDITS)),
                          max_size=3))
    def check(case, damage, value, key, benchmark, out_name, edits):
        with workdir(tmp_path) as d:
            path = write_table_case(_edited(case, edits), d)
            out = d / out_name
            argv = ["predict", path, "-o", out]
            if damage != "no model":
                argv += ["--model", _model_variant(model, damage, value, key, d)]
            if benchmark is not None:
                argv += ["--benchmark", benchmark]
            run = run_cli(argv)
            assert_documented(run, out, existed=False, folder=False)

    check()


def test_calibrate_ends_in_a_documented_way(fuzz, tmp_path, measured, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table, _ = measured

    @fuzz("calibrate")
    @given(case=hostile_tables(base=table),
           benchmark=st.sampled_from([None, None, None, None, "all", "x"]),
           report=st.sampled_from([None, None, "doc.md", "doc.md", "doc.txt"]),
           as_json=st.booleans())
    def check(case, benchmark, report, as_json):
        with workdir(tmp_path) as d:
            path = write_table_case(case, d)
            out = d / ("models" if benchmark == "all" else "model.json")
            argv = ["calibrate", path, "-o", out] + (["--json"] if as_json else [])
            if benchmark is not None:
                argv += ["--benchmark", benchmark]
            if report is not None:
                argv += ["--report", d / report]
            run = run_cli(argv)
            assert_documented(run, out, existed=False, folder=False)
            if report is not None:
                assert_documented(run, d / report, existed=False, folder=False)

    check()


SIMULATE_OPTIONS = {
    "--n": ["1", "7", "60", "0", "-3", "1e12", "x"],
    "--seed": ["0", "5", "-1", str(2**70), "x"],
    "--workload": ["resnet", "bert", "gpt3", "nope", ""],
    "--accelerators": ["H100", "A100,V100", "nope", ",", "H100,H100"],
    "--counts": ["1,8", "0", "-4", "x", "8,1e3"],
    "--nodes": ["1,2", "0", "3", "x"],
    "--providers": ["AWS", "nope", ","],
    "--row-group-rows": ["1", "0", "10"],
}
SIMULATE_FLAGS = ["--partitioned", "--no-size-check", "--json", "--overwrite"]


@st.composite
def simulate_options(draw):
    flags = draw(st.lists(st.sampled_from(SIMULATE_FLAGS), max_size=2, unique=True))
    sizes = SIMULATE_OPTIONS["--n"]
    if "--no-size-check" in flags:  # asked for, 1e12 rows are simulated: days of work
        sizes = [n for n in sizes if n != "1e12"]
    argv = ["--n", draw(st.sampled_from(sizes))]
    keys = sorted(set(SIMULATE_OPTIONS) - {"--n"})
    for opt in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)):
        argv += [opt, draw(st.sampled_from(SIMULATE_OPTIONS[opt]))]
    return argv + flags


def test_simulate_ends_in_a_documented_way(fuzz, tmp_path, measured, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, model = measured

    @fuzz("simulate")
    @given(options=simulate_options(),
           damage=st.sampled_from(MODEL_DAMAGE + ["no model"] * 3),
           value=st.sampled_from(JSON_VALUES), key=st.integers(0, 99),
           out_name=st.sampled_from(["s.parquet", "s.csv", "sweep", "s.txt"]))
    def check(options, damage, value, key, out_name):
        with workdir(tmp_path) as d:
            out = d / out_name
            argv = ["simulate", "-o", out, *options]
            if damage != "no model":
                argv += ["--model", _model_variant(model, damage, value, key, d)]
            run = run_cli(argv)
            assert_documented(run, out, existed=False, folder=None)

    check()


# -- analyze on Dask ----------------------------------------------------------------------------
def test_dask_analyze_ends_in_a_documented_way(fuzz, tmp_path):
    pytest.importorskip("distributed")

    @fuzz("dask")
    @given(case=hostile_tables(formats=("folder",)),
           options=st.lists(st.sampled_from(["--drop-invalid", "--json", "--quiet"]),
                            max_size=2, unique=True))
    def check(case, options):
        with workdir(tmp_path) as d:
            table = write_table_case(case, d)
            out = d / "out"
            proc = subprocess.run(
                [sys.executable, "-m", "gpurank.engine", "analyze", str(table), "--dask",
                 "local:1", "--backend", "cpu", "--no-report", "--out", str(out), *options],
                capture_output=True, text=True, timeout=300, cwd=d,
                env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"})
            run = Run(proc.returncode, proc.stdout, proc.stderr)
            assert_documented(run, out, existed=False, folder=True)
            if run.code == 0:
                _check_summary_file(out / "summary.json")

    check()


# -- nodes that are not regular files, as every kind of input and output ------------------------
NODE_KINDS = ["fifo", "socket", "device", "link", "folder holding a fifo"]
NODE_ROLES = ["analyze table", "predict table", "dataset part", "--model", "--catalog",
              "simulate -o", "predict -o", "calibrate -o", "analyze --out", "report summary"]


def _identity(path: Path):
    st_ = os.lstat(path)
    return st_.st_mode, st_.st_ino, st_.st_rdev


def test_non_regular_paths_end_in_a_documented_way(fuzz, tmp_path, measured, monkeypatch):
    """A FIFO, a socket, a character device (as root), a link to one or a folder holding a
    FIFO given as any input or output, with and without --overwrite: a one-line refusal or
    a run that never read it, and the node left as it was."""
    monkeypatch.chdir(tmp_path)
    table, model = measured

    @fuzz("nodes")
    @given(kind=st.sampled_from(NODE_KINDS), role=st.sampled_from(NODE_ROLES),
           overwrite=st.booleans())
    def check(kind, role, overwrite):
        with workdir(tmp_path) as d:
            table.to_parquet(d / "t.parquet")
            suffix = {"--model": ".json", "--catalog": ".csv", "predict -o": ".parquet",
                      "simulate -o": ".parquet", "calibrate -o": ".json"}.get(role, ".csv")
            if kind == "folder holding a fifo":
                node = d / ("node" + suffix)
                node.mkdir()
                _private_node(node / "part-1.parquet", "fifo")
            else:
                node = _private_node(d / ("node" + suffix), kind)
            before = _identity(node)
            t, out = d / "t.parquet", d / "out.parquet"
            argv = {
                "analyze table": ["analyze", node, "--out", d / "o", "--no-report"],
                "predict table": ["predict", node, "-o", out],
                "dataset part": ["analyze", d, "--out", d / "o", "--no-report"],
                "--model": ["predict", t, "--model", node, "-o", out],
                "--catalog": ["predict", t, "--catalog", node, "-o", out],
                "simulate -o": ["simulate", "--n", "5", "-o", node],
                "predict -o": ["predict", t, "-o", node],
                "calibrate -o": ["calibrate", t, "-o", node],
                "analyze --out": ["analyze", t, "--out", node, "--no-report"],
                "report summary": ["report", t],
            }[role] + (["--overwrite"] if overwrite and role != "report summary" else [])
            if role == "dataset part":
                (d / "t.parquet").rename(d / "part-0.parquet")
                if kind != "folder holding a fifo":
                    node.rename(d / "part-9.parquet")
                    node = d / "part-9.parquet"
            if role == "report summary":
                node.rename(d / "summary.json")
                node = d / "summary.json"
            run = run_cli(argv)
            assert run.code in (2, 3), (run.code, run.err[-2000:])
            assert_documented(run, None, existed=True, folder=None)
            assert _identity(node) == before, f"{node} changed"

    check()
