"""Capabilities run as jobs of real `rq worker` processes: outcomes, confirmation, cancel, lost jobs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from core import apply_action_result, initial_state, parse_document
from tests.integration import actions_support
from tests.integration.actions_support import VALUES, actions_document, configure, plain_ref, wait_status
from tests.integration.conftest import Runtime, example

rq_workers = actions_support.rq_workers  # the fixture, used by name
pytestmark = pytest.mark.integration
SESSION = "jobs-s1"
FINAL = {"succeeded", "failed", "cancelled", "unknown"}


@pytest.fixture()
def rt(runtime: Runtime, tmp_path: Path) -> Runtime:
    configure(runtime, tmp_path).start()
    assert runtime.call(SESSION, "intelligent_ui", {"document": actions_document()}, call="plain-1")["ok"]
    return runtime


def reserve(rt: Runtime, action: str, values: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    reply = rt.client.reserve(SESSION, plain_ref("plain-1"), action, {**VALUES, **(values or {})}, timeout=10,
                              **kwargs)
    assert reply["ok"], reply
    return reply["result"]["receipt"]


def counter(rt: Runtime, key: str = "k") -> int:
    return int(rt.redis.get(f"test:side-effect:{key}") or 0)


def statuses(rt: Runtime, op: str) -> list[str]:
    return [r["status"] for _, r in rt.client.receipt_log(SESSION) if r["operationId"] == op]


def test_the_file_reader_example_runs_end_to_end_and_its_result_maps_into_state(rt: Runtime, rq_workers) -> None:
    (Path(rt.settings.files_root) / "docs").mkdir()
    (Path(rt.settings.files_root) / "docs" / "CHANGELOG.md").write_text("one\ntwo\nthree\n", "utf-8")
    document = example("actions-file-reader.json")
    rt.call(SESSION, "intelligent_ui", {"document": document}, call="reader-1")
    state = initial_state(parse_document(document))
    rq_workers.start()
    with rt.client.follow_receipts(SESSION) as feed:
        reply = rt.client.reserve(SESSION, plain_ref("reader-1", "file-reader"), "count_lines", dict(state))
        op = reply["result"]["receipt"]["operationId"]
        done = feed.wait_for(op, FINAL, timeout=30)
    assert done["status"] == "succeeded" and done["result"] == {"totalLines": 3}
    assert statuses(rt, op) == ["queued", "running", "succeeded"]
    assert apply_action_result(parse_document(document), state, "count_lines", done["result"])["lines"] == 3


def test_the_file_writer_example_waits_for_approval_then_writes(rt: Runtime, rq_workers) -> None:
    document = example("actions-file-writer.json")
    rt.call(SESSION, "intelligent_ui", {"document": document}, call="writer-1")
    state = dict(initial_state(parse_document(document)))
    rq_workers.start()
    receipt = rt.client.reserve(SESSION, plain_ref("writer-1", "file-writer"), "save_note", state)["result"]["receipt"]
    assert receipt["status"] == "awaiting_confirmation"
    time.sleep(0.5)
    assert not (Path(rt.settings.files_root) / "notes").exists()
    assert rt.client.confirm(SESSION, receipt["operationId"], True)["result"]["receipt"]["status"] == "queued"
    done = wait_status(rt, SESSION, receipt["operationId"], FINAL)
    assert done["status"] == "succeeded" and done["result"] == {"operation": "create"}
    assert (Path(rt.settings.files_root) / "notes" / "meeting.md").read_text("utf-8") == state["content"]


def test_a_path_escape_ends_failed_and_touches_nothing(rt: Runtime, rq_workers) -> None:
    document = example("actions-file-reader.json")
    rt.call(SESSION, "intelligent_ui", {"document": document}, call="reader-2")
    state = {**initial_state(parse_document(document)), "path": "../../etc/passwd"}
    rq_workers.start()
    reply = rt.client.reserve(SESSION, plain_ref("reader-2", "file-reader"), "count_lines", state)
    receipt = reply["result"]["receipt"]
    done = wait_status(rt, SESSION, receipt["operationId"], FINAL)
    assert done["status"] == "failed" and done["message"].startswith("parent_reference")
    assert "result" not in done


@pytest.mark.parametrize(("action", "message"), [("bad", "not a valid public action result"),
                                                 ("explode", "the capability raised RuntimeError")])
def test_an_invalid_result_or_a_raising_capability_ends_failed(rt: Runtime, rq_workers, action: str,
                                                               message: str) -> None:
    rq_workers.start()
    op = reserve(rt, action)["operationId"]
    done = wait_status(rt, SESSION, op, FINAL)
    assert done["status"] == "failed" and message in done["message"] and "secret detail" not in done["message"]


def test_a_result_or_message_too_large_for_a_report_ends_failed_with_a_receipt_core_accepts(
        rt: Runtime, rq_workers) -> None:
    # an audit: a 100 KB result made a report over an entry's 64 KiB, refused `oversize`: the
    # operation then ended `unknown` ("the job was lost"); a 600-emoji message was cut to 512 code
    # points, 1,024 UTF-16 units, a receipt core refuses
    from core import parse_ui_action_receipt

    rq_workers.start()
    huge = wait_status(rt, SESSION, reserve(rt, "huge")["operationId"], FINAL)
    assert huge["status"] == "failed", huge
    assert huge["message"] == ("result_too_large: the capability's public result is 100,012 JSON bytes; "
                               "the limit is 32,768")
    long = wait_status(rt, SESSION, reserve(rt, "long_error")["operationId"], FINAL)
    assert long["status"] == "failed" and long["message"].startswith("too_long: \U0001F600"), long["message"][:40]
    assert len(long["message"].encode("utf-16-le")) // 2 <= 512
    for receipt in (huge, long):
        parse_ui_action_receipt(receipt)


def test_a_result_carries_only_the_public_fields(rt: Runtime, rq_workers) -> None:
    rq_workers.start()
    done = wait_status(rt, SESSION, reserve(rt, "noop", {"value": 7})["operationId"], FINAL)
    assert done["status"] == "succeeded" and done["result"] == {"value": 7}


def test_a_running_operation_cannot_be_cancelled_and_still_reports_its_outcome(rt: Runtime, rq_workers) -> None:
    rq_workers.start()
    op = reserve(rt, "count", {"seconds": 1.5})["operationId"]
    wait_status(rt, SESSION, op, {"running"})
    reply = rt.client.cancel(SESSION, op)
    assert reply["ok"] is False and reply["error"]["code"] == "not_cancellable"
    done = wait_status(rt, SESSION, op, FINAL)
    assert done["status"] == "succeeded" and counter(rt) == 1


def test_a_cancelled_queued_operation_never_runs(rt: Runtime, rq_workers) -> None:
    op = reserve(rt, "count", {"key": "cancelled"})["operationId"]
    assert rt.client.cancel(SESSION, op)["result"]["receipt"]["status"] == "cancelled"
    # an audit: RQ kept the cancelled job's hash and its canceled-registry entry with no expiry
    # (the job is cancelled once the receipt is committed, so just after the reply)
    # (the job is kept a day, as a finished one: its `canceled` status keeps the reaper from enqueuing it)
    # (a queued job expires with its session from the start, 7 days here: wait for the cancel's day)
    deadline = time.monotonic() + 5
    while not 0 < rt.redis.ttl(f"rq:job:{op}") <= 86_400 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 < rt.redis.ttl(f"rq:job:{op}") <= 86_400 and rt.redis.zcard("rq:canceled:iui") == 0
    assert rt.redis.hget(f"rq:job:{op}", "status") == b"canceled" and rt.redis.llen("rq:queue:iui") == 0
    rq_workers.start()
    time.sleep(2.0)
    assert counter(rt, "cancelled") == 0 and statuses(rt, op) == ["queued", "cancelled"]
    assert 0 < rt.redis.ttl(f"rq:job:{op}") <= 86_400 and rt.redis.zcard("rq:canceled:iui") == 0


def test_a_started_job_of_a_cancelled_operation_is_refused_before_it_runs(rt: Runtime, rq_workers) -> None:
    op = reserve(rt, "count", {"key": "late"})["operationId"]
    key = rt.client.keys.operations(rt.client.partition(SESSION), SESSION)
    job = rt.redis.hget(key, f"job:{op}")
    assert rt.client.cancel(SESSION, op)["ok"]
    from rq import Queue

    from workers.actions.jobs import JOB_FUNCTION
    from workers.wire.entry import loads

    secret = rt.redis.hget(key, f"sec:{op}").decode()
    rt.redis.delete(f"rq:job:{op}")  # as if the cancel had lost the race with a worker
    Queue("iui", connection=rt.redis).enqueue_call(JOB_FUNCTION, args=({**loads(job), "secret": secret},),
                                                   job_id=op)
    rq_workers.start()
    time.sleep(2.0)
    assert counter(rt, "late") == 0 and statuses(rt, op) == ["queued", "cancelled"]


def test_a_queued_operation_whose_job_is_missing_is_enqueued_by_the_reaper(rt: Runtime, rq_workers) -> None:
    op = reserve(rt, "noop")["operationId"]
    deadline = time.monotonic() + 10
    while not rt.redis.exists(f"rq:job:{op}"):  # the owner enqueues right after its commit
        assert time.monotonic() < deadline
        time.sleep(0.01)
    rt.redis.delete(f"rq:job:{op}")
    rt.redis.delete("rq:queue:iui")  # as if the owner died between the commit and the enqueue
    rq_workers.start()
    assert wait_status(rt, SESSION, op, FINAL)["status"] == "succeeded"


def test_sigkill_of_the_rq_worker_mid_job_ends_unknown_and_never_reruns(rt: Runtime, rq_workers) -> None:
    rq_workers.start()
    op = reserve(rt, "count", {"key": "killed", "seconds": 20})["operationId"]
    wait_status(rt, SESSION, op, {"running"})
    deadline = time.monotonic() + 10
    while counter(rt, "killed") == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    rq_workers.kill(rq_workers.processes[0])
    done = wait_status(rt, SESSION, op, FINAL, timeout=30)
    assert done["status"] == "unknown" and "not re-executed" in done["message"]
    rq_workers.start()  # a fresh worker, RQ's own cleanup: nothing runs the job again
    time.sleep(3.0)
    assert counter(rt, "killed") == 1
    assert statuses(rt, op) == ["queued", "running", "unknown"]
    assert rt.metrics.registry.get_sample_value("iui_unknown_outcomes_total", {"capability": "counter"}) == 1


def rq_status(rt: Runtime, op: str) -> str:
    from rq.job import Job

    return str(Job.fetch(op, connection=rt.redis).get_status(refresh=True).value)


def test_a_capability_is_stopped_at_its_declared_timeout_and_ends_unknown(rt: Runtime, rq_workers) -> None:
    rq_workers.start()
    op = reserve(rt, "slow", {"key": "slow-1", "seconds": 30})["operationId"]  # timeout = 1 in the catalog
    running = wait_status(rt, SESSION, op, {"running"})
    done = wait_status(rt, SESSION, op, FINAL, timeout=10)
    assert done["status"] == "unknown", done
    assert done["message"].startswith("timeout: the capability did not finish within 1 s")
    assert "may or may not have happened" in done["message"]
    assert 1_000 <= done["updatedAt"] - running["updatedAt"] < 3_000  # 1 s, plus the reports' round trips
    assert (Path(rt.settings.files_root) / "slow-1").read_text("utf-8") == "written"  # the side effect happened
    assert statuses(rt, op) == ["queued", "running", "unknown"]
    deadline = time.monotonic() + 5
    while rq_status(rt, op) == "started":  # the job is over, not still sleeping its 30 s
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert rt.metrics.registry.get_sample_value("iui_unknown_outcomes_total", {"capability": "slow"}) == 1


@pytest.mark.parametrize(("name", "stop"), [("timeout-1", "JobTimeoutException"), ("exit-1", "SystemExit"),
                                            ("interrupt-1", "KeyboardInterrupt")])
def test_a_capability_stopped_from_outside_ends_unknown_never_failed(rt: Runtime, rq_workers, name: str,
                                                                    stop: str) -> None:
    rq_workers.start()
    op = reserve(rt, "stopped", {"key": name})["operationId"]
    done = wait_status(rt, SESSION, op, FINAL, timeout=20)
    assert done["status"] == "unknown", done
    assert done["message"].startswith(f"stopped: the job was stopped ({stop}) while the capability ran")
    assert (Path(rt.settings.files_root) / name).read_text("utf-8") == "written"
    assert statuses(rt, op) == ["queued", "running", "unknown"]


def test_a_job_whose_start_is_never_committed_ends_failed_not_unknown(runtime: Runtime, tmp_path: Path,
                                                                       rq_workers) -> None:
    # an audit: with no partition owner for a while (a fail-over), the job's wait for its `running`
    # reply died at redis-py's 5 s socket timeout; and a job that gave up left its `running` entry,
    # which a returning owner committed: the reaper then ruled `unknown` for a capability never run
    configure(runtime, tmp_path, job_start_timeout_s=7).start()
    assert runtime.call(SESSION, "intelligent_ui", {"document": actions_document()}, call="plain-1")["ok"]
    op = reserve(runtime, "count", {"key": "never"})["operationId"]
    deadline = time.monotonic() + 10
    while not runtime.redis.exists(f"rq:job:{op}"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    runtime.stop()  # no owner: the `running` report waits in the partition's stream
    rq_workers.start()
    deadline = time.monotonic() + 20
    while rq_status(runtime, op) not in ("finished", "failed"):  # the job waited its 7 s and gave up
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert rq_status(runtime, op) == "finished"  # it ended by itself, not by a TimeoutError
    runtime.start()
    done = wait_status(runtime, SESSION, op, FINAL, timeout=20)
    assert done["status"] == "failed" and "nothing was run" in done["message"], done
    assert counter(runtime, "never") == 0
    assert statuses(runtime, op) == ["queued", "running", "failed"]


def stranded_job(rt: Runtime, key: str) -> tuple[str, Any]:
    """A reserved `count` operation and its RQ job, taken off RQ's queue: no worker will run it."""
    from rq.job import Job

    op = reserve(rt, "count", {"key": key})["operationId"]
    deadline = time.monotonic() + 10
    while not rt.redis.exists(f"rq:job:{op}"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    rt.redis.delete("rq:queue:iui")
    return op, Job.fetch(op, connection=rt.redis)


def test_a_queued_operation_whose_job_died_before_its_first_heartbeat_ends_failed(rt: Runtime) -> None:
    # an audit: an RQ worker killed between RQ's `started` and the job's first heartbeat left the
    # operation `queued` (RQ kept the job `started` until its own cleanup, ~17 min in one run)
    from datetime import UTC, datetime, timedelta

    from rq.job import JobStatus

    op, job = stranded_job(rt, "dead-horse")  # as RQ leaves a job its dead horse started
    job.set_status(JobStatus.STARTED)
    job.started_at = datetime.now(UTC) - timedelta(seconds=1)
    job.save()
    time.sleep(0.5)
    assert wait_status(rt, SESSION, op, {"queued"})["status"] == "queued"  # within its grace: still queued
    job.started_at = datetime.now(UTC) - timedelta(seconds=60)
    job.save()
    done = wait_status(rt, SESSION, op, FINAL, timeout=10)
    assert done["status"] == "failed" and done["message"] == "the job ended before it started the capability"
    assert statuses(rt, op) == ["queued", "failed"]
    assert counter(rt, "dead-horse") == 0


def test_the_oldest_queued_operation_is_exported_so_a_stopped_rq_worker_is_seen(rt: Runtime, rq_workers) -> None:
    # an audit: with the RQ worker down, operations stayed `queued` and no metric or alert saw it
    def oldest() -> float:
        values = [sample.value for metric in rt.metrics.registry.collect() for sample in metric.samples
                  if sample.name == "iui_operations_queued_oldest_seconds"]
        return max(values, default=-1.0)

    assert oldest() <= 0.0  # nothing queued (a partition without operations is not swept)
    op = reserve(rt, "noop")["operationId"]  # no RQ worker runs: it stays queued
    deadline = time.monotonic() + 10
    while oldest() < 1.5:  # swept every 100 ms here
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert oldest() < 10.0
    rq_workers.start()
    assert wait_status(rt, SESSION, op, FINAL)["status"] == "succeeded"
    deadline = time.monotonic() + 5
    while oldest() != 0.0:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_queued_operation_whose_job_finished_ends_failed(rt: Runtime) -> None:
    # a job that gave up on its start and whose `failed` report Redis then lost (fast durability)
    from rq.job import JobStatus

    op, job = stranded_job(rt, "finished")
    job.set_status(JobStatus.FINISHED)
    done = wait_status(rt, SESSION, op, FINAL, timeout=10)
    assert done["status"] == "failed" and done["message"] == "the job ended before it started the capability"
    assert counter(rt, "finished") == 0
