"""What every report shares: the kind record of the registry, the context a report is
written in, reading the kept per-point tables, and saving the figure.

matplotlib is imported only when a figure is drawn (``pyplot``), so loading a scenario or
running a sweep does not import it.
"""

from __future__ import annotations

import csv
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from ..runs import Record, point_table
from ..scenario import Plan, Scenario

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RESULTS_FILE = "results.csv"
# Columns that differ from run to run (wall clock) and so stay out of results.csv.
NONDETERMINISTIC = ("wall_s", "events")

Columns = dict[str, list[Any]]  # a CSV table read back: column -> values
C = TypeVar("C")


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


def save_figure(ctx: ReportContext, fig: Figure, *, dpi: int) -> Path:
    """Save ``fig`` as ``<out_dir>/<scenario id>.png`` and release it.

    A figure without a layout engine (made by ``pyplot.subplots``) is laid out with
    ``tight_layout`` first; one made with ``layout="constrained"`` keeps its own.
    """
    path = ctx.out_dir / f"{ctx.scenario.id}.png"
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp")  # whole figures only, even if killed
    fig.savefig(tmp, dpi=dpi, format="png")
    os.replace(tmp, path)
    if fig.canvas.manager is not None:  # made by pyplot, which keeps it until closed
        pyplot().close(fig)
    return path
