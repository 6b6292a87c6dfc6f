"""Simulated sweeps: configurations drawn from the catalogs and evaluated by the model.

It may import the model and the facts floor, never the MLPerf reader
(``tests/test_import_graph.py``).

============  ===============================================================================
``simulate``  :func:`simulate` (in memory), :func:`simulate_to_parquet` (streamed)
``plan``      the catalogs and options read once into the arrays every chunk draws from
``rows``      one logical chunk of rows: draws, outcomes, exclusions, intervals, the frame
``writer``    the Parquet row-group writer and the size checks
============  ===============================================================================
"""

__all__ = []
