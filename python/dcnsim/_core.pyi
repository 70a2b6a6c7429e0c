"""Type stubs of the compiled engine ``dcnsim._core`` (crates/dcnsim-py)."""

from collections.abc import Callable
from typing import Any

class ScenarioError(ValueError):
    """A scenario is invalid; the message names the file, line, field and expectation."""

def run(
    text: str,
    path: str,
    overrides: list[tuple[str, str]] = ...,
    progress: Callable[[float], Any] | None = ...,
) -> dict[str, dict[str, list[int | float | str]]]: ...
def validate(text: str, path: str, overrides: list[tuple[str, str]] = ...) -> None: ...
def schema() -> str: ...
def version() -> str: ...
