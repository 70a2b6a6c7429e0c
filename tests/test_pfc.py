"""802.1Qbb PFC on multi-queue ports (docs/models.md §2.4): the extra demo scenario
`pfc-priority-demo` end to end through the engine, at a shorter scale (slow-down 50-250 ms of a
0.3 s run, measured over 100-250 ms)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dcnsim._core as core
import pytest

from .conftest import SCENARIOS


def run(**overrides: str) -> dict[str, dict[str, list[Any]]]:
    path = SCENARIOS / "pfc-priority-demo.toml"
    common = {"sim.duration": '"0.3s"', "topology.rate_changes.0.at": '"50ms"',
              "topology.rate_changes.1.at": '"250ms"'}
    pairs = list({**common, **overrides}.items())
    return core.run(path.read_text(), str(path), pairs)


def rate(t: dict[str, dict[str, list[Any]]], flow: int, lo: float, hi: float) -> float:
    fr = t["flow_rate"]
    v = [r for f, s, r in zip(fr["flow"], fr["time_s"], fr["rate_mbps"], strict=True)
         if f == flow and lo < s <= hi]
    return sum(v) / len(v)


def test_pfc_keeps_the_innocent_class_pause_drags_it() -> None:
    """PFC: the innocent class-0 flow keeps ~4 Gb/s (within 10 %) while the culprit gets the
    500 Mb/s service rate; 802.3x PAUSE drags the innocent to about the culprit's rate. No
    loss either way; with PFC only priority 1 is paused on the A->B link."""
    pfc = run(**{"topology.pause.mode": '"pfc"'})
    pause = run(**{"topology.pause.mode": '"pause"'})
    for t in (pfc, pause):
        assert t["summary"]["drops"][0] == 0
        assert 400 < rate(t, 0, 0.1, 0.25) < 550
    assert rate(pfc, 1, 0.1, 0.25) > 3600
    assert rate(pause, 1, 0.1, 0.25) < 1000
    pp = pfc["pfc_ports"]
    rows = {(p, q): s for p, q, s in zip(pp["port"], pp["priority"], pp["paused_s"], strict=True)}
    assert rows[("A->B", 1)] > 0.1  # paused most of the 200 ms slow-down
    assert rows.get(("A->B", 0), 0.0) == 0.0
    assert "pfc_ports" not in pause


def test_the_same_panel_of_every_point_shares_its_y_scale(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # A reader compares the points' panels side by side: one y range per panel row.
    from dcnsim.cli import main
    from dcnsim.reports import panels

    figures: list[Any] = []

    def keep(ctx: Any, fig: Any, **_: Any) -> Path:
        figures.append(fig)
        path = tmp_path / f"figure{len(figures)}.png"
        path.write_bytes(b"")
        return path

    monkeypatch.setattr(panels, "save_figure", keep)
    assert main(["reproduce", "pfc-priority-demo", "--quick", "--out", str(tmp_path)]) == 0
    (fig,) = figures
    rows: dict[float, list[tuple[float, float]]] = {}
    for ax in fig.axes:
        if ax.get_visible():
            rows.setdefault(round(ax.get_position().y0, 3), []).append(ax.get_ylim())
    assert len(rows) >= 2 and all(len(r) >= 2 for r in rows.values()), rows
    for limits in rows.values():
        assert len(set(limits)) == 1, limits
