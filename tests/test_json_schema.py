"""The JSON Schema of scenario files (``dcnsim schema --json``, docs/scenario.schema.json)
against the real engine: every shipped scenario is valid under it, the file in docs/ is the
current output, and inputs the loader refuses for a wrong key or type are refused by the
schema too (the schema is read off the loader's structs, so the two must agree)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import dcnsim._core as core
import jsonschema
import pytest

from .conftest import REPO, SCENARIOS

SCHEMA = json.loads(core.schema_json())
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def test_the_schema_is_a_valid_draft7_schema() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["additionalProperties"] is False
    for section in ("meta", "sim", "topology", "tcp", "apps", "measure", "qcn"):
        assert section in SCHEMA["properties"], section


def test_docs_copy_is_current() -> None:
    # The copy editors point at; regenerate with `dcnsim schema --json > docs/scenario.schema.json`.
    assert (REPO / "docs" / "scenario.schema.json").read_text() == core.schema_json()


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_scenario_is_valid_under_the_schema(path: Path) -> None:
    doc = tomllib.loads(path.read_text())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert not errors, errors


BASE = """
[sim]
duration = "10ms"
[topology]
kind = "star"
servers = 2
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "64KiB"
[tcp]
cc = "newreno"
[[apps]]
kind = "incast"
sru = "64KiB"
"""

# (what is changed, old text, new text): each breaks the key or type of one value.
WRONG = [
    ("unknown [tcp] key", 'cc = "newreno"', 'cc = "newreno"\nfast_open = true'),
    ("unknown top-level table", "[sim]", "[simulation]\nx = 1\n[sim]"),
    ("servers as a string", "servers = 2", 'servers = "two"'),
    ("duration as a number", 'duration = "10ms"', "duration = 10"),
    ("unknown topology kind", 'kind = "star"', 'kind = "ring"'),
    ("unknown app kind", 'kind = "incast"', 'kind = "storm"'),
    ("key of another app kind", 'sru = "64KiB"', 'sru = "64KiB"\npacket_size = 1500'),
    ("buffer as a boolean", 'switch_buffer = "64KiB"', "switch_buffer = true"),
]


def _loader_refuses(text: str) -> bool:
    try:
        core.validate(text, "t.toml", [])
    except core.ScenarioError:
        return True
    return False


def test_the_base_document_is_valid_for_both() -> None:
    assert not _loader_refuses(BASE)
    assert VALIDATOR.is_valid(tomllib.loads(BASE))


@pytest.mark.parametrize("what,old,new", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_keys_and_types_are_refused_by_both(what: str, old: str, new: str) -> None:
    assert old in BASE, what
    text = BASE.replace(old, new, 1)
    assert _loader_refuses(text), f"the loader accepts: {what}"
    assert not VALIDATOR.is_valid(tomllib.loads(text)), f"the schema accepts: {what}"
