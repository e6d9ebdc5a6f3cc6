"""`python -m bench compare`: each side says which core it ran, and a pure core posing as compiled fails."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench import compare

# The four floors by the first ruler, then pre-submitted (faster: the load generator's work is out of the time).
FLOORS = {"floor small": 4000.0, "floor large": 2000.0, "minimum small": 8000.0, "minimum large": 4000.0,
          "floor small presubmitted": 5000.0, "floor large presubmitted": 2300.0,
          "minimum small presubmitted": 10000.0, "minimum large presubmitted": 5000.0}


def test_a_side_reports_its_core_its_timings_and_a_digest_of_its_results():
    request = json.dumps({"min_time": 0.001, "cases": {"10 components": compare._cases()["10 components"]}})
    command, env = compare._command("pure", sys.executable)
    done = subprocess.run(command, input=request, capture_output=True, text=True, env=env, timeout=120, check=True)
    result = json.loads(done.stdout)
    assert result["compiled"] is False and result["core"].startswith(str(compare.ROOT / "core"))
    assert set(result["times"]["10 components"]) == {"patch", "open", "resume", "restore"}
    assert all(t > 0 for t in result["times"]["10 components"].values()) and len(result["digest"]) == 64


def test_an_interpreter_whose_core_is_pure_is_refused_as_the_compiled_side(monkeypatch):
    pure = compare._command("pure", sys.executable)  # this tree's source core, whichever build the tests run
    monkeypatch.setattr(compare, "_command", lambda side, python: pure)
    with pytest.raises(SystemExit, match="the compiled side ran the pure core"):
        compare.main(["--compiled-python", sys.executable, "--min-time", "0.001"])


def test_fewer_than_three_rounds_are_refused():
    with pytest.raises(SystemExit):
        compare.main(["--repeat", "2"])


def test_a_worker_side_must_run_the_builds_it_stands_for(tmp_path):
    from bench.compare_runtime import Side

    pure = Side("pure", sys.executable, tmp_path)
    pure.check()  # the tree's source core on PYTHONPATH: pure, whichever build runs the tests
    posing = Side("compiled", sys.executable, tmp_path)
    posing.env, posing.cwd = pure.env, pure.cwd  # an interpreter that would load the source core
    with pytest.raises(SystemExit, match="the compiled worker would run the pure core and the pure worker"):
        posing.check()


def test_the_runtime_table_gives_min_median_and_the_ratio_of_the_medians():
    from bench.compare_runtime import header, rows

    def side(rate: float) -> dict:
        return {"small": (rate, 0.2, rate * 1.2), "large": (rate / 2, 0.4, rate / 2 * 1.1), "cold": rate / 4,
                "warm": rate / 2, "cold distinct": rate / 8, "warm distinct": rate / 2}

    rounds = [{"pure": side(1000.0 * k), "compiled": side(2000.0 * k), **FLOORS} for k in (1, 2, 3)]
    table = {row[0]: row[1:] for row in rows(rounds)}
    assert table["1 worker, 10 components, calls/s"] == ["1,000", "2,000", "2,000", "4,000", "2.00"]
    assert table["10 components / batched floor"] == ["0.25", "0.50", "0.50", "1.00", "2.00"]
    assert table["cold / warm"] == ["0.50", "0.50", "0.50", "0.50", "1.00"]
    assert table["cold / warm, each its own document"] == ["0.25", "0.25", "0.25", "0.25", "1.00"]
    assert table["contract minimum, frame of 200 components, calls/s"] == ["4,000", "4,000", "", "", ""]
    assert {len(row) for row in rows(rounds)} == {len(header(None))}  # every row as wide as the header


def test_the_presubmitted_rows_set_each_ruler_against_the_floors_measured_by_the_same_ruler():
    from bench.compare_runtime import rows

    def side(rate: float, presubmitted: float) -> dict:
        return {"small": (rate, 0.2, presubmitted), "large": (rate / 2, 0.4, presubmitted / 2), "cold": rate / 4,
                "warm": rate / 2, "cold distinct": rate / 8, "warm distinct": rate / 2}

    rounds = [{"pure": side(1000.0, 1100.0), "compiled": side(2000.0, 2400.0), **FLOORS} for _ in range(3)]
    table = {row[0]: row[1:] for row in rows(rounds)}
    assert table["1 worker, 10 components, calls/s"][-1] == "2.00"
    assert table["1 worker, 10 components, calls/s, pre-submitted"] == ["1,100", "1,100", "2,400", "2,400", "2.18"]
    assert table["10 components / batched floor"] == ["0.25", "0.25", "0.50", "0.50", "2.00"]
    assert table["10 components / batched floor, both pre-submitted"] == ["0.22", "0.22", "0.48", "0.48", "2.18"]
    assert table["10 components / contract minimum, both pre-submitted"][2:4] == ["0.24", "0.24"]
    assert table["200 components / batched floor, both pre-submitted"][2:4] == ["0.52", "0.52"]  # 1,200 / 2,300
    assert table["batched floor, frame of 10 components, calls/s, pre-submitted"][:2] == ["5,000", "5,000"]
    assert table["contract minimum, frame of 200 components, calls/s, pre-submitted"][:2] == ["5,000", "5,000"]


def test_a_baseline_side_adds_its_columns_first_and_the_ratio_against_it_last():
    from bench.compare_runtime import header, rows

    def side(rate: float) -> dict:
        return {"small": (rate, 0.2, rate), "large": (rate / 2, 0.4, rate / 2), "cold": rate / 4, "warm": rate / 2,
                "cold distinct": rate / 8, "warm distinct": rate / 2}

    rounds = [{"baseline": side(500.0 * k), "pure": side(1000.0 * k), "compiled": side(2000.0 * k), **FLOORS}
              for k in (1, 2, 3)]
    table = {row[0]: row[1:] for row in rows(rounds)}
    assert table["1 worker, 10 components, calls/s"] == ["500", "1,000", "1,000", "2,000", "2,000", "4,000", "2.00",
                                                         "4.00"]
    assert table["batched floor, frame of 10 components, calls/s"] == ["4,000", "4,000", "", "", "", "", "", ""]
    assert {len(row) for row in rows(rounds)} == {len(header("abc1234"))}  # every row as wide as the header
    assert header("abc1234")[1] == "abc1234 min" and header("abc1234")[-1] == "compiled / abc1234 (medians)"


def test_a_paced_round_adds_the_busiest_threads_cpu_the_p99_and_its_ratio_to_the_latency_floor():
    from bench.compare_runtime import header, rows

    def side(cpu: float, p99: float) -> dict:
        return {"small": (1000.0, 0.2, 1100.0, cpu, p99), "large": (500.0, 0.4, 550.0), "cold": 250.0, "warm": 500.0,
                "cold distinct": 125.0, "warm distinct": 500.0}

    rounds = [{"paced rate": 1200.0, "pure": side(0.5, 10.0 * k), "compiled": side(0.4, 4.0 * k),
               "latency floor": 2.0 * k, **FLOORS} for k in (1, 2, 3)]
    table = {row[0]: row[1:] for row in rows(rounds)}
    at = "paced at 1,200 calls/s, 10 components"
    assert table[f"busiest thread's CPU ms per call, {at}"] == ["0.50", "0.50", "0.40", "0.40", "0.80"]
    assert table[f"p99 ms, {at}"] == ["10.00", "20.00", "4.00", "8.00", "0.40"]
    assert table[f"p99 / the latency floor's p99, {at}"] == ["5.00", "5.00", "2.00", "2.00", "0.40"]
    assert table["latency floor, p99 ms at 1,200 calls/s"] == ["2.00", "4.00", "", "", ""]
    assert {len(row) for row in rows(rounds)} == {len(header(None))}
    assert "latency floor, p99 ms at 1,200 calls/s" not in {row[0] for row in rows([{**r, "paced rate": 0.0}
                                                                                   for r in rounds])}


def test_a_baseline_worker_must_run_the_pure_core_of_its_own_tree(tmp_path):
    from bench.compare_runtime import Side

    elsewhere = Side("baseline", sys.executable, tmp_path, tree=tmp_path)  # no core there: another one loads
    with pytest.raises(SystemExit, match="the baseline worker would run"):
        elsewhere.check()
