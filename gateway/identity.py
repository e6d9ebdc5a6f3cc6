"""Who is calling: bearer tokens checked with PyJWT, and what each role may do.

A token carries `sub` (the principal), `project`, `role` and `exp`, for the configured audience
(and issuer, when set).  HS256 with a shared secret serves a local stack; RS256/ES256 with a
public key or a JWKS file serves production.  `alg: none`, a key of another algorithm family,
an unknown `kid`, a wrong audience or issuer, an expired or malformed token are all refused
the same way (`Unauthorized`), and nothing of the token is ever echoed.  Read exactly: `exp` and
`nbf` with no leeway and only as JSON numbers, and a header or claims set naming a member twice
is refused (a reader in front of the gateway could take the other one).
"""

from __future__ import annotations

import base64
import enum
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from config.settings import Settings
from workers.wire.entry import is_session_id

HMAC_ALGORITHMS = ("HS256",)
PUBLIC_ALGORITHMS = ("RS256", "ES256")
MIN_SECRET_BYTES = 32
MAX_TOKEN_BYTES = 8_192
VERIFIED_CAPACITY = 10_000  # tokens remembered as verified (the oldest is forgotten first)
TIME_CLAIMS = ("exp", "nbf", "iat")  # NumericDate claims (RFC 7519): JSON numbers, never text


class Unauthorized(Exception):
    """The request carries no valid token (401)."""


class Forbidden(Exception):
    """The token is valid but its role may not do this (403)."""


class Permission(enum.StrEnum):
    """What a request needs."""

    READ = "read"  # events, tickets, operations, catalog
    ACT = "act"  # reserve, confirm, cancel
    VIEW_STATE = "view_state"  # answer view state, deleting a session's answers
    CALL = "call"  # agents' tool calls


ROLES: Mapping[str, frozenset[Permission]] = {
    "viewer": frozenset({Permission.READ}),
    "user": frozenset({Permission.READ, Permission.ACT, Permission.VIEW_STATE}),
    "agent": frozenset({Permission.READ, Permission.CALL}),
    "admin": frozenset(Permission),
}


@dataclass(frozen=True, slots=True)
class Identity:
    """The verified caller: principal and project (the session owner's fields) and role."""

    principal: str
    project: str
    role: str

    def require(self, permission: Permission) -> None:
        """Raise `Forbidden` unless the role grants `permission`."""
        if permission not in ROLES[self.role]:
            raise Forbidden(f"the role {self.role} may not do this")

    @property
    def owner(self) -> str:
        """The session owner record this identity matches (`<principal> <project>`)."""
        return f"{self.principal} {self.project}"


class Verifier:
    """Checks bearer tokens against the configured keys."""

    def __init__(self, *, audience: str, issuer: str | None, secret: bytes | None = None,
                 public_key: Any = None, jwks: Mapping[str, Any] | None = None) -> None:
        if secret is None and public_key is None and not jwks:
            raise ValueError("no token key configured: set IUI_GATEWAY_JWT_SECRET, "
                             "IUI_GATEWAY_JWT_PUBLIC_KEY_FILE or IUI_GATEWAY_JWKS_FILE")
        if secret is not None and len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"IUI_GATEWAY_JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes")
        self._audience = audience
        self._issuer = issuer
        self._secret = secret
        self._public_key = public_key
        self._jwks = dict(jwks or {})
        self._verified: dict[str, tuple[Identity, float]] = {}  # token -> identity and expiry (insertion order)

    @classmethod
    def of(cls, settings: Settings) -> Verifier:
        """The verifier of the settings (ValueError with one line when they name no usable key)."""
        secret = hs256_secret(settings)
        public_key = None
        if settings.gateway_jwt_public_key_file is not None:
            public_key = _read(settings.gateway_jwt_public_key_file, "IUI_GATEWAY_JWT_PUBLIC_KEY_FILE").encode()
        jwks = _jwks(settings.gateway_jwks_file) if settings.gateway_jwks_file is not None else None
        return cls(audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer, secret=secret,
                   public_key=public_key, jwks=jwks)

    def verify(self, token: Any) -> Identity:
        """The identity of a token, or `Unauthorized` (a token verified before is remembered until it
        expires, so a client's every request does not pay for its signature again)."""
        if type(token) is not str or not token or len(token) > MAX_TOKEN_BYTES or not token.isascii():
            raise Unauthorized("a valid bearer token is required")
        known = self._verified.get(token)
        if known is not None:
            if time.time() < known[1]:
                return known[0]
            del self._verified[token]
        identity, expires = self._check(token)
        if len(self._verified) >= VERIFIED_CAPACITY:
            self._verified.pop(next(iter(self._verified)))  # the oldest entry
        self._verified[token] = (identity, expires)
        return identity

    def _check(self, token: str) -> tuple[Identity, float]:
        try:
            _members_once(token)
            header = jwt.get_unverified_header(token)
            key, algorithms = self._key(header)
            claims = jwt.decode(token, key, algorithms=list(algorithms), audience=self._audience,
                                issuer=self._issuer, options={"require": ["exp", "sub", "aud"]})
            if any(name in claims and type(claims[name]) not in (int, float) for name in TIME_CLAIMS):
                raise ValueError("a time claim is not a number")  # PyJWT takes "1796..." as a number
            return _identity(claims), float(claims["exp"])
        except (jwt.PyJWTError, ValueError, TypeError, KeyError, RecursionError, OverflowError):
            # RecursionError: JSON nested deeply enough for json.loads's recursion (a 1 KB header does
            # it); OverflowError: an `exp` no float can hold.  Neither is the server's fault.
            raise Unauthorized("a valid bearer token is required") from None

    def _key(self, header: Mapping[str, Any]) -> tuple[Any, tuple[str, ...]]:
        algorithm = header.get("alg")
        if algorithm in HMAC_ALGORITHMS and self._secret is not None:
            return self._secret, HMAC_ALGORITHMS
        if algorithm in PUBLIC_ALGORITHMS:
            kid = header.get("kid")
            if self._jwks:
                if not isinstance(kid, str) or kid not in self._jwks:
                    raise ValueError("unknown kid")
                return self._jwks[kid], (algorithm,)
            if self._public_key is not None:
                return self._public_key, PUBLIC_ALGORITHMS
        raise ValueError("no key for this algorithm")  # alg none, or one this gateway has no key for


