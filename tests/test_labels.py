"""Labels people read — progress lines, printed tables, panel titles and legends — are
human labels, never raw ``--set``-style overrides (``topology.pause.enabled=false``) or
inline tables (``{count = 2, scheduler = "dwrr", …}``).

The plans of every catalog id are checked without running anything; the text the catalog
actually prints and draws is checked on the one ``reproduce --all --quick`` of the session
(the ``catalog_run`` fixture of conftest.py, shared with test_catalog_e2e.py).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from .conftest import SCENARIOS

# A dotted field name followed by "=": topology.switch_buffer=150KB, qcn.rp.scope=flow.
RAW_OVERRIDE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+\s*=")
MAX_LABEL_CHARS = 80
PROGRESS = re.compile(r"^\[\d+/\d+\] (?P<label>.*?)(: | failed| \(|$)")


def raw_parts(text: str) -> list[str]:
    """The pieces of ``text`` that look like raw overrides or inline tables."""
    found = [m.group(0) for m in RAW_OVERRIDE.finditer(text)]
    found += re.findall(r"\{[^}]*=[^}]*\}?", text)
    return found


def ids() -> list[str]:
    return sorted(p.stem for p in SCENARIOS.glob("*.toml"))


@pytest.mark.parametrize("ident", ids())
def test_every_point_label_is_human(ident: str) -> None:
    from dcnsim.scenario import axis_header, axis_text, load, make_plan

    scn = load(SCENARIOS / f"{ident}.toml")
    for quick in (False, True):
        for point in make_plan(scn, quick=quick).points:
            label = point.label()
            assert "{" not in label and not raw_parts(label), (ident, label)
            assert len(label) <= MAX_LABEL_CHARS, (ident, label)
            for key, value in point.axis_values.items():
                cell = axis_text(scn, key, value)
                assert "{" not in cell and not raw_parts(cell), (ident, key, cell)
                assert "." not in axis_header(scn, key), (ident, key)


def test_labels_of_inline_table_axes_without_names() -> None:
    """An inline-table axis that the scenario does not name gets a short form: the fields
    in which its values differ."""
    from dcnsim.scenario import load, make_plan

    scn = dataclasses.replace(load(SCENARIOS / "tcn-fig10.toml"), value_labels={})
    labels = [p.label() for p in make_plan(scn, quick=True).points]
    assert labels == ["queues (kind step, k 65pkts), load=0.5",
                      "queues (kind step, k 65pkts), load=0.9",
                      "queues (kind tcn, threshold 78us), load=0.5",
                      "queues (kind tcn, threshold 78us), load=0.9"]


def test_pause_qcn_panels_read_as_the_slides() -> None:
    from dcnsim.scenario import load, make_plan

    labels = {p.label() for p in
              make_plan(load(SCENARIOS / "pause-qcn-part1.toml"), quick=True).points}
    assert {"TCP alone", "TCP + PAUSE", "TCP + QCN + PAUSE"} <= labels


def test_short_keys_stay_distinct() -> None:
    from dcnsim.scenario import short_key

    keys = ("topology.pause.enabled", "topology.qcn.enabled", "topology.servers",
            "apps.0.load")
    assert [short_key(k, keys) for k in keys] == ["pause enabled", "qcn enabled", "servers",
                                                  "load"]


def test_raw_parts_finds_what_it_should() -> None:
    assert raw_parts("topology.switch_buffer=150KB / pause.enabled=false")
    assert raw_parts('queues={count = 2, scheduler = "dwrr"')
    assert raw_parts("TCP + QCN + PAUSE, 150KB buffer") == []
    assert raw_parts("servers=16, seed=2") == []


def test_catalog_progress_lines_are_human(catalog_run: tuple[Path, str, str]) -> None:
    _, _, stderr = catalog_run
    labels = [m.group("label") for line in stderr.splitlines()
              if (m := PROGRESS.match(line))]
    assert labels, "no progress line seen"
    bad = [label for label in labels if "{" in label or raw_parts(label)]
    assert bad == []


def test_catalog_reports_are_human(catalog_run: tuple[Path, str, str]) -> None:
    out, _, _ = catalog_run
    reports = sorted(out.glob("*-quick/report.txt"))
    assert len(reports) == len(ids())
    bad = []
    for report in reports:
        for line in report.read_text(encoding="utf-8").splitlines():
            if line.startswith(("verdict:", "source:", "    ")):
                continue  # the verdict and source notes are prose written in the scenario
            if raw_parts(line) or "{" in line:
                bad.append(f"{report.parent.name}: {line[:160]}")
    assert bad == []


def test_catalog_figure_titles_and_legends_are_human(
        catalog_run: tuple[Path, str, str]) -> None:
    from dcnsim.reports._base import FIGURE_LABELS_KEY
    from PIL import Image

    out, _, _ = catalog_run
    figures = sorted(out.glob("*-quick/*.png"))
    assert figures
    bad, titled = [], 0
    for png in figures:
        with Image.open(png) as im:
            labels = str(im.text.get(FIGURE_LABELS_KEY, ""))  # type: ignore[attr-defined]
        titled += bool(labels)
        for line in labels.splitlines():
            if line.startswith("legend: source"):
                continue  # a source series' prose label, written in the scenario
            if "{" in line or raw_parts(line):
                bad.append(f"{png.name}: {line}")
    assert titled == len(figures)
    assert bad == []
