"""``dcnsim reproduce --all --quick`` on the real catalog and the real engine, and its page
in headless Chromium (Debian ``chromium``; ``scripts/test-all.sh`` installs it).

The whole catalog at --quick scale takes about a minute on the 2-core reference machine
(docs/performance.md), so it runs once per session (the ``catalog_run`` fixture of
conftest.py, shared with test_labels.py and test_tables_doc.py), rather than as a subset.
"""

from __future__ import annotations

from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest

from . import chromium
from .conftest import SCENARIOS
from .test_catalog import CATALOG, NOT_IN_DOCS

SHOT = (1200, 900)
needs_chromium = pytest.mark.skipif(chromium.find() is None,
                                    reason="chromium is not installed (apt-get install chromium)")


def test_every_id_runs_and_reports(catalog_run: tuple[Path, str, str]) -> None:
    out, stdout, stderr = catalog_run
    ids = sorted(p.stem for p in SCENARIOS.glob("*.toml"))
    assert f"wrote {out / 'index.html'}: {len(ids)} ids" in stdout
    assert f"{len(ids)} reported, 0 failed" in stdout
    for n, ident in enumerate(ids, 1):
        assert f"catalog [{n}/{len(ids)}] {ident} " in stderr
        folder = out / f"{ident}-quick"
        assert (folder / "results.csv").stat().st_size > 0, ident
        assert (folder / "report.txt").stat().st_size > 0, ident
        assert (folder / "run.json").exists(), ident
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "http://" not in page and "https://" not in page


@needs_chromium
def test_page_in_chromium(catalog_run: tuple[Path, str, str], tmp_path: Path) -> None:
    out, _, _ = catalog_run
    # A copy elsewhere: a page that needed any file beside it would break here.
    found = chromium.dom_check(out / "index.html", tmp_path / "check")
    assert found["errors"] == []
    sections = {s["id"]: s for s in found["sections"]}
    assert set(sections) == CATALOG
    assert found["contents"] == [s["anchor"] for s in found["sections"]]
    rated = {ident for ident, s in sections.items() if s["verdict"] != "no verdict"}
    unrated = {"pfc-priority-demo", "rdma-incast", "hpcc-fattree", "hpcc-fb30-incast", "tcn-fig12",
               "tcn-fig13"}
    assert rated >= CATALOG - NOT_IN_DOCS - unrated
    images = found["images"]
    figures = {p.parent.name.removesuffix("-quick") for p in out.glob("*-quick/*.png")}
    assert {i["section"] for i in images} == figures and len(figures) >= 40
    broken = [i for i in images if not i["complete"] or i["width"] <= 0 or i["height"] <= 0]
    assert broken == []


@needs_chromium
def test_chromium_check_sees_a_broken_page(tmp_path: Path) -> None:
    """The check itself: a missing image, a refused remote one and a script error."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        '<nav id="contents"><a href="#id-x">x</a></nav>'
        '<section class="experiment" id="id-x" data-id="x"><img alt="gone" src="gone.png">'
        "</section><script>console.error('boom'); notDefined();</script></body></html>",
        encoding="utf-8")
    found = chromium.dom_check(page, tmp_path / "check")
    assert [s["id"] for s in found["sections"]] == ["x"] and found["contents"] == ["id-x"]
    assert found["images"][0]["width"] == 0
    errors = "\n".join(found["errors"])
    assert "failed to load <img>" in errors and "console.error: boom" in errors
    assert "notDefined" in errors


def assert_not_blank(png: Path, size: tuple[int, int]) -> None:
    """The image has ``size``, more than a few colours and no colour covering nearly all."""
    from PIL import Image  # matplotlib's dependency

    with Image.open(png) as im:
        assert im.size == size
        colours = im.convert("RGB").getcolors(maxcolors=size[0] * size[1])
    assert colours is not None and len(colours) > 16  # text, badges, table rules
    assert max(colours)[0] / (size[0] * size[1]) < 0.97  # not one flat background


@needs_chromium
def test_screenshot(catalog_run: tuple[Path, str, str], tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    chromium.screenshot(catalog_run[0] / "index.html", png, *SHOT)
    assert_not_blank(png, SHOT)


def test_blank_screenshot_is_caught(tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "blank.png"
    Image.new("RGB", SHOT, "white").save(png)
    with pytest.raises(AssertionError):
        assert_not_blank(png, SHOT)
    with pytest.raises(AssertionError):
        assert_not_blank(png, (SHOT[0], SHOT[1] + 1))
