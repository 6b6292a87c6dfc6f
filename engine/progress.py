"""Progress of long steps on a terminal: one line per step with its rows and rows/s.

The engine reports each step through a :class:`StepProgress`; the default one is silent, so
library calls and piped output print nothing. The CLI uses :class:`TerminalProgress` only when
stderr is a terminal and neither ``--quiet`` nor ``--json`` was given.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

__all__ = ["StepProgress", "TerminalProgress", "SILENT"]


class StepProgress:
    """Silent progress: the interface every reporter implements."""

    @contextmanager
    def step(self, name: str, rows: int | None = None):
        """Report a step of ``rows`` rows while the ``with`` block runs."""
        yield

    def close(self) -> None:
        """Release the terminal."""


SILENT = StepProgress()


class TerminalProgress(StepProgress):
    """Rich progress bars on stderr: a spinner while a step runs, then its rows/s."""

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._console = console or Console(stderr=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<12}"),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[rows]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[rate]}"),
            console=self._console,
            transient=False,
        )
        self._progress.start()

    @contextmanager
    def step(self, name, rows=None):
        shown = f"{rows:,} rows" if rows is not None else ""
        task = self._progress.add_task(name, total=1, rows=shown, rate="")
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            rate = f"{rows / dt:,.0f} rows/s" if rows and dt > 0 else ""
            self._progress.update(task, completed=1, rate=rate)

    def close(self):
        self._progress.stop()
