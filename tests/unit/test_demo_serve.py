"""`iui demo --serve`: its option errors and a taken port are one line, before anything starts
(the served demo itself runs in tests/browser/test_demo_serve.py)."""

from __future__ import annotations

import socket

import pytest

from workers.cli import main


@pytest.fixture(autouse=True)
def embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("IUI_REDIS_URL", "IUI_GATEWAY_PORT", "IUI_PARTITIONS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("argv", "message"), [
    (["demo", "answer", "--serve"],
     "iui: error: --serve plays the stream, the actions and the answers together: drop 'answer'\n"),
    (["demo", "--serve", "--pause", "-1"], "iui: error: --pause must be 0-60 seconds\n"),
    (["demo", "--serve", "--pause", "nan"], "iui: error: --pause must be 0-60 seconds\n"),
])
def test_an_option_serve_cannot_use_is_one_line_and_exit_2(argv: list[str], message: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message)


def test_a_taken_port_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo", "--serve", "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"iui: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
