"""Parse one MLPerf Training result log (``result_*.txt``) into a :class:`RunLog`.

Four line formats exist across rounds; one file uses one of them:

* ``mllog``  (v0.7+):  ``:::MLLOG {"time_ms": ..., "key": ..., "value": ..., "metadata": {...}}``
* ``mll``    (v0.6):   ``:::MLL <seconds> <key>: {"value": ..., "metadata": {...}}``
* ``mlp05``  (v0.5):   ``:::MLPv0.5.0 <benchmark> <seconds> (<file>:<line>) <key>[: <value>]``
* ``dated``  (v0.6 Alibaba): ``MLPerf: <benchmark> [MM/DD/YY HH:MM:SS], <key>[: <value>]``

Lines may carry a prefix before the marker (``[1,0]<stdout>:``); other lines are ignored.
Only the keys the reader uses are decoded, with plain ``json`` (``orjson`` when installed), so
a whole round parses in well under a second.

The facts per run follow the rules in the data README (and ``mlperf_logging``'s summarizer):
the run time is ``run_stop - run_start`` where ``run_start`` is the last one before the first
``run_stop``; a run is valid when both exist and ``run_stop`` says ``status: success`` (formats
without a status: when the final ``eval_accuracy`` reaches the target); epochs to converge are
the ``epoch_num`` of the last ``eval_accuracy`` before ``run_stop`` (+1 in v0.5, whose epochs
count from 0).
"""

from __future__ import annotations

import calendar
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

try:  # optional speed-up; the stdlib parser gives the same answers
    import orjson as _orjson

    _loads = _orjson.loads
    _JSONError: tuple[type[Exception], ...] = (_orjson.JSONDecodeError, ValueError, RecursionError)
except ImportError:  # pragma: no cover - depends on the environment
    import json as _json

    _loads = _json.loads
    _JSONError = (ValueError, RecursionError)

from ..facts.formats import format_name
from ..facts.regular_files import UnreadableFile, read_regular

__all__ = ["RunLog", "Evaluation", "parse_result_log", "parse_result_text", "stated_format",
           "IMAGENET_TRAIN_SAMPLES", "MAX_LOG_BYTES"]

IMAGENET_TRAIN_SAMPLES = 1_281_167
DEFAULT_TARGET = {"mlp05": 0.749}  # v0.5 ResNet target; later rounds 0.759
DEFAULT_TARGET_LATER = 0.759
# keys whose values the reader needs; everything else is skipped without decoding
_KEYS = frozenset(
    {
        "run_start",
        "run_stop",
        "global_batch_size",
        "train_samples",
        "eval_accuracy",
        "eval_target",
        "epoch_start",
        "epoch_stop",
        "block_start",
        "block_stop",
        "eval_start",
        "eval_stop",
        "submission_benchmark",
        "preproc_num_train_examples",
        "max_sequence_length",
    }
)
_MLL_RE = re.compile(r":::MLL (\d+(?:\.\d*)?) ([A-Za-z0-9_]+): ?(.*)$")
_MLP05_RE = re.compile(
    r":::MLPv0\.5\.0 (\S+) (\d+(?:\.\d*)?) \([^)]*\) ([A-Za-z0-9_]+)(?:\s*:\s*(.*))?$"
)
_DATED_RE = re.compile(
    r"MLPerf: (\S+) \[(\d\d)/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)\], ([^:]+?)(?:\s*:\s*(.*))?$"
)
#: A format switch in a printed configuration: ``fp8: true``, ``fp8='hybrid'``,
#: ``"fp4": "nvfp4"`` (a YAML dump, an argument namespace or a dict); the key stands alone
#: (``use_fp8``, ``fp8_recipe`` and ``padding_for_fp8`` are other settings).
_FORMAT_RE = re.compile(
    r"""(?:^|[\s'"{,(])(fp8|fp4)["']?\s*[:=]\s*["']?([A-Za-z0-9_]+)""",
    re.IGNORECASE | re.MULTILINE)
_OFF = frozenset({"false", "none", "null", "0", "no", "off"})
_NUM_RE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_PCT_VALUE_RE = re.compile(r'"value"\s*:\s*(-?(?:\d+(?:\.\d*)?|\.\d+))(?![\d.])\s*(%?)')
_EPOCH_RE = re.compile(r'"epoch"\s*:\s*(\d{1,9})(?!\d)')


