"""A small server-sent events reader for the tests (httpx streaming), following the SSE spec's
field rules: `id`, `event`, `data` (joined by newlines), `retry`, comments ignored."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Message:
    """One dispatched SSE message."""

    id: str | None
    event: str
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def messages(lines: Iterator[str]) -> Iterator[Message]:
    """The messages of an SSE line stream."""
    event, data, last_id = "message", [], None
    for line in lines:
        if line == "":
            if data:
                yield Message(last_id, event, "\n".join(data))
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            last_id = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)


@dataclass
class Follower:
    """Follows a session's event stream in a thread, reconnecting with Last-Event-ID like EventSource."""

    base_url: str
    session: str
    headers: dict[str, str]
    path: str = "events"
    received: list[Message] = field(default_factory=list)
    last_id: str | None = None
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Follower:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            headers = dict(self.headers)
            if self.last_id:
                headers["last-event-id"] = self.last_id
            try:
                with httpx.stream("GET", f"{self.base_url}/v1/sessions/{self.session}/{self.path}", headers=headers,
                                  timeout=httpx.Timeout(5.0, read=2.0)) as response:
                    if response.status_code != 200:
                        self.errors.append(f"status {response.status_code}")
                        time.sleep(0.2)
                        continue
                    for message in messages(response.iter_lines()):
                        self.received.append(message)
                        if message.id is not None:
                            self.last_id = message.id
                        if self._stop.is_set():
                            return
            except httpx.HTTPError:
                pass
            self.reconnects += 1
            time.sleep(0.1)

    def wait_for(self, predicate: Any, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self.received):
            assert time.monotonic() < deadline, f"not reached; received {len(self.received)} messages"
            time.sleep(0.02)


def read_until(client: httpx.Client, path: str, headers: dict[str, str], count: int,
               timeout: float = 10.0) -> list[Message]:
    """The first `count` messages of one connection (then it is closed)."""
    found: list[Message] = []
    with client.stream("GET", path, headers=headers, timeout=httpx.Timeout(timeout)) as response:
        assert response.status_code == 200, response.read()
        for message in messages(response.iter_lines()):
            found.append(message)
            if len(found) >= count:
                break
    return found
