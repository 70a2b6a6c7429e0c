"""Override values: Python values <-> TOML value literals, and dotted keys.

The engine takes overrides as ``("dotted.key", "toml literal")`` pairs. The
Python side keeps overrides as Python values (so sweeps can compare and report
them) and converts them here, in one canonical spelling.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from .errors import UserError

_KEY = re.compile(r"[^\s=.\"']+(?:\.[^\s=.\"']+)*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def is_dotted_key(key: str) -> bool:
    """Whether ``key`` is a usable override path such as ``topology.servers``."""
    return bool(_KEY.fullmatch(key))


# Every character a TOML basic string must escape: the short escapes, else \uXXXX for the
# other control characters and DEL (one `str.translate` pass: a 2 MB value took 0.7 s
# character by character).
_QUOTE_TABLE = {c: f"\\u{c:04x}" for c in [*range(0x20), 0x7F]}
_QUOTE_TABLE.update({ord(k): v for k, v in _ESCAPES.items()})


def _quote(text: str) -> str:
    return '"' + text.translate(_QUOTE_TABLE) + '"'


def to_toml(value: Any) -> str:
    """Spell a Python value as a TOML value literal (canonical: equal values, equal text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = []
        for key, val in value.items():
            name = key if _BARE_KEY.fullmatch(str(key)) else _quote(str(key))
            items.append(f"{name} = {to_toml(val)}")
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def parse_value(text: str) -> Any:
    """Read a TOML value literal; text that is not one is taken as a plain string."""
    try:
        doc = tomllib.loads(f"v = {text}\n")
    except tomllib.TOMLDecodeError:
        return text
    if list(doc) != ["v"]:
        return text
    return doc["v"]


def parse_set(arg: str) -> tuple[str, Any]:
    """Parse one ``--set key=value`` argument."""
    key, sep, raw = arg.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key:
        raise UserError(f"bad --set {arg!r}: expected key=value, e.g. topology.servers=16")
    if not is_dotted_key(key):
        raise UserError(
            f"bad --set {arg!r}: {key!r} is not a dotted field name such as topology.servers"
        )
    if not raw:
        raise UserError(f"bad --set {arg!r}: empty value (for an empty string write {key}='\"\"')")
    return key, parse_value(raw)


def parse_sets(args: list[str] | None) -> dict[str, Any]:
    """Parse repeated ``--set`` arguments; a later one wins over an earlier one."""
    overrides: dict[str, Any] = {}
    for arg in args or []:
        key, value = parse_set(arg)
        overrides.pop(key, None)
        overrides[key] = value
    return overrides


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested tables into dotted keys: ``{"sim": {"duration": 1}}`` -> ``sim.duration``.

    Both ``"sim.duration" = 1`` and ``sim.duration = 1`` (which TOML reads as a
    nested table) then name the same override. An empty table stays a value (``{}``), so
    that it is checked where it is used rather than vanish (``"topology.qcn.enabled" = {}``
    in a variant was accepted and ignored).
    """
    flat: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def literal_pairs(overrides: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Overrides as the engine takes them: ``[("dotted.key", "toml literal"), ...]``."""
    pairs = []
    for key, value in (overrides or {}).items():
        if not isinstance(key, str) or not is_dotted_key(key):
            raise UserError(f"bad override key {key!r}: expected a dotted field name")
        try:
            pairs.append((key, to_toml(value)))
        except TypeError as exc:
            raise UserError(f"bad override {key}: {exc}") from None
    return pairs


def display(value: Any) -> str:
    """Short human spelling of an override value (strings unquoted)."""
    return value if isinstance(value, str) else to_toml(value)
