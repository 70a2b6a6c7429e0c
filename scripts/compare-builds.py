#!/usr/bin/env python3
"""Run catalog experiments with an earlier commit and with this checkout, side by side.

    python scripts/compare-builds.py BASE [ID ...] [--full] [--jobs 2] [--out DIR]

Builds BASE's engine and Python package in a temporary git worktree (its own target
directory), then runs `dcnsim reproduce ID --quick` (or the full experiment with --full)
with each, and compares every `results.csv`: byte-identical, or, per numeric column, the
largest relative change and the point where it happens. With no ID: every id of
`dcnsim reproduce --list`. Prints one line per experiment and writes `moved.md` (a table)
into --out. A refactor must report "identical" for every id; a model change shows what
moved and by how much.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sh(cmd: list[str], **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build_python_tree(src: Path, target: Path, dest: Path) -> Path:
    """Copy src/python to dest and put src's freshly built extension in it."""
    sh(["cargo", "build", "--release", "--quiet", "-p", "dcnsim-py"], cwd=src,
       env={**_env(), "CARGO_TARGET_DIR": str(target)})
    shutil.copytree(src / "python", dest, dirs_exist_ok=True)
    so = dest / "dcnsim" / "_core.abi3.so"
    shutil.copy(target / "release" / "lib_core.so", so)
    return dest


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def reproduce(pytree: Path, exp: str, out: Path, full: bool, jobs: int) -> Path | None:
    args = [sys.executable, "-m", "dcnsim", "reproduce", exp, "--out", str(out),
            "--jobs", str(jobs)]
    if not full:
        args.append("--quick")
    r = subprocess.run(args, capture_output=True, text=True,
                       env={**_env(), "PYTHONPATH": str(pytree)})
    if r.returncode != 0:
        return None
    hits = sorted(out.glob(f"{exp}*/results.csv"))
    return hits[0] if hits else None


def compare_csv(a: Path, b: Path) -> str:
    if a.read_bytes() == b.read_bytes():
        return "identical"
    ra = list(csv.DictReader(a.open()))
    rb = list(csv.DictReader(b.open()))
    if len(ra) != len(rb) or (ra and ra[0].keys() != rb[0].keys()):
        return f"different shape ({len(ra)} vs {len(rb)} rows)"
    worst = (0.0, "", -1, "", "")
    for i, (x, y) in enumerate(zip(ra, rb, strict=True)):
        for k in x:
            if x[k] == y[k]:
                continue
            try:
                fx, fy = float(x[k]), float(y[k])
            except ValueError:
                continue
            rel = abs(fy - fx) / max(abs(fx), 1e-12)
            if rel > worst[0]:
                worst = (rel, k, i, x[k], y[k])
    if worst[2] < 0:
        return "text columns differ"
    rel, k, i, x, y = worst
    return f"moved: largest {100 * rel:.0f} % in {k} (row {i}: {x} -> {y})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--full", action="store_true", help="full experiments, not --quick")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="builds-")))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="base-"))
    wt = tmp / "wt"
    sh(["git", "worktree", "add", "--detach", str(wt), args.base], cwd=ROOT)
    try:
        print(f"building {args.base} and the checkout ...", file=sys.stderr)
        base_py = build_python_tree(wt, tmp / "target", tmp / "py")
        cur_py = build_python_tree(ROOT, ROOT / "target", tmp / "cur-py")
        ids = args.ids or [
            line.split()[0]
            for line in sh([sys.executable, "-m", "dcnsim", "reproduce", "--list"],
                           env={**_env(), "PYTHONPATH": str(cur_py)}).splitlines()[1:]
            if line.strip()
        ]
        rows = []
        for exp in ids:
            a = reproduce(base_py, exp, args.out / "base", args.full, args.jobs)
            b = reproduce(cur_py, exp, args.out / "current", args.full, args.jobs)
            verdict = ("fails in base" if a is None else "fails now" if b is None
                       else compare_csv(a, b))
            print(f"{exp}: {verdict}", flush=True)
            rows.append((exp, verdict))
        md = ["| experiment | " + ("full" if args.full else "quick") + f" vs {args.base} |",
              "|---|---|"] + [f"| `{e}` | {v} |" for e, v in rows]
        (args.out / "moved.md").write_text("\n".join(md) + "\n")
        print(f"wrote {args.out / 'moved.md'}", file=sys.stderr)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT,
                       capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
