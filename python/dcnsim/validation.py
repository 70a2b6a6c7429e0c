"""The verdicts of ``docs/validation.md``: for every catalog id, whether dcnsim reproduces
the source, in the docs' own words and as one of a few categories, with a short excerpt of
the reason and the anchor of the section that gives it.

The docs state a verdict in three forms, all read here:

- a heading ``### `id` — title — status`` (several ids: ```a` / `-b` `` or ```a` … `-c` ``);
- a row of a table whose header has an ``id`` and a ``verdict`` column;
- a bullet ``- `id` (source: …) — status: reason``.

A heading wins over a table row, a row over a bullet. Ids under a ``### Not yet`` heading
that have no other entry are "not yet". The file is looked for beside the source tree
(``docs/validation.md`` of the checkout this package is loaded from) and in the working
directory; without it every id is "no verdict".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from .provenance import PACKAGE_DIR

VALIDATION_DOC = Path("docs") / "validation.md"

REPRODUCED = "reproduced"
PARTIAL = "partial"
DIRECTION = "direction only"
DIFFERS = "differs"
NOT_YET = "not yet"
UNRATED = "no verdict"
VERDICTS = (REPRODUCED, PARTIAL, DIRECTION, DIFFERS, NOT_YET, UNRATED)

EXCERPT_MAX = 420
DASH = " — "

_TICKED = re.compile(r"`([^`]+)`")
_IDS = re.compile(r"^((?:`[^`\s]+`\s*(?:,|/|…|\.\.\.|and)?\s*)+)")
_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RANK = {"heading": 0, "table": 1, "bullet": 2, "not-yet": 3}


@dataclass(frozen=True)
class Entry:
    """What the docs say of one id."""

    verdict: str  # one of VERDICTS
    status: str  # the docs' own words, e.g. "reproduced, partial disagreement"
    heading: str  # the heading of the section that says it (markdown removed)
    anchor: str  # that heading's anchor in docs/validation.md (GitHub's spelling)
    excerpt: str  # a short reason: the section's first words on (dis)agreement, or the row
    form: str = "heading"  # heading | table | bullet | not-yet


def classify(status: str) -> str:
    """The category of a status in the docs' words (see ``VERDICTS``): its first clause
    decides; a first clause of no category falls back on the whole status, where words of
    agreement and of disagreement together make it partial."""
    text = re.split(r"\s\(", plain(status).lower(), maxsplit=1)[0].strip()
    first = _category(re.split(r";|:", text, maxsplit=1)[0].strip())
    if first != UNRATED:
        return first
    agrees = re.search(r"as reported|\bagrees?\b|\breproduced\b", text)
    differs = re.search(r"disagree|differ|unlike", text)
    if agrees and differs:
        return PARTIAL
    return DIFFERS if differs else UNRATED


def _category(text: str) -> str:
    text = re.sub(r"^(both|all|every \w+)\s+", "", text)
    text = re.sub(r"\s+at (full|quick) scale\b", "", text)
    if "not yet" in text:
        return NOT_YET
    if re.search(r"\bnot reproduced\b|\bnot\b.*\breproduced\b", text):
        return DIFFERS
    if text.startswith("reproduced"):
        rest = text[len("reproduced"):]
        if re.search(r"partial|disagree|differ|\bexcept\b|^\s+(at|for)\b", rest):
            return PARTIAL
        return REPRODUCED
    if text.startswith("partial"):
        return PARTIAL
    if "direction" in text:
        return DIRECTION
    if re.search(r"disagree|differ|unlike", text):
        return DIFFERS
    return UNRATED


def plain(text: str) -> str:
    """Markdown inline text as plain text: no backticks, emphasis or link targets."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").replace("**", "").replace("__", "")
    return re.sub(r"\s+", " ", text).strip()


