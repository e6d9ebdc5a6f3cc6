"""The HS256 secret of the bearer tokens has one home: `iui gateway` checks tokens and `iui token`
signs them with the same bytes, from IUI_GATEWAY_JWT_SECRET or the file IUI_GATEWAY_JWT_SECRET_FILE
(the compose stack's `gateway-jwt`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import load_settings
from gateway.identity import Identity, Verifier, hs256_secret
from workers.cli import main

SECRET = "0123456789abcdef" * 4  # 64 hex digits, as ops/redis/secrets.sh writes gateway-jwt


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("IUI_GATEWAY_JWT_SECRET", "IUI_GATEWAY_JWT_SECRET_FILE", "IUI_GATEWAY_JWT_PUBLIC_KEY_FILE",
                     "IUI_GATEWAY_JWKS_FILE", "IUI_GATEWAY_JWT_AUDIENCE", "IUI_GATEWAY_JWT_ISSUER"):
        monkeypatch.delenv(variable, raising=False)


def _token(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    status = main(["token", "--sub", "alice", "--project", "demo", "--role", "user", *extra])
    captured = capsys.readouterr()
    return status, captured.out.strip(), captured.err


def test_the_secret_comes_from_the_variable_or_from_the_file_without_its_line_end(tmp_path: Path) -> None:
    (tmp_path / "gateway-jwt").write_text(SECRET + "\n")
    assert hs256_secret(load_settings(gateway_jwt_secret=SECRET)) == SECRET.encode()
    assert hs256_secret(load_settings(gateway_jwt_secret_file=tmp_path / "gateway-jwt")) == SECRET.encode()
    assert hs256_secret(load_settings()) is None


@pytest.mark.parametrize("variable", ["IUI_GATEWAY_JWT_SECRET", "IUI_GATEWAY_JWT_SECRET_FILE"])
def test_iui_token_signs_what_the_gateway_accepts_either_way(variable: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gateway-jwt").write_text(SECRET + "\n")
    monkeypatch.setenv(variable, SECRET if variable == "IUI_GATEWAY_JWT_SECRET" else str(tmp_path / "gateway-jwt"))
    status, token, err = _token(capsys)
    assert status == 0, err
    assert Verifier.of(load_settings()).verify(token) == Identity("alice", "demo", "user")
    assert Verifier(audience="iui", issuer=None, secret=SECRET.encode()).verify(token).owner == "alice demo"


def test_iui_token_without_a_secret_says_which_settings_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    status, token, err = _token(capsys)
    assert status == 2 and token == ""
    assert err.count("\n") == 1 and "IUI_GATEWAY_JWT_SECRET" in err and "IUI_GATEWAY_JWT_SECRET_FILE" in err


@pytest.mark.parametrize("content", ["short-secret\n", "\n", ""])
def test_a_short_or_empty_secret_file_is_refused_by_both_without_quoting_it(
        content: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gateway-jwt").write_text(content)
    monkeypatch.setenv("IUI_GATEWAY_JWT_SECRET_FILE", str(tmp_path / "gateway-jwt"))
    status, token, err = _token(capsys)
    assert status == 2 and token == ""
    assert err.count("\n") == 1 and "IUI_GATEWAY_JWT_SECRET_FILE must hold at least 32 bytes" in err
    assert content.strip() == "" or content.strip() not in err
    with pytest.raises(ValueError, match="IUI_GATEWAY_JWT_SECRET_FILE must hold at least 32 bytes"):
        Verifier.of(load_settings())


def test_a_short_secret_variable_is_refused(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IUI_GATEWAY_JWT_SECRET", "short-secret")
    status, _, err = _token(capsys)
    assert status == 2 and "IUI_GATEWAY_JWT_SECRET must be at least 32 bytes" in err and "short-secret" not in err


def test_an_unreadable_secret_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IUI_GATEWAY_JWT_SECRET_FILE", str(tmp_path / "missing"))
    status, _, err = _token(capsys)
    assert status == 2 and err == "iui: error: IUI_GATEWAY_JWT_SECRET_FILE: not a readable UTF-8 file\n"


def test_a_missing_jwks_file_says_it_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IUI_GATEWAY_JWKS_FILE", str(tmp_path / "absent.json"))
    with pytest.raises(ValueError, match=r"^IUI_GATEWAY_JWKS_FILE: not a readable UTF-8 file$"):
        Verifier.of(load_settings())
