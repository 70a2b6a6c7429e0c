"""The ``dcnsim`` command line: a thin layer over the Python API.

Every mistake in the input ends as ``dcnsim: error: <message>`` and exit status 2;
an unexpected exception is reported in one line as a bug (status 1). Set
``DCNSIM_DEBUG=1`` to see the traceback of such a bug.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import io
import os
import shlex
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from . import __version__, _toml, executors, store
from ._messages import shorten
from ._native import core, is_scenario_error
from ._runopts import add_run_limits, run_limits
from ._tables import csv_text, format_mapping, format_table, human, write_text_atomic
from .api import Result, run, validate
from .errors import CheckFailed, ExtensionMissingError, RunFailed, UserError
from .runs import merge_dirs, point_id
from .scenario import Plan, Scenario, load, load_validated, make_plan, read_text, validate_points
from .sweep import PointFailed, SweepInterrupted, run_sweep, summary_row

if TYPE_CHECKING:
    from . import catalog, reports, validation
    from .reports import Report
else:

    class _Later(ModuleType):
        """A submodule imported on first attribute access: the report and catalog modules
        (most of the package's import time) are not needed by `dcnsim run`, which should
        reach its first event quickly."""

        def __getattr__(self, attr: str) -> Any:
            # A plain import statement, so that the package's import graph (and its test for
            # cycles) sees these edges; the three load together on first use.
            from . import catalog, reports, validation

            module = {"catalog": catalog, "reports": reports,
                      "validation": validation}[self.__name__.rpartition(".")[2]]
            self.__dict__.update(module.__dict__)
            return getattr(module, attr)

    catalog, reports, validation = _Later("catalog"), _Later("reports"), _Later("validation")

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
BENCH_SCENARIO = "bench-incast"
BENCH_POINTS = ((8, "256KiB"), (64, "256KiB"))
EXIT_USER = 2
#: How the engine's ``stopped`` reason starts when memory ran out (``dcnsim::OUT_OF_MEMORY``).
OUT_OF_MEMORY = "out of memory"
EXIT_BUG = 1
EXIT_INTERRUPTED = 130
T = TypeVar("T")


def _err(message: str) -> None:
    print(f"dcnsim: error: {shorten(message)}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------ helpers


def _scenario_text(file: str) -> str:
    path = Path(file)
    if path.is_dir():
        raise UserError(f"{file} is a directory, not a scenario file")
    try:
        return read_text(path)
    except FileNotFoundError:
        raise UserError(f"scenario file {file} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read scenario file {file}: {exc.strerror or exc}") from None


def _output_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create output directory {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"output directory {path} is not writable")
    return path


def _new_dirs(path: Path) -> list[Path]:
    """The folders ``path.mkdir(parents=True)`` would create, innermost first."""
    made = []
    for p in [path, *path.parents]:
        if p.exists():
            break
        made.append(p)
    return made


def _remove_if_empty(folders: Sequence[Path]) -> None:
    """Remove the folders this run made (innermost first) that are still empty: a run
    refused for bad input leaves no empty output folder behind."""
    for p in folders:
        try:
            p.rmdir()
        except OSError:  # not empty (or already gone): keep it and its parents
            return


def _scenario_ids() -> dict[str, Path]:
    return {p.stem: p for p in sorted(SCENARIO_DIR.glob("*.toml"), key=lambda p: p.stem)}


def _scenario_by_id(ident: str) -> Path:
    ids = _scenario_ids()
    if ident in ids:
        return ids[ident]
    close = difflib.get_close_matches(ident, list(ids), n=4, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UserError(f"unknown scenario id {ident!r}{hint} (`dcnsim reproduce --list` lists them)")


class _Abandoned(Exception):
    """Ctrl-C while the engine was running in the foreground."""


def _interruptible(fn: Callable[[], T],
                   meanwhile: tuple[threading.Event, Callable[[], None]] | None = None) -> T:
    """Call ``fn`` in a worker thread so Ctrl-C is seen at once (the engine holds no GIL
    but cannot be stopped from Python: on Ctrl-C the process leaves without it).
    ``meanwhile`` = (``due``, ``work``): once ``fn`` sets ``due``, ``work`` runs here, in
    the main thread, while ``fn`` goes on — or right after it, when ``fn`` finished before
    this thread saw ``due`` (a short run on a busy machine). At most once; not at all if
    ``fn`` fails or never sets ``due``."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 -- handed to the main thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="dcnsim-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            if meanwhile is None:
                worker.join(0.2)
            elif meanwhile[0].wait(0.01):
                meanwhile[1]()
                meanwhile = None
    except KeyboardInterrupt:
        raise _Abandoned from None
    if "error" in box:
        raise box["error"]
    if meanwhile is not None and meanwhile[0].is_set():
        meanwhile[1]()
    value: T = box["value"]
    return value


class _RunProgress:
    """A progress bar over simulated time for a single run (only on an interactive
    terminal; silent under CI)."""

    def __init__(self) -> None:
        self.bar: Any = None
        if sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true"):
            from tqdm import tqdm

            self.bar = tqdm(total=100, desc="simulated time", unit="%", file=sys.stderr,
                            leave=False, bar_format="{l_bar}{bar}| {n:.0f}% [{elapsed}]")

    def update(self, fraction: float) -> None:
        if self.bar is not None:
            self.bar.n = min(100.0, 100.0 * fraction)
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _resume_command(argv: Sequence[str]) -> str:
    kept = [a for a in argv if a != "--fresh"]
    return shlex.join(["dcnsim", *kept])


# ------------------------------------------------------------------------ commands


def cmd_run(args: argparse.Namespace) -> int:
    sets = _toml.parse_sets(args.set)
    text = _scenario_text(args.file)
    # The output folder is made (and checked writable) before simulating: a result that
    # cannot be written would be lost.
    out_path = Path(args.out) if args.out else Path("out") / Path(args.file).stem
    made = _new_dirs(out_path)
    out = _output_dir(out_path)
    bar = _RunProgress()
    # The engine's first progress call says the scenario is built and valid and the
    # simulation starts: the store's writer (pyarrow) is loaded meanwhile (`store.preload`).
    started = threading.Event()

    def progress(fraction: float) -> None:
        started.set()
        bar.update(fraction)

    try:
        result = _interruptible(lambda: run(args.file, sets, text=text, progress=progress,
                                            **run_limits(args)),
                                meanwhile=(started, store.preload))
    except BaseException:
        _remove_if_empty(made)
        raise
    finally:
        bar.close()
    _print_warnings(result.warnings)
    try:
        written = result.to_dir(out)
    except OSError as exc:
        raise UserError(f"cannot write results to {out}: {exc.strerror or exc}") from None
    print(format_mapping(result.summary_row))
    _warn_pcap_truncated(result)
    print(f"\nwrote {', '.join(str(p.relative_to(out)) for p in written)} to {out} "
          f"(simulated in {result.wall_s:.2f} s)")
    if result.stopped and result.stopped.startswith(OUT_OF_MEMORY):
        raise RunFailed(f"{args.file}: {result.stopped} (partial, written to {out})")
    if not store.available():
        print(f"dcnsim: note: {store.NO_PYARROW}", file=sys.stderr)
    return 0


def _print_warnings(warnings: Sequence[str]) -> None:
    for w in warnings:
        print(f"dcnsim: warning: {shorten(w)}", file=sys.stderr)


def _warn_pcap_truncated(result: Result) -> None:
    """A note on stderr for each capture that hit ``[measure] pcap_max_bytes``."""
    table = result.raw.get("pcap")
    if table is None:
        return
    for port, frames, lost in zip(table["port"], table["frames"], table["not_captured"],
                                  strict=True):
        if lost > 0:
            print(f"dcnsim: warning: capture of port {port} reached pcap_max_bytes after "
                  f"{frames} frames; {lost} later frames are not in it "
                  "(raise measure.pcap_max_bytes)", file=sys.stderr)


def _sweep(file: Path, sets: dict[str, Any], out_root: Path, args: argparse.Namespace,
           argv: Sequence[str]) -> int:
    scn, report, plan = _plan(file, sets, quick=args.quick)
    if args.list_points:
        return _list_points(plan)
    shard = _shard_points(plan, args.shard)
    _check_pool(args)
    with executors.choose(cluster=args.cluster) as pool:
        _run_and_report(scn, report, plan, out_root, args, pool, shard=shard)
    return 0


def _plan(file: Path, sets: dict[str, Any], *, quick: bool) -> tuple[Scenario, Report, Plan]:
    """Load and check a scenario and its report; its plan of points."""
    text = _scenario_text(str(file))
    scn = load_validated(file, sets, text=text)
    report = reports.parse(scn)
    return scn, report, make_plan(scn, quick=quick, sets=sets)


def _check_pool(args: argparse.Namespace) -> None:
    if args.cluster and args.jobs:
        raise UserError("--jobs is for this machine's threads; with --cluster each Dask worker "
                        "runs as many points as it has threads (dask worker --nthreads)")


def _run_and_report(scn: Scenario, report: Report, plan: Plan, out_root: Path,
                    args: argparse.Namespace, pool: executors.Pool, *,
                    shard: Plan | None = None, stdout: IO[str] | None = None) -> Path:
    """Run the points of ``plan`` (of ``shard`` if given) not yet done in its folder under
    ``out_root``, then write the report (not for a shard); returns the folder. What the
    report prints goes to ``report.txt`` and to ``stdout``; given ``stdout`` (a catalog
    run), the notes on stderr and the closing line are left out as well."""
    validate_points(plan)
    catalog_run = stdout is not None
    if report.note and not catalog_run:
        print(f"dcnsim: note: {report.note}", file=sys.stderr)
    out = _output_dir(out_root / (scn.id + ("-quick" if args.quick else "")))
    try:
        outcome = run_sweep(shard or plan, out, jobs=args.jobs or executors.cpu_count(),
                            keep=report.tables, fresh=args.fresh, executor=pool.executor,
                            where=pool.description)
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc.strerror or exc}") from None
    if shard is not None:
        print(f"dcnsim: shard {args.shard}: {len(shard.points)} of {len(plan.points)} points "
              f"done in {out}; join the shards' folders with `dcnsim merge DIR SHARD_DIR...`, "
              "then run the same sweep with --out on the merged folder's parent for the "
              "report", file=sys.stderr)
        return out
    printed = _Tee(stdout or sys.stdout)
    ctx = reports.ReportContext(plan=plan, records=outcome.records, out_dir=out, out=printed)
    if args.quick and not catalog_run:
        print("dcnsim: note: a --quick run (smaller scale, same code path): source figures "
              "printed below are those of the full-scale experiment", file=sys.stderr)
    try:
        written = report.write(ctx)
        write_text_atomic(out / catalog.REPORT_TEXT, printed.getvalue())
    except OSError as exc:
        raise UserError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    if not catalog_run:
        print(f"\nwrote {', '.join(str(p) for p in written)} (runs in {outcome.runs_path})")
    return out


