"""The facts floor: what both the MLPerf reader and the performance model read.

Nothing here imports the other wings (:mod:`..mlperf`, :mod:`..model`, :mod:`..sweep`);
they all import it (``tests/test_import_graph.py`` holds the rule).

=================  ==========================================================================
``catalog``        the shipped fact tables: accelerators, interconnects, host CPUs, prices,
                   ResNet-50's epochs against batch; a user's merged over them
``accelerators``   one resolver from an accelerator's name to its catalog row
``hardware``       the number formats (``PRECISIONS``) and the hardware facts the model
                   reads, per row
``mlperf_rules``   each benchmark's scoring rule, reference convergence and log units;
                   ``round_ordinal``, ``benchmark_info``
``benchmarks``     the benchmark-to-workload table (``workloads.csv``'s names)
``formats``        the training formats' names; what each round's submissions stated
``power``          a part's power headroom: its watts per peak FLOP/s against its family's
``network_text``   a node's network from a description's words: its compute links' count
                   and rate, and the links it gives by rate alone
``regular_files``  reading files of a tree someone else made (size limits, no links)
``offers``         offers from price catalogs (SkyPilot vms.csv, gpurank's offers CSV): one
                   row per instance and price with its regions; what was left out, counted
=================  ==========================================================================
"""

__all__ = []
