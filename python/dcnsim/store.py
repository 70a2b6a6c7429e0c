"""The results store: every finished run's tables as Parquet, queried with DuckDB.

::

    <dir>/store/<table>/experiment=<scenario id>/<NNNN>-<point_id>.parquet

One dataset per result table (``summary``, ``flows``, ``ports``, ...), partitioned by
experiment (hive style: DuckDB and pyarrow read ``experiment`` as a column), one file per
run, written whole (temporary file, then rename) as soon as the run is finished, by
``dcnsim run`` and by every sweep point. ``NNNN`` is the point's place in the grid (so files
sort in grid order) and ``point_id`` its stable id (``runs.point_id``), so a rerun of a point
replaces its file and shards never collide. Each row carries the run's parameters as
columns (``PARAM_COLUMNS`` and one column per override, named by its dotted key).

Writing needs pyarrow, reading DuckDB (both dependencies of dcnsim, imported only when
used); without pyarrow (an install made with ``--no-deps``) a run writes its CSV files only
and says so (``NO_PYARROW``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _toml
from .errors import RunFailed, UserError, missing_dependency

if TYPE_CHECKING:
    import pandas as pd

STORE_DIR = "store"
#: The note a run gives (once) when pyarrow is missing and the store is not written.
NO_PYARROW = ("pyarrow is not installed, so the Parquet results store is not written (it is "
              "a dependency of dcnsim: pip install pyarrow)")
#: Columns added to every row (besides the overrides and the ``experiment`` partition).
PARAM_COLUMNS = ("point_id", "point_index", "quick", "seed", "scenario_sha256")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def available() -> bool:
    """Whether runs can write the store (pyarrow is installed)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def preload() -> None:
    """Import pyarrow and pyarrow.parquet now, so that writing the store later does not
    wait for them. ``dcnsim run`` calls it in its main thread while the engine simulates in
    another (the engine holds no GIL): the import, 0.05-0.54 s on the machines measured,
    about as long as a short run, then overlaps the simulation on a second core. Not under
    an address-space limit (``write_run`` sets pyarrow's allocator up before importing it
    there) and silent when pyarrow is missing or fails to load (``write_run`` says so)."""
    if "pyarrow.parquet" in sys.modules or _address_space_limited():
        return
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except Exception:  # noqa: BLE001 -- write_run imports it again and reports
        pass


def run_file(out_dir: Path, table: str, experiment: str, index: int, point_id: str) -> Path:
    """Where one run's rows of ``table`` are stored."""
    return (out_dir / STORE_DIR / table / f"experiment={experiment}"
            / f"{index:04d}-{point_id}.parquet")


def params(point_id: str, index: int, quick: bool, seed: Any, scenario_sha256: str,
           overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The parameter columns of one run: ``PARAM_COLUMNS``, then the overrides (a value
    that is not a string, number or boolean is stored as its TOML spelling)."""
    out: dict[str, Any] = {"point_id": point_id, "point_index": index, "quick": quick,
                           "seed": seed, "scenario_sha256": scenario_sha256}
    for key, value in overrides.items():
        out[key] = value if isinstance(value, (str, int, float, bool)) else _toml.to_toml(value)
    return out


# Engine columns become Arrow arrays from buffers (`Array.from_buffers`), not through
# `pa.array` or `pa.scalar`: those import pandas on first use, whatever they are given, to
# check for pandas objects (pyarrow 26; 0.5 s, as long as the rest of a short run), and
# `dcnsim run` itself needs no pandas. The arrays are the ones `pa.array` makes (same
# types, values and nulls; `tests/test_store.py` checks them against it).


def _engine_array(pa: Any, values: Sequence[Any]) -> Any:
    """One engine column (a list of floats, of ints, of ints and None, or of str) as an
    Arrow array: float64, int64 (None a null; a column of None only is int64, one of the
    engine's optional-integer columns) or string. Anything else goes through `pa.array`."""
    from array import array

    n = len(values)
    first = next((v for v in values if v is not None), None)
    try:
        if first is None:
            return pa.nulls(n, pa.int64())
        if type(first) is float:
            return pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(array("d", values))])
        if type(first) is int:
            valid = None
            if values[0] is None or None in values:
                bits = bytearray((n + 7) // 8)
                for i, v in enumerate(values):
                    if v is not None:
                        bits[i >> 3] |= 1 << (i & 7)
                valid = pa.py_buffer(bytes(bits))
                values = [0 if v is None else v for v in values]
            if set(map(type, values)) != {int}:  # bool is an int to `array`: refused here
                raise TypeError("not only integers")
            data = pa.py_buffer(array("q", values))
            return pa.Array.from_buffers(pa.int64(), n, [valid, data])
        if type(first) is str and all(type(v) is str for v in values):
            return _strings(pa, [v.encode() for v in values])
    except (TypeError, OverflowError):
        pass
    arr = pa.array(values)
    return arr.cast(pa.int64()) if arr.type == pa.null() else arr


def _strings(pa: Any, encoded: Sequence[bytes]) -> Any:
    """A string array (large_string past 2 GiB of text, as `pa.array` would need)."""
    from array import array
    from itertools import accumulate

    offsets = [0, *accumulate(len(b) for b in encoded)]
    large = offsets[-1] >= 1 << 31
    buf = pa.py_buffer(array("q" if large else "i", offsets))
    kind = pa.large_string() if large else pa.string()
    return pa.Array.from_buffers(kind, len(encoded), [None, buf, pa.py_buffer(b"".join(encoded))])


def _repeated(pa: Any, value: Any, n: int) -> Any:
    """`value` (a point's parameter: str, bool, int or float) in each of `n` rows."""
    from array import array

    if isinstance(value, bool):
        bits = b"\xff" * ((n + 7) // 8) if value else bytes((n + 7) // 8)
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)])
    if isinstance(value, int) and -(1 << 63) <= value < 1 << 63:
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(array("q", [value]) * n)])
    if isinstance(value, float):
        return pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(array("d", [value]) * n)])
    if isinstance(value, str):
        return _strings(pa, [value.encode()] * n)
    return pa.repeat(pa.scalar(value), n)


