"""`iui demo answer`: the answer-ui@1 examples end to end on an embedded or a real Redis.

It publishes the response block and the blocks of the final-answer example with
`present_answer`, closes the turn with `final_answer` and prints the answer's parts; checks the
report example's `ui_blocks`; then runs a view-state round trip on the view-state example
(get at revision 0, put, get it back, a stale writer's conflict, an idempotent retry).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from config.settings import Settings
from core import answer_parts, parse_report_ui_blocks

from ..client.answers import AnswerClient
from ..client.client import Client
from ..observability.metrics import Metrics
from .demo import _connect, _start_pools

# Copies of examples/answer-ui/, shipped as package data (a unit test keeps them identical).
EXAMPLES = Path(str(resources.files("workers.cli") / "demo_examples" / "answer-ui"))


class DemoFailure(Exception):
    """A demo step did not get the reply it expects."""


def _ok(reply: dict[str, Any], what: str) -> dict[str, Any]:
    if not reply.get("ok"):
        raise DemoFailure(f"{what}: {reply['error']['code']}: {reply['error']['message']}")
    result: dict[str, Any] = reply["result"]
    return result


def _turn(out: Callable[[str], None], answers: AnswerClient, session: str, message: str,
          example: dict[str, Any]) -> None:
    for block in example["published_blocks"]:
        out("  " + _ok(answers.present_answer(session, message, block), "present_answer")["receipt"])
    final = example["final_answer"]
    out("  " + _ok(answers.final_answer(session, message, final["answer"], final["ui_block_ids"]),
                   "final_answer")["receipt"])
    for part in answer_parts(final, example["published_blocks"]):
        shown = part["text"].replace("\n", " ")[:60] if part["type"] == "text" else part["block_id"]
        out(f"    part {part['type']}: {shown}")


def _views(out: Callable[[str], None], answers: AnswerClient, session: str, example: dict[str, Any]) -> bool:
    message, target = example["message_id"], example["view_state"]
    block_id, nodes = target["block_id"], target["nodes"]
    first = _ok(answers.get(session, message, block_id), "get")
    out(f"  get: revision={first['revision']} schema_digest={first['schema_digest'][:16]}... nodes={first['nodes']}")
    saved = _ok(answers.put(session, message, block_id, nodes, expected_revision=0,
                            schema_digest=first["schema_digest"], request_id="demo-put-1"), "put")
    out(f"  put: revision={saved['revision']} migrated={saved['migrated']}")
    retry = _ok(answers.put(session, message, block_id, nodes, expected_revision=0,
                            schema_digest=first["schema_digest"], request_id="demo-put-1"), "retry")
    out(f"  retry with the same request_id: revision={retry['revision']} (the original result)")
    stale = answers.put(session, message, block_id, {}, expected_revision=0, schema_digest=first["schema_digest"])
    out(f"  a second window still at revision 0: {stale['error']['code']} (current revision "
        f"{stale['error']['revision']})")
    back = _ok(answers.get(session, message, block_id), "get")
    out(f"  get: revision={back['revision']} round trip equal={back['nodes'] == nodes}")
    return bool(back["nodes"] == nodes and back["revision"] == 1 and stale["error"]["code"] == "conflict")


def run_answer_demo(settings: Settings, *, embedded: bool, out: Callable[[str], None] = print,
                    examples: Path = EXAMPLES, workers: int = 2) -> int:
    """Run the answer demo; returns 0 when every step got the reply it expects."""
    factory, where = _connect(settings, embedded)
    out(f"iui demo answer: using {where}; {workers} worker pools, {settings.partitions} partitions")
    metrics = Metrics(registry=CollectorRegistry())
    pools = _start_pools(settings, factory, metrics, workers)

    def load(name: str) -> Any:
        return json.loads((examples / name).read_text("utf-8"))

    try:
        run = uuid.uuid4().hex[:8]
        session = f"demo-answer-{run}"
        answers = AnswerClient(client=Client(redis=factory(), prefix=settings.key_prefix,
                                             partitions=settings.partitions),
                               principal="demo-user", project="demo-project")
        out(f"session {session}")
        out("response block (turn msg-1):")
        response = load("response-block.json")
        out("  " + _ok(answers.present_answer(session, "msg-1", response), "present_answer")["receipt"])
        out("final answer with two markers (turn msg-2):")
        _turn(out, answers, session, "msg-2", load("final-answer.json"))
        report = load("report.json")
        checked = parse_report_ui_blocks(report["ui_blocks"], report["evidence_ids"])
        out(f"report: {len(checked)} ui_blocks valid against {len(report['evidence_ids'])} evidence ids")
        view = load("view-state.json")
        out(f"view-state round trip (turn {view['message_id']}, principal demo-user, project demo-project):")
        _turn(out, answers, session, view["message_id"], view)
        passed = _views(out, answers, session, view)
        events = answers.events(session)
        out(f"answer log: {len(events)} events ({sum(e['type'] == 'block' for e in events)} blocks)")
    except DemoFailure as error:
        out(f"demo step failed: {error}")
        passed = False
    finally:
        for pool, _ in pools:
            pool.stop()
        for _, thread in pools:
            thread.join(timeout=10)
    out("passed" if passed else "FAILED")
    return 0 if passed else 1
