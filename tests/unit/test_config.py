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
        ("IUI_GATEWAY_HEADER_TIMEOUT_S", "0"),
        ("IUI_GATEWAY_HEADER_TIMEOUT_S", "301"),
        ("IUI_GATEWAY_BODY_TIMEOUT_S", "-1"),
        ("IUI_GATEWAY_BODY_TIMEOUT_S", "forever"),
        ("IUI_GATEWAY_MAX_CONNECTIONS", "0"),
        ("IUI_GATEWAY_MAX_CONNECTIONS", "1000001"),
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


def _password_file(tmp_path, text: str, name: str = "password"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_password_file_puts_its_password_into_the_redis_url(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import redis

    monkeypatch.delenv("IUI_RQ_REDIS_URL", raising=False)
    monkeypatch.setenv("IUI_REDIS_URL", "redis://worker@redis:6379/0")
    monkeypatch.setenv("IUI_REDIS_PASSWORD_FILE", str(_password_file(tmp_path, "s3cr:t/@%#?\n")))
    settings = load_settings()
    assert settings.redis_url == "redis://worker:s3cr%3At%2F%40%25%23%3F@redis:6379/0"
    assert settings.rq_url == settings.redis_url  # the RQ queues default to the same server and user
    kwargs = redis.Redis.from_url(settings.redis_url).connection_pool.connection_kwargs
    assert (kwargs["username"], kwargs["password"], kwargs["host"]) == ("worker", "s3cr:t/@%#?", "redis")


def test_a_password_file_without_a_user_authenticates_the_default_user(tmp_path) -> None:
    settings = load_settings(redis_url="redis://127.0.0.1:6379/0", redis_password_file=_password_file(tmp_path, "pw"))
    assert settings.redis_url == "redis://:pw@127.0.0.1:6379/0"


def test_the_rq_password_file_goes_into_the_rq_url(tmp_path) -> None:
    settings = load_settings(redis_url="redis://worker@a:1/0", rq_redis_url="redis://rq@b:2/0",
                             redis_password_file=_password_file(tmp_path, "one", "a"),
                             rq_redis_password_file=_password_file(tmp_path, "two\r\n", "b"))
    assert (settings.redis_url, settings.rq_url) == ("redis://worker:one@a:1/0", "redis://rq:two@b:2/0")


@pytest.mark.parametrize(("text", "url", "reason"), [
    (None, "redis://worker@redis:6379/0", "cannot be read"),
    ("", "redis://worker@redis:6379/0", "is empty"),
    ("\n", "redis://worker@redis:6379/0", "is empty"),
    ("first\nsecond\n", "redis://worker@redis:6379/0", "one line"),
    ("x" * 4097, "redis://worker@redis:6379/0", "at most 4096 bytes"),
    (b"\xff\xfe", "redis://worker@redis:6379/0", "UTF-8"),
    ("pw", "redis://worker:other@redis:6379/0", "already carries a password"),
])
def test_a_bad_password_file_fails_in_one_line_naming_the_variable_and_never_the_password(
        tmp_path, monkeypatch: pytest.MonkeyPatch, text: str | bytes | None, url: str, reason: str) -> None:
    path = tmp_path / "password"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    monkeypatch.setenv("IUI_REDIS_URL", url)
    monkeypatch.setenv("IUI_REDIS_PASSWORD_FILE", str(path))
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("invalid setting IUI_REDIS_PASSWORD_FILE: ") and reason in message, message
    assert "\n" not in message and "first" not in message and "xxxx" not in message and "other" not in message


def test_an_rq_password_file_needs_its_own_rq_url(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IUI_RQ_REDIS_URL", raising=False)
    monkeypatch.setenv("IUI_RQ_REDIS_PASSWORD_FILE", str(_password_file(tmp_path, "pw")))
    with pytest.raises(SettingsError, match=r"^invalid setting IUI_RQ_REDIS_PASSWORD_FILE: .*IUI_RQ_REDIS_URL"):
        load_settings()


@pytest.mark.parametrize(("url", "says"), [
    ("redis:///0", "must name a host"),
    ("redis://:6379/0", "must name a host"),
    ("rediss://user:pw@:6380", "must name a host"),
    ("redis+cluster:///", "must name a host"),
    ("unix://", "must name the socket's path"),
    ("redis://127.0.0.1:/0", "must name its port after the colon"),  # `redis://host:$PORT/0`, PORT unset
    ("redis://default@127.0.0.1:/0", "must name its port after the colon"),
    ("rediss://user:pw@h:/0", "must name its port after the colon"),
])
def test_a_redis_url_without_a_server_is_refused_naming_the_setting(monkeypatch: pytest.MonkeyPatch, url: str,
                                                                    says: str) -> None:
    # redis-py fills in localhost:6379 for a URL without a host: a process would serve another server
    monkeypatch.setenv("IUI_REDIS_URL", url)
    with pytest.raises(SettingsError) as error:
        load_settings()
    assert str(error.value).startswith("invalid setting IUI_REDIS_URL:") and says in str(error.value)
    assert "pw" not in str(error.value)


@pytest.mark.parametrize("worker_id", ["a b", "w:{1}", "x" * 129, "é"])
def test_a_worker_id_must_be_a_short_name(monkeypatch: pytest.MonkeyPatch, worker_id: str) -> None:
    monkeypatch.setenv("IUI_WORKER_ID", worker_id)
    with pytest.raises(SettingsError) as error:
        load_settings()
    assert str(error.value).startswith("invalid setting IUI_WORKER_ID:") and worker_id not in str(error.value)


def test_a_worker_id_may_be_a_pod_name_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    for worker_id in ("iui-worker-7d9f8.default", ""):
        monkeypatch.setenv("IUI_WORKER_ID", worker_id)
        assert load_settings().worker_id == worker_id