def anchor(heading: str, seen: dict[str, int] | None = None) -> str:
    """The anchor GitHub gives a heading (lower case, punctuation dropped, spaces to
    hyphens; ``-1``, ``-2``... for repeats when ``seen`` counts them)."""
    slug = re.sub(r"[^\w\- ]", "", plain(heading).lower()).replace(" ", "-")
    if seen is None:
        return slug
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def expand_ids(text: str, known: Collection[str] | None = None) -> list[str]:
    """The ids named by a list such as ```tcn-fig6` / `-fig7` `` or
    ```devkota-fig29` … `-fig33` ``: a name starting with ``-`` takes the family (the part
    before the first ``-``) of the first name; ``…`` spans the numbers between its ends.
    With ``known``, only those ids are kept."""
    names: list[str] = []
    family = ""
    span = False
    for token in re.findall(r"`([^`]+)`|(…|\.\.\.)", text):
        name, ellipsis = token
        if ellipsis:
            span = True
            continue
        name = name.strip()
        if name.startswith("-") and family:
            name = family + name
        elif not family:
            family = name.split("-")[0]
        if span and names:
            names.extend(_span(names[-1], name))
        names.append(name)
        span = False
    unique = list(dict.fromkeys(names))
    return [n for n in unique if known is None or n in known]


def _span(first: str, last: str) -> list[str]:
    """The names strictly between ``first`` and ``last`` when they differ only in a
    trailing number (kept at the width of ``first``'s)."""
    a, b = _TRAILING_NUMBER.match(first), _TRAILING_NUMBER.match(last)
    if not a or not b or a.group(1) != b.group(1):
        return []
    width = len(a.group(2))
    return [f"{a.group(1)}{i:0{width}d}" for i in range(int(a.group(2)) + 1, int(b.group(2)))]


def _shorten(text: str, limit: int = EXCERPT_MAX) -> str:
    text = plain(text)
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + " …"


@dataclass
class _Section:
    level: int
    heading: str
    anchor: str
    lines: list[str]


def _sections(text: str) -> Iterator[_Section]:
    """The document cut at every heading (outside code fences)."""
    seen: dict[str, int] = {}
    current = _Section(0, "", "", [])
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            yield current
            heading = match.group(2)
            current = _Section(len(match.group(1)), heading, anchor(heading, seen), [])
        else:
            current.lines.append(line)
    yield current


def _paragraphs(lines: list[str]) -> list[str]:
    """Prose paragraphs and bullets of a section (tables, images and code left out)."""
    out: list[str] = []
    block: list[str] = []
    fenced = False

    def flush() -> None:
        if block:
            out.append(" ".join(s.strip() for s in block))
            block.clear()

    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            flush()
            continue
        if fenced or stripped.startswith("|") or stripped.startswith("!["):
            flush()
            continue
        if not stripped:
            flush()
        elif re.match(r"^([-*]|\d+\.)\s", stripped):
            flush()
            block.append(stripped)
        else:
            block.append(stripped)
    flush()
    return out


_AGREE = re.compile(r"\b(dis)?agrees\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]\)?\s+(?=[A-Z(\"“])")
_ABBREVIATIONS = ("fig", "figs", "e.g", "i.e", "vs", "ch", "app", "eq", "sec", "no", "cf")


def _sentences(para: str) -> list[str]:
    """A paragraph cut into sentences (not after abbreviations such as "Fig.")."""
    out, start = [], 0
    for match in _SENTENCE_END.finditer(para):
        word = re.findall(r"[\w.]+$", para[start:match.start()])
        if word and word[0].lower() in _ABBREVIATIONS:
            continue
        out.append(para[start:match.end()].strip())
        start = match.end()
    out.append(para[start:].strip())
    return [s for s in out if s]


def _reason(lines: list[str]) -> str:
    """What the section says on agreement and on disagreement (from the first sentence
    that says each to the next that says the other), else its first paragraph."""
    paragraphs = [re.sub(r"^([-*]|\d+\.)\s+", "", p) for p in _paragraphs(lines)]
    picked: dict[bool, str] = {}
    for para in paragraphs:
        sentences = _sentences(para)
        polarity = [_polarity(s) for s in sentences]
        for i, side in enumerate(polarity):
            if side is None or side in picked:
                continue
            end = next((j for j in range(i + 1, len(sentences))
                        if polarity[j] is not None and polarity[j] != side), len(sentences))
            picked[side] = " ".join(sentences[i:end])
    if not picked:
        return _shorten(paragraphs[0]) if paragraphs else ""
    if len(picked) == 1:
        return _shorten(next(iter(picked.values())))
    half = EXCERPT_MAX // 2
    return f"{_shorten(picked[False], half)} {_shorten(picked[True], half)}"


