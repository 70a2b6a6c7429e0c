"""What every report shares: the kind record of the registry, the context a report is
written in, reading the kept per-point tables, the source's published series and the
verdict beside dcnsim's result (``[report] verdict``, ``verdict_note``, ``source_series``),
and saving the figure (which draws that comparison on every figure).

matplotlib is imported only when a figure is drawn (``pyplot``), so loading a scenario or
running a sweep does not import it.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from .._tablecheck import MAX_SOURCE
from ..runs import Record, point_table
from ..scenario import Plan, Scenario
from ..validation import VERDICTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RESULTS_FILE = "results.csv"
# Columns that differ from run to run (wall clock) and so stay out of results.csv.
NONDETERMINISTIC = ("wall_s", "events")

Columns = dict[str, list[Any]]  # a CSV table read back: column -> values
C = TypeVar("C")
# Called with every figure before it is saved (tests look at the drawn artists).
FIGURE_HOOKS: list[Callable[[ReportContext, Figure], None]] = []


@dataclass
class ReportContext:
    """A finished sweep: its plan, one record per point (grid order) and where to write."""

    plan: Plan
    records: list[Record]  # one per point, grid order: overrides + summary
    out_dir: Path
    out: IO[str] = field(default_factory=lambda: sys.stdout)

    @property
    def scenario(self) -> Scenario:
        return self.plan.scenario

    @property
    def title(self) -> str:
        return self.plan.scenario.title + (" [quick]" if self.plan.quick else "")

    def summaries(self) -> list[dict[str, Any]]:
        """The summary row of every point, grid order."""
        return [rec["summary"] for rec in self.records]

    def print(self, text: str = "") -> None:
        print(text, file=self.out)


@dataclass(frozen=True)
class ReportKind(Generic[C]):
    """A report kind: ``parse`` reads the scenario's ``[report]`` table into the kind's
    frozen config (raising ``ScenarioError`` for a bad value); ``write`` writes the report
    of a finished sweep with that config and returns the files written."""

    name: str
    description: str
    parse: Callable[[Scenario], C]
    write: Callable[[ReportContext, C], list[Path]]
    # [report] keys holding source numbers that the kind itself draws in grey on its
    # figure (e.g. incast's ``source_silent_table``), beside ``source_series``.
    source_keys: tuple[str, ...] = ()


def is_number(value: Any) -> bool:
    """A finite int or float that is not a bool (NaN and infinities are refused)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def load_csv(path: Path) -> Columns:
    """A CSV file as columns; cells that parse as numbers become floats. A missing file
    gives no columns."""
    cols: Columns = {}
    if not path.exists():
        return cols
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        for name in header:
            cols[name] = []
        for row in reader:
            for name, cell in zip(header, row, strict=False):
                try:
                    value: Any = float(cell)
                except ValueError:
                    value = cell
                cols[name].append(value)
    return cols


def point_tables(ctx: ReportContext, names: Sequence[str]) -> list[dict[str, Columns]]:
    """The kept tables ``names`` of every sweep point, grid order."""
    return [{t: load_csv(point_table(ctx.out_dir, p.index, t)) for t in names}
            for p in ctx.plan.points]


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ----------------------------------------------------------- the source beside dcnsim

SOURCE_COLOUR = "0.55"  # every source series is drawn in this grey
SOURCE_LABEL = "source"  # legend labels of source series start with this
SOURCE_MARKERS = ("D", "s", "^", "v", "o", "P")  # the 1st, 2nd, ... series of a panel
NONE_PREFIX = "none:"  # source_series = "none: <why there is nothing numeric>"
SERIES_KEYS = ("label", "provenance", "x", "y", "level", "at", "panel", "style")
STYLES = ("points", "line")
CAPTION_CHARS_PER_INCH = 17  # caption characters per inch of figure width (7 pt text)


@dataclass(frozen=True)
class SourceSeries:
    """One published series: points ``x``/``y`` (x numbers, or tick labels of a
    categorical axis), a horizontal reference ``level`` or a vertical line ``at``, drawn on
    ``fig.axes[panel]`` in the units of that panel's axes."""

    label: str
    provenance: str  # where the numbers are from: table, figure, "read off the plot ±x"
    x: tuple[float | str, ...] = ()
    y: tuple[float, ...] = ()
    level: float | None = None
    at: float | None = None
    panel: int = 0
    style: str = "points"

    @property
    def legend(self) -> str:
        return f"{SOURCE_LABEL}: {self.label}" if self.label else SOURCE_LABEL


@dataclass(frozen=True)
class Comparison:
    """The scenario's ``verdict`` (one of ``validation.VERDICTS``, as docs/validation.md
    classifies the id), its one-line ``verdict_note``, and the source's series (or,
    ``none``, why the source gives nothing numeric to draw)."""

    verdict: str | None = None
    note: str = ""
    series: tuple[SourceSeries, ...] = ()
    none: str | None = None  # the text after "none:"

    def caption(self) -> list[str]:
        """The lines written under a figure and printed after the report: the verdict,
        then where the source's numbers come from (one line each)."""
        lines = []
        if self.verdict is not None:
            text = f"verdict: {self.verdict}" + (f" — {self.note}" if self.note else "")
            lines.append(text + " (docs/validation.md)")
        for s in self.series:
            lines.append(f"{s.legend}: {s.provenance}")
        if self.none is not None:
            lines.append(f"source: nothing numeric to draw — {self.none}")
        return lines


