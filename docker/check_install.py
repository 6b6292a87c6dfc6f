"""Check gpurank's own install: its requirements are met, and it imports.

    python docker/check_install.py

Run in the image after ``pip install --no-deps .``. An environment-wide ``pip check`` is the
wrong test there: the RAPIDS image's conda packages declare pip requirements that their conda
build satisfies otherwise (RAPIDS' own recipes turn ``pip_check`` off), so it fails for
reasons that are not gpurank's. This checks only the requirements gpurank declares (extras
left out) against what is installed, and imports gpurank's packages. Exit status 1, with one
line per problem, when anything is wrong.
"""

from __future__ import annotations

import importlib
import sys
from importlib import metadata

#: What must import once gpurank is installed (the CUDA kernels import without a GPU).
MODULES = ("gpurank.engine", "gpurank.engine.cli", "gpurank.kernels.cpu",
           "gpurank.kernels.cuda")


def unmet(requirements, version_of) -> list[str]:
    """The requirements (PEP 508 strings) that ``version_of(name)`` (the installed version,
    or None) does not satisfy, as messages; requirements of extras and of other platforms
    are left out."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    out = []
    for raw in requirements:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        have = version_of(req.name)
        if have is None:
            out.append(f"gpurank requires {req}, which is not installed")
        elif req.specifier and not req.specifier.contains(Version(have), prereleases=True):
            out.append(f"gpurank requires {req}; the environment has {req.name} {have}")
    return out


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main() -> int:
    try:
        requirements = metadata.requires("gpurank") or []
    except metadata.PackageNotFoundError:
        print("gpurank is not installed")
        return 1
    problems = unmet(requirements, _version)
    for mod in MODULES:
        try:
            importlib.import_module(mod)
        except Exception as exc:  # noqa: BLE001 - any failure to import is a broken install
            problems.append(f"import {mod} failed: {type(exc).__name__}: {exc}")
    for p in problems:
        print(p)
    if not problems:
        print(f"gpurank {_version('gpurank')}: {len(requirements)} requirements met, "
              f"{len(MODULES)} modules import")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
