"""MLPerf Training result folders read into one table.

It imports the facts floor (catalogs, the resolver, the benchmark rules) and never the
performance model (``tests/test_import_graph.py``).

================  ===========================================================================
``reader``        :func:`read_mlperf`: one row per (round, submitter, system, benchmark),
                  every problem a ``ReadWarning``
``discovery``     rounds, submitters, systems and benchmark folders of a results tree
``rows``          one system's row: description, runs, score, convergence, catalog facts
``scoring``       the olympic score of the runs; published scores and run times
``logs``          one result log (``result_*.txt``) parsed into a ``RunLog``
``systems``       one system description parsed into flat fields
================  ===========================================================================
"""

__all__ = []
