"""The capability catalog: validated at start with one-line errors; the signature is the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.capabilities import DEFAULT_CATALOG, ArgumentsError, CatalogError, load_catalog
from core import parse_ui_capability_catalog
from core.limits import CAPABILITY_DESCRIPTION_LENGTH, CAPABILITY_TITLE_LENGTH
from workers.actions.receipts import TERMINAL, TRANSITIONS, allowed

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
    values = {"id": "read_file", "risk": "read", "callable": "workers.actions.capabilities.files:read_file", **changes}
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


def confirmed(timeout: str | None) -> str:
    """A capability that requires confirmation, with `confirmationTimeout = <timeout>` unless None."""
    text = entry().replace("requiresConfirmation = false", "requiresConfirmation = true")
    return text if timeout is None else text + f"confirmationTimeout = {timeout}\n"


@pytest.mark.parametrize(("timeout", "window_ms"), [(None, 3_600_000), ("0.25", 250), ("604800", 604_800_000)])
def test_an_approval_waits_the_capabilitys_confirmation_timeout_or_an_hour(tmp_path: Path, timeout: str | None,
                                                                          window_ms: int) -> None:
    capability = load_catalog(write(tmp_path, confirmed(timeout))).get("read_file")
    assert capability is not None and capability.spec.approval_window_ms == window_ms
    assert "confirmationTimeout" not in capability.descriptor  # admin configuration, not the public descriptor


@pytest.mark.parametrize(("text", "fragment"), [
    (confirmed("0"), "greater than 0"),
    (confirmed("-5"), "greater than 0"),
    (confirmed("604801"), "less than or equal to 604800"),
    (confirmed('"soon"'), "field 'confirmationTimeout'"),
    (entry() + "confirmationTimeout = 60\n", "confirmationTimeout is for a capability with requiresConfirmation"),
], ids=["zero", "negative", "over-a-week", "text", "without-confirmation"])
def test_an_invalid_confirmation_timeout_fails_with_one_line(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(CatalogError) as caught:
        load_catalog(write(tmp_path, text))
    message = str(caught.value)
    assert "\n" not in message and "capability 'read_file'" in message and fragment in message, message


def titled(title: str, description: str = "") -> str:
    return entry().replace('title = "T"', f'title = "{title}"\ndescription = "{description}"')


@pytest.mark.parametrize(("title", "description"), [
    ("x" * CAPABILITY_TITLE_LENGTH, ""),
    ("\U0001F600" * (CAPABILITY_TITLE_LENGTH // 2), ""),  # 256 UTF-16 code units
    ("T", "d" * CAPABILITY_DESCRIPTION_LENGTH),
    ("T", "\U0001F600" * (CAPABILITY_DESCRIPTION_LENGTH // 2)),
], ids=["title-256", "title-256-units", "description-4096", "description-4096-units"])
def test_titles_and_descriptions_up_to_the_protocol_limits_are_accepted(tmp_path: Path, title: str,
                                                                        description: str) -> None:
    assert (CAPABILITY_TITLE_LENGTH, CAPABILITY_DESCRIPTION_LENGTH) == (256, 4_096)  # seed 000 section 13
    catalog = load_catalog(write(tmp_path, titled(title, description)))
    descriptor = dict(catalog.descriptors()[0])
    assert descriptor["title"] == title and descriptor["description"] == description
    parse_ui_capability_catalog([descriptor])


@pytest.mark.parametrize(("title", "description", "fragment"), [
    ("x" * 257, "", "/title: length must be 1 to 256 UTF-16 code units"),
    ("\U0001F600" * 129, "", "/title: length must be 1 to 256 UTF-16 code units"),  # 129 characters, 258 units
    ("", "", "/title: length must be 1 to 256 UTF-16 code units"),
    ("T", "d" * 4_097, "/description: length must be 0 to 4096 UTF-16 code units"),
    ("T", "\U0001F600" * 2_049, "/description: length must be 0 to 4096 UTF-16 code units"),
], ids=["title-257", "title-258-units", "title-empty", "description-4097", "description-4098-units"])
def test_titles_and_descriptions_beyond_the_protocol_limits_are_refused_at_start(
        tmp_path: Path, title: str, description: str, fragment: str) -> None:
    with pytest.raises(CatalogError) as caught:
        load_catalog(write(tmp_path, titled(title, description)))
    message = str(caught.value)
    assert "\n" not in message and "capability 'read_file'" in message and fragment in message, message


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
    source = (Path(__file__).resolve().parents[2] / "workers" / "redisio" / "lua" / "receipt.lua").read_text()
    for current, targets in TRANSITIONS.items():
        name = "[''] = " if current == "" else f"{current} = "
        line = next(text for text in source.splitlines() if text.strip().startswith(name))
        assert {t for t in targets} == {part.split("=")[0].strip() for part in line.split("{")[1].split(",")
                                        if "=" in part}, current
