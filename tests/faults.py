"""Kill a gpurank write (or fill its disk) at its k-th step, in a child process.

A *step* is one file-system mutation seen from Python: ``os.rename``/``replace``/``mkdir``/
``unlink``/``rmdir``/``chmod``/``open`` for writing, the atomic exchange of
``gpurank.engine.outputs``, opening a file for writing (``open``, ``io.open``, which
``pathlib`` uses), and the Parquet writers (whose writes happen in C++). At step ``k`` the
child either SIGKILLs itself before the step runs (``mode="kill"``: a crash, a ``kill -9``,
a power cut as far as this process is concerned) or raises ``OSError(ENOSPC)`` from it
(``mode="full"``: a full disk). With ``k = 0`` it runs to the end and reports how many steps
there were.

Two ways to run the child:

- :func:`in_forked_child` forks the test process: the child inherits an analysis done once
  in the parent, so a kill at every step of a write costs one fork each;
- :func:`run_cli_with_fault` runs ``gpurank ARGS`` in a fresh interpreter (whole commands).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

INSTALL = r'''
import builtins, errno, io, os, signal
state = {"n": 0}
_real_open = io.open

def install(at, mode):
    def step():
        state["n"] += 1
        if state["n"] == at:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise OSError(errno.ENOSPC, "No space left on device (injected)")

    def wrap(owner, name):
        real = getattr(owner, name)
        def f(*a, **k):
            step()
            return real(*a, **k)
        setattr(owner, name, f)

    for name in ("rename", "replace", "mkdir", "unlink", "remove", "rmdir", "chmod"):
        wrap(os, name)
    real_os_open = os.open
    def os_open(path, flags, *a, **k):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            step()
        return real_os_open(path, flags, *a, **k)
    os.open = os_open
    def opener(file, mode="r", *a, **k):
        if any(c in mode for c in "wax+"):
            step()
        return _real_open(file, mode, *a, **k)
    builtins.open = io.open = opener
    import pyarrow.parquet as pq
    wrap(pq, "write_table")
    for name in ("__init__", "write_table", "close"):
        wrap(pq.ParquetWriter, name)
    import gpurank.engine.outputs as outputs
    wrap(outputs, "_exchange")
'''

CLI = INSTALL + r'''
import json, sys
install(int(sys.argv[1]), sys.argv[2])
from gpurank.engine.cli import main
try:
    code = main(sys.argv[4:])
finally:
    with _real_open(sys.argv[3], "w") as fh:
        fh.write(json.dumps({"steps": state["n"]}))
sys.exit(code)
'''


def in_forked_child(fn, at, mode="kill", *, timeout=120):
    """Run ``fn()`` in a forked child with the faults installed.

    Returns
    -------
    (killed, steps, exit_code) : whether the child was killed at step ``at``; the steps it
    counted (None when killed); its exit code (0 ok, 3 an OSError such as the injected full
    disk, 4 any other exception; None when killed).
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        code = 0
        try:
            ns = {}
            exec(compile(INSTALL, "<faults>", "exec"), ns)
            ns["install"](at, mode)
            try:
                fn()
            except OSError:
                code = 3
            except BaseException:  # noqa: BLE001 - anything else is a failure of the child
                code = 4
            os.write(write_end, str(ns["state"]["n"]).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError("the forked child did not finish")
        time.sleep(0.005)
    with os.fdopen(read_end) as fh:
        text = fh.read()
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    code = None if killed else os.WEXITSTATUS(status)
    return killed, (int(text) if text else None), code


def run_cli_with_fault(argv, at, mode="kill", *, cwd, timeout=300):
    """Run ``gpurank argv`` in a fresh interpreter with the faults installed.

    Returns (returncode, steps counted or None when killed, stderr).
    """
    count = Path(cwd) / f".steps-{os.getpid()}.json"
    count.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-c", CLI, str(at), mode, str(count), *argv],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    steps = json.loads(count.read_text())["steps"] if count.exists() else None
    count.unlink(missing_ok=True)
    return proc.returncode, steps, proc.stderr
