"""Reports: turn the records of a finished sweep into ``results.csv``, a figure and
printed tables. The scenario's ``[report] kind`` picks the report; ``parse`` reads the
rest of ``[report]`` once, into the kind's frozen config, when the scenario is checked.

Each module here holds one family of kinds and lists them in its ``KINDS``; ``REPORTS``
is the registry, by kind name. ``_base`` has what they share.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..scenario import Scenario
from . import generic, incast, odctcp, panels, qcn, qcn_baseline, slowdown, tcn
from ._base import RESULTS_FILE, Comparison, ReportContext, ReportKind, parse_comparison

__all__ = ["REPORTS", "RESULTS_FILE", "Comparison", "Report", "ReportContext", "ReportKind",
           "parse", "write_report"]

REPORTS: dict[str, ReportKind[Any]] = {
    kind.name: kind
    for module in (generic, incast, panels, odctcp, tcn, qcn, qcn_baseline, slowdown)
    for kind in module.KINDS
}


@dataclass(frozen=True)
class Report:
    """A scenario's ``[report]`` table, parsed for its kind."""

    kind: ReportKind[Any]
    config: Any  # the kind's frozen config
    # Result tables kept from every point for the report (``[report] tables``).
    tables: tuple[str, ...]
    # Set when the kind is unknown and the generic report stands in for it.
    note: str | None = None
    # The verdict and the source's series drawn on every figure of the report.
    comparison: Comparison = Comparison()

    def write(self, ctx: ReportContext) -> list[Path]:
        """Write the report of a finished sweep; returns the files written. The verdict
        and where the source's numbers come from are printed last."""
        written = self.kind.write(ctx, self.config)
        lines = self.comparison.caption()
        if lines:
            ctx.print()
            for line in lines:
                ctx.print(line)
        return written


def _resolve(scn: Scenario) -> tuple[ReportKind[Any], str | None]:
    """The report kind of a scenario, and a note when falling back to the generic one.

    A kind close to a known one is taken as a typo (``ScenarioError``); any other
    unknown kind falls back to the generic report (for scenarios whose report
    function does not exist yet).
    """
    name = scn.report.get("kind", generic.GENERIC)
    if name in REPORTS:
        return REPORTS[name], None
    close = difflib.get_close_matches(name, list(REPORTS), n=1, cutoff=0.8)
    if close:
        raise scn.error("report", "kind",
                        f"unknown report kind {name!r}; did you mean {close[0]!r}? "
                        f"(known: {', '.join(REPORTS)})")
    return REPORTS[generic.GENERIC], (f"no report kind {name!r} yet (known: "
                                      f"{', '.join(REPORTS)}); using the generic report")


def _kept_tables(scn: Scenario) -> tuple[str, ...]:
    names = scn.report.get("tables", [])
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def parse(scn: Scenario) -> Report:
    """Check and read the ``[report]`` table of a loaded scenario (``ScenarioError`` for a
    bad value)."""
    kind, note = _resolve(scn)
    return Report(kind=kind, config=kind.parse(scn), tables=_kept_tables(scn), note=note,
                  comparison=parse_comparison(scn))


def write_report(ctx: ReportContext, report: Report | None = None) -> list[Path]:
    """Write the report of a finished sweep (``report``: the scenario's, parsed if not
    given); returns the files written."""
    if report is None:
        report = parse(ctx.scenario)
    return report.write(ctx)
