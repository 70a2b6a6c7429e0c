"""Scenario files as the Python layer sees them: the ``[sweep]``, ``[quick]`` and
``[report]`` tables (which the engine ignores) and the grid of sweep points.

The engine parses and checks everything else; this module reads only what it owns
and reports mistakes in it as ``ScenarioError`` naming the file, line and key. The
``[report]`` table is kept as read: ``reports`` parses it for the report's kind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import re
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from . import _tablecheck, _toml
from ._messages import shortens_scenario_errors
from ._native import core, is_scenario_error, scenario_error

PYTHON_TABLES = ("sweep", "quick", "report")
_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_EOF = re.compile(r"\s*\(at end of document\)\s*$")


MAX_SWEEP_POINTS = 100_000
"""Most points one sweep expands to (each is checked by the engine before any runs)."""

MAX_SCENARIO_BYTES = 16 * 1024 * 1024
"""Largest scenario file read (the shipped ones are under 20 KiB)."""


def read_text(path: str | Path) -> str:
    """Read a scenario file as UTF-8 text (``OSError`` if it cannot be read).

    Only regular files are read (not devices or pipes, which may never end), and at most
    ``MAX_SCENARIO_BYTES``: both are refused with a ``ScenarioError``. A leading UTF-8
    byte-order mark is dropped.
    """
    p = Path(path)
    if not stat.S_ISREG(p.stat().st_mode):
        raise scenario_error(f"{path}: not a regular file")
    with p.open("rb") as fh:
        data = fh.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise scenario_error(f"{path}: larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB, "
                             "too large for a scenario file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise scenario_error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # A byte-order mark (some Windows editors write one) is not part of the TOML text.
    return text.removeprefix("\ufeff")


def parse_toml(text: str, path: str | Path) -> dict[str, Any]:
    """Parse TOML, turning a syntax error into a ``ScenarioError`` with the line."""
    try:
        return tomllib.loads(text)
    except RecursionError:  # arrays or inline tables nested ~1000 deep
        raise scenario_error(f"{path}: TOML syntax error: arrays or tables nested too deep "
                             f"(at most {_tablecheck.MAX_DEPTH} levels are used)") from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        pos = _TOML_POS.search(msg)
        if pos:
            where = f"line {pos.group(1)}, column {pos.group(2)}: "
            msg = msg[: pos.start()]
        elif _TOML_EOF.search(msg):
            where = "at end of file: "
            msg = _TOML_EOF.sub("", msg)
        else:
            where = ""
        raise scenario_error(f"{path}: {where}TOML syntax error: {msg}") from None


def _line_of(text: str, table: str, key: str) -> int | None:
    """Best-effort line number of ``key`` inside ``[table]`` (for error messages); a dotted
    ``key`` not found there is looked for in the sub-table its first part names
    (``source."I unmodified".2`` inside ``[report.source]``)."""
    head = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]")
    first = key.split(".")[0]
    names = {f'"{key}"', f"'{key}'", key, first, f'"{first}"'}
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = bool(head.match(stripped))
            continue
        if inside and any(re.match(re.escape(n) + r"\s*[=.]", stripped) for n in names):
            return number
    parts = re.findall(r'"[^"]*"|[^."]+', key)
    if len(parts) > 1 and not parts[0].startswith('"'):
        return _line_of(text, f"{table}.{parts[0]}", ".".join(parts[1:]))
    return None


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its position in the grid and the overrides it applies."""

    index: int
    overrides: dict[str, Any]
    axis_values: dict[str, Any]
    #: A human name of each axis value (``make_plan``): the variant's label, a label the
    #: scenario gives, or a short form such as ``servers=16``; never a raw inline table.
    names: tuple[str, ...] = ()

    def key(self) -> tuple[tuple[str, str], ...]:
        return overrides_key(self.overrides)

    def label(self) -> str:
        """The point's human label for progress lines, tables and panel titles, e.g.
        ``TCP + PAUSE`` (a variant's label) or ``servers=16, seed=2``."""
        if self.names:
            return ", ".join(self.names)
        if not self.axis_values:
            return "base point"
        return ", ".join(value_name(k, v, tuple(self.axis_values)) for k, v in
                         self.axis_values.items())

    def where(self) -> str:
        """The point's axis values as fields, for error messages, which name the field
        (``topology.servers=16``); a long value is cut to ``WHERE_VALUE_CHARS``."""
        parts = [f"{k}={_cut(_toml.display(v), WHERE_VALUE_CHARS)}"
                 for k, v in self.axis_values.items()]
        return " ".join(parts) if parts else "base point"


