"""Fast start: `dcnsim run` writes its tables without building DataFrames, and
writes them byte for byte as pandas did."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from dcnsim._tables import frame_csv

ROOT = Path(__file__).resolve().parent.parent
# `dcnsim run` of a 1 ms devkota-fig08 into the folder sys.argv[1], as a line of Python.
RUN_FIG08 = (f"cli.main(['run', {str(ROOT / 'scenarios' / 'devkota-fig08.toml')!r}, "
             "'--set', 'sim.duration=1ms', '--out', sys.argv[1]])\n")


def python_out(code: str, *args: Path) -> str:
    """What `python -c code args...` prints (it must exit 0)."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, check=True).stdout


def run_fig08_with_store(tmp_path: Path, setup: str, report: str) -> str:
    """What a `dcnsim run` of RUN_FIG08 into tmp_path/out prints after the lines `setup`
    (with sys, threading, cli and store imported), ending with `EXIT <code> <report>`;
    checks that its Parquet store was written (skipped without pyarrow)."""
    pytest.importorskip("pyarrow")
    code = ("import sys, threading\nfrom dcnsim import cli, store\n" + setup
            + f"code = {RUN_FIG08}" + f"print('EXIT', code, {report})\n")
    out = python_out(code, tmp_path / "out")
    assert list((tmp_path / "out").rglob("*.parquet")), "no store written"
    return out


def test_frame_csv_writes_what_pandas_writes() -> None:
    columns = {
        "f": [0.1, 1e-05, 1e16, -0.0, math.nan, math.inf, 946.0, 123456789.125, 2.5e-300],
        "i": [0, -1, 9223372036854775807, 3, 4, 5, 6, 7, 8],
        "s": ["a", "b,c", 'q"uote', "", "sw->client", "ünï", "x\ny", " lead", "end "],
        "b": [True, False, True, True, False, False, True, False, True],
        # Finite floats and infinities, no NaN: written as the csv module spells them.
        "g": [0.1, 1e-05, 1e16, -0.0, math.inf, -math.inf, 946.0, 123456789.125, 2.5e-300],
    }
    want = pd.DataFrame(columns).to_csv(index=False, lineterminator="\n")
    assert frame_csv(columns) == want
    empty = {"a": [], "b": []}
    assert frame_csv(empty) == pd.DataFrame(empty).to_csv(index=False, lineterminator="\n")
    one = {"only": [""]}
    assert frame_csv(one) == pd.DataFrame(one).to_csv(index=False, lineterminator="\n")
    # Optional integers (unlimited ssthresh, an unlimited buffer): missing cells are empty.
    missing = {"opt": [14600, None, 2**60 + 1], "none": [None, None, None],
               "f": [1.5, None, math.nan]}
    assert frame_csv(missing) == pd.DataFrame(missing).to_csv(index=False, lineterminator="\n")
    assert frame_csv({"one": [None]}) == pd.DataFrame({"one": [None]}).to_csv(
        index=False, lineterminator="\n")


def test_run_tables_are_pandas_free_until_asked(tmp_path: Path) -> None:
    """A run's files come from the engine's columns; the DataFrames are made on first use
    and hold the same values."""
    from dcnsim import api

    res = api.run(ROOT / "scenarios" / "devkota-fig08.toml", {"sim.duration": "2ms"})
    assert res._frames is None
    res.to_dir(tmp_path)
    assert res._frames is None, "writing the files built DataFrames"
    for name in res.raw:
        text = (tmp_path / f"{name}.csv").read_text()
        assert text == res.tables[name].to_csv(index=False, lineterminator="\n"), name
    assert res.summary_row["flows"] == int(res.summary["flows"].iloc[0])


def test_cli_run_imports_no_plotting_before_the_engine(tmp_path: Path) -> None:
    """Up to the engine call, `dcnsim run` loads neither pandas nor matplotlib nor the
    report modules."""
    code = (
        "import sys\n"
        "from dcnsim import cli, _native\n"
        "seen = {}\n"
        "real = _native.core\n"
        "def spy():\n"
        "    seen['mods'] = [m for m in ('pandas', 'matplotlib', 'dcnsim.reports')\n"
        "                    if m in sys.modules]\n"
        "    return real()\n"
        "import dcnsim.api as api\n"
        "api.core = spy\n"
        f"{RUN_FIG08}"
        "print('LOADED', seen['mods'])\n"
    )
    assert "LOADED []" in python_out(code, tmp_path / "out")


