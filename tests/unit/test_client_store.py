"""The Client's session store (run in Node.js): a resync's receipts give the operations that the same
receipts, applied one by one as events, give."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web" / "src"
SCRIPT = f"""
const {{ SessionStore }} = await import({json.dumps((WEB / 'store.js').as_uri())});
let input = '';
process.stdin.on('data', (chunk) => {{ input += chunk; }});
process.stdin.on('end', () => {{
  const operations = (store) => [...store.snapshot().operations.values()];
  const out = JSON.parse(input).map((receipts) => {{
    const resynced = new SessionStore();
    resynced.resync({{ receipts }});
    const applied = new SessionStore();
    for (const receipt of receipts) applied.receipt(receipt);
    return [operations(resynced), operations(applied)];
  }});
  process.stdout.write(JSON.stringify(out));
}});
"""
STATUSES = ["awaiting_confirmation", "queued", "running", "succeeded", "failed", "cancelled", "rejected"]


def _receipts(rng: random.Random) -> list[Any]:
    ops = [f"op-{n}" for n in range(rng.randint(1, 6))]
    receipts: list[Any] = []
    for _ in range(rng.randint(0, 20)):
        receipts.append(rng.choice([
            {"operationId": rng.choice(ops), "requestId": "r", "actionId": "a", "status": rng.choice(STATUSES),
             "documentRef": {"sourceCallId": "c", "uiId": "u", "generation": 1, "revision": 0}},
            {"operationId": rng.choice(ops), "status": 7}, "junk", None, {"status": "queued"}]))
    return receipts


def test_a_resync_s_receipts_make_the_operations_their_events_make() -> None:
    # The resync fills one Map (a copy a receipt made 1,024 receipts cost ~30 ms); the rules are
    # withReceipt's: a status once, nothing after a terminal one, malformed receipts ignored.
    rng = random.Random(7)
    cases = [_receipts(rng) for _ in range(400)]
    for resynced, applied in node_json(SCRIPT, json.dumps(cases)):
        assert resynced == applied
