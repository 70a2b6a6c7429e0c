"""The whole-catalog run (``dcnsim reproduce --all``): the verdicts read from
``docs/validation.md``, the HTML page built from a tiny fake output folder, and the command
against the fake engine. The real catalog and Chromium are in ``test_catalog_e2e.py``."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import dcnsim.cli
import pytest
from dcnsim import catalog, validation
from dcnsim.cli import main

from .conftest import REPO, SCENARIOS, FakeCore

Capture = pytest.CaptureFixture[str]
CATALOG = {p.stem for p in SCENARIOS.glob("*.toml")}
NOT_IN_DOCS = {"bench-incast"}  # the engine benchmark, not an experiment of a source

DOC = """\
# Validation

## A. Incast

### `a-fig1` — the first figure — reproduced

Set-up text.

- Agrees: goodput collapses at 8 flows. Disagrees: 9 s silent where the source has 6.

### `a-fig2` / `-fig3` — two at once — reproduced, partial disagreement

Agrees: most cells. Disagrees: the 32 KiB column.

### `a-fig4` … `-fig6` — a span — direction reproduced (fig5 at full scale)

Only a paragraph, no verdict words.

### `a-fig7` — a demo without status

Both hold.

### Modifications

- `a-fig8` (source: much better than fig1, over
  two lines) — partial: better only at 256 KiB.
- `a-fig9` — reproduced: as the source says.
- `a-fig1` — differs: a bullet never overrides a heading.

| id | thesis | dcnsim | verdict |
|---|---|---|---|
| `b-fig1` / `-fig2` | 2 segments | 3.7 segments | direction reproduced; floor 3–4 |
| `b-x` | 1.1× | 0.99× | faster for small flows as reported; equal for large, unlike the thesis |
| `nope` | a | b | reproduced |

### Not yet

- `c-later` needs a model of an open issue.

### `a-fig1` — the first figure — reproduced

