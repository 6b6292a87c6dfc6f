"""The self-contained HTML report: one file, figures inlined as PNG, scripts inlined, no network.

:func:`build_report` turns the ranked table (``ranking.parquet``) and ``summary.json`` into
HTML text; :func:`write_report` writes it atomically; :func:`rebuild_report` rebuilds it from
an output folder. The same inputs always give byte-identical HTML.

Every string from the data is HTML-escaped (or, inside the JSON that feeds the interactive
view, JSON-escaped with ``<``, ``>`` and ``&`` written as ``\\u`` escapes); the page's
Content-Security-Policy lets it load nothing from the network. The interactive trade-off view
is drawn by Chart.js (``assets/chart.umd.min.js``, version :data:`CHARTJS_VERSION`, MIT),
inlined in the page; without JavaScript, and in print, the static figures stand in for it.
"""

from __future__ import annotations

import hashlib
import json
import string
from importlib import metadata, resources
from pathlib import Path

import pandas as pd

from ..errors import DataError, UsageError
from ..formatting import value
from ..input_files import read_json
from ..io import read_metadata, read_table, write_text
from ..outputs import MANIFEST_NAME, check_target, read_manifest
from ..summary_schema import check_summary
from . import plots
from .cells import esc
from .offers import is_plan, offers_section
from .sections import (
    clusters_section,
    drawn_rows_caption,
    importance_section,
    overview_section,
    ranking_section,
    robust_section,
    scaling_section,
    settings_section,
    tradeoffs_section,
)

__all__ = ["build_report", "write_report", "rebuild_report", "report_path", "SECTIONS",
           "PLAN_SECTION", "CHARTJS_VERSION"]

#: (id, heading) of every section, in order.
SECTIONS = (
    ("overview", "The data at a glance"),
    ("importance", "What drives the target"),
    ("clusters", "Groups of configurations"),
    ("scaling", "Scaling"),
    ("tradeoffs", "Trade-offs"),
    ("ranking", "The ranking"),
    ("settings", "Settings, backend and notes"),
)

#: The section a plan's page adds before the ranking (``gpurank plan``, :mod:`.offers`).
PLAN_SECTION = ("offers", "Offers: cost against time")

#: The vendored Chart.js (engine/report/assets/README.md says where it comes from).
CHARTJS_VERSION = "4.6.1"
CHARTJS_SHA256 = "87364cc2b2a76a6684929e7d6b80b18a897794db38400caff1fcf1791c6925d2"
def _asset(name) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _chartjs() -> str:
    """The vendored Chart.js, checked against its recorded checksum, without its source-map
    comment (the map is not shipped; a browser's developer tools would try to fetch it)."""
    raw = resources.files(__package__).joinpath("assets", "chart.umd.min.js").read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != CHARTJS_SHA256:
        raise RuntimeError(f"engine/report/assets/chart.umd.min.js has sha256 {digest}, not "
                           f"the recorded {CHARTJS_SHA256} of Chart.js {CHARTJS_VERSION}")
    lines = raw.decode("utf-8").splitlines()
    return "\n".join(x for x in lines if not x.startswith("//# sourceMappingURL="))


def _version() -> str:
    try:
        return metadata.version("gpurank")
    except Exception:  # noqa: BLE001 - the version is decoration only
        return "unknown"


#: What the page may load: nothing from the network; its own inline styles and scripts, and
#: images from data: URIs.
_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")


