"""Lazy access to the compiled engine ``dcnsim._core``.

``import dcnsim`` must work (and the command line must be able to print help and
clear errors) even when the extension has not been built, so the extension is
imported on first use only. Tests replace ``_CORE`` with a fake module.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import ExtensionMissingError

_CORE: Any = None


def core() -> Any:
    """Return the ``dcnsim._core`` module, importing it on first use."""
    global _CORE
    if _CORE is None:
        try:
            _CORE = importlib.import_module("dcnsim._core")
        except ImportError as exc:
            raise ExtensionMissingError(
                "the compiled engine dcnsim._core is not installed or cannot be loaded "
                f"({exc}); build it with `pip install -e .` in the dcnsim repository"
            ) from exc
    return _CORE


def scenario_error(message: str) -> ValueError:
    """Build a ``ScenarioError`` (the engine's class) carrying ``message``."""
    error: ValueError = core().ScenarioError(message)
    return error


def is_scenario_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the engine's ``ScenarioError`` (False if the engine never loaded)."""
    return _CORE is not None and isinstance(exc, _CORE.ScenarioError)
