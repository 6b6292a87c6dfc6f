"""The wheel holds every package and data file of the checkout.

CI installs gpurank from a clean clone without ``-e``: a folder that ``pyproject.toml`` does
not list is missing there even though every test passes on an editable install.
"""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folder(package):
    """The checkout folder of an installed package name (through ``package-dir``)."""
    for prefix, folder in sorted(CONFIG["package-dir"].items(), key=lambda kv: -len(kv[0])):
        if package == prefix or package.startswith(prefix + "."):
            rest = package[len(prefix):].lstrip(".")
            return ROOT / folder / Path(*rest.split(".")) if rest else ROOT / folder
    raise AssertionError(f"{package} is under no package-dir entry")


def _packages_on_disk():
    found = set()
    for prefix, folder in CONFIG["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join((prefix, *rel.parts)) if rel.parts else prefix)
    return found


def test_every_package_folder_is_listed():
    assert _packages_on_disk() - set(CONFIG["packages"]) == set()


def test_every_listed_package_exists():
    for package in CONFIG["packages"]:
        assert _folder(package).is_dir(), package


def test_every_data_file_is_shipped():
    data = CONFIG["package-data"]
    missing = []
    for package in CONFIG["packages"]:
        folder = _folder(package)
        subpackages = {_folder(p) for p in CONFIG["packages"]} - {folder}
        for f in folder.rglob("*"):
            if (not f.is_file() or f.suffix in {".py", ".pyc"} or "__pycache__" in f.parts
                    or any(s in f.parents for s in subpackages)):
                continue
            rel = f.relative_to(folder).as_posix()
            if not any(fnmatch.fnmatch(rel, g) for g in data.get(package, [])):
                missing.append(f"{package}: {rel}")
    assert missing == []
