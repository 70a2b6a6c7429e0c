"""docs/tables.md lists every column the engine writes: the columns of short runs of
scenarios that between them make every table, and every table of every point of the
quick catalog run, read from its Parquet store (the session's ``catalog_run`` fixture,
shared with test_labels.py). results.csv is not checked: report kinds write their own
columns there (``buffer_bytes``, ``scheme``, …)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest

from .conftest import REPO, SCENARIOS

DOC = REPO / "docs" / "tables.md"
# Scenarios that between them write every table, run for a few milliseconds each.
SHORT_RUNS = {"devkota-fig08": {}, "tcn-fig6": {}, "tcn-fig2": {}, "qcn-baseline1": {},
              "pfc-priority-demo": {}, "pause-qcn-part2": {}, "odctcp-fig4-2": {},
              "odctcp-fairness": {}, "devkota-fig30": {}}
SHORT = {"sim.duration": "20ms"}
# The store's parameter columns (store.params), beside the sweep's overrides.
NOT_ENGINE = {"wall_s", "point_index", "point_id", "quick", "scenario_sha256", "experiment",
              "variants"}


def documented() -> tuple[set[str], list[str]]:
    """Every backticked name in docs/tables.md and the words of its section titles
    (table names); ``drops_*`` stands for no column (each reason is listed by name)."""
    text = DOC.read_text(encoding="utf-8")
    names = set(re.findall(r"`([a-z][a-z0-9_]*\*?)`", text))
    for title in re.findall(r"^## (.*)$", text, flags=re.MULTILINE):
        names.update(re.findall(r"[a-z][a-z0-9_]*", title))
    return {n for n in names if not n.endswith("*")}, sorted(n for n in names if n.endswith("*"))


def missing(columns: set[str]) -> set[str]:
    names, _ = documented()
    return {c for c in columns - NOT_ENGINE if c not in names}


@pytest.mark.parametrize("ident", sorted(SHORT_RUNS))
def test_columns_of_short_runs_are_documented(ident: str) -> None:
    from dcnsim import api
    from dcnsim.scenario import load, make_plan

    scn = load(SCENARIOS / f"{ident}.toml")
    point = make_plan(scn, quick=True).points[0]
    res = api.run(SCENARIOS / f"{ident}.toml", {**point.overrides, **SHORT})
    names, _ = documented()
    for table, columns in res.raw.items():
        assert table in names, f"table {table} is not in docs/tables.md"
        assert missing(set(columns)) == set(), table


def test_tables_of_the_catalog_are_documented(catalog_run: tuple[Path, str, str]) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out, _, _ = catalog_run
    seen: dict[str, set[str]] = {}
    for path in out.glob("*-quick/store/*/*/*.parquet"):
        table = path.parent.parent.name
        names = set(pq.read_schema(path).names)
        seen.setdefault(table, set()).update(n for n in names if "." not in n)
    for path in out.glob("*-quick/points/*/*.csv"):
        with path.open(newline="") as fh:
            seen.setdefault(path.stem, set()).update(next(csv.reader(fh), []))
    names, _ = documented()
    assert "summary" in seen and "flows" in seen
    for table, columns in seen.items():
        assert table in names, f"table {table} is not in docs/tables.md"
        assert missing(columns) == set(), table
