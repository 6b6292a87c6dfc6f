"""Command line: parse arguments, call the engine, map errors to exit codes. No logic here.

Exit codes: 0 ok, 2 usage, 3 bad data, 4 backend unavailable (1 for anything unexpected).
Errors are printed as one line on stderr; ``--verbose`` adds the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import traceback
import warnings
from dataclasses import replace
from pathlib import Path

from .api import Engine
from .backend import describe_environment
from .cli_plan import add_plan_parser, run_plan_command
from .commands import (
    run_calibrate_cli,
    run_mlperf_cli,
    run_predict_cli,
    run_simulate_cli,
    run_study_cli,
)
from .console import make_console, print_summary
from .distributed import check_dask_available
from .errors import DataError, GpurankError, UsageError
from .formatting import printable
from .io import read_table, to_jsonable
from .outputs import OutputLeftBehind, check_target
from .params import ParamError
from .progress import SILENT, TerminalProgress
from .report import rebuild_report, report_path
from .sources.facts.catalog import merge_accelerator_catalog
from .sources.model.card import workload_arg
from .sources.model.outcomes import needs_prediction, predicted_outcomes, table_columns
from .sources.model.perfmodel import CalibratedModel
from .sources.sweep.simulate import BATCH_MODES, simulate
from .spec import AnalysisSpec, parse_criteria
from .writelock import claim

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (no usage block) and exit code 2; ``main``
    prints them with the offending text neutralized for the terminal."""

    def error(self, message):
        raise UsageError(" ".join(str(message).split()))