class _Tee(io.StringIO):
    """A text buffer that also writes everything to another stream."""

    def __init__(self, also: IO[str]) -> None:
        super().__init__()
        self.also = also

    def write(self, text: str) -> int:
        self.also.write(text)
        return super().write(text)


def _shard_points(plan: Plan, shard: str | None) -> Plan | None:
    """The points of shard ``I/N`` (every N-th point from the I-th, 1-based), or None."""
    if shard is None:
        return None
    try:
        i_text, n_text = shard.split("/")
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise UserError(f"bad --shard {shard!r}: expected I/N, e.g. 2/8") from None
    if not 1 <= i <= n:
        raise UserError(f"bad --shard {shard!r}: expected 1 <= I <= N")
    return dataclasses.replace(plan, points=[p for p in plan.points if p.index % n == i - 1])


def _list_points(plan: Plan) -> int:
    """Print every point of the plan: index, stable id and label (for job arrays)."""
    version = str(core().version())
    for p in plan.points:
        print(f"{p.index}\t{point_id(plan.scenario, version, p)}\t{p.label()}")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    target = _output_dir(Path(args.target))
    sources = [Path(s) for s in args.sources]
    added, copied = merge_dirs(target, sources)
    print(f"merged {len(sources)} folders into {target}: {added} records, {copied} point "
          "folders")
    return 0


