"""Missing values are missing, not sentinels: an unlimited ssthresh or buffer, or a
completion without a service, is an empty cell, never 9223372036854775807 or -1."""

from __future__ import annotations

import csv
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing

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