@dataclass
class RunLog:
    """What one result log says about its run. Times are epoch milliseconds."""

    path: str
    log_format: str = ""  # mllog | mll | mlp05 | dated | "" (no recognised line)
    start_ms: float | None = None
    stop_ms: float | None = None
    status: str = ""  # as logged in run_stop metadata ("" when the format has none)
    valid: bool = False
    invalid_reason: str = ""
    global_batch_size: int | None = None
    epochs: float | None = None  # epochs to converge
    samples_per_epoch: int | None = None  # logged train_samples, None when not logged
    final_accuracy: float | None = None
    eval_target: float | None = None
    train_rate: float | None = None  # steady-state samples/s (median per-epoch or per-block)
    train_rate_source: str = ""
    problems: list[str] = field(default_factory=list)  # file-level defects -> warnings
    #: the logged ``submission_benchmark`` ("" when the log names none)
    benchmark: str = ""
    #: every ``eval_accuracy`` before ``run_stop`` (file order): :class:`Evaluation` records
    evals: list = field(default_factory=list)
    #: logged ``max_sequence_length`` (tokens per sample), None when not logged
    max_sequence_length: int | None = None
    #: milliseconds between ``eval_start`` and ``eval_stop`` inside run_start..run_stop
    eval_ms: float = 0.0
    #: the training format the log's printed configuration states (``fp8``), "" if none
    precision: str = ""

    @property
    def minutes(self) -> float | None:
        if self.start_ms is None or self.stop_ms is None or self.stop_ms < self.start_ms:
            return None
        return (self.stop_ms - self.start_ms) / 60_000.0

    @property
    def timing_key(self) -> tuple[float, float] | None:
        if self.start_ms is None or self.stop_ms is None:
            return None
        return (round(self.start_ms, 3), round(self.stop_ms, 3))

    def e2e_throughput(self, default_samples: int = IMAGENET_TRAIN_SAMPLES) -> float | None:
        """epochs x samples per epoch / run time in seconds (evaluation included)."""
        m = self.minutes
        if not self.valid or m is None or m <= 0 or self.epochs is None:
            return None
        samples = self.samples_per_epoch or default_samples
        return self.epochs * samples / (m * 60.0)


@dataclass(frozen=True)
class Evaluation:
    """One ``eval_accuracy`` line: its value (a number, or a dict such as Mask R-CNN's
    ``{"BBOX": .., "SEGM": ..}``) and the step keys of its metadata (None when absent)."""

    value: object
    epoch_num: float | None = None
    samples_count: float | None = None
    step_num: float | None = None
    metric: str = ""


def _meta_number(meta: dict, key: str) -> float | None:
    v = meta.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _event(events, key, t, value=None, meta=None):
    # a hostile or broken line may carry any JSON as metadata; the reader needs a dict
    events.append((key, t, value, meta if isinstance(meta, dict) else {}))


def _parse_loose_value(raw: str | None):
    """Decode a v0.5 / dated value: JSON when possible, else a number, else the text."""
    if raw is None:
        return None
    raw = raw.strip()
    if not raw:
        return None
    try:
        return _loads(raw)
    except _JSONError:
        pass
    m = _NUM_RE.fullmatch(raw)
    if m:
        return float(raw)
    return raw


def _accuracy_from_loose(raw: str | None, value):
    """(accuracy, epoch) from a v0.5/dated eval_accuracy value: {"epoch": N, "value": x[%]}."""
    if isinstance(value, dict):
        acc = value.get("value")
        ep = value.get("epoch")
        return (float(acc) if isinstance(acc, (int, float)) else None), ep
    if raw is None:
        return None, None
    m = _PCT_VALUE_RE.search(raw)
    e = _EPOCH_RE.search(raw)
    acc = None
    if m:
        acc = float(m.group(1))
        if m.group(2) == "%":
            acc /= 100.0
    return acc, (int(e.group(1)) if e else None)


