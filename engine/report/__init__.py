"""The self-contained HTML report of an analysis (``report.html``).

>>> from gpurank.engine.report import write_report
>>> write_report(result.table, summary, "out/report.html")

matplotlib is imported only when a report is built, never at ``import gpurank.engine``.
"""

from .html import SECTIONS, build_report, rebuild_report, report_path, write_report

__all__ = ["build_report", "write_report", "rebuild_report", "report_path", "SECTIONS"]