def _members_once(token: str) -> None:
    """ValueError unless the token's header and claims are JSON objects naming each member once."""
    segments = token.split(".")
    if len(segments) != 3:
        raise ValueError("not a JWS in compact form")
    for segment in segments[:2]:
        json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)), object_pairs_hook=_once)


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a member is named twice")
    return members


def hs256_secret(settings: Settings) -> bytes | None:
    """The HS256 secret of the settings (IUI_GATEWAY_JWT_SECRET, else the file IUI_GATEWAY_JWT_SECRET_FILE
    without surrounding white space), or None; ValueError with one line when it is unreadable or too short.
    The one home of the secret: the gateway checks tokens with it and `iui token` signs them."""
    if settings.gateway_jwt_secret is not None:
        secret, variable = settings.gateway_jwt_secret.get_secret_value().encode("utf-8"), "IUI_GATEWAY_JWT_SECRET"
        if len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"{variable} must be at least {MIN_SECRET_BYTES} bytes")
        return secret
    if settings.gateway_jwt_secret_file is None:
        return None
    variable = "IUI_GATEWAY_JWT_SECRET_FILE"
    secret = _read(settings.gateway_jwt_secret_file, variable).strip().encode("utf-8")
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"{variable} must hold at least {MIN_SECRET_BYTES} bytes")
    return secret


def _identity(claims: Mapping[str, Any]) -> Identity:
    principal, project, role = claims.get("sub"), claims.get("project"), claims.get("role")
    if not (isinstance(principal, str) and is_session_id(principal) and isinstance(project, str)
            and is_session_id(project) and isinstance(role, str) and role in ROLES):
        raise ValueError("claims")
    return Identity(principal, project, role)


def mint(*, secret: bytes, principal: str, project: str, role: str, ttl_s: int, audience: str = "iui",
         issuer: str | None = None) -> str:
    """An HS256 token (for `iui token`: a local stack and the tests)."""
    if role not in ROLES:
        raise ValueError("role must be one of " + ", ".join(ROLES))
    if not (is_session_id(principal) and is_session_id(project)):
        raise ValueError("sub and project: 1-128 printable ASCII, no space, ':', '{' or '}'")
    now = int(time.time())
    claims: dict[str, Any] = {"sub": principal, "project": project, "role": role, "aud": audience,
                              "iat": now, "exp": now + ttl_s}
    if issuer:
        claims["iss"] = issuer
    return jwt.encode(claims, secret, algorithm="HS256")


def _read(path: Path, variable: str) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        raise ValueError(f"{variable}: not a readable UTF-8 file") from None


def _jwks(path: Path) -> dict[str, Any]:
    """`kid` -> public key of a JWKS file (RSA and EC keys; others are skipped)."""
    text = _read(path, "IUI_GATEWAY_JWKS_FILE")  # a missing file says so, not that it is no JWKS
    try:
        document = json.loads(text)
        keys: dict[str, Any] = {}
        for jwk in document["keys"]:
            kty = jwk.get("kty")
            if isinstance(jwk.get("kid"), str) and kty in ("RSA", "EC"):
                key = json.dumps(jwk)
                keys[jwk["kid"]] = RSAAlgorithm.from_jwk(key) if kty == "RSA" else ECAlgorithm.from_jwk(key)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ValueError("IUI_GATEWAY_JWKS_FILE: not a JWKS document with RSA or EC keys") from None
    return keys
