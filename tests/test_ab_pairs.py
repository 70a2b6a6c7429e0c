"""`scripts/ab-pairs.py`: two builds timed side by side in parallel pairs (the speed
comparisons of docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "ab-pairs.py"


def burner(tmp_path: Path, name: str, loops: int) -> Path:
    """An executable that burns about `loops` iterations of CPU and prints its argument."""
    exe = tmp_path / name
    exe.write_text(f"#!{sys.executable}\nimport sys\nsum(range({loops}))\nprint(sys.argv[1:])\n")
    exe.chmod(0o755)
    return exe


def ab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=300)


def test_the_ratio_is_new_cpu_time_over_base(tmp_path: Path) -> None:
    # New burns four times the loops of base: well above 1 however busy the machine is.
    base, new = burner(tmp_path, "base", 3_000_000), burner(tmp_path, "new", 12_000_000)
    r = ab("--pairs", "2", "--reps", "2", "--json", str(base), str(new), "--", 'x="1s"')
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["pairs"]) == 2
    for p in out["pairs"]:
        assert p["base"] > 0 and p["new"] > p["base"]
        assert abs(p["ratio"] - p["new"] / p["base"]) < 1e-12
    # Two pairs, one each way round: one swapped pair, their geometric mean.
    r0, r1 = (p["ratio"] for p in out["pairs"])
    assert len(out["swapped_pairs"]) == 1
    assert abs(out["geomean"] - (r0 * r1) ** 0.5) < 1e-9
    assert out["geomean"] > 1.5
    # With two CPUs the sides swap CPUs from one pair to the next.
    cpus = [p["cpus"] for p in out["pairs"]]
    if cpus[0] is not None:
        assert cpus[1] == cpus[0][::-1]


def test_the_text_report_ends_with_the_summary(tmp_path: Path) -> None:
    exe = burner(tmp_path, "same", 100_000)
    r = ab("--pairs", "2", str(exe), str(exe))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert [x.split(" (")[0] for x in lines[:2]] == ["pair 1", "pair 2"]
    assert lines[-1].startswith("new/base: geometric mean ")


def test_bad_input_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    exe = burner(tmp_path, "ok", 10)
    missing = ab(str(tmp_path / "nope"), str(exe))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"ab-pairs: {tmp_path / 'nope'}: not an executable file"
    failing = tmp_path / "fails"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    r = ab("--pairs", "1", str(exe), str(failing))
    assert r.returncode == 1
    assert r.stderr.strip() == f"ab-pairs: {tmp_path / 'fails'} exited with status 3"
    assert "Traceback" not in r.stderr
    assert ab("--pairs", "0", str(exe), str(exe)).returncode == 2


def counter(tmp_path: Path) -> Path:
    """An engine stand-in: burns CPU and reports as many events as its first argument."""
    exe = tmp_path / "engine"
    exe.write_text(f"#!{sys.executable}\nimport sys\nsum(range(2_000_000))\n"
                   "print('summary.events = [' + sys.argv[1] + ']')\n")
    exe.chmod(0o755)
    return exe


def test_per_event_divides_by_the_events_each_side_reports(tmp_path: Path) -> None:
    # One program, two argument lists (--new-args): the new side reports four times the
    # events, so its time per event is the CPU-time ratio over four.
    exe = counter(tmp_path)
    r = ab("--pairs", "2", "--reps", "2", "--json", "--per-event", "--new-args", "4000",
           str(exe), str(exe), "1000")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for p in out["pairs"]:
        assert (p["base_events"], p["new_events"]) == (2000, 8000)
        assert abs(p["base_ns_per_event"] - p["base"] / 2000 * 1e9) < 1e-6
        assert abs(p["ratio"] - (p["new"] / 8000) / (p["base"] / 2000)) < 1e-12
    assert out["geomean"] < 0.5
    text = ab("--pairs", "2", "--per-event", "--new-args", "4000", str(exe), str(exe), "1000")
    assert text.returncode == 0, text.stderr
    assert "ns/event" in text.stdout.splitlines()[0]
    assert text.stdout.strip().splitlines()[-1].startswith("new/base per event: ")


def test_per_event_without_an_events_line_is_one_line(tmp_path: Path) -> None:
    exe = burner(tmp_path, "quiet", 10)
    r = ab("--pairs", "1", "--per-event", str(exe), str(exe))
    assert r.returncode == 1
    assert r.stderr.strip() == (f"ab-pairs: {exe} printed no 'summary.events = [N]' line "
                                "(--per-event needs dcnsim-engine's output)")
    bad = ab("--pairs", "1", "--new-args", "'unclosed", str(exe), str(exe))
    assert bad.returncode == 2
    assert bad.stderr.startswith("ab-pairs: --new-args: ") and "Traceback" not in bad.stderr


def test_serial_runs_the_sides_one_after_the_other_in_alternating_order(tmp_path: Path) -> None:
    # --serial: no CPUs per side, the order swaps from pair to pair, and the ratio is
    # still new over base (four times the loops: well above 1).
    base, new = burner(tmp_path, "base", 3_000_000), burner(tmp_path, "new", 12_000_000)
    r = ab("--serial", "--pairs", "2", "--json", str(base), str(new))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [p["cpus"] for p in out["pairs"]] == [None, None]
    assert [p["order"] for p in out["pairs"]] == [["base", "new"], ["new", "base"]]
    assert out["geomean"] > 1.5
    text = ab("--serial", "--pairs", "2", str(base), str(new))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.strip().splitlines()
    assert lines[0].startswith("pair 1 (one after the other, base first): ")
    assert lines[1].startswith("pair 2 (one after the other, new first): ")
