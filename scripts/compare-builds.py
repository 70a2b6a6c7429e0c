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

    python scripts/compare-builds.py BASE --tables [FILE ...] [--full]

compares every table instead: each scenario file of `scenarios/` (or the FILEs given) runs
its base point (`dcnsim run`: with its `[quick]` overrides unless --full) with both builds,
and every CSV table written (summary, ports, flows, samples, ...) must be byte-identical.
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


RUN_BASE_POINT = """
import sys
from dcnsim import api
from dcnsim.scenario import load
file, out, full = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sets = {} if full else dict(load(file).quick_overrides)
api.run(file, sets).to_dir(out)
"""


def run_tables(pytree: Path, file: Path, out: Path, full: bool) -> Path | None:
    """Run one scenario file's base point and write all its tables to out/<stem>."""
    dest = out / file.stem
    r = subprocess.run([sys.executable, "-c", RUN_BASE_POINT, str(file), str(dest),
                        "1" if full else "0"], capture_output=True, text=True,
                       env={**_env(), "PYTHONPATH": str(pytree)})
    return dest if r.returncode == 0 else None


def compare_tables(a: Path, b: Path) -> str:
    """'identical' when both folders hold the same CSV files byte for byte."""
    na = sorted(p.name for p in a.glob("*.csv"))
    nb = sorted(p.name for p in b.glob("*.csv"))
    if not na:
        return "no tables written"
    if na != nb:
        return f"different tables ({', '.join(sorted(set(na) ^ set(nb)))})"
    moved = [n for n in na if (a / n).read_bytes() != (b / n).read_bytes()]
    return "identical" if not moved else "differs in " + ", ".join(moved)


# Columns that say how an experiment came out, in order of preference.
HEADLINE = ("goodput_mbps", "incast_goodput_mbps", "small_mean_us", "service1_mbps", "q1_mbps",
            "fct_mean_s", "fct_small_mean_s",
            "mean_transfer_s", "jain_index", "mean_queue_pkts", "cnm_sent")


def compare_csv(a: Path, b: Path) -> str:
    """'identical', or how the headline column moved (largest change over the points, and
    the median of |change|) plus how many cells changed in all."""
    if a.read_bytes() == b.read_bytes():
        return "identical"
    ra = list(csv.DictReader(a.open()))
    rb = list(csv.DictReader(b.open()))
    if len(ra) != len(rb) or (ra and ra[0].keys() != rb[0].keys()):
        return f"different shape ({len(ra)} vs {len(rb)} rows)"
    changed = sum(x[k] != y[k] for x, y in zip(ra, rb, strict=True) for k in x)
    cells = sum(len(x) for x in ra)
    head = next((h for h in HEADLINE if ra and h in ra[0]), None)
    if head is None:
        return f"moved: {changed} of {cells} cells changed"
    rel = []
    for i, (x, y) in enumerate(zip(ra, rb, strict=True)):
        try:
            fx, fy = float(x[head]), float(y[head])
        except ValueError:
            continue
        rel.append((abs(fy - fx) / max(abs(fx), 1e-12), i, x[head], y[head]))
    if not rel or max(rel)[0] == 0:
        return f"{head} unchanged; {changed} of {cells} cells changed"
    worst = max(rel)
    med = sorted(r[0] for r in rel)[len(rel) // 2]
    return (f"{head}: largest change {100 * worst[0]:.0f} % (point {worst[1]}: "
            f"{float(worst[2]):.4g} -> {float(worst[3]):.4g}), median {100 * med:.1f} %; "
            f"{changed} of {cells} cells changed")


def compare_dirs(out: Path, base: str, full: bool) -> int:
    rows = []
    for a in sorted((out / "base").glob("*/results.csv")):
        b = out / "current" / a.parent.name / "results.csv"
        exp = a.parent.name.removesuffix("-quick")
        rows.append((exp, compare_csv(a, b) if b.exists() else "fails now"))
        print(f"{exp}: {rows[-1][1]}")
    write_md(out, rows, base, full)
    return 0


def write_md(out: Path, rows: list[tuple[str, str]], base: str, full: bool) -> None:
    md = ["| experiment | " + ("full" if full else "quick") + f" run vs {base} |",
          "|---|---|"] + [f"| `{e}` | {v} |" for e, v in rows]
    (out / "moved.md").write_text("\n".join(md) + "\n")
    print(f"wrote {out / 'moved.md'}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--full", action="store_true", help="full experiments, not --quick")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="builds-")))
    ap.add_argument("--tables", action="store_true",
                    help="run each scenario file's base point and compare every table")
    ap.add_argument("--compare-only", action="store_true",
                    help="only compare the results already in --out/base and --out/current")
    args = ap.parse_intermixed_args()
    if args.compare_only:
        return compare_dirs(args.out, args.base, args.full)
    tmp = Path(tempfile.mkdtemp(prefix="base-"))
    wt = tmp / "wt"
    sh(["git", "worktree", "add", "--detach", str(wt), args.base], cwd=ROOT)
    try:
        print(f"building {args.base} and the checkout ...", file=sys.stderr)
        base_py = build_python_tree(wt, tmp / "target", tmp / "py")
        cur_py = build_python_tree(ROOT, ROOT / "target", tmp / "cur-py")
        if args.tables:
            return tables_mode(args, base_py, cur_py)
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
        write_md(args.out, rows, args.base, args.full)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT,
                       capture_output=True)
    return 0


def tables_mode(args: argparse.Namespace, base_py: Path, cur_py: Path) -> int:
    files = [Path(f) for f in args.ids] or sorted((ROOT / "scenarios").glob("*.toml"))
    rows = []
    for f in files:
        a = run_tables(base_py, f, args.out / "base", args.full)
        b = run_tables(cur_py, f, args.out / "current", args.full)
        verdict = ("fails in base" if a is None else "fails now" if b is None
                   else compare_tables(a, b))
        print(f"{f.stem}: {verdict}", flush=True)
        rows.append((f.stem, verdict))
    write_md(args.out, rows, args.base, args.full)
    return 0 if all(v == "identical" for _, v in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
