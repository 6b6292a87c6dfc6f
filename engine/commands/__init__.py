"""The commands of ``gpurank`` beyond the analysis itself: each turns its command line's
arguments into calls of the library and writes its output; :mod:`gpurank.engine.cli` parses
the flags and prints. Library modules never print or parse flags.

====================  =====================================================================
``simulate``          ``gpurank simulate``: a sweep to Parquet (a file or a folder of
                      parts) or CSV, sizes checked first, SIGTERM cleaned up
``mlperf``            ``gpurank mlperf``: MLPerf Training results to one Parquet table
``calibrate``         ``gpurank calibrate`` and ``gpurank predict``: a model fitted and
                      written with its validation report; a table's outcomes predicted
``plan``              ``gpurank plan``: every offer of the price catalogs at 1, 2, 4, ...
                      instances, predicted, priced and ranked
``study``             ``gpurank study``: the ResNet-50 study (:func:`run_study`), its
                      result and its command
``study_workloads``   the study on every MLPerf Training benchmark, one section each, with
                      the break-even points
``study_checks``      the study's three findings checked against the data, and the
                      statistics they read
``study_report``      the ResNet-50 study's Markdown report, section by section
``study_text``        MLPerf free text classified, the filtering of the systems read, the
                      Markdown pieces both reports share
====================  =====================================================================
"""

from .calibrate import run_calibrate_cli, run_predict_cli
from .mlperf import run_mlperf_cli
from .plan import run_plan_cli, top_offers
from .simulate import run_simulate_cli
from .study import StudyResult, run_study, run_study_cli
from .study_workloads import WorkloadsStudyResult, run_workloads_study

__all__ = ["run_plan_cli", "top_offers", "run_simulate_cli", "run_mlperf_cli", "run_calibrate_cli", "run_predict_cli",
           "run_study_cli", "run_study", "run_workloads_study", "StudyResult",
           "WorkloadsStudyResult"]