def parse_comparison(scn: Scenario) -> Comparison:
    """Read and check ``[report] verdict``, ``verdict_note`` and ``source_series``
    (``ScenarioError`` naming the file and the field for a bad value)."""
    rep = scn.report
    verdict = rep.get("verdict")
    if verdict is not None and verdict not in VERDICTS:
        raise scn.error("report", "verdict", f"expected one of {', '.join(map(repr, VERDICTS))}"
                        f", got {verdict!r}")
    note = rep.get("verdict_note", "")
    if not isinstance(note, str) or "\n" in note:
        raise scn.error("report", "verdict_note", "expected a one-line string")
    if note and verdict is None:
        raise scn.error("report", "verdict_note", "given without a verdict")
    raw = rep.get("source_series")
    if raw is None:
        return Comparison(verdict, note)
    if isinstance(raw, str):
        if not raw.startswith(NONE_PREFIX) or not raw[len(NONE_PREFIX):].strip():
            raise scn.error("report", "source_series", "expected an array of series or "
                            f"\"{NONE_PREFIX} <why the source gives nothing numeric>\"")
        return Comparison(verdict, note, none=raw[len(NONE_PREFIX):].strip())
    if not isinstance(raw, list) or not raw:
        raise scn.error("report", "source_series", "expected a non-empty array of series "
                        "(tables with label, provenance and x/y, level or at)")
    return Comparison(verdict, note, tuple(_series(scn, i, s) for i, s in enumerate(raw)))


def _series(scn: Scenario, i: int, raw: Any) -> SourceSeries:
    def bad(message: str) -> ValueError:
        return scn.error("report", "source_series", f"series {i + 1}: {message}")

    if not isinstance(raw, dict):
        raise bad(f"expected a table, got {raw!r}")
    unknown = [k for k in raw if k not in SERIES_KEYS]
    if unknown:
        raise bad(f"unknown key {unknown[0]!r} (known: {', '.join(SERIES_KEYS)})")
    for key in ("label", "provenance"):
        if not isinstance(raw.get(key), str) or not raw[key].strip() or "\n" in raw[key]:
            raise bad(f"{key}: expected a non-empty one-line string")
    shapes = [k for k in ("y", "level", "at") if k in raw]
    if len(shapes) != 1:
        raise bad("give exactly one of x and y (points), level (a horizontal line) or at "
                  "(a vertical line)")
    panel = raw.get("panel", 0)
    if not isinstance(panel, int) or isinstance(panel, bool) or panel < 0:
        raise bad(f"panel: expected an axes index >= 0, got {panel!r}")
    style = raw.get("style", "points")
    if style not in STYLES:
        raise bad(f"style: expected one of {', '.join(STYLES)}, got {style!r}")
    label, provenance = raw["label"].strip(), raw["provenance"].strip()
    if shapes == ["y"]:
        x, y = raw.get("x"), raw["y"]
        if not isinstance(y, list) or not y or not all(is_number(v) for v in y):
            raise bad(f"y: expected a non-empty array of finite numbers, got {y!r}")
        if not isinstance(x, list) or not (all(is_number(v) for v in x)
                                           or all(isinstance(v, str) for v in x)):
            raise bad(f"x: expected an array of finite numbers or of tick labels, got {x!r}")
        if len(x) != len(y):
            raise bad(f"x has {len(x)} values, y has {len(y)}")
        _in_range(bad, "y", y, low=0.0)
        _in_range(bad, "x", [v for v in x if not isinstance(v, str)], low=-MAX_SOURCE)
        return SourceSeries(label, provenance, x=tuple(x), y=tuple(float(v) for v in y),
                            panel=panel, style=style)
    if "x" in raw:
        raise bad("x goes with y, not with level or at")
    value = raw[shapes[0]]
    if not is_number(value):
        raise bad(f"{shapes[0]}: expected a finite number, got {value!r}")
    # A level is a published value (goodput, a queue, seconds): never negative. `at` is a
    # place on the x axis, which may be (bars are offset to the left of 0).
    _in_range(bad, shapes[0], [value], low=0.0 if shapes[0] == "level" else -MAX_SOURCE)
    level = float(value) if shapes[0] == "level" else None
    at = float(value) if shapes[0] == "at" else None
    return SourceSeries(label, provenance, level=level, at=at, panel=panel, style=style)