LABEL_VALUE_CHARS = 40
WHERE_VALUE_CHARS = 32


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _short(text: str) -> str:
    return _cut(text, LABEL_VALUE_CHARS)


def short_key(key: str, keys: tuple[str, ...] = ()) -> str:
    """The shortest tail of dotted ``key`` that no other key of ``keys`` ends with, its parts
    joined by spaces: ``topology.servers`` -> ``servers``; ``topology.pause.enabled`` beside
    ``topology.qcn.enabled`` -> ``pause enabled``."""
    parts = key.split(".")
    others = [k.split(".") for k in keys if k != key]
    for n in range(1, len(parts) + 1):
        tail = parts[-n:]
        if not any(o[-n:] == tail for o in others):
            break
    return " ".join(p for p in tail if not p.isdigit()) or tail[-1]


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """A value's leaves by path (inline tables and arrays of tables opened up)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): value}


def _compound(value: Any) -> bool:
    return isinstance(value, Mapping) or (
        isinstance(value, list) and any(isinstance(v, Mapping) for v in value))


def value_text(value: Any, siblings: list[Any] | None = None) -> str:
    """A short spelling of sweep-axis value ``value``: ``16``, ``150KB``; for an inline
    table, the fields in which it differs from the axis's other values (``siblings``), as
    ``kind tcn, threshold 256us`` (never the raw table)."""
    if not _compound(value):
        return _short(_toml.display(value))
    mine = _leaves(value)
    others = [_leaves(v) for v in siblings or [] if _compound(v)]
    differ = [p for p, v in mine.items()
              if not others or any(p not in o or _toml.to_toml(o[p]) != _toml.to_toml(v)
                                   for o in others)]
    shown = ", ".join(f"{p.split('.')[-1]} {_toml.display(mine[p])}" for p in differ)
    return _short(shown or "as the others")


def value_name(key: str, value: Any, keys: tuple[str, ...] = (),
               siblings: list[Any] | None = None) -> str:
    """``value_text`` with the axis's ``short_key``: ``servers=16``, ``queues (kind tcn,
    threshold 256us)``."""
    text = value_text(value, siblings)
    name = short_key(key, keys)
    return f"{name} ({text})" if _compound(value) else f"{name}={text}"


def overrides_key(overrides: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Canonical identity of a set of overrides (for resuming sweeps)."""
    return tuple(sorted((k, _toml.to_toml(v)) for k, v in overrides.items()))


@dataclass(frozen=True)
class Scenario:
    """A scenario file with its Python-owned tables checked."""

    path: Path
    text: str
    data: dict[str, Any]
    sweep: list[tuple[str, list[Any]]] = field(default_factory=list)
    quick_overrides: dict[str, Any] = field(default_factory=dict)
    quick_sweep: dict[str, list[Any]] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    # ``[[sweep.variants]]``: label -> the set of overrides it applies (one axis, "variants").
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Human names of the values of a sweep axis, in the axis's order (a tcn report's
    # ``scheme_names`` name the values of its ``scheme_axis``).
    value_labels: dict[str, list[str]] = field(default_factory=dict)
    #: The engine's warnings about the base point (``load_validated``).
    warnings: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def title(self) -> str:
        meta = self.data.get("meta")
        meta_title = meta.get("title") if isinstance(meta, dict) else None
        title = self.report.get("title") or meta_title or self.id
        return str(title)

    def error(self, table: str, key: str | None, message: str, *,
              sub: str | None = None) -> ValueError:
        """A ``ScenarioError`` for ``[table]`` key ``key`` (inside sub-table ``sub``)."""
        anchor = sub or key
        line = _line_of(self.text, table, anchor) if anchor else None
        where = f"line {line}, " if line else ""
        parts = [table] + ([sub] if sub else []) + ([_quoted(key)] if key else [])
        name = ".".join(parts) if len(parts) > 1 else f"[{table}]"
        return scenario_error(f"{self.path}: {where}field {name}: {message}")


def _quoted(key: str) -> str:
    return f'"{key}"' if "." in key else key


def _check_key(scn: Scenario, table: str, key: str, sub: str | None = None) -> None:
    _tablecheck.check_key_size(scn, table, key, sub)
    if not _toml.is_dotted_key(key):
        raise scn.error(table, key, "expected a dotted field name such as topology.servers",
                        sub=sub)
    head = key.split(".")[0]
    if head in PYTHON_TABLES:
        raise scn.error(table, key, f"cannot override the Python-owned table [{head}]", sub=sub)


