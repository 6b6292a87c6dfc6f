"""Where the docstring examples are: the modules of a source folder whose text holds ``>>>``
(``tests/test_docstrings.py`` runs the engine's, ``tests/kernels/test_doctests.py`` the
kernels')."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def modules_with_examples(folder: str) -> list[str]:
    """The dotted names of the modules under ``folder`` (``engine`` or ``kernels``) whose
    source holds a ``>>>`` example."""
    names = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(["gpurank", *parts]))
    return names
