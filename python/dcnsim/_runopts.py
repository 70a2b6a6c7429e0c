"""``dcnsim run``'s self-checks and resource limits (docs/robustness.md): the command-line
options ``--check``, ``--max-events``, ``--max-wall``, ``--max-memory`` and the keyword
arguments of ``api.run`` they become."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any


def add_run_limits(p: argparse.ArgumentParser) -> None:
    """``dcnsim run``'s self-checks and limits (docs/robustness.md)."""
    p.add_argument("--check", action="store_true",
                   help="check packet conservation and buffer bounds per port and sequence "
                        "order per flow at the end of the run; a violation exits with 1")
    p.add_argument("--max-events", type=_positive_int, metavar="N",
                   help="stop after about N events; the tables are kept, marked partial")
    p.add_argument("--max-wall", type=_positive_float, metavar="SECONDS",
                   help="stop after SECONDS of wall-clock time; tables kept, marked partial")
    p.add_argument("--max-memory", type=_size, metavar="SIZE",
                   help="refuse the run when its estimated memory is above SIZE (e.g. 4GiB; "
                        "default: the memory available)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}")
    return value


_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*", text)
    if m is None or m.group(2) not in (None, *_SIZE_UNITS):
        raise argparse.ArgumentTypeError(f"expected a size such as 4GiB, not {text!r}")
    value = int(float(m.group(1)) * _SIZE_UNITS[m.group(2) or ""])
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive size, not {text!r}")
    return value


def run_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``api.run`` from ``--check``, ``--max-events``,
    ``--max-wall`` and ``--max-memory``."""
    return {"check": args.check, "max_events": args.max_events, "max_wall": args.max_wall,
            "max_memory": args.max_memory}