def write_run(out_dir: Path, experiment: str, index: int, point_id: str,
              parameters: Mapping[str, Any], tables: Mapping[str, Any]) -> Path | None:
    """Write every table of one run (engine columns, or DataFrames) with ``parameters``
    as extra columns (a table's own column of the same name wins). Returns the store's
    folder, or None if pyarrow is not installed."""
    limited = _address_space_limited()
    if limited and "pyarrow" not in sys.modules:
        left = _address_space_left()
        need = PYARROW_ADDRESS_SPACE + _table_bytes(tables)
        if left is not None and left < need:
            # numpy's OpenBLAS exits and pyarrow's C++ aborts (std::bad_alloc) when the
            # limit refuses them while they load or first allocate: not attempted.
            raise RunFailed(f"out of memory: the Parquet store under {out_dir / STORE_DIR} "
                            f"needs about {need >> 20} MB of address space and "
                            f"{max(left, 0) >> 20} MB are left (ulimit -v); the CSV tables "
                            "and run.json are written")
    if limited:
        # pyarrow's default pools (mimalloc, jemalloc) reserve large address ranges and
        # crash or abort when an address-space limit refuses them (seen under `ulimit -v`:
        # a segfault in write_table); the system allocator fails with an error instead.
        # Its choice is read when pyarrow is first imported.
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
        # numpy's OpenBLAS (imported by pyarrow) sets aside buffers for one thread per
        # CPU and exits the process when it cannot.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    if limited:
        pa.set_memory_pool(pa.system_memory_pool())
    try:
        _write_tables(pa, pq, out_dir, experiment, index, point_id, parameters, tables)
    except (MemoryError, pa.ArrowMemoryError) as exc:
        raise RunFailed(f"out of memory writing the Parquet store under {out_dir / STORE_DIR} "
                        f"({exc}); the CSV tables and run.json are written") from None
    return out_dir / STORE_DIR


# Address space that importing numpy, pyarrow and pyarrow.parquet maps: 266 MB measured
# (VmSize before and after, Linux x86-64, numpy 2.4, pyarrow 26, one OpenBLAS thread), with
# a fifth more for other builds.
PYARROW_ADDRESS_SPACE = 320 << 20


def _table_bytes(tables: Mapping[str, Any]) -> int:
    """Rows x columns x 8 bytes over ``tables`` (engine columns or DataFrames)."""
    total = 0
    for table in tables.values():
        if hasattr(table, "shape"):
            rows, cols = table.shape
        else:
            cols = len(table)
            rows = max((len(v) for v in table.values()), default=0)
        total += 8 * rows * cols
    return total


def _address_space_left() -> int | None:
    """The soft ``RLIMIT_AS`` less the address space mapped now (``VmSize``), in bytes;
    None where /proc is not there."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/status") as fh:
            size = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return soft - size * 1024


def _address_space_limited() -> bool:
    """Whether this process runs under an address-space limit (``ulimit -v``)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY


