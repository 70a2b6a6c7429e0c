"""Every relative link of README.md and docs/*.md points at a file of the repository, and every
`#anchor` at a heading of its target (GitHub's slug of the heading's text) or at an explicit
HTML anchor (`<a id="...">`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
# [text](target) or [text](target "title"), the target optionally in <...>; not images' own
# syntax difference, which is the same for this purpose.
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the text outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text in lower case, without punctuation
    other than '-' and '_', spaces turned into '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = text.replace("`", "")
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)  # emphasis markers
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, with GitHub's -1, -2 ... for repeats, and its
    explicit HTML anchors."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        out.update(HTML_ANCHOR.findall(line))
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, target) of every link of a markdown file outside code."""
    for n, line in prose_lines(path.read_text(encoding="utf-8")):
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1)
            continue
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            yield n, m.group(1)


def broken(path: Path) -> Iterator[str]:
    for n, target in links(path):
        if EXTERNAL.match(target):
            continue
        where = f"{path.relative_to(REPO)}:{n}: {target}"
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            yield f"{where}: no such file"
            continue
        if not dest.is_relative_to(REPO):
            yield f"{where}: outside the repository"
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            yield f"{where}: no heading with this anchor in {dest.relative_to(REPO)}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(doc: Path) -> None:
    assert list(broken(doc)) == []


def test_the_checker_sees_links_and_anchors(tmp_path: Path) -> None:
    assert slug("Speed gate ([speed] item 6)") == "speed-gate-speed-item-6"
    assert slug("Engine speed (`dcnsim bench`)") == "engine-speed-dcnsim-bench"
    assert slug("The 4 096 senders: a `Port`'s rings") == "the-4-096-senders-a-ports-rings"
    doc = tmp_path / "a.md"
    doc.write_text("# Top\n## Top\n<a id=\"here\"></a>\n```\n# not a heading [x](nowhere.md)\n```\n"
                   "[ok](#top-1) [bad](#nothing) `[code](nowhere.md)` [gone](b.md)\n"
                   "[web](https://example.org/x.md)\n", encoding="utf-8")
    assert anchors(doc) == {"top", "top-1", "here"}
    assert [t for _, t in links(doc)] == ["#top-1", "#nothing", "b.md",
                                          "https://example.org/x.md"]
