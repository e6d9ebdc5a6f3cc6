"""The capability catalog: validated at start with one-line errors; the signature is the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.capabilities import DEFAULT_CATALOG, ArgumentsError, CatalogError, load_catalog
from core import parse_ui_capability_catalog
from workers.receipts import TERMINAL, TRANSITIONS, allowed

ENTRY = '''
[[capability]]
id = "{id}"
title = "T"
risk = "{risk}"
requiresConfirmation = false
callable = "{callable}"
resultFields = ["totalLines"]
'''


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def entry(**changes: str) -> str:
    values = {"id": "read_file", "risk": "read", "callable": "workers.capabilities.files:read_file", **changes}
    return ENTRY.format(**values)


def test_the_shipped_catalog_loads_and_its_descriptors_pass_core() -> None:
    catalog = load_catalog(DEFAULT_CATALOG)
    parse_ui_capability_catalog([dict(d) for d in catalog.descriptors()])
    read = catalog.get("read_file")
    assert read is not None and read.spec.result_fields == ("totalLines",)
    assert read.descriptor["parameters"]["properties"]["limit"]["default"] == 2_000
    assert catalog.get("write_file").spec.requires_confirmation is True  # type: ignore[union-attr]
    assert catalog.queues == ["iui"]


def test_arguments_are_validated_with_the_callables_signature() -> None:
    read = load_catalog(DEFAULT_CATALOG).get("read_file")
    assert read is not None
    assert read.validate_arguments({"file_path": "a", "limit": 3}) == {"file_path": "a", "limit": 3}
    for bad in ({"file_path": "a", "limit": "3"}, {"limit": 3}, {"file_path": "a", "extra": 1},
                {"file_path": "", "limit": 1}, {"file_path": "a", "limit": 0}, {"file_path": 1}):
        with pytest.raises(ArgumentsError):
            read.validate_arguments(bad)


@pytest.mark.parametrize(("text", "fragment"), [
    (entry(risk="dangerous"), "field 'risk'"),
    (entry(callable="no.such.module:thing"), "cannot be imported"),
    (entry(callable="not a callable"), "field 'callable'"),
    (entry(id="1bad"), "field 'id'"),
    (entry() + entry(), "listed twice"),
    (entry().replace('["totalLines"]', '["a.b"]'), "public descriptor is invalid"),
    ("[[capability]]\nid = 'x'\n", "field"),
    ("not toml = = =", "not valid TOML"),
    ("".join(entry(id=f"c{i}") for i in range(33)), "at most 32"),
])
def test_an_invalid_catalog_fails_with_one_line(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(CatalogError) as caught:
        load_catalog(write(tmp_path, text))
    message = str(caught.value)
    assert "\n" not in message and fragment in message, message


def test_a_callable_without_annotations_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"needs a type annotation|cannot be resolved|plain named"):
        load_catalog(write(tmp_path, entry(callable="os.path:join")))


def test_a_json_catalog_is_accepted(tmp_path: Path) -> None:
    text = ('[{"id": "noop", "title": "N", "risk": "read", "requiresConfirmation": false, '
            '"callable": "tests.integration.action_capabilities:noop", "resultFields": ["value"]}]')
    assert load_catalog(write(tmp_path, text, "c.json")).get("noop") is not None


def test_the_status_machine_table() -> None:
    assert allowed("", "queued") and allowed("", "awaiting_confirmation") and allowed("", "accepted")
    assert allowed("awaiting_confirmation", "queued") and allowed("awaiting_confirmation", "cancelled")
    assert {s for s in TRANSITIONS["queued"]} == {"running", "cancelled", "unknown", "failed"}
    assert {s for s in TRANSITIONS["running"]} == {"succeeded", "failed", "unknown"}
    assert not allowed("running", "cancelled") and not allowed("queued", "succeeded")
    assert not allowed("", "running") and not allowed("awaiting_confirmation", "running")
    for status in TERMINAL:
        assert not TRANSITIONS.get(status)


def test_the_lua_status_machine_matches_the_python_table() -> None:
    source = (Path(__file__).resolve().parents[2] / "workers" / "lua" / "receipt.lua").read_text()
    for current, targets in TRANSITIONS.items():
        name = "[''] = " if current == "" else f"{current} = "
        line = next(text for text in source.splitlines() if text.strip().startswith(name))
        assert {t for t in targets} == {part.split("=")[0].strip() for part in line.split("{")[1].split(",")
                                        if "=" in part}, current
