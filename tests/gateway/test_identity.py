"""Bearer tokens: every way a token can be wrong is the same refusal, and roles grant what they say."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from gateway.identity import Forbidden, Identity, Permission, Unauthorized, Verifier, mint

SECRET = b"a-secret-of-at-least-thirty-two-bytes!!"
CLAIMS = {"sub": "alice", "project": "demo", "role": "user", "aud": "iui"}


def claims(**changes: Any) -> dict[str, Any]:
    return {**CLAIMS, "exp": int(time.time()) + 600, **changes}


def hs(**changes: Any) -> str:
    return jwt.encode(claims(**changes), SECRET, algorithm="HS256")


def b64(part: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()


@pytest.fixture()
def verifier() -> Verifier:
    return Verifier(audience="iui", issuer=None, secret=SECRET)


def test_a_valid_token_is_its_identity(verifier: Verifier) -> None:
    assert verifier.verify(hs()) == Identity("alice", "demo", "user")
    assert verifier.verify(mint(secret=SECRET, principal="bob", project="p", role="agent", ttl_s=60)) == \
        Identity("bob", "p", "agent")


@pytest.mark.parametrize("token", [
    "", "not.a.token", "a" * 9000, "é.é.é",
    f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims())}.",  # alg none
    f"{b64({'alg': 'none'})}.{b64(claims())}.c2ln",
])
def test_malformed_and_unsigned_tokens_are_refused(verifier: Verifier, token: str) -> None:
    with pytest.raises(Unauthorized, match="a valid bearer token is required"):
        verifier.verify(token)


@pytest.mark.parametrize("changes", [
    {"exp": int(time.time()) - 60}, {"aud": "other"}, {"role": "root"}, {"sub": "has space"}, {"sub": "a:b"},
    {"project": ""}, {"sub": 7}, {"role": None},
])
def test_expired_foreign_or_ill_formed_claims_are_refused(verifier: Verifier, changes: dict[str, Any]) -> None:
    with pytest.raises(Unauthorized):
        verifier.verify(hs(**changes))


def test_missing_claims_are_refused(verifier: Verifier) -> None:
    for name in ("sub", "project", "role", "exp", "aud"):
        body = claims()
        del body[name]
        with pytest.raises(Unauthorized):
            verifier.verify(jwt.encode(body, SECRET, algorithm="HS256"))


def test_another_secret_and_another_issuer_are_refused() -> None:
    with pytest.raises(Unauthorized):
        Verifier(audience="iui", issuer=None, secret=SECRET).verify(
            jwt.encode(claims(), b"another-secret-of-thirty-two-bytes-x", algorithm="HS256"))
    with_issuer = Verifier(audience="iui", issuer="https://idp", secret=SECRET)
    with pytest.raises(Unauthorized):
        with_issuer.verify(hs())
    assert with_issuer.verify(hs(iss="https://idp")).principal == "alice"


def test_rs256_with_a_public_key_and_no_hmac_confusion() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    verifier = Verifier(audience="iui", issuer=None, public_key=public)
    assert verifier.verify(jwt.encode(claims(), key, algorithm="RS256")).role == "user"
    with pytest.raises(Unauthorized):  # the public key used as an HMAC secret
        verifier.verify(jwt.encode(claims(), SECRET, algorithm="HS256"))


def test_es256_with_a_jwks_file_chooses_the_key_by_kid(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    other = json.loads(RSAAlgorithm.to_jwk(rsa.generate_private_key(65537, 2048).public_key()))
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [{**jwk, "kid": "k1"}, {**other, "kid": "k2"}]}))
    from config.settings import load_settings
    from tests.gateway.conftest import SECRET as _  # noqa: F401 - the suite's module loads

    verifier = Verifier.of(load_settings(gateway_jwks_file=path))
    assert verifier.verify(jwt.encode(claims(), key, algorithm="ES256", headers={"kid": "k1"})).principal == "alice"
    for headers in ({"kid": "unknown"}, {}, {"kid": "k2"}):
        with pytest.raises(Unauthorized):
            verifier.verify(jwt.encode(claims(), key, algorithm="ES256", headers=headers))


def test_roles_grant_exactly_their_permissions() -> None:
    allowed = {role: {p for p in Permission if _granted(role, p)} for role in ("viewer", "user", "agent", "admin")}
    assert allowed == {"viewer": {Permission.READ},
                       "user": {Permission.READ, Permission.ACT, Permission.VIEW_STATE},
                       "agent": {Permission.READ, Permission.CALL}, "admin": set(Permission)}


def _granted(role: str, permission: Permission) -> bool:
    try:
        Identity("a", "p", role).require(permission)
    except Forbidden:
        return False
    return True


def test_a_short_secret_or_no_key_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Verifier(audience="iui", issuer=None, secret=b"short")
    with pytest.raises(ValueError, match="no token key configured"):
        Verifier(audience="iui", issuer=None)
