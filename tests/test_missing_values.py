"""Missing values are missing, not sentinels: an unlimited ssthresh or buffer, or a
completion without a service, is an empty cell, never 9223372036854775807 or -1."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest

from .conftest import SCENARIOS

SENTINELS = {"9223372036854775807", "-1", "18446744073709551615"}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_unlimited_ssthresh_and_buffer_are_empty_cells(tmp_path: Path) -> None:
    from dcnsim import api

    # odctcp-fig4-2: an unlimited switch buffer and a cwnd trace from the first segment.
    res = api.run(SCENARIOS / "odctcp-fig4-2.toml", {"sim.duration": "20ms"})
    assert res.raw["summary"]["switch_buffer_bytes"] == [None]
    ssthresh = res.raw["cwnd"]["ssthresh_bytes"]
    assert ssthresh[0] is None  # unlimited before the first loss
    assert all(v is None or (isinstance(v, int) and 0 < v < 2**40) for v in ssthresh)
    res.to_dir(tmp_path)
    summary = _rows(tmp_path / "summary.csv")
    assert summary[0]["switch_buffer_bytes"] == ""
    cwnd = _rows(tmp_path / "cwnd.csv")
    assert cwnd[0]["ssthresh_bytes"] == ""
    for name in ("summary", "cwnd", "flows", "ports", "completions"):
        path = tmp_path / f"{name}.csv"
        if path.exists():
            cells = {c for row in _rows(path) for c in row.values()}
            assert not cells & SENTINELS, name
    # The DataFrame view agrees: missing, not a number.
    assert res.summary["switch_buffer_bytes"].isna().all()


def test_a_limited_buffer_is_a_number() -> None:
    from dcnsim import api

    res = api.run(SCENARIOS / "devkota-fig08.toml", {"sim.duration": "2ms"})
    assert res.raw["summary"]["switch_buffer_bytes"][0] > 0


def _without_qcn_table(ident: str) -> str:
    """The shipped scenario ``ident`` with its ``[qcn]`` table (the reaction points)
    deleted."""
    text = (SCENARIOS / f"{ident}.toml").read_text(encoding="utf-8")
    text, n = re.subn(r"(?ms)^\[qcn\].*?(?=^\[)", "", text, count=1)
    assert n == 1
    return text


@pytest.mark.parametrize(("ident", "drop_qcn"), [
    ("pause-qcn-part1", True),  # [qcn] deleted: rate changes and PAUSE, no reaction point
    ("pfc-priority-demo", False),  # PFC alone
    ("devkota-fig20", False),  # ideal limiters, fixed at C/n: no QCN reaction
])
def test_without_qcn_reaction_points_there_is_no_avg_minrate(tmp_path: Path, ident: str,
                                                            drop_qcn: bool) -> None:
    """Deleting [qcn] from a QCN scenario gave `avg_minrate_mbps = nan` in
    `summary`: a run with layer 2 but no QCN reaction point has no lowest QCN rate, and the
    column is left out, as `cbr_mbps` is without a CBR app (docs/tables.md)."""
    from dcnsim import api
    from dcnsim._tables import format_mapping

    path = SCENARIOS / f"{ident}.toml"
    text = _without_qcn_table(ident) if drop_qcn else None
    res = api.run(path, {"sim.duration": "20ms"}, text=text)
    summary = res.summary_row
    assert "pause_sent" in summary  # layer 2 is there
    assert "avg_minrate_mbps" not in summary
    assert not [k for k, v in summary.items() if isinstance(v, float) and math.isnan(v)]
    assert "nan" not in format_mapping(summary)


def test_with_qcn_reaction_points_avg_minrate_is_a_rate() -> None:
    from dcnsim import api

    res = api.run(SCENARIOS / "pause-qcn-part1.toml", {"sim.duration": "20ms"})
    assert 0 < res.summary_row["avg_minrate_mbps"] <= 10_000  # its 10 Gb/s links
