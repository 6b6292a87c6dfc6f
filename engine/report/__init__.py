"""The self-contained HTML report of an analysis (``report.html``): for an
:class:`~gpurank.engine.results.AnalysisResult` ``result`` and its summary ``summary`` (the
dict written to ``summary.json``), ``write_report(result.table, summary,
"out/report.html")`` writes it.

matplotlib is imported only when a report is built, never at ``import gpurank.engine``.
"""

from .html import SECTIONS, build_report, rebuild_report, report_path, write_report

__all__ = ["build_report", "write_report", "rebuild_report", "report_path", "SECTIONS"]
