"""Sources are cited by title, and pointers into the model reference lead somewhere.

Code, scenarios and docs name the papers a reader knows (Devkota 2010, the ODCTCP thesis,
Bai et al. 2016, Atikoglu & Prabhakar, RFCs) and point at ``docs/models.md`` for the models;
they never cite a file that is not in the repository, an internal numbering of the sources or
a tracker's issue numbers. Every pointer into ``docs/models.md`` (by section number or by
anchor) names a section that exists. Plain text scan, no extension needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .conftest import REPO

MODELS_DOC = REPO / "docs" / "models.md"
SCANNED = ("crates", "python", "scenarios", "docs", "README.md", "benches", "scripts", "tests")
SKIP_DIRS = {"target", "__pycache__", ".pytest_cache", "node_modules"}
# Files exempt from the scan (none: docs/performance.md, once a measurement log, is scanned too).
NOT_YET: set[str] = set()
THIS_FILE = Path(__file__).resolve()  # its patterns would match themselves
TEXT_SUFFIXES = {".rs", ".py", ".pyi", ".toml", ".md", ".txt", ".json", ".sh", ".tcl", ".html",
                 ".css", ".js", ".yml", ".yaml", ".cfg", ".in", ""}

FORBIDDEN = [
    (re.compile(r"MODELS\.md"), "a file outside the repository (cite docs/models.md)"),
    (re.compile(r"seed[ -]00\d", re.IGNORECASE),
     "internal source numbering (cite the source: Devkota 2010, the ODCTCP thesis, "
     "Bai et al. 2016, Atikoglu & Prabhakar)"),
    (re.compile(r"\.\./shared"), "a folder outside the repository"),
    (re.compile(r"\bissue \d+|\(issue", re.IGNORECASE),
     "an issue number (say what, not which ticket)"),
    (re.compile(r"\b\d+(?:st|nd|rd|th) session|\b(?:this|last|previous|next|earlier|later) "
                r"session\b", re.IGNORECASE),
     "work history (git keeps it; say what was measured on which commit)"),
    (re.compile(r"\[(?:seams|docs|tcn-fidelity|tcp-fidelity|rdma|hpcc|robust|multiqueue)\]"),
     "a tracker's tag (say what the change was)"),
]

# `docs/models.md §5.6`, `docs/models.md` §1.1–1.2, `docs/models.md#schedulers`, and in the
# docs themselves relative links `models.md#schedulers`.
SECTION_REF = re.compile(r"docs/models\.md`?\s*§\s*(\d+(?:\.\d+)?)(?:\s*[–-]\s*(\d+(?:\.\d+)?))?")
ANCHOR_REF = re.compile(r"(?:docs/)?models\.md#([A-Za-z0-9_-]+)")
HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)?)\.? ")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _files() -> Iterator[Path]:
    seen: set[Path] = set()
    for name in SCANNED:
        top = REPO / name
        paths = [top] if top.is_file() else sorted(top.rglob("*"))
        for p in paths:
            if not p.is_file() or SKIP_DIRS & set(p.relative_to(REPO).parts):
                continue
            if p.suffix not in TEXT_SUFFIXES:
                continue
            real = p.resolve()  # scenarios/ is a link to python/dcnsim/scenarios
            if real in seen:
                continue
            seen.add(real)
            yield p


def _lines(p: Path) -> Iterator[tuple[int, str]]:
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return
    yield from enumerate(text.splitlines(), 1)


def _sections() -> tuple[set[str], set[str]]:
    numbers: set[str] = set()
    anchors: set[str] = set()
    for line in MODELS_DOC.read_text(encoding="utf-8").splitlines():
        if m := HEADING.match(line):
            numbers.add(m.group(1))
        anchors.update(ANCHOR.findall(line))
    return numbers, anchors


def test_files_are_scanned() -> None:
    files = {p.relative_to(REPO).as_posix() for p in _files()}
    assert "docs/models.md" in files and "README.md" in files
    assert any(f.startswith("crates/dcnsim/src/model/") for f in files)
    assert any(f.endswith(".toml") and "scenarios" in f for f in files)


def test_no_internal_names_or_outside_files() -> None:
    bad = []
    for p in _files():
        if p.relative_to(REPO).as_posix() in NOT_YET or p.resolve() == THIS_FILE:
            continue
        for n, line in _lines(p):
            for rx, why in FORBIDDEN:
                if rx.search(line):
                    bad.append(f"{p.relative_to(REPO)}:{n}: {why}: {line.strip()[:120]}")
    assert not bad, "\n".join(bad)


def test_model_reference_pointers_exist() -> None:
    numbers, anchors = _sections()
    assert {"1", "1.2", "3.5", "5.6", "6.1", "7"} <= numbers, numbers
    assert {"qcn", "dctcp", "odctcp", "schedulers", "knobs"} <= anchors, anchors
    bad = []
    for p in _files():
        if p.resolve() == THIS_FILE:
            continue
        for n, line in _lines(p):
            for m in SECTION_REF.finditer(line):
                for num in filter(None, m.groups()):
                    if num not in numbers:
                        bad.append(f"{p.relative_to(REPO)}:{n}: no §{num} in docs/models.md")
            for m in ANCHOR_REF.finditer(line):
                if m.group(1) not in anchors:
                    bad.append(f"{p.relative_to(REPO)}:{n}: no #{m.group(1)} in docs/models.md")
    assert not bad, "\n".join(bad)


def test_model_reference_internal_links_exist() -> None:
    _, anchors = _sections()
    links = re.findall(r"\]\(#([A-Za-z0-9_-]+)\)", MODELS_DOC.read_text(encoding="utf-8"))
    assert links
    missing = sorted(set(links) - anchors)
    assert not missing, missing


def test_every_section_has_a_stable_anchor() -> None:
    """Each numbered heading follows an explicit anchor, so a link survives a retitling."""
    lines = MODELS_DOC.read_text(encoding="utf-8").splitlines()
    bare = [line for i, line in enumerate(lines)
            if HEADING.match(line) and not (i and ANCHOR.match(lines[i - 1]))]
    assert not bare, bare
