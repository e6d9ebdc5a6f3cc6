"""The `iui` command: validate, schema, and one-line errors with a non-zero status."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stream-initial.json"


def test_validate_prints_ok_for_a_valid_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLE)]) == 0
    assert capsys.readouterr().out == f"{EXAMPLE}: OK\n"


def test_validate_prints_every_issue_with_its_path_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(EXAMPLE.read_text())
    document["mode"] = "text"
    del document["title"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    assert main(["validate", str(bad)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"{bad}: /mode: " in "\n".join(lines)
    assert all(line.startswith(f"{bad}: /") for line in lines) and len(lines) >= 2


def test_validate_reports_unreadable_or_non_json_input_in_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["validate", str(broken), str(tmp_path / "missing.json"), str(EXAMPLE)]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 2
    assert "Traceback" not in captured.err
    assert f"{EXAMPLE}: OK" in captured.out


def test_schema_prints_the_document_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"].startswith("https://json-schema.org/draft/2020-12")


def test_an_invalid_setting_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("IUI_PARTITIONS", "many")
    assert main(["status"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "IUI_PARTITIONS" in err


def test_an_unreachable_redis_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--redis-url", "redis://127.0.0.1:1/0"]) != 0
    err = capsys.readouterr().err
    assert err.startswith("iui: error: ") and err.count("\n") == 1


@pytest.fixture()
def silent_server() -> Iterator[str]:
    """A TCP port that accepts connections and never answers (a hung or black-holed Redis)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def one_line_failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[float, str]:
    started = time.monotonic()
    assert main(argv) != 0
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert err.startswith("iui: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return elapsed, err


@pytest.mark.parametrize("command", [["status"], ["tail", "s1", "--timeout", "1"], ["demo"],
                                     ["submit", "--session", "s1", "--tool", "intelligent_ui_open",
                                      "--timeout", "2", str(EXAMPLE)]])
def test_every_client_command_fails_in_one_line_on_a_closed_port(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = one_line_failure([*command, "--redis-url", "redis://127.0.0.1:1/0"], capsys)
    assert "127.0.0.1:1 is unreachable" in err


@pytest.mark.parametrize("command", [["status", "--timeout", "1"], ["tail", "s1", "--timeout", "1"],
                                     ["submit", "--session", "s1", "--tool", "intelligent_ui_open",
                                      "--timeout", "1", str(EXAMPLE)]])
def test_a_redis_that_never_answers_fails_in_one_line_within_the_command_timeout(
    command: list[str], silent_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    elapsed, err = one_line_failure([*command, "--redis-url", silent_server], capsys)
    assert "did not answer in time" in err
    assert elapsed < 1.6  # the command's --timeout (redis-py's own default would wait 5 s)


@pytest.mark.parametrize("command", [["submit", "--session", "s1", "--tool", "intelligent_ui_open", str(EXAMPLE)],
                                     ["action", "get", "--session", "s1", "op-1"]])
def test_a_blocking_command_ends_by_its_timeout_not_twice_it(
    command: list[str], silent_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # its read bound admits the blocking reply (BLMOVE up to --timeout): a non-blocking read must not wait as long
    elapsed, err = one_line_failure([*command, "--timeout", "2", "--redis-url", silent_server], capsys)
    assert "did not answer in time" in err
    assert 1.9 < elapsed < 2.6


def test_version_prints_the_installed_version_and_which_builds_run(capsys: pytest.CaptureFixture[str]) -> None:
    from core import COMPILED
    from workers.observability.metrics import build_version
    from workers.runtime.build import COMPILED as WORKER_COMPILED

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    core, worker = ("compiled" if flag else "pure" for flag in (COMPILED, WORKER_COMPILED))
    assert exit_.value.code == 0 and capsys.readouterr().out == f"iui {build_version()} ({core} core, {worker} worker)\n"


def test_every_option_of_every_command_has_help() -> None:
    import argparse

    from workers.cli.main import build_parser

    def check(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):  # every subcommand, nested ones too
                for name, command in action.choices.items():
                    check(command, f"{path} {name}")
            else:
                assert action.help, f"{path} {'/'.join(action.option_strings) or action.dest} has no help"

    check(build_parser(), "iui")


@pytest.mark.parametrize(("variable", "value"), [("IUI_LOG_LEVEL", "verbose"), ("IUI_METRICS_ADDR", "not an address")])
def test_log_level_and_metrics_address_are_validated_settings(
        variable: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["worker", "--redis-url", "redis://127.0.0.1:1/0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"iui: error: invalid setting {variable}: ") and err.count("\n") == 1


@pytest.fixture()
def busy_port() -> Iterator[int]:
    """A port of 127.0.0.1 another listener holds."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    yield listener.getsockname()[1]
    listener.close()


def test_a_metrics_port_in_use_is_one_line_blaming_the_metrics_port_not_redis(
        busy_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    worker = ["worker", "--redis-url", "redis://127.0.0.1:1/0"]
    _, err = one_line_failure([*worker, "--metrics-addr", "127.0.0.1", "--metrics-port", str(busy_port)], capsys)
    assert err.startswith(f"iui: error: invalid --metrics-port (IUI_METRICS_PORT): cannot serve metrics on "
                          f"127.0.0.1 port {busy_port}: Address already in use"), err
    monkeypatch.setenv("IUI_METRICS_ADDR", "127.0.0.1")
    monkeypatch.setenv("IUI_METRICS_PORT", str(busy_port))
    _, err = one_line_failure(worker, capsys)
    assert err.startswith("iui: error: invalid setting IUI_METRICS_PORT: ") and "Redis" not in err, err


def test_a_metrics_address_that_does_not_resolve_is_one_line_blaming_the_metrics_address(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    worker = ["worker", "--redis-url", "redis://127.0.0.1:1/0", "--metrics-port", "19100"]
    _, err = one_line_failure([*worker, "--metrics-addr", "999.1.1.1"], capsys)
    assert err.startswith("iui: error: invalid --metrics-addr (IUI_METRICS_ADDR): cannot serve metrics on "
                          "999.1.1.1 port 19100: "), err
    monkeypatch.setenv("IUI_METRICS_ADDR", "999.1.1.1")
    _, err = one_line_failure(worker, capsys)
    assert err.startswith("iui: error: invalid setting IUI_METRICS_ADDR: ") and "Redis" not in err, err


@pytest.mark.parametrize(("variable", "url"), [
    ("IUI_REDIS_URL", "http://x"),
    ("IUI_RQ_REDIS_URL", "http://rq:s3cret@x/0"),
    ("IUI_REDIS_URL", "redis://worker:s3cret/0"),  # no host: redis-py would quote "s3cret" as the port
])
def test_an_unusable_redis_url_is_one_line_naming_its_variable_and_never_the_url(
        variable: str, url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IUI_REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    monkeypatch.setenv(variable, url)
    _, err = one_line_failure(["worker"], capsys)
    assert err.startswith(f"iui: error: invalid setting {variable}: "), err
    assert "s3cret" not in err and "://x" not in err and "ValueError" not in err


@pytest.mark.parametrize("command", [["worker", "--redis-url", "redis://127.0.0.1:1/0"], ["rq-worker"]])
def test_a_missing_capability_catalog_is_one_line_naming_its_variable(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IUI_CAPABILITIES", str(tmp_path / "missing.toml"))
    _, err = one_line_failure(command, capsys)
    assert err.startswith("iui: error: invalid setting IUI_CAPABILITIES: capability catalog "), err


def test_log_level_names_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    from config.settings import load_settings

    monkeypatch.setenv("IUI_LOG_LEVEL", "debug")
    assert load_settings().log_level == "DEBUG"
    assert load_settings(log_level=" Info ").log_level == "INFO"
    monkeypatch.setenv("IUI_METRICS_ADDR", "127.0.0.1")
    assert load_settings().metrics_addr == "127.0.0.1"


# (argv of a command, the option given on its command line, its variable): every option that maps to a setting.
FLAG_ERRORS = [
    (["worker", "--partitions", "0"], "--partitions", "IUI_PARTITIONS"),
    (["status", "--partitions", "16385"], "--partitions", "IUI_PARTITIONS"),
    (["worker", "--redis-url", ""], "--redis-url", "IUI_REDIS_URL"),
    (["tail", "s1", "--key-prefix", "a{b}"], "--key-prefix", "IUI_KEY_PREFIX"),
    (["worker", "--lease-ttl-ms", "10"], "--lease-ttl-ms", "IUI_LEASE_TTL_MS"),
    (["worker", "--lease-renew-ms", "9000"], "--lease-renew-ms", "IUI_LEASE_RENEW_MS"),  # more than TTL / 2
    (["worker", "--metrics-port", "70000"], "--metrics-port", "IUI_METRICS_PORT"),
    (["worker", "--metrics-addr", "not an address"], "--metrics-addr", "IUI_METRICS_ADDR"),
    (["worker", "--log-level", "verbose"], "--log-level", "IUI_LOG_LEVEL"),
    (["worker", "--max-document-bytes", "10"], "--max-document-bytes", "IUI_MAX_DOCUMENT_BYTES"),
    (["demo", "--partitions", "0"], "--partitions", "IUI_PARTITIONS"),
    (["rq-worker", "--key-prefix", "a b"], "--key-prefix", "IUI_KEY_PREFIX"),
    (["action", "get", "op1", "--session", "s1", "--partitions", "-1"], "--partitions", "IUI_PARTITIONS"),
]


@pytest.mark.parametrize(("argv", "flag", "variable"), FLAG_ERRORS, ids=[" ".join(a[:3]) for a, _, _ in FLAG_ERRORS])
def test_an_invalid_option_names_the_option_and_its_variable(
        argv: list[str], flag: str, variable: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("IUI_PARTITIONS", "IUI_LEASE_TTL_MS", "IUI_LEASE_RENEW_MS", "IUI_KEY_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"iui: error: invalid {flag} ({variable}): ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_a_setting_from_the_environment_is_still_named_by_its_variable_next_to_valid_options(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IUI_LEASE_TTL_MS", "1000")
    monkeypatch.setenv("IUI_PARTITIONS", "0")
    assert main(["worker", "--log-level", "info"]) == 1
    assert capsys.readouterr().err.startswith("iui: error: invalid setting IUI_PARTITIONS: ")
    # the renewal given on the command line is blamed as that option, the TTL from the environment is not
    monkeypatch.delenv("IUI_PARTITIONS")
    assert main(["worker", "--lease-renew-ms", "900"]) == 1
    assert capsys.readouterr().err.startswith("iui: error: invalid --lease-renew-ms (IUI_LEASE_RENEW_MS): ")


def test_rq_worker_hands_the_rq_url_to_rq_in_its_environment_never_on_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from workers.cli import actions as action_commands

    calls: list[tuple[str, list[str], dict[str, str]]] = []
    monkeypatch.setattr(action_commands.os, "execvpe", lambda file, argv, env: calls.append((file, argv, env)))
    (tmp_path / "password").write_text("s3cret\n")
    monkeypatch.setenv("IUI_REDIS_URL", "redis://worker@redis:6379/0")
    monkeypatch.setenv("IUI_REDIS_PASSWORD_FILE", str(tmp_path / "password"))
    monkeypatch.delenv("IUI_RQ_REDIS_URL", raising=False)
    main(["rq-worker", "--rq-option=--burst", "q1"])
    (_, argv, env), = calls
    assert argv[1:] == ["-m", "rq.cli", "worker", "--worker-class", "workers.actions.rq_worker.RQWorker", "--burst",
                        "q1"] and "s3cret" not in " ".join(argv)
    assert env["RQ_REDIS_URL"] == "redis://worker:s3cret@redis:6379/0"
    assert env["IUI_REDIS_PASSWORD_FILE"] == os.environ["IUI_REDIS_PASSWORD_FILE"]  # the jobs read it again
    main(["rq-worker", "--rq-option=--worker-class=rq.SimpleWorker", "q1"])  # a class of the operator's own
    assert calls[-1][1][1:] == ["-m", "rq.cli", "worker", "--worker-class=rq.SimpleWorker", "q1"]


def test_an_error_of_ours_is_its_message_and_a_foreign_one_keeps_its_class() -> None:
    import argparse

    from workers.cli.main import _describe
    from workers.runtime.pool import MetaMismatch

    args = argparse.Namespace(redis_url="redis://127.0.0.1:1/0")
    assert _describe(MetaMismatch("iui:meta has partitions=64, configured 8"), args) == \
        "iui:meta has partitions=64, configured 8"
    assert _describe(KeyError("x"), args) == "KeyError: 'x'"