def _in_range(bad: Callable[[str], ValueError], key: str, values: Sequence[float], *,
              low: float) -> None:
    """Refuse (``bad``) the first of ``values`` outside ``low``..``MAX_SOURCE``: a negative
    published value, or an absurd one such as 1e308 (a typo that only stretches the axis)."""
    for v in values:
        if not low <= v <= MAX_SOURCE:
            span = "from 0" if low == 0 else "from -1e15"
            raise bad(f"{key}: expected numbers {span} to 1e15, got {v!r}")


def draw_source(ax: Any, series: SourceSeries, *, marker: str = "D") -> None:
    """Draw one source series on ``ax`` in grey (legend "source: …") and refresh the
    legend. Tick-label x values are placed at their tick."""
    kw = {"color": SOURCE_COLOUR, "label": series.legend, "zorder": 5}
    if series.level is not None:
        ax.axhline(series.level, linestyle="--", linewidth=1.2, **kw)
    elif series.at is not None:
        ax.axvline(series.at, linestyle="--", linewidth=1.2, **kw)
    else:
        xs = [_tick_position(ax, x) for x in series.x]
        if series.style == "line":
            ax.plot(xs, series.y, linestyle="-", marker="o", ms=4, linewidth=1.5, **kw)
        else:
            ax.plot(xs, series.y, linestyle="none", marker=marker, ms=6, mfc="none", mew=1.5,
                    **kw)
    ax.legend(fontsize=7, loc="best")


def _tick_position(ax: Any, x: float | str) -> float:
    if not isinstance(x, str):
        return float(x)
    for pos, tick in zip(ax.get_xticks(), ax.get_xticklabels(), strict=False):
        if tick.get_text() == x:
            return float(pos)
    return math.nan  # not a category of this figure (e.g. a --quick run): not drawn


def comparison_of(scn: Scenario) -> Comparison:
    """The scenario's comparison; a bad one (refused when the scenario was checked) as
    none."""
    try:
        return parse_comparison(scn)
    except ValueError:
        return Comparison()


def draw_comparison(fig: Figure, comparison: Comparison, *, series: bool = True) -> None:
    """Draw the source's series on their panels (visible axes of ``fig``, in order) and
    write the verdict and the provenance under the figure (``series=False``: the verdict
    only, for a report's second figure whose panels are not the ones the series name)."""
    axes = [ax for ax in fig.axes if ax.get_visible()]
    if not series:
        comparison = Comparison(comparison.verdict, comparison.note)
    drawn = [0] * len(axes)  # series drawn so far on each panel: each gets its own marker
    for s in comparison.series:
        if s.panel < len(axes):
            marker = SOURCE_MARKERS[drawn[s.panel] % len(SOURCE_MARKERS)]
            draw_source(axes[s.panel], s, marker=marker)
            drawn[s.panel] += 1
    width = max(60, int(fig.get_figwidth() * CAPTION_CHARS_PER_INCH))
    lines = [wrapped for line in comparison.caption()
             for wrapped in textwrap.wrap(line, width, subsequent_indent="    ")]
    if lines:
        fig.supxlabel("\n".join(lines), fontsize=7, color="0.25", ha="center")


FIGURE_LABELS_KEY = "Description"
"""The PNG text field holding a saved figure's titles and legend entries (``figure_labels``),
so what a figure is labelled with can be read back without looking at its pixels."""


def figure_labels(fig: Figure) -> list[str]:
    """The titles and legend entries of ``fig``, one a line: ``title: …`` for the figure's
    and each visible panel's title, ``legend: …`` for each legend entry."""
    lines = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        lines.append(f"title: {suptitle.get_text()}")
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for loc in ("left", "center", "right"):
            if ax.get_title(loc):
                lines.append(f"title: {ax.get_title(loc)}")
        legend = ax.get_legend()
        if legend is not None:
            lines.extend(f"legend: {t.get_text()}" for t in legend.get_texts())
    for legend in fig.legends:
        lines.extend(f"legend: {t.get_text()}" for t in legend.get_texts())
    return lines


def save_figure(ctx: ReportContext, fig: Figure, *, dpi: int, name: str | None = None,
                series: bool = True) -> Path:
    """Draw the scenario's source series and verdict (``draw_comparison``), then save
    ``fig`` as ``<out_dir>/<name>.png`` (default name: the scenario id) and release it.
    ``series=False`` writes the verdict line but draws no ``source_series`` (a second
    figure of a report).

    A figure without a layout engine (made by ``pyplot.subplots``) is given the
    constrained one (which leaves room for the caption); one made with
    ``layout="constrained"`` keeps its own.
    """
    path = ctx.out_dir / f"{name or ctx.scenario.id}.png"
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    draw_comparison(fig, comparison_of(ctx.scenario), series=series)
    for hook in FIGURE_HOOKS:
        hook(ctx, fig)
    tmp = path.with_name(f".{path.name}.tmp")  # whole figures only, even if killed
    fig.savefig(tmp, dpi=dpi, format="png",
                metadata={FIGURE_LABELS_KEY: "\n".join(figure_labels(fig))})
    os.replace(tmp, path)
    if fig.canvas.manager is not None:  # made by pyplot, which keeps it until closed
        pyplot().close(fig)
    return path