# -- the page -----------------------------------------------------------------------------
def build_report(table: pd.DataFrame, summary: dict, *, max_points: int = 20_000,
                 seed: int = 0) -> str:
    """The HTML report of one analysis, as text.

    Parameters
    ----------
    table : DataFrame
        The ranked table (``AnalysisResult.table`` or ``ranking.parquet``).
    summary : dict
        The summary (``build_summary(result)`` or ``summary.json``).
    max_points : int, keyword-only
        Scatter plots draw a stratified sample (by cluster) of about this many rows plus
        every Pareto-front row.
    seed : int, keyword-only
        Seed of that sample.

    Returns
    -------
    str
        A complete HTML document with every figure and script inlined; byte-identical for
        equal inputs.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"build_report expects a pandas DataFrame; got {type(table).__name__}")
    table = table.reset_index(drop=True)
    summary = json.loads(json.dumps(summary, default=str))  # plain JSON types, like the file
    sample = plots.sample_for_plots(table, max_points, seed)
    caption = drawn_rows_caption(len(table), sample, table)
    bodies = {
        "overview": lambda: overview_section(table, summary),
        "importance": lambda: importance_section(summary),
        "clusters": lambda: clusters_section(table, summary, sample, caption),
        "scaling": lambda: scaling_section(table),
        "tradeoffs": lambda: tradeoffs_section(table, summary, sample, caption, seed),
        "ranking": lambda: ranking_section(summary) + robust_section(summary),
        "settings": lambda: settings_section(summary),
        "offers": lambda: offers_section(table),
    }
    # the offers view is a plan's (gpurank plan); an analysis page has no such section
    shown = list(SECTIONS)
    if is_plan(table):
        shown.insert([sid for sid, _ in shown].index("ranking"), PLAN_SECTION)
    sections = [f'<section id="{sid}"><h2>{esc(title)}</h2>{bodies[sid]()}</section>'
                for sid, title in shown]
    nav = "".join(f'<a href="#{sid}">{esc(title)}</a>' for sid, title in shown)
    crit = ", ".join(f"{c['column']} {c['sense']}" for c in summary.get("criteria") or [])
    subtitle = (f"{value(summary.get('rows', len(table)))} configurations ranked on the "
                f"{summary.get('backend', '?')} backend; criteria: {crit or '-'}")
    version = _version()
    template = string.Template(
        resources.files(__package__).joinpath("template.html").read_text(encoding="utf-8"))
    licence = _asset("chart.js-LICENSE.md").strip().replace("*/", "* /")
    scripts = (f"<script>/* Chart.js {CHARTJS_VERSION}, MIT licence */\n/*\n{licence}\n*/\n"
               f"{_chartjs()}\n</script>\n<script>{_asset('report.js')}</script>")
    return template.substitute(
        title="gpurank report",
        generator=esc(f"gpurank {version}"),
        run_id=esc(str(summary.get("run_id", ""))),
        csp=_CSP,
        subtitle=esc(subtitle),
        nav=nav,
        body="\n".join(sections),
        footer=esc(f"Generated by gpurank {version}. Self-contained: figures are inlined PNG "
                  "images and the interactive view's scripts (Chart.js "
                  f"{CHARTJS_VERSION}, MIT licence) are inlined; the page loads nothing from "
                  "the network."),
        scripts=scripts,
    )


def write_report(table: pd.DataFrame, summary: dict, path, *, overwrite=False,
                 **options) -> Path:
    """Build the report and write it to ``path`` atomically; returns the path.

    ``options`` (``max_points``, ``seed``) go to :func:`build_report`. An existing file is
    replaced only when it is a gpurank report or ``overwrite``.
    """
    return write_text(build_report(table, summary, **options), path, overwrite=overwrite,
                      name="--out")


def report_path(ranking_parquet_path, output=None) -> Path:
    """Where :func:`rebuild_report` writes: ``output``, ``report.html`` inside it when it is
    a folder, or ``report.html`` beside the ranking by default."""
    if output is None:
        return Path(ranking_parquet_path).parent / "report.html"
    out = Path(output)
    return out / "report.html" if out.is_dir() else out


def rebuild_report(ranking_parquet_path, output=None, *, overwrite=False, **options) -> Path:
    """Rebuild ``report.html`` from ``ranking.parquet`` and the ``summary.json`` beside it.

    The two must belong to one run: the run id in the Parquet metadata, in the summary and
    in the folder's manifest must agree. The report is drawn with the seed the analysis
    used (from the summary), so its figures equal the ones ``analyze`` drew.

    Parameters
    ----------
    ranking_parquet_path : str or Path
        ``ranking.parquet`` written by ``gpurank analyze`` / ``demo``.
    output : str or Path, optional
        Where to write; ``report.html`` in the parquet's folder by default.
    overwrite : bool, keyword-only
        Replace an existing ``output`` that is not a gpurank report.

    Raises
    ------
    DataError
        The parquet file or the ``summary.json`` beside it is missing, unreadable, has
        fields of the wrong type, or the two belong to different runs.
    """
    src = Path(ranking_parquet_path)
    summary_path = src.parent / "summary.json"
    if not src.exists():
        raise DataError(f"ranking file '{src}' does not exist; run gpurank analyze or "
                        "gpurank demo first")
    if not src.is_file():
        raise DataError(f"ranking file '{src}' is not a file; give the ranking.parquet that "
                        "gpurank analyze wrote")
    if not summary_path.is_file():
        raise DataError(f"summary file '{summary_path}' does not exist; the report needs the "
                        f"summary.json written beside '{src.name}' by gpurank analyze")
    summary = read_json(summary_path, what="summary file")
    check_summary(summary, path=summary_path)
    out = report_path(src, output)
    check_target(out, name="--out", overwrite=overwrite)
    try:
        meta = read_metadata(src)
    except Exception as exc:  # noqa: BLE001 - any parser failure is a data problem
        raise DataError(f"cannot read ranking file '{src}': {type(exc).__name__}: "
                        f"{_one_line(exc)}") from None
    manifest = read_manifest(src.parent)
    ids = {"ranking.parquet": meta.get("run_id"), "summary.json": summary.get("run_id")}
    if manifest is not None:
        ids[MANIFEST_NAME] = manifest.get("run_id")
    if len({v for v in ids.values()}) > 1:
        shown = ", ".join(f"{k} has run {v or 'none'}" for k, v in ids.items())
        raise DataError(f"'{src}' and '{summary_path}' do not belong to the same analysis "
                        f"({shown}); rebuild from one output folder of gpurank analyze")
    home = read_manifest(out.parent)
    if home is not None and home.get("run_id") != summary.get("run_id"):
        raise UsageError(f"--out '{out}' is inside the output of another analysis (run "
                         f"{home.get('run_id')}); write the report beside its own ranking, or "
                         "outside an output folder")
    table = read_table(src)
    if "rows" in summary and int(summary["rows"]) != len(table):
        raise DataError(f"summary file '{summary_path}' describes {summary['rows']} rows but "
                        f"'{src}' holds {len(table)}; they do not belong to the same analysis")
    options.setdefault("seed", int((summary.get("settings") or {}).get("seed", 0)))
    return write_report(table, summary, out, overwrite=overwrite, **options)


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