def _polarity(sentence: str) -> bool | None:
    """True: the sentence says dcnsim disagrees; False: agrees; None: neither."""
    match = _AGREE.search(sentence)
    return None if match is None else match.group(1) is not None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table_entries(sec: _Section, known: Collection[str] | None
                   ) -> Iterator[tuple[str, Entry]]:
    """Rows of the section's tables that have an ``id`` and a ``verdict`` column."""
    header: list[str] | None = None
    for line in sec.lines:
        stripped = line.strip()
        if not stripped.startswith("|"):
            header = None
            continue
        cells = _cells(stripped)
        if header is None:
            header = [plain(c).lower() for c in cells]
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        if "id" not in header or "verdict" not in header or len(cells) != len(header):
            continue
        row = dict(zip(header, cells, strict=True))
        status = plain(row["verdict"])
        others = [f"{name}: {plain(row[name])}" for name in header
                  if name not in ("id", "verdict") and row[name]]
        excerpt = _shorten("; ".join([*others, f"verdict: {status}"]))
        for ident in expand_ids(row["id"], known):
            yield ident, Entry(classify(status), _shorten(status, 160), plain(sec.heading),
                               sec.anchor, excerpt, "table")


def _bullet_entries(sec: _Section, known: Collection[str] | None
                    ) -> Iterator[tuple[str, Entry]]:
    """Bullets ``- `id` (...) — status: reason``."""
    for para in _paragraphs(sec.lines):
        if not para.startswith("- `"):
            continue
        body = para[2:]
        ids = _IDS.match(body)
        if not ids:
            continue
        rest = body[ids.end():].lstrip()
        if rest.startswith("("):
            depth = 0
            for i, ch in enumerate(rest):
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth == 0:
                    rest = rest[i + 1:].lstrip()
                    break
        if not rest.startswith(DASH.strip()):
            continue
        said = rest[1:].strip()
        status = re.split(r"[:;.]\s", said + " ", maxsplit=1)[0].strip()
        for ident in expand_ids(ids.group(1), known):
            yield ident, Entry(classify(status), _shorten(status, 160), plain(sec.heading),
                               sec.anchor, _shorten(body), "bullet")


def _heading_entries(sec: _Section, known: Collection[str] | None
                     ) -> Iterator[tuple[str, Entry]]:
    """A heading ``` `id` — title — status``` (no status: "no verdict")."""
    if not sec.heading.startswith("`"):
        return
    parts = sec.heading.split(DASH)
    ids = expand_ids(parts[0], known)
    status = plain(parts[-1]) if len(parts) >= 3 else ""
    verdict = classify(status) if status else UNRATED
    for ident in ids:
        yield ident, Entry(verdict, status, plain(sec.heading), sec.anchor,
                           _reason(sec.lines), "heading")


def _not_yet_entries(sec: _Section, known: Collection[str] | None
                     ) -> Iterator[tuple[str, Entry]]:
    if plain(sec.heading).lower() != "not yet":
        return
    for para in _paragraphs(sec.lines):
        for ident in expand_ids(para, known):
            yield ident, Entry(NOT_YET, "not yet", "Not yet", sec.anchor, _shorten(para),
                               "not-yet")


def parse(text: str, known: Collection[str] | None = None) -> dict[str, Entry]:
    """Every id's entry in the text of ``docs/validation.md`` (only ``known`` ids if given)."""
    found: dict[str, Entry] = {}
    for sec in _sections(text):
        for source in (_heading_entries, _table_entries, _bullet_entries, _not_yet_entries):
            for ident, entry in source(sec, known):
                old = found.get(ident)
                if old is None or _RANK[entry.form] < _RANK[old.form]:
                    found[ident] = entry
    return found


def find_doc() -> Path | None:
    """``docs/validation.md`` of the checkout this package is loaded from, else of the
    working directory, or None."""
    for base in (PACKAGE_DIR.parent.parent, Path.cwd()):
        path = base / VALIDATION_DOC
        if path.is_file():
            return path
    return None


def load(path: Path | None = None, known: Collection[str] | None = None
         ) -> tuple[dict[str, Entry], Path | None]:
    """The entries of ``path`` (default: ``find_doc()``) and the file read (None if none)."""
    path = path if path is not None else find_doc()
    if path is None:
        return {}, None
    return parse(path.read_text(encoding="utf-8"), known), path
