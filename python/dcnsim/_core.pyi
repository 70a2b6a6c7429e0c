"""Type stubs of the compiled engine ``dcnsim._core`` (crates/dcnsim-py).

Checked against the built module by ``python -m mypy.stubtest dcnsim._core``
(tests/test_stubs.py).
"""

from collections.abc import Callable
from typing import Any

__all__ = ["run", "validate", "schema", "version", "ScenarioError"]

class ScenarioError(ValueError):
    """A scenario is invalid; the message names the file, line, field and expectation."""

def run(
    text: str,
    path: str,
    overrides: list[tuple[str, str]] = ...,
    progress: Callable[[float], Any] | None = None,
) -> dict[str, dict[str, list[int | float | str]]]: ...
def validate(text: str, path: str, overrides: list[tuple[str, str]] = ...) -> None: ...
def schema() -> str: ...
def version() -> str: ...
