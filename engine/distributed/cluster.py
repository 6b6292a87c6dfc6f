"""Starting or reaching a Dask cluster, with every wait bounded.

``local`` is a ``LocalCluster`` of single-threaded worker processes on this machine,
``local:N`` the same with N workers, ``tcp://HOST:PORT`` an existing scheduler. Only plain
``tcp://`` is accepted: a TLS or UCX scheduler needs a security or transport configuration
that gpurank does not take on the command line.
"""

from __future__ import annotations

import logging
import os
import re

from ..errors import BackendUnavailableError, GpurankError
from ..params import ParamError

__all__ = ["start_dask", "check_dask_available", "DistributedError", "MAX_LOCAL_WORKERS",
           "CONNECT_TIMEOUT_S", "WORKERS_TIMEOUT_S"]

#: A local cluster of more worker processes than this is a typo, not a machine.
MAX_LOCAL_WORKERS = 1024
#: Seconds to wait for a scheduler to answer, and for a local cluster's workers to start.
CONNECT_TIMEOUT_S = 10
WORKERS_TIMEOUT_S = 120


class DistributedError(GpurankError, RuntimeError):
    """The Dask run failed (a worker died too often, the scheduler went away); exit code 1."""

    exit_code = 1


def check_dask_available() -> None:
    """Raise :class:`BackendUnavailableError` (exit 4) naming the extra to install when
    dask or distributed cannot be imported."""
    missing = []
    for mod in ("dask.dataframe", "distributed"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod.split(".")[0])
    if missing:
        raise BackendUnavailableError(
            f"--dask needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            "not installed; install the extra: pip install 'gpurank[dask]'")


_TCP = re.compile(r"^tcp://(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")


def start_dask(spec: str, *, backend_name: str = "cpu"):
    """Start or connect to a Dask cluster and return a ``distributed.Client``.

    Parameters
    ----------
    spec : str
        ``"local"`` (one single-threaded worker process per core), ``"local:N"`` (N worker
        processes, 1 <= N <= 1024) or ``"tcp://HOST:PORT"`` (an existing scheduler whose
        workers have gpurank installed).
    backend_name : {"cpu"}
        Workers run the CPU kernels (see ``docs/distributed.md`` for the GPU).

    Raises
    ------
    ParamError
        A malformed spec (parameter ``dask``).
    BackendUnavailableError
        dask or distributed is not installed.
    DistributedError
        The scheduler does not answer within ``CONNECT_TIMEOUT_S`` seconds, or the local
        workers do not start within ``WORKERS_TIMEOUT_S``.
    """
    text = spec.strip() if isinstance(spec, str) else None
    if not text:
        raise ParamError("dask", f"must be 'local', 'local:N' or 'tcp://HOST:PORT'; got {spec!r}")
    if "://" in text:
        m = _TCP.match(text)
        if not m or not 0 < int(m["port"]) < 65536:
            raise ParamError("dask", "must be 'local', 'local:N' or 'tcp://HOST:PORT' (plain "
                             f"TCP; TLS and UCX schedulers are not supported); got {spec!r}")
        check_dask_available()
        from distributed import Client

        try:
            return Client(text, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as exc:
            raise DistributedError(f"cannot reach the Dask scheduler at {text} within "
                                   f"{CONNECT_TIMEOUT_S} s: {exc}") from None
    name, sep, count = text.partition(":")
    n_ok = count.isdigit() and 1 <= int(count) <= MAX_LOCAL_WORKERS
    if name != "local" or (sep and not n_ok):
        raise ParamError("dask", f"must be 'local', 'local:N' (1 <= N <= {MAX_LOCAL_WORKERS} "
                         f"worker processes) or 'tcp://HOST:PORT'; got {spec!r}")
    check_dask_available()
    n = int(count) if sep else (os.cpu_count() or 1)
    from distributed import Client, LocalCluster

    # The cluster's own log lines (a nanny's "still alive, killing", a worker's heartbeat
    # failing while the cluster shuts down after an error) are not messages to the user: a
    # failure reaches the client and is reported there, in one line.
    cluster = LocalCluster(n_workers=n, processes=True, threads_per_worker=1,
                           dashboard_address=None, host="127.0.0.1",
                           silence_logs=logging.CRITICAL)
    client = Client(cluster)
    try:
        client.wait_for_workers(n, timeout=WORKERS_TIMEOUT_S)
    except (TimeoutError, OSError) as exc:
        client.close()
        cluster.close()
        raise DistributedError(f"the local Dask cluster's {n} workers did not start within "
                               f"{WORKERS_TIMEOUT_S} s: {exc}") from None
    return client
