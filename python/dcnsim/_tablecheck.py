"""Checks of the Python-owned tables ``[report]``, ``[sweep]`` and ``[quick]`` with the rigour
of the engine's fields (docs/robustness.md, "Python-owned tables"): types, finite numbers and
capped sizes, each mistake a one-line ``ScenarioError`` naming the file, the line when it
is known, the dotted field and what was expected (a bad value is shown cut to
``SHOW_CHARS`` characters).

``scenario.load`` calls ``check_tables`` once the tables are read. The report kinds'
own ``parse`` functions (``reports``) still check what depends on the rest of the
scenario (that a named axis exists, that the tables a figure needs are kept); this module
makes sure every value they read has the type they expect, so they never meet a list
where they want a string.

``[report]`` keys that a kind does not know are accepted, as every report kind accepts
them today (they read only their own keys; other tools add keys such as ``source``), but
they too must be well formed: finite numbers, strings, arrays and tables within the size
caps below.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scenario import Scenario

SHOW_CHARS = 80
"""A bad value is shown in an error cut to this many characters."""

MAX_STRING_CHARS = 10_000
"""Longest string in a Python-owned table (the shipped ones are under 250 characters)."""

MAX_ARRAY_ITEMS = 10_000
"""Most items of one array in ``[report]`` (a sweep axis is capped by MAX_SWEEP_POINTS)."""

MAX_DEPTH = 16
"""Deepest nesting of arrays and tables in a Python-owned table (the shipped ones: 4)."""

MAX_KEY_CHARS = 200
"""Longest dotted field name in ``[sweep]`` and ``[quick]``, and longest key in ``[report]``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def show(value: Any) -> str:
    """A value as TOML-like text for an error, cut to ``SHOW_CHARS`` characters."""
    if isinstance(value, str):
        text = '"' + value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    elif isinstance(value, (list, dict)):
        text = _shape(value)
    else:
        text = repr(value)
    if len(text) > SHOW_CHARS:
        text = text[: SHOW_CHARS - 1] + "…"
    return text


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to ``SHOW_CHARS`` characters (labels in messages)."""
    text = repr(value)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 1] + "…"


def _shape(value: Any) -> str:
    """A short spelling of an array or table: its first items, then how many."""
    if isinstance(value, list):
        head = ", ".join(show(v) for v in value[:3])
        more = f", … ({len(value)} items)" if len(value) > 3 else ""
        return f"[{head}{more}]"
    items = list(value.items())
    head = ", ".join(f"{k} = {show(v)}" for k, v in items[:3])
    more = f", … ({len(items)} keys)" if len(items) > 3 else ""
    return "{" + head + more + "}"


# The TOML types by the Python types they load as, in the order they are tried (a bool is
# also an int).
_TOML_KINDS: tuple[tuple[Any, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a float"),
    (str, "a string"),
    (list, "an array"),
    (dict, "a table"),
    ((_dt.datetime, _dt.date, _dt.time), "a date/time"),
)


def kind_of(value: Any) -> str:
    """The TOML type of a value, for "expected X, got a Y" messages."""
    for types, kind in _TOML_KINDS:
        if isinstance(value, types):
            return kind
    return type(value).__name__


class Bad(Exception):
    """A value that does not fit: ``path`` is where inside the key (``.1.stat``)."""

    def __init__(self, message: str, path: str = "", *, here: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.here = here  # named at the key itself, not at the item found (too deep)


def _got(value: Any) -> str:
    return f"got {kind_of(value)} {show(value)}"


# ------------------------------------------------------------------ value checkers

Check = Callable[[Any], None]


def any_value(value: Any, depth: int = 0) -> None:
    """Any TOML value within the caps: finite numbers, strings up to ``MAX_STRING_CHARS``,
    arrays up to ``MAX_ARRAY_ITEMS``, nesting up to ``MAX_DEPTH``."""
    if depth > MAX_DEPTH:
        raise Bad(f"nested more than {MAX_DEPTH} levels deep", here=True)
    if isinstance(value, float) and not math.isfinite(value):
        raise Bad(f"expected a finite number, got {show(value)}")
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        raise Bad(f"a string of {len(value)} characters: at most {MAX_STRING_CHARS}")
    if isinstance(value, list):
        if len(value) > MAX_ARRAY_ITEMS:
            raise Bad(f"an array of {len(value)} items: at most {MAX_ARRAY_ITEMS}")
        for i, item in enumerate(value):
            _inside(any_value, item, f".{i}", depth + 1)
    if isinstance(value, dict):
        if len(value) > MAX_ARRAY_ITEMS:
            raise Bad(f"a table of {len(value)} keys: at most {MAX_ARRAY_ITEMS}")
        for key, item in value.items():
            if len(key) > MAX_KEY_CHARS:
                raise Bad(f"a key of {len(key)} characters ({show(key)}): at most "
                          f"{MAX_KEY_CHARS}")
            _inside(any_value, item, f".{_key(key)}", depth + 1)


def _inside(check: Callable[..., None], value: Any, where: str, *args: Any) -> None:
    try:
        check(value, *args)
    except Bad as exc:
        if exc.here:
            raise
        raise Bad(exc.message, where + exc.path) from None


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else show(key)


def string(value: Any) -> None:
    if not isinstance(value, str):
        raise Bad(f"expected a string, {_got(value)}")


def name(value: Any) -> None:
    """A non-empty string (a table, column, axis or port name)."""
    if not isinstance(value, str) or not value:
        raise Bad(f"expected a non-empty name, {_got(value)}")


def table_name(value: Any) -> None:
    """The name of a result table (a file name in a sweep folder)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise Bad(f"expected a result table name such as \"queue\", {_got(value)}")


