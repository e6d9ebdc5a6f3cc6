"""`python -m bench compare`: each side says which core it ran, and a pure core posing as compiled fails."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench import compare


def test_a_side_reports_its_core_its_timings_and_a_digest_of_its_results():
    request = json.dumps({"min_time": 0.001, "cases": {"10 components": compare._cases()["10 components"]}})
    command, env = compare._command("pure", sys.executable)
    done = subprocess.run(command, input=request, capture_output=True, text=True, env=env, timeout=120, check=True)
    result = json.loads(done.stdout)
    assert result["compiled"] is False and result["core"].startswith(str(compare.ROOT / "core"))
    assert set(result["times"]["10 components"]) == {"patch", "open"}
    assert all(t > 0 for t in result["times"]["10 components"].values()) and len(result["digest"]) == 64


def test_an_interpreter_whose_core_is_pure_is_refused_as_the_compiled_side(monkeypatch):
    pure = compare._command("pure", sys.executable)  # this tree's source core, whichever build the tests run
    monkeypatch.setattr(compare, "_command", lambda side, python: pure)
    with pytest.raises(SystemExit, match="the compiled side ran the pure core"):
        compare.main(["--compiled-python", sys.executable, "--min-time", "0.001"])


def test_fewer_than_three_rounds_are_refused():
    with pytest.raises(SystemExit):
        compare.main(["--repeat", "2"])
