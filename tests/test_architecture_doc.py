"""docs/architecture.md names every room of the engine and the kernels, and only rooms that
exist; published works are cited by key and listed once, in docs/references.md."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()
REFERENCES = (ROOT / "docs" / "references.md").read_text()
SOURCES = sorted(p for folder in ("engine", "kernels") for p in (ROOT / folder).rglob("*.py"))


def _named(path):
    rel = path.relative_to(ROOT).as_posix()
    if path.name == "__init__.py" and f"`{path.parent.relative_to(ROOT).as_posix()}/`" in \
            ARCHITECTURE:
        return True
    return f"`{rel}`" in ARCHITECTURE


def test_every_module_and_package_has_a_line():
    missing = [p.relative_to(ROOT).as_posix() for p in SOURCES if not _named(p)]
    assert missing == []


def test_every_room_named_exists():
    named = re.findall(r"`((?:engine|kernels)/[A-Za-z0-9_/]*(?:\.py|/))`", ARCHITECTURE)
    assert len(named) > 100
    assert [n for n in named if not (ROOT / n).exists()] == []


def test_the_sources_section_walks_both_paths():
    section = ARCHITECTURE.split("## Sources", 1)[1].split("\n## ", 1)[0]
    assert "**From an MLPerf folder to a model**" in section
    assert "**From a model to a sweep**" in section
    for name in ("read_mlperf", "calibrate(", "simulate_to_parquet", "iter_chunks"):
        assert name in section, name


KEYS = re.findall(r"^- \*\*\[([A-Za-z0-9]+)\]\*\*", REFERENCES, flags=re.M)
#: What a full citation written out in code looks like (a journal, a proceedings, "et al.").
WRITTEN_OUT = re.compile(r"\*(?:Communications|Journal|IEEE|European|Proceedings|Software)\b"
                         r"|\bet al\.|\b[A-Z][a-z]+ & [A-Z][a-z]+,? (?:19|20)\d\d")


def _cited_keys(text):
    return set(re.findall(r"\[([A-Za-z0-9]+)\]", text)) & set(KEYS)


def test_every_reference_is_cited_and_every_citation_is_listed():
    assert len(KEYS) == len(set(KEYS)) >= 10
    code = "\n".join(p.read_text() for p in SOURCES)
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md")
                     if p.name != "references.md")
    assert set(KEYS) - _cited_keys(code + docs) == set(), "a reference nobody cites"
    year_keys = set(re.findall(r"\[([A-Z][A-Za-z]+(?:19|20)\d\d)\]", code))
    assert year_keys - set(KEYS) == set(), "a key docs/references.md does not list"


def test_no_citation_is_written_out_in_the_code():
    hits = [(p.relative_to(ROOT).as_posix(), m.group(0)) for p in SOURCES
            for m in WRITTEN_OUT.finditer(p.read_text())]
    assert hits == []


RECIPES = ("Adding an accelerator", "Adding a workload", "Adding a ranking method",
           "Adding a data source")


def _recipe_files(title, name=None):
    """The files the recipe ``title`` lists (its items' backticked paths), ``<...>``
    replaced by ``name``; without a name, only the paths without a placeholder."""
    section = ARCHITECTURE.split(f"### {title}\n", 1)[1].split("\n#", 1)[0]
    items = re.findall(r"^- (.*(?:\n  .*)*)", section, flags=re.M)
    paths = [p for item in items for p in re.findall(r"`([A-Za-z0-9_.<>/-]+\.[a-z]+)`",
                                                      item.split(":", 1)[0] if "`:" in item
                                                      else item)]
    if name is None:
        return [p for p in paths if "<" not in p]
    return [re.sub(r"<[a-z]+>", name, p) for p in paths]


def test_every_recipe_lists_files_that_exist():
    for title in RECIPES:
        files = _recipe_files(title)
        assert len(files) >= 3, title
        assert [f for f in files if not (ROOT / f).exists()] == [], title


def test_the_ranking_method_recipe_lists_exactly_the_files_that_name_vikor():
    """VIKOR was added through the recipe: the files that name it are the recipe's list."""
    listed = set(_recipe_files("Adding a ranking method", "vikor"))
    assert [f for f in sorted(listed) if not (ROOT / f).exists()] == []
    this = pathlib.Path(__file__).resolve()
    naming = {p.relative_to(ROOT).as_posix()
              for folder in ("engine", "kernels", "tests", "docs", "benchmarks")
              for p in (ROOT / folder).rglob("*") if p.is_file() and p.resolve() != this
              and "__pycache__" not in p.parts and p.suffix in (".py", ".md", ".js", ".csv")
              and "vikor" in p.read_text(errors="replace").lower()}
    naming |= {p.name for p in ROOT.glob("*.md")  # README.md, DEVELOPERS.md
               if "vikor" in p.read_text(errors="replace").lower()}
    assert naming == listed
