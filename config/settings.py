"""The one runtime configuration of the workers, read from `IUI_*` environment variables.

`load_settings()` is the single adapter that turns pydantic's `ValidationError` into a
`SettingsError` whose text is one line naming the offending variable, so every entry point
can fail at start-up with that line and no traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.limits import MIN_DOCUMENT_BYTES, UI_LIMITS, UI_PROTOCOL_LIMITS

from .password_file import read_password, with_password

ENV_PREFIX = "IUI_"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class SettingsError(Exception):
    """A configuration value is invalid; the message is one line naming the variable."""

    def __init__(self, message: str, *, field: str | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.field = field  # the blamed setting (e.g. "partitions"), for a caller that names its own option
        self.reason = reason or message

    @property
    def variable(self) -> str:
        """The blamed environment variable (e.g. IUI_PARTITIONS), or "" when none is known."""
        return ENV_PREFIX + self.field.upper() if self.field else ""


class Settings(BaseSettings):
    """Every tunable of the Redis runtime (env prefix `IUI_`)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    redis_url: str = Field(default="redis://127.0.0.1:6379/0", min_length=1)
    rq_redis_url: str | None = None
    # Files holding the password of redis_url's / rq_redis_url's user; read at start, put into the URL.
    redis_password_file: Path | None = None
    rq_redis_password_file: Path | None = None
    key_prefix: str = Field(default="iui", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    partitions: int = Field(default=64, ge=1, le=16_384)
    lease_ttl_ms: int = Field(default=10_000, ge=200, le=600_000)
    lease_renew_ms: int = Field(default=3_000, ge=50, le=300_000)
    max_document_bytes: int = Field(
        default=UI_LIMITS["maxDocumentBytes"], ge=MIN_DOCUMENT_BYTES, le=UI_LIMITS["maxDocumentBytes"]
    )
    max_frames_per_generation: int = Field(default=UI_PROTOCOL_LIMITS["maxStreamFrames"], ge=2,
                                           le=UI_PROTOCOL_LIMITS["maxStreamFrames"])
    max_generations_per_session: int = Field(default=256, ge=1, le=1_000_000)
    reply_ttl_s: int = Field(default=300, ge=1, le=86_400 * 7)
    dead_letter_after: int = Field(default=5, ge=1, le=1_000)
    # A dead letter keeps at most this many bytes of the entry; the stream of a partition at most
    # max_entries letters and max_bytes bytes (the oldest go first).
    dead_letter_entry_bytes: int = Field(default=16_384, ge=1_024, le=1_048_576)
    dead_letter_max_entries: int = Field(default=1_000, ge=1, le=1_000_000)
    dead_letter_max_bytes: int = Field(default=1_048_576, ge=1_024, le=1024 * 1024 * 1024)
    frame_log_max: int = Field(default=1_024, ge=16, le=1_000_000)
    # At least one maximal frame, so the newest frame always stays in the log.
    frame_log_max_bytes: int = Field(default=16 * 1024 * 1024, ge=UI_PROTOCOL_LIMITS["maxStreamFrameBytes"],
                                     le=1024 * 1024 * 1024)
    max_plain_per_session: int = Field(default=256, ge=1, le=1_000_000)
    # answer-ui@1: distinct (message, block) pairs a session may publish; then `answer_capacity`.
    max_answer_blocks_per_session: int = Field(default=256, ge=1, le=100_000)
    session_ttl_s: int = Field(default=7 * 86_400, ge=0, le=366 * 86_400)  # sliding; 0: never expires
    metrics_port: int = Field(default=0, ge=0, le=65_535)
    # The address the metrics listen on: an IP literal or a host name (0.0.0.0: every interface).
    metrics_addr: str = Field(default="0.0.0.0", min_length=1, max_length=253, pattern=r"^[A-Za-z0-9.:\-]+$")
    log_level: str = "WARNING"  # a logging level name, any case
    worker_id: str | None = None  # shown in leases and `iui status`; unset or "": random
    heartbeat_ms: int = Field(default=1_000, ge=50, le=60_000)
    batch_size: int = Field(default=32, ge=1, le=1_000)
    cache_bytes: int = Field(default=512 * 1024 * 1024, ge=1024 * 1024, le=1 << 40)  # estimated, per process
    gc_freeze_s: float = Field(default=1.0, ge=0, le=86_400)  # 0: leave the garbage collector as it is
    # The action runtime: the admin capability catalog, the files root of the built-in file
    # capabilities, bounds of a session's operations, and the job liveness timings.
    capabilities: Path = Field(default=Path(__file__).with_name("capabilities.toml"))
    files_root: Path = Field(default=Path("files"))
    max_file_bytes: int = Field(default=8 * 1024 * 1024, ge=1_024, le=1024 * 1024 * 1024)
    max_operations_per_session: int = Field(default=1_024, ge=1, le=1_000_000)
    receipt_log_max: int = Field(default=4_096, ge=16, le=1_000_000)
    agent_inbox_max: int = Field(default=1_024, ge=1, le=1_000_000)
    job_heartbeat_ms: int = Field(default=3_000, ge=100, le=600_000)
    job_start_timeout_s: int = Field(default=30, ge=1, le=3_600)
    reaper_interval_ms: int = Field(default=1_000, ge=50, le=600_000)
    # What an acknowledged call survives (workers/redisio/durability.py): `fast` (Redis's own persistence,
    # a crash may lose ~2 s), `local` (every master fsyncs every write) or `replica` (a reply counts
    # once `durability_replicas` replicas hold the commit, waited for at most durability_timeout_ms).
    durability: Literal["fast", "local", "replica"] = "fast"
    durability_replicas: int = Field(default=1, ge=1, le=64)
    durability_timeout_ms: int = Field(default=1_000, ge=10, le=60_000)
    # Seed 001's `streaming.enabled`: off, the four stream tools are refused (`streaming_disabled`)
    # and only the plain `intelligent_ui` (and the answer tools) are served and advertised.
    streaming_enabled: bool = True
    # The browser gateway (`iui gateway`, gateway/): where it listens, how it checks tokens, its limits.
    gateway_host: str = Field(default="127.0.0.1", min_length=1, max_length=253, pattern=r"^[A-Za-z0-9.:\-]+$",
                              description="address `iui gateway` listens on (`--host`)")
    gateway_port: int = Field(default=8080, ge=1, le=65_535, description="port `iui gateway` listens on (`--port`)")
    gateway_jwt_secret: SecretStr | None = Field(
        default=None, description="HS256 secret of the bearer tokens (at least 32 bytes; a local stack, `iui token`)")
    gateway_jwt_secret_file: Path | None = Field(default=None, description="a file holding IUI_GATEWAY_JWT_SECRET")
    gateway_jwt_public_key_file: Path | None = Field(
        default=None, description="PEM public key of RS256/ES256 tokens (production)")
    gateway_jwks_file: Path | None = Field(default=None,
                                           description="JWKS file of RS256/ES256 tokens, keys chosen by `kid`")
    gateway_jwt_audience: str = Field(default="iui", min_length=1, max_length=256,
                                      description="the `aud` every token must name")
    gateway_jwt_issuer: str | None = Field(default=None, max_length=256,
                                           description="the `iss` every token must name (unset: not checked)")
    gateway_origins: str = Field(default="", max_length=4_096,
                                 description="comma-separated origins allowed by CORS (exact `scheme://host[:port]`)")
    gateway_max_body_bytes: int = Field(default=1_048_576, ge=1_024, le=16 * 1_048_576,
                                        description="largest request body; a larger one is refused 413 unread")
    gateway_ticket_ttl_s: int = Field(default=60, ge=1, le=60, description="lifetime of an EventSource ticket")
    gateway_max_connection_s: int = Field(default=3_600, ge=1, le=86_400,
                                          description="an event stream is closed after this long (the client resumes)")
    gateway_heartbeat_s: float = Field(default=15.0, gt=0, le=300, description="comment line interval of event streams")
    gateway_queue_events: int = Field(default=1_024, ge=16, le=1_000_000,
                                      description="events buffered per connection; a slower reader is disconnected")
    gateway_reply_timeout_s: float = Field(default=30.0, gt=0, le=600,
                                           description="longest wait for the runtime's reply to an HTTP request (504)")
    gateway_max_lag: int = Field(default=10_000, ge=1, le=10_000_000,
                                 description="entries waiting in a partition beyond which new calls are refused 429")

    @model_validator(mode="before")
    @classmethod
    def _passwords_from_files(cls, data: Any) -> Any:
        # Before the fields are checked: the URLs then hold the passwords, as if they had been given in them.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("rq_redis_password_file") and not data.get("rq_redis_url"):
            raise ValueError("rq_redis_password_file needs IUI_RQ_REDIS_URL (without it the RQ queues use "
                             "IUI_REDIS_URL and its password)")
        for url_field, file_field in (("redis_url", "redis_password_file"), ("rq_redis_url", "rq_redis_password_file")):
            if data.get(file_field):
                url = data.get(url_field) or cls.model_fields[url_field].default
                try:
                    data[url_field] = with_password(str(url), read_password(Path(data[file_field])))
                except ValueError as error:
                    raise ValueError(f"{file_field} {error}") from None
        return data

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in LOG_LEVELS:
            return value.strip().upper()
        raise ValueError("must be one of " + ", ".join(LOG_LEVELS) + " (any case)")

    @model_validator(mode="after")
    def _renew_before_expiry(self) -> Settings:
        if self.lease_renew_ms * 2 > self.lease_ttl_ms:
            raise ValueError("lease_renew_ms must be at most half of lease_ttl_ms")
        return self

    @model_validator(mode="after")
    def _rq_on_a_plain_redis(self) -> Settings:
        # RQ does not support Redis Cluster: with a cluster URL its queues need their own Redis.
        if _is_cluster_url(self.rq_redis_url or ""):
            raise ValueError("rq_redis_url must name a plain Redis (redis:// or rediss://): RQ does not "
                             "support Redis Cluster")
        if _is_cluster_url(self.redis_url) and self.rq_redis_url is None:
            raise ValueError("rq_redis_url must name a plain Redis for the RQ queues when redis_url names a "
                             "Redis Cluster: RQ does not support Redis Cluster")
        return self

    @property
    def rq_url(self) -> str:
        """The Redis URL of the RQ queues (defaults to the main one)."""
        return self.rq_redis_url or self.redis_url


def _is_cluster_url(url: str) -> bool:
    """True for the `redis+cluster://` and `rediss+cluster://` schemes (see workers.redisio.connection.connect)."""
    return url.split("://", 1)[0].lower().endswith("+cluster")


def _field(error: ErrorDetails) -> str:
    location = error.get("loc") or ()
    if location:
        return str(location[0])
    # a check across fields: its message starts with the field it blames
    first = str(error.get("msg", "")).removeprefix("Value error, ").split(" ", 1)[0]
    return first if first in Settings.model_fields else "lease_renew_ms"


def load_settings(**overrides: Any) -> Settings:
    """Build `Settings` from the environment (plus overrides) or raise a one-line `SettingsError`."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as error:
        first = error.errors()[0]
        message = str(first.get("msg", "invalid value")).replace("\n", " ")
        field = _field(first)
        raise SettingsError(f"invalid setting {ENV_PREFIX}{field.upper()}: {message}", field=field,
                            reason=message) from None