def _integer(text):
    """An integer as typed: ``1000``, ``1_000`` or ``1e6``; the range is checked by the
    parameter's declared constraint, which names it."""
    t = str(text).strip().replace("_", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not f.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(f)


def _clusters(text):
    if text == "auto":
        return "auto"
    try:
        return _integer(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or 'auto', got {text!r}") from None


def _nonempty(text):
    if not str(text).strip():
        raise argparse.ArgumentTypeError("expected a value, got an empty string")
    return text


#: Parameters (API spellings) whose command-line flag is not ``--`` + the name with dashes.
_FLAGS = {"weight_ranges": "--weights-range", "constraints": "--require",
          "out_dir": "--out", "k": "--clusters", "path": "--output", "model_path": "--model",
          "check_size": "--no-size-check", "check_size=False": "--no-size-check",
          "robust=True": "--robust", "method='vikor'": "--method vikor"}


def _flag(param: str) -> str:
    """The command line's name for a parameter (or a ``name=value`` setting) of the API."""
    return _FLAGS.get(param, "--" + param.replace("_", "-"))


def _overwrite(p):
    p.add_argument("--overwrite", action="store_true",
                   help="replace the output path even when gpurank did not write it (an "
                        "earlier gpurank output is always replaced, atomically)")


def _common(p, *, out_default):
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto",
                   help="where to run (default: auto, the GPU when usable)")
    p.add_argument("--out", default=out_default, help=f"output folder (default: {out_default})")
    _overwrite(p)
    p.add_argument("--criteria", default=None,
                   help="comma-separated column:min|max[:weight]; quote a column name that "
                        "holds ':' or ',' (default: time_to_train_min:min,"
                        "throughput_per_accelerator:max,scaling_efficiency:max,cost_usd:min, "
                        "each when the table has it)")
    p.add_argument("--require", default=None, metavar="LIMITS",
                   help="limits a configuration must meet before it is ranked, e.g. "
                        "'time_to_train_min<=120,cost_usd<=500,provider in {AWS, Azure}'")
    p.add_argument("--target", default=None,
                   help="column whose drivers the random forest measures (default: "
                        "throughput_per_accelerator, or time_to_train_min without throughput)")
    p.add_argument("--clusters", type=_clusters, default=None,
                   help="k for KMeans, or 'auto' (default: 5, fewer for a table of fewer rows)")
    p.add_argument("--top", type=_integer, default=10, help="how many top rows to report")
    p.add_argument("--sample-rows", type=_integer, default=20_000,
                   help="rows the random forest is fitted on at most (seeded sample)")
    p.add_argument("--norm", default="vector",
                   help="TOPSIS normalization: vector, minmax, or log (log10 then min-max, for "
                        "criteria spanning orders of magnitude; see docs/ranking.md)")
    p.add_argument("--method", default="topsis",
                   help="ranking method: topsis (closeness to the ideal, the default) or vikor "
                        "(compromise index Q, 0 = best; see docs/ranking.md)")
    p.add_argument("--vikor-v", type=float, default=0.5, metavar="V",
                   help="VIKOR's weight of the majority's utility against the largest regret, "
                        "in [0, 1] (default: 0.5; only with --method vikor)")
    p.add_argument("--seed", type=_integer, default=0, help="seed of every random choice")
    p.add_argument("--drop-invalid", action="store_true",
                   help="drop invalid rows (missing criteria, values out of range) and report "
                        "each reason, instead of stopping")
    p.add_argument("--accelerator-type", default=None, type=_nonempty,
                   help="keep only rows of this accelerator_type (e.g. gpu)")
    p.add_argument("--benchmark", default=None, type=_nonempty,
                   help="keep only rows of this benchmark (MLPerf workload, e.g. bert); a "
                        "table of several benchmarks needs it")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--no-report", action="store_true", help="do not write report.html")
    p.add_argument("--rank-depth", type=_integer, default=None, metavar="D",
                   help="Pareto ranks exact up to front D, later rows get D (default: every "
                        "front, exact on Dask too; D makes Dask runs a few times faster)")
    p.add_argument("--count-cap", type=_integer, default=None, metavar="C",
                   help="report domination counts capped at C (exact below it; default: exact)")
    p.add_argument("--robust", action="store_true",
                   help="robust ranking: SMAA over TOPSIS weights (p_top1, p_topk, expected "
                        "rank, central weights)")
    p.add_argument("--samples", type=_integer, default=10_000,
                   help="weight samples for --robust (default: 10,000); SE ~ 1/sqrt(samples)")
    p.add_argument("--weights-range", action="append", default=None, metavar="COL=LOW:HIGH",
                   help="bounds on a criterion's normalized weight for --robust, e.g. "
                        "cost_usd=0.1:0.5 (repeat, or comma-separate)")


def _add_demo(sub) -> None:
    """The ``demo`` command and its options."""
    demo = sub.add_parser("demo", help="run the whole analysis on a built-in simulated sweep")
    demo.add_argument("--n", type=_integer, default=200_000,
                      help="configurations to simulate (default: 200,000)")
    _common(demo, out_default="gpurank-demo")


def _add_analyze(sub) -> None:
    """The ``analyze`` command and its options."""
    an = sub.add_parser("analyze", help="analyze a configuration table (Parquet or CSV)")
    an.add_argument("table", help="a .parquet file, a folder of .parquet files, or a .csv file")
    an.add_argument("--dask", default=None, metavar="local[:N]|tcp://HOST:PORT", type=_nonempty,
                    help="run on Dask: a local cluster of N worker processes, or a scheduler")
    an.add_argument("--predict", action="store_true",
                    help="predict the outcomes (time, throughput, cost, energy, with 80%% "
                         "intervals) from the configuration columns and analyze those; the "
                         "default for a table without time_to_train_min")
    an.add_argument("--model", default=None,
                    help="with predicted outcomes: calibrated model JSON (default: each "
                         "benchmark's shipped model)")
    _catalog(an)
    _workload_flag(an)
    _common(an, out_default="gpurank-out")


def _add_mlperf(sub) -> None:
    """The ``mlperf`` command and its options."""
    ml = sub.add_parser("mlperf", help="read MLPerf Training results into a configuration table")
    ml.add_argument("paths", nargs="+", metavar="PATH",
                    help="a training_results_vX.Y checkout, or a folder holding several")
    ml.add_argument("-o", "--output", required=True, help="output .parquet file")
    ml.add_argument("--benchmark", default="resnet", metavar="NAME|all",
                    help="benchmark folder to read (resnet, bert, gpt3, ...; default: resnet), "
                         "or 'all' for every benchmark (the table's benchmark column says "
                         "which; analyze then needs --benchmark)")
    ml.add_argument("--strict", action="store_true", help="turn reader warnings into errors")
    ml.add_argument("--dedupe", action="store_true",
                    help="drop repeated submissions of identical runs")
    ml.add_argument("--published-scores", default=None, metavar="SUMMARY_CSV",
                    help="published per-system scores (summary.csv) for systems whose logs "
                         "are incomplete; each row's score_source says where its score came from")
    ml.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _overwrite(ml)


def _add_study(sub) -> None:
    """The ``study`` command and its options."""
    st = sub.add_parser("study", help="reproduce the MLPerf ResNet-50 study as a Markdown report")
    st.add_argument("paths", nargs="+", metavar="PATH", help="MLPerf Training results folders")
    st.add_argument("--published-scores", default=None, metavar="SUMMARY_CSV",
                    help="published per-system scores for systems whose logs are incomplete")
    st.add_argument("--seed", type=_integer, default=0)
    st.add_argument("--benchmark", default="resnet", metavar="NAME|all",
                    help="benchmark to study (default: resnet), or 'all': one section per "
                         "benchmark")
    st.add_argument("-o", "--output", required=True, help="output .md file")
    st.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    _overwrite(st)


def _add_simulate(sub) -> None:
    """The ``simulate`` command and its options."""
    sim = sub.add_parser("simulate", help="simulate a sweep of training configurations")
    sim.add_argument("--n", type=_integer, required=True, help="configurations to simulate")
    sim.add_argument("--seed", type=_integer, default=0)
    sim.add_argument("-o", "--output", required=True,
                     help="output .parquet file (or folder with --partitioned, or .csv)")
    sim.add_argument("--model", default=None, help="calibrated model JSON (gpurank calibrate)")
    sim.add_argument("--workload", default=None, metavar="NAME|FILE.toml",
                     help="workload or MLPerf benchmark to simulate (resnet50/resnet, "
                          "bert_large/bert, gpt3_175b/gpt3, ...), or a model card file "
                          "(docs/workloads.md); default: the model's, else ResNet-50")
    sim.add_argument("--accelerators", default=None, help="comma-separated accelerator names")
    sim.add_argument("--counts", default=None, help="comma-separated accelerator counts")
    sim.add_argument("--nodes", default=None, help="comma-separated node counts")
    sim.add_argument("--providers", default=None, help="comma-separated provider names")
    sim.add_argument("--batch", default="drawn", choices=BATCH_MODES,
                     help="drawn: draw each row's batch (default); fastest: the global batch "
                          "each row trains fastest at within the workload's reference "
                          "convergence points and memory")
    sim.add_argument("--row-group-rows", type=_integer, default=1_000_000)
    sim.add_argument("--partitioned", action="store_true",
                     help="write a folder of Parquet part files (a dataset for Dask)")
    sim.add_argument("--no-size-check", action="store_true",
                     help="write even when the estimated output is larger than the free disk "
                          "(or memory, for .csv)")
    _catalog(sim)
    sim.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _overwrite(sim)


def _catalog(p) -> None:
    p.add_argument("--catalog", default=None, metavar="CSV",
                   help="accelerators of your own: a CSV with the accelerator catalog's "
                        "columns, merged over the built-in catalog (docs/simulator.md)")


def _workload_flag(p) -> None:
    p.add_argument("--workload", default=None, metavar="NAME|FILE.toml",
                   help="predict every row as this workload: a shipped one or MLPerf benchmark, "
                        "or a model card file (docs/workloads.md)")


def _add_calibrate(sub) -> None:
    """The ``calibrate`` command and its options."""
    cal = sub.add_parser("calibrate", help="fit the performance model to an MLPerf table")
    cal.add_argument("table", help="table written by gpurank mlperf")
    cal.add_argument("-o", "--output", required=True,
                     help="output model .json (a folder with --benchmark all)")
    cal.add_argument("--benchmark", default=None, metavar="NAME|all",
                     help="fit the rows of one benchmark (a table of several needs it), or "
                          "'all': one model per benchmark, <workload>.json in the folder")
    cal.add_argument("--report", default=None, metavar="DOC_MD",
                     help="also write the cross-validation tables into this Markdown file "
                          "(between its calibrate --report markers, or a new file)")
    cal.add_argument("--intervals", default=None, metavar="JSON",
                     help="with --benchmark all: write the prediction-interval table fitted on "
                          "every workload's held-out errors to this file")
    cal.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _overwrite(cal)


def _add_predict(sub) -> None:
    """The ``predict`` command and its options."""
    pred = sub.add_parser("predict", help="predict time, throughput, cost and energy of a table")
    pred.add_argument("table", help="a configuration table (Parquet or CSV)")
    pred.add_argument("--model", default=None,
                      help="calibrated model JSON (default: each benchmark's shipped model)")
    pred.add_argument("--benchmark", default=None, metavar="NAME",
                      help="keep only the rows of this benchmark")
    pred.add_argument("-o", "--output", required=True, help="output .parquet file")
    pred.add_argument("--config-only", action="store_true",
                      help="ignore measured epochs and samples in the table: predict from the "
                           "configuration columns alone, as before training")
    _catalog(pred)
    _workload_flag(pred)
    pred.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _overwrite(pred)


def _add_plan(sub) -> None:
    """The ``plan`` command and its options (:mod:`.cli_plan`)."""
    add_plan_parser(sub, integer=_integer, overwrite=_overwrite)


def _add_report(sub) -> None:
    """The ``report`` command and its options."""
    rp = sub.add_parser("report", help="rebuild report.html from ranking.parquet and summary.json")
    rp.add_argument("ranking", help="ranking.parquet written by analyze or demo")
    rp.add_argument("--out", default=None, help="output file (default: report.html beside it)")
    rp.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _overwrite(rp)


def _add_info(sub) -> None:
    """The ``info`` command and its options."""
    info = sub.add_parser("info", help="versions of the backend libraries and the GPU, if any")
    info.add_argument("--json", action="store_true", help="(info always prints JSON)")


def build_parser() -> argparse.ArgumentParser:
    """The ``gpurank`` command line: global options, then one subcommand per command."""
    parser = _Parser(
        prog="gpurank",
        description="Evaluate, group and rank deep-learning training configurations.",
    )
    parser.add_argument("--verbose", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_demo, _add_analyze, _add_mlperf, _add_study, _add_simulate,
                _add_calibrate, _add_predict, _add_plan, _add_report, _add_info):
        add(sub)
    return parser


def _spec_options(args) -> dict:
    return dict(
        criteria=parse_criteria(args.criteria) if args.criteria is not None else None,
        constraints=args.require if args.require is not None else (),
        target=args.target,
        clusters=args.clusters,
        top=args.top,
        sample_rows=args.sample_rows,
        seed=args.seed,
        drop_invalid=args.drop_invalid,
        norm=args.norm,
        accelerator_type=args.accelerator_type,
        benchmark=args.benchmark,
        robust=args.robust,
        samples=args.samples,
        weight_ranges=tuple(args.weights_range or ()),
        rank_depth=args.rank_depth,
        count_cap=args.count_cap,
        method=args.method,
        vikor_v=args.vikor_v,
    )


def _run_analysis(args, data, *, simulate_rows=None) -> int:
    """Analyze ``data`` (a path or table) or, with ``simulate_rows``, a fresh simulated sweep."""
    spec = AnalysisSpec(**_spec_options(args))  # every option checked before any work
    check_target(args.out, name="--out", overwrite=args.overwrite, folder=True)
    if simulate_rows is None:
        _check_input(args.table)
        data, spec = _with_predicted_outcomes(args, data, spec)
    progress = _progress(args)
    try:
        engine = Engine(backend=args.backend, progress=progress)
        if simulate_rows is not None:
            with progress.step("simulate", simulate_rows):
                data = simulate(simulate_rows, seed=args.seed)
        result = engine.analyze(data, spec)
        with progress.step("write", len(result.table)):
            summary = engine.write(result, args.out, report=not args.no_report,
                                   overwrite=args.overwrite)
    finally:
        progress.close()
    names = ["ranking.parquet", "summary.json"] + ([] if args.no_report else ["report.html"])
    return _print_result(args, summary, f"wrote {', '.join(names)} in {Path(args.out)}")


def _print_result(args, summary, wrote) -> int:
    """The one printing of an analysis, in memory or on Dask: the summary as JSON
    (``--json``), or its tables and the line ``wrote`` saying what was written."""
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console = make_console(quiet=args.quiet)
        print_summary(summary, console)
        console.print(printable(wrote))
    return 0


def _with_predicted_outcomes(args, data, spec):
    """The table to analyze: as given, or, for configurations without outcomes (or with
    ``--predict``), the configurations with their predicted outcomes and the notes on them."""
    asked = [f for f, v in (("--catalog", args.catalog), ("--model", args.model),
                            ("--workload", getattr(args, "workload", None))) if v]
    if not (args.predict or asked or needs_prediction(table_columns(data))):
        return data, spec

    table = read_table(data)
    if not (args.predict or needs_prediction(table.columns)):
        raise UsageError(f"{asked[0]} applies to predicted outcomes, and the table has "
                         "measured time_to_train_min; add --predict to analyze predictions "
                         "instead")
    acc = merge_accelerator_catalog(args.catalog) if args.catalog else None
    model = CalibratedModel.from_json(args.model) if args.model else None
    wl = args.workload if getattr(args, "workload", None) else None
    table, notes = predicted_outcomes(table, model=model, accelerator_table=acc,
                                      workload=workload_arg(wl) if wl else None)
    return table, replace(spec, notes=tuple(spec.notes) + tuple(notes))


def _progress(args):
    """Progress bars on stderr when it is a terminal and the user wants human output."""
    if getattr(args, "quiet", False) or getattr(args, "json", False) or not sys.stderr.isatty():
        return SILENT
    return TerminalProgress()


def _cmd_demo(args) -> int:
    return _run_analysis(args, None, simulate_rows=args.n)


def _cmd_analyze(args) -> int:
    if args.dask:
        return _run_distributed(args)
    return _run_analysis(args, args.table)


def _run_distributed(args) -> int:
    if args.predict or args.catalog or args.model or args.workload:
        raise UsageError("--predict, --catalog, --model and --workload predict outcomes in "
                         "memory; run "
                         "gpurank predict first and analyze its output with --dask")

    spec = AnalysisSpec(**_spec_options(args))
    check_dask_available()
    check_target(args.out, name="--out", overwrite=args.overwrite, folder=True)
    _check_input(args.table)
    engine = Engine(backend=args.backend, dask=args.dask)
    # what the exact ranks and counts will cost, on stderr before they start
    announce = None if args.quiet else (lambda line: print(printable(line), file=sys.stderr,
                                                           flush=True))
    result = engine.analyze_dataset(args.table, out_dir=args.out, overwrite=args.overwrite,
                                    spec=spec, announce=announce)
    return _print_result(args, result.summary,
                         f"wrote ranking/ (partitioned) and summary.json in {Path(args.out)}")


def _check_input(path) -> None:
    """Refuse a missing input before any work (the reader says why a present one is bad)."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"table '{p}' does not exist")


def _cmd_info(args) -> int:
    print(json.dumps(describe_environment(), indent=2))
    return 0


def _split(text, cast=str):
    if text is None:
        return None
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    try:
        return [cast(t) for t in items]
    except ValueError:
        raise UsageError(f"expected a comma-separated list of numbers; got {text!r}") from None


def _emit(args, payload: dict, line: str) -> None:
    if args.json:
        print(json.dumps(to_jsonable(payload), indent=2))
    else:
        print(printable(line, newlines=True))


def _cmd_mlperf(args) -> int:
    progress = _progress(args)
    try:
        with progress.step("read"):
            res = run_mlperf_cli(args.paths, args.output, benchmark=args.benchmark,
                                 strict=args.strict, dedupe=args.dedupe,
                                 published_scores=args.published_scores,
                                 overwrite=args.overwrite)
    finally:
        progress.close()
    meta = res.metadata()
    for w in res.warnings:
        if not args.json:
            print(printable(f"warning: {w.path}: {w.reason}"), file=sys.stderr)
    scored = int(res.table["time_to_train_min"].notna().sum())
    _emit(args, meta, f"wrote {args.output}: {len(res.table)} systems, {scored} with a score, "
                      f"{len(res.warnings)} warnings")
    return 0


def _cmd_study(args) -> int:
    res = run_study_cli(args.paths, args.output, published_scores=args.published_scores,
                        seed=args.seed, overwrite=args.overwrite, benchmark=args.benchmark)
    _emit(args, {"output": args.output, "verdicts": res.verdicts()},
          "\n".join(res.summary_lines()))
    return 0


def _cmd_simulate(args) -> int:
    progress = _progress(args)
    try:
        with progress.step("simulate", args.n):
            out = run_simulate_cli(args.output, n=args.n, seed=args.seed,
                                   model_path=args.model, accelerators=_split(args.accelerators),
                                   counts=_split(args.counts, int),
                                   nodes=_split(args.nodes, int),
                                   providers=_split(args.providers),
                                   row_group_rows=args.row_group_rows,
                                   partitioned=args.partitioned, overwrite=args.overwrite,
                                   check_size=not args.no_size_check, workload=args.workload,
                                   catalog=args.catalog, batch=args.batch)
    finally:
        progress.close()
    for note in out.get("notes", ()):
        if not args.json:
            print(printable(f"note: {note}"), file=sys.stderr)
    _emit(args, out, f"wrote {out['path']}: {out['rows']:,} configurations "
                     f"({out['excluded']:,} impossible grid points excluded) in "
                     f"{out['seconds']:.1f} s")
    return 0


def _cmd_calibrate(args) -> int:
    model = run_calibrate_cli(args.table, args.output, overwrite=args.overwrite,
                              report=args.report, benchmark=args.benchmark,
                              intervals=args.intervals)
    models = model if isinstance(model, dict) else {model.workload: model}
    _emit(args, {"output": args.output, "report": args.report,
                 "models": {k: m.to_dict() for k, m in models.items()}},
          f"wrote {args.output}" + (f" ({len(models)} models)" if isinstance(model, dict) else "")
          + (f" and the report in {args.report}" if args.report else ""))
    return 0


def _cmd_predict(args) -> int:
    res = run_predict_cli(args.table, args.model, args.output, overwrite=args.overwrite,
                          benchmark=args.benchmark, use_table_epochs=not args.config_only,
                          catalog=args.catalog, workload=args.workload)
    _emit(args, {"output": args.output, "rows": len(res)},
          f"wrote {args.output}: {len(res):,} configurations with predicted_ columns")
    return 0


def _cmd_plan(args) -> int:
    return run_plan_command(args, _progress(args))


def _cmd_report(args) -> int:
    path = rebuild_report(args.ranking, args.out, overwrite=args.overwrite)
    _emit(args, {"output": str(path)}, f"wrote {path}")
    return 0


def _outputs(args) -> list:
    """(path, flag) of each output the command writes: claimed before any work, so a second
    run into the same path is refused at once instead of replacing this one's output."""
    if args.command in ("demo", "analyze", "plan"):
        return [(args.out, "--out")]
    if args.command == "report":
        return [(report_path(args.ranking, args.out), "--out")]
    outs = [(getattr(args, "output", None), "--output"),
            (getattr(args, "report", None), "--report")]
    return [(path, flag) for path, flag in outs if path is not None]


@contextlib.contextmanager
def _claimed(args):
    """Hold the claims of :func:`_outputs`; their notes (a lock taken over from a run that
    is gone) go to stderr once the command has succeeded."""
    with contextlib.ExitStack() as stack:
        claims = [stack.enter_context(claim(path, name=flag)) for path, flag in _outputs(args)]
        yield
        if not getattr(args, "quiet", False):
            for note in (n for c in claims for n in c.notes):
                print(printable(f"note: {note}"), file=sys.stderr)


_COMMANDS = {
    "report": _cmd_report,
    "demo": _cmd_demo,
    "analyze": _cmd_analyze,
    "mlperf": _cmd_mlperf,
    "study": _cmd_study,
    "simulate": _cmd_simulate,
    "calibrate": _cmd_calibrate,
    "predict": _cmd_predict,
    "plan": _cmd_plan,
    "info": _cmd_info,
}


def _one_line(text) -> str:
    """A message as one printable line: whitespace runs folded, control and bidirectional
    characters shown as escapes (data can hold terminal control sequences)."""
    return printable(" ".join(str(text).split()))


@contextlib.contextmanager
def _silenced(quiet: bool):
    """``--quiet``: nothing but errors reaches the terminal, not even the libraries'
    warnings (NumPy, matplotlib, scikit-learn) or Dask's log lines; restored afterwards."""
    if not quiet:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=OutputLeftBehind)  # shown as a note
            yield
        return

    loggers = [logging.getLogger(n) for n in ("matplotlib", "distributed", "dask", "numba")]
    levels = [lg.level for lg in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # what a write left beside its output is said even under --quiet
        warnings.filterwarnings("always", category=OutputLeftBehind)
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels):
                lg.setLevel(level)