A repeated heading gets its own anchor.
"""
KNOWN = {"a-fig1", "a-fig2", "a-fig3", "a-fig4", "a-fig5", "a-fig6", "a-fig7", "a-fig8",
         "a-fig9", "b-fig1", "b-fig2", "b-x", "c-later"}


# --------------------------------------------------------------------- verdicts


def test_parse_headings_groups_tables_bullets() -> None:
    found = validation.parse(DOC, KNOWN)
    assert set(found) == KNOWN  # `nope` is not a known id
    verdicts = {ident: e.verdict for ident, e in found.items()}
    assert verdicts == {
        "a-fig1": "reproduced", "a-fig2": "partial", "a-fig3": "partial",
        "a-fig4": "direction only", "a-fig5": "direction only", "a-fig6": "direction only",
        "a-fig7": "no verdict", "a-fig8": "partial", "a-fig9": "reproduced",
        "b-fig1": "direction only", "b-fig2": "direction only", "b-x": "partial",
        "c-later": "not yet"}
    fig1 = found["a-fig1"]
    assert (fig1.form, fig1.status) == ("heading", "reproduced")
    assert fig1.anchor == "a-fig1--the-first-figure--reproduced"  # the first of the two
    assert fig1.excerpt.startswith("Agrees: goodput collapses") and "Disagrees: 9 s" in fig1.excerpt
    assert found["a-fig5"].status == "direction reproduced (fig5 at full scale)"
    assert found["a-fig4"].excerpt == "Only a paragraph, no verdict words."
    assert found["a-fig8"].form == "bullet" and found["a-fig8"].status == "partial"
    assert found["b-x"].form == "table" and found["b-x"].anchor == "modifications"
    assert "thesis: 1.1×" in found["b-x"].excerpt and "dcnsim: 0.99×" in found["b-x"].excerpt


def test_parse_without_known_ids_keeps_every_name() -> None:
    found = validation.parse(DOC)
    assert "nope" in found and found["nope"].verdict == "reproduced"


@pytest.mark.parametrize(("status", "verdict"), [
    ("reproduced", "reproduced"),
    ("reproduced (all 7 columns in one reproduction)", "reproduced"),
    ("both reproduced at full scale", "reproduced"),
    ("reproduced in direction and size of the effect (≈ 4× smaller window)", "reproduced"),
    ("reproduced, partial disagreement", "partial"),
    ("reproduced, partial", "partial"),
    ("reproduced for buffers ≥ 64 KiB, disagreement at 32 KiB", "partial"),
    ("reproduced at 64–256 KiB", "partial"),
    ("partial", "partial"),
    ("direction reproduced (fig6 and fig8 at full scale)", "direction only"),
    ("SRTT direction and ratio reproduced; transfer-time direction **not**", "direction only"),
    ("run, disagree like baseline 1", "differs"),
    ("runs, disagrees", "differs"),
    ("not reproduced", "differs"),
    ("not yet (the model it needs is named)", "not yet"),
    ("both run at full scale", "no verdict"),
    ("", "no verdict"),
])
def test_classify(status: str, verdict: str) -> None:
    assert validation.classify(status) == verdict


def test_expand_ids() -> None:
    assert validation.expand_ids("`tcn-fig6` / `-fig7` / `-fig8`") == [
        "tcn-fig6", "tcn-fig7", "tcn-fig8"]
    assert validation.expand_ids("`devkota-fig08` … `-fig10`") == [
        "devkota-fig08", "devkota-fig09", "devkota-fig10"]
    assert validation.expand_ids("`odctcp-fig4-1` … `-fig4-3`") == [
        "odctcp-fig4-1", "odctcp-fig4-2", "odctcp-fig4-3"]
    assert validation.expand_ids("`x-fig1` … `-fig5`", known={"x-fig1", "x-fig5"}) == [
        "x-fig1", "x-fig5"]


def test_anchor_spelling() -> None:
    seen: dict[str, int] = {}
    heading = "`devkota-fig08` — NewReno incast, min RTO 200 ms — reproduced"
    assert validation.anchor(heading, seen) == \
        "devkota-fig08--newreno-incast-min-rto-200-ms--reproduced"
    assert validation.anchor(heading, seen).endswith("--reproduced-1")


def test_the_real_docs_rate_every_catalog_id() -> None:
    entries, path = validation.load(REPO / "docs" / "validation.md", known=CATALOG)
    assert path is not None
    assert set(entries) == CATALOG - NOT_IN_DOCS, "ids without an entry in validation.md"
    assert entries["devkota-fig08"].verdict == "reproduced"
    assert entries["qcn-baseline1"].verdict == "differs"
    assert entries["tcn-fig6"].verdict == "direction only"
    assert entries["odctcp-fig4-2"].form == "table"
    doc_anchors = {validation.anchor(m) for m in re.findall(
        r"^#+ (.*)$", (REPO / "docs" / "validation.md").read_text(encoding="utf-8"), re.M)}
    for entry in entries.values():
        assert entry.anchor in doc_anchors
        assert entry.excerpt and len(entry.excerpt) <= validation.EXCERPT_MAX


# --------------------------------------------------------------------- the page


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A valid RGB PNG of the given size (stdlib only)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + bytes([200, 30, 30] * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def fake_folder(root: Path, ident: str) -> Path:
    """A sweep folder as a catalog run leaves it: figure, report.txt, results.csv, run.json
    and two points."""
    folder = root / f"{ident}-quick"
    for index, (wall, events) in enumerate(((1.5, 1000), (2.25, 3000))):
        point = folder / "points" / f"{index:04d}"
        point.mkdir(parents=True)
        (point / "run.json").write_text(json.dumps({"wall_s": wall, "events": events}))
    (folder / f"{ident}.png").write_bytes(tiny_png())
    (folder / ".hidden.png.tmp").write_bytes(b"half a figure")
    (folder / "report.txt").write_text("Goodput <Mb/s>; ours (source)\n  4   390 (327)\n")
    (folder / "results.csv").write_text("flows,goodput_mbps,name\n4,389.575,a&b\n16,109.71,c\n")
    (folder / "run.json").write_text(json.dumps({
        "dcnsim": "0.1.0", "git_commit": "abc123", "engine": "0.1.0", "quick": True,
        "status": "complete", "ran": 2, "reused": 0, "events": 4000, "wall_s": 2.5,
        "executor": "2 threads", "host": "vm"}))
    return folder


class _Page(HTMLParser):
    """The parts of the page the tests look at."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, str] = {}  # data-id -> element id
        self.links: list[str] = []
        self.images: list[dict[str, str]] = []
        self.tags: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        if tag == "section":
            self.sections[a["data-id"]] = a["id"]
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "img":
            self.images.append(a)
        self.urls += [v for k, v in a.items() if k in ("src", "href") and v]


def _entries() -> dict[str, validation.Entry]:
    return validation.parse(DOC, KNOWN)


