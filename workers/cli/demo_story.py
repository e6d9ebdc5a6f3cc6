"""What the agent of `iui demo --serve` does in its session, paced for a person watching the page.

It opens the stream example (the first call claims the session for the demo's identity), waits
until a page follows the session, then applies the example's mutations `pause` seconds apart
and completes the stream.  Then it shows the three action examples as stream UIs, reserves the
file reader's read (it runs on the demo's job thread and succeeds on its own) and the file
writer's write, which waits for the person's approval in the page; then it publishes the
answer-ui@1 examples (two blocks at their markers, and a block whose view state the page
saves).  Every call carries the demo's identity as the trusted entry fields, as the gateway
would set them from a token.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core import initial_state, parse_document

from ..client.client import Client, ClientError
from ..wire.names import COMPLETE, OPEN, PATCH

PRINCIPAL, PROJECT = "demo-user", "demo-project"  # the identity of the demo's session and token
FINAL = {"succeeded", "failed", "cancelled", "unknown"}
ACTION_UIS = (("actions-file-reader.json", "count_lines"), ("actions-file-writer.json", "save_note"),
              ("agent-callback.json", None))


class StoryFailure(Exception):
    """A call of the story was refused (the message names the runtime's code)."""


class DemoStory:
    """The demo agent's calls in one session (`open()` first, then `play()` on a thread)."""

    def __init__(self, *, client: Client, session: str, examples: Path, pause: float,
                 out: Callable[[str], None], stop: threading.Event) -> None:
        self.client, self.session, self.examples = client, session, examples
        self.pause, self.out, self.stop = pause, out, stop
        self.frame: dict[str, Any] = {}

    def _load(self, name: str) -> Any:
        return json.loads((self.examples / name).read_text("utf-8"))

    def _send(self, kind: str, name: str, body: Any, call: str | None = None) -> dict[str, Any]:
        request = uuid.uuid4().hex
        entry = self.client.entry(self.session, name, body, kind=kind, request=request, call=call or request,
                                  principal=PRINCIPAL, project=PROJECT)
        reply = self.client.send(entry, timeout=30)
        if not reply.get("ok"):
            raise StoryFailure(f"{name} was refused: {reply['error']['code']}")
        result: dict[str, Any] = reply["result"]
        return result

    def _stream(self, tool: str, arguments: dict[str, Any], call: str | None = None) -> dict[str, Any]:
        self.frame = self._send("tool", tool, arguments, call)["frame"]
        return self.frame

    def _cursor(self) -> dict[str, Any]:
        frame = self.frame
        return {"sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
                "baseRevision": frame["revision"]}

    def open(self) -> None:
        """Open the stream example: its first frame claims the session."""
        self._stream(OPEN, {"document": self._load("stream-initial.json")}, call="sales-report")

    def play(self, watched: Callable[[], bool]) -> None:
        """The rest of the story, once `watched()` says a page follows the session."""
        self.out("waiting for the page to open the session… (Ctrl-C stops the demo)")
        while not watched():
            if self.stop.wait(0.1):
                return
        for mutation in self._load("stream-mutations.json"):
            if self.stop.wait(self.pause):
                return
            frame = self._stream(PATCH, {**self._cursor(), "mutation": mutation})
            self.out(f"stream: seq={frame['seq']} revision={frame['revision']} {mutation['type']}")
        frame = self._stream(COMPLETE, self._cursor())
        self.out(f"stream: seq={frame['seq']} complete")
        operations = self._actions()
        self._answers()
        self._outcomes(operations)

    def _actions(self) -> list[tuple[str, str]]:
        """Show the action examples; reserve the read and the write as clicks would."""
        operations: list[tuple[str, str]] = []
        for name, action in ACTION_UIS:
            if self.stop.wait(self.pause):
                return operations
            document = self._load(name)
            self._stream(OPEN, {"document": document}, call=name.removesuffix(".json"))
            self._stream(COMPLETE, self._cursor())
            if action is None:
                continue
            ref = {key: self.frame[key] for key in ("sourceCallId", "uiId", "generation", "revision")}
            body = {"documentRef": ref, "requestId": f"demo-{uuid.uuid4().hex}", "actionId": action,
                    "values": dict(initial_state(parse_document(document)))}
            receipt = self._send("action", "reserve", body)["receipt"]
            operations.append((receipt["operationId"], action))
            waits = " (approve or deny it in the page)" if receipt["status"] == "awaiting_confirmation" else ""
            self.out(f"action: {action} {receipt['status']}{waits}")
        return operations

    def _answers(self) -> None:
        """Publish the final-answer example and the view-state example, block by block."""
        for name in ("final-answer.json", "view-state.json"):
            if self.stop.wait(self.pause):
                return
            turn = self._load(f"answer-ui/{name}")
            message = turn.get("message_id", "msg-final")
            for block in turn["published_blocks"]:
                self._send("tool", "present_answer", {"message_id": message, "block": block})
            self._send("tool", "final_answer", {"message_id": message, **turn["final_answer"]})
            self.out(f"answer: {message} with {len(turn['final_answer']['ui_block_ids'])} blocks")

    def _outcomes(self, operations: list[tuple[str, str]]) -> None:
        """Print each operation's outcome when it comes (the write's after the person's decision)."""
        with self.client.follow_receipts(self.session) as feed:
            for operation, action in operations:
                while not self.stop.is_set():
                    try:
                        receipt = feed.wait_for(operation, FINAL, timeout=1.0)
                    except ClientError:
                        continue
                    result = f" {json.dumps(receipt['result'])}" if "result" in receipt else ""
                    self.out(f"action: {action} {receipt['status']}{result}")
                    break
