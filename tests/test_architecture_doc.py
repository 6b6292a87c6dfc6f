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
