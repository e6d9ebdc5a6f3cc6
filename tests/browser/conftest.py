"""Browser tests of the Client: Debian's Chromium driven by Playwright against a static harness.

A stdlib HTTP server (a thread) serves `gateway/web/` at `/app/static/`, this folder at
`/harness/`, axe-core at `/axe/` and any fake gateway route a test registers, every response
with the gateway's CSP header.  The browser is `/usr/bin/chromium` (never a downloaded one);
without it or Playwright the tests skip with a hint, and fail in CI (tests/external_tools.py).
Every page fails its test on a console error or an uncaught exception.
"""

from __future__ import annotations

import json
import mimetypes
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.external_tools import require

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "gateway" / "web"
HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
AXE_CANDIDATES = (ROOT / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js",
                  HERE / "node_modules" / "axe-core" / "axe.min.js")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
LAUNCH_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]

Route = Callable[[BaseHTTPRequestHandler], None]


def axe_path() -> Path | None:
    """axe-core's browser build where .ci/run (or a developer) installed it."""
    return next((p for p in AXE_CANDIDATES if p.is_file()), None)


class HarnessServer(ThreadingHTTPServer):
    """The static files plus fake gateway routes registered by tests (path -> handler)."""

    daemon_threads = True
    routes: dict[str, Route]


class _Handler(BaseHTTPRequestHandler):
    server: HarnessServer

    def log_message(self, format: str, *args: Any) -> None:  # the test output stays readable
        return

    def _file(self, path: Path) -> None:
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        kind = "text/javascript" if path.suffix in (".js", ".mjs") else mimetypes.guess_type(path.name)[0]
        self.send_response(200)
        self.send_header("Content-Type", f"{kind or 'application/octet-stream'}; charset=utf-8")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _route(self) -> bool:
        path = urlsplit(self.path).path
        for prefix, route in self.server.routes.items():
            if path == prefix or path.startswith(prefix + "/"):
                route(self)
                return True
        return False

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if self._route():
            return
        for prefix, folder in (("/app/static/", WEB), ("/harness/", HERE)):
            if path.startswith(prefix):
                target = (folder / path[len(prefix):]).resolve()
                self._file(target if target.is_relative_to(folder) else folder / "missing")
                return
        if path == "/axe/axe.min.js" and (axe := axe_path()):
            self._file(axe)
            return
        self.send_error(404)

    def do_POST(self) -> None:
        if not self._route():
            self.send_error(404)

    do_PUT = do_DELETE = do_POST


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, kind: str = "application/json") -> None:
    """A JSON reply from a fake gateway route."""
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture(scope="session")
def harness_server() -> Iterator[HarnessServer]:
    """The HTTP server on a free loopback port."""
    server = HarnessServer(("127.0.0.1", 0), _Handler)
    server.routes = {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, one per test module.

    Module scope on purpose: Playwright's sync API keeps an event loop running
    in the main thread while it is open, so tests after the browser folder that
    call asyncio.run() would fail if the browser lived for the whole session.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "Playwright for Python is missing: pip install -e '.[test]'")
    require(Path(CHROMIUM).is_file(), "Chromium is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def base_url(harness_server: HarnessServer) -> str:
    """The harness server's origin."""
    host, port = harness_server.server_address[:2]
    return f"http://{host}:{port}"


@pytest.fixture
def page(browser: Any, base_url: str, harness_server: HarnessServer) -> Iterator[Any]:
    """A fresh page on the harness; the test fails on any console error or page error."""
    context = browser.new_context(viewport={"width": 1000, "height": 900}, locale="en-US")
    tab = context.new_page()
    problems: list[str] = []
    tab.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.goto(f"{base_url}/harness/harness.html")
    tab.wait_for_function("window.harness && window.harness.ready")
    tab.problems = problems
    yield tab
    harness_server.routes.clear()
    context.close()
    assert not problems, f"console errors: {problems}"


def shot(page: Any, name: str) -> Path:
    """A full-page screenshot as a test artefact (tests/browser/artifacts/, git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture(scope="module")
def e2e(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The real stack of a module's end-to-end tests (tests/browser/stack.py) on a flushed server;
    its tests use sessions of their own, nothing is flushed between them."""
    import redis

    from tests.browser.stack import Stack

    with redis.Redis.from_url(redis_server) as client:
        client.flushall()
    running = Stack(redis_server, tmp_path_factory.mktemp("e2e")).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def viewers(browser: Any) -> Iterator[list[Any]]:
    """Tabs of the real page a test opens (`viewers.append(Viewer(...))`); each is checked for
    console errors and CSP violations, then closed, after the test."""
    opened: list[Any] = []
    yield opened
    try:
        for viewer in opened:
            viewer.check()
    finally:
        for viewer in opened:
            viewer.close()
