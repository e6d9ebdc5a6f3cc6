"""The real stack of the end-to-end browser tests, and pages that watch themselves.

One stack per test module: the suite's redis-server, a worker pool in a thread (the `Runtime`
of the integration tests), a real `rq worker` process for the capability jobs, and a real
`iui gateway` process (uvicorn) on a free port.  Agents speak to the gateway over HTTP with an
agent token; the page gets a user token of the same `sub` and `project` in its URL fragment.
A `Viewer` is one browser tab on the gateway's page that records console errors, uncaught
exceptions, CSP violations (`securitypolicyviolation`) and every event the page applied
(the Client's `iui:applied` hook), and fails its test on any of the first three.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from tests.browser.conftest import ARTIFACTS, axe_path
from tests.external_tools import require
from tests.gateway.conftest import GatewayProcess, auth, token
from tests.integration.actions_support import RQWorkers, configure
from tests.integration.conftest import Runtime
from workers.client.client import Client
from workers.redisio.connection import connect

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OPEN, PATCH, COMPLETE = "intelligent_ui_open", "intelligent_ui_patch", "intelligent_ui_complete"
WATCH = """
window.__iui = {csp: [], applied: []};
document.addEventListener('securitypolicyviolation', (e) => window.__iui.csp.push(`${e.violatedDirective} ${e.blockedURI}`));
window.addEventListener('iui:applied', (e) => window.__iui.applied.push(e.detail));
"""


def example(name: str) -> Any:
    """A decoded example file."""
    return json.loads((EXAMPLES / name).read_text("utf-8"))


class Stack:
    """Workers, an RQ worker and a gateway on one Redis; agent calls over the gateway's HTTP API."""

    def __init__(self, redis_url: str, files: Path) -> None:
        self.runtime = configure(Runtime(redis_url), files)
        self.rq = RQWorkers(self.runtime)
        self.gateway = GatewayProcess(redis_url)
        self.http = httpx.Client(timeout=15)

    def start(self) -> Stack:
        self.runtime.start()
        self.rq.start()
        self.gateway.start()
        self.http.base_url = httpx.URL(self.gateway.url)
        return self

    def stop(self) -> None:
        self.http.close()
        self.gateway.stop()
        self.rq.stop()
        self.runtime.stop()
        self.runtime.redis.close()

    def call(self, session: str, tool: str, arguments: dict[str, Any], call: str | None = None) -> dict[str, Any]:
        """An agent's tool call through the gateway; its result."""
        body: dict[str, Any] = {"tool": tool, "arguments": arguments, **({"call": call} if call else {})}
        reply = self.http.post(f"/v1/sessions/{session}/calls", headers=auth("agent"), json=body)
        assert reply.status_code == 200, reply.text
        result: dict[str, Any] = reply.json()
        return result

    def stream(self, session: str, document: dict[str, Any], mutations: Iterable[dict[str, Any]] = (),
               *, call: str, complete: bool = True) -> list[dict[str, Any]]:
        """Open a stream UI, apply mutations one call each, complete it; every accepted frame."""
        frames = [self.call(session, OPEN, {"document": document}, call)["frame"]]
        for mutation in mutations:
            frames.append(self.call(session, PATCH, {**cursor(frames[-1]), "mutation": mutation})["frame"])
        if complete:
            frames.append(self.call(session, COMPLETE, cursor(frames[-1]))["frame"])
        return frames

    def url(self, session: str, role: str = "user") -> str:
        """The viewer's URL with a token of alice/demo (the agent's identity) in its fragment."""
        return f"{self.gateway.url}/app/s/{session}#token={token(role=role)}"


def cursor(frame: dict[str, Any]) -> dict[str, Any]:
    """The cursor arguments of the call after `frame`."""
    return {"sourceCallId": frame["sourceCallId"], "generation": frame["generation"], "baseRevision": frame["revision"]}