def test_page_has_every_id_figure_table_and_verdict(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path, "a-fig1")
    items = [catalog.Item("a-fig1", "Fig. 1 <incast>", "Devkota 2010", folder, wall_s=3.0),
             catalog.Item("a-fig2", "Fig. 2", folder=None, error="internal error: boom"),
             catalog.Item("z-unknown", "not in the docs", folder=tmp_path / "missing")]
    path = catalog.write_index(tmp_path, items, _entries(), quick=True,
                               doc=Path("docs/validation.md"), wall_s=12.0)
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert set(page.sections) == {"a-fig1", "a-fig2", "z-unknown"}
    # the contents link to every section, in order
    assert [link for link in page.links if link.startswith("#")] == [
        "#" + page.sections[i] for i in ("a-fig1", "a-fig2", "z-unknown")]
    # one figure, embedded; the hidden temporary file is not a figure
    assert len(page.images) == 1
    src = page.images[0]["src"]
    assert src.startswith("data:image/png;base64,")
    assert base64.b64decode(src.split(",", 1)[1]) == tiny_png()
    # nothing is loaded from elsewhere
    assert not {"script", "link", "iframe", "object"} & page.tags
    assert all(url.startswith(("#", "data:")) for url in page.urls), page.urls
    assert "img-src data:" in text  # the page's own policy forbids any other source
    # text is escaped; the report as printed and results.csv are there
    assert "Fig. 1 &lt;incast&gt;" in text and "Goodput &lt;Mb/s&gt;; ours (source)" in text
    assert "<td>389.575</td>" in text and "<td>16</td>" in text and "a&amp;b" in text
    # verdicts, the docs' words and the anchor of the reason
    assert "reproduced" in text and "Agrees: goodput collapses" in text
    assert "docs/validation.md#a-fig1--the-first-figure--reproduced" in text
    assert "not in docs/validation.md" in text  # z-unknown
    # run metadata and cost (sum of the points: 3.75 s, 4 k events)
    assert "abc123" in text and "2 threads" in text
    assert "3.8 s of engine time (one core per point), 4 k events, 2 points" in text
    # the failed id says why; the summary counts it
    assert "failed: internal error: boom" in text and "1 failed" in text
    assert "no results" in text


def test_page_without_docs_says_so(tmp_path: Path) -> None:
    items = [catalog.Item("a-fig1", "Fig. 1", folder=fake_folder(tmp_path, "a-fig1"))]
    text = catalog.render(items, {}, quick=False, doc=None)
    assert "docs/validation.md was not found" in text and "full scale" in text


def test_cost_of_a_folder(tmp_path: Path) -> None:
    spent = catalog.cost(fake_folder(tmp_path, "x"))
    assert spent == catalog.Cost(points=2, engine_s=3.75, events=4000)
    assert catalog.cost(tmp_path / "nothing") == catalog.Cost(0, 0.0, 0)


# ------------------------------------------------------------- the command line


def _catalog_dir(tmp_path: Path) -> Path:
    """A scenario folder of two ids: fig08 (runs on the fake engine) and a broken one."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    text = (SCENARIOS / "devkota-fig08.toml").read_text(encoding="utf-8")
    (scenarios / "devkota-fig08.toml").write_text(text, encoding="utf-8")
    (scenarios / "devkota-fig09.toml").write_text(
        text.replace('"128KiB"', '"128 kibibytes"'), encoding="utf-8")
    return scenarios


def test_reproduce_all_goes_on_past_a_failure_and_resumes(
        fake_core: FakeCore, capsys: Capture, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dcnsim.cli, "SCENARIO_DIR", _catalog_dir(tmp_path))
    out = tmp_path / "results"
    code = main(["reproduce", "--all", "--quick", "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 1
    assert "catalog [1/2] devkota-fig08" in err and "catalog [2/2] devkota-fig09" in err
    assert "dcnsim: error: 1 of 2 ids failed: devkota-fig09: " in err
    assert "128 kibibytes" in err and "Traceback" not in stdout + err
    assert "Goodput" not in stdout  # the reports' tables go to report.txt, not the terminal
    assert f"wrote {out / 'index.html'}: 2 ids" in stdout
    ran = len(fake_core.runs)
    assert ran == 16
    folder = out / "devkota-fig08-quick"
    assert "Goodput (Mb/s)" in (folder / "report.txt").read_text()
    page = (out / "index.html").read_text()
    assert 'data-id="devkota-fig08"' in page and 'data-id="devkota-fig09"' in page
    assert "data:image/png;base64," in page and "128 kibibytes" in page
    assert "docs/validation.md#devkota-fig08--" in page  # the real docs' verdict
    # a second run reuses every point
    assert main(["reproduce", "--all", "--quick", "--out", str(out)]) == 1
    assert len(fake_core.runs) == ran
    assert "16 points, 16 already done" in capsys.readouterr().err


def test_reproduce_one_id_keeps_report_text(fake_core: FakeCore, capsys: Capture,
                                            tmp_path: Path) -> None:
    assert main(["reproduce", "devkota-fig08", "--quick", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    kept = (tmp_path / "devkota-fig08-quick" / "report.txt").read_text()
    assert kept and kept in printed


@pytest.mark.parametrize("argv", [["--all", "devkota-fig08"], ["--all", "--list"],
                                  ["--all", "--shard", "1/2"], ["--all", "--list-points"],
                                  ["--all", "--jobs", "2", "--cluster", "tcp://x:1"]])
def test_reproduce_all_bad_arguments(fake_core: FakeCore, capsys: Capture, tmp_path: Path,
                                     argv: list[str]) -> None:
    code = main(["reproduce", *argv, "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("dcnsim: error: ")
    assert not (tmp_path / "index.html").exists()
