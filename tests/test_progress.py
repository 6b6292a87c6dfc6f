import io

from rich.console import Console

from gpurank.engine import Engine
from gpurank.engine.progress import TerminalProgress
from tables import config_table


def test_terminal_progress_shows_each_step_with_rows_per_second():
    buf = io.StringIO()
    progress = TerminalProgress(Console(file=buf, force_terminal=True, width=120))
    try:
        Engine(backend="cpu", progress=progress).analyze(config_table(60), n_estimators=5)
    finally:
        progress.close()
    text = buf.getvalue()
    for step in ("load", "derive", "importance", "cluster", "rank"):
        assert step in text
    assert "60 rows" in text and "rows/s" in text


def test_library_calls_print_nothing(capsys):
    Engine(backend="cpu").analyze(config_table(30), n_estimators=5)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
