"""One-line error messages: the shortening every scenario error goes through.

A bad value is quoted in its error, and a user's value can be megabytes long; a list of
expected names can be long too. ``shorten`` brings a message to one line of at most
``LINE_MAX`` characters besides its file's path, keeping the file, the line, the field and
the reason. The command line prints every error through it; the Python API raises its
``ScenarioError`` with the shortened message (``shortens_scenario_errors``), the full text
kept in the exception's ``full_message`` attribute.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ._native import is_scenario_error

P = ParamSpec("P")
R = TypeVar("R")

QUOTED_MAX = 80
# Values the messages quote: "text" (the engine's and this package's), `text` (serde's) and
# 'text' (Python's repr; only when longer than QUOTED_MAX, so apostrophes in words stay).
_QUOTED = re.compile(r'"([^"\n]*)"|`([^`\n]*)`|(?<![\w])\'([^\'\n]{' + str(QUOTED_MAX + 1)
                     + r',})\'(?![\w])')
EXPECTED_NAMES_MAX = 10


def shorten(message: str) -> str:
    """``message`` with every quoted value longer than ``QUOTED_MAX`` characters cut (a
    5 MB bad value must not become a 5 MB error line), and a list of more than
    ``EXPECTED_NAMES_MAX`` expected field names cut to the names closest to the unknown one
    (``dcnsim schema`` lists them all)."""

    return _fit(_cut_quoted(_fewer_names(_one_line(message)), QUOTED_MAX, count=True))


def _cut_quoted(message: str, most: int, *, count: bool) -> str:
    """Every quoted value of ``message`` longer than ``most`` characters cut to ``most``
    (with `` (N characters)`` after it if ``count``)."""
    quoted = _QUOTED if most == QUOTED_MAX else re.compile(
        r'"([^"\n]*)"|`([^`\n]*)`|(?<![\w])\'([^\'\n]{' + str(most + 1) + r',})\'(?![\w])')

    def cut(m: re.Match[str]) -> str:
        group = next(i for i in (1, 2, 3) if m.group(i) is not None)
        quote, value = '"`\''[group - 1], m.group(group)
        if len(value) <= most:
            return m.group(0)
        return f"{quote}{value[:most - 1]}…{quote}" + (f" ({len(value)} characters)"
                                                       if count else "")

    return quoted.sub(cut, message)


LINE_MAX = 200
# The scenario file a message starts with ("FILE: line 3, field ..." / "FILE, field ...");
# it does not count against LINE_MAX (a user's path is as long as it is).
_FILE_HEAD = re.compile(r"\S+?\.toml(?=[:,] )")
_POINT = re.compile(r" \(in (?:quick )?sweep point (.*)\)$")
_LISTED = re.compile(r"\((known|built-in): ([^()]*)\)")


def _fit(message: str) -> str:
    """Bring a message over ``LINE_MAX`` characters (besides its file's path) within it,
    one step at a time, keeping the field and the reason: the sweep point makes "(after
    applying overrides)" redundant; lists of names shrink to the three closest to the bad
    one; quoted values are cut to half of ``QUOTED_MAX``; the sweep point's label is cut;
    the note on the names shrinks; at last the sweep point is left out."""
    head = m.end() if (m := _FILE_HEAD.match(message)) else 0

    def over(text: str) -> int:
        return len(text) - head - LINE_MAX

    point = _POINT.search(message)
    if point:
        message = (message[:point.start()].replace(" (after applying overrides)", "")
                   + message[point.start():])
    if over(message) > 0:
        message = _fewer_names(message, limit=3)
    if over(message) > 0:
        message = _closest_listed(message)
    if over(message) > 0:
        message = _short_forms(message)
    if over(message) > 0:
        message = re.sub(r"(\.\.\.)? \(\d+ characters\)", "",
                         _cut_quoted(message, QUOTED_MAX // 2, count=False))
    point = _POINT.search(message)
    if over(message) > 0 and point:
        label = point.group(1)
        keep = max(4, len(label) - over(message) - 1)
        if keep < len(label):
            message = message[:point.start(1)] + label[:keep] + "…)"
    if over(message) > 0:
        message = _NAMES_NOTE.sub(r" (\2 of \3; `dcnsim schema` lists them)", message)
    while over(message) > 0 and (m := _SHORT_LIST.search(message)) and int(m.group(2)) > 1:
        # one name fewer (the last, the least close), down to one
        names = m.group(1).rsplit(", ", 1)[0]
        message = (message[:m.start()] + f"{names} ({int(m.group(2)) - 1} of "
                   + message[m.end(2) + len(" of "):])
    point = _POINT.search(message)
    if over(message) > 0 and point:
        # Then the sweep point goes (the field and the reason stay).
        message = message[:point.start()]
    if head and over(message) > 0:
        # Last, for a scenario's error line: the end of the reason goes (a value printed
        # whole, e.g. a nested array). Other messages (an internal error) stay whole.
        message = message[:len(message) - over(message) - 1] + "…"
    return message


# A list of expected names with the short note: "`a`, `b`, `c` (3 of 16".
_SHORT_LIST = re.compile(r"((?:`[^`\n]*`, )*`[^`\n]*`) \((\d+) of (?=\d+; `dcnsim schema`)")
# The note `_fewer_names` leaves after a shortened list of expected names.
_NAMES_NOTE = re.compile(r" \((first|closest) (\d+) of (\d+) (?:fields|names); `dcnsim schema` "
                         r"lists them\)")


# Long spellings of what a value should look like, and their short forms (used only when
# a message is over LINE_MAX); unquoted numbers of more than 20 digits.
_SHORT_FORMS = (
    ("a number followed by B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B)",
     'a size such as "256KiB" or "32KB"'),
    ("a number followed by bps, Kbps, Mbps, Gbps or Tbps", 'a rate such as "10Gbps"'),
    ("a number followed by ps, ns, us, ms or s", 'a duration such as "25us"'),
)
_LONG_NUMBER = re.compile(r"(-?)(\d)(\d{20,})(\.\d*)?(?![\d…])")


def _short_forms(message: str) -> str:
    for long, short in _SHORT_FORMS:
        message = message.replace(long, short)
    return _LONG_NUMBER.sub(lambda m: f"{m.group(1)}{m.group(2)}e{len(m.group(3))} (about)",
                            message)


def _closest_listed(message: str) -> str:
    """``(known: a, b, c, d, ...)`` cut to the three names closest to the first quoted name
    of the message."""
    m = _LISTED.search(message)
    if m is None:
        return message
    names = [n.strip() for n in m.group(2).split(",")]
    if len(names) <= 3:
        return message
    bad = re.search(r"'([^'\n]*)'|\"([^\"\n]*)\"", message)
    wanted = (bad.group(1) or bad.group(2) or "") if bad else ""
    shown = difflib.get_close_matches(wanted, names, n=3, cutoff=0.0) or names[:3]
    listed = f"({m.group(1)}: {', '.join(shown)}, … {len(names)} in all)"
    return message[:m.start()] + listed + message[m.end():]


def _one_line(message: str) -> str:
    """Control characters (a newline inside a quoted bad value) written as escapes, so the
    message stays on one line: C0, DEL, C1 (U+0085 NEL ends a line for `str.splitlines`)
    and the Unicode line and paragraph separators."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]",
                  lambda m: ("\\n" if m.group() == "\n" else f"\\x{ord(m.group()):02x}"
                             if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"),
                  message.strip())


