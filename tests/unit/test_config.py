"""Settings come from IUI_* variables; invalid values fail with one line naming the variable."""

from __future__ import annotations

import pytest

from config.settings import Settings, SettingsError, load_settings


def test_defaults_match_the_documented_values(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("IUI_PARTITIONS", "IUI_KEY_PREFIX", "IUI_MAX_DOCUMENT_BYTES", "IUI_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.partitions == 64
    assert settings.key_prefix == "iui"
    assert settings.max_document_bytes == 262_144
    assert settings.max_frames_per_generation == 256
    assert settings.max_generations_per_session == 256


@pytest.mark.parametrize(("value", "enabled"), [(None, True), ("true", True), ("1", True), ("false", False),
                                                ("0", False), ("off", False)])
def test_the_stream_tools_switch_defaults_to_on(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                                enabled: bool) -> None:
    if value is None:
        monkeypatch.delenv("IUI_STREAMING_ENABLED", raising=False)
    else:
        monkeypatch.setenv("IUI_STREAMING_ENABLED", value)
    assert load_settings().streaming_enabled is enabled


def test_rq_url_defaults_to_the_main_redis_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IUI_REDIS_URL", "redis://example:1/0")
    monkeypatch.delenv("IUI_RQ_REDIS_URL", raising=False)
    assert load_settings().rq_url == "redis://example:1/0"


def test_environment_variables_with_the_iui_prefix_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IUI_PARTITIONS", "8")
    assert load_settings().partitions == 8


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("IUI_PARTITIONS", "zero"),
        ("IUI_MAX_DOCUMENT_BYTES", "1023"),
        ("IUI_MAX_DOCUMENT_BYTES", "262145"),
        ("IUI_MAX_FRAMES_PER_GENERATION", "257"),
        ("IUI_KEY_PREFIX", "a{b}"),
        ("IUI_STREAMING_ENABLED", "maybe"),
    ],
)
def test_an_invalid_value_fails_with_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert variable in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_renew_interval_longer_than_half_the_ttl_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IUI_LEASE_TTL_MS", "1000")
    monkeypatch.setenv("IUI_LEASE_RENEW_MS", "900")
    with pytest.raises(SettingsError, match="IUI_LEASE_RENEW_MS"):
        load_settings()


def test_overrides_take_precedence_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IUI_PARTITIONS", "8")
    assert load_settings(partitions=4).partitions == 4
    assert isinstance(load_settings(), Settings)


def test_retention_defaults_and_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("IUI_SESSION_TTL_S", "IUI_FRAME_LOG_MAX_BYTES", "IUI_MAX_PLAIN_PER_SESSION"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.session_ttl_s == 7 * 86_400
    assert settings.frame_log_max_bytes == 16 * 1024 * 1024
    assert settings.max_plain_per_session == 256
    assert load_settings(session_ttl_s=0).session_ttl_s == 0  # never expires
    monkeypatch.setenv("IUI_FRAME_LOG_MAX_BYTES", "266239")  # below one maximal frame
    with pytest.raises(SettingsError, match="IUI_FRAME_LOG_MAX_BYTES"):
        load_settings()