class Agent(threading.Thread):
    """An agent harness that speaks Redis (not the gateway): `count` patches of the summary card's
    title, `pause` seconds apart, then the complete call, with alice/demo as the trusted identity."""

    def __init__(self, stack: Stack, session: str, frame: dict[str, Any], *, count: int, pause: float = 0.05) -> None:
        super().__init__(daemon=True)
        settings = stack.runtime.settings
        self.client = Client(redis=connect(stack.runtime.redis_url), prefix=settings.key_prefix,
                             partitions=settings.partitions)
        self.session, self.frame, self.count, self.pause = session, frame, count, pause
        self.sent = 0
        self.error: BaseException | None = None

    def _call(self, tool: str, arguments: dict[str, Any]) -> None:
        entry = self.client.entry(self.session, tool, arguments, principal="alice", project="demo")
        reply = self.client.send(entry, timeout=15)
        assert reply["ok"], reply
        self.frame = reply["result"]["frame"]
        self.sent += 1

    def run(self) -> None:
        try:
            for number in range(1, self.count + 1):
                mutation = {"type": "update", "nodeId": "summary-card",
                            "props": {"title": f"Summary {number}", "gap": "sm"}}
                self._call(PATCH, {**cursor(self.frame), "mutation": mutation})
                time.sleep(self.pause)
            self._call(COMPLETE, cursor(self.frame))
        except BaseException as error:  # the test reads it after join()
            self.error = error

    def finish(self) -> None:
        """Wait for the last call; raise what failed in the thread."""
        self.join(timeout=60)
        if self.error is not None:
            raise self.error


class Viewer:
    """One tab of the gateway's page; `check()` fails on console errors, page errors or CSP violations."""

    def __init__(self, browser: Any, url: str, *, allowed: Iterable[str] = ()) -> None:
        self.context = browser.new_context(viewport={"width": 1000, "height": 900}, locale="en-US")
        self.context.add_init_script(WATCH)
        self.context.set_default_timeout(10_000)
        self.page = self.context.new_page()
        self.allowed = [re.compile(pattern) for pattern in allowed]
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.goto(url)

    def _console(self, message: Any) -> None:
        if message.type == "error" and not any(p.search(message.text) for p in self.allowed):
            self.problems.append(message.text)

    def applied(self) -> list[dict[str, Any]]:
        """Every event the page applied, in order (`{kind, id}`)."""
        events: list[dict[str, Any]] = self.page.evaluate("() => window.__iui.applied")
        return events

    def check(self) -> None:
        """No console error (but the allowed ones), no uncaught exception, no CSP violation."""
        violations = self.page.evaluate("() => window.__iui.csp")
        assert not self.problems, f"console errors: {self.problems}"
        assert violations == [], f"CSP violations: {violations}"

    def shot(self, name: str) -> Path:
        """A full-page screenshot as a test artefact (tests/browser/artifacts/, git-ignored)."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"e2e-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def axe(self) -> list[dict[str, Any]]:
        """axe-core's serious and critical violations on the page as it is.  axe is served through a
        route of this tab on the gateway's own origin, so the page's CSP (script-src 'self') stays as is."""
        axe = axe_path()
        require(axe is not None, "axe-core is missing: npm install --prefix .ci/node axe-core@4.14.1")
        origin = re.match(r"https?://[^/]+", self.page.url)
        assert origin is not None
        self.page.route(f"{origin.group(0)}/__test__/axe.min.js",
                        lambda route: route.fulfill(path=str(axe), content_type="text/javascript"))
        self.page.add_script_tag(url="/__test__/axe.min.js")
        results = self.page.evaluate("() => axe.run(document)")
        assert len(results["passes"]) > 20  # axe really ran its rules on the page
        return [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
                for v in results["violations"] if v["impact"] in ("serious", "critical")]

    def close(self) -> None:
        self.context.close()


def wait_until(predicate: Any, timeout: float = 20.0, what: str = "the condition") -> None:
    """Poll `predicate` until it is true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} was not reached in {timeout} s"
        time.sleep(0.05)