def _fewer_names(message: str, limit: int = EXPECTED_NAMES_MAX) -> str:
    m = re.search(r"unknown (?:field|variant) `([^`\n]*)`(?: \(\d+ characters\))?"
                  r"(?: for kind \"[^\"\n]*\")?[,:] "
                  r"expected one of ((?:`[^`\n]*`, )+`[^`\n]*`)", message)
    if m is None:
        return message
    names = re.findall(r"`([^`\n]*)`", m.group(2))
    if len(names) <= limit:
        return message
    close = difflib.get_close_matches(m.group(1), names, n=3, cutoff=0.5)
    shown = close or names[:3]
    listed = ", ".join(f"`{n}`" for n in shown)
    what = "closest" if close else "first"
    kinds = "fields" if m.group(0).startswith("unknown field") else "names"
    short = (f"{listed} ({what} {len(shown)} of {len(names)} {kinds}; `dcnsim schema` lists "
             "them)")
    return message[:m.start(2)] + short + message[m.end(2):]


def shortens_scenario_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate an API function: a ``ScenarioError`` it raises is raised again with its
    message ``shorten``-ed (a 100 KB bad value does not make a 100 KB message); the full
    text is kept in the exception's ``full_message`` attribute. An error already shortened
    (by an inner decorated function) goes through as it is."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not is_scenario_error(exc) or hasattr(exc, "full_message"):
                raise
            full = str(exc)
            short = shorten(full)
            if short == full:
                exc.full_message = full  # type: ignore[attr-defined]
                raise
            error = type(exc)(short)
            error.full_message = full  # type: ignore[attr-defined]
            raise error.with_traceback(exc.__traceback__) from None

    return wrapper
