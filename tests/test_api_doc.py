"""The examples of docs/api.md, run as doctests from the repository root (each is a
run of a few simulated milliseconds)."""

from __future__ import annotations

import doctest

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest

from .conftest import REPO


def test_api_doc_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CI", "true")  # no progress bar
    failed, attempted = doctest.testfile(
        str(REPO / "docs" / "api.md"), module_relative=False, verbose=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 10
    assert failed == 0