def test_cli_run_with_its_store_loads_no_pandas(tmp_path: Path) -> None:
    """A whole `dcnsim run`, its Parquet store included, loads neither pandas nor
    matplotlib: pyarrow would load pandas (about 0.5 s) if the store built its arrays with
    pa.array or pa.scalar."""
    out = run_fig08_with_store(
        tmp_path, "", "[m for m in ('pandas', 'matplotlib', 'duckdb') if m in sys.modules]")
    assert "EXIT 0 []" in out


def test_importing_dcnsim_loads_neither_store_library() -> None:
    """pyarrow and DuckDB are default dependencies but are imported only when used: the
    package, its API and its command line load neither (nor pandas) on import."""
    code = ("import sys\nimport dcnsim, dcnsim.api, dcnsim.cli, dcnsim.store, dcnsim.sweep\n"
            "print('LOADED', [m for m in ('pyarrow', 'duckdb', 'pandas', 'matplotlib')\n"
            "                 if m in sys.modules])\n")
    assert "LOADED []" in python_out(code)


@pytest.mark.parametrize(("chosen", "want"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_cli_run_writes_its_store_with_the_system_allocator(
        tmp_path: Path, chosen: str | None, want: str) -> None:
    """`dcnsim run` puts pyarrow on the C library's allocator (its default pool, mimalloc,
    kept about 9 MB more for any run's store), unless the user chose a pool."""
    setup = "import os\nos.environ.pop('ARROW_DEFAULT_MEMORY_POOL', None)\n"
    if chosen:
        setup += f"os.environ['ARROW_DEFAULT_MEMORY_POOL'] = {chosen!r}\n"
    out = run_fig08_with_store(
        tmp_path, setup, "__import__('pyarrow').default_memory_pool().backend_name")
    assert f"EXIT 0 {want}" in out


def test_interruptible_runs_meanwhile_in_the_main_thread_while_fn_runs() -> None:
    """`dcnsim run` loads its store's writer while the engine simulates: the work starts
    once the engine's thread says so and runs in the main thread, at the same time."""
    import threading

    from dcnsim.cli import _interruptible

    due, worked = threading.Event(), threading.Event()
    where: list[bool] = []

    def fn() -> bool:
        due.set()
        return worked.wait(10)  # still running when the work is done

    def work() -> None:
        where.append(threading.current_thread() is threading.main_thread())
        worked.set()

    assert _interruptible(fn, meanwhile=(due, work)) is True
    assert where == [True]


def test_interruptible_runs_meanwhile_after_a_run_that_ended_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A short run on a busy machine may end before the main thread looks at ``due``: the
    work still runs, once, in the main thread (forced here: the worker finishes inside
    ``start``)."""
    import threading

    from dcnsim.cli import _interruptible

    real_start = threading.Thread.start

    def start_and_finish(self: threading.Thread) -> None:
        real_start(self)
        self.join()

    monkeypatch.setattr(threading.Thread, "start", start_and_finish)
    due = threading.Event()
    where: list[bool] = []

    def fn() -> int:
        due.set()
        return 7

    def work() -> None:
        where.append(threading.current_thread() is threading.main_thread())

    assert _interruptible(fn, meanwhile=(due, work)) == 7
    assert where == [True]


def test_interruptible_skips_meanwhile_when_fn_fails_before_it_is_due() -> None:
    """A scenario the engine refuses returns its error at once, without loading pyarrow."""
    import threading

    from dcnsim.cli import _interruptible

    called: list[int] = []

    def fn() -> None:
        raise ValueError("bad scenario")

    with pytest.raises(ValueError, match="bad scenario"):
        _interruptible(fn, meanwhile=(threading.Event(), lambda: called.append(1)))
    assert called == []


def test_cli_run_loads_pyarrow_while_the_engine_simulates(tmp_path: Path) -> None:
    """With the real engine: `store.preload` runs once, in the main thread, after the
    engine's start call and before anything else loaded pyarrow, and the store is written.
    (That it overlaps the run is the test above: this 1 ms run may end before it starts.)"""
    spy = (
        "seen = []\n"
        "real = store.preload\n"
        "def spy():\n"
        "    seen.append((threading.current_thread() is threading.main_thread(),\n"
        "                 'pyarrow' in sys.modules))\n"
        "    real()\n"
        "store.preload = spy\n"
    )
    assert "EXIT 0 [(True, False)]" in run_fig08_with_store(tmp_path, spy, "seen")


def test_the_engine_start_call_is_not_reported_as_progress() -> None:
    """The engine's call with 0.0 at the start is no progress: a sweep's live view and a
    worker's event log see only the fractions after it."""
    from dcnsim import live

    runs = live.LiveRuns()
    with runs.registered():
        report = live.reporter(runs.token, 3)
        assert report is not None
        report(0.0)
        assert runs.snapshot() == {}
        report(0.25)
        assert runs.snapshot()[3][0] == 0.25