def parse_result_text(text: str, path: str = "<text>") -> RunLog:
    """Parse the text of one result log. Never raises on bad content: defects go to ``problems``."""
    run = RunLog(path=path)
    events: list[tuple[str, float, object, dict]] = []
    fmt_counts = {"mllog": 0, "mll": 0, "mlp05": 0, "dated": 0}
    bad_lines: list[int] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if ":::MLLOG" in line:
            i = line.find(":::MLLOG")
            body = line[i + 8 :].strip()
            # cheap key extraction before decoding the whole line
            k = body.find('"key": "')
            if k >= 0:
                k2 = body.find('"', k + 8)
                key = body[k + 8 : k2]
                if k2 > 0 and key not in _KEYS:
                    if not body.endswith("}"):
                        bad_lines.append(lineno)
                        continue
                    fmt_counts["mllog"] += 1
                    continue
            try:
                rec = _loads(body)
                key = rec["key"]
                t = float(rec["time_ms"])
            except (*_JSONError, KeyError, TypeError):
                bad_lines.append(lineno)
                continue
            fmt_counts["mllog"] += 1
            if key in _KEYS:
                _event(events, key, t, rec.get("value"), rec.get("metadata") or {})
        # duplicate-code: boilerplate, each older format's branch finds its marker, matches
        # its pattern and counts the line; what the match holds differs per format
        elif ":::MLL " in line:
            i = line.find(":::MLL ")
            m = _MLL_RE.match(line[i:].rstrip())
            if not m:
                bad_lines.append(lineno)
                continue
            fmt_counts["mll"] += 1
            key = m.group(2)
            if key not in _KEYS:
                continue
            try:
                rec = _loads(m.group(3)) if m.group(3).strip() else {}
            except _JSONError:
                bad_lines.append(lineno)
                continue
            if not isinstance(rec, dict):
                rec = {"value": rec}
            _event(events, key, float(m.group(1)) * 1000.0, rec.get("value"), rec.get("metadata") or {})
        # duplicate-code: boilerplate, as the branch above
        elif ":::MLPv0.5.0" in line:
            i = line.find(":::MLPv0.5.0")
            m = _MLP05_RE.match(line[i:].rstrip())
            if not m:
                bad_lines.append(lineno)
                continue
            fmt_counts["mlp05"] += 1
            key = m.group(3)
            if key in _KEYS:
                raw = m.group(4)
                _event(events, key, float(m.group(2)) * 1000.0, _parse_loose_value(raw), {"raw": raw})
        elif "MLPerf: " in line:
            i = line.find("MLPerf: ")
            m = _DATED_RE.match(line[i:].rstrip())
            if not m:
                if line[i:].startswith("MLPerf: ") and "[" in line[i:]:
                    bad_lines.append(lineno)
                continue
            fmt_counts["dated"] += 1
            key = m.group(8).strip()
            if key in _KEYS:
                mo, dd, yy, hh, mi, ss = (int(g) for g in m.group(2, 3, 4, 5, 6, 7))
                t = calendar.timegm((2000 + yy, mo, dd, hh, mi, ss, 0, 0, 0)) * 1000.0
                raw = m.group(9)
                _event(events, key, t, _parse_loose_value(raw), {"raw": raw})
    fmt = max(fmt_counts, key=fmt_counts.get)
    if fmt_counts[fmt] == 0:
        run.problems.append("no MLPerf log lines recognised")
        run.invalid_reason = "no MLPerf log lines"
        return run
    run.log_format = fmt
    if bad_lines:
        more = f" (and {len(bad_lines) - 1} more)" if len(bad_lines) > 1 else ""
        run.problems.append(f"line {bad_lines[0]}: truncated or malformed log line{more}")
    _summarize(run, events)
    run.precision = stated_format(text)
    return run


def stated_format(text: str) -> str:
    """The training format a log's printed configuration states: ``fp4`` where it switches
    FP4 on, else ``fp8`` where it switches FP8 on (``true``, a format name or an FP8 recipe
    such as ``hybrid``), ``bf16`` where it switches FP8 off and nothing on; "" where it
    says nothing (most logs print no configuration)."""
    on, off = set(), set()
    for m in _FORMAT_RE.finditer(text):
        key, value = m.group(1).lower(), m.group(2).lower()
        if value in _OFF:
            off.add(key)
        elif value in ("true", "1", "yes", "on") or format_name(value) is not None:
            on.add(key)
    if "fp4" in on:
        return "fp4"
    if "fp8" in on:
        return "fp8"
    return "bf16" if "fp8" in off else ""


