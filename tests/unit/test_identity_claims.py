"""The claims of a bearer token are read exactly: `exp` and `nbf` without leeway and only as
numbers, and a token whose header or claims name a member twice is refused (two JSON readers
could take different ones)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest

from gateway.identity import Identity, Unauthorized, Verifier

SECRET = b"0123456789abcdef" * 4
ALICE = Identity("alice", "demo", "user")


def _claims(**changes: Any) -> dict[str, Any]:
    return {"sub": "alice", "project": "demo", "role": "user", "aud": "iui", "exp": int(time.time()) + 600, **changes}


def _verifier() -> Verifier:
    return Verifier(audience="iui", issuer=None, secret=SECRET)


def _segment(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


def _signed(header: str, payload: str) -> str:
    signing_input = _segment(header) + "." + _segment(payload)
    signature = hmac.new(SECRET, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def test_a_valid_token_is_accepted() -> None:
    assert _verifier().verify(jwt.encode(_claims(), SECRET, algorithm="HS256")) == ALICE


@pytest.mark.parametrize("claims", [
    lambda now: {"exp": now - 1},  # expired a second ago: no leeway
    lambda now: {"nbf": now + 3},  # valid in three seconds
    lambda now: {"exp": str(now + 600)},  # a number as text
    lambda now: {"exp": True},
    lambda now: {"nbf": str(now - 10)},
    lambda now: {"iat": "yesterday"},
])
def test_times_are_exact_numbers(claims: Callable[[int], dict[str, Any]]) -> None:
    with pytest.raises(Unauthorized):
        _verifier().verify(jwt.encode(_claims(**claims(int(time.time()))), SECRET, algorithm="HS256"))


def test_a_claim_named_twice_is_refused() -> None:
    body = json.dumps(_claims(role="viewer"))[:-1] + ', "role": "admin"}'
    assert json.loads(body)["role"] == "admin"  # what a last-wins reader takes
    with pytest.raises(Unauthorized):
        _verifier().verify(_signed('{"alg":"HS256","typ":"JWT"}', body))


def test_a_header_member_named_twice_is_refused() -> None:
    with pytest.raises(Unauthorized):
        _verifier().verify(_signed('{"alg":"none","alg":"HS256"}', json.dumps(_claims())))


def test_the_same_claims_written_once_each_are_accepted() -> None:
    assert _verifier().verify(_signed('{"alg":"HS256"}', json.dumps(_claims()))) == ALICE


def test_a_deeply_nested_header_or_claims_set_is_refused_not_a_crash() -> None:
    deep = "[" * 1000 + "]" * 1000
    for header, payload in ((deep, json.dumps(_claims())), ('{"alg":"HS256"}', deep)):
        with pytest.raises(Unauthorized):
            _verifier().verify(_signed(header, payload))


def test_an_expiry_no_float_can_hold_is_refused_not_a_crash() -> None:
    with pytest.raises(Unauthorized):
        _verifier().verify(jwt.encode(_claims(exp=10**400), SECRET, algorithm="HS256"))


def test_a_token_that_is_not_text_is_refused() -> None:
    for token in (5, None, ["a"], b"a.b.c"):
        with pytest.raises(Unauthorized):
            _verifier().verify(token)  # type: ignore[arg-type]