def _check_axis(scn: Scenario, table: str, key: str, values: Any,
                sub: str | None = None) -> list[Any]:
    _check_key(scn, table, key, sub)
    if not isinstance(values, list) or not values:
        raise scn.error(table, key, "expected a non-empty array of values, got "
                        f"{_tablecheck.show(values)}", sub=sub)
    if len(values) > MAX_SWEEP_POINTS:
        raise scn.error(table, key, f"{len(values)} values: at most {MAX_SWEEP_POINTS} per "
                        "sweep", sub=sub)
    seen: set[str] = set()
    for value in values:
        _tablecheck.check_override(scn, table, key, value, sub)
        literal = _toml.to_toml(value)
        if literal in seen:
            raise scn.error(table, key, f"value {_tablecheck.show(value)} appears twice",
                            sub=sub)
        seen.add(literal)
    return list(values)


def _sweep_axes(scn: Scenario, table: str, raw: Any,
                sub: str | None = None) -> dict[str, list[Any]]:
    if not isinstance(raw, dict):
        raise scn.error(table, None, "expected a table of field = [values]", sub=sub)
    return {key: _check_axis(scn, table, key, values, sub)
            for key, values in _toml.flatten(raw).items()}


VARIANTS_AXIS = "variants"


def _variants(scn: Scenario, raw: Any) -> dict[str, dict[str, Any]]:
    """``[[sweep.variants]]``: each table has a ``label`` and a set of dotted overrides that
    are applied together (a "zipped" axis); the labels form one sweep axis named variants."""
    if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
        raise scn.error("sweep", VARIANTS_AXIS,
                        "expected [[sweep.variants]] tables, each with a label and overrides")
    out: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[tuple[str, str], ...], str] = {}
    for i, table in enumerate(raw):
        table = dict(table)
        label = table.pop("label", None)
        if not isinstance(label, str) or not label or len(label) > _tablecheck.MAX_KEY_CHARS:
            raise scn.error("sweep", VARIANTS_AXIS,
                            f"variant {i}: expected a non-empty string label of at most "
                            f"{_tablecheck.MAX_KEY_CHARS} characters, got "
                            f"{_tablecheck.short_repr(label)}")
        if label in out:
            raise scn.error("sweep", VARIANTS_AXIS,
                            f"variant label {_tablecheck.short_repr(label)} appears twice")
        sets = _toml.flatten(table)
        for key, value in sets.items():
            _check_key(scn, "sweep", key, sub=VARIANTS_AXIS)
            _tablecheck.check_override(scn, "sweep", key, value, sub=VARIANTS_AXIS)
        ident = overrides_key(sets)
        if ident in seen:
            raise scn.error("sweep", VARIANTS_AXIS,
                            f"variants {_tablecheck.short_repr(seen[ident])} and "
                            f"{_tablecheck.short_repr(label)} set the same overrides")
        seen[ident] = label
        out[label] = sets
    return out


def variant_of(scn: Scenario, overrides: Mapping[str, Any]) -> str | None:
    """The label of the ``[[sweep.variants]]`` entry whose overrides ``overrides`` carries."""
    best: tuple[int, str] | None = None  # the most specific match (a variant may extend another)
    for label, sets in scn.variants.items():
        if all(k in overrides and _toml.to_toml(overrides[k]) == _toml.to_toml(v)
               for k, v in sets.items()) and (best is None or len(sets) > best[0]):
            best = (len(sets), label)
    return best[1] if best else None