#: A result log larger than this is not read (the largest real one is under 3 MB).
MAX_LOG_BYTES = 256 << 20


def parse_result_log(path: str | Path) -> RunLog:
    """Read and parse one result log file; a file that is not a regular file (FIFO, device,
    a link to one), larger than ``MAX_LOG_BYTES`` or unreadable becomes a RunLog with a
    problem, never a hang."""
    p = Path(path)
    try:
        text = read_regular(p, limit=MAX_LOG_BYTES).decode("utf-8", errors="replace")
    except UnreadableFile as exc:
        run = RunLog(path=str(p))
        run.problems.append(f"result log {exc}")
        run.invalid_reason = "unreadable"
        return run
    return parse_result_text(text, str(p))


def _as_int(v) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
        return int(f) if math.isfinite(f) else None
    return None


def _timed_region(run: RunLog, events) -> int:
    """Set the run's start, stop and status; the index of the first run_stop (the events
    after it are ignored), or the number of events when there is none."""
    fmt = run.log_format
    first_stop = None
    for idx, ev in enumerate(events):
        if ev[0] == "run_stop":
            first_stop = idx
            break
    end = first_stop if first_stop is not None else len(events)
    start_t = None
    for ev in events[:end]:
        if ev[0] == "run_start":
            start_t = ev[1]
    run.start_ms = start_t
    stop_meta: dict = {}
    if first_stop is not None:
        run.stop_ms = events[first_stop][1]
        stop_meta = events[first_stop][3]
        run.status = str(stop_meta.get("status", "")) if fmt in ("mllog", "mll") else ""
    return end


def _read_facts(run: RunLog, timed) -> tuple:
    """Set the facts read anywhere before run_stop (or in the whole log when it has none);
    returns ``(samples per epoch, eval target, last accuracy)`` for the steps after."""
    fmt = run.log_format
    gbs = None
    samples = None
    target = None
    last_acc = None
    last_epoch = None
    for key, _t, value, meta in timed:
        if key == "submission_benchmark" and not run.benchmark and isinstance(value, str):
            run.benchmark = value.strip()
        elif key == "max_sequence_length" and run.max_sequence_length is None:
            run.max_sequence_length = _as_int(value)
        if key == "eval_accuracy" and fmt in ("mllog", "mll"):
            metric = meta.get("metric")
            run.evals.append(Evaluation(
                value, _meta_number(meta, "epoch_num"), _meta_number(meta, "samples_count"),
                _meta_number(meta, "step_num"), metric if isinstance(metric, str) else ""))
        if key == "global_batch_size" and gbs is None:
            gbs = _as_int(value)
        elif key == "train_samples" and samples is None:
            samples = _as_int(value)
        elif key == "eval_target":
            try:
                target = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                pass
        elif key == "eval_accuracy":
            if fmt in ("mllog", "mll"):
                number = isinstance(value, (int, float)) and not isinstance(value, bool)
                acc = value if number else None
                ep = meta.get("epoch_num")
            else:
                acc, ep = _accuracy_from_loose(meta.get("raw"), value)
            if acc is not None:
                last_acc = float(acc)
                last_epoch = ep
    run.global_batch_size = gbs
    run.samples_per_epoch = samples
    run.final_accuracy = last_acc
    run.eval_target = target
    if last_epoch is not None:
        try:
            run.epochs = float(last_epoch) + (1.0 if fmt == "mlp05" else 0.0)
        except (TypeError, ValueError):
            run.epochs = None
    return samples, target, last_acc