def _write_tables(pa: Any, pq: Any, out_dir: Path, experiment: str, index: int, point_id: str,
                  parameters: Mapping[str, Any], tables: Mapping[str, Any]) -> None:
    for name, table in tables.items():
        if not _TABLE_NAME.fullmatch(name):
            raise ValueError(f"table name {name!r} cannot name a store dataset")
        if hasattr(table, "columns") and hasattr(table, "to_dict"):  # a pandas DataFrame
            arrow = pa.Table.from_pandas(table, preserve_index=False)
        else:
            arrow = pa.Table.from_arrays(
                [_engine_array(pa, values) for values in table.values()], names=list(table)
            )
        for key, value in parameters.items():
            if key not in arrow.column_names:
                # the point's value in every row, built from one buffer (a Python list of
                # num_rows copies took most of the client's time per point on long tables)
                arrow = arrow.append_column(key, _repeated(pa, value, arrow.num_rows))
        target = run_file(out_dir, name, experiment, index, point_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            pq.write_table(arrow, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, target)


def copy_missing(source: Path, target: Path) -> int:
    """Copy the store files of sweep folder ``source`` that ``target`` lacks (``dcnsim
    merge``); returns how many."""
    copied = 0
    root = source / STORE_DIR
    for path in sorted(root.glob("*/*/*.parquet")) if root.is_dir() else []:
        dest = target / STORE_DIR / path.relative_to(root)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.tmp")
            tmp.write_bytes(path.read_bytes())
            os.replace(tmp, dest)
            copied += 1
    return copied


# ------------------------------------------------------------------------------ reading


def datasets(directory: Path) -> dict[str, list[Path]]:
    """The store's tables under ``directory`` (a run or sweep folder, or a folder of them)
    -> their dataset folders."""
    if not directory.is_dir():
        raise UserError(f"{directory} is not a folder")
    roots = [directory / STORE_DIR] + sorted(directory.glob(f"*/{STORE_DIR}"))
    found: dict[str, list[Path]] = {}
    for root in roots:
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            if _TABLE_NAME.fullmatch(folder.name) and any(folder.glob("*/*.parquet")):
                found.setdefault(folder.name, []).append(folder)
    if not found:
        raise UserError(f"no results store in {directory} (dcnsim run and dcnsim sweep write "
                        f"one under {STORE_DIR}/ of their output folder)")
    return found


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connect(directory: Path) -> Any:
    """A DuckDB connection with one view per table of the store under ``directory``."""
    try:
        import duckdb
    except ImportError as exc:
        raise missing_dependency("reading the results store", exc) from None
    con = duckdb.connect()
    for name, folders in datasets(directory).items():
        globs = ", ".join(_sql_text(str(f / "*" / "*.parquet")) for f in folders)
        con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM read_parquet([{globs}], '
                    "hive_partitioning = true, union_by_name = true)")
    return con


def query(directory: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` over the store's views; returns the column names and the rows."""
    import duckdb

    con = connect(directory)
    try:
        cursor = con.execute(sql)
        if cursor.description is None:
            return [], []
        return [d[0] for d in cursor.description], cursor.fetchall()
    except duckdb.Error as exc:
        raise UserError(f"query failed: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def _views(con: Any) -> list[str]:
    """The names of the store's views in a ``connect`` connection, sorted."""
    rows = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                       "ORDER BY view_name").fetchall()
    return [str(name) for (name,) in rows]


def describe(directory: Path) -> list[tuple[str, int, Sequence[str]]]:
    """Each table of the store: name, rows, column names."""
    con = connect(directory)
    try:
        out: list[tuple[str, int, Sequence[str]]] = []
        for name in _views(con):
            cursor = con.execute(f'SELECT * FROM "{name}" LIMIT 0')
            columns = [str(d[0]) for d in cursor.description]
            count = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            out.append((str(name), int(count[0]) if count else 0, columns))
        return out
    finally:
        con.close()


def open_store(directory: str | os.PathLike[str], *, polars: bool = False
               ) -> dict[str, pd.DataFrame]:
    """The tables of the results store under ``directory`` (a run or sweep folder, or a
    folder of them) as pandas DataFrames (polars with ``polars=True``), rows in grid order.
    ``dcnsim.open`` is this function."""
    if polars:
        try:
            import polars as _  # noqa: F401
        except ImportError:
            raise UserError("polars is not installed: pip install polars "
                            "(or leave out polars=True for pandas)") from None
    con = connect(Path(directory))
    try:
        frames = {}
        for name in _views(con):
            relation = con.sql(f'SELECT * FROM "{name}"')
            frames[name] = relation.pl() if polars else relation.df()
        return frames
    finally:
        con.close()