@shortens_scenario_errors
def load(path: str | Path, text: str | None = None) -> Scenario:
    """Read a scenario file and check its ``[sweep]`` and ``[quick]`` tables.

    ``[report]`` is checked for types and sizes here (``_tablecheck``: the keys its kind
    reads, every value finite and within the caps); ``reports.parse`` checks the rest for
    the report's kind (what depends on the sweep: named axes, kept tables).
    """
    path = Path(path)
    if text is None:
        text = read_text(path)
    data = parse_toml(text, path)
    scn = Scenario(path=path, text=text, data=data)

    sweep_raw = data.get("sweep", {})
    variants: dict[str, dict[str, Any]] = {}
    if isinstance(sweep_raw, dict) and VARIANTS_AXIS in sweep_raw:
        sweep_raw = dict(sweep_raw)
        variants = _variants(scn, sweep_raw.pop(VARIANTS_AXIS))
    sweep = _sweep_axes(scn, "sweep", sweep_raw)
    for label, sets in variants.items():
        for key in sets:
            if key in sweep:
                raise scn.error("sweep", key, f"set by variant {_tablecheck.short_repr(label)} and "
                                "also a sweep axis")
    if variants:
        sweep[VARIANTS_AXIS] = list(variants)

    quick_raw = data.get("quick", {})
    if not isinstance(quick_raw, dict):
        raise scn.error("quick", None, "expected a table of field = value overrides")
    quick_raw = dict(quick_raw)
    quick_sweep = _sweep_axes(scn, "quick", quick_raw.pop("sweep", {}), sub="sweep")
    for key in quick_sweep:
        if key not in sweep:
            raise scn.error("quick", key, f"{key} is not an axis of [sweep]", sub="sweep")
    for label in quick_sweep.get(VARIANTS_AXIS, []):
        if not isinstance(label, str) or label not in variants:
            raise scn.error("quick", VARIANTS_AXIS, "no [[sweep.variants]] labelled "
                            f"{_tablecheck.short_repr(label)}", sub="sweep")
    quick_overrides = _toml.flatten(quick_raw)
    for key, value in quick_overrides.items():
        _check_key(scn, "quick", key)
        _tablecheck.check_override(scn, "quick", key, value)

    report = data.get("report", {})
    if not isinstance(report, dict):
        raise scn.error("report", None, "expected a table")
    for key in ("kind", "title"):
        if key in report and not isinstance(report[key], str):
            raise scn.error("report", key, "expected a string, got "
                            f"{_tablecheck.kind_of(report[key])} {_tablecheck.show(report[key])}")
    _tablecheck.check_report(scn, report)

    value_labels: dict[str, list[str]] = {}
    axis, names = report.get("scheme_axis"), report.get("scheme_names")
    if (isinstance(axis, str) and axis in sweep and isinstance(names, list)
            and len(names) == len(sweep[axis]) and all(isinstance(n, str) for n in names)):
        value_labels[axis] = list(names)

    return Scenario(path=path, text=text, data=data, sweep=list(sweep.items()),
                    quick_overrides=quick_overrides, quick_sweep=quick_sweep, report=report,
                    variants=variants, value_labels=value_labels)


@dataclass(frozen=True)
class Plan:
    """The points a sweep runs, in grid order (first axis outermost)."""

    scenario: Scenario
    quick: bool
    fixed: dict[str, Any]
    axes: list[tuple[str, list[Any]]]
    points: list[Point]


@shortens_scenario_errors
def make_plan(scn: Scenario, *, quick: bool = False,
              sets: Mapping[str, Any] | None = None) -> Plan:
    """Expand the sweep. Precedence: file < ``[quick]`` (with ``quick``) < ``sets``.

    A fixed override (from ``[quick]`` or ``sets``) naming a sweep axis pins that
    axis to the one value (``variants = "label"`` pins the variants axis). A variant's
    overrides yield to fixed overrides naming the same field.
    """
    fixed: dict[str, Any] = {}
    if quick:
        fixed.update(scn.quick_overrides)
    for key, value in (sets or {}).items():
        fixed.pop(key, None)
        fixed[key] = value
    axes: list[tuple[str, list[Any]]] = []
    for key, values in scn.sweep:
        if quick and key in scn.quick_sweep:
            values = scn.quick_sweep[key]
        if key in fixed:
            values = [fixed.pop(key)]
            if key == VARIANTS_AXIS and (not isinstance(values[0], str)
                                         or values[0] not in scn.variants):
                raise scn.error("sweep", VARIANTS_AXIS, "no [[sweep.variants]] labelled "
                                f"{_tablecheck.short_repr(values[0])}")
        axes.append((key, values))
    count = math.prod(len(values) for _, values in axes)
    if count > MAX_SWEEP_POINTS:
        sizes = " x ".join(str(len(values)) for _, values in axes)
        raise scn.error("sweep", axes[0][0],
                        f"{count} points ({sizes}): at most {MAX_SWEEP_POINTS} per sweep; "
                        "split it with --set AXIS=VALUE or shorten an axis")
    points = []
    for index, combo in enumerate(itertools.product(*(values for _, values in axes))):
        axis_values = {key: value for (key, _), value in zip(axes, combo, strict=True)}
        plain = {k: v for k, v in axis_values.items() if k != VARIANTS_AXIS}
        label = axis_values.get(VARIANTS_AXIS)
        variant = scn.variants.get(label, {}) if isinstance(label, str) else {}
        points.append(Point(index=index, overrides={**variant, **fixed, **plain},
                            axis_values=axis_values, names=_names(scn, axis_values)))
    return Plan(scenario=scn, quick=quick, fixed=fixed, axes=axes, points=points)


