"""Plain-text and CSV output with a fixed, deterministic spelling of numbers."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def csv_cell(value: Any) -> str:
    """One CSV cell: floats as their shortest round-trip ``repr``, so output is reproducible."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value + 0.0)  # -0.0 + 0.0 == 0.0: no "-0.0" cells
    return str(value)


def _frame_cell(value: Any) -> str:
    """One cell as pandas' ``DataFrame.to_csv`` writes it: NaN and missing (``None``)
    empty, floats by their shortest round-trip ``repr`` (``-0.0`` kept), booleans
    ``True``/``False``."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def _frame_column(values: Sequence[Any]) -> list[Any]:
    """A column as pandas holds it: integers with missing values (the engine's columns
    of optional integers, e.g. an unlimited ``ssthresh_bytes``) become floats."""
    if any(v is None for v in values) and any(
            isinstance(v, int) and not isinstance(v, bool) for v in values):
        return [None if v is None else float(v) for v in values]
    return list(values)


def _frame_cells(values: Sequence[Any]) -> Sequence[Any]:
    """A column's cells for ``csv.writer``, as ``_frame_cell`` spells them. The writer
    itself spells every other value as ``str`` does, which for integers, booleans, strings
    and finite floats (``str(x) == repr(x)``) is ``_frame_cell``'s spelling: only a column
    holding a missing value or a NaN is converted cell by cell."""
    if None in values or any(v != v for v in values):  # v != v: NaN
        return [_frame_cell(v) for v in _frame_column(values)]
    return values


def frame_csv(columns: Mapping[str, Sequence[Any]]) -> str:
    """An engine table (column -> values) as CSV text, byte for byte what pandas'
    ``DataFrame(columns).to_csv(index=False, lineterminator="\\n")`` writes, without
    importing pandas."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = list(columns)
    writer.writerow(names)
    writer.writerows(zip(*(_frame_cells(columns[name]) for name in names), strict=True))
    return buf.getvalue()


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as CSV text (missing cells empty), ``\\n`` line ends."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row.get(col)) for col in columns])
    return buf.getvalue()


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows (missing cells empty) to ``path`` atomically, ``\\n`` line ends."""
    write_text_atomic(path, csv_text(columns, rows))


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file (and a
    failed write, e.g. a full disk, leaves the old file whole and no temporary file)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """As :func:`write_text_atomic`, for binary content."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def human(value: Any) -> str:
    """Short display spelling of a value (6 significant digits for floats; a missing value,
    ``None``, as ``-``)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        value += 0.0  # no "-0.0"
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:.1f}"
        return f"{value:.6g}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                 *, align_left: int = 0) -> str:
    """Align a table of strings: the first ``align_left`` columns left, the rest right."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(w) if i < align_left else c.rjust(w)
               for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(out).rstrip()

    return "\n".join([line(header)] + [line(r) for r in rows])


def format_mapping(row: Mapping[str, Any]) -> str:
    """A one-row table printed as aligned ``name  value`` lines."""
    return format_table(["field", "value"], [[k, human(v)] for k, v in row.items()],
                        align_left=1)
