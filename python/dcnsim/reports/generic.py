"""The ``generic`` report: ``results.csv`` (a row per point: the sweep axes, then the
summary columns) and a printed table. Other reports start from it.

``results.csv`` is written from the records in grid order with a fixed spelling of
numbers and without the wall-clock columns, so the same scenario and seed give a
byte-identical file whether the sweep ran at once or was resumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _toml
from .._tables import format_table, human, write_csv
from ..scenario import VARIANTS_AXIS, Scenario, axis_header, axis_text, variant_of
from ._base import NONDETERMINISTIC, RESULTS_FILE, ReportContext, ReportKind

GENERIC = "generic"


@dataclass(frozen=True)
class GenericConfig:
    """The generic report takes no options."""


def parse(scn: Scenario) -> GenericConfig:
    return GenericConfig()


def summary_columns(summaries: Sequence[dict[str, Any]],
                    exclude: Sequence[str] = ()) -> list[str]:
    """The summary columns of all points in first-seen order, without ``exclude`` and the
    wall-clock columns."""
    cols: list[str] = []
    for summary in summaries:
        cols.extend(c for c in summary if c not in cols and c not in exclude
                    and c not in NONDETERMINISTIC)
    return cols


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return _toml.display(value)
    return value


def write_generic(ctx: ReportContext) -> list[Path]:
    """results.csv: one row per point, the sweep axes then the summary columns."""
    axes = [key for key, _ in ctx.plan.axes]
    metrics = summary_columns(ctx.summaries(), exclude=axes)
    rows = []
    for rec in ctx.records:
        row = {key: _cell(rec["overrides"].get(key)) for key in axes}
        if VARIANTS_AXIS in row:
            row[VARIANTS_AXIS] = variant_of(ctx.scenario, rec["overrides"])
        row.update({k: v for k, v in rec["summary"].items() if k in metrics})
        rows.append(row)
    path = ctx.out_dir / RESULTS_FILE
    write_csv(path, axes + metrics, rows)

    ctx.print(ctx.title)
    shown = shown_columns(metrics, rows)
    # The printed table names the axes and their values as people read them (``servers``,
    # a variant's label), never as raw overrides or inline tables.
    scn = ctx.scenario
    cells = [[axis_text(scn, key, rec["overrides"].get(key)) if key != VARIANTS_AXIS
              else str(row[key]) for key in axes] + [human(row.get(c)) for c in shown]
             for rec, row in zip(ctx.records, rows, strict=True)]
    ctx.print(format_table([axis_header(scn, key) for key in axes] + shown, cells,
                           align_left=len(axes)))
    return [path]


SHOWN = ("goodput_mbps", "timeouts", "drops", "retransmits", "silent_s")
NEVER_SHOWN = ("id", "seed", "duration_s", "events", "peak_pending", "delivered_bytes")
MAX_SHOWN = 8


def shown_columns(metrics: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[str]:
    """The summary columns of the printed table: goodput, those of ``SHOWN`` that differ
    between the points, then any other column that differs (marks, queue means, FCTs …), at most
    ``MAX_SHOWN``, so a sweep whose effect is not on goodput does not print identical
    rows. If nothing differs: ``SHOWN`` (or the first six columns)."""
    def varies(col: str) -> bool:
        return len({repr(row.get(col)) for row in rows}) > 1

    usual = [c for c in SHOWN if c in metrics]
    # Goodput, the headline, always; the other usual columns when they move.
    moving = [c for c in usual if c == SHOWN[0] or varies(c)]
    moving += [c for c in metrics if c not in usual and c not in NEVER_SHOWN and varies(c)]
    if not any(varies(c) for c in moving):
        return usual or list(metrics[:6])
    return moving[:MAX_SHOWN]


def write(ctx: ReportContext, cfg: GenericConfig) -> list[Path]:
    return write_generic(ctx)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind(GENERIC, "results.csv and a printed table", parse, write),
)
