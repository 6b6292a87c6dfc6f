"""Where the shared MLPerf data lives for the tests: ``shared/data`` beside the repository or
beside one of its parent folders (a checkout at ``WORK/main`` and a worktree at
``WORK/wt/NAME`` both find ``WORK/shared``). Tests that need it skip when it is absent."""

from pathlib import Path


def shared_data(*parts: str) -> Path:
    """``<shared>/data/<parts>`` for the nearest ``shared/data`` above the repository, or the
    path beside the repository (which does not exist) when there is none."""
    repo = Path(__file__).resolve().parents[1]
    for folder in (repo, *repo.parents):
        candidate = folder.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate.joinpath(*parts)
    return repo.parent.joinpath("shared", "data", *parts)
