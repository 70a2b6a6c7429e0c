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
    shown = printed_columns(ctx.scenario, metrics, rows)
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
# Shown whenever one point has a value other than zero (a single point included): that
# an AQM marked, or that QCN or PAUSE acted, is news even when every point agrees.
SHOWN_IF_NONZERO = ("marks", "cnm_sent", "pause_sent")
INCAST_ONLY = ("silent_s", "rounds", "incast_goodput_mbps")
TCP_ONLY = ("goodput_mbps", "timeouts", "retransmits", "fast_recoveries")
NOT_TCP = ("cbr", "ping")  # app kinds that open no TCP flow


def fitting_columns(scn: Scenario) -> tuple[list[str], list[str]]:
    """The summary columns that fit the scenario's experiment, headline first, and those
    that do not (shown by no default): goodput and TCP's losses with a TCP app, the CBR rate
    with a cbr app, FCTs with a workload, silent periods only with an incast app, marks,
    QCN and PAUSE counts (``SHOWN_IF_NONZERO``)."""
    apps = scn.data.get("apps")
    kinds = {str(a.get("kind")) for a in apps if isinstance(a, dict)} \
        if isinstance(apps, list) else set()
    tcp = bool(kinds - set(NOT_TCP))
    usual: list[str] = []
    if tcp:
        usual.append("goodput_mbps")
    if "cbr" in kinds:
        usual.append("cbr_mbps")
    if "workload" in kinds:
        usual += ["fct_mean_s", "fct_small_p99_s"]
    usual += ["timeouts", "drops", "retransmits"] if tcp else ["drops"]
    if "incast" in kinds:
        usual += ["silent_s"]
    usual += list(SHOWN_IF_NONZERO)
    unfit = [c for c in INCAST_ONLY if "incast" not in kinds]
    unfit += [c for c in TCP_ONLY if not tcp]
    if not kinds:  # no [[apps]] read (a scenario the engine fills in): the old default
        return list(SHOWN) + list(SHOWN_IF_NONZERO), []
    return usual, unfit


def printed_columns(scn: Scenario, metrics: Sequence[str],
                    rows: Sequence[dict[str, Any]]) -> list[str]:
    """``[report] columns`` when the scenario names them, else ``shown_columns`` with the
    columns that fit the experiment (``fitting_columns``)."""
    chosen = scn.report.get("columns")
    if isinstance(chosen, list) and chosen:
        return [str(c) for c in chosen]
    usual, unfit = fitting_columns(scn)
    return shown_columns(metrics, rows, usual=usual, unfit=unfit)


def shown_columns(metrics: Sequence[str], rows: Sequence[dict[str, Any]], *,
                  usual: Sequence[str] = SHOWN, unfit: Sequence[str] = ()) -> list[str]:
    """The summary columns of the printed table: the headline (the first of ``usual``),
    those of ``usual`` that differ between the points (or, of ``SHOWN_IF_NONZERO``, are
    not zero), then any other column that differs (queue means, FCTs …) unless ``unfit``,
    at most ``MAX_SHOWN``, so a sweep whose effect is not on goodput does not print
    identical rows. If nothing differs: ``usual`` (or the first six columns)."""
    def varies(col: str) -> bool:
        return len({repr(row.get(col)) for row in rows}) > 1

    def nonzero(col: str) -> bool:
        return any(isinstance(row.get(col), (int, float)) and row.get(col) != 0
                   for row in rows)

    present = [c for c in usual if c in metrics]
    headline = present[:1]
    # The headline always; the other usual columns when they move.
    moving = [c for c in present if c in headline or varies(c)
              or (c in SHOWN_IF_NONZERO and nonzero(c))]
    moving += [c for c in metrics if c not in present and c not in NEVER_SHOWN
               and c not in unfit and varies(c)]
    if not any(varies(c) or (c in SHOWN_IF_NONZERO and nonzero(c)) for c in moving):
        quiet = [c for c in present if c not in SHOWN_IF_NONZERO]
        return quiet or [c for c in metrics if c not in NEVER_SHOWN and c not in unfit][:6]
    return moving[:MAX_SHOWN]


def write(ctx: ReportContext, cfg: GenericConfig) -> list[Path]:
    return write_generic(ctx)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind(GENERIC, "results.csv and a printed table", parse, write),
)
