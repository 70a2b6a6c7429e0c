"""The TCN authors' simulator's bench helpers that run without ns-2: the flow file made from
a kept run's ``flow.tr`` (``benches/tcn_ns2/dcnsim_point.py --ns2-flows``), replayed by dcnsim."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _point_module():
    spec = importlib.util.spec_from_file_location(
        "dcnsim_point", REPO / "benches" / "tcn_ns2" / "dcnsim_point.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_flow_file_from_an_authors_run(tmp_path):
    # flow.tr: packets, FCT (s), timeouts, src, dst, service, finish (s); start = finish -
    # FCT, counted from the script's init_schedule at 1 s; sizes in 1460-byte packets.
    tr = tmp_path / "flow.tr"
    tr.write_text("1.0 8.6528e-05 0 104 82 4 1.000087706\n"
                  "144.0 0.00123 1 3 5 7 1.0105\n")
    text = _point_module().flow_file_from_ns2(tr)
    lines = text.splitlines()
    assert lines[0] == "2"
    src, dst, pg, dport, size, start = lines[1].split()
    assert (src, dst, pg, dport, size) == ("104", "82", "4", "100", "1460")
    assert float(start) == pytest.approx(1.000087706 - 8.6528e-05 - 1.0, abs=1e-9)
    assert lines[2].split()[:5] == ["3", "5", "7", "100", str(144 * 1460)]
    assert float(lines[2].split()[5]) == pytest.approx(0.0105 - 0.00123, abs=1e-9)


def test_a_run_without_finish_times_is_refused(tmp_path):
    tr = tmp_path / "flow.tr"
    tr.write_text("1.0 8.6528e-05 0 104 82 4\n")
    with pytest.raises(SystemExit, match="no finish time"):
        _point_module().flow_file_from_ns2(tr)


def test_timeouts_after_delivery_are_the_connections_rest():
    # Connection 7 had 3 RTOs, its two messages counted 1 and 1: one fell after a delivery.
    # Connection 9 had 2, its one message counted both.
    after = _point_module().timeouts_after_delivery({7: 3, 9: 2, 11: 0}, [7, 9, 7], [1, 2, 1])
    assert after == 1
