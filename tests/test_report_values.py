"""Every `[report]` key of every shipped scenario, given a value of the wrong kind, gives a
one-line error naming `report.<key>`, never an internal error (NaN, inf and negative
values in [report] tables, the `report.figure = [1, 2]` traceback; docs/robustness.md)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from dcnsim import reports
from dcnsim._native import is_scenario_error
from dcnsim.errors import UserError
from dcnsim.scenario import load_validated

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.toml"))
ODD = ["[1, 2]", "{ a = 1 }", "nan", "inf", "-inf", "true", "[]", "[[1]]", "1e400",
       '["x", 1]', "[{ a = 1 }]"]


def _with_report_value(text: str, key: str, value: str) -> str | None:
    """`text` with `key = value` in its [report] table (None if the key's value spans lines)."""
    start = text.index("[report]")
    section = text[start:]
    m = re.search(rf"(?m)^{re.escape(key)}\s*=.*$", section)
    if m is None:
        return None
    line = m.group(0)
    if line.count("[") != line.count("]") or line.count("{") != line.count("}"):
        return None
    return text[:start] + section[: m.start()] + f"{key} = {value}" + section[m.end():]


@pytest.mark.parametrize("path", [p for p in SCENARIOS
                                  if "report" in tomllib.loads(p.read_text())],
                         ids=lambda p: p.stem)
def test_odd_report_values_are_refused_or_accepted_never_crash(path: Path,
                                                               tmp_path: Path) -> None:
    text = path.read_text()
    keys = list(tomllib.loads(text)["report"])
    tried = 0
    for key in keys:
        for value in ODD:
            bad = _with_report_value(text, key, value)
            if bad is None:
                continue
            tried += 1
            target = tmp_path / path.name
            target.write_text(bad)
            try:
                reports.parse(load_validated(target))
            except UserError as exc:
                assert "\n" not in str(exc)
            except Exception as exc:  # noqa: BLE001 -- only the engine's ScenarioError is fine
                assert is_scenario_error(exc), f"{key} = {value}: {type(exc).__name__}: {exc}"
                assert f"report.{key}" in str(exc) or "report" in str(exc), str(exc)
                assert "\n" not in str(exc)
    assert tried > 0