def axis_text(scn: Scenario, key: str, value: Any) -> str:
    """The human spelling of a value of sweep axis ``key`` (a table cell): a variant's
    label, the scenario's label for the value, or ``value_text``."""
    if key == VARIANTS_AXIS:
        return str(value)
    values = dict(scn.sweep).get(key, [])
    labels = scn.value_labels.get(key)
    if labels:
        literals = [_toml.to_toml(v) for v in values]
        literal = _toml.to_toml(value)
        if literal in literals:
            return labels[literals.index(literal)]
    return value_text(value, values)


def axis_header(scn: Scenario, key: str) -> str:
    """The column header of sweep axis ``key`` in printed tables: ``variant``, ``servers``."""
    if key == VARIANTS_AXIS:
        return "variant"
    keys = tuple(k for k, _ in scn.sweep)
    return short_key(key, keys)


def _names(scn: Scenario, axis_values: Mapping[str, Any]) -> tuple[str, ...]:
    """The human names of a point's axis values (see ``Point.names``)."""
    keys = tuple(axis_values)
    names = []
    for key, value in axis_values.items():
        text = axis_text(scn, key, value)
        if key == VARIANTS_AXIS or key in scn.value_labels:
            names.append(text)
        elif _compound(value):
            names.append(f"{short_key(key, keys)} ({text})")
        else:
            names.append(f"{short_key(key, keys)}={text}")
    return tuple(names)


@shortens_scenario_errors
def validate_points(plan: Plan, seen: set[tuple[tuple[str, str], ...]] | None = None,
                    warned: dict[str, list[str]] | None = None) -> None:
    """Have the engine check every point of ``plan`` (parsing only, no simulation).
    ``warned``, when given, collects each point's warnings: text → the points (by
    ``Point.where``) that gave it."""
    scn = plan.scenario
    seen = set() if seen is None else seen
    engine = core()
    mode = "quick " if plan.quick else ""
    for point in plan.points:
        key = point.key()
        if key in seen:
            continue
        seen.add(key)
        try:
            found = engine.validate(scn.text, str(scn.path), _toml.literal_pairs(point.overrides))
        except Exception as exc:
            if is_scenario_error(exc) and point.axis_values:
                raise scenario_error(f"{exc} (in {mode}sweep point {point.where()})") from None
            raise
        if warned is not None and point.axis_values:
            for w in found or ():
                warned.setdefault(w, []).append(f"{mode}sweep point {point.where()}".lstrip())


def point_warnings(base: Sequence[str], warned: Mapping[str, list[str]]) -> list[str]:
    """The warnings of sweep points that the base point does not give, each once with how
    many points gave it and the first one ("2 points, e.g. sweep point a=1 b=2")."""
    out = []
    for text, points in warned.items():
        if text in base:
            continue
        # The count first: a line too long is cut at its end (``_messages._fit``).
        count = f"{len(points)} points, e.g. " if len(points) > 1 else ""
        out.append(f"{text} ({count}{points[0]})")
    return out


def check_sets(path: str | PathLike[str], sets: Mapping[str, Any] | None) -> None:
    """Refuse overrides (``--set``) of the Python-owned tables: the engine ignores those
    tables, so such an override would be silently lost."""
    for key in sets or {}:
        head = str(key).split(".")[0]
        if head in PYTHON_TABLES:
            raise scenario_error(f"{path}, field {_tablecheck.show(str(key))[1:-1]}: cannot "
                                 f"override the Python-owned table [{head}]; edit the "
                                 "scenario file instead")


@shortens_scenario_errors
def load_validated(path: str | PathLike[str], sets: Mapping[str, Any] | None = None, *,
                   text: str | None = None) -> Scenario:
    """Have the engine check the scenario with ``sets`` applied, then ``load`` it."""
    path = Path(path)
    check_sets(path, sets)
    if text is None:
        text = read_text(path)
    engine_sets = {k: v for k, v in (sets or {}).items() if k != VARIANTS_AXIS}
    warnings = core().validate(text, str(path), _toml.literal_pairs(engine_sets))
    return dataclasses.replace(load(path, text), warnings=tuple(warnings or ()))


def validate_all_points(scn: Scenario, sets: Mapping[str, Any] | None = None) -> list[str]:
    """Have the engine check every sweep point of ``scn``, full and quick; return the
    points' warnings that the base point does not give (``point_warnings``)."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    warned: dict[str, list[str]] = {}
    for quick in (False, True):
        validate_points(make_plan(scn, quick=quick, sets=sets), seen, warned)
    return point_warnings(scn.warnings, warned)