def cmd_sweep(args: argparse.Namespace, argv: Sequence[str]) -> int:
    sets = _toml.parse_sets(args.set)
    return _sweep(Path(args.file), sets, Path(args.out or "out"), args, argv)


def cmd_reproduce(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.list:
        if args.id or args.all:
            raise UserError("give a scenario id, --all or --list, not two of them")
        return _list_scenarios()
    if args.all:
        if args.id:
            raise UserError("give either a scenario id or --all, not both")
        return _reproduce_all(args)
    if not args.id:
        raise UserError("give a scenario id or --all (`dcnsim reproduce --list` lists them)")
    return _sweep(_scenario_by_id(args.id), {}, Path(args.out or "results"), args, argv)


def _reproduce_all(args: argparse.Namespace) -> int:
    """Every catalog id, one after the other (each resumed from its folder), then one HTML
    page of them all; an id that fails is reported and the others go on."""
    for flag, given in (("--shard", args.shard), ("--list-points", args.list_points)):
        if given:
            raise UserError(f"{flag} is for one scenario id, not --all")
    _check_pool(args)
    ids = _scenario_ids()
    if not ids:
        raise UserError(f"no scenario files in {SCENARIO_DIR}")
    out_root = _output_dir(Path(args.out or "results"))
    verdicts, doc = validation.load(known=set(ids))
    if doc is None:
        print(f"dcnsim: note: {validation.VALIDATION_DOC} not found (it is in the source "
              "tree): the report shows no verdicts", file=sys.stderr)
    mode = " --quick" if args.quick else ""
    print(f"dcnsim: catalog: {len(ids)} ids{mode} into {out_root}/ (an id already done is "
          "reused, not rerun)", file=sys.stderr, flush=True)
    items: list[catalog.Item] = []
    start = time.perf_counter()
    with executors.choose(cluster=args.cluster) as pool:
        for n, (ident, path) in enumerate(ids.items(), 1):
            failed = sum(1 for item in items if item.error is not None)
            note = f", {failed} failed" if failed else ""
            print(f"dcnsim: catalog [{n}/{len(ids)}] {ident} (elapsed "
                  f"{_clock(time.perf_counter() - start)}{note})", file=sys.stderr, flush=True)
            items.append(_catalog_item(ident, path, out_root, args, pool))
    wall = time.perf_counter() - start
    index = catalog.write_index(out_root, items, verdicts, quick=args.quick, doc=doc,
                                wall_s=wall)
    failed_items = [item for item in items if item.error is not None]
    print(f"wrote {index}: {len(items)} ids in {_clock(wall)}, "
          f"{len(items) - len(failed_items)} reported, {len(failed_items)} failed")
    if failed_items:
        _err(f"{len(failed_items)} of {len(items)} ids failed: "
             + "; ".join(f"{item.ident}: {item.error}" for item in failed_items))
        return EXIT_BUG
    return 0


def _catalog_item(ident: str, path: Path, out_root: Path, args: argparse.Namespace,
                  pool: executors.Pool) -> catalog.Item:
    """Run and report one id of a catalog run; a failure is kept in the item."""
    item = catalog.Item(ident, ident)
    start = time.perf_counter()
    try:
        scn, report, plan = _plan(path, {}, quick=args.quick)
        item.title = scn.title
        meta = scn.data.get("meta")
        item.source = str(meta.get("source", "")) if isinstance(meta, dict) else ""
        item.folder = out_root / (scn.id + ("-quick" if args.quick else ""))
        _run_and_report(scn, report, plan, out_root, args, pool, stdout=io.StringIO())
    except (SweepInterrupted, _Abandoned):
        raise
    except Exception as exc:  # noqa: BLE001 -- reported, and the catalog goes on
        item.error = _failure_text(exc)
        print(f"dcnsim: catalog: {ident} failed: {item.error}", file=sys.stderr, flush=True)
    item.wall_s = time.perf_counter() - start
    return item


def _failure_text(exc: Exception) -> str:
    """One line on why an id of a catalog run failed."""
    if isinstance(exc, (UserError, ExtensionMissingError)) or is_scenario_error(exc):
        return shorten(str(exc))
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return f"cannot access{where}: {exc.strerror or exc}"
    return _bug_text(exc)


def _bug_text(exc: Exception) -> str:
    """``internal error [in sweep point P: ]Type: message``, one line."""
    where, cause = "", cast(BaseException, exc)
    if isinstance(exc, PointFailed):
        where, cause = f"in sweep point {exc.point.where()}: ", exc.original
    text = f"{type(cause).__name__}: {cause}".splitlines()[0]
    return f"internal error {where}{text}"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}:{secs:02d}"


