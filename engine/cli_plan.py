"""The ``plan`` command's flags and its console lines (:mod:`.commands.plan` does the work).

The top offers are printed one line each: rank, provider, instance, instances,
accelerators, the predicted time with its 80% interval, the cost of that size on demand and
on spot, and ``p_top1`` with ``--robust``; the notes of the plan (what the catalogs held,
what was not resolved or refused) go to stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .commands import run_plan_cli, top_offers
from .formatting import printable
from .methods import DEFAULT_METHOD, METHOD_NAMES
from .outputs import check_target
from .sources.model.card import is_card_path

__all__ = ["add_plan_parser", "run_plan_command"]


def add_plan_parser(sub, *, integer, overwrite) -> None:
    """The ``plan`` command and its options; ``integer`` and ``overwrite`` are the command
    line's integer type and its ``--overwrite`` flag."""
    pl = sub.add_parser("plan", help="which offer should I rent? rank the offers of price "
                                     "catalogs for a workload")
    pl.add_argument("--workload", required=True, metavar="NAME|FILE.toml",
                    help="a shipped workload or MLPerf benchmark (llama31_8b, bert, ...), or a "
                         "model card file (docs/workloads.md)")
    pl.add_argument("--offers", required=True, metavar="PATH",
                    help="a SkyPilot vms.csv, a folder of them (<cloud>/vms.csv), or a gpurank "
                         "offers CSV")
    pl.add_argument("--max-accelerators", type=integer, default=256, metavar="N",
                    help="plan 1, 2, 4, ... instances while they hold at most N accelerators "
                         "(default: 256)")
    pl.add_argument("--budget-usd", type=float, default=None, metavar="X",
                    help="rank only offers whose predicted cost is at most X dollars")
    pl.add_argument("--deadline-h", type=float, default=None, metavar="H",
                    help="rank only offers whose predicted time is at most H hours")
    pl.add_argument("--criteria", default=None,
                    help="comma-separated column:min|max[:weight] (default: "
                         "time_to_train_min:min,cost_usd:min)")
    pl.add_argument("--require", default=None, metavar="LIMITS",
                    help="limits an offer must meet, e.g. 'spot == 0,provider in {aws, gcp}' (spot: 1 or 0)")
    pl.add_argument("--robust", action="store_true",
                    help="robust ranking: SMAA over the weights and the prediction intervals "
                         "(p_top1: how sure the winner is)")
    pl.add_argument("--method", default=DEFAULT_METHOD, metavar="NAME",
                    help="ranking method, one of " + ", ".join(METHOD_NAMES)
                         + f" (default: {DEFAULT_METHOD}; docs/ranking.md)")
    pl.add_argument("--samples", type=integer, default=10_000,
                    help="weight samples for --robust (default: 10,000)")
    pl.add_argument("--top", type=integer, default=10, help="how many top offers to show")
    pl.add_argument("--seed", type=integer, default=0, help="seed of every random choice")
    pl.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto",
                    help="where to rank (default: auto, the GPU when usable)")
    pl.add_argument("--out", default="gpurank-plan", help="output folder (default: gpurank-plan)")
    pl.add_argument("--no-report", action="store_true", help="do not write report.html")
    pl.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    pl.add_argument("--quiet", action="store_true", help="print nothing but errors")
    overwrite(pl)


def run_plan_command(args, progress) -> int:
    """Run ``gpurank plan`` with parsed ``args``: plan, rank, write, print the top offers."""
    read = [args.offers] + ([args.workload] if is_card_path(args.workload) else [])
    check_target(args.out, name="--out", overwrite=args.overwrite, folder=True,
                 inputs=[r for r in read if str(r).strip()])
    try:
        summary, result = run_plan_cli(
            args.workload, args.offers, args.out, max_accelerators=args.max_accelerators,
            budget_usd=args.budget_usd, deadline_h=args.deadline_h, criteria=args.criteria,
            require=args.require, robust=args.robust, top=args.top, seed=args.seed,
            samples=args.samples, method=args.method, backend=args.backend,
            report=not args.no_report,
            overwrite=args.overwrite, progress=progress)
    finally:
        progress.close()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    if not args.quiet:
        _print_plan(summary, top_offers(result.table, args.top), args)
    return 0


def _print_plan(summary, best, args) -> None:
    """The notes of a plan and its top offers, one line each."""
    for note in summary.get("notes", ()):
        print(printable(f"note: {note}"), file=sys.stderr)

    def usd(v):
        return "-" if v != v else f"${v:,.0f}"

    print(f"{'#':>3} {'provider':<12} {'instance':<26} {'inst':>4} {'acc':>4} "
          f"{'time h (80% interval)':<24} {'on demand':>11} {'spot':>11}"
          + (" p_top1" if "p_top1" in best.columns else ""))
    for r in best.itertuples(index=False):
        when = f"{r.time_h:,.1f} ({r.time_h_lo:,.1f}-{r.time_h_hi:,.1f})"
        line = (f"{int(r.rank):>3} {str(r.provider)[:12]:<12} {str(r.instance)[:26]:<26} "
                f"{int(r.instances):>4} {int(r.n_accelerators):>4} {when:<24} "
                f"{usd(r.cost_on_demand_usd):>11} {usd(r.cost_spot_usd):>11}"
                + (f" {r.p_top1:6.3f}" if "p_top1" in best.columns else ""))
        print(printable(line))
    print(printable("wrote ranking.parquet, summary.json"
                    + ("" if args.no_report else ", report.html") + f" in {Path(args.out)}"))
