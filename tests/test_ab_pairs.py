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