def _list_scenarios() -> int:
    import tomllib

    rows = []
    for ident, path in _scenario_ids().items():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            report, meta = data.get("report", {}), data.get("meta", {})
            title = (report.get("title") if isinstance(report, dict) else None) or \
                (meta.get("title") if isinstance(meta, dict) else None) or ""
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            title = f"(unreadable: {exc})"
        rows.append([ident, str(title)])
    if not rows:
        print(f"no scenario files in {SCENARIO_DIR}")
        return 0
    print(format_table(["id", "title"], rows, align_left=2))
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    if args.query is None:
        for name, count, columns in store.describe(directory):
            print(f"{name} ({count} rows): {', '.join(columns)}")
        return 0
    header, rows = store.query(directory, args.query)
    if args.csv:
        sys.stdout.write(csv_text(header, [dict(zip(header, r, strict=True)) for r in rows]))
    else:
        print(format_table(header, [[human(v) for v in r] for r in rows]))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    sets = _toml.parse_sets(args.set)
    text = _scenario_text(args.file)
    _print_warnings(validate(args.file, sets, text=text))
    print(f"ok: {args.file}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(core().schema_json() if args.json else core().schema(), end="" if args.json else "\n")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    path = SCENARIO_DIR / f"{BENCH_SCENARIO}.toml"
    text = _scenario_text(str(path))
    scn = load(path, text)
    engine = core()
    rows = []
    for servers, buffer in BENCH_POINTS:
        sets = {"topology.servers": servers, "topology.switch_buffer": buffer}
        plan = make_plan(scn, quick=args.quick, sets=sets)
        overrides = plan.points[0].overrides
        name = f"incast {servers} x {buffer}" + (" (quick)" if args.quick else "")
        print(f"dcnsim: bench: {name} ...", file=sys.stderr, flush=True)
        pairs = _toml.literal_pairs(overrides)
        start = time.perf_counter()
        tables = _interruptible(functools.partial(engine.run, text, str(path), pairs))
        wall = time.perf_counter() - start
        summary = summary_row(tables)
        events = int(summary["events"])
        pkts = float(summary["bottleneck_pkts"])
        rows.append([name, human(float(summary["duration_s"])), f"{wall:.3f}", str(events),
                     _rate(events, wall), _rate(pkts, wall)])
    print(format_table(["scenario", "sim s", "wall s", "events", "events/s",
                        "bottleneck pkts/s"], rows, align_left=1))
    return 0


def _rate(count: float, wall_s: float) -> str:
    if wall_s <= 0:
        return "inf"
    rate = count / wall_s
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rate >= scale:
            return f"{rate / scale:.2f}{suffix}"
    return f"{rate:.0f}"


# ------------------------------------------------------------------------- parser


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dcnsim",
        description="Packet-level datacenter congestion-control simulator.",
        epilog="Run `dcnsim COMMAND --help` for the options of a command.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add_set(p: argparse.ArgumentParser) -> None:
        p.add_argument("--set", action="append", metavar="KEY=VALUE", default=[],
                       help="override a scenario field, e.g. --set topology.servers=16 "
                            "(VALUE is a TOML value; bare words are strings); repeatable")

    def add_sweep_opts(p: argparse.ArgumentParser, out_default: str) -> None:
        p.add_argument("--out", metavar="DIR",
                       help=f"results go to DIR/<id>/ (default: {out_default})")
        p.add_argument("--jobs", type=_jobs, metavar="N",
                       help="points run in parallel on this machine (default: number of CPUs)")
        p.add_argument("--cluster", metavar="ADDRESS",
                       help="run the points on the Dask scheduler at ADDRESS, e.g. "
                            "tcp://host:8786 (needs pip install 'dcnsim[cluster]' here and "
                            "dcnsim on every worker)")
        p.add_argument("--quick", action="store_true",
                       help="apply the scenario's [quick] table: same experiment, smaller "
                            "scale; results go to DIR/<id>-quick/")
        p.add_argument("--fresh", action="store_true",
                       help="rerun every point instead of resuming from runs.jsonl")
        p.add_argument("--shard", metavar="I/N",
                       help="run only shard I of N (every N-th point from the I-th), e.g. "
                            "for a cluster job array; join the folders with `dcnsim merge`")
        p.add_argument("--list-points", action="store_true",
                       help="print each point's index, stable id and label, and exit")

    p = sub.add_parser("run", help="run one scenario (its base point; [sweep] is ignored)")
    p.add_argument("file", metavar="FILE", help="scenario file (TOML)")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="CSV tables go to DIR (default: out/<file stem>)")
    add_run_limits(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="run every point of a scenario's [sweep] and report")
    p.add_argument("file", metavar="FILE", help="scenario file (TOML)")
    add_set(p)
    add_sweep_opts(p, "out")
    p.set_defaults(func=cmd_sweep, wants_argv=True)

    p = sub.add_parser("merge", help="join sweep folders written by --shard runs")
    p.add_argument("target", metavar="DIR", help="the sweep folder to merge into")
    p.add_argument("sources", nargs="+", metavar="SHARD_DIR", help="sweep folders to join")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("reproduce", help="rerun a catalog experiment by id (see --list), "
                                          "or all of them (--all)")
    p.add_argument("id", nargs="?", metavar="ID", help="experiment id, e.g. devkota-fig08")
    p.add_argument("--list", action="store_true", help="list the experiment ids and titles")
    p.add_argument("--all", action="store_true",
                   help="run every id of --list (each resumed from DIR/<id>/; one that fails "
                        "is reported and the rest go on) and write DIR/index.html, one "
                        "self-contained page of every figure, table and verdict")
    add_sweep_opts(p, "results")
    p.set_defaults(func=cmd_reproduce, wants_argv=True)

    p = sub.add_parser("results", help="query the Parquet results store of run and sweep "
                                        "folders with SQL (DuckDB)")
    p.add_argument("dir", metavar="DIR",
                   help="a run or sweep folder, or a folder of them (e.g. results/)")
    p.add_argument("--query", metavar="SQL",
                   help='e.g. "SELECT servers, avg(goodput_mbps) FROM summary GROUP BY 1"; '
                        "each table is a view named after it; without --query: the tables, "
                        "their row counts and columns")
    p.add_argument("--csv", action="store_true",
                   help="print the answer as CSV with every digit (default: an aligned table, "
                        "6 significant digits)")
    p.set_defaults(func=cmd_results)

    p = sub.add_parser("validate", help="check a scenario file without running it")
    p.add_argument("file", metavar="FILE", help="scenario file (TOML)")
    add_set(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="describe the scenario file format")
    p.add_argument("--json", action="store_true",
                   help="print a JSON Schema of the keys and value types instead, for editors "
                        "(e.g. a TOML language server: '#:schema ./dcnsim.schema.json')")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("bench", help="time the engine on fixed incast scenarios")
    p.add_argument("--quick", action="store_true", help="shorter simulated time")
    p.set_defaults(func=cmd_bench)
    return parser


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dcnsim`` command; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # The Parquet store's writer on the C library's allocator, unless the user chose a pool:
    # pyarrow's default (mimalloc) kept 9 MB for any run's store and 17.8 MB for a
    # 4 096-sender run's, the system allocator 5.2 and 5.6 MB, and was faster
    # (docs/performance.md). Read when pyarrow is first imported, so set before any
    # command loads it (and inherited by a sweep's worker processes).
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse has printed usage or help
        return exc.code if isinstance(exc.code, int) else EXIT_USER
    if args.version:
        print(f"dcnsim {__version__}")
        return 0
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USER
    try:
        if getattr(args, "wants_argv", False):
            return int(args.func(args, args_list))
        return int(args.func(args))
    except (UserError, ExtensionMissingError) as exc:
        _err(str(exc))
        return EXIT_USER
    except (CheckFailed, RunFailed) as exc:
        _err(str(exc))
        return EXIT_BUG
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED
    except _Abandoned:  # the engine thread cannot be stopped: leave without waiting for it
        _err("interrupted")
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BUG
    except Exception as exc:  # noqa: BLE001 -- the one place every other error ends up
        return _handle(exc, args_list)


def _handle(exc: Exception, argv: Sequence[str]) -> int:
    if is_scenario_error(exc):
        _err(str(exc))
        return EXIT_USER
    if isinstance(exc, SweepInterrupted):
        print(f"dcnsim: interrupted: {exc.done} of {exc.total} points are saved in "
              f"{exc.runs_path}", file=sys.stderr)
        print(f"dcnsim: to resume, run: {_resume_command(argv)}", file=sys.stderr, flush=True)
        if exc.abandoned:  # engine threads cannot be stopped: leave without waiting for them
            sys.stdout.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        _err(f"cannot access{where}: {exc.strerror or exc}")
        return EXIT_USER
    if os.environ.get("DCNSIM_DEBUG"):
        traceback.print_exception(exc)
    _err(f"{_bug_text(exc)} (this is a bug; please report it; "
         "DCNSIM_DEBUG=1 shows the traceback)")
    if isinstance(exc, PointFailed):
        print(f"dcnsim: finished points are saved; to resume, run: {_resume_command(argv)}",
              file=sys.stderr)
    return EXIT_BUG


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
