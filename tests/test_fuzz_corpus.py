"""The minimised bad inputs of the scenario fuzzer (``scripts/fuzz-scenarios.py``), kept in
``tests/fuzz_corpus/`` with the one-line error each must give (``expected.json``: the
message after ``dcnsim: error: <file>``; null: the file is valid). Each was a traceback, a
multi-line or uncut message, or a value silently accepted before the fix; docs/robustness.md
has the campaign they come from. A few seconds in all."""

from __future__ import annotations

import json
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest
from dcnsim.cli import main

CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
EXPECTED: dict[str, str | None] = json.loads((CORPUS / "expected.json").read_text())


def test_every_corpus_file_has_its_expectation() -> None:
    assert sorted(EXPECTED) == sorted(p.name for p in CORPUS.glob("*.toml"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_minimised_bad_input_gives_its_one_line_error(
        name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    path = CORPUS / name
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    expected = EXPECTED[name]
    if expected is None:
        assert code == 0 and err == "", err
        return
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    rest = lines[0].removeprefix(f"dcnsim: error: {path}")
    assert len(rest) <= 200
    assert rest == expected
