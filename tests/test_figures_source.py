"""Every catalog figure shows the source beside dcnsim: each
scenario's ``[report]`` carries a verdict that matches ``docs/validation.md`` and the
source's numbers (``source_series``, numbers the report kind draws itself, or an explicit
``"none: ..."``); the fields are checked strictly; a few ``--quick`` reproductions of
different report kinds draw a grey "source" series and the verdict line; the odctcp
benchmark's size bins are in numeric order in the table and in the figure."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from dcnsim import reports, validation
from dcnsim.cli import main
from dcnsim.errors import UserError
from dcnsim.reports import _base
from dcnsim.reports.odctcp import _bin_labels
from dcnsim.scenario import load_validated

from .conftest import REPO, SCENARIOS

NOT_AN_EXPERIMENT = {"bench-incast"}  # the engine benchmark: generic report, no figure
CATALOG = sorted(p.stem for p in SCENARIOS.glob("*.toml") if p.stem not in NOT_AN_EXPERIMENT)
VERDICTS, _ = validation.load(REPO / "docs" / "validation.md", known=set(CATALOG))


def _report(ident: str) -> reports.Report:
    return reports.parse(load_validated(SCENARIOS / f"{ident}.toml"))


@pytest.mark.parametrize("ident", CATALOG)
def test_every_catalog_id_has_a_verdict_and_the_source(ident: str) -> None:
    report = _report(ident)
    comparison = report.comparison
    entry = VERDICTS.get(ident)
    expected = entry.verdict if entry is not None else validation.UNRATED
    assert comparison.verdict == expected, f"{ident}: docs/validation.md says {expected!r}"
    assert comparison.note.strip(), f"{ident}: no verdict_note"
    # [report] keys of source numbers that the kind draws itself.
    own = [k for k in report.kind.source_keys
           if k in load_validated(SCENARIOS / f"{ident}.toml").report]
    assert comparison.series or comparison.none or own, (
        f"{ident}: no source_series, no source numbers the {report.kind.name} report draws "
        f"({', '.join(report.kind.source_keys) or 'none'}) and no \"none: ...\"")
    for s in comparison.series:
        assert s.provenance and s.label


def test_every_id_but_the_benchmark_has_a_figure_drawing_kind() -> None:
    kinds = {ident: _report(ident).kind.name for ident in CATALOG}
    assert "generic" not in kinds.values()
    assert len(CATALOG) >= 51


BAD = [
    ('verdict = "fine"', "report.verdict"),
    ('verdict = "reproduced"\nverdict_note = 3', "report.verdict_note"),
    ('verdict_note = "no verdict given"', "report.verdict_note"),
    ('source_series = "nothing"', "report.source_series"),
    ('source_series = "none:"', "report.source_series"),
    ("source_series = []", "report.source_series"),
    ('source_series = [{ label = "a", provenance = "p", x = [1, 2], y = [1] }]',
     "x has 2 values, y has 1"),
    ('source_series = [{ label = "a", provenance = "p", x = [1], y = [nan] }]',
     "report.source_series"),
    ('source_series = [{ label = "a", provenance = "p", level = inf }]',
     "report.source_series"),
    # Published values are never negative, and none is near 1e308.
    ('source_series = [{ label = "a", provenance = "p", level = -5 }]',
     "series 1: level: expected numbers from 0 to 1e15, got -5"),
    ('source_series = [{ label = "a", provenance = "p", level = 1e308 }]',
     "series 1: level: expected numbers from 0 to 1e15, got 1e+308"),
    ('source_series = [{ label = "a", provenance = "p", x = [1, 2], y = [3, -1.5] }]',
     "series 1: y: expected numbers from 0 to 1e15, got -1.5"),
    ('source_series = [{ label = "a", provenance = "p", x = [1e300], y = [3] }]',
     "series 1: x: expected numbers from -1e15 to 1e15, got 1e+300"),
    ('source_series = [{ label = "a", provenance = "p", at = -1e20 }]',
     "series 1: at: expected numbers from -1e15 to 1e15, got -1e+20"),
    ('source_series = [{ label = "a", x = [1], y = [2] }]', "provenance"),
    ('source_series = [{ label = "a", provenance = "p", y = [2] }]', "x: expected"),
    ('source_series = [{ label = "a", provenance = "p", level = 1, at = 2 }]', "exactly one"),
    ('source_series = [{ label = "a", provenance = "p", level = 1, panel = -1 }]', "panel"),
    ('source_series = [{ label = "a", provenance = "p", level = 1, colour = "red" }]',
     "unknown key"),
    ('source_series = [{ label = "a", provenance = "p", x = [1, "b"], y = [1, 2] }]',
     "x: expected"),
]


@pytest.mark.parametrize(("lines", "expect"), BAD, ids=[b[1] for b in BAD])
def test_bad_comparison_fields_give_one_line_errors(tmp_path: Path, lines: str,
                                                    expect: str) -> None:
    text = (SCENARIOS / "tcn-fig3.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?ms)^source_series = \[.*?^\]\n", "", text)
    text = re.sub(r"(?m)^(verdict|verdict_note|source_series) = .*\n", "", text)
    text = text.replace("[report]\n", f"[report]\n{lines}\n", 1)
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((UserError, ValueError)) as info:
        reports.parse(load_validated(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert expect in message


def test_good_comparison_parses_and_captions(tmp_path: Path) -> None:
    comparison = _report("tcn-fig3").comparison
    lines = comparison.caption()
    assert lines[0].startswith(f"verdict: {comparison.verdict}")
    assert len(lines) == 1 + len(comparison.series)


# ------------------------------------------------------------- quick reproductions

# One id per report kind that runs in a few seconds at --quick scale.
QUICK = ["odctcp-benchmark",  # odctcp-fct (ratio panel)
         "tcn-fig3",  # tcn
         "odctcp-fig5-5",  # odctcp-after-cwr (count panel)
         "devkota-fig08",  # incast-goodput (the kind's own silent-period source)
         "qcn-baseline3"]  # qcn-baseline (series on a time series, drops figure)


def _grey(colour: Any) -> bool:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(colour)
    return abs(r - g) < 1e-6 and abs(g - b) < 1e-6 and 0.3 < r < 0.8


def _source_artists(fig: Any) -> list[Any]:
    return [line for ax in fig.axes for line in ax.get_lines()
            if str(line.get_label()).startswith(_base.SOURCE_LABEL)]


@pytest.fixture(scope="module")
def quick_figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the QUICK ids and keep, per figure file name, what was drawn on it."""
    out = tmp_path_factory.mktemp("quick")
    seen: dict[str, Any] = {}

    def hook(ctx: _base.ReportContext, fig: Any) -> None:
        n = sum(1 for k in seen if k.startswith(ctx.scenario.id))
        seen[f"{ctx.scenario.id}#{n}"] = {
            "out": ctx.out_dir,
            "source": [(str(a.get_label()), a.get_color()) for a in _source_artists(fig)],
            "caption": fig.get_supxlabel(),
            "ticks": [[t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes],
        }

    _base.FIGURE_HOOKS.append(hook)
    try:
        for ident in QUICK:
            assert main(["reproduce", ident, "--quick", "--out", str(out)]) == 0
    finally:
        _base.FIGURE_HOOKS.remove(hook)
    return seen


@pytest.mark.parametrize("ident", QUICK)
def test_quick_figure_draws_the_source_in_grey_and_the_verdict(
        quick_figures: dict[str, Any], ident: str) -> None:
    drawn = quick_figures[f"{ident}#0"]
    assert (drawn["out"] / f"{ident}.png").is_file()
    assert drawn["source"], f"{ident}: no artist labelled 'source…'"
    assert all(_grey(colour) for _, colour in drawn["source"])
    verdict = _report(ident).comparison.verdict
    assert drawn["caption"].startswith(f"verdict: {verdict}")


def test_second_figure_carries_the_verdict_too(quick_figures: dict[str, Any]) -> None:
    drops = quick_figures["qcn-baseline3#1"]
    assert (drops["out"] / "qcn-baseline3-drops.png").is_file()
    assert drops["source"] and drops["caption"].startswith("verdict: ")


# ------------------------------------------------------------ odctcp-benchmark bins

def _bounds(label: str) -> tuple[float, float]:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?) KB", label)
    assert m, f"bin label {label!r} is not 'A-B KB'"
    return float(m.group(1)), float(m.group(2))


def _in_order(labels: list[str]) -> None:
    bounds = [_bounds(lab) for lab in labels]
    assert all(lo < hi for lo, hi in bounds)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False)), labels
    assert bounds == sorted(bounds)


def test_bin_labels_are_in_numeric_order_without_exponents() -> None:
    edges = load_validated(SCENARIOS / "odctcp-benchmark.toml").report["bins"]
    labels = _bin_labels(tuple(edges))
    assert len(labels) == len(edges) - 1
    _in_order(labels)
    assert not any("e+" in lab for lab in labels)


def test_benchmark_bins_in_order_in_figure_and_table(quick_figures: dict[str, Any]) -> None:
    drawn = quick_figures["odctcp-benchmark#0"]
    for ticks in drawn["ticks"]:
        assert ticks, "every panel is labelled by size bin"
        _in_order(ticks)
    text = (drawn["out"] / "report.txt").read_text(encoding="utf-8")
    rows = [line.split("  ")[0].strip() for line in text.splitlines()
            if re.match(r"^\d+(\.\d+)?-\d+(\.\d+)? KB\b", line)]
    assert len(rows) >= 2
    _in_order(rows)
