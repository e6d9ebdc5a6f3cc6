"""The one runtime configuration of the workers, read from `IUI_*` environment variables.

`load_settings()` is the single adapter that turns pydantic's `ValidationError` into a
`SettingsError` whose text is one line naming the offending variable, so every entry point
can fail at start-up with that line and no traceback.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.limits import MIN_DOCUMENT_BYTES, UI_LIMITS, UI_PROTOCOL_LIMITS

from .password_file import read_password, with_password

ENV_PREFIX = "IUI_"
EXACT_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-]+(:\d{1,5})?")  # one origin of IUI_GATEWAY_ORIGINS
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# The schemes workers.redisio.connection.connect takes: redis-py's three and the two of a Redis Cluster.
REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")


MIN_STATE_KEY_BYTES = 32  # an HMAC-SHA256 key as long as its output


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

    # A field's description (the one home of the docs' settings table) is its `description=` or the string below it.
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True,
                                      use_attribute_docstrings=True)

    redis_url: str = Field(default="redis://127.0.0.1:6379/0", min_length=1)
    """The Redis of the input streams and state (`iui demo` uses an embedded Redis when unset);
    `redis+cluster://host:port/0` (or `rediss+cluster://`) names any node of a Redis Cluster, and
    `unix:///path/to/redis.sock?db=0` a Redis on the same host through its Unix socket."""
    rq_redis_url: str | None = None
    """Redis of the RQ queues; unset, they use `IUI_REDIS_URL`. RQ does not support Redis Cluster, so with a
    cluster `IUI_REDIS_URL` it must be set, to a plain `redis://` server."""
    redis_password_file: Path | None = None
    """A file holding the password of `IUI_REDIS_URL`'s user (`redis://worker@redis:6379/0`), read at start and
    put into the URL percent-encoded (any character); one line of UTF-8, at most 4,096 bytes, a final newline
    dropped; the URL must not carry a password itself."""
    rq_redis_password_file: Path | None = None
    """The same for `IUI_RQ_REDIS_URL`, which it needs (without it the RQ queues use `IUI_REDIS_URL` and its
    password); `iui rq-worker` hands the URL to RQ in its environment, never on its command line."""
    key_prefix: str = Field(default="iui", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Prefix of every key (letters, digits, `_ . -`)."""
    partitions: int = Field(default=64, ge=1, le=16_384)
    """Partition count P, fixed per deployment (`{prefix}:meta`); choose P near the number of worker processes
    you expect to run times 8–16, not far more (each round's blocking read names every held partition)."""
    lease_ttl_ms: int = Field(default=10_000, ge=200, le=600_000)
    """Partition lease TTL; a killed worker's partitions move within TTL + one pool tick (< 2 × TTL)."""
    lease_renew_ms: int = Field(default=3_000, ge=50, le=300_000)
    """Lease renewal interval, at most half of `IUI_LEASE_TTL_MS`."""
    max_document_bytes: int = Field(
        default=UI_LIMITS["maxDocumentBytes"], ge=MIN_DOCUMENT_BYTES, le=UI_LIMITS["maxDocumentBytes"]
    )
    """Document budget in UTF-8 bytes of compact JSON; may only lower the protocol limit. A document within the
    protocol's 262,144 bytes but beyond this is `document_too_large`; beyond 262,144 it is `invalid_document`
    (`invalid_mutation` for a patch) whatever this is."""
    max_frames_per_generation: int = Field(default=UI_PROTOCOL_LIMITS["maxStreamFrames"], ge=2,
                                           le=UI_PROTOCOL_LIMITS["maxStreamFrames"])
    """Frame cap per generation (one always kept for the terminal frame)."""
    max_generations_per_session: int = Field(default=256, ge=1, le=1_000_000)
    """Generations a session may open; then `open` is rejected (`generation_capacity`; checked when deciding and
    again inside `commit.lua`, atomically with the write, so no generation is ever overwritten or added
    beyond it; the generation hashes expire with the session, `IUI_SESSION_TTL_S`)."""
    reply_ttl_s: int = Field(default=300, ge=1, le=86_400 * 7)
    """Lifetime of a reply list, in seconds."""
    dead_letter_after: int = Field(default=5, ge=1, le=1_000)
    """Deliveries (or failed attempts) before an entry is dead-lettered."""
    dead_letter_entry_bytes: int = Field(default=16_384, ge=1_024, le=1_048_576)
    """Bytes of the original fields a dead letter keeps; 64 fields at most."""
    dead_letter_max_entries: int = Field(default=1_000, ge=1, le=1_000_000)
    """Dead letters kept per partition; the oldest are deleted first."""
    dead_letter_max_bytes: int = Field(default=1_048_576, ge=1_024, le=1024 * 1024 * 1024)
    """Bytes of dead letters kept per partition; the oldest are deleted first."""
    frame_log_max: int = Field(default=1_024, ge=16, le=1_000_000)
    """Frames kept per session frame log (the oldest go first)."""
    frame_log_max_bytes: int = Field(default=16 * 1024 * 1024, ge=UI_PROTOCOL_LIMITS["maxStreamFrameBytes"],
                                     le=1024 * 1024 * 1024)
    """Bytes of the frames kept per session frame log; at least one maximal frame, so the newest frame always
    stays."""
    max_plain_per_session: int = Field(default=256, ge=1, le=1_000_000)
    """Plain `intelligent_ui` documents a session may hold; then `plain_capacity`."""
    max_answer_blocks_per_session: int = Field(default=256, ge=1, le=100_000)
    """answer-ui@1 blocks (distinct message and block ids) a session may hold; then `answer_capacity`."""
    max_answer_turns_per_session: int = Field(default=256, ge=1, le=100_000)
    """answer turns (distinct message ids, each with its final answer of up to 100,000 UTF-16 units) a session
    may hold; then `answer_capacity`."""
    session_ttl_s: int = Field(default=7 * 86_400, ge=0, le=366 * 86_400)
    """Sliding expiry of all of a session's keys, in seconds (default 7 days), refreshed together by each of its
    calls, accepted or refused (not by a call refused as another identity's session); `0`: never expire. A
    queued RQ job waits at most this long."""
    metrics_port: int = Field(default=0, ge=0, le=65_535)
    """`iui worker` serves Prometheus metrics on this port (`--metrics-port`); `0`: off."""
    metrics_addr: str = Field(default="0.0.0.0", min_length=1, max_length=253, pattern=r"^[A-Za-z0-9.:\-]+$")
    """Address the metrics listen on: an IP literal or host name (`--metrics-addr`); `0.0.0.0`: every interface."""
    log_level: str = "WARNING"
    """Worker log level: `DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL`, any case (`--log-level`)."""
    worker_id: str | None = Field(default=None, max_length=128, pattern=r"^[A-Za-z0-9_.\-]*$")
    """Worker id shown in leases and `iui status` (letters, digits, `_`, `.`, `-`; a host or pod name);
    unset or empty: random."""
    heartbeat_ms: int = Field(default=1_000, ge=50, le=60_000)
    """Pool tick: heartbeat, rebalance, lag."""
    batch_size: int = Field(default=32, ge=1, le=1_000)
    """Entries a partition reads (and writes in one pipelined round trip) per turn."""
    cache_bytes: int = Field(default=512 * 1024 * 1024, ge=1024 * 1024, le=1 << 40)
    """Estimated memory of the process-wide generation cache (checkpoint bytes × 24, retired types' JSON × 6,
    128 per call id and 2 KiB per entry); least recently used entries go first. It also bounds a dispatcher
    round: once its decided, unsettled writes hold an eighth of this, the round settles them before deciding
    more; the restored snapshots that cold sessions holding the same document share, and the parsed plain
    documents of host actions, are each kept within another eighth (estimated alike)."""
    state_key: SecretStr | None = None
    """Key of the seal over every stored generation (HMAC-SHA256, at least 32 bytes; the same for every worker
    of a deployment). A cold session whose record's seal verifies is restored without validating its tree
    again; unset, the seal is keyed by its version only and proves the record intact, not who wrote it."""
    state_key_file: Path | None = None
    """A file holding IUI_STATE_KEY (one line; a final newline is dropped)."""
    gc_freeze_s: float = Field(default=1.0, ge=0, le=86_400)
    """The worker freezes its heap (`gc.freeze`) after start-up, then this often and whenever 50,000 young
    objects accumulate, so no collection walks the cache; `0` leaves CPython's collector as it is."""
    # The action runtime: the admin capability catalog, the files root of the built-in file
    # capabilities, bounds of a session's operations, and the job liveness timings.
    capabilities: Path = Field(default=Path(__file__).with_name("capabilities.toml"))
    """The admin capability catalog (TOML `[[capability]]` tables or a JSON array), validated at start; the
    default is the shipped one."""
    files_root: Path = Field(default=Path("files"))
    """The only directory `read_file` / `write_file` may touch (a relative path is taken from the RQ worker's
    directory)."""
    max_file_bytes: int = Field(default=8 * 1024 * 1024, ge=1_024, le=1024 * 1024 * 1024)
    """Largest file `read_file` reads or `write_file` writes."""
    max_operations_per_session: int = Field(default=1_024, ge=1, le=1_000_000)
    """Operations a session may hold (plus at most 256 per document ref); then `operation_capacity` /
    `ledger_full`."""
    receipt_log_max: int = Field(default=4_096, ge=16, le=1_000_000)
    """Receipt changes kept per session receipt log (the oldest go first)."""
    agent_inbox_max: int = Field(default=1_024, ge=1, le=1_000_000)
    """Agent inbox entries kept per session (the oldest go first)."""
    job_heartbeat_ms: int = Field(default=3_000, ge=100, le=600_000)
    """A running job refreshes its heartbeat key every third of this; once it lapses the reaper rules `unknown`."""
    job_start_timeout_s: int = Field(default=30, ge=1, le=3_600)
    """How long a job waits for its `running` report to be committed before it gives up without running; part of
    RQ's job timeout (this + the capability's `timeout` + 5 s), never of the capability's own `timeout`."""
    reaper_interval_ms: int = Field(default=1_000, ge=50, le=600_000)
    """How often each partition owner sweeps its active operations."""
    durability: Literal["fast", "local", "replica"] = "fast"
    """What an acknowledged call survives: `fast` (Redis's own persistence; a crash may lose ~2 s), `local`
    (every master fsyncs every write) or `replica` (a reply counts once `IUI_DURABILITY_REPLICAS` replicas
    hold the commit, waited for at most `IUI_DURABILITY_TIMEOUT_MS`); fixed per deployment (`{prefix}:meta`;
    workers/redisio/durability.py)."""
    durability_replicas: int = Field(default=1, ge=1, le=64)
    """`replica` mode: replicas that must hold a commit before its reply counts."""
    durability_timeout_ms: int = Field(default=1_000, ge=10, le=60_000)
    """`replica` mode: how long one `WAIT` waits for them; a reader waits again until its own deadline."""
    streaming_enabled: bool = True
    """Seed 001's `streaming.enabled`: `false` refuses `intelligent_ui_open/patch/complete/cancel`
    (`streaming_disabled`) and leaves `intelligent_ui` and the answer tools; advertised in `{prefix}:meta`
    `streaming`, the `catalog` reply's `tools` and `iui status`; give every worker of a deployment the same
    value."""
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
    gateway_queue_bytes: int = Field(default=8 * 1_048_576, ge=1_048_576, le=1_073_741_824,
                                     description="events buffered per connection, in characters of their JSON "
                                                 "text (a frame's non-ASCII text takes up to 3 bytes a character); a "
                                                 "slower reader is disconnected (at least 1 MiB: four of the largest "
                                                 "frames)")
    gateway_reply_timeout_s: float = Field(default=30.0, gt=0, le=600,
                                           description="longest wait for the runtime's reply to an HTTP request (504)")
    gateway_header_timeout_s: float = Field(
        default=10.0, gt=0, le=300,
        description="longest wait for a request's head, from the connection's start or the next request's first "
                    "byte (408, then the connection closes)")
    gateway_body_timeout_s: float = Field(default=30.0, gt=0, le=600,
                                          description="longest wait for a request's body once its head is read (408)")
    gateway_send_timeout_s: float = Field(
        default=30.0, gt=0, le=600,
        description="a client that takes no bytes of what is sent to it for this long is dropped: its event stream "
                    "ends, and a connection closed with bytes it does not take is aborted this long after the close "
                    "(its slot and file descriptor freed)")
    gateway_max_connections: int | None = Field(
        default=None, ge=1, le=1_000_000,
        description="open client connections of a gateway process (event streams included); a request on one "
                    "more is answered overloaded (503) and its connection closed; unset: what the open-file limit "
                    "leaves after the Redis pool and 64 files of its own")
    gateway_redis_connections: int = Field(
        default=256, ge=4, le=100_000,
        description="Redis connections of a gateway process (a request that finds them all busy waits for one); "
                    "each HTTP request awaiting its reply holds one")
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
        if data.get("state_key_file") and not data.get("state_key"):
            try:
                data["state_key"] = read_password(Path(data["state_key_file"]))
            except ValueError as error:
                raise ValueError(f"state_key_file {error}") from None
        for url_field, file_field in (("redis_url", "redis_password_file"), ("rq_redis_url", "rq_redis_password_file")):
            if data.get(file_field):
                url = data.get(url_field) or cls.model_fields[url_field].default
                try:
                    data[url_field] = with_password(str(url), read_password(Path(data[file_field])))
                except ValueError as error:
                    raise ValueError(f"{file_field} {error}") from None
        return data

    @field_validator("redis_url", "rq_redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        # Checked here rather than by redis-py at connect time, whose error names no variable and may
        # quote a part of the URL (`redis://user:secret/0` reads "secret" as the port): these name none.
        if value is None:
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018  # raises ValueError unless the port is a number 0-65535
        except ValueError:
            raise ValueError("must be a URL such as redis://host:6379/0 (is the host or the port missing, "
                             "or not a number 0-65535?)") from None
        if parts.scheme not in REDIS_SCHEMES:  # urlsplit lowercases the scheme, as redis-py does
            schemes = [f"{scheme}://" for scheme in REDIS_SCHEMES]
            raise ValueError(f"must start with {', '.join(schemes[:-1])} or {schemes[-1]}")
        if parts.scheme == "unix" and not parts.path:
            raise ValueError("must name the socket's path, such as unix:///run/redis/redis.sock")
        if parts.scheme != "unix" and not parts.hostname:  # redis-py would take localhost: another server
            raise ValueError("must name a host, such as redis://host:6379/0")
        if parts.port is None and parts.netloc.endswith(":"):  # redis-py would take 6379: another server
            raise ValueError("must name its port after the colon, such as redis://host:6379/0")
        return value

    @field_validator("gateway_origins")
    @classmethod
    def _exact_origins(cls, value: str) -> str:
        # Checked with the settings, so `iui gateway` refuses it before it says it serves.
        if not all(EXACT_ORIGIN.fullmatch(origin) for origin in origins_of(value)):
            raise ValueError("takes exact origins (http(s)://host[:port]), comma-separated; never * or null")
        return value

    @field_validator("state_key")
    @classmethod
    def _long_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().encode("utf-8")) < MIN_STATE_KEY_BYTES:
            raise ValueError(f"must be at least {MIN_STATE_KEY_BYTES} bytes")
        return value

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


def origins_of(setting: str) -> list[str]:
    """The origins of an `IUI_GATEWAY_ORIGINS` value (comma-separated, blanks around each dropped)."""
    return [origin.strip() for origin in setting.split(",") if origin.strip()]