def _judge_validity(run: RunLog, target, last_acc) -> None:
    """Set ``valid`` or the reason the run is not: both ends logged, and a successful status
    (mllog) or a final accuracy at the target (older formats)."""
    fmt = run.log_format
    if run.start_ms is None and run.stop_ms is None:
        run.invalid_reason = "no run_start and no run_stop"
        run.problems.append("no run_start and no run_stop")
    elif run.start_ms is None:
        run.invalid_reason = "no run_start"
        run.problems.append("no run_start before run_stop")
    elif run.stop_ms is None:
        run.invalid_reason = "no run_stop"
        run.problems.append("no run_stop (log incomplete or run killed)")
    elif run.stop_ms < run.start_ms:
        # a clock set back, or lines of two runs spliced: no time to train can be read, and
        # the run counts as failed (never as the fastest run, dropped by the olympic mean)
        run.invalid_reason = "run_stop precedes run_start"
        run.problems.append(f"run_stop ({run.stop_ms:.0f} ms) precedes run_start "
                            f"({run.start_ms:.0f} ms); the run is counted as failed")
    elif fmt in ("mllog", "mll"):
        if run.status == "success":
            run.valid = True
        else:
            run.invalid_reason = f"run_stop status {run.status or '(none)'!r}"
    else:
        tgt = target if target is not None else DEFAULT_TARGET.get(fmt, DEFAULT_TARGET_LATER)
        if last_acc is not None and last_acc >= tgt:
            run.valid = True
        else:
            run.invalid_reason = f"final eval_accuracy {last_acc} below target {tgt}"


def _time_evaluations(run: RunLog, timed) -> None:
    """Add the evaluation time inside the timed region (run_start..run_stop), for the
    training rate of benchmarks that do not time whole epochs."""
    if run.start_ms is None or run.stop_ms is None:
        return
    open_t = None
    for key, t, _v, _meta in timed:
        if key == "eval_start":
            # an evaluation started while one is open (asynchronous evaluation) is not
            # timed on its own: the open one runs to the next eval_stop
            open_t = t if open_t is None else open_t
        elif key == "eval_stop" and open_t is not None:
            if open_t >= run.start_ms and t <= run.stop_ms and t >= open_t:
                run.eval_ms += t - open_t
            open_t = None


def _epoch_rates(timed, spe) -> list[float]:
    """Samples/s of each epoch with a start and a stop of the same epoch_num."""
    # logs whose stop is numbered one higher than its start (MosaicML composer) have no
    # pairs and fall through to the block rule, as in the reference
    starts: dict = {}
    rates: list[float] = []
    for key, t, _v, meta in timed:
        if key == "epoch_start":
            starts[meta.get("epoch_num")] = t
        elif key == "epoch_stop":
            t0 = starts.pop(meta.get("epoch_num"), None)
            if t0 is not None and t > t0:
                rates.append(spe / ((t - t0) / 1000.0))
    return rates


def _block_rates(timed, spe) -> list[float]:
    """Samples/s of each block (epoch_count epochs), its evaluation time taken out."""
    evals: list[tuple[float, float]] = []
    open_eval = None
    for key, t, _v, _meta in timed:
        if key == "eval_start":
            open_eval = t
        elif key == "eval_stop" and open_eval is not None:
            evals.append((open_eval, t))
            open_eval = None
    # a block_stop closes the latest open block_start (SIAT numbers them differently)
    rates: list[float] = []
    open_block = None
    for key, t, _v, meta in timed:
        if key == "block_start":
            open_block = (t, meta.get("epoch_count"))
        elif key == "block_stop" and open_block is not None:
            t0, count = open_block
            open_block = None
            count = _as_int(count)
            if not count:
                continue
            ev_ms = sum(min(b, t) - max(a, t0) for a, b in evals if a < t and b > t0)
            dur = (t - t0 - ev_ms) / 1000.0
            if dur > 0:
                rates.append(count * spe / dur)
    return rates


def _summarize(run: RunLog, events) -> None:
    """Fill the run's summary fields from its parsed events."""
    timed = events[:_timed_region(run, events)]
    samples, target, last_acc = _read_facts(run, timed)
    _judge_validity(run, target, last_acc)
    _time_evaluations(run, timed)

    # steady-state training throughput (excludes evaluation)
    spe = samples or IMAGENET_TRAIN_SAMPLES
    rates = _epoch_rates(timed, spe)
    if rates:
        run.train_rate = statistics.median(rates)
        run.train_rate_source = "epoch_start/epoch_stop"
        return
    rates = _block_rates(timed, spe)
    if rates:
        run.train_rate = statistics.median(rates)
        run.train_rate_source = "block_start/block_stop minus eval"