def number(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Bad(f"expected a number, {_got(value)}")
    if not math.isfinite(value):
        raise Bad(f"expected a finite number, got {show(value)}")


def positive(value: Any) -> None:
    number(value)
    if value <= 0:
        raise Bad(f"expected a positive number, got {show(value)}")


def non_negative(value: Any) -> None:
    number(value)
    if value < 0:
        raise Bad(f"expected a number >= 0, got {show(value)}")


MAX_SOURCE = 1e15
"""Largest source number in ``[report]`` (the shipped ones are under 200 000): a larger one,
such as 1e308, is a typo that would only stretch a figure's axis."""


def source_number(value: Any) -> None:
    """A number a source publishes (goodput, seconds, a count, a queue length): none of
    them can be negative, and none is above ``MAX_SOURCE``."""
    number(value)
    if not 0 <= value <= MAX_SOURCE:
        raise Bad(f"expected a number from 0 to 1e15, got {show(value)}")


def source_positive(value: Any) -> None:
    """A ``source_number`` above 0."""
    source_number(value)
    if value == 0:
        raise Bad(f"expected a number above 0 (at most 1e15), got {show(value)}")


def index(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Bad(f"expected an index (an integer >= 0), {_got(value)}")


def array(item: Check, *, min_items: int = 0, exactly: int | None = None) -> Check:
    def check(value: Any) -> None:
        if not isinstance(value, list):
            raise Bad(f"expected an array, {_got(value)}")
        if exactly is not None and len(value) != exactly:
            raise Bad(f"expected an array of {exactly} items, got {len(value)}")
        if len(value) < min_items:
            raise Bad(f"expected at least {min_items} items, got {len(value)}")
        for i, v in enumerate(value):
            _inside(item, v, f".{i}")
    return check


def table(item: Check | None = None, *, keys: Check | None = None) -> Check:
    """A table whose values pass ``item`` (and whose keys pass ``keys``)."""
    def check(value: Any) -> None:
        if not isinstance(value, dict):
            raise Bad(f"expected a table, {_got(value)}")
        for k, v in value.items():
            if keys is not None:
                _inside(keys, k, f".{_key(k)}")
            if item is not None:
                _inside(item, v, f".{_key(k)}")
    return check


def one_of(*choices: Check) -> Check:
    """A value that passes one of ``choices``. When a choice took the value's shape and
    refused an item inside it (a table of numbers holding a negative one), that choice's
    error, naming the item, is the one given."""
    def check(value: Any) -> None:
        errors = []
        inside = None
        for c in choices:
            try:
                c(value)
                return
            except Bad as exc:
                errors.append(exc.message.split(",")[0])
                if exc.path and inside is None:
                    inside = exc
        if inside is not None:
            raise inside
        raise Bad(" or ".join(errors) + f", {_got(value)}")
    return check


def choice(*names: str) -> Check:
    def check(value: Any) -> None:
        if not isinstance(value, str) or value not in names:
            raise Bad(f"expected one of {', '.join(names)}, {_got(value)}")
    return check


def flows_key(value: Any) -> None:
    if not (isinstance(value, str) and value.isdigit() and value.isascii() and int(value) >= 1):
        raise Bad(f"key {short_repr(value)} is not a number of flows")


def entries(fields: dict[str, Check]) -> Check:
    """An array of tables (``[[report.panels]]``) whose known keys pass ``fields``."""
    def check(value: Any) -> None:
        if not isinstance(value, list):
            raise Bad(f"expected an array of tables, {_got(value)}")
        for i, entry in enumerate(value):
            if not isinstance(entry, dict):
                raise Bad(f"expected a table, {_got(entry)}", f".{i}")
            for key, c in fields.items():
                if key in entry:
                    _inside(c, entry[key], f".{i}.{key}")
    return check


# ------------------------------------------------------------------ [report] per kind

SUMMARY_COLUMNS = (
    "id", "seed", "duration_s", "flows", "servers", "switch_buffer_bytes", "goodput_mbps",
    "delivered_bytes", "timeouts", "retransmits", "fast_recoveries", "drops", "marks",
    "silent_s", "rounds", "bottleneck_pkts", "events", "peak_pending",
    "jain_index", "jain_total", "flow_tput_mean_mbps", "flow_tput_std_mbps",
    "utilisation_mbps", "cbr_mbps", "cnm_sent", "cnm_received", "cnm_ignored",
    "timeouts_held_in_limiter", "pause_sent", "pause_received", "paused_s",
    "avg_minrate_mbps", "mean_queue_bytes", "mean_queue_pkts", "incast_goodput_mbps",
    "messages", "messages_done", "timeouts_small", "small_with_timeout", "fct_mean_s",
    "fct_small_mean_s", "fct_small_p99_s", "fct_medium_mean_s", "fct_medium_p99_s",
    "fct_large_mean_s", "fct_large_p99_s", "slowdown_mean", "slowdown_p50", "slowdown_p95",
    "slowdown_p99", "partial", "simulated_s")
"""Every column the engine's ``summary`` table can have (docs/tables.md describes them);
``[report] columns`` picks the printed ones from these."""


def summary_column(value: Any) -> None:
    string(value)
    if value not in SUMMARY_COLUMNS:
        raise Bad(f"unknown summary column {short_repr(value)}: expected one of "
                  f"{', '.join(SUMMARY_COLUMNS)} (docs/tables.md)")


_COMMON: dict[str, Check] = {"kind": name, "title": string,
                             "tables": array(table_name),
                             "columns": array(summary_column, min_items=1)}

_INCAST: dict[str, Check] = {"ceiling_mbps": positive,
                             "source_silent_table": table(array(source_number, min_items=1),
                                                          keys=flows_key)}
_VARIANT_TABLE: dict[str, Check] = {"rows": name, "metric": name,
                                    "metrics": array(name, min_items=1),
                                    "source": table(one_of(source_number, table(source_number)))}
REPORT_FIELDS: dict[str, dict[str, Check]] = {
    "generic": {},
    "incast-goodput": _INCAST,
    "qcn-incast": {**_INCAST, "goodput_column": name,
                   "source_mean_queue_below_pkts": source_positive, "table_buffer": positive,
                   "source_table3": table(array(source_number, exactly=4), keys=flows_key),
                   "source_cnms": table(source_number, keys=flows_key),
                   "source_timeouts_per_flow": table(source_number, keys=flows_key)},
    "variant-table": _VARIANT_TABLE,
    "qcn-baseline": {**_VARIANT_TABLE, "hotspot": name, "bottleneck": name,
                     "figure_variants": array(name), "window": array(number, exactly=2),
                     "groups": table(), "source_groups": table(source_number),
                     "source_spread": table(array(source_number, exactly=2))},
    "odctcp-after-cwr": {"after_s": non_negative},
    "odctcp-fct": {"group": one_of(name, array(name, min_items=1)), "x": name,
                   "bins": array(index, min_items=2), "app": index},
    "odctcp-fairness": {"x": name, "group": name},
    "panels": {"panels": entries({"table": table_name, "x": name, "y": array(name, min_items=1),
                                  "where": table(), "ylabel": string, "xlabel": string,
                                  "scale": number, "style": choice("line", "steps", "points")}),
               "numbers": entries({"label": string, "table": table_name, "column": name,
                                   "stat": choice("mean", "max", "min", "last", "p99", "sum"),
                                   "where": table(), "after_s": number, "before_s": number,
                                   "scale": number})},
    "tcn": {"figure": choice("fig1", "fig2", "fig3", "fig5", "fct"), "scheme_axis": name,
            "scheme_names": array(string), "port": name, "load_axis": name,
            "steady_after_s": non_negative, "change_s": non_negative, "target_bps": positive},
}
"""The keys each report kind reads and what each must be. A kind missing here (or an
unknown kind, reported by the generic report) gets the common keys' checks only."""


def check_report(scn: Scenario, report: dict[str, Any]) -> None:
    """``[report]``: every value within the caps, and the keys its kind reads typed."""
    kind = report.get("kind", "generic")
    fields = {**_COMMON, **REPORT_FIELDS.get(kind if isinstance(kind, str) else "", {})}
    for key, value in report.items():
        if len(key) > MAX_KEY_CHARS:
            raise scn.error("report", None, f"a key of {len(key)} characters ({show(key)}): "
                            f"at most {MAX_KEY_CHARS}")
        try:
            any_value(value, 1)
            if key in fields:
                fields[key](value)
        except Bad as exc:
            raise _error(scn, "report", key, exc) from None


def _error(scn: Scenario, table_: str, key: str, exc: Bad) -> ValueError:
    """The error for ``[table_] key``, or for an item inside it (``report.panels.1.stat``)."""
    if exc.path:
        return scn.error(table_, None, exc.message, sub=f"{_key(key)}{exc.path}")
    return scn.error(table_, key, exc.message)


# ------------------------------------------------------------------ [sweep], [quick]


def check_key_size(scn: Scenario, table_: str, key: str, sub: str | None = None) -> None:
    if len(key) > MAX_KEY_CHARS:
        raise scn.error(table_, None, f"a field name of {len(key)} characters "
                        f"({show(key)}): at most {MAX_KEY_CHARS}", sub=sub)


def check_override(scn: Scenario, table_: str, key: str, value: Any,
                   sub: str | None = None) -> None:
    """One override value of ``[quick]`` or one value of a sweep axis: within the caps (the
    engine checks its type and range for the field when it checks the point)."""
    try:
        any_value(value, 1)
    except Bad as exc:
        where = f" (at {key}{exc.path})" if exc.path else ""
        raise scn.error(table_, key, exc.message + where, sub=sub) from None
