"""Type stubs of the compiled engine ``dcnsim._core`` (crates/dcnsim-py).

Checked against the built module by ``python -m mypy.stubtest dcnsim._core``
(tests/test_stubs.py).
"""

from collections.abc import Callable
from typing import Any

__all__ = ["run", "run_captured", "validate", "schema", "schema_json", "version",
           "build_commit", "build_tree", "ScenarioError", "EngineError"]

class ScenarioError(ValueError):
    """A scenario is invalid; the message names the file, line, field and expectation."""

class EngineError(RuntimeError):
    """The engine failed on a scenario (an internal panic, caught); names the scenario."""

def run(
    text: str,
    path: str,
    overrides: list[tuple[str, str]] = ...,
    progress: Callable[[float], Any] | None = None,
) -> dict[str, dict[str, list[int | float | str]]]: ...
def run_captured(
    text: str,
    path: str,
    overrides: list[tuple[str, str]] = ...,
    progress: Callable[[float], Any] | None = None,
    *,
    check: bool = False,
    max_events: int | None = None,
    max_wall: float | None = None,
    max_memory: int | None = None,
) -> tuple[dict[str, dict[str, list[int | float | str]]], dict[str, bytes], dict[str, Any]]: ...
def validate(text: str, path: str, overrides: list[tuple[str, str]] = ...) -> list[str]: ...
def schema() -> str: ...
def schema_json() -> str: ...
def version() -> str: ...
def build_commit() -> str | None:
    """The git commit the extension was built from (``<sha>+dirty`` if the tree differed
    from it), None when built without git or outside a repository."""

def build_tree() -> str | None:
    """The top folder of the git work tree the extension was built from, or None."""
