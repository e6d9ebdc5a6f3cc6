"""The `iui` command: validate, schema, and one-line errors with a non-zero status."""

from __future__ import annotations

import json
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