@contextlib.contextmanager
def _held_warnings(args):
    """Warnings raised while a command runs (a library's RuntimeWarning about an overflow
    that the command then handles) are shown once it has succeeded; when it fails, its
    error is the one line on stderr (with --verbose, the warnings are shown too)."""
    caught, ok = [], False
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield
        ok = True
    finally:
        if ok or args.verbose:
            for w in caught:
                if issubclass(w.category, OutputLeftBehind):
                    print(printable(f"note: {w.message}"), file=sys.stderr)
                    continue
                warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file,
                                     w.line)


def _terminated(signum, frame):
    # SIGTERM (a batch scheduler's kill, `timeout`, a container stop) unwinds like Ctrl-C,
    # so a write in progress removes its staging files instead of leaving them behind.
    raise SystemExit(128 + signum)


def main(argv=None) -> int:
    """Entry point of the ``gpurank`` console script."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"gpurank: error: {_one_line(exc)}", file=sys.stderr)
        return exc.exit_code
    try:
        with _held_warnings(args), _silenced(getattr(args, "quiet", False)), _claimed(args):
            return _COMMANDS[args.command](args)
    except GpurankError as exc:
        if args.verbose:
            print(printable(traceback.format_exc(), newlines=True), end="", file=sys.stderr)
        message = exc.for_flag(_flag) if isinstance(exc, ParamError) else str(exc)
        print(f"gpurank: error: {_one_line(message)}", file=sys.stderr)
        return exc.exit_code
    except (MemoryError, OSError) as exc:
        if args.verbose:
            print(printable(traceback.format_exc(), newlines=True), end="", file=sys.stderr)
        print(f"gpurank: error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gpurank: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
